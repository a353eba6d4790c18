/* options.c — getopt_long over proftop's options, with every value checked. */
#include "proftop/options.h"

#include "proftop/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_MAX_ROWS = 256,
	OPT_KERNEL,
	OPT_STACK_SIZE,
	OPT_TREE,
	OPT_MIN_PERCENT,
	OPT_WINDOW,
	OPT_PER_THREAD,
};

static const struct option long_options[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "batch", no_argument, NULL, 'b' },
	{ "interval", required_argument, NULL, 'n' },
	{ "pid", required_argument, NULL, 'p' },
	{ "call-graph", required_argument, NULL, 'g' },
	{ "max-rows", required_argument, NULL, OPT_MAX_ROWS },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
	{ "theme", required_argument, NULL, 't' },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "input", required_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

const char *options_help(void)
{
	return "Usage: proftop [options] [--] command [arg...]\n"
	       "       proftop [options] -p PID[,PID...]\n"
	       "\n"
	       "A live sampling profiler: shows where a program's CPU time goes while it runs.\n"
	       "\n"
	       "  -F, --freq HZ          samples per second per thread (default 999, max 100000)\n"
	       "  -d, --duration SEC     stop after SEC seconds (fractions allowed); a launched\n"
	       "                         command is then ended\n"
	       "  -p, --pid PID[,PID...] attach to running processes and all their threads\n"
	       "  -g, --call-graph MODE  dwarf (default: unwind a copy of the user stack with the\n"
	       "                         programs' DWARF CFI), fp (the kernel's frame-pointer\n"
	       "                         callchain) or none (the sampled function only)\n"
	       "      --stack-size BYTES user stack copied per sample for dwarf (default 16384)\n"
	       "  -b, --batch            print tables instead of the interactive screen (implied when\n"
	       "                         stdout is not a terminal)\n"
	       "  -n, --interval SEC     seconds between periodic tables in batch mode (default 1;\n"
	       "                         0 prints only the final table), between screen refreshes\n"
	       "                         otherwise (default 1, at least 0.1)\n"
	       "  -t, --theme NAME|PATH  screen colours: default, light, mono, high-contrast, or a\n"
	       "                         theme file (T cycles themes on the screen)\n"
	       "      --window SEC       seconds of the screen's time window (key w; default 10)\n"
	       "      --max-rows N       rows per table (default 25 periodic, all in the final one)\n"
	       "      --tree             batch mode prints the call tree (top-down) instead\n"
	       "      --min-percent PCT  --tree leaves out nodes under PCT% of samples (default 0.5)\n"
	       "      --kernel           sample kernel mode too (needs perf_event_paranoid <= 1)\n"
	       "  -o, --output FILE      write a snapshot to FILE when profiling ends (- for stdout,\n"
	       "                         tables then go to stderr); SIGUSR1 writes one at any time\n"
	       "  -f, --format FORMAT    tmon (Devel::DProf's tmon.out, the default), callgrind,\n"
	       "                         folded or pprof; without -f, from the file name\n"
	       "      --per-thread       one snapshot file per thread, FILE.TID\n"
	       "  -i, --input FILE       show a saved tmon.out (screen, or the table with -b);\n"
	       "                         with -o, convert it to that file\n"
	       "  -h, --help             show this help\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Launch mode exits with the command's status (128+N if signal N killed it).\n"
	       "Snapshots without -o (SIGUSR1, the screen's s key) go to tmon.out, then tmon.out.1,\n"
	       "... never replacing a file; $PROFTOP_OUT_FILE names the first one.\n"
	       "\n"
	       "       proftop report [-O N] [-T | -t] [-l] [-u | -s | -r] [-F] [FILE]\n"
	       "\n"
	       "prints what dprofpp prints for a tmon.out (default ./tmon.out): the top N (15)\n"
	       "subroutines by exclusive time (-l: by calls), or the call tree (-T; -t folds\n"
	       "repeats), in user+system time (-u user, -s system, -r real); -F closes subs a\n"
	       "truncated file left open.\n";
}

static char *bad(const char *what, const char *value)
{
	return xasprintf("invalid %s: '%s'", what, value);
}

static bool parse_number(const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(v) || v < 0 || v > 1e7)
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

static char *parse_pids(struct options *o, const char *text)
{
	char *copy = xstrdup(text), *save = NULL, *message = NULL;

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
		message = bad("PID list", text);
	free(copy);
	return message;
}

static char *parse_one(struct options *o, int opt, const char *arg)
{
	long value;

	switch (opt) {
	case 'F':
		if (!parse_long(arg, 1, OPTIONS_MAX_FREQ, &value))
			return bad("frequency (1 to 100000 Hz)", arg);
		o->sample.freq = (unsigned)value;
		return NULL;
	case 'd':
		if (!parse_number(arg, &o->run.duration) || o->run.duration == 0)
			return bad("duration (seconds > 0)", arg);
		return NULL;
	case 'n':
		if (!parse_number(arg, &o->run.interval))
			return bad("interval (seconds >= 0)", arg);
		return NULL;
	case 'b':
		o->batch_mode = true;
		return NULL;
	case 'p':
		return parse_pids(o, arg);
	case 'g':
		if (!strcmp(arg, "none"))
			o->sample.callgraph = CALLGRAPH_NONE;
		else if (!strcmp(arg, "fp"))
			o->sample.callgraph = CALLGRAPH_FP;
		else if (!strcmp(arg, "dwarf"))
			o->sample.callgraph = CALLGRAPH_DWARF;
		else
			return bad("call-graph mode (dwarf, fp or none)", arg);
		return NULL;
	case OPT_STACK_SIZE:
		/* The kernel wants a multiple of 8, and the record (with registers) must fit its
		 * 16-bit size. */
		if (!parse_long(arg, 64, OPTIONS_MAX_STACK, &value) || value % 8)
			return bad("stack size (a multiple of 8 from 64 to 65000 bytes)", arg);
		o->sample.stack_size = (uint32_t)value;
		return NULL;
	case OPT_TREE:
		o->batch.tree = true;
		return NULL;
	case OPT_MIN_PERCENT:
		if (!parse_number(arg, &o->batch.min_percent) || o->batch.min_percent > 100)
			return bad("percentage (0 to 100)", arg);
		return NULL;
	case 't':
		o->tui.theme = arg;
		return NULL;
	case OPT_WINDOW:
		if (!parse_number(arg, &o->tui.window) || o->tui.window <= 0 ||
		    o->tui.window > OPTIONS_MAX_WINDOW)
			return bad("window (seconds, more than 0 and at most 3600)", arg);
		return NULL;
	case OPT_MAX_ROWS:
		if (!parse_long(arg, 0, LONG_MAX, &o->batch.max_rows))
			return bad("row count", arg);
		return NULL;
	case OPT_KERNEL:
		o->sample.kernel = true;
		return NULL;
	case 'o':
		o->run.export.output = arg;
		return NULL;
	case 'f':
		if (export_format_parse(arg, &o->run.export.format))
			return bad("format (tmon, callgrind, folded or pprof)", arg);
		return NULL;
	case OPT_PER_THREAD:
		o->run.export.per_thread = true;
		return NULL;
	case 'i':
		o->input = arg;
		return NULL;
	case 'h':
		o->help = true;
		return NULL;
	case 'V':
		o->version = true;
		return NULL;
	default:
		return xstrdup("unknown option");
	}
}

/* `proftop report`: dprofpp's letters for what dprofpp's table and trees show. argv[0] is
 * "report". */
static enum options_result parse_report(struct options *o, int argc, char **argv, char **message)
{
	struct report_options *r = &o->report_options;
	int opt;

	o->report = true;
	optind = 0;
	opterr = 0;
	while ((opt = getopt(argc, argv, "O:TtlusrFh")) != -1) {
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
		default:
			*message = optopt == 'O' ? xstrdup("option '-O' needs a value")
						 : xasprintf("unknown report option '-%c'", optopt);
			break;
		}
		if (*message)
			return OPTIONS_USAGE_ERROR;
	}
	if (optind < argc)
		r->path = argv[optind++];
	if (optind < argc) {
		*message = xasprintf("report reads one file, not '%s' too", argv[optind]);
		return OPTIONS_USAGE_ERROR;
	}
	return OPTIONS_OK;
}

/* What -o, -i and --per-thread allow together. */
static char *check_files(const struct options *o)
{
	if (o->run.export.per_thread && o->run.export.output && !strcmp(o->run.export.output, "-"))
		return xstrdup("--per-thread writes one file per thread: give -o a file name, not -");
	if (o->input && (o->argv || o->npids))
		return xstrdup("-i shows a saved profile: give no command and no -p with it");
	return NULL;
}

enum options_result options_parse(struct options *o, int argc, char **argv, char **message)
{
	const char *out_file = getenv("PROFTOP_OUT_FILE");
	int opt;

	memset(o, 0, sizeof(*o));
	o->sample = (struct sample_config){ 999, false, CALLGRAPH_DWARF, OPTIONS_DEFAULT_STACK };
	o->run.interval = 1.0;
	o->batch = (struct batch_options){ -1, false, 0.5 };
	o->tui = (struct tui_options){ TUI_DEFAULT_WINDOW, NULL };
	*message = NULL;
	if (out_file && *out_file)
		o->run.export.base = out_file;
	if (argc > 1 && !strcmp(argv[1], "report"))
		return parse_report(o, argc - 1, argv + 1, message);
	optind = 0; /* reset getopt, also for repeated calls in tests */
	opterr = 0;
	/* '+': stop at the first non-option, so the command's own options stay its own. */
	while ((opt = getopt_long(argc, argv, "+F:d:bn:p:g:t:o:f:i:hV", long_options, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			const char *name = argv[optind - 1];

			if (optopt && strchr("Fdnpgtofi", optopt))
				*message = xasprintf("option '-%c' needs a value", optopt);
			else if (optopt)
				*message = xasprintf("unknown option '-%c'", optopt);
			else
				*message = xasprintf("unknown or incomplete option '%s'", name);
			return OPTIONS_USAGE_ERROR;
		}
		*message = parse_one(o, opt, optarg);
		if (*message)
			return OPTIONS_USAGE_ERROR;
	}
	if (o->help || o->version)
		return OPTIONS_OK;
	if (optind < argc)
		o->argv = argv + optind;
	*message = check_files(o);
	if (*message)
		return OPTIONS_USAGE_ERROR;
	if (o->argv && o->npids)
		*message = xstrdup("give either a command or -p PID, not both");
	else if (!o->argv && !o->npids && !o->input)
		*message = xstrdup("no command to profile and no -p PID");
	return *message ? OPTIONS_USAGE_ERROR : OPTIONS_OK;
}

void options_free(struct options *o)
{
	free(o->pids);
	o->pids = NULL;
}
