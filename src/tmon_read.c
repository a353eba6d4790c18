/* tmon_read.c — tmon.out back into numbers: dprofpp's reading of the marks, and a snapshot.
 *
 * dprofpp keeps, per sub name: #Calls (entries), exclusive time (time in the sub less the time of
 * the subs it called) and cumulative time (time in the sub's outermost activation only, so
 * recursion is counted once). It keeps a stack of open subs with the time each was entered and the
 * time its callees took; an exit pops the innermost sub and charges the time to the name on the
 * exit mark. Times are ticks of $hz less DProf's measured overhead: ($over_utime + $over_stime) /
 * (2 * $over_tests) per mark. The same double arithmetic in the same order gives the same bits, so
 * report.c's table matches dprofpp's to the last digit.
 *
 * Beside that, a call tree of raw user+system ticks (no overhead taken off), which is what a
 * snapshot of the file is made from; and, when the caller asks for it, the trace of every sub
 * entry with its depth, which is what dprofpp's -T and -t print.
 *
 * A file is read as a stream, a line at a time, never whole: the first line must be the magic
 * #fOrTyTwO before more than its length is read, and no line may be longer than MAX_LINE. So
 * /dev/zero, a binary file or an endless stream fails at once or within MAX_LINE bytes; what a
 * file that keeps going costs is what its marks hold (new subs, call paths, -T's trace). */
#include "proftop/tmon_read.h"

#include "proftop/idmap.h"
#include "proftop/profile.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DPROF_WRITE "Devel::DProf::write"
#define NO_FUNC UINT32_MAX
#define MAX_NUMBER_DIGITS 15   /* below 2^53: every sum of them stays exact in a double */
#define MAX_TICKS (1ull << 62)     /* a snapshot's samples, at most */
#define MAGIC "#fOrTyTwO"
/* proftop writes names unshortened, and C++ template names reach tens of KiB: a line of a MiB
 * is no name a compiler makes, yet little to hold. */
#define MAX_LINE (1u << 20)
#define READ_CHUNK (1u << 16)

struct frame {
	uint32_t func;          /* the sub entered */
	double entered;         /* its entry time, overhead taken off */
	double children;        /* time its callees took */
	uint32_t node;
	double raw_entered, raw_children;
};

struct field {
	const char *s;
	size_t len;
};

/* The input, split into lines as they are needed. */
struct lines {
	const char *p, *end;    /* the bytes not split yet: all of a memory input, or what of a
				 * file was read (into buf) */
	int fd;                 /* -1: a memory input */
	char *buf;
	size_t cap;
	bool eof;
	int read_err;           /* the errno of a failed read() */
};

/* What reading needs beside the struct tmon it fills; gone once the file is read. */
struct parser {
	struct tmon *tm;
	const struct tmon_read_options *o;
	struct tmon_trace *trace; /* NULL: no trace asked for */
	struct lines in;
	unsigned long line;
	char **message;
	struct idmap by_name;   /* interned full name → function */
	struct idmap children;  /* parent << 32 | function → node */
	struct idmap cv;        /* DProf's sub ids → function */
	size_t funcs_cap, listed_cap, nodes_cap, warnings_len;
	struct frame *stack;
	size_t depth, stack_cap;
	double t, raw_t;        /* the chosen time, and user+system, in ticks */
	double over_per_call, dprof_stamp;
};

static int failf(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int failf(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		fatal("out of memory (formatting)");
	va_end(ap);
	*ps->message = xasprintf("line %lu: %s", ps->line, text);
	free(text);
	return -EINVAL;
}

static void warnf(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(struct parser *ps, const char *fmt, ...)
{
	struct tmon *tm = ps->tm;
	va_list ap;
	char *text = NULL;
	size_t n;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		fatal("out of memory (formatting)");
	va_end(ap);
	n = strlen(text);
	tm->warnings = xrealloc(tm->warnings, ps->warnings_len + n + 1);
	memcpy(tm->warnings + ps->warnings_len, text, n + 1);
	ps->warnings_len += n;
	free(text);
}

/* --- functions and the tree ---------------------------------------------------------------------- */

static uint32_t func_of(struct parser *ps, const char *full, size_t len)
{
	struct tmon *tm = ps->tm;
	const char *key = strpool_intern(tm->pool, full, len);
	uint32_t f = idmap_get(&ps->by_name, (uint64_t)(uintptr_t)key);

	if (f != IDMAP_MISSING)
		return f;
	xgrow((void **)&tm->funcs, &ps->funcs_cap, tm->nfuncs + 1, sizeof(*tm->funcs));
	f = (uint32_t)tm->nfuncs++;
	tm->funcs[f] = (struct tmon_func){ .full = key };
	idmap_put(&ps->by_name, (uint64_t)(uintptr_t)key, f);
	return f;
}

static uint32_t child_node(struct parser *ps, uint32_t parent, uint32_t func)
{
	struct tmon *tm = ps->tm;
	uint64_t key = (uint64_t)parent << 32 | func;
	uint32_t n = idmap_get(&ps->children, key);

	if (n != IDMAP_MISSING)
		return n;
	if (tm->nnodes >= UINT32_MAX - 1)
		fatal("call tree too large");
	xgrow((void **)&tm->nodes, &ps->nodes_cap, tm->nnodes + 1, sizeof(*tm->nodes));
	n = (uint32_t)tm->nnodes++;
	tm->nodes[n] = (struct tmon_node){ func, parent, 0 };
	idmap_put(&ps->children, key, n);
	return n;
}

/* --- lines ---------------------------------------------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Split a line on ASCII whitespace, as Perl's split does; returns the number of fields (at most
 * max, the rest ignored: dprofpp ignores them too). */
static size_t split(const char *s, const char *end, struct field *f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		while (s < end && is_space(*s))
			s++;
		if (s == end)
			break;
		f[n].s = s;
		while (s < end && !is_space(*s))
			s++;
		f[n].len = (size_t)(s - f[n].s);
		n++;
	}
	return n;
}

static bool parse_count(const struct field *f, double *out)
{
	uint64_t v = 0;

	if (!f->len || f->len > MAX_NUMBER_DIGITS)
		return false;
	for (size_t i = 0; i < f->len; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(f->s[i] - '0');
	}
	*out = (double)v;
	return true;
}

/* Read more of a file input, at most want bytes, after the bytes not split yet (moved to the
 * start of buf first). Returns 0 (at the end, in->eof is set) or -errno. */
static int fill(struct lines *in, size_t want)
{
	size_t have = (size_t)(in->end - in->p);
	ssize_t got;

	if (want > READ_CHUNK)
		want = READ_CHUNK;
	if (in->buf && in->p != in->buf)
		memmove(in->buf, in->p, have);
	xgrow((void **)&in->buf, &in->cap, have + want, 1);
	do
		got = read(in->fd, in->buf + have, want);
	while (got < 0 && errno == EINTR);
	in->p = in->buf;
	in->end = in->buf + have + (got > 0 ? (size_t)got : 0);
	if (got < 0) {
		in->read_err = errno;
		return -errno;
	}
	in->eof = !got;
	return 0;
}

/* The next line without its newline (and a CR before it), of at most max bytes before the
 * newline; a file is read only as far as that needs. Returns 1, 0 at the end of the input,
 * -EMSGSIZE for a longer line (no message), or -errno of reading. */
static int read_line(struct parser *ps, size_t max, const char **line, const char **end)
{
	struct lines *in = &ps->in;
	const char *nl = NULL;
	size_t scanned = 0, have;
	int err;

	for (;;) {
		have = (size_t)(in->end - in->p);
		if (have > scanned)
			nl = memchr(in->p + scanned, '\n', (have < max + 1 ? have : max + 1) - scanned);
		if (nl || have > max || in->fd < 0 || in->eof)
			break;
		scanned = have;
		err = fill(in, max + 1 - have);
		if (err)
			return err;
	}
	if (!have)
		return 0;
	ps->line++;
	if (!nl && have > max)
		return -EMSGSIZE;
	*line = in->p;
	*end = nl ? nl : in->end;
	in->p = nl ? nl + 1 : in->end;
	if (*end > *line && (*end)[-1] == '\r')
		(*end)--;
	return 1;
}

/* read_line() for every line after the first: a line too long is an error that says so. */
static int next_line(struct parser *ps, const char **line, const char **end)
{
	int got = read_line(ps, MAX_LINE, line, end);

	if (got == -EMSGSIZE)
		return failf(ps, "longer than %u bytes: not a tmon.out line", MAX_LINE);
	return got;
}

/* Of a user, a system and a real time, the one the clock reads (the default: user + system). */
static double chosen_time(enum tmon_clock clock, double u, double s, double real)
{
	switch (clock) {
	case TMON_USER:
		return u;
	case TMON_SYSTEM:
		return s;
	case TMON_REAL:
		return real;
	default:
		return u + s;
	}
}

/* --- the header ----------------------------------------------------------------------------------- */

static double *header_var(struct tmon *tm, const char *name, size_t len)
{
	static const char *const names[] = { "hz", "rrun_utime", "rrun_stime", "rrun_rtime",
					     "over_utime", "over_stime", "over_rtime", "over_tests" };
	double *vars[] = { &tm->hz, &tm->rrun[0], &tm->rrun[1], &tm->rrun[2],
			   &tm->over[0], &tm->over[1], &tm->over[2], &tm->over_tests };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return vars[i];
	return NULL;
}

static bool is_name_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* "$name =" from *s on, and the blanks after it; *s moves past them. */
static int header_name(struct parser *ps, const char **s, const char *end, const char **name,
		       size_t *len)
{
	const char *p = *s;

	if (*p++ != '$')
		return failf(ps, "not a header assignment ($name=value;)");
	for (*name = p; p < end && is_name_char(*p); p++)
		;
	*len = (size_t)(p - *name);
	while (p < end && is_space(*p))
		p++;
	if (!*len || p == end || *p++ != '=')
		return failf(ps, "not a header assignment ($name=value;)");
	while (p < end && is_space(*p))
		p++;
	*s = p;
	return 0;
}

/* The value of $name from *s on, into *var when dprofpp uses the variable (var is then not NULL):
 * a number, or a quoted string where no such variable is set. *s moves past it. */
static int header_value(struct parser *ps, const char **s, const char *end, const char *name,
			size_t len, double *var)
{
	const char *v = *s, *p = *s;
	char buf[64], *stop;
	double value;

	if (p < end && (*p == '\'' || *p == '"')) {
		const char *close = memchr(p + 1, *p, (size_t)(end - p - 1));

		if (!close || var)
			return failf(ps, "bad value for $%.*s", (int)len, name);
		*s = close + 1;
		return 0;
	}
	while (p < end && !is_space(*p) && *p != ';')
		p++;
	if (p == v || (size_t)(p - v) >= sizeof(buf))
		return failf(ps, "bad value for $%.*s", (int)len, name);
	memcpy(buf, v, (size_t)(p - v));
	buf[p - v] = '\0';
	value = strtod(buf, &stop);
	if (*stop || value != value || value > 1e300 || value < -1e300)
		return failf(ps, "bad value for $%.*s: '%s'", (int)len, name, buf);
	if (var)
		*var = value;
	*s = p;
	return 0;
}

/* One header line of "$name = value;" statements. Values are numbers or quoted strings; the
 * variables dprofpp uses are kept, any other is skipped. Nothing is evaluated. */
static int header_line(struct parser *ps, const char *s, const char *end)
{
	for (;;) {
		const char *name = NULL;
		size_t len = 0;
		int err;

		while (s < end && (is_space(*s) || *s == ';'))
			s++;
		if (s == end)
			return 0;
		err = header_name(ps, &s, end, &name, &len);
		if (!err)
			err = header_value(ps, &s, end, name, len, header_var(ps->tm, name, len));
		if (err)
			return err;
	}
}

/* proftop's comments: its counters, and the mode of a timed profile. */
static void counters_comment(struct tmon *tm, const char *s, const char *end)
{
	char buf[256], mode[16];
	unsigned long long v[5], switches = 0;
	size_t n = (size_t)(end - s) < sizeof(buf) - 1 ? (size_t)(end - s) : sizeof(buf) - 1;

	memcpy(buf, s, n);
	buf[n] = '\0';
	if (sscanf(buf, "# proftop: mode %15s switches %llu", mode, &switches) >= 1) {
		enum sample_mode m;

		/* Only the timed modes are written as tmon.out: any other name is not proftop's. */
		if (sample_mode_parse(mode, &m) && sample_mode_switches(m))
			tm->mode = m;
		tm->switches = switches;
		return;
	}
	if (sscanf(buf, "# proftop: samples %llu overflow %llu dropped %llu throttled %llu "
			"truncated %llu", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
		return;
	tm->have_counters = true;
	tm->counters = (struct counters){ v[0], v[1], v[2], v[3], v[4] };
}

static bool is_part(const char *s, const char *end)
{
	return end - s >= 4 && !memcmp(s, "PART", 4);
}

/* What a first line that is not the magic looks like, from its first bytes, for the error:
 * the other formats proftop writes, and perf's. */
static const char *looks_like(const char *s, const char *end)
{
	static const char *const callgrind[] = { "# callgrin", "version:", "creator:", "events:",
						 "positions:", "cmd:", "pid:" };
	size_t n = (size_t)(end - s);

	if (n >= 2 && (unsigned char)s[0] == 0x1f && (unsigned char)s[1] == 0x8b)
		return "; it is gzip-compressed, as a pprof profile is";
	if (n >= 8 && !memcmp(s, "PERFILE2", 8))
		return "; it is a perf.data file";
	for (size_t i = 0; i < sizeof(callgrind) / sizeof(*callgrind); i++) {
		size_t len = strlen(callgrind[i]);

		if (n >= len && !memcmp(s, callgrind[i], len))
			return "; it looks like a callgrind profile";
	}
	if (memchr(s, ';', n))
		return "; it looks like folded stacks";
	return "";
}

static int header(struct parser *ps)
{
	const char *s, *end;
	bool part = false;
	int got;

	/* Nothing past the magic's length (and a CR) is read before the magic is checked. */
	got = read_line(ps, sizeof(MAGIC), &s, &end);
	if (got == 0 || got == -EMSGSIZE || (got == 1 && (end - s != sizeof(MAGIC) - 1 ||
							  memcmp(s, MAGIC, sizeof(MAGIC) - 1)))) {
		const char *like = "";

		if (got == 1) {
			like = looks_like(s, end);
		} else if (got) { /* the bytes read of a first line too long, still unread */
			const char *p = ps->in.p, *lim = ps->in.end, *nl;

			if ((size_t)(lim - p) > sizeof(MAGIC))
				lim = p + sizeof(MAGIC);
			nl = memchr(p, '\n', (size_t)(lim - p));
			like = looks_like(p, nl ? nl : lim);
		}

		ps->line = 1;
		return failf(ps, "not a tmon.out file (the first line is not " MAGIC "%s)", like);
	}
	if (got < 0)
		return got;
	while (!part && (got = next_line(ps, &s, &end)) == 1) {
		if (is_part(s, end)) {
			part = true;
		} else if (s < end && *s == '#') {
			counters_comment(ps->tm, s, end);
		} else {
			got = header_line(ps, s, end);
			if (got)
				return got;
		}
	}
	if (got < 0)
		return got;
	if (!part)
		return failf(ps, "the file ends in its header (no PART2 line): it is truncated");
	if (!(ps->tm->hz > 0))
		return failf(ps, "the header sets no $hz (ticks per second) above 0");
	if (!ps->tm->over_tests)
		ps->tm->over_tests = 1;
	/* dprofpp takes the overhead of the same clock the times are read from. */
	ps->over_per_call = chosen_time(ps->o->clock, ps->tm->over[0], ps->tm->over[1],
					ps->tm->over[2]) / (2 * ps->tm->over_tests);
	return 0;
}

/* --- the trace (-T, -t) --------------------------------------------------------------------------- */

/* Record that f is entered now, inside ps->depth open subs. f's name is copied the first time. */
static void trace_enter(struct parser *ps, uint32_t f)
{
	struct tmon_trace *tr = ps->trace;

	if (!tr)
		return;
	if (f >= tr->nnames) {
		size_t old = tr->nnames;

		xgrow((void **)&tr->names, &tr->nnames, (size_t)f + 1, sizeof(*tr->names));
		memset(tr->names + old, 0, (tr->nnames - old) * sizeof(*tr->names));
	}
	if (!tr->names[f])
		tr->names[f] = xstrdup(ps->tm->funcs[f].full);
	if (ps->depth > UINT32_MAX)
		fatal("call stack too deep");
	xgrow((void **)&tr->entries, &tr->entries_cap, tr->nentries + 1, sizeof(*tr->entries));
	tr->entries[tr->nentries++] = (struct tmon_entry){ f, (uint32_t)ps->depth };
}

void tmon_trace_free(struct tmon_trace *trace)
{
	if (!trace)
		return;
	for (size_t i = 0; i < trace->nnames; i++)
		free(trace->names[i]);
	free(trace->names);
	free(trace->entries);
	*trace = (struct tmon_trace){ 0 };
}

/* --- marks ---------------------------------------------------------------------------------------- */

static void enter(struct parser *ps, uint32_t f)
{
	struct tmon *tm = ps->tm;
	struct tmon_func *fn = &tm->funcs[f];
	uint32_t parent = ps->depth ? ps->stack[ps->depth - 1].node : 0;

	tm->overhead += ps->over_per_call;
	trace_enter(ps, f);
	if (!fn->listed) { /* dprofpp starts its sums here, dropping what exits charged before */
		fn->listed = true;
		fn->times = fn->ctimes = 0;
		xgrow((void **)&tm->listed, &ps->listed_cap, tm->nlisted + 1, sizeof(*tm->listed));
		tm->listed[tm->nlisted++] = f;
	}
	fn->calls++;
	fn->outer++;
	xgrow((void **)&ps->stack, &ps->stack_cap, ps->depth + 1, sizeof(*ps->stack));
	ps->stack[ps->depth++] = (struct frame){ f, ps->t - tm->overhead, 0,
						 child_node(ps, parent, f), ps->raw_t, 0 };
}

/* Pop the innermost sub at time t (overhead taken off) and charge it to f, as dprofpp does. */
static int leave(struct parser *ps, double t, uint32_t f)
{
	struct tmon *tm = ps->tm;
	struct tmon_func *fn = &tm->funcs[f];
	struct frame x;
	double z, raw;

	if (!ps->depth)
		return failf(ps, "an exit from %s, but no sub was entered", fn->full);
	x = ps->stack[--ps->depth];
	z = t - x.entered;
	if (!--fn->outer)
		fn->ctimes += z;
	fn->times += z - x.children;
	raw = ps->raw_t - x.raw_entered;
	tm->nodes[x.node].self += raw - x.raw_children;
	if (ps->depth) {
		ps->stack[ps->depth - 1].children += z;
		ps->stack[ps->depth - 1].raw_children += raw;
	}
	return 0;
}

/* An & line: "& id package name". */
static int declare(struct parser *ps, const struct field *f, size_t n)
{
	struct tmon *tm = ps->tm;
	double id;
	char *full;
	uint32_t func;

	if (n < 4)
		return failf(ps, "an '&' line needs an id, a package and a name");
	if (!parse_count(&f[1], &id))
		return failf(ps, "bad sub id '%.*s'", (int)f[1].len, f[1].s);
	full = xasprintf("%.*s::%.*s", (int)f[2].len, f[2].s, (int)f[3].len, f[3].s);
	func = func_of(ps, full, strlen(full));
	free(full);
	if (!tm->funcs[func].package) {
		tm->funcs[func].package = strpool_intern(tm->pool, f[2].s, f[2].len);
		tm->funcs[func].name = strpool_intern(tm->pool, f[3].s, f[3].len);
	}
	idmap_put(&ps->cv, (uint64_t)id, func);
	return 0;
}

/* The sub a mark names: "+ id", "- & name", or an old-style name after the times. */
static int mark_func(struct parser *ps, const struct field *f, size_t n, uint32_t *func)
{
	double id;
	uint32_t found;

	if (n >= 3) { /* "- & name" (n == 3) or "+ u s r name" (n == 5) */
		*func = func_of(ps, f[n == 3 ? 2 : 4].s, f[n == 3 ? 2 : 4].len);
		return 0;
	}
	if (n < 2)
		return failf(ps, "a '%c' mark without a sub id", f[0].s[0]);
	if (!parse_count(&f[1], &id))
		return failf(ps, "bad sub id '%.*s'", (int)f[1].len, f[1].s);
	found = idmap_get(&ps->cv, (uint64_t)id);
	if (found == IDMAP_MISSING)
		return failf(ps, "sub id %.*s has no '&' line before it", (int)f[1].len, f[1].s);
	*func = found;
	return 0;
}

/* The times on a mark: "@ u s r" adds them, DProf's first format has absolute ones on its entries
 * and exits ("+ u s r name"). */
static int mark_times(struct parser *ps, const struct field *f, size_t n, char dir)
{
	double u, sys, real;

	if (!parse_count(&f[1], &u) || !parse_count(&f[2], &sys) || !parse_count(&f[3], &real))
		return failf(ps, "bad times in a '%c' mark", dir);
	if (dir == '@') {
		ps->t += chosen_time(ps->o->clock, u, sys, real);
		ps->raw_t += u + sys;
		return 0;
	}
	ps->t = chosen_time(ps->o->clock, u, sys, real);
	ps->raw_t = u + sys;
	if (n < 5 && dir != '/')
		return failf(ps, "a '%c' mark with times but no sub name", dir);
	return 0;
}

/* A '-' leaves func, a '+' enters it, a '*' (goto &sub) does both; the time between DProf's
 * entering and leaving its own write sub is overhead. */
static int step(struct parser *ps, char dir, uint32_t func)
{
	struct tmon *tm = ps->tm;
	bool is_write = !strcmp(tm->funcs[func].full, DPROF_WRITE);
	int err;

	if (dir == '-' || dir == '*') {
		tm->overhead += ps->over_per_call;
		if (is_write) { /* DProf's own time writing the file */
			tm->overhead += ps->t - ps->dprof_stamp;
			return 0;
		}
		err = leave(ps, ps->t - tm->overhead, func);
		if (err)
			return err;
	}
	if (dir == '+' || dir == '*') {
		if (is_write) {
			ps->dprof_stamp = ps->t;
			return 0;
		}
		enter(ps, func);
	}
	return 0;
}

/* One line of PART2. */
static int mark(struct parser *ps, const char *s, const char *end)
{
	struct field f[6];
	size_t n = split(s, end, f, 5);
	char dir;
	uint32_t func = NO_FUNC;
	int err;

	if (!n || f[0].len != 1)
		return failf(ps, "not a mark (+, -, *, /, @ or &)");
	dir = f[0].s[0];
	if (dir == '&')
		return declare(ps, f, n);
	if (dir == '@' && n < 4)
		return failf(ps, "a '@' mark needs three times (user, system, real)");
	if (n >= 4) {
		err = mark_times(ps, f, n, dir);
		if (err || dir == '@')
			return err;
	}
	if (dir == '/') { /* DProf's exit by die(): leave the innermost sub */
		if (!ps->depth)
			return failf(ps, "an exit ('/') with no sub entered");
		func = ps->stack[ps->depth - 1].func;
		dir = '-';
	} else if (dir == '+' || dir == '-' || dir == '*') {
		err = mark_func(ps, f, n, &func);
		if (err)
			return err;
	} else {
		return failf(ps, "unknown mark '%c'", dir);
	}
	return step(ps, dir, func);
}

static int marks(struct parser *ps)
{
	const char *s, *end;
	int got, err;

	while ((got = next_line(ps, &s, &end)) == 1) {
		if (s < end && *s == '#')
			continue;
		if (is_part(s, end))
			break;
		err = mark(ps, s, end);
		if (err)
			return err;
	}
	return got < 0 ? got : 0;
}

/* The error for the subs still open at the end, innermost first (the first five). */
static int never_exited(struct parser *ps)
{
	size_t shown = ps->depth < 5 ? ps->depth : 5;
	char *list = xstrdup("");

	for (size_t i = 0; i < shown; i++) {
		char *next = xasprintf("%s%s%s", list, i ? ", " : "",
				       ps->tm->funcs[ps->stack[ps->depth - 1 - i].func].full);

		free(list);
		list = next;
	}
	failf(ps, "the file ends with %zu sub%s never exited (%s%s): it is truncated or garbled; -F "
		  "fakes the missing exits", ps->depth, ps->depth == 1 ? "" : "s", list,
	      ps->depth > shown ? ", ..." : "");
	free(list);
	return -EINVAL;
}

/* The end of the marks: subs still open are a truncated file, unless -F fakes their exits. */
static int finish(struct parser *ps)
{
	struct tmon *tm = ps->tm;

	if (ps->trace)
		ps->trace->ended = true;
	for (size_t f = 0; f < tm->nfuncs; f++)
		if (tm->funcs[f].outer)
			warnf(ps, "%s has %lld unstacked calls in outer\n", tm->funcs[f].full,
			      (long long)tm->funcs[f].outer);
	if (!ps->depth)
		return 0;
	if (!ps->o->fake_exits)
		return never_exited(ps);
	warnf(ps, "Faking %zu exit timestamp(s).\n", ps->depth);
	while (ps->depth)
		leave(ps, ps->t - tm->overhead, ps->stack[ps->depth - 1].func);
	return 0;
}

/* --- reading -------------------------------------------------------------------------------------- */

/* A parser at the start of its input, with a new struct tmon that has the root of its tree. */
static void parser_init(struct parser *ps)
{
	struct tmon *tm = xcalloc(1, sizeof(*tm));

	tm->clock = ps->o->clock;
	tm->pool = strpool_new();
	tm->warnings = xstrdup("");
	ps->tm = tm;
	idmap_init(&ps->by_name);
	idmap_init(&ps->children);
	idmap_init(&ps->cv);
	xgrow((void **)&tm->nodes, &ps->nodes_cap, 1, sizeof(*tm->nodes));
	tm->nodes[tm->nnodes++] = (struct tmon_node){ NO_FUNC, NO_FUNC, 0 };
}

/* Free what only reading needed. */
static void parser_free(struct parser *ps)
{
	idmap_free(&ps->by_name);
	idmap_free(&ps->children);
	idmap_free(&ps->cv);
	free(ps->stack);
	free(ps->in.buf);
}

void tmon_free(struct tmon *tm)
{
	if (!tm)
		return;
	strpool_free(tm->pool);
	free(tm->funcs);
	free(tm->listed);
	free(tm->nodes);
	free(tm->warnings);
	free(tm);
}

/* Parse the input ps->in holds into *out. */
static int parse(struct parser *ps, struct tmon **out)
{
	int err;

	*out = NULL;
	*ps->message = NULL;
	parser_init(ps);
	err = header(ps);
	if (!err)
		err = marks(ps);
	if (!err)
		err = finish(ps);
	parser_free(ps);
	if (err) {
		tmon_free(ps->tm);
		return err;
	}
	*out = ps->tm;
	return 0;
}

int tmon_read(const char *data, size_t len, const struct tmon_read_options *o,
	      struct tmon_trace *trace, struct tmon **out, char **message)
{
	struct parser ps = { .o = o, .trace = trace, .message = message };

	ps.in = (struct lines){ .p = data, .end = data + len, .fd = -1 };
	return parse(&ps, out);
}

int tmon_read_file(const char *path, const struct tmon_read_options *o, struct tmon_trace *trace,
		   struct tmon **out, char **message)
{
	struct parser ps = { .o = o, .trace = trace };
	bool is_stdin = !strcmp(path, "-"); /* as dprofpp's open() takes it */
	const char *name = is_stdin ? "standard input" : path;
	char *inner = NULL;
	int err;

	*out = NULL;
	*message = NULL;
	if (!*path) {
		*message = xstrdup("invalid input file '': give a file name, or - for standard input");
		return -ENOENT;
	}
	ps.in.fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (ps.in.fd < 0) {
		err = -errno;
		*message = xasprintf("cannot read %s: %s", name, strerror(-err));
		return err;
	}
	ps.message = &inner;
	err = parse(&ps, out);
	if (!is_stdin)
		close(ps.in.fd);
	if (err && ps.in.read_err && ps.line)
		*message = xasprintf("cannot read %s: %s (after line %lu)", name,
				     strerror(ps.in.read_err), ps.line);
	else if (err && ps.in.read_err)
		*message = xasprintf("cannot read %s: %s", name, strerror(ps.in.read_err));
	else if (err)
		*message = xasprintf("%s: %s", name, inner);
	free(inner);
	return err;
}

/* --- snapshots ------------------------------------------------------------------------------------ */

/* s with each U+00A0 (how proftop writes a space into a name) back to a space. */
static char *unspace(const char *s, size_t len)
{
	char *out = xmalloc(len + 1);
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)s[i] == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] == 0xa0) {
			out[n++] = ' ';
			i++;
		} else {
			out[n++] = s[i];
		}
	}
	out[n] = '\0';
	return out;
}

/* The profile's id for function f: its module is the & line's package (or what precedes the last
 * "::" of its full name), its name the rest. */
static uint32_t profile_func_of(const struct tmon *tm, struct profile *p, uint32_t f)
{
	const struct tmon_func *fn = &tm->funcs[f];
	const char *package = fn->package, *name = fn->name;
	size_t plen, nlen;
	char *a, *b;
	uint32_t id;

	if (package) {
		plen = strlen(package);
		nlen = strlen(name);
	} else {
		const char *sep = NULL;

		for (const char *s = strstr(fn->full, "::"); s; s = strstr(s + 1, "::"))
			sep = s;
		package = sep ? fn->full : "main";
		plen = sep ? (size_t)(sep - fn->full) : 4;
		name = sep ? sep + 2 : fn->full;
		nlen = strlen(name);
	}
	a = unspace(package, plen);
	b = unspace(name, nlen);
	id = profile_func(p, a, b, 0);
	free(a);
	free(b);
	return id;
}

/* x rounded to a count; what no count holds (negative, too large, NaN) is 0 or the largest. */
static uint64_t to_count(double x)
{
	if (!(x > 0))
		return 0;
	return x < 1e19 ? (uint64_t)(x + 0.5) : (uint64_t)1e19;
}

/* The path from the root to node n as the profile's ids, into path[0..depth). ids caches the id of
 * each function (UINT32_MAX: not made yet). */
static void node_path(const struct tmon *tm, struct profile *p, uint32_t *ids, uint32_t n,
		      uint32_t *path, size_t depth)
{
	for (size_t d = depth; d > 0; d--, n = tm->nodes[n].parent) {
		uint32_t f = tm->nodes[n].func;

		if (ids[f] == UINT32_MAX)
			ids[f] = profile_func_of(tm, p, f);
		path[d - 1] = ids[f];
	}
}

/* Every node's self ticks into p as samples of its call path. Returns how many. */
static uint64_t add_nodes(const struct tmon *tm, struct profile *p)
{
	uint32_t *ids = xmalloc((tm->nfuncs + 1) * sizeof(*ids));
	uint32_t *depth_of = xcalloc(tm->nnodes, sizeof(*depth_of));
	uint32_t *path = NULL;
	size_t cap = 0;
	uint64_t total = 0;

	memset(ids, 0xff, (tm->nfuncs + 1) * sizeof(*ids));
	/* Nodes are made parent first, so a parent's depth is known before its children's. */
	for (size_t n = 1; n < tm->nnodes; n++) {
		uint64_t ticks = to_count(tm->nodes[n].self);

		if (ticks > MAX_TICKS - total) /* so that no sum over the tree overflows */
			ticks = MAX_TICKS - total;
		depth_of[n] = depth_of[tm->nodes[n].parent] + 1;
		if (!ticks)
			continue;
		xgrow((void **)&path, &cap, depth_of[n], sizeof(*path));
		node_path(tm, p, ids, (uint32_t)n, path, depth_of[n]);
		profile_add_n(p, 0, 0, path, depth_of[n], ticks);
		total += ticks;
	}
	free(path);
	free(depth_of);
	free(ids);
	return total;
}

struct snapshot *tmon_snapshot(const struct tmon *tm)
{
	struct profile *p = profile_new(NULL);
	uint64_t total;
	struct snapshot *s;

	profile_set_ownerless(p); /* a file says nothing of who ran what */
	total = add_nodes(tm, p);
	s = profile_snapshot(p);

	profile_free(p); /* the snapshot owns its names */
	s->freq = tm->hz < 1 ? 1 : tm->hz > 1e9 ? 1000000000u : (unsigned)(tm->hz + 0.5);
	s->elapsed_ns = to_count(tm->rrun[2] * 1e9 / tm->hz);
	s->user_ns = to_count(tm->rrun[0] * 1e9 / tm->hz);
	s->system_ns = to_count(tm->rrun[1] * 1e9 / tm->hz);
	/* Counts of microseconds only where the ticks are: a file edited to say otherwise is cpu. */
	if (tm->mode != SAMPLE_MODE_CPU && s->freq == SNAPSHOT_OFFCPU_FREQ)
		s->mode = tm->mode;
	if (tm->have_counters) {
		s->counters = tm->counters;
		s->counters.switches = tm->switches;
	}
	else
		s->counters.samples = total;
	return s;
}
