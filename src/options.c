/* options.c — proftop's options: each value's parser, $PROFTOP, and options_parse().
 *
 * options_table.c's table says everything about each option once: its long and short names, its
 * value's name, the parser here that checks and stores the value, the --help line and the man
 * page's paragraph. From it come getopt_long's arguments, the names $PROFTOP accepts, the --help
 * list and the option lists of doc/proftop.1 and README.md (`make man` splices them in;
 * test_options fails when they and the table differ), so they cannot drift apart.
 *
 * Parsing is pure: a parser stores into struct options and returns NULL, or a malloc'd message
 * naming the bad value. $PROFTOP is parsed first and the command line after it, so a value given
 * on the command line replaces the environment's. `proftop report` has dprofpp's letters instead
 * (parse_report) and ignores $PROFTOP. */
#include "proftop/options_internal.h"

#include "proftop/collector.h"
#include "proftop/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- values ----------------------------------------------------------------------------------- */

static char *bad(const char *what, const char *value)
{
	return xasprintf("invalid %s: '%s'", what, value);
}

/* A decimal number from 0 to max (strtod's syntax, so "1e3" too; no inf or nan). */
static bool parse_number(const char *text, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(v) || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_long(const char *text, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* --- one parser per option: store the value or say what is wrong with it ---------------------- */

char *options_set_freq(struct options *o, const char *value)
{
	long freq;

	if (!parse_long(value, 1, OPTIONS_MAX_FREQ, &freq))
		return bad("frequency (1 to 100000 Hz)", value);
	o->sample.freq = (unsigned)freq;
	return NULL;
}

char *options_set_duration(struct options *o, const char *value)
{
	if (!parse_number(value, OPTIONS_MAX_SECONDS, &o->run.duration) || o->run.duration == 0)
		return bad("duration (seconds, more than 0 and at most " OPTIONS_MAX_SECONDS_TEXT ")",
			   value);
	return NULL;
}

/* Each -p adds to the list. */
char *options_set_pids(struct options *o, const char *value)
{
	char *copy = xstrdup(value), *save = NULL, *message = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long pid;

		if (!parse_long(tok, 1, INT_MAX, &pid)) {
			message = bad("PID", tok);
			break;
		}
		o->pids = xrealloc(o->pids, (o->npids + 1) * sizeof(*o->pids));
		o->pids[o->npids++] = (pid_t)pid;
	}
	if (!message && !o->npids)
		message = bad("PID list", value);
	free(copy);
	return message;
}

char *options_set_children(struct options *o, const char *value)
{
	(void)value;
	o->children = true;
	return NULL;
}

char *options_set_call_graph(struct options *o, const char *value)
{
	if (!strcmp(value, "none"))
		o->sample.callgraph = CALLGRAPH_NONE;
	else if (!strcmp(value, "fp"))
		o->sample.callgraph = CALLGRAPH_FP;
	else if (!strcmp(value, "dwarf"))
		o->sample.callgraph = CALLGRAPH_DWARF;
	else
		return bad("call-graph mode (dwarf, fp or none)", value);
	return NULL;
}

char *options_set_mode(struct options *o, const char *value)
{
	if (sample_mode_parse(value, &o->sample.mode))
		return NULL;
	return bad("mode (cpu, offcpu, runnable, wall, alloc, inuse, alloc-objects or "
		   "inuse-objects)", value);
}

/* Bytes with an optional K, M or G (powers of 1024) into *bytes (saturating past limit). */
static bool parse_bytes(const char *value, unsigned long long limit, unsigned long long *bytes)
{
	static const char units[] = "KMG";
	char *end;
	unsigned long long n;
	const char *unit;

	errno = 0;
	n = strtoull(value, &end, 10);
	unit = *end ? strchr(units, *end) : NULL;
	if (errno || end == value || *value == '-' || (*end && (!unit || end[1])))
		return false;
	for (const char *u = units; unit && u <= unit; u++)
		n = n > limit ? n : n * 1024;
	*bytes = n;
	return true;
}

/* From 1 byte to 1G. */
char *options_set_alloc_rate(struct options *o, const char *value)
{
	unsigned long long n;

	if (!parse_bytes(value, 1ull << 30, &n))
		return bad("allocation sampling rate (bytes, or a number with K, M or G)", value);
	if (n < 1 || n > (1ull << 30))
		return bad("allocation sampling rate (1 byte to 1G)", value);
	o->sample.alloc_rate = n;
	return NULL;
}

char *options_set_coverage_cap(struct options *o, const char *value)
{
	long n;

	if (!parse_long(value, 0, 1000000000, &n))
		return bad("coverage cap (0 to 1000000000)", value);
	o->sample.coverage_cap = (uint64_t)n;
	o->coverage_cap_set = true;
	return NULL;
}

char *options_set_module(struct options *o, const char *value)
{
	if (!*value || strlen(value) > 4095)
		return bad("module (a file name, or a path)", value);
	o->modules = xrealloc(o->modules, (o->nmodules + 1) * sizeof(*o->modules));
	o->modules[o->nmodules++] = xstrdup(value);
	o->sample.modules = o->modules;
	o->sample.nmodules = o->nmodules;
	return NULL;
}

char *options_set_switch_period(struct options *o, const char *value)
{
	long n;

	if (!parse_long(value, 1, 1000000, &n))
		return bad("switch period (1 to 1000000)", value);
	o->sample.switch_period = (unsigned)n;
	return NULL;
}

/* The kernel wants a multiple of 8, and the record (with registers) must fit its 16-bit size. */
char *options_set_stack_size(struct options *o, const char *value)
{
	long size;

	if (!parse_long(value, 64, OPTIONS_MAX_STACK, &size) || size % 8)
		return bad("stack size (a multiple of 8 from 64 to 65000 bytes)", value);
	o->sample.stack_size = (uint32_t)size;
	return NULL;
}

char *options_set_batch(struct options *o, const char *value)
{
	(void)value;
	o->batch_mode = true;
	return NULL;
}

char *options_set_interval(struct options *o, const char *value)
{
	if (!parse_number(value, OPTIONS_MAX_SECONDS, &o->run.interval))
		return bad("interval (seconds, 0 to " OPTIONS_MAX_SECONDS_TEXT ")", value);
	return NULL;
}

char *options_set_theme(struct options *o, const char *value)
{
	o->tui.theme = value;
	return NULL;
}

char *options_set_names(struct options *o, const char *value)
{
	int names = view_names_parse(value);

	if (names < 0)
		return bad("names (full, short or bare)", value);
	o->tui.names = o->batch.names = (enum view_names)names;
	return NULL;
}

char *options_set_window(struct options *o, const char *value)
{
	if (!parse_number(value, OPTIONS_MAX_WINDOW, &o->tui.window) || o->tui.window <= 0)
		return bad("window (seconds, more than 0 and at most 3600)", value);
	return NULL;
}

char *options_set_history(struct options *o, const char *value)
{
	double seconds;

	if (!parse_number(value, OPTIONS_MAX_HISTORY, &seconds) || seconds != (unsigned)seconds)
		return bad("history (whole seconds, 0 to " OPTIONS_MAX_HISTORY_TEXT ")", value);
	o->history = (unsigned)seconds;
	return NULL;
}

_Static_assert(COLLECTOR_MAX_WORKERS == 64, "OPTIONS_MAX_COLLECTORS_TEXT says 64");

char *options_set_collectors(struct options *o, const char *value)
{
	long n;

	if (!parse_long(value, 1, COLLECTOR_MAX_WORKERS, &n))
		return bad("collector count (1 to " OPTIONS_MAX_COLLECTORS_TEXT ")", value);
	o->sample.collectors = (unsigned)n;
	return NULL;
}

char *options_set_serve(struct options *o, const char *value)
{
	char *message;

	if (serve_parse_address(value, &o->serve, &message))
		return message;
	o->serving = true;
	return NULL;
}

char *options_set_otlp_endpoint(struct options *o, const char *value)
{
	const char *why = otlp_push_check_endpoint(value);

	if (why)
		return xasprintf("invalid OTLP endpoint '%s': %s", value, why);
	o->otlp.endpoint = value;
	return NULL;
}

char *options_set_otlp_interval(struct options *o, const char *value)
{
	long n;

	if (!parse_long(value, 1, OPTIONS_MAX_OTLP_INTERVAL, &n))
		return bad("OTLP push interval (whole seconds, 1 to 86400)", value);
	o->otlp.interval = (unsigned)n;
	return NULL;
}

char *options_set_service(struct options *o, const char *value)
{
	if (!*value || strlen(value) > 255)
		return bad("service name (1 to 255 bytes)", value);
	o->service = o->otlp.service = value;
	return NULL;
}

/* Bytes with an optional K, M or G; 0 is no limit. */
char *options_set_max_memory(struct options *o, const char *value)
{
	unsigned long long n;

	if (!parse_bytes(value, OPTIONS_MAX_MEMORY, &n))
		return bad("memory size (bytes, or a number with K, M or G)", value);
	if (n > OPTIONS_MAX_MEMORY || (n && n < OPTIONS_MIN_MEMORY))
		return bad("memory size (0 for no limit, else 1M to 1024G)", value);
	o->max_memory = (size_t)n;
	return NULL;
}

char *options_set_max_rows(struct options *o, const char *value)
{
	if (!parse_long(value, 0, LONG_MAX, &o->batch.max_rows))
		return bad("row count", value);
	return NULL;
}

char *options_set_tree(struct options *o, const char *value)
{
	(void)value;
	o->batch.tree = true;
	return NULL;
}

char *options_set_min_percent(struct options *o, const char *value)
{
	if (!parse_number(value, 100, &o->batch.min_percent))
		return bad("percentage (0 to 100)", value);
	return NULL;
}

/* mixed, only or off into *out; NULL, or the error. */
static char *interpreter_frames(const char *option, const char *value, enum sample_python *out)
{
	static const char *const names[] = {
		[SAMPLE_PYTHON_MIXED] = "mixed",
		[SAMPLE_PYTHON_ONLY] = "only",
		[SAMPLE_PYTHON_OFF] = "off",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(value, names[i])) {
			*out = (enum sample_python)i;
			return NULL;
		}
	return bad(option, value);
}

char *options_set_python(struct options *o, const char *value)
{
	return interpreter_frames("--python (mixed, only or off)", value, &o->sample.python);
}

char *options_set_perl(struct options *o, const char *value)
{
	return interpreter_frames("--perl (mixed, only or off)", value, &o->sample.perl);
}

char *options_set_no_inline(struct options *o, const char *value)
{
	(void)value;
	o->no_inline = true;
	return NULL;
}

char *options_set_no_lines(struct options *o, const char *value)
{
	(void)value;
	o->no_lines = true;
	return NULL;
}

char *options_set_annotate(struct options *o, const char *value)
{
	if (!*value)
		return xstrdup("--annotate needs a function name");
	o->batch.annotate = value;
	return NULL;
}

char *options_set_asm(struct options *o, const char *value)
{
	(void)value;
	o->batch.asm_code = true;
	return NULL;
}

char *options_set_histogram(struct options *o, const char *value)
{
	(void)value;
	o->batch.histogram = true;
	return NULL;
}

char *options_set_kernel(struct options *o, const char *value)
{
	(void)value;
	o->sample.kernel = true;
	return NULL;
}

char *options_set_all_cpus(struct options *o, const char *value)
{
	(void)value;
	o->sample.system_wide = true;
	return NULL;
}

char *options_set_include_self(struct options *o, const char *value)
{
	(void)value;
	o->sample.include_self = true;
	return NULL;
}

char *options_set_output(struct options *o, const char *value)
{
	if (!*value)
		return xstrdup("invalid output file '': give a file name, or - for standard output");
	o->run.export.output = value;
	return NULL;
}

char *options_set_format(struct options *o, const char *value)
{
	if (export_format_parse(value, &o->run.export.format))
		return bad("format (tmon, callgrind, folded, pprof, otlp, lcov or speedscope)", value);
	return NULL;
}

char *options_set_per_thread(struct options *o, const char *value)
{
	(void)value;
	o->run.export.per_thread = true;
	return NULL;
}

char *options_set_input(struct options *o, const char *value)
{
	if (!*value)
		return xstrdup("invalid input file '': give a file name, or - for standard input");
	o->input = value;
	return NULL;
}

char *options_set_baseline(struct options *o, const char *value)
{
	if (!*value)
		return xstrdup("invalid baseline file '': give the file name of a saved tmon.out");
	o->baseline = value;
	return NULL;
}

char *options_set_help(struct options *o, const char *value)
{
	(void)value;
	o->help = true;
	return NULL;
}

char *options_set_version(struct options *o, const char *value)
{
	(void)value;
	o->version = true;
	return NULL;
}

/* --- $PROFTOP --------------------------------------------------------------------------------- */

/* name=value:name=value, the rule of Devel::NYTProf's $NYTPROF: a backslash makes the next
 * character literal (so "\:", "\=" and "\\" in a value); an unescaped ':' ends an entry, the first
 * unescaped '=' ends its name, and a second one is an error. Empty entries are skipped. A flag is
 * given alone or as name=1 or name=yes; there is no way to turn one off, as on the command line.
 * The entries are unescaped in place in one copy of the variable, options->env_values, which the
 * values point into. */

/* How long the entry at s is: up to the first ':' no backslash escapes. */
static size_t env_entry_length(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ':')
		n += s[n] == '\\' && s[n + 1] ? 2 : 1;
	return n;
}

/* Unescape the entry of N bytes at s in place, ending its name (s) and its value (*value, NULL
 * when there is no '=') with a NUL; the byte after the entry may be overwritten. */
static char *env_entry_split(char *s, size_t n, char **value)
{
	char *w = s;

	*value = NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			if (++i == n)
				return xstrdup("nothing after '\\'");
			*w++ = s[i];
		} else if (s[i] == '=' && *value) {
			return xstrdup("a second '=' (write \\= for one in a value)");
		} else if (s[i] == '=') {
			*w++ = '\0';
			*value = w;
		} else {
			*w++ = s[i];
		}
	}
	*w = '\0';
	return NULL;
}

static char *env_apply(struct options *o, const char *name, const char *value)
{
	const struct option_spec *s = options_spec_named(name);

	if (!s)
		return xasprintf("unknown option '%s'", name);
	if (s->cli_only)
		return xasprintf("option '%s' not allowed (command line only)", name);
	if (!s->arg && value && strcmp(value, "1") && strcmp(value, "yes"))
		return bad("flag value (none, 1 or yes)", value);
	if (s->arg && !value)
		return xasprintf("option '%s' needs a value", name);
	return s->parse(o, s->arg ? value : NULL);
}

/* Apply $PROFTOP's entries in order; the first bad one is a message naming it. */
static char *parse_env(struct options *o, const char *env)
{
	if (!env || !*env)
		return NULL;
	o->env_values = xstrdup(env);
	for (size_t at = 0, n; env[at]; at += n + (env[at + n] == ':')) {
		char *value, *message;

		n = env_entry_length(env + at);
		if (!n)
			continue;
		message = env_entry_split(o->env_values + at, n, &value);
		if (!message)
			message = env_apply(o, o->env_values + at, value);
		if (message) {
			char *named = xasprintf("PROFTOP: %s in '%.*s'", message, (int)n, env + at);

			free(message);
			return named;
		}
	}
	return NULL;
}

/* --- options_parse ---------------------------------------------------------------------------- */

/* What to profile: a command, -p or -i. */
struct target_choice {
	pid_t *pids;
	size_t npids;
	const char *input;
};

/* $PROFTOP's pid= and input= name the target only when the command line names none: they are
 * set aside while it is parsed (so -p starts a list of its own), then put back or dropped. */
static struct target_choice target_set_aside(struct options *o)
{
	struct target_choice t = { o->pids, o->npids, o->input };

	o->pids = NULL;
	o->npids = 0;
	o->input = NULL;
	return t;
}

static void target_settle(struct options *o, struct target_choice *env)
{
	if (o->argv || o->npids || o->input) {
		free(env->pids);
		return;
	}
	free(o->pids);
	o->pids = env->pids;
	o->npids = env->npids;
	o->input = env->input;
}

/* What the target and the files allow together. */
static char *check_target(const struct options *o)
{
	if (o->run.export.per_thread && o->run.export.output && !strcmp(o->run.export.output, "-"))
		return xstrdup("--per-thread writes one file per thread: give -o a file name, not -");
	if (o->input && (o->argv || o->npids))
		return xstrdup("-i shows a saved profile: give no command and no -p with it");
	if (o->argv && o->npids)
		return xstrdup("give either a command or -p PID, not both");
	if (o->input && o->serving)
		return xstrdup("--serve serves the profile of a run: not with -i");
	if (o->input && o->otlp.endpoint)
		return xstrdup("--otlp-endpoint pushes the profile of a run: not with -i");
	if (o->otlp.interval && !o->otlp.endpoint)
		return xstrdup("--otlp-interval says how often to push: it needs --otlp-endpoint");
	if (o->sample.system_wide && (o->argv || o->npids || o->input))
		return xstrdup("-a profiles every process on the machine: give no command, -p or -i "
			       "with it (-d SEC stops it after a while)");
	if (o->sample.include_self && !o->sample.system_wide)
		return xstrdup("--include-self keeps proftop's own process in a profile of every "
			       "process: it goes with -a");
	if (o->sample.system_wide && sample_mode_allocations(o->sample.mode))
		return xasprintf("--mode %s sees allocations through a library preloaded into the "
				 "command proftop starts: not with -a", sample_mode_name(o->sample.mode));
	if (!o->argv && !o->npids && !o->input && !o->sample.system_wide)
		return xstrdup("no command to profile, no -p PID and no -a");
	if (sample_mode_switches(o->sample.mode) && o->sample.callgraph == CALLGRAPH_NONE)
		return xasprintf("--mode %s needs a call graph (-g dwarf or fp): a context switch "
				 "is sampled in the kernel's scheduler, and only the stack says where "
				 "the thread waited", sample_mode_name(o->sample.mode));
	if (sample_mode_allocations(o->sample.mode) && o->npids)
		return xasprintf("--mode %s sees allocations through a library preloaded into the "
				 "command proftop starts: a running process (-p) cannot have it "
				 "loaded; start the program under proftop", sample_mode_name(o->sample.mode));
	if (sample_mode_allocations(o->sample.mode) && o->sample.kernel)
		return xstrdup("--kernel samples the kernel's CPU time: not in an allocation mode");
	if (sample_mode_allocations(o->sample.mode) && !o->input &&
	    (o->run.export.format == EXPORT_TMON ||
	     (o->run.export.format == EXPORT_AUTO && o->run.export.output &&
	      export_format_of_path(o->run.export.output) == EXPORT_TMON)))
		return xstrdup(EXPORT_TMON_NO_ALLOCATIONS);
	if (o->children && !o->npids)
		return xstrdup("--children follows the processes that -p's started before the "
			       "attach: it needs -p (a command's and -a's are all followed already)");
	if (o->sample.alloc_rate && !sample_mode_allocations(o->sample.mode))
		return xstrdup("--alloc-rate sets how often allocations are sampled: it needs "
			       "--mode alloc");
	if (o->sample.mode == SAMPLE_MODE_COVERAGE && o->sample.system_wide)
		return xstrdup("--mode coverage probes the lines of a command's or -p's processes: "
			       "not with -a");
	if (o->sample.mode == SAMPLE_MODE_COVERAGE && o->sample.kernel)
		return xstrdup("--kernel samples the kernel's CPU time: not in coverage mode");
	if (o->sample.mode == SAMPLE_MODE_COVERAGE && !o->input &&
	    (o->run.export.format == EXPORT_TMON ||
	     (o->run.export.format == EXPORT_AUTO && o->run.export.output &&
	      export_format_of_path(o->run.export.output) == EXPORT_TMON)))
		return xstrdup("tmon.out holds the time spent in subs: a coverage run's executions "
			       "go to lcov (-f lcov, a .info file), callgrind, folded or pprof");
	if (o->run.export.per_thread &&
	    (o->run.export.format == EXPORT_LCOV ||
	     (o->run.export.format == EXPORT_AUTO && o->run.export.output &&
	      export_format_of_path(o->run.export.output) == EXPORT_LCOV)))
		return xstrdup("--per-thread: an lcov tracefile holds the whole run's lines, not a "
			       "thread's");
	if ((o->coverage_cap_set || o->nmodules) && o->sample.mode != SAMPLE_MODE_COVERAGE)
		return xasprintf("--%s is of coverage: it needs --mode coverage",
				 o->nmodules ? "module" : "coverage-cap");
	if (o->sample.switch_period > 1 && !sample_mode_switches(o->sample.mode))
		return xstrdup("--switch-period thins out context switches: it needs --mode offcpu, "
			       "runnable or wall");
	if (o->no_lines && (o->batch.annotate || o->batch.histogram))
		return xasprintf("--%s needs the per-address counts --no-lines turns off",
				 o->batch.annotate ? "annotate" : "histogram");
	return NULL;
}

static void options_defaults(struct options *o)
{
	const char *out_file = getenv("PROFTOP_OUT_FILE");

	memset(o, 0, sizeof(*o));
	o->sample = (struct sample_config){ 999, false, CALLGRAPH_DWARF, OPTIONS_DEFAULT_STACK };
	o->sample.coverage_cap = OPTIONS_DEFAULT_COVERAGE_CAP;
	o->run.interval = 1.0;
	o->max_memory = OPTIONS_DEFAULT_MAX_MEMORY;
	o->history = OPTIONS_DEFAULT_HISTORY;
	o->batch = (struct batch_options){ -1, false, 0.5 };
	o->tui = (struct tui_options){ TUI_DEFAULT_WINDOW, NULL };
	if (out_file && *out_file)
		o->run.export.base = out_file;
}

/* `proftop report`: dprofpp's letters for what dprofpp's table and trees show. argv[0] is
 * "report". */
static enum options_result parse_report(struct options *o, int argc, char **argv, char **message)
{
	static const struct option long_options[] = {
		{ "diff", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_options *r = &o->report_options;
	bool diff = false;
	int opt;

	o->report = true;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "O:TtIlusrFh", long_options, NULL)) != -1) {
		switch (opt) {
		case 'O':
			if (!parse_long(optarg, LONG_MIN, LONG_MAX, &r->rows))
				*message = bad("count for -O", optarg);
			break;
		case 'T':
			r->tree = true;
			break;
		case 't':
			r->compact_tree = true;
			break;
		case 'I':
			r->inclusive = true;
			break;
		case 'l':
			r->by_calls = true;
			break;
		case 'u':
			r->read.clock = TMON_USER;
			break;
		case 's':
			r->read.clock = TMON_SYSTEM;
			break;
		case 'r':
			r->read.clock = TMON_REAL;
			break;
		case 'F':
			r->read.fake_exits = true;
			break;
		case 'h':
			o->help = true;
			break;
		case 'D':
			diff = true;
			break;
		default:
			*message = optopt == 'O' ? xstrdup("option '-O' needs a value")
				   : optopt ? xasprintf("unknown report option '-%c'", optopt)
					    : xasprintf("unknown report option '%s'", argv[optind - 1]);
			break;
		}
		if (*message)
			return OPTIONS_USAGE_ERROR;
	}
	if (diff && (r->tree || r->compact_tree || r->by_calls || r->inclusive ||
		     r->read.clock != TMON_USER_SYSTEM)) {
		*message = xstrdup("report --diff compares the shares of the samples in the call "
				   "trees: -T, -t, -I, -l, -u, -s and -r do not apply");
		return OPTIONS_USAGE_ERROR;
	}
	if (diff && argc - optind != 2 && !o->help) {
		*message = xstrdup("report --diff needs two files: the baseline OLD, then NEW");
		return OPTIONS_USAGE_ERROR;
	}
	if (diff && optind < argc)
		r->diff_old = argv[optind++];
	if (optind < argc)
		r->path = argv[optind++];
	if (optind < argc) {
		*message = xasprintf("report reads one file, not '%s' too", argv[optind]);
		return OPTIONS_USAGE_ERROR;
	}
	return OPTIONS_OK;
}

static enum options_result parse_all(struct options *o, int argc, char **argv, const char *env,
				     char **message)
{
	struct target_choice from_env;
	char *env_error;

	options_defaults(o);
	*message = NULL;
	if (argc > 1 && !strcmp(argv[1], "report"))
		return parse_report(o, argc - 1, argv + 1, message);
	env_error = parse_env(o, env);
	from_env = target_set_aside(o);
	*message = options_parse_command_line(o, argc, argv);
	target_settle(o, &from_env);
	/* --help and --version work whatever $PROFTOP holds: the usage error's hint is --help. */
	if (!*message && (o->help || o->version)) {
		free(env_error);
		return OPTIONS_OK;
	}
	if (env_error) {
		free(*message);
		*message = env_error;
	}
	if (!*message)
		*message = check_target(o);
	return *message ? OPTIONS_USAGE_ERROR : OPTIONS_OK;
}

/* message, which quotes what was typed or set in $PROFTOP, in visible form (util.h): an escape
 * sequence in a value must show, not act on the terminal that reads the message. */
static char *visible_message(char *message)
{
	char *buf = NULL;
	size_t cap = 0;

	if (!message || util_visible_str(message, &buf, &cap) == message)
		return message;
	free(message);
	return buf;
}

enum options_result options_parse(struct options *o, int argc, char **argv, const char *env,
				  char **message)
{
	enum options_result r = parse_all(o, argc, argv, env, message);

	*message = visible_message(*message);
	return r;
}

void options_free(struct options *o)
{
	for (size_t i = 0; i < o->nmodules; i++)
		free(o->modules[i]);
	free(o->modules);
	o->modules = NULL;
	o->nmodules = 0;
	o->sample.modules = NULL;
	o->sample.nmodules = 0;
	free(o->pids);
	o->pids = NULL;
	free(o->env_values);
	o->env_values = NULL;
}
