/* serve.h — the HTTP endpoint (--serve): the profile over HTTP, the way Go's net/http/pprof
 * serves it, so that `go tool pprof http://HOST:PORT/debug/pprof/profile` and a Parca scrape job
 * read proftop as they read a Go program.
 *
 *   GET /debug/pprof/profile?seconds=N   the profile of the next N seconds (default 30): the
 *                                        gzipped pprof (?format= for another writer)
 *   GET /snapshot?format=F               everything so far, at once
 *   GET /debug/pprof/                    what is here
 *
 * Errors are text/plain with the X-Go-Pprof header and status 400 (a bad request), 404, 405
 * or 500 (proftop cannot make it), as Go's. No path serves a file.
 *
 * The server is libmicrohttpd's, a thread per connection; at most SERVE_MAX_CONNECTIONS
 * connections, and SERVE_MAX_WAITING of them waiting out their seconds, each until its client
 * goes. A connection that has not sent a whole request SERVE_REQUEST_SECONDS after it opened
 * (or after its last answer) is closed. A handler only reads the collector through its
 * thread-safe calls (collector_snapshot(), kinds_stretch()). */
#ifndef PROFTOP_SERVE_H
#define PROFTOP_SERVE_H

#include "proftop/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define SERVE_DEFAULT_SECONDS 30
#define SERVE_MAX_SECONDS 3600
#define SERVE_MAX_CONNECTIONS 16
#define SERVE_MAX_WAITING 4
#define SERVE_MAX_ARGS 8
#define SERVE_REQUEST_SECONDS 5

/* Where to listen: --serve [ADDR:]PORT. */
struct serve_address {
	struct sockaddr_storage sa;
	socklen_t len;
};

/* "PORT" (on 127.0.0.1), "ADDR:PORT" or "[IPv6]:PORT"; ADDR a numeric address. Returns 0, or
 * -EINVAL with a malloc'd *message saying what is wrong. */
int serve_parse_address(const char *text, struct serve_address *address, char **message);
/* Whether only this machine can connect (a loopback address). */
bool serve_address_local(const struct serve_address *address);
/* "127.0.0.1:6060", "[::1]:6060". */
void serve_address_text(const struct serve_address *address, char *buf, size_t len);

/* --- requests (apart from the server, for tests and the fuzzer) ------------------------------- */

enum serve_page {
	SERVE_INDEX,           /* /, /debug/pprof, /debug/pprof/ */
	SERVE_PROFILE,         /* /debug/pprof/profile */
	SERVE_SNAPSHOT,        /* /snapshot */
};

struct serve_request {
	enum serve_page page;
	unsigned seconds;      /* SERVE_PROFILE: how long */
	enum export_format format;
};

/* Decode a path or a query's key or value in place, as the server does: each %XX (two hex
 * digits) becomes its byte, except %00, which stays as it is. No path or parameter holds a NUL,
 * and decoded, one would hide what follows it ("seconds=5%00junk" read as 5): left as text, it
 * is refused as what it is. Returns the length of the result, which holds no NUL. */
size_t serve_unescape(char *text);

/* One query parameter as serve_unescape() decoded it; value NULL for a bare "?key". */
struct serve_arg {
	const char *key, *value;
};

/* The request of method on path with args, when seconds may be at most max_seconds (0: the run
 * keeps no history, so no profile of the next seconds). Returns the HTTP status: 200 with
 * *request filled in, or 400, 404 or 405 with the reason in err (err_len bytes). */
unsigned serve_parse_request(const char *method, const char *path, const struct serve_arg *args,
			     size_t nargs, unsigned max_seconds, struct serve_request *request,
			     char *err, size_t err_len);

/* --- the server ------------------------------------------------------------------------------- */

struct server;
struct collector;

/* Listen on address and serve collector's profiles (seconds at most max_seconds; 0: /snapshot
 * only) on the server's own threads. Returns 0, or -errno with a malloc'd *message. */
int serve_start(struct server **out, const struct serve_address *address,
		struct collector *collector, unsigned max_seconds, char **message);
/* Where it listens, with the port it got ("127.0.0.1:43117" for port 0). */
const char *serve_where(const struct server *server);
/* Answer the requests still waiting (with what was profiled), close and free. NULL: nothing. */
void serve_stop(struct server *server);

#endif
