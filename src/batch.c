/* batch.c — the batch frontend over the same view rows the TUI shows. */
#include "proftop/batch.h"

#include "proftop/export.h"
#include "proftop/session.h"
#include "proftop/util.h"
#include "proftop/view.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

static void print_header(FILE *out, const struct snapshot *s, const char *title)
{
	const struct counters *c = &s->counters;

	fprintf(out, "%s  elapsed %.2fs  freq %u Hz  samples %llu  overflow %llu  dropped %llu  "
		     "throttled %llu  truncated %llu\n",
		title, (double)s->elapsed_ns / 1e9, s->freq, (unsigned long long)c->samples,
		(unsigned long long)c->overflow, (unsigned long long)c->dropped,
		(unsigned long long)c->throttled, (unsigned long long)c->truncated);
}

static void print_functions(FILE *out, const struct snapshot *s, long max_rows)
{
	struct view_top_query query = { VIEW_SORT_SELF, NULL, SNAPSHOT_NO_NODE };
	struct view_row *rows;
	size_t n = view_top(s, &query, &rows);

	fprintf(out, "  SELF%%  TOTAL%%  SAMPLES  FUNCTION  MODULE\n");
	for (size_t i = 0; i < n && (max_rows < 0 || i < (size_t)max_rows); i++)
		fprintf(out, "%7.2f %7.2f %8llu  %s  %s\n", rows[i].self_pct, rows[i].total_pct,
			(unsigned long long)rows[i].self, rows[i].name, rows[i].module);
	free(rows);
}

static void print_tree(FILE *out, const struct snapshot *s, double min_percent,
		       long max_rows)
{
	struct view_tree_query query = { .min_pct = min_percent };
	struct view_tree_row *rows = NULL;
	struct view_tree tree;
	size_t cap = 0, n;

	view_tree_of(&tree, s, SNAPSHOT_NO_NODE);
	n = view_tree(&tree, &query, &rows, &cap);

	fprintf(out, " TOTAL%%   SELF%%  FUNCTION  MODULE\n");
	for (size_t i = 0; i < n && (max_rows < 0 || i < (size_t)max_rows); i++)
		fprintf(out, "%7.2f %7.2f  %*s%s  %s\n", rows[i].total_pct, rows[i].self_pct,
			(int)rows[i].depth * 2, "", rows[i].name, rows[i].module);
	free(rows);
	view_tree_free(&tree);
}

void batch_print_table(FILE *out, const struct snapshot *s, const char *title,
		       const struct batch_options *o, long max_rows)
{
	print_header(out, s, title);
	if (o->tree)
		print_tree(out, s, o->min_percent, max_rows);
	else
		print_functions(out, s, max_rows);
	fflush(out);
}

/* stdout, unless the final snapshot goes there. */
static FILE *tables_out(const struct batch_options *o)
{
	bool snapshot_on_stdout = o->export && o->export->output && !strcmp(o->export->output, "-");

	return snapshot_on_stdout ? stderr : stdout;
}

static void print_latest(struct session *session, const char *title,
			 const struct batch_options *o, long max_rows)
{
	struct snapshot *s = session_snapshot(session);

	batch_print_table(tables_out(o), s, title, o, max_rows);
	snapshot_unref(s);
}

/* SIGUSR1: a snapshot now, profiling goes on. */
static void save(struct session *session, const struct batch_options *o)
{
	struct snapshot *s = session_snapshot(session);
	char *message;

	export_save(s, o->export, &message);
	fprintf(stderr, "proftop: %s\n", message);
	free(message);
	snapshot_unref(s);
}

static int remaining_ms(uint64_t deadline, uint64_t now)
{
	if (!deadline)
		return -1;
	return deadline <= now ? 0 : (int)((deadline - now + 999999) / 1000000);
}

int batch_run(struct session *session, const struct batch_options *o)
{
	uint64_t start = util_now_ns();
	uint64_t interval_ns = (uint64_t)llround(o->interval * 1e9);
	uint64_t next_table = interval_ns ? start + interval_ns : 0;
	uint64_t end = o->duration > 0 ? start + (uint64_t)llround(o->duration * 1e9) : 0;
	struct pollfd pfd = { .fd = session_fd(session), .events = POLLIN };
	long periodic_rows = o->max_rows < 0 ? BATCH_DEFAULT_ROWS : o->max_rows;

	for (;;) {
		uint64_t now = util_now_ns();
		int wait_table = remaining_ms(next_table, now), wait_end = remaining_ms(end, now);
		int timeout = wait_table < 0 ? wait_end : wait_end < 0 ? wait_table
					 : (wait_table < wait_end ? wait_table : wait_end);
		unsigned events;

		/* The signalfd reports signals; attached processes ending are noticed on a tick. */
		if (timeout < 0 || timeout > 250)
			timeout = 250;
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
			break;
		events = session_events(session);
		if (events & SESSION_SAVE)
			save(session, o);
		if (events & (SESSION_QUIT | SESSION_ENDED))
			break;
		now = util_now_ns();
		if (end && now >= end)
			break;
		if (next_table && now >= next_table) {
			print_latest(session, "--- proftop", o, periodic_rows);
			while (next_table <= now)
				next_table += interval_ns;
		}
	}
	session_stop(session);
	print_latest(session, "=== proftop final", o, o->max_rows);
	return session_exit_code(session);
}
