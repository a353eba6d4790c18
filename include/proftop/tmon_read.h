/* tmon_read.h — a tmon.out read back (proftop's own, or one Devel::DProf wrote): the counterpart
 * of export_tmon.c. The bytes become a struct tmon, which holds dprofpp's sums per sub (what
 * `proftop report` prints) and a call tree of raw ticks, which becomes a snapshot (what
 * `proftop -i` shows). Nothing here prints.
 *
 * The parser follows dprofpp's reading of the marks: `+`/`*` entries, `-`/`/` exits (an exit is
 * charged to the sub its mark names, as dprofpp does), `@` time increments, old-style marks with
 * absolute times, and DProf's measured overhead ($over_*) taken off every mark. Malformed input is
 * an error that names the line; nothing from the file is ever evaluated. */
#ifndef PROFTOP_TMON_READ_H
#define PROFTOP_TMON_READ_H

#include "proftop/counters.h"
#include "proftop/snapshot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strpool;

/* The times dprofpp's sums are made of. */
enum tmon_clock {
	TMON_USER_SYSTEM,     /* the default */
	TMON_USER,            /* dprofpp -u */
	TMON_SYSTEM,          /* dprofpp -s */
	TMON_REAL,            /* dprofpp -r */
};

/* What dprofpp's sums depend on. The zero value is dprofpp's default. */
struct tmon_read_options {
	enum tmon_clock clock;
	bool fake_exits;      /* dprofpp -F: close subs still open at the end instead of failing */
};

/* A sub, as dprofpp sums it. */
struct tmon_func {
	const char *full;       /* "package::name", as the marks name it */
	const char *package;    /* from its & line; NULL: split full at its last "::" */
	const char *name;
	uint64_t calls;         /* #Calls: its entries */
	double times, ctimes;   /* exclusive and cumulative, in ticks of the chosen clock */
	int64_t outer;          /* activations left open (dprofpp's %outer; warned about) */
	bool listed;            /* entered at least once: dprofpp shows it */
};

/* A call path of the raw-tick tree. */
struct tmon_node {
	uint32_t func, parent;
	double self;            /* raw ticks spent here, less the callees' */
};

/* A tmon.out, read. Owns everything it points to. */
struct tmon {
	double hz;              /* $hz: ticks per second, above 0 */
	double rrun[3];         /* $rrun_utime, $rrun_stime, $rrun_rtime: the run's ticks */
	double over[3], over_tests;  /* $over_*: DProf's measured overhead (over_tests at least 1) */
	enum tmon_clock clock;  /* the times the sums are made of */
	double overhead;        /* what was taken off over the whole file, in ticks of the clock */
	bool have_counters;     /* the file has proftop's "# proftop: samples ..." comment */
	struct counters counters;
	enum sample_mode mode;  /* proftop's "# proftop: mode offcpu switches N" comment; else cpu */
	uint64_t switches;      /* its N */
	struct tmon_func *funcs;
	size_t nfuncs;
	uint32_t *listed;       /* functions in order of first entry (dprofpp's @idkeys) */
	size_t nlisted;
	struct tmon_node *nodes; /* nodes[0] is the root; parents come before their children */
	size_t nnodes;
	char *warnings;         /* what dprofpp warns about on stderr ("Faking 2 exit timestamp(s).",
				 * unbalanced calls); "" when nothing */
	struct strpool *pool;   /* the names */
};

/* One sub entry: what dprofpp's -T prints as a line, indented by depth. */
struct tmon_entry {
	uint32_t func;          /* an index into names */
	uint32_t depth;         /* subs open around it */
};

/* Every sub entry in the order of the file, recorded when asked for (dprofpp's -T and -t trees).
 * It belongs to the caller, starts zeroed, and keeps what was recorded when the file fails to
 * parse (dprofpp prints the tree up to the line it stops at). */
struct tmon_trace {
	struct tmon_entry *entries;
	size_t nentries, entries_cap;
	char **names;           /* full names by func, NULL for a func never entered: copies, as
				 * the trace outlives the struct tmon of a file that fails */
	size_t nnames;
	bool ended;             /* the marks were read to their end (a file may fail after that) */
};

/* Parse a whole file held in data; with trace (a zeroed one), record every sub entry there too.
 * Returns 0 with *tmon, or -EINVAL with *tmon NULL and a malloc'd *message that starts with
 * "line N: ". A line longer than a MiB is such an error. */
int tmon_read(const char *data, size_t len, const struct tmon_read_options *options,
	      struct tmon_trace *trace, struct tmon **tmon, char **message);
/* Read and parse the file at path ("-": standard input, as dprofpp's open() takes it) a line at
 * a time: nothing past the first line's length is read before it is found to be #fOrTyTwO.
 * Errors as tmon_read's, prefixed with the path, or "cannot read PATH: ..." with the errno of
 * opening or reading it. */
int tmon_read_file(const char *path, const struct tmon_read_options *options,
		   struct tmon_trace *trace, struct tmon **tmon, char **message);
void tmon_free(struct tmon *tmon);
/* Free what trace holds (not trace itself) and zero it. */
void tmon_trace_free(struct tmon_trace *trace);

/* The profile in the file as a snapshot of its own: one thread, a node's self samples its
 * exclusive ticks (user+system, before any overhead is taken off), freq the file's $hz, the
 * header's times and proftop's counters when the file has them. */
struct snapshot *tmon_snapshot(const struct tmon *tmon);

#endif
