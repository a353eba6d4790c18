/* options_internal.h — what options.c and options_table.c share of proftop's options (options.h):
 * an option's entry in the table, the lookups in it, and the parsers the table names. Not for other
 * modules. */
#ifndef PROFTOP_OPTIONS_INTERNAL_H
#define PROFTOP_OPTIONS_INTERNAL_H

#include "proftop/options.h"

#include <stdbool.h>

/* Stores the value into o and returns NULL, or a malloc'd message naming the bad value. A flag's
 * parser is given NULL. */
typedef char *option_parser(struct options *o, const char *value);

struct option_spec {
	const char *name;      /* --name, and name= in $PROFTOP */
	char letter;           /* -letter, or 0 */
	const char *arg;       /* the value's name in the docs; NULL: a flag, which takes none */
	option_parser *parse;
	const char *help;      /* --help's text; each '\n' starts a line under the first */
	const char *man;       /* the man page's paragraph, roff */
	bool cli_only;         /* means nothing in $PROFTOP */
};

/* The option whose long name is NAME, or NULL. */
const struct option_spec *options_spec_named(const char *name);

/* argv's options, each given to its parser in turn, through getopt_long's arguments made from the
 * table; the command after them becomes o->argv. NULL, or the first error's message (malloc'd). */
char *options_parse_command_line(struct options *o, int argc, char **argv);

/* One parser per option (options.c), in the table's order. */
option_parser options_set_freq, options_set_duration, options_set_pids, options_set_children,
	options_set_call_graph, options_set_mode, options_set_alloc_rate, options_set_coverage_cap,
	options_set_module, options_set_switch_period,
	options_set_stack_size, options_set_batch, options_set_interval, options_set_theme,
	options_set_names, options_set_window, options_set_history, options_set_collectors,
	options_set_serve, options_set_otlp_endpoint, options_set_otlp_interval,
	options_set_service, options_set_max_memory, options_set_max_rows, options_set_tree,
	options_set_min_percent, options_set_python, options_set_perl, options_set_no_inline, options_set_no_lines,
	options_set_annotate, options_set_asm, options_set_histogram, options_set_kernel,
	options_set_all_cpus, options_set_include_self, options_set_output, options_set_format,
	options_set_per_thread, options_set_input, options_set_baseline, options_set_help,
	options_set_version;

#endif
