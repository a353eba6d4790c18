#!/usr/bin/env python3
"""otlp_check.py TEXT COMMAND [ARG] — reads an ExportProfilesServiceRequest as protoc --decode
prints it (the official schema, tests/otlp) and checks or sums it.

  validate        the schema's rules proftop must keep: each dictionary table starts with its
                  zero value, string_table[0] is "", every index points into its table, every
                  Profile has a sample type, a time and a duration, every resource names its
                  service, host and process; prints what is wrong, exits 1
  types           the sample types of the profiles, "type/unit" a line
  functions TYPE  per function of the profiles of sample type TYPE: "self total name" (total:
                  samples whose stack passes through it, once each), then "= all"
  resources       each resource's attributes, "key=value" separated by spaces, a line each
  mappings        "filename build_id" per mapping (build_id "-" when none)
  times TYPE      "time_unix_nano duration_nano" of each profile of TYPE
"""
import re
import sys

TOKEN = re.compile(r'\s*(?:(\{)|(\})|([A-Za-z_][A-Za-z0-9_]*)\s*:?\s*|("(?:[^"\\]|\\.)*")|(-?[0-9][0-9A-Za-z.+-]*))')


def unescape(s):
    out = bytearray()
    i = 0
    raw = s.encode('utf-8')
    while i < len(raw):
        c = raw[i]
        if c != 0x5c:
            out.append(c)
            i += 1
            continue
        n = raw[i + 1]
        if 0x30 <= n <= 0x37:
            j = i + 1
            while j < len(raw) and j < i + 4 and 0x30 <= raw[j] <= 0x37:
                j += 1
            out.append(int(raw[i + 1:j], 8))
            i = j
            continue
        if n == ord('x'):
            j = i + 2
            while j < len(raw) and j < i + 4 and chr(raw[j]) in '0123456789abcdefABCDEF':
                j += 1
            out.append(int(raw[i + 2:j], 16))
            i = j
            continue
        out.append({ord('n'): 10, ord('t'): 9, ord('r'): 13, ord('"'): 34, ord("'"): 39,
                    ord('\\'): 92, ord('a'): 7, ord('b'): 8, ord('f'): 12, ord('v'): 11}.get(n, n))
        i += 2
    return out.decode('latin-1')  # a character per byte: bytes keep their length


def u(x):
    """A string field's text (its bytes as UTF-8)."""
    return x.encode('latin-1').decode('utf-8', 'replace') if isinstance(x, str) else x


def parse(text):
    """protoc's text format as nested dicts of lists."""
    root = {}
    stack = [root]
    pos = 0
    key = None
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == '':
                break
            raise SystemExit('cannot parse at %r' % text[pos:pos + 40])
        pos = m.end()
        if m.group(1):
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
        elif m.group(2):
            stack.pop()
        elif m.group(3):
            key = m.group(3)
        elif m.group(4):
            stack[-1].setdefault(key, []).append(unescape(m.group(4)[1:-1]))
        elif m.group(5):
            v = m.group(5)
            stack[-1].setdefault(key, []).append(int(v) if re.fullmatch(r'-?[0-9]+', v) else v)
    return root


def one(msg, field, default=0):
    v = msg.get(field)
    return v[0] if v else default


def main():
    req = parse(open(sys.argv[1], encoding='utf-8').read())
    cmd = sys.argv[2]
    dicts = req.get('dictionary', [])
    d = dicts[0] if dicts else {}
    strings = [u(x) for x in d.get('string_table', [])]
    tables = {name: d.get(name, []) for name in
              ('mapping_table', 'location_table', 'function_table', 'link_table',
               'attribute_table', 'stack_table')}
    profiles = [(rp, p) for rp in req.get('resource_profiles', [])
                for sp in rp.get('scope_profiles', []) for p in sp.get('profiles', [])]

    def s(i):
        return strings[i] if 0 <= i < len(strings) else None

    def type_of(p):
        vt = one(p, 'sample_type', {})
        return '%s/%s' % (s(one(vt, 'type_strindex')), s(one(vt, 'unit_strindex')))

    def resource_attrs(rp):
        out = {}
        for kv in one(rp, 'resource', {}).get('attributes', []):
            v = one(kv, 'value', {})
            out[u(one(kv, 'key', ''))] = u(one(v, 'string_value')) if 'string_value' in v else one(v, 'int_value')
        return out

    if cmd == 'validate':
        bad = []
        if len(dicts) != 1:
            bad.append('%d dictionaries' % len(dicts))
        if not strings or strings[0] != '':
            bad.append('string_table[0] is not ""')
        for name, table in tables.items():
            if not table or (table[0] and name != 'link_table'):
                bad.append('%s[0] is not the zero value' % name)
        links = tables['link_table']
        if links and links[0] and any(set(x) != {'\0'} for f in ('trace_id', 'span_id') for x in links[0].get(f, [])):
            bad.append('link_table[0] is not zero')

        def check(what, i, table):
            if not isinstance(i, int) or not 0 <= i < len(table):
                bad.append('%s %r out of range (%d)' % (what, i, len(table)))

        for m in tables['mapping_table']:
            check('mapping filename', one(m, 'filename_strindex'), strings)
            for a in m.get('attribute_indices', []):
                check('mapping attribute', a, tables['attribute_table'])
        for loc in tables['location_table']:
            check('location mapping', one(loc, 'mapping_index'), tables['mapping_table'])
            for line in loc.get('lines', []):
                check('line function', one(line, 'function_index'), tables['function_table'])
        for f in tables['function_table'][1:]:
            for k in ('name_strindex', 'system_name_strindex', 'filename_strindex'):
                check('function ' + k, one(f, k), strings)
            if not (one(f, 'name_strindex') or one(f, 'system_name_strindex') or one(f, 'filename_strindex')):
                bad.append('a function without name or file')
        for a in tables['attribute_table'][1:]:
            check('attribute key', one(a, 'key_strindex'), strings)
            if not s(one(a, 'key_strindex')):
                bad.append('an attribute without key')
        for st in tables['stack_table']:
            for i in st.get('location_indices', []):
                check('stack location', i, tables['location_table'])
        if not profiles:
            bad.append('no profiles')
        for rp, p in profiles:
            if None in (s(one(one(p, 'sample_type', {}), 'type_strindex')),
                        s(one(one(p, 'sample_type', {}), 'unit_strindex'))) or type_of(p) == '/':
                bad.append('a profile without sample type')
            if not one(p, 'time_unix_nano') or 'duration_nano' not in p:
                bad.append('a profile without time or duration')
            if len(one(p, 'profile_id', '')) != 16:
                bad.append('a profile without a 16-byte id')
            for smp in p.get('samples', []):
                check('sample stack', one(smp, 'stack_index'), tables['stack_table'])
                for a in smp.get('attribute_indices', []):
                    check('sample attribute', a, tables['attribute_table'])
                if len(smp.get('values', [])) != 1:
                    bad.append('a sample with %d values' % len(smp.get('values', [])))
        for rp in req.get('resource_profiles', []):
            attrs = resource_attrs(rp)
            for k in ('service.name', 'host.name', 'process.pid', 'process.executable.name'):
                if k not in attrs:
                    bad.append('a resource without ' + k)
        for b in sorted(set(bad)):
            print(b)
        sys.exit(1 if bad else 0)
    elif cmd == 'types':
        for _, p in profiles:
            print(type_of(p))
    elif cmd == 'functions':
        self_, total, all_ = {}, {}, 0
        for _, p in profiles:
            if type_of(p) != sys.argv[3]:
                continue
            for smp in p.get('samples', []):
                v = sum(smp.get('values', []))
                all_ += v
                locs = tables['stack_table'][one(smp, 'stack_index')].get('location_indices', [])
                names = []
                for li in locs:
                    for line in tables['location_table'][li].get('lines', []):
                        f = tables['function_table'][one(line, 'function_index')]
                        names.append(s(one(f, 'name_strindex')))
                if names:
                    self_[names[0]] = self_.get(names[0], 0) + v
                for n in set(names):
                    total[n] = total.get(n, 0) + v
        for n in sorted(total, key=lambda n: (-self_.get(n, 0), n)):
            print(self_.get(n, 0), total[n], n)
        print('=', all_)
    elif cmd == 'resources':
        for rp in req.get('resource_profiles', []):
            print(' '.join('%s=%s' % kv for kv in sorted(resource_attrs(rp).items())))
    elif cmd == 'mappings':
        for m in tables['mapping_table'][1:]:
            bid = '-'
            for a in m.get('attribute_indices', []):
                attr = tables['attribute_table'][a]
                if s(one(attr, 'key_strindex')) == 'process.executable.build_id.gnu':
                    bid = u(one(one(attr, 'value', {}), 'string_value', '-'))
            print(s(one(m, 'filename_strindex')), bid)
    elif cmd == 'times':
        for _, p in profiles:
            if type_of(p) == sys.argv[3]:
                print(one(p, 'time_unix_nano'), one(p, 'duration_nano'))
    else:
        raise SystemExit('unknown command ' + cmd)


main()
