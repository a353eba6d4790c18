/* options.h — the command line and $PROFTOP, parsed and checked by one table of options, which also
 * writes --help and the option lists of the man page and README. Parsing is pure: it prints
 * nothing and exits nothing, so it is unit-tested directly. */
#ifndef PROFTOP_OPTIONS_H
#define PROFTOP_OPTIONS_H

#include "proftop/ui/batch.h"
#include "proftop/export.h"
#include "proftop/otlp_push.h"
#include "proftop/report.h"
#include "proftop/sample.h"
#include "proftop/serve.h"
#include "proftop/session.h"
#include "proftop/ui/tui.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct options {
	struct sample_config sample;
	struct run_options run;  /* -d, -n; -o, -f, --per-thread (base from $PROFTOP_OUT_FILE) */
	struct batch_options batch;
	struct tui_options tui;
	size_t max_memory;     /* --max-memory: bytes for the call trees and DWARF (0: no limit) */
	unsigned history;      /* --history: seconds of the screen's timeline (0: none) */
	struct serve_address serve; /* --serve, when serving */
	bool serving;
	struct otlp_push_options otlp; /* --otlp-endpoint (NULL: no pushing), --otlp-interval */
	const char *service;   /* --service: service.name of OTLP profiles (NULL: the command's) */
	bool no_inline;        /* --no-inline */
	bool no_lines;         /* --no-lines */
	bool batch_mode;
	bool help, version;
	pid_t *pids;           /* -p; malloc'd */
	char **modules;        /* --module; malloc'd (sample.modules points here) */
	size_t nmodules;
	size_t npids;
	bool coverage_cap_set; /* --coverage-cap was given */
	bool children;         /* -C: -p's processes' children started before the attach too */
	char **argv;           /* the command (points into the argv given to options_parse) */
	const char *input;     /* -i FILE: show a saved tmon.out instead of profiling */
	const char *baseline;  /* --baseline FILE: a saved tmon.out to compare with */
	bool report;           /* `proftop report [options] [FILE]`: report_options below */
	struct report_options report_options;
	char *env_values;      /* $PROFTOP unescaped: string options from it point in here */
};

#define OPTIONS_MAX_FREQ 100000
#define OPTIONS_MAX_WINDOW 3600
#define OPTIONS_DEFAULT_HISTORY 600
/* --coverage-cap's default: a hot line costs at most this many traps (a few ms). */
#define OPTIONS_DEFAULT_COVERAGE_CAP 1000
#define OPTIONS_MAX_HISTORY 86400
#define OPTIONS_MAX_OTLP_INTERVAL 86400
#define OPTIONS_MAX_HISTORY_TEXT "86400"
/* COLLECTOR_MAX_WORKERS, as text for the messages */
#define OPTIONS_MAX_COLLECTORS_TEXT "64"
/* -d and -n: 115 days, far past any run, and in ns still far from overflowing a uint64_t. */
#define OPTIONS_MAX_SECONDS 10000000
#define OPTIONS_MAX_SECONDS_TEXT "10000000"
#define OPTIONS_DEFAULT_STACK 16384
#define OPTIONS_MAX_STACK 65000
#define OPTIONS_DEFAULT_MAX_MEMORY (32ull << 20)
#define OPTIONS_MIN_MEMORY (1ull << 20)
#define OPTIONS_MAX_MEMORY (1ull << 40)

enum options_result {
	OPTIONS_OK,
	OPTIONS_USAGE_ERROR,   /* message says what was wrong; exit 2 */
};

/* Parse ENV, the value of $PROFTOP (name=value:name=value; NULL or "" for none), then argv, whose
 * values replace ENV's. On a usage error, *message (malloc'd) names the problem; a bad $PROFTOP
 * entry is named with it. What it quotes is in visible form (util.h), ready for a terminal.
 * options_free() also after an error. */
enum options_result options_parse(struct options *options, int argc, char **argv, const char *env,
				  char **message);
void options_free(struct options *options);

/* --help: the usage lines, the option list and what follows it. */
void options_write_help(FILE *out);
/* The option list as doc/proftop.1 (roff .TP paragraphs) and README.md (--help's list as a
 * Markdown code block) hold it between their "options: begin" and "options: end" comments. */
void options_write_man(FILE *out);
void options_write_markdown(FILE *out);
/* The long name of the table's I-th option, NULL past the last. */
const char *options_name(size_t i);

#endif
