/* report.h — `proftop report`: reads a tmon.out (proftop's own, or one Devel::DProf wrote) and
 * prints what dprofpp prints for it: the table of the hottest subroutines, or with -T/-t the call
 * tree, with dprofpp's option letters and the same numbers, down to dprofpp's rounding and column
 * layout. It also turns a tmon.out back into a snapshot, for browsing a saved profile (-i).
 *
 * The parser follows dprofpp's reading of the marks: `+`/`*` entries, `-`/`/` exits (an exit is
 * charged to the sub its mark names, as dprofpp does), `@` time increments, old-style marks with
 * absolute times, and DProf's measured overhead ($over_*) taken off every mark. Malformed input is
 * an error that names the line; nothing from the file is ever evaluated. */
#ifndef PROFTOP_REPORT_H
#define PROFTOP_REPORT_H

#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum report_time {
	REPORT_USER_SYSTEM,   /* the default */
	REPORT_USER,          /* -u */
	REPORT_SYSTEM,        /* -s */
	REPORT_REAL,          /* -r */
};

struct report_options {
	const char *path;     /* the file; dprofpp's default is tmon.out */
	long rows;            /* -O N: rows of the table; 0 means 15 and a negative number all */
	bool tree;            /* -T: every sub entry, indented by depth */
	bool compact_tree;    /* -t: the same, repeated calls folded into "name (Nx)" */
	bool by_calls;        /* -l: sort by #Calls instead of exclusive time */
	enum report_time time;
	bool fake_exits;      /* -F: close subs still open at the end instead of failing */
	int columns;          /* terminal width, for the Name column as dprofpp widens it (0: 80) */
};

struct report;

/* Parse a whole file held in data. With -T/-t in options, the tree is printed to tree_out while
 * parsing, as dprofpp does. Returns 0 with *report, or -EINVAL with a malloc'd *message that starts
 * with "line N: ". */
int report_parse(const char *data, size_t len, const struct report_options *options,
		 FILE *tree_out, struct report **report, char **message);
/* Read and parse options->path. Errors as report_parse's, prefixed with the file name. */
int report_read(const struct report_options *options, FILE *tree_out, struct report **report,
		char **message);
void report_free(struct report *report);

/* What dprofpp warns about on stderr ("Faking 2 exit timestamp(s).", unbalanced calls); "" when
 * nothing. Belongs to the report. */
const char *report_warnings(const struct report *report);
/* dprofpp's table. */
void report_print(FILE *out, const struct report *report, const struct report_options *options);

/* The profile in the file as a snapshot of its own: one thread, a node's self samples its
 * exclusive ticks (user+system, before any overhead is taken off), freq the file's $hz, the
 * header's times and proftop's counters when the file has them. */
struct snapshot *report_snapshot(const struct report *report);

/* `proftop report`: parse, print the table or tree to out, warnings and errors to err. Returns the
 * exit status (0, or 1 on an error). */
int report_run(const struct report_options *options, FILE *out, FILE *err);

#endif
