#!/usr/bin/env python3
"""otlp_receiver.py DIR MODE [N [CODE [RETRY_AFTER]]] — an OTLP/HTTP profiles receiver for the
tests, on 127.0.0.1 (its port written to DIR/port once it listens).

Each POST to /v1development/profiles is answered by MODE:
  ok          200 for every request whose body decodes
  fail        CODE (default 503, with Retry-After: RETRY_AFTER when given) to the first N
              requests, then as ok
  hang        never answers (reads the request, then waits until killed)
  sink        200 to everything, nothing decoded or kept (for benchmarks)
Every body that was answered 200 is decompressed (Content-Encoding: gzip), decoded with the
official schema (tests/otlp) by protoc, and kept as DIR/body.K (bytes) and DIR/body.K.txt
(protoc's text); a body that does not decode is answered 400. DIR/log gets a line per request:
"K CODE ENCODING BYTES CONTENT-TYPE PATH".
"""
import gzip
import http.server
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'otlp')
TYPE = 'opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest'
PROTO = 'opentelemetry/proto/collector/profiles/v1development/profiles_service.proto'

out, mode = sys.argv[1], sys.argv[2]
failures = int(sys.argv[3]) if len(sys.argv) > 3 else 0
code = int(sys.argv[4]) if len(sys.argv) > 4 else 503
retry_after = sys.argv[5] if len(sys.argv) > 5 else None
state = {'requests': 0, 'kept': 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def answer(self, status, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Type', 'application/x-protobuf')
        self.send_header('Content-Length', '0')
        self.end_headers()

    def do_POST(self):
        n = state['requests'] = state['requests'] + 1
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length)
        encoding = self.headers.get('Content-Encoding', 'identity')
        status = 200
        if self.path != '/v1development/profiles':
            status = 404
        elif mode == 'hang':
            with open(os.path.join(out, 'log'), 'a') as log:
                log.write('%d hang %s %d %s %s\n' % (n, encoding, len(body),
                                                     self.headers.get('Content-Type'), self.path))
            time.sleep(3600)
        elif mode == 'fail' and n <= failures:
            status = code
        if status == 200 and mode == 'sink':
            self.answer(200)
            return
        if status == 200:
            data = gzip.decompress(body) if encoding == 'gzip' else body
            k = state['kept'] + 1
            path = os.path.join(out, 'body.%d' % k)
            with open(path, 'wb') as f:
                f.write(data)
            with open(path, 'rb') as f, open(path + '.txt', 'wb') as text:
                decoded = subprocess.run(['protoc', '-I', ROOT, '--decode=' + TYPE, PROTO],
                                         stdin=f, stdout=text, stderr=subprocess.DEVNULL,
                                         cwd=ROOT).returncode == 0
            if decoded:
                state['kept'] = k
            else:
                status = 400
                os.unlink(path)
                os.unlink(path + '.txt')
        with open(os.path.join(out, 'log'), 'a') as log:
            log.write('%d %d %s %d %s %s\n' % (n, status, encoding, len(body),
                                               self.headers.get('Content-Type'), self.path))
        self.answer(status, [('Retry-After', retry_after)] if status != 200 and retry_after else [])


server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
with open(os.path.join(out, 'port.tmp'), 'w') as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(out, 'port.tmp'), os.path.join(out, 'port'))
server.serve_forever()
