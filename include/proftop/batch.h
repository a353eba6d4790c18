/* batch.h — the non-interactive frontend: tables of the hottest functions on stdout, every
 * interval and once at the end. */
#ifndef PROFTOP_BATCH_H
#define PROFTOP_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct session;
struct snapshot;
struct export_options;

struct batch_options {
	double interval;       /* seconds between periodic tables; 0: only the final table */
	double duration;       /* seconds to profile; 0: until the target ends or a signal */
	long max_rows;         /* rows per table; -1: the default (25 periodic, all at the end) */
	bool tree;             /* print the call tree instead of the function table */
	double min_percent;    /* --tree: leave out nodes under this share of all samples */
	/* Where SIGUSR1 writes a snapshot (NULL: the defaults); when its output is "-" (the final
	 * snapshot goes to stdout), the tables go to stderr. */
	const struct export_options *export;
};

#define BATCH_DEFAULT_ROWS 25

/* Run the session to its end; returns proftop's exit status. */
int batch_run(struct session *session, const struct batch_options *options);
/* Print one table (header, columns, rows) of a snapshot: the function table, or the call tree. */
void batch_print_table(FILE *out, const struct snapshot *snapshot, const char *title,
		       const struct batch_options *options, long max_rows);

#endif
