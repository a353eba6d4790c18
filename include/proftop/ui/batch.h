/* batch.h — the non-interactive frontend: tables of the hottest functions (or the call tree),
 * every interval and once when profiling ends; the session's reports on standard error. */
#ifndef PROFTOP_BATCH_H
#define PROFTOP_BATCH_H

#include "proftop/view_name.h"

#include <stdbool.h>
#include <stdio.h>

struct diff_base;
struct session;
struct snapshot;

struct batch_options {
	long max_rows;         /* rows per table; -1: the default (25 periodic, all at the end) */
	bool tree;             /* print the call tree instead of the function table */
	double min_percent;    /* --tree: leave out nodes under this share of all samples */
	const char *annotate;  /* --annotate FUNC: also print FUNC's samples per source line */
	bool histogram;        /* --histogram: also print each module's address histogram */
	bool asm_code;         /* --asm: the annotation shows each line's instructions */
	enum view_names names; /* --names: the tables' function names whole or shortened */
};

#define BATCH_DEFAULT_ROWS 25

/* Run the session to its end, printing tables to out; returns proftop's exit status. A table
 * that cannot be written ends profiling as a signal does (the -o snapshot is still written):
 * when out's reader went away (EPIPE) the status is what the session says, as after SIGTERM;
 * any other write error is reported and the status is 1. */
int batch_run(struct session *session, const struct batch_options *options, FILE *out);
/* Print one table (header, columns, rows) of a snapshot: the function table, or the call tree;
 * against a baseline (NULL: none), with the changes since it (rows by the largest change). Returns
 * 0, or -errno when out could not take it all. */
int batch_print_table(FILE *out, const struct snapshot *snapshot, struct diff_base *base,
		      const char *title, const struct batch_options *options, long max_rows);

#endif
