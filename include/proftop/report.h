/* report.h — `proftop report`: prints what dprofpp prints for a tmon.out (proftop's own, or one
 * Devel::DProf wrote): the table of the hottest subroutines, or with -T/-t the call tree, with
 * dprofpp's option letters and the same numbers, down to dprofpp's rounding and column layout.
 * tmon_read.h reads the file; this prints what it read. */
#ifndef PROFTOP_REPORT_H
#define PROFTOP_REPORT_H

#include "proftop/tmon_read.h"

#include <stdbool.h>
#include <stdio.h>

struct report_options {
	const char *path;     /* the file; dprofpp's default is tmon.out */
	struct tmon_read_options read;  /* -u, -s, -r (the clock) and -F: how the file is summed */
	long rows;            /* -O N: rows of the table; 0 means 15 and a negative number all */
	bool tree;            /* -T: every sub entry, indented by depth */
	bool compact_tree;    /* -t: the same, repeated calls folded into "name (Nx)" */
	bool by_calls;        /* -l: sort by #Calls instead of exclusive time */
	bool inclusive;       /* -I: inclusive times: sorted by CumulS, %Time of it (-l wins) */
	int columns;          /* terminal width, for the Name column as dprofpp widens it (0: 80) */
	const char *diff_old; /* --diff OLD NEW: the baseline OLD; path is NEW. NULL: no diff */
};

/* dprofpp's table (rows, by_calls and columns of options), in tmon's clock. */
void report_print(FILE *out, const struct tmon *tmon, const struct report_options *options);
/* dprofpp's -T or -t tree (as options->tree or compact_tree ask; nothing for neither) of a
 * trace, complete or up to where the file failed to parse. */
void report_print_tree(FILE *out, const struct tmon_trace *trace,
		       const struct report_options *options);

/* `proftop report --diff OLD NEW`: per function (diff.h), its SELF% and TOTAL% in NEW and how
 * many points each moved since OLD, the largest change first (rows as -O N), a function on one
 * side only marked. */
void report_print_diff(FILE *out, struct snapshot *old, const struct snapshot *new,
		       const struct report_options *options);

/* `proftop report`: read the file, print the table or tree to out, warnings and errors to err
 * (with --diff, both files and their differences). Returns the exit status (0, or 1 on an
 * error). */
int report_run(const struct report_options *options, FILE *out, FILE *err);

#endif
