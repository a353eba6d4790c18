/* report.c — `proftop report`: what dprofpp prints for a tmon.out, its table or its trees, from
 * what tmon_read.c read.
 *
 * The table is printed the way dprofpp's Perl format prints it: right-aligned "^" fields that chop
 * their text at a space or after a '-', a Name column that wraps onto more lines, and pages of 60
 * lines with the column titles again after a form feed. The trees are the trace of sub entries,
 * three columns of indentation a level, as dprofpp prints them while it reads the marks: up to the
 * line it stops at when the file is broken. */
#include "proftop/report.h"

#include "proftop/diff.h"
#include "proftop/view.h"

#include "proftop/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TREE_TAB 3
#define NO_FUNC UINT32_MAX
#define PAGE_LINES 60          /* Perl's $= */
#define NAME_WIDTH 34
#define FORMAT_WIDTH 79

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* --- the trees (-T, -t) --------------------------------------------------------------------------- */

/* A line of a tree: name indented by depth, and " (Nx)" when -t folded N calls into it. Names
 * are printed in visible form (util.h) here and in the table: a file's control bytes never reach
 * the terminal. */
static void tree_line(FILE *out, uint32_t depth, const char *name, unsigned long repeats)
{
	fprintf(out, "%*s", (int)(depth * TREE_TAB), "");
	util_print_safe(out, name);
	if (repeats)
		fprintf(out, " (%lux)", repeats + 1);
	fputc('\n', out);
}

/* dprofpp's -t: the -T lines, with the calls of a sub repeated at the same depth folded into one.
 * A line is printed when the next one starts, so the last waits for the end of the marks. */
static void compact_tree(FILE *out, const struct tmon_trace *trace)
{
	uint32_t last = NO_FUNC, last_depth = 0;
	unsigned long repeats = 0;

	for (size_t i = 0; i < trace->nentries; i++) {
		const struct tmon_entry *e = &trace->entries[i];

		if (e->depth == last_depth && e->func == last) {
			repeats++;
			continue;
		}
		if (last != NO_FUNC)
			tree_line(out, last_depth, trace->names[last], repeats);
		repeats = 0;
		last = e->func;
		last_depth = e->depth;
	}
	if (trace->ended)
		tree_line(out, last_depth, last == NO_FUNC ? "" : trace->names[last], repeats);
}

void report_print_tree(FILE *out, const struct tmon_trace *trace, const struct report_options *o)
{
	if (o->tree) {
		for (size_t i = 0; i < trace->nentries; i++)
			tree_line(out, trace->entries[i].depth,
				  trace->names[trace->entries[i].func], 0);
	} else if (o->compact_tree) {
		compact_tree(out, trace);
	}
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
		/* A cut at the width never splits a UTF-8 character (the name is in visible form:
		 * its halves would not be). */
		while (chop > *text + 1 && ((unsigned char)*chop & 0xc0) == 0x80) {
			chop--;
			itemsize--;
		}
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
	fwrite(l.buf, 1, l.len, pg->out); /* the name is in visible form already (func_row) */
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
	const struct tmon *tm;
	bool by_calls, inclusive;
};

static int row_order(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const uint32_t *x = a, *y = b;
	const struct tmon_func *fx = &c->tm->funcs[x[0]], *fy = &c->tm->funcs[y[0]];

	if (c->by_calls && fx->calls != fy->calls)
		return fx->calls > fy->calls ? -1 : 1;
	if (!c->by_calls && c->inclusive && fx->ctimes != fy->ctimes)
		return fx->ctimes > fy->ctimes ? -1 : 1;
	if (!c->by_calls && !c->inclusive && fx->times != fy->times)
		return fx->times > fy->times ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1]; /* Perl's sort is stable */
}

/* The run's seconds in tm's clock, less DProf's overhead; 0 when not above 0. */
static double run_time(const struct tmon *tm)
{
	double rrun = tm->clock == TMON_USER ? tm->rrun[0]
		    : tm->clock == TMON_SYSTEM ? tm->rrun[1]
		    : tm->clock == TMON_REAL ? tm->rrun[2] : tm->rrun[0] + tm->rrun[1];
	double runtime = (rrun - tm->overhead) / tm->hz;

	return runtime > 0 ? runtime : 0;
}

/* The four lines at the top of every page. */
static void page_titles(struct page *pg, const struct tmon *tm, double runtime, bool inclusive)
{
	static const char *const which[] = { "User+System", "User", "System", "Real" };
	char field[64];

	perl_number_field(field, sizeof(field), (tm->rrun[2] - tm->overhead) / tm->hz, 8);
	snprintf(pg->top[0], sizeof(pg->top[0]), "Total Elapsed Time = %s Seconds", field);
	perl_number_field(field, sizeof(field), runtime, 8);
	snprintf(pg->top[1], sizeof(pg->top[1]), "  %11s Time = %s Seconds", which[tm->clock], field);
	snprintf(pg->top[2], sizeof(pg->top[2]), inclusive ? "Inclusive Times" : "Exclusive Times");
	snprintf(pg->top[3], sizeof(pg->top[3]), "%%Time ExclSec CumulS #Calls sec/call Csec/c  Name");
}

/* The row of f, on as many lines as its Name takes. */
static void func_row(struct page *pg, const struct tmon_func *f, double hz, double runtime,
		     size_t name_width, bool inclusive)
{
	double s = f->times / hz, cs = f->ctimes / hz, pcnt;
	char *name = NULL;
	size_t name_cap = 0;
	struct row row;

	snprintf(row.secs, sizeof(row.secs), "%.3f", s);
	snprintf(row.csecs, sizeof(row.csecs), "%.3f", cs);
	snprintf(row.ncalls, sizeof(row.ncalls), "%llu", (unsigned long long)f->calls);
	snprintf(row.percall, sizeof(row.percall), "%.4f", s / (double)f->calls);
	snprintf(row.cpercall, sizeof(row.cpercall), "%.4f", cs / (double)f->calls);
	pcnt = runtime ? strtod(inclusive ? row.csecs : row.secs, NULL) / runtime * 100.0 : 0.0;
	/* Perl multiplies integral values as integers, so its zero has no sign. */
	snprintf(row.pcnt, sizeof(row.pcnt), "%.2f", pcnt == 0 ? 0.0 : pcnt);
	row.p[0] = row.pcnt;
	row.p[1] = row.secs;
	row.p[2] = row.csecs;
	row.p[3] = row.ncalls;
	row.p[4] = row.percall;
	row.p[5] = row.cpercall;
	row.p[6] = util_visible_str(f->full, &name, &name_cap);
	write_row(pg, &row, name_width);
	/* dprofpp blanks these four for the Name's further lines; the rest of CumulS and Csec/c, if
	 * any, still prints there. */
	row.p[0] = row.p[1] = row.p[3] = row.p[4] = "";
	while (*row.p[6])
		write_row(pg, &row, name_width);
	free(name);
}

void report_print(FILE *out, const struct tmon *tm, const struct report_options *o)
{
	double runtime = run_time(tm);
	size_t name_width = NAME_WIDTH;
	uint32_t (*keys)[2] = xmalloc((tm->nlisted + 1) * sizeof(*keys));
	struct sort_ctx ctx = { tm, o->by_calls, o->inclusive };
	struct page pg = { out, 0, false, { { 0 } } };
	long cnt = o->rows ? o->rows : 15;

	if (o->columns > 80)
		name_width += (size_t)o->columns - FORMAT_WIDTH;
	page_titles(&pg, tm, runtime, o->inclusive);
	for (size_t i = 0; i < tm->nlisted; i++) {
		keys[i][0] = tm->listed[i];
		keys[i][1] = (uint32_t)i;
	}
	qsort_r(keys, tm->nlisted, sizeof(*keys), row_order, &ctx);
	for (size_t i = 0; i < tm->nlisted; i++) {
		func_row(&pg, &tm->funcs[keys[i][0]], tm->hz, runtime, name_width, o->inclusive);
		if (!--cnt)
			break;
	}
	free(keys);
}

/* --- the command ---------------------------------------------------------------------------------- */

/* The width of the terminal out is, or 0. dprofpp widens the Name column to a terminal wider
 * than 80 columns. */
static int terminal_columns(FILE *out)
{
	struct winsize ws;

	if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
		return ws.ws_col;
	return 0;
}

/* Each line of text (which quotes names from the file) after prefix, in visible form. */
static void print_lines(FILE *out, const char *prefix, const char *text)
{
	for (const char *p = text, *end; *p; p = *end ? end + 1 : end) {
		char *line;

		end = strchrnul(p, '\n');
		line = xasprintf("%.*s", (int)(end - p), p);
		fputs(prefix, out);
		util_print_safe(out, line);
		fputc('\n', out);
		free(line);
	}
}

void report_print_diff(FILE *out, struct snapshot *old, const struct snapshot *new,
		       const struct report_options *options)
{
	struct diff_base *base = diff_base_new(old, "old");
	struct view_top_query query = { VIEW_SORT_DELTA_SELF, NULL, SNAPSHOT_NO_NODE, base };
	struct view_row *rows;
	size_t n;
	char *name = NULL, *module = NULL;
	size_t name_cap = 0, module_cap = 0;
	long cnt = options->rows ? options->rows : 15; /* -O as the table counts it */

	diff_base_match(base, new, 0);
	n = view_top(new, &query, &rows);
	fprintf(out, "=== proftop diff  old %llu samples  new %llu samples  (percentages of each; "
		"+/- points since old)\n", (unsigned long long)old->samples,
		(unsigned long long)new->samples);
	fprintf(out, "  SELF%%  TOTAL%%   +SELF  +TOTAL  FUNCTION  MODULE\n");
	for (size_t i = 0; i < n && cnt; i++, cnt--) {
		const struct view_row *r = &rows[i];

		fprintf(out, "%7.2f %7.2f %+7.2f %+7.2f  %s  %s%s\n", r->self_pct, r->total_pct,
			r->self_pct - r->old_self_pct, r->total_pct - r->old_total_pct,
			util_visible_str(r->name, &name, &name_cap),
			util_visible_str(r->module, &module, &module_cap),
			r->only_new ? "  (new)" : r->only_old ? "  (gone)" : "");
	}
	free(name);
	free(module);
	free(rows);
	diff_base_free(base);
}

/* --diff: both files read as the table would read them, then their differences. */
static int report_diff(const struct report_options *o, FILE *out, FILE *err)
{
	const char *path[2] = { o->diff_old, o->path };
	struct snapshot *s[2] = { NULL, NULL };
	int rc = 0;

	for (int i = 0; i < 2 && !rc; i++) {
		struct tmon *tm;
		char *message;

		if (tmon_read_file(path[i], &o->read, NULL, &tm, &message)) {
			print_lines(err, "proftop report: ", message);
			free(message);
			rc = 1;
			break;
		}
		print_lines(err, "", tm->warnings);
		s[i] = tmon_snapshot(tm);
		tmon_free(tm);
	}
	if (!rc)
		report_print_diff(out, s[0], s[1], o);
	snapshot_unref(s[0]);
	snapshot_unref(s[1]);
	if (!rc && (fflush(out) != 0 || ferror(out))) {
		fprintf(err, "proftop report: cannot write the report: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

int report_run(const struct report_options *options, FILE *out, FILE *err)
{
	struct report_options o = *options;
	struct tmon_trace trace = { 0 };
	bool trees = o.tree || o.compact_tree;
	struct tmon *tm;
	char *message;
	int rc;

	if (o.diff_old)
		return report_diff(&o, out, err);
	if (!o.columns)
		o.columns = terminal_columns(out);
	rc = tmon_read_file(o.path ? o.path : "tmon.out", &o.read, trees ? &trace : NULL, &tm,
			    &message);
	report_print_tree(out, &trace, &o);
	tmon_trace_free(&trace);
	if (rc) {
		fflush(out);
		print_lines(err, "proftop report: ", message);
		free(message);
		return 1;
	}
	print_lines(err, "", tm->warnings);
	if (!trees)
		report_print(out, tm, &o);
	tmon_free(tm);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "proftop report: cannot write the report: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
