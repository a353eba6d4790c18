/* batch.c — the batch frontend: the session's run with tables of the same view rows the screen
 * shows, printed every interval and when profiling ends. Reports (saves, warnings) are left to
 * the session, which prints them on standard error. When the tables cannot be written (the
 * reader of a pipe went away, a full disk), the run ends as on a signal. */
#include "proftop/ui/batch.h"

#include "proftop/annotate.h"
#include "proftop/disasm.h"
#include "proftop/outstream.h"
#include "proftop/session.h"
#include "proftop/util.h"
#include "proftop/view.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void print_header(FILE *out, const struct snapshot *s, const struct diff_base *base,
			 const char *title, const struct selfcost *since)
{
	const struct counters *c = &s->counters;
	char cost[64], held[160];

	if (snapshot_allocations(s)) /* "alloc: bytes allocated  allocated N  in use N" */
		fprintf(out, "%s  elapsed %.2fs  %s: %s  allocated %llu  in use %llu  rate %u  "
			     "samples %llu  overflow %llu  dropped %llu",
			title, (double)s->elapsed_ns / 1e9, snapshot_kind(s),
			snapshot_alloc_measures(s), (unsigned long long)c->allocated,
			(unsigned long long)c->in_use, s->freq, (unsigned long long)c->samples,
			(unsigned long long)c->overflow, (unsigned long long)c->dropped);
	else if (snapshot_coverage(s)) /* lines that ran, the probes placed and left */
		fprintf(out, "%s  elapsed %.2fs  coverage: cap %llu  lines ran %llu  probes %llu  "
			     "placed %llu  overflow %llu  dropped %llu",
			title, (double)s->elapsed_ns / 1e9, (unsigned long long)s->coverage_cap,
			(unsigned long long)c->samples, (unsigned long long)c->probes,
			(unsigned long long)c->probes_open, (unsigned long long)c->overflow,
			(unsigned long long)c->dropped);
	else if (snapshot_timed(s)) /* 100% is all the time measured: "offcpu: blocked 4.000s" */
		fprintf(out, "%s  elapsed %.2fs  %s: %s %.3fs  samples %llu  switches %llu  "
			     "overflow %llu  dropped %llu  throttled %llu  truncated %llu",
			title, (double)s->elapsed_ns / 1e9, snapshot_kind(s),
			snapshot_time_measured(s), (double)s->samples / 1e6,
			(unsigned long long)c->samples, (unsigned long long)c->switches,
			(unsigned long long)c->overflow, (unsigned long long)c->dropped,
			(unsigned long long)c->throttled, (unsigned long long)c->truncated);
	else
		fprintf(out, "%s  elapsed %.2fs  freq %u Hz  samples %llu  overflow %llu  dropped %llu  "
			     "throttled %llu  truncated %llu",
			title, (double)s->elapsed_ns / 1e9, s->freq, (unsigned long long)c->samples,
			(unsigned long long)c->overflow, (unsigned long long)c->dropped,
			(unsigned long long)c->throttled, (unsigned long long)c->truncated);
	if (c->unread) /* only where interpreters' frames were read: other tables stay as they were */
		fprintf(out, "  unread %llu", (unsigned long long)c->unread);
	if (c->pushing) /* --otlp-endpoint: profiles sent, tries retried, profiles dropped */
		fprintf(out, "  otlp sent %llu retried %llu dropped %llu",
			(unsigned long long)c->pushed, (unsigned long long)c->push_retried,
			(unsigned long long)c->push_dropped);
	/* proftop's own CPU share since since (the previous table) or over the run, and memory:
	 * what it held of its budget, by part. */
	if (selfcost_known(&s->cost))
		fprintf(out, "  %s", selfcost_text(cost, sizeof(cost), &s->cost, since));
	if (*selfcost_memory_text(held, sizeof(held), &s->cost))
		fprintf(out, " (%s)", held);
	/* The call tree outgrew --max-memory: cold paths are in [other] nodes. */
	if (s->folded_nodes)
		fprintf(out, "  folded %llu", (unsigned long long)s->folded_nodes);
	if (base) { /* the baseline's path as given: in visible form too */
		fputs("  baseline ", out);
		util_print_safe(out, diff_base_label(base));
	}
	fputc('\n', out);
}

/* One row: the numbers' cells, then "FUNCTION  MODULE" (indented by depth in a tree), the name
 * whole or shortened as --names asks. The names come from the target, so they are printed in
 * visible form: no byte of theirs acts on a terminal or breaks the line. */
static void print_row(FILE *out, const struct view_cells *c, unsigned depth, const char *name,
		      enum view_names names, const char *module, const char *mark)
{
	char buf[8192];

	fprintf(out, "%s%s%s%s%s%*s", c->text[VIEW_CELL_FIRST], c->text[VIEW_CELL_SECOND],
		c->text[VIEW_CELL_COUNT], c->text[VIEW_CELL_DELTA_FIRST],
		c->text[VIEW_CELL_DELTA_SECOND], (int)depth * 2, "");
	util_print_safe(out, view_name(name, names, buf, sizeof(buf)));
	fputs("  ", out);
	util_print_safe(out, module);
	fputs(mark, out);
	fputc('\n', out);
}

/* Against a baseline, a row's mark as report --diff prints it. */
static const char *one_side(bool only_new, bool only_old)
{
	return only_new ? "  (new)" : only_old ? "  (gone)" : "";
}

/* The function table; against a baseline (base matched against s), with the changes, the
 * largest first. */
static void print_functions(FILE *out, const struct snapshot *s, const struct snapshot *with,
			    const struct diff_base *base, enum view_names names, long max_rows)
{
	struct view_top_query query = { base ? VIEW_SORT_DELTA_SELF : VIEW_SORT_SELF, NULL,
					SNAPSHOT_NO_NODE, base };
	struct view_cells c;
	struct view_row *rows;
	size_t n = view_top(s, &query, &rows);

	/* Beside an allocation profile's bytes, the blocks (a baseline's changes take the room). */
	const struct snapshot *objects = base ? NULL : snapshot_objects(s, with);

	view_cell_headings(&c, "SELF%", "TOTAL%", snapshot_unit(s));
	if (base)
		view_delta_headings(&c, "+SELF", "+TOTAL");
	if (objects)
		snprintf(c.text[VIEW_CELL_DELTA_FIRST], sizeof(c.text[0]), "%9s  ", "OBJECTS");
	if (snapshot_coverage(s) && !base)
		snprintf(c.text[VIEW_CELL_DELTA_FIRST], sizeof(c.text[0]), "%s", VIEW_LINES_HEADING);
	print_row(out, &c, 0, "FUNCTION", VIEW_NAMES_FULL, "MODULE", "");
	for (size_t i = 0; i < n && (max_rows < 0 || i < (size_t)max_rows); i++) {
		const struct view_row *r = &rows[i];

		view_cells(&c, r->self_pct, r->total_pct, r->self);
		view_count_cell(&c, s, r->self);
		if (objects && r->func < objects->nfuncs)
			snprintf(c.text[VIEW_CELL_DELTA_FIRST], sizeof(c.text[0]), "%9llu  ",
				 (unsigned long long)objects->func_self[r->func]);
		if (snapshot_coverage(s) && !base)
			view_lines_cell(c.text[VIEW_CELL_DELTA_FIRST], sizeof(c.text[0]), r);
		if (base)
			view_delta_cells(&c, r->self_pct - r->old_self_pct,
					 r->total_pct - r->old_total_pct);
		print_row(out, &c, 0, r->name, names, r->module, one_side(r->only_new, r->only_old));
	}
	free(rows);
}

static void print_tree(FILE *out, const struct snapshot *s, const struct diff_base *base,
		       double min_percent, enum view_names names, long max_rows)
{
	struct view_tree_query query = { .min_pct = min_percent, .baseline = base };
	struct view_tree_row *rows = NULL;
	struct view_cells c;
	struct view_tree tree;
	size_t cap = 0, n;

	view_tree_of(&tree, s, SNAPSHOT_NO_NODE);
	n = view_tree(&tree, &query, &rows, &cap);
	view_cell_headings(&c, "TOTAL%", "SELF%", snapshot_unit(s));
	if (base)
		view_delta_headings(&c, "+TOTAL", "+SELF");
	print_row(out, &c, 0, "FUNCTION", VIEW_NAMES_FULL, "MODULE", "");
	for (size_t i = 0; i < n && (max_rows < 0 || i < (size_t)max_rows); i++) {
		const struct view_tree_row *r = &rows[i];

		view_cells(&c, r->total_pct, r->self_pct, r->total);
		view_count_cell(&c, s, r->total);
		if (base)
			view_delta_cells(&c, r->total_pct - r->old_total_pct,
					 r->self_pct - r->old_self_pct);
		print_row(out, &c, r->depth, r->name, names, r->module,
			  one_side(base && r->only_new, false));
	}
	free(rows);
	view_tree_free(&tree);
}

/* One row of an annotation: the cells, then file:line (the file's basename; the section's
 * heading names it whole) and the line's text, tabs as spaces, in visible form; without the
 * text, why not, unless the heading said it already (file_why: what it said). */
static void print_line(FILE *out, const struct view_cells *c, const struct annotate_line *l,
		       struct annotate_sources *sources, const char *binary,
		       const struct annotate_readers *readers, const char *file_why)
{
	const char *why = NULL, *base,
		   *text = annotate_source_line(sources, l->file, l->line, binary, readers, &why);

	fprintf(out, "%s%s%s", c->text[VIEW_CELL_FIRST], c->text[VIEW_CELL_SECOND],
		c->text[VIEW_CELL_COUNT]);
	if (!l->file) {
		fputs("[no line]\n", out);
		return;
	}
	base = strrchr(l->file, '/');
	util_print_safe(out, base ? base + 1 : l->file);
	fprintf(out, ":%u", l->line);
	if (text) {
		char *expanded = util_expand_tabs(text);

		fputs("  ", out);
		util_print_safe(out, expanded);
		free(expanded);
	} else if (!file_why || strcmp(why, file_why)) {
		fputs("  (text not shown: ", out);
		util_print_safe(out, why);
		fputc(')', out);
	}
	fputc('\n', out);
}

/* func's instructions, their lines added to a as rows, counted from s; false (with the reason
 * printed) when there are none to show. */
static bool code_load(struct annotate_code *code, FILE *out, const struct snapshot *s, uint32_t func,
		      struct disasm *d, struct annotation *a)
{
	const char *why;

	if (annotate_code_load(code, d, s, func, &why)) {
		fputs("no instructions: ", out);
		util_print_safe(out, s->funcs[func].path ? s->funcs[func].path : s->funcs[func].name);
		fprintf(out, ": %s\n", why);
		return false;
	}
	annotate_code_positions(code, a);
	annotate_code_count(code, s, func);
	return true;
}

/* The instructions from *next up to and on l's line (all that are left when l is NULL): address,
 * text, and the cells of the samples taken at it (blank without any). */
static void print_insns(FILE *out, const struct annotate_code *code, size_t *next,
			const struct annotate_line *l, const struct annotation *a)
{
	size_t upto = annotate_code_upto(code, *next, l);
	struct view_cells c;

	for (; *next < upto; ++*next) {
		size_t i = code->order[*next];
		uint64_t self, total;

		annotate_code_samples(code, i, &self, &total);
		if (total)
			view_cells(&c, a->self ? 100.0 * (double)self / (double)a->self : 0,
				   a->total ? 100.0 * (double)total / (double)a->total : 0, self);
		else
			view_cell_headings(&c, "", "", "");
		fprintf(out, "%s%s%s", c.text[VIEW_CELL_FIRST], c.text[VIEW_CELL_SECOND],
			c.text[VIEW_CELL_COUNT]);
		fprintf(out, "    0x%llx  ", (unsigned long long)code->insns[i].addr);
		util_print_safe(out, code->insns[i].text);
		fputc('\n', out);
	}
}

/* Per line: SELF% of the function's self samples, TOTAL% of its total ones; with d, each line's
 * instructions under it. The text is read as the owners of the function's processes could. */
static void print_annotation(FILE *out, const struct snapshot *s, uint32_t func,
			     struct annotate_sources *sources, struct disasm *d)
{
	struct annotation a;
	struct view_cells c;
	const char *last_file = NULL, *why = NULL, *binary = annotate_binary(s, func);
	char *file_why = NULL;   /* what the file's heading said instead of a line's text */
	struct annotate_code code;
	struct annotate_readers readers;
	size_t next = 0;
	bool with_code;

	annotate_function(s, func, &a);
	annotate_readers(s, func, &readers);
	fputs("--- annotate  ", out);
	util_print_safe(out, s->funcs[func].name);
	fputs("  ", out);
	util_print_safe(out, s->funcs[func].module);
	fprintf(out, "  self %llu  total %llu\n", (unsigned long long)a.self,
		(unsigned long long)a.total);
	if (!a.has_lines) {
		fputs("no source lines: ", out);
		util_print_safe(out, annotate_why_no_lines(&a));
		fputc('\n', out);
	}
	with_code = d && code_load(&code, out, s, func, d, &a);
	view_cell_headings(&c, "SELF%", "TOTAL%", view_line_count_heading(s));
	fprintf(out, "%s%s%sLINE\n", c.text[VIEW_CELL_FIRST], c.text[VIEW_CELL_SECOND],
		c.text[VIEW_CELL_COUNT]);
	for (size_t i = 0; i < a.nlines; i++) {
		const struct annotate_line *l = &a.lines[i];

		if (l->file && (!last_file || strcmp(l->file, last_file))) {
			fputs("file ", out);
			util_print_safe(out, l->file);
			free(file_why);
			file_why = NULL;
			if (!annotate_source_line(sources, l->file, l->line, binary, &readers, &why)) {
				fputs("  (text not shown: ", out);
				util_print_safe(out, why);
				fputc(')', out);
				file_why = xstrdup(why);
			}
			fputc('\n', out);
			last_file = l->file;
		}
		view_cells(&c, a.self ? 100.0 * (double)l->self / (double)a.self : 0,
			   a.total ? 100.0 * (double)l->total / (double)a.total : 0, l->self);
		view_line_count_cell(&c, s, l->self);
		print_line(out, &c, l, sources, binary, &readers, file_why);
		if (with_code)
			print_insns(out, &code, &next, l, &a);
	}
	if (with_code) {
		if (next < code.n)
			fputs("[instructions without a line]\n", out);
		print_insns(out, &code, &next, NULL, &a);
		annotate_code_free(&code);
	}
	free(file_why);
	annotation_free(&a);
}

static void print_annotations(FILE *out, const struct snapshot *s, const char *name, bool code)
{
	uint32_t funcs[16];
	size_t n = annotate_find(s, name, funcs, 16);
	struct annotate_sources *sources = annotate_sources_new();
	struct disasm *d = code ? disasm_new() : NULL;

	if (!n) {
		fputs("--- annotate  ", out);
		util_print_safe(out, name);
		fputs(": no function of that name has samples yet\n", out);
	}
	for (size_t i = 0; i < n && i < 16; i++)
		print_annotation(out, s, funcs[i], sources, d);
	annotate_sources_free(sources);
	disasm_free(d);
}

static int compare_sites_by_module(const void *pa, const void *pb, void *arg)
{
	const struct snapshot *s = arg;
	const struct snapshot_site *a = *(const struct snapshot_site *const *)pa;
	const struct snapshot_site *b = *(const struct snapshot_site *const *)pb;
	int c = strcmp(s->funcs[a->func].module, s->funcs[b->func].module);

	return c ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

/* Inferno prof(3)'s histogram, per module: "address count" pairs in increasing address order,
 * zero counts left out; the samples of one address in several functions (inlined ones) summed. */
static void print_histogram(FILE *out, const struct snapshot *s)
{
	const struct snapshot_site **sites = xmalloc((s->nsites ? s->nsites : 1) * sizeof(*sites));
	size_t n = 0;

	for (size_t i = 0; i < s->nsites; i++)
		if (s->sites[i].self && s->sites[i].addr != SNAPSHOT_SITE_OTHER)
			sites[n++] = &s->sites[i];
	qsort_r(sites, n, sizeof(*sites), compare_sites_by_module, (void *)s);
	for (size_t i = 0; i < n;) {
		const char *module = s->funcs[sites[i]->func].module;

		fputs("--- histogram  ", out);
		util_print_safe(out, module);
		fputc('\n', out);
		while (i < n && !strcmp(s->funcs[sites[i]->func].module, module)) {
			uint64_t addr = sites[i]->addr, count = 0;

			for (; i < n && sites[i]->addr == addr &&
			       !strcmp(s->funcs[sites[i]->func].module, module); i++)
				count += sites[i]->self;
			fprintf(out, "0x%llx %llu\n", (unsigned long long)addr, (unsigned long long)count);
		}
	}
	free(sites);
}

/* The table of s, which came with the allocation profiles of with (s itself, or the snapshot
 * whose companion s is). */
static int print_table(FILE *out, const struct snapshot *s, const struct snapshot *with,
		       struct diff_base *base, const char *title, const struct batch_options *o,
		       long max_rows, const struct selfcost *since)
{
	errno = 0;
	print_header(out, s, base, title, since);
	if (base)
		diff_base_match(base, s, 0);
	if (o->tree)
		print_tree(out, s, base, o->min_percent, o->names, max_rows);
	else
		print_functions(out, s, with, base, o->names, max_rows);
	if (o->annotate)
		print_annotations(out, s, o->annotate, o->asm_code);
	if (o->histogram)
		print_histogram(out, s);
	if (fflush(out) != 0 || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

int batch_print_table(FILE *out, const struct snapshot *s, struct diff_base *base,
		      const char *title, const struct batch_options *o, long max_rows)
{
	return print_table(out, s, s, base, title, o, max_rows, NULL);
}

struct batch {
	const struct batch_options *o;
	FILE *out;                 /* the tables' stream: the given one, or stream's */
	const char *out_name;
	struct outstream *stream;  /* when the given stream is no regular file: never blocking */
	int pipe_fd;               /* its descriptor when it is a pipe's write end, else -1 */
	int write_error;           /* errno of the first table that could not be written; 0: none */
	struct diff_base *base;    /* --baseline's profile; NULL: none */
	struct selfcost cost;      /* proftop's at the last periodic table (none before it) */
};

/* A table nobody can read ends the tables, and the run: the session then stops profiling as
 * on a signal and still writes the -o snapshot. A reader that went away (EPIPE) is how a pipe
 * ends, as in `proftop -b ... | head`, and a table given up for a signal (outstream.h) ends
 * the run on that signal, so only other errors (a full disk, a stalled reader) are told. */
static void write_failed(struct batch *b, int err)
{
	char *why = b->stream ? outstream_gave_up(b->stream) : NULL, *text;

	b->write_error = err;
	if (err == EPIPE || (b->stream && outstream_signal(b->stream))) {
		free(why);
		return;
	}
	text = xasprintf("cannot write the tables to %s: %s", b->out_name, why ? why : strerror(err));
	diag_print(stderr, DIAG_ERROR, text);
	free(text);
	free(why);
}

/* A periodic table's header gives proftop's share since the previous one; the final table's,
 * the whole run's. */
static void print_latest(struct batch *b, struct session *session, const char *title, long rows,
			 bool periodic)
{
	struct snapshot *s;
	int err;

	if (b->write_error)
		return;
	s = session_snapshot(session);
	err = print_table(b->out, s, s, b->base, title, b->o, rows, periodic ? &b->cost : NULL);
	if (periodic)
		b->cost = s->cost;
	snapshot_unref(s);
	if (err)
		write_failed(b, -err);
}

/* The write end of a pipe reports POLLERR once its reader has closed it: a run that prints no
 * periodic table (-n 0) learns so without writing. */
static int pipe_of(FILE *out)
{
	struct stat st;
	int fd = fileno(out);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) ||
	    (fcntl(fd, F_GETFL) & O_ACCMODE) != O_WRONLY)
		return -1;
	return fd;
}

/* An allocation run's end: what is still in use is the leak report (unless that was the table
 * just printed). */
static void print_leaks(struct batch *b, struct session *session)
{
	struct snapshot *s;
	const struct snapshot *inuse;
	int err;

	if (b->write_error)
		return;
	s = session_snapshot(session);
	inuse = snapshot_sibling(s, "inuse");
	if (inuse && inuse != s) {
		err = print_table(b->out, inuse, s, NULL, "=== proftop in use at the end (leaks)",
				  b->o, b->o->max_rows, NULL);
		if (err)
			write_failed(b, -err);
	}
	snapshot_unref(s);
}

static bool wake(void *arg, struct session *session)
{
	struct batch *b = arg;
	struct pollfd p = { .fd = b->pipe_fd };

	(void)session;
	if (!b->write_error && p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLERR))
		write_failed(b, EPIPE);
	return !b->write_error;
}

static void refresh(void *arg, struct session *session)
{
	struct batch *b = arg;

	print_latest(b, session, "--- proftop", b->o->max_rows < 0 ? BATCH_DEFAULT_ROWS : b->o->max_rows,
		     true);
}

static bool ended(void *arg, struct session *session)
{
	struct batch *b = arg;

	print_latest(b, session, "=== proftop final", b->o->max_rows, false);
	print_leaks(b, session);
	return false;
}

/* Tables onto a pipe, a terminal or a device go through an outstream: a reader that stops
 * reading must not keep proftop from acting on SIGTERM. */
static void open_out(struct batch *b, FILE *out)
{
	struct stat st;

	b->out = out;
	b->out_name = out == stderr ? "standard error" : "standard output";
	b->pipe_fd = pipe_of(out);
	if (fileno(out) < 0 || fstat(fileno(out), &st) < 0 || S_ISREG(st.st_mode))
		return;
	fflush(out);
	b->stream = outstream_reopen(fileno(out));
	b->out = outstream_file(b->stream);
}

int batch_run(struct session *session, const struct batch_options *o, FILE *out)
{
	struct batch b = { .o = o };
	struct session_frontend fe = {
		.arg = &b,
		.fds = { -1, -1 },
		.wake = wake,
		.refresh = refresh,
		.ended = ended,
	};
	const char *label;
	struct snapshot *baseline = session_baseline(session, &label);
	bool signalled;
	int status;

	b.base = baseline ? diff_base_new(baseline, label) : NULL;
	snapshot_unref(baseline); /* the base holds its own reference */
	open_out(&b, out);
	fe.fds[0] = b.pipe_fd;
	status = session_run(session, &fe);
	signalled = b.stream && outstream_signal(b.stream);
	outstream_close(b.stream, NULL); /* each table was flushed: nothing is left to fail */
	diff_base_free(b.base);
	if (signalled)
		return status;
	return b.write_error && b.write_error != EPIPE ? 1 : status;
}
