/* report.c — tmon.out back into numbers: dprofpp's reading of the marks, its table, its trees.
 *
 * dprofpp keeps, per sub name: #Calls (entries), exclusive time (time in the sub less the time of
 * the subs it called) and cumulative time (time in the sub's outermost activation only, so
 * recursion is counted once). It keeps a stack of open subs with the time each was entered and the
 * time its callees took; an exit pops the innermost sub and charges the time to the name on the
 * exit mark. Times are ticks of $hz less DProf's measured overhead: ($over_utime + $over_stime) /
 * (2 * $over_tests) per mark. The same double arithmetic in the same order gives the same bits, so
 * the table matches dprofpp's to the last digit.
 *
 * Beside that, a call tree of raw user+system ticks (no overhead taken off), which is what a
 * snapshot of the file is made from.
 *
 * The table is printed the way dprofpp's Perl format prints it: right-aligned "^" fields that chop
 * their text at a space or after a '-', a Name column that wraps onto more lines, and pages of 60
 * lines with the column titles again after a form feed. */
#include "proftop/report.h"

#include "proftop/counters.h"
#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/profile.h"
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define TREE_TAB 3
#define DPROF_WRITE "Devel::DProf::write"
#define NO_FUNC UINT32_MAX
#define MAX_NUMBER_DIGITS 15   /* below 2^53: every sum of them stays exact in a double */
#define PAGE_LINES 60          /* Perl's $= */
#define NAME_WIDTH 34
#define FORMAT_WIDTH 79
#define MAX_TICKS (1ull << 62)     /* a snapshot's samples, at most */

struct rfunc {
	const char *full;       /* interned "package::name", as the marks name it */
	const char *package;    /* from its & line; NULL: split full at its last "::" */
	const char *name;
	uint64_t calls;
	double times, ctimes;   /* exclusive and cumulative, in ticks */
	int64_t outer;          /* activations open (dprofpp's %outer) */
	bool listed;            /* entered at least once: has a row */
};

struct rnode {
	uint32_t func, parent;
	double self;            /* raw ticks spent here, less the callees' */
};

struct report {
	double hz, rrun[3], over[3], over_tests;  /* user, system, real */
	bool have_counters;
	struct counters counters;
	struct strpool *pool;
	struct idmap by_name;   /* interned full name → function */
	struct rfunc *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t *listed;       /* functions in order of first entry (dprofpp's @idkeys) */
	size_t nlisted, listed_cap;
	struct rnode *nodes;    /* nodes[0] is the root */
	size_t nnodes, nodes_cap;
	struct idmap children;  /* parent << 32 | function → node */
	double overhead;        /* taken off so far, in ticks */
	char *warnings;
	size_t warnings_len;
};

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

struct parser {
	struct report *r;
	const struct report_options *o;
	FILE *tree_out;
	const char *p, *end;
	unsigned long line;
	char **message;
	struct idmap cv;        /* DProf's sub ids → function */
	struct frame *stack;
	size_t depth, stack_cap;
	double t, raw_t;        /* the chosen time, and user+system, in ticks */
	double over_per_call, dprof_stamp;
	long in, l_in;          /* the trees' indentation */
	uint32_t l_name;
	unsigned long repcnt;
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

static void warnf(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(struct report *r, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	size_t n;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		fatal("out of memory (formatting)");
	va_end(ap);
	n = strlen(text);
	r->warnings = xrealloc(r->warnings, r->warnings_len + n + 1);
	memcpy(r->warnings + r->warnings_len, text, n + 1);
	r->warnings_len += n;
	free(text);
}

/* --- functions and the tree ---------------------------------------------------------------------- */

static uint32_t func_of(struct report *r, const char *full, size_t len)
{
	const char *key = strpool_intern(r->pool, full, len);
	uint32_t f = idmap_get(&r->by_name, (uint64_t)(uintptr_t)key);

	if (f != IDMAP_MISSING)
		return f;
	xgrow((void **)&r->funcs, &r->funcs_cap, r->nfuncs + 1, sizeof(*r->funcs));
	f = (uint32_t)r->nfuncs++;
	r->funcs[f] = (struct rfunc){ .full = key };
	idmap_put(&r->by_name, (uint64_t)(uintptr_t)key, f);
	return f;
}

static uint32_t child_node(struct report *r, uint32_t parent, uint32_t func)
{
	uint64_t key = (uint64_t)parent << 32 | func;
	uint32_t n = idmap_get(&r->children, key);

	if (n != IDMAP_MISSING)
		return n;
	if (r->nnodes >= UINT32_MAX - 1)
		fatal("call tree too large");
	xgrow((void **)&r->nodes, &r->nodes_cap, r->nnodes + 1, sizeof(*r->nodes));
	n = (uint32_t)r->nnodes++;
	r->nodes[n] = (struct rnode){ func, parent, 0 };
	idmap_put(&r->children, key, n);
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

/* The next line without its newline (and a CR before it); false at the end of the input. */
static bool next_line(struct parser *ps, const char **line, const char **end)
{
	const char *nl;

	if (ps->p >= ps->end)
		return false;
	ps->line++;
	nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
	*line = ps->p;
	*end = nl ? nl : ps->end;
	ps->p = nl ? nl + 1 : ps->end;
	if (*end > *line && (*end)[-1] == '\r')
		(*end)--;
	return true;
}

/* --- the header ----------------------------------------------------------------------------------- */

static double *header_var(struct report *r, const char *name, size_t len)
{
	static const char *const names[] = { "hz", "rrun_utime", "rrun_stime", "rrun_rtime",
					     "over_utime", "over_stime", "over_rtime", "over_tests" };
	double *vars[] = { &r->hz, &r->rrun[0], &r->rrun[1], &r->rrun[2],
			   &r->over[0], &r->over[1], &r->over[2], &r->over_tests };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return vars[i];
	return NULL;
}

/* One header line of "$name = value;" statements. Values are numbers or quoted strings; the
 * variables dprofpp uses are kept, any other is skipped. Nothing is evaluated. */
static int header_line(struct parser *ps, const char *s, const char *end)
{
	for (;;) {
		const char *name;
		size_t len;
		double *var;

		while (s < end && (is_space(*s) || *s == ';'))
			s++;
		if (s == end)
			return 0;
		if (*s++ != '$')
			return failf(ps, "not a header assignment ($name=value;)");
		for (name = s; s < end && (*s == '_' || (*s >= 'a' && *s <= 'z') ||
					   (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'));
		     s++)
			;
		len = (size_t)(s - name);
		while (s < end && is_space(*s))
			s++;
		if (!len || s == end || *s++ != '=')
			return failf(ps, "not a header assignment ($name=value;)");
		while (s < end && is_space(*s))
			s++;
		var = header_var(ps->r, name, len);
		if (s < end && (*s == '\'' || *s == '"')) {
			const char *close = memchr(s + 1, *s, (size_t)(end - s - 1));

			if (!close || var)
				return failf(ps, "bad value for $%.*s", (int)len, name);
			s = close + 1;
		} else {
			char buf[64];
			const char *v = s;
			char *stop;
			double value;

			while (s < end && !is_space(*s) && *s != ';')
				s++;
			if (s == v || (size_t)(s - v) >= sizeof(buf))
				return failf(ps, "bad value for $%.*s", (int)len, name);
			memcpy(buf, v, (size_t)(s - v));
			buf[s - v] = '\0';
			value = strtod(buf, &stop);
			if (*stop || value != value || value > 1e300 || value < -1e300)
				return failf(ps, "bad value for $%.*s: '%s'", (int)len, name, buf);
			if (var)
				*var = value;
		}
	}
}

static void counters_comment(struct report *r, const char *s, const char *end)
{
	char buf[256];
	unsigned long long v[5];
	size_t n = (size_t)(end - s) < sizeof(buf) - 1 ? (size_t)(end - s) : sizeof(buf) - 1;

	memcpy(buf, s, n);
	buf[n] = '\0';
	if (sscanf(buf, "# proftop: samples %llu overflow %llu dropped %llu throttled %llu "
			"truncated %llu", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
		return;
	r->have_counters = true;
	r->counters = (struct counters){ v[0], v[1], v[2], v[3], v[4] };
}

static bool is_part(const char *s, const char *end)
{
	return end - s >= 4 && !memcmp(s, "PART", 4);
}

static int header(struct parser *ps)
{
	const char *s, *end;
	bool part = false;
	int err;

	if (!next_line(ps, &s, &end) || end - s != 9 || memcmp(s, "#fOrTyTwO", 9)) {
		ps->line = 1;
		return failf(ps, "not a tmon.out file (the first line is not #fOrTyTwO)");
	}
	while (!part && next_line(ps, &s, &end)) {
		if (is_part(s, end)) {
			part = true;
		} else if (s < end && *s == '#') {
			counters_comment(ps->r, s, end);
		} else {
			err = header_line(ps, s, end);
			if (err)
				return err;
		}
	}
	if (!part)
		return failf(ps, "the file ends in its header (no PART2 line): it is truncated");
	if (!(ps->r->hz > 0))
		return failf(ps, "the header sets no $hz (ticks per second) above 0");
	if (!ps->r->over_tests)
		ps->r->over_tests = 1;
	return 0;
}

/* --- the trees (-T, -t) ---------------------------------------------------------------------------- */

static void tree_enter(struct parser *ps, uint32_t f)
{
	const struct report_options *o = ps->o;
	FILE *out = ps->tree_out;

	if (o->tree) {
		if (out)
			fprintf(out, "%*s%s\n", (int)(ps->in > 0 ? ps->in : 0), "", ps->r->funcs[f].full);
		ps->in += TREE_TAB;
	} else if (o->compact_tree) {
		if (ps->l_in == ps->in && ps->l_name == f) {
			ps->repcnt++;
		} else {
			if (out && ps->l_name != NO_FUNC) {
				fprintf(out, "%*s%s", (int)(ps->l_in > 0 ? ps->l_in : 0), "",
					ps->r->funcs[ps->l_name].full);
				if (ps->repcnt)
					fprintf(out, " (%lux)", ps->repcnt + 1);
				fputc('\n', out);
			}
			ps->repcnt = 0;
			ps->l_in = ps->in;
			ps->l_name = f;
		}
		ps->in += TREE_TAB;
	}
}

static void tree_finish(struct parser *ps)
{
	FILE *out = ps->tree_out;

	if (!ps->o->compact_tree || ps->o->tree || !out)
		return;
	fprintf(out, "%*s%s", (int)(ps->l_in > 0 ? ps->l_in : 0), "",
		ps->l_name == NO_FUNC ? "" : ps->r->funcs[ps->l_name].full);
	if (ps->repcnt)
		fprintf(out, " (%lux)", ps->repcnt + 1);
	fputc('\n', out);
}

/* --- marks ---------------------------------------------------------------------------------------- */

static void enter(struct parser *ps, uint32_t f)
{
	struct report *r = ps->r;
	struct rfunc *fn = &r->funcs[f];
	uint32_t parent = ps->depth ? ps->stack[ps->depth - 1].node : 0;

	r->overhead += ps->over_per_call;
	tree_enter(ps, f);
	if (!fn->listed) { /* dprofpp starts its sums here, dropping what exits charged before */
		fn->listed = true;
		fn->times = fn->ctimes = 0;
		xgrow((void **)&r->listed, &r->listed_cap, r->nlisted + 1, sizeof(*r->listed));
		r->listed[r->nlisted++] = f;
	}
	fn->calls++;
	fn->outer++;
	xgrow((void **)&ps->stack, &ps->stack_cap, ps->depth + 1, sizeof(*ps->stack));
	ps->stack[ps->depth++] = (struct frame){ f, ps->t - r->overhead, 0,
						 child_node(r, parent, f), ps->raw_t, 0 };
}

/* Pop the innermost sub at time t (overhead taken off) and charge it to f, as dprofpp does. */
static int leave(struct parser *ps, double t, uint32_t f)
{
	struct report *r = ps->r;
	struct rfunc *fn = &r->funcs[f];
	struct frame x;
	double z, raw;

	if (!ps->depth)
		return failf(ps, "an exit from %s, but no sub was entered", fn->full);
	x = ps->stack[--ps->depth];
	if (ps->o->tree || ps->o->compact_tree)
		ps->in -= TREE_TAB;
	z = t - x.entered;
	if (!--fn->outer)
		fn->ctimes += z;
	fn->times += z - x.children;
	raw = ps->raw_t - x.raw_entered;
	r->nodes[x.node].self += raw - x.raw_children;
	if (ps->depth) {
		ps->stack[ps->depth - 1].children += z;
		ps->stack[ps->depth - 1].raw_children += raw;
	}
	return 0;
}

/* An & line: "& id package name". */
static int declare(struct parser *ps, const struct field *f, size_t n)
{
	struct report *r = ps->r;
	double id;
	char *full;
	uint32_t func;

	if (n < 4)
		return failf(ps, "an '&' line needs an id, a package and a name");
	if (!parse_count(&f[1], &id))
		return failf(ps, "bad sub id '%.*s'", (int)f[1].len, f[1].s);
	full = xasprintf("%.*s::%.*s", (int)f[2].len, f[2].s, (int)f[3].len, f[3].s);
	func = func_of(r, full, strlen(full));
	free(full);
	if (!r->funcs[func].package) {
		r->funcs[func].package = strpool_intern(r->pool, f[2].s, f[2].len);
		r->funcs[func].name = strpool_intern(r->pool, f[3].s, f[3].len);
	}
	idmap_put(&ps->cv, (uint64_t)id, func);
	return 0;
}

static double chosen_time(enum report_time which, double u, double s, double real)
{
	switch (which) {
	case REPORT_USER:
		return u;
	case REPORT_SYSTEM:
		return s;
	case REPORT_REAL:
		return real;
	default:
		return u + s;
	}
}

/* The sub a mark names: "+ id", "- & name", or an old-style name after the times. */
static int mark_func(struct parser *ps, const struct field *f, size_t n, uint32_t *func)
{
	double id;
	uint32_t found;

	if (n >= 3) { /* "- & name" (n == 3) or "+ u s r name" (n == 5) */
		*func = func_of(ps->r, f[n == 3 ? 2 : 4].s, f[n == 3 ? 2 : 4].len);
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

/* One line of PART2. */
static int mark(struct parser *ps, const char *s, const char *end)
{
	struct report *r = ps->r;
	struct field f[6];
	size_t n = split(s, end, f, 5);
	char dir;
	uint32_t func = NO_FUNC;
	bool is_write;
	int err;

	if (!n || f[0].len != 1)
		return failf(ps, "not a mark (+, -, *, /, @ or &)");
	dir = f[0].s[0];
	if (dir == '&')
		return declare(ps, f, n);
	if (dir == '@' && n < 4)
		return failf(ps, "a '@' mark needs three times (user, system, real)");
	if (n >= 4) { /* "@ u s r", or an old-style "+ u s r name" with absolute times */
		double u, sys, real;

		if (!parse_count(&f[1], &u) || !parse_count(&f[2], &sys) || !parse_count(&f[3], &real))
			return failf(ps, "bad times in a '%c' mark", dir);
		if (dir == '@') {
			ps->t += chosen_time(ps->o->time, u, sys, real);
			ps->raw_t += u + sys;
			return 0;
		}
		ps->t = chosen_time(ps->o->time, u, sys, real);
		ps->raw_t = u + sys;
		if (n < 5 && dir != '/')
			return failf(ps, "a '%c' mark with times but no sub name", dir);
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
	is_write = !strcmp(r->funcs[func].full, DPROF_WRITE);
	if (dir == '-' || dir == '*') {
		r->overhead += ps->over_per_call;
		if (is_write) { /* DProf's own time writing the file */
			r->overhead += ps->t - ps->dprof_stamp;
			return 0;
		}
		err = leave(ps, ps->t - r->overhead, func);
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

static int marks(struct parser *ps)
{
	const char *s, *end;
	int err;

	while (next_line(ps, &s, &end)) {
		if (s < end && *s == '#')
			continue;
		if (is_part(s, end))
			break;
		err = mark(ps, s, end);
		if (err)
			return err;
	}
	return 0;
}

/* The end of the marks: subs still open are a truncated file, unless -F fakes their exits. */
static int finish(struct parser *ps)
{
	struct report *r = ps->r;

	tree_finish(ps);
	for (size_t f = 0; f < r->nfuncs; f++)
		if (r->funcs[f].outer)
			warnf(r, "%s has %lld unstacked calls in outer\n", r->funcs[f].full,
			      (long long)r->funcs[f].outer);
	if (!ps->depth)
		return 0;
	if (!ps->o->fake_exits) {
		size_t shown = ps->depth < 5 ? ps->depth : 5;
		char *list = xstrdup("");

		for (size_t i = 0; i < shown; i++) {
			char *next = xasprintf("%s%s%s", list, i ? ", " : "",
					       r->funcs[ps->stack[ps->depth - 1 - i].func].full);

			free(list);
			list = next;
		}
		failf(ps, "the file ends with %zu sub%s never exited (%s%s): it is truncated or "
			  "garbled; -F fakes the missing exits", ps->depth, ps->depth == 1 ? "" : "s",
		      list, ps->depth > shown ? ", ..." : "");
		free(list);
		return -EINVAL;
	}
	warnf(r, "Faking %zu exit timestamp(s).\n", ps->depth);
	while (ps->depth)
		leave(ps, ps->t - r->overhead, ps->stack[ps->depth - 1].func);
	return 0;
}

static struct report *report_new(void)
{
	struct report *r = xcalloc(1, sizeof(*r));

	r->pool = strpool_new();
	idmap_init(&r->by_name);
	idmap_init(&r->children);
	r->warnings = xstrdup("");
	xgrow((void **)&r->nodes, &r->nodes_cap, 1, sizeof(*r->nodes));
	r->nodes[r->nnodes++] = (struct rnode){ NO_FUNC, NO_FUNC, 0 };
	return r;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	strpool_free(r->pool);
	idmap_free(&r->by_name);
	idmap_free(&r->children);
	free(r->funcs);
	free(r->listed);
	free(r->nodes);
	free(r->warnings);
	free(r);
}

int report_parse(const char *data, size_t len, const struct report_options *o, FILE *tree_out,
		 struct report **out, char **message)
{
	struct parser ps = { report_new(), o, tree_out, data, data + len, 0, message };
	double over;
	int err;

	*out = NULL;
	*message = NULL;
	idmap_init(&ps.cv);
	ps.l_name = NO_FUNC;
	err = header(&ps);
	if (!err) {
		/* dprofpp takes the overhead of the same clock the times are read from. */
		over = o->time == REPORT_USER ? ps.r->over[0]
		     : o->time == REPORT_SYSTEM ? ps.r->over[1]
		     : o->time == REPORT_REAL ? ps.r->over[2] : ps.r->over[0] + ps.r->over[1];
		ps.over_per_call = over / (2 * ps.r->over_tests);
		err = marks(&ps);
	}
	if (!err)
		err = finish(&ps);
	idmap_free(&ps.cv);
	free(ps.stack);
	if (err) {
		report_free(ps.r);
		return err;
	}
	*out = ps.r;
	return 0;
}

/* The whole file ("-": standard input, as dprofpp's open() takes it). */
static int read_all(const char *path, char **data, size_t *len)
{
	bool is_stdin = !strcmp(path, "-");
	int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, n = 0;
	char *buf;

	if (fd < 0)
		return -errno;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t got;

		if (n == cap)
			xgrow((void **)&buf, &cap, cap + 1, 1);
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = -errno;

			free(buf);
			if (!is_stdin)
				close(fd);
			return err;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	if (!is_stdin)
		close(fd);
	*data = buf;
	*len = n;
	return 0;
}

int report_read(const struct report_options *o, FILE *tree_out, struct report **out,
		char **message)
{
	const char *path = o->path ? o->path : "tmon.out";
	char *data = NULL, *inner;
	size_t len = 0;
	int err = read_all(path, &data, &len);

	*out = NULL;
	if (err) {
		*message = xasprintf("cannot read %s: %s", path, strerror(-err));
		return err;
	}
	err = report_parse(data, len, o, tree_out, out, &inner);
	free(data);
	if (err) {
		*message = xasprintf("%s: %s", path, inner);
		free(inner);
	}
	return err;
}

const char *report_warnings(const struct report *r)
{
	return r->warnings;
}

/* --- dprofpp's table ----------------------------------------------------------------------------- */

/* A "^" field of a Perl format: the longest prefix of *text that fits width, cut after the last
 * space or '-' when the text is longer (a space exactly at width, or a '-' just after it, still
 * counts), or at width when there is none. *text moves past it and past the spaces after. Returns
 * the bytes to print; *size is the width they count for when padding, which for a cut after '-'
 * leaves the '-' out (so such a field prints one column wider, as Perl's does). */
static size_t chop_field(const char **text, size_t width, const char **item, size_t *size)
{
	const char *s = *text, *chop = NULL;
	size_t n = 0, itemsize = 0;

	*item = s;
	for (; *s; s++, n++) {
		if (*s == '\n' || *s == '\r') {
			chop = s;
			itemsize = n;
			break;
		}
		if (is_space(*s)) {
			chop = s;
			itemsize = n;
			if (n == width)
				break;
		} else {
			if (*s == '-') {
				chop = s + 1;
				itemsize = n;
			}
			if (n == width)
				break;
		}
	}
	if (!chop || !*s) {
		chop = s;
		itemsize = n;
	}
	*size = itemsize;
	n = (size_t)(chop - *text);
	while (is_space(*chop))
		chop++;
	*text = chop;
	return n;
}

struct line {
	char *buf;
	size_t len, cap;
};

static void put(struct line *l, const char *s, size_t n)
{
	xgrow((void **)&l->buf, &l->cap, l->len + n + 1, 1);
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

static void pad(struct line *l, size_t n)
{
	while (n--)
		put(l, " ", 1);
}

static void right(struct line *l, const char **text, size_t width)
{
	const char *item;
	size_t size, n = chop_field(text, width, &item, &size);

	pad(l, size < width ? width - size : 0);
	put(l, item, n);
}

struct row {
	char pcnt[64], secs[64], csecs[64], ncalls[32], percall[64], cpercall[64];
	const char *p[7];        /* what is left of each field to print */
};

struct page {
	FILE *out;
	int lines_left;
	bool started;
	char top[4][128];
};

/* One line of the STAT format, with dprofpp's page breaks. */
static void write_row(struct page *pg, struct row *r, size_t name_width)
{
	static const char *const gaps[] = { " ", "   ", " ", " ", "   ", " ", "  " };
	static const size_t widths[] = { 4, 5, 6, 6, 6, 6 };
	struct line l = { 0 };
	const char *item;
	size_t n, size;

	if (pg->lines_left < 1) {
		if (pg->started)
			fputc('\f', pg->out);
		for (int i = 0; i < 4; i++)
			fprintf(pg->out, "%s\n", pg->top[i]);
		pg->started = true;
		pg->lines_left = PAGE_LINES - 4;
	}
	for (int i = 0; i < 6; i++) {
		put(&l, gaps[i], strlen(gaps[i]));
		right(&l, &r->p[i], widths[i]);
	}
	put(&l, gaps[6], strlen(gaps[6]));
	n = chop_field(&r->p[6], name_width, &item, &size);
	put(&l, item, n);
	while (l.len && l.buf[l.len - 1] == ' ') /* Perl drops the spaces that end a line */
		l.len--;
	fwrite(l.buf, 1, l.len, pg->out);
	fputc('\n', pg->out);
	pg->lines_left--;
	free(l.buf);
}

/* What a Perl scalar holding x prints ("%.15g"), cut to an "@>>>" field of width and right-aligned. */
static void perl_number_field(char *out, size_t size, double x, size_t width)
{
	char num[64];
	size_t n;

	snprintf(num, sizeof(num), "%.15g", x);
	n = strlen(num) < width ? strlen(num) : width;
	snprintf(out, size, "%*s%.*s", (int)(width - n), "", (int)n, num);
}

struct sort_ctx {
	const struct report *r;
	bool by_calls;
};

static int row_order(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const uint32_t *x = a, *y = b;
	const struct rfunc *fx = &c->r->funcs[x[0]], *fy = &c->r->funcs[y[0]];

	if (c->by_calls ? fx->calls != fy->calls : fx->times != fy->times) {
		if (c->by_calls)
			return fx->calls > fy->calls ? -1 : 1;
		return fx->times > fy->times ? -1 : 1;
	}
	return x[1] < y[1] ? -1 : x[1] > y[1]; /* Perl's sort is stable */
}

void report_print(FILE *out, const struct report *r, const struct report_options *o)
{
	static const char *const which[] = { "User+System", "User", "System", "Real" };
	double rrun = o->time == REPORT_USER ? r->rrun[0]
		    : o->time == REPORT_SYSTEM ? r->rrun[1]
		    : o->time == REPORT_REAL ? r->rrun[2] : r->rrun[0] + r->rrun[1];
	double runtime = (rrun - r->overhead) / r->hz;
	size_t name_width = NAME_WIDTH;
	uint32_t (*keys)[2] = xmalloc((r->nlisted + 1) * sizeof(*keys));
	struct sort_ctx ctx = { r, o->by_calls };
	struct page pg = { out, 0, false, { { 0 } } };
	char field[64];
	long cnt = o->rows ? o->rows : 15;

	if (!(runtime > 0))
		runtime = 0;
	if (o->columns > 80)
		name_width += (size_t)o->columns - FORMAT_WIDTH;
	perl_number_field(field, sizeof(field), (r->rrun[2] - r->overhead) / r->hz, 8);
	snprintf(pg.top[0], sizeof(pg.top[0]), "Total Elapsed Time = %s Seconds", field);
	perl_number_field(field, sizeof(field), runtime, 8);
	snprintf(pg.top[1], sizeof(pg.top[1]), "  %11s Time = %s Seconds", which[o->time], field);
	snprintf(pg.top[2], sizeof(pg.top[2]), "Exclusive Times");
	snprintf(pg.top[3], sizeof(pg.top[3]), "%%Time ExclSec CumulS #Calls sec/call Csec/c  Name");

	for (size_t i = 0; i < r->nlisted; i++) {
		keys[i][0] = r->listed[i];
		keys[i][1] = (uint32_t)i;
	}
	qsort_r(keys, r->nlisted, sizeof(*keys), row_order, &ctx);
	for (size_t i = 0; i < r->nlisted; i++) {
		const struct rfunc *f = &r->funcs[keys[i][0]];
		double s = f->times / r->hz, cs = f->ctimes / r->hz, pcnt;
		struct row row;

		snprintf(row.secs, sizeof(row.secs), "%.3f", s);
		snprintf(row.csecs, sizeof(row.csecs), "%.3f", cs);
		snprintf(row.ncalls, sizeof(row.ncalls), "%llu", (unsigned long long)f->calls);
		snprintf(row.percall, sizeof(row.percall), "%.4f", s / (double)f->calls);
		snprintf(row.cpercall, sizeof(row.cpercall), "%.4f", cs / (double)f->calls);
		pcnt = runtime ? strtod(row.secs, NULL) / runtime * 100.0 : 0.0;
		/* Perl multiplies integral values as integers, so its zero has no sign. */
		snprintf(row.pcnt, sizeof(row.pcnt), "%.2f", pcnt == 0 ? 0.0 : pcnt);
		row.p[0] = row.pcnt;
		row.p[1] = row.secs;
		row.p[2] = row.csecs;
		row.p[3] = row.ncalls;
		row.p[4] = row.percall;
		row.p[5] = row.cpercall;
		row.p[6] = f->full;
		write_row(&pg, &row, name_width);
		/* dprofpp blanks these four for the Name's further lines; the rest of CumulS and
		 * Csec/c, if any, still prints there. */
		row.p[0] = row.p[1] = row.p[3] = row.p[4] = "";
		while (*row.p[6])
			write_row(&pg, &row, name_width);
		if (!--cnt)
			break;
	}
	free(keys);
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

/* The profile's id for report function f: its module is the & line's package (or what precedes
 * the last "::" of its full name), its name the rest. */
static uint32_t profile_func_of(const struct report *r, struct profile *p, uint32_t f)
{
	const struct rfunc *fn = &r->funcs[f];
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

struct snapshot *report_snapshot(const struct report *r)
{
	struct profile *p = profile_new(NULL);
	uint32_t *ids = xmalloc((r->nfuncs + 1) * sizeof(*ids));
	uint32_t *depth_of = xcalloc(r->nnodes, sizeof(*depth_of));
	uint32_t *stack = NULL;
	size_t cap = 0;
	struct snapshot *s;
	uint64_t total = 0;

	memset(ids, 0xff, (r->nfuncs + 1) * sizeof(*ids));
	/* Nodes are made parent first, so a parent's depth is known before its children's. */
	for (size_t n = 1; n < r->nnodes; n++) {
		const struct rnode *node = &r->nodes[n];
		uint64_t ticks = to_count(node->self);
		size_t depth;
		uint32_t up;

		if (ticks > MAX_TICKS - total) /* so that no sum over the tree overflows */
			ticks = MAX_TICKS - total;
		depth_of[n] = depth_of[node->parent] + 1;
		if (!ticks)
			continue;
		depth = depth_of[n];
		xgrow((void **)&stack, &cap, depth, sizeof(*stack));
		up = (uint32_t)n;
		for (size_t d = depth; d > 0; d--, up = r->nodes[up].parent) {
			uint32_t f = r->nodes[up].func;

			if (ids[f] == UINT32_MAX)
				ids[f] = profile_func_of(r, p, f);
			stack[d - 1] = ids[f];
		}
		profile_add_n(p, 0, 0, stack, depth, ticks);
		total += ticks;
	}
	s = profile_snapshot(p);
	s->freq = r->hz < 1 ? 1 : r->hz > 1e9 ? 1000000000u : (unsigned)(r->hz + 0.5);
	s->elapsed_ns = to_count(r->rrun[2] * 1e9 / r->hz);
	s->user_ns = to_count(r->rrun[0] * 1e9 / r->hz);
	s->system_ns = to_count(r->rrun[1] * 1e9 / r->hz);
	if (r->have_counters)
		s->counters = r->counters;
	else
		s->counters.samples = total;
	free(stack);
	free(depth_of);
	free(ids);
	profile_free(p);
	return s;
}

/* --- the command ---------------------------------------------------------------------------------- */

int report_run(const struct report_options *options, FILE *out, FILE *err)
{
	struct report_options o_tty = *options;
	const struct report_options *o = &o_tty;
	struct winsize ws;
	struct report *r;
	char *message;
	int rc;

	/* dprofpp widens the Name column to a terminal wider than 80 columns. */
	if (!o_tty.columns && isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
		o_tty.columns = ws.ws_col;
	rc = report_read(o, (o->tree || o->compact_tree) ? out : NULL, &r, &message);

	if (rc) {
		fflush(out);
		fprintf(err, "proftop report: %s\n", message);
		free(message);
		return 1;
	}
	fputs(report_warnings(r), err);
	if (!o->tree && !o->compact_tree)
		report_print(out, r, o);
	report_free(r);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "proftop report: cannot write the report: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
