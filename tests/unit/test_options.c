/* Unit tests of option parsing: the command line, $PROFTOP, and the docs made from the table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/export.h"
#include "proftop/options.h"
#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum options_result vparse(struct options *o, char **message, const char *env, int argc,
				  va_list ap)
{
	static char *argv[32];

	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	argv[argc] = NULL;
	return options_parse(o, argc, argv, env, message);
}

/* options_parse() of the ARGC arguments that follow, without $PROFTOP. */
static enum options_result parse(struct options *o, char **message, int argc, ...)
{
	enum options_result r;
	va_list ap;

	va_start(ap, argc);
	r = vparse(o, message, NULL, argc, ap);
	va_end(ap);
	return r;
}

/* The same with $PROFTOP set to ENV. */
static enum options_result parse_env(struct options *o, char **message, const char *env, int argc,
				     ...)
{
	enum options_result r;
	va_list ap;

	va_start(ap, argc);
	r = vparse(o, message, env, argc, ap);
	va_end(ap);
	return r;
}

static void defaults_and_command(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse(&o, &msg, 4, "proftop", "./prog", "-F", "5"), OPTIONS_OK);
	assert_int_equal(o.sample.freq, 999);
	assert_string_equal(o.argv[0], "./prog");
	assert_string_equal(o.argv[1], "-F"); /* the command's own options stay its own */
	assert_true(o.run.interval == 1.0);
	assert_int_equal(o.batch.max_rows, -1);
	options_free(&o);
}

static void values(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse(&o, &msg, 10, "proftop", "-F", "200", "-d", "1.5", "--max-rows", "3",
			       "-g", "fp", "-p") ,
			 OPTIONS_USAGE_ERROR); /* -p without its value */
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 11, "proftop", "-F", "200", "-d", "1.5", "--max-rows", "3",
			       "-g", "fp", "-p", "12,34"),
			 OPTIONS_OK);
	assert_int_equal(o.sample.freq, 200);
	assert_true(o.run.duration == 1.5);
	assert_int_equal(o.batch.max_rows, 3);
	assert_int_equal(o.sample.callgraph, CALLGRAPH_FP);
	assert_int_equal(o.npids, 2);
	assert_int_equal(o.pids[1], 34);
	options_free(&o);
	/* Every mode by its name; all but cpu sample the context switches. */
	static const char *const modes[] = { "cpu", "offcpu", "runnable", "wall" };

	for (int m = 0; m < 4; m++) {
		assert_int_equal(parse(&o, &msg, 4, "proftop", "--mode", modes[m], "cmd"), OPTIONS_OK);
		assert_int_equal(o.sample.mode, m);
		assert_string_equal(sample_mode_name(o.sample.mode), modes[m]);
		assert_int_equal(sample_mode_switches(o.sample.mode), m != SAMPLE_MODE_CPU);
		options_free(&o);
	}
}

static void usage_errors(void **state)
{
	(void)state;
	static const char *const bad[][4] = {
		{ "-F", "0", "x", NULL },      { "-F", "abc", "x", NULL },  { "-F", "100001", "x", NULL },
		{ "-d", "-1", "x", NULL },     { "-d", "nan", "x", NULL },  { "-d", "0", "x", NULL },
		{ "-p", "abc", NULL, NULL },   { "-p", "0", NULL, NULL },   { "-p", "1,,x", NULL, NULL },
		{ "--bogus", "x", NULL, NULL }, { "-g", "lbr", "x", NULL }, { "-n", "1s", "x", NULL },
		{ "-p", "1", "cmd", NULL },    { "-b", NULL, NULL, NULL },
		{ "-C", "cmd", NULL, NULL },   { "-C", "-a", NULL, NULL },
		{ "--children", "-i", "t.tmon", NULL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[6] = { "proftop" };
		int argc = 1;
		struct options o;
		char *msg = NULL;

		for (int j = 0; j < 4 && bad[i][j]; j++)
			argv[argc++] = (char *)bad[i][j];
		argv[argc] = NULL;
		assert_int_equal(options_parse(&o, argc, argv, NULL, &msg), OPTIONS_USAGE_ERROR);
		assert_non_null(msg);
		free(msg);
		options_free(&o);
	}
}

/* A number past an option's limit is refused with the limit in the message (-d 1e300 once said
 * only "seconds > 0"); the limit itself is accepted. */
static void number_limits(void **state)
{
	(void)state;
	static const char *const cases[][3] = {
		{ "-d", "1e300", "invalid duration (seconds, more than 0 and at most 10000000): '1e300'" },
		{ "-d", "10000001", "invalid duration (seconds, more than 0 and at most 10000000): "
				    "'10000001'" },
		{ "-d", "inf", "invalid duration (seconds, more than 0 and at most 10000000): 'inf'" },
		{ "-n", "1e300", "invalid interval (seconds, 0 to 10000000): '1e300'" },
		{ "--window", "1e300", "invalid window (seconds, more than 0 and at most 3600): '1e300'" },
		{ "--min-percent", "101", "invalid percentage (0 to 100): '101'" },
	};
	struct options o;
	char *msg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(&o, &msg, 4, "proftop", cases[i][0], cases[i][1], "./prog"),
				 OPTIONS_USAGE_ERROR);
		assert_string_equal(msg, cases[i][2]);
		free(msg);
		options_free(&o);
	}
	assert_int_equal(parse(&o, &msg, 6, "proftop", "-d", "1e7", "-n", "10000000", "./prog"),
			 OPTIONS_OK);
	assert_true(o.run.duration == 1e7 && o.run.interval == 1e7);
	options_free(&o);
}

static void help_and_version(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse(&o, &msg, 2, "proftop", "--help"), OPTIONS_OK);
	assert_true(o.help);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 2, "proftop", "-V"), OPTIONS_OK);
	assert_true(o.version);
	options_free(&o);
}

static void screen_options(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse(&o, &msg, 2, "proftop", "./prog"), OPTIONS_OK);
	assert_null(o.tui.theme);
	assert_true(o.tui.window == TUI_DEFAULT_WINDOW);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 6, "proftop", "-t", "light", "--window", "2.5", "./prog"),
			 OPTIONS_OK);
	assert_string_equal(o.tui.theme, "light");
	assert_true(o.tui.window == 2.5);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "--theme=themes/mono.theme", "-p", "1"),
			 OPTIONS_OK);
	assert_string_equal(o.tui.theme, "themes/mono.theme");
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "--window", "0", "./prog"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "invalid window (seconds, more than 0 and at most 3600): '0'");
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 2, "proftop", "-t"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "option '-t' needs a value");
	free(msg);
	options_free(&o);
}

static void snapshot_options(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	unsetenv("PROFTOP_OUT_FILE");
	assert_int_equal(parse(&o, &msg, 2, "proftop", "./prog"), OPTIONS_OK);
	assert_null(o.run.export.output);
	assert_null(o.run.export.base);
	assert_int_equal(o.run.export.format, EXPORT_AUTO);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 7, "proftop", "-o", "cpu.out", "-f", "pprof", "--per-thread",
			       "./prog"), OPTIONS_OK);
	assert_string_equal(o.run.export.output, "cpu.out");
	assert_int_equal(o.run.export.format, EXPORT_PPROF);
	assert_true(o.run.export.per_thread);
	options_free(&o);
	setenv("PROFTOP_OUT_FILE", "snap.folded", 1);
	assert_int_equal(parse(&o, &msg, 3, "proftop", "--input=t.out", "-b"), OPTIONS_OK);
	assert_string_equal(o.input, "t.out");
	assert_string_equal(o.run.export.base, "snap.folded");
	assert_null(o.argv);
	options_free(&o);
	unsetenv("PROFTOP_OUT_FILE");

	assert_int_equal(parse(&o, &msg, 4, "proftop", "-f", "json", "./prog"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "invalid format (tmon, callgrind, folded, pprof, otlp, lcov or speedscope): 'json'");
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 5, "proftop", "--per-thread", "-o", "-", "./prog"),
			 OPTIONS_USAGE_ERROR);
	assert_non_null(strstr(msg, "--per-thread"));
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "-i", "t.out", "./prog"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "-i shows a saved profile: give no command and no -p with it");
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 5, "proftop", "--no-lines", "--annotate", "f", "./prog"),
			 OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "--annotate needs the per-address counts --no-lines turns off");
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "--histogram", "--no-lines", "./prog"),
			 OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "--histogram needs the per-address counts --no-lines turns off");
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 2, "proftop", "-o"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "option '-o' needs a value");
	free(msg);
	options_free(&o);
}

static void report_options(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse(&o, &msg, 2, "proftop", "report"), OPTIONS_OK);
	assert_true(o.report);
	assert_null(o.report_options.path);
	assert_int_equal(o.report_options.rows, 0);
	assert_int_equal(o.report_options.read.clock, TMON_USER_SYSTEM);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 9, "proftop", "report", "-O", "-1", "-T", "-l", "-r", "-F",
			       "x.out"), OPTIONS_OK);
	assert_int_equal(o.report_options.rows, -1);
	assert_true(o.report_options.tree && o.report_options.by_calls &&
		    o.report_options.read.fake_exits);
	assert_int_equal(o.report_options.read.clock, TMON_REAL);
	assert_string_equal(o.report_options.path, "x.out");
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "report", "x.out", "-u"), OPTIONS_OK);
	assert_int_equal(o.report_options.read.clock, TMON_USER);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 3, "proftop", "report", "-q"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "unknown report option '-q'");
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "report", "a", "b"), OPTIONS_USAGE_ERROR);
	free(msg);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "report", "-O", "many"), OPTIONS_USAGE_ERROR);
	assert_string_equal(msg, "invalid count for -O: 'many'");
	free(msg);
	options_free(&o);
	/* A command named "report" still runs after "--". */
	assert_int_equal(parse(&o, &msg, 3, "proftop", "--", "report"), OPTIONS_OK);
	assert_false(o.report);
	assert_string_equal(o.argv[0], "report");
	options_free(&o);
}

/* --- getopt's own errors, worded from the table ----------------------------------------------- */

static void expect_usage_error(int argc, char **argv, const char *env, const char *want)
{
	struct options o;
	char *msg = NULL;

	assert_int_equal(options_parse(&o, argc, argv, env, &msg), OPTIONS_USAGE_ERROR);
	assert_non_null(msg);
	assert_string_equal(msg, want);
	free(msg);
	options_free(&o);
}

static void command_line_errors(void **state)
{
	(void)state;
	static const char *const cases[][3] = {
		{ "--stack-size", NULL, "option '--stack-size' needs a value" },
		{ "--freq", NULL, "option '--freq' needs a value" },
		{ "-bF", NULL, "option '-F' needs a value" },
		{ "--batch=1", "cmd", "option '--batch' takes no value" },
		{ "-z", "cmd", "unknown option '-z'" },
		{ "--bogus", "cmd", "unknown or incomplete option '--bogus'" },
		{ "--stack-size", "12",
		  "invalid stack size (a multiple of 8 from 64 to 65000 bytes): '12'" },
		{ "-o", "", "invalid output file '': give a file name, or - for standard output" },
		{ "--input", "", "invalid input file '': give a file name, or - for standard input" },
		{ "--mode", "idle", "invalid mode (cpu, offcpu, runnable, wall, alloc, inuse, "
				    "alloc-objects or inuse-objects): 'idle'" },
		{ "--alloc-rate", "0", "invalid allocation sampling rate (1 byte to 1G): '0'" },
		{ "--alloc-rate", "2G", "invalid allocation sampling rate (1 byte to 1G): '2G'" },
		{ "--coverage-cap", "-1", "invalid coverage cap (0 to 1000000000): '-1'" },
		{ "--coverage-cap", "2000000000", "invalid coverage cap (0 to 1000000000): '2000000000'" },
		{ "--module", "", "invalid module (a file name, or a path): ''" },
		{ "--switch-period", "0", "invalid switch period (1 to 1000000): '0'" },
		{ "--collectors", "0", "invalid collector count (1 to 64): '0'" },
		{ "--collectors", "65", "invalid collector count (1 to 64): '65'" },
		{ "--baseline", "", "invalid baseline file '': give the file name of a saved tmon.out" },
		{ "--otlp-endpoint", "ftp://h", "invalid OTLP endpoint 'ftp://h': a URL that starts "
						 "with http:// or https://" },
		{ "--otlp-endpoint", "http://", "invalid OTLP endpoint 'http://': it names no host" },
		{ "--otlp-endpoint", "http://h /x", "invalid OTLP endpoint 'http://h /x': it holds a "
						    "space or a control character" },
		{ "--otlp-interval", "0", "invalid OTLP push interval (whole seconds, 1 to 86400): '0'" },
		{ "--service", "", "invalid service name (1 to 255 bytes): ''" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "proftop", (char *)cases[i][0], (char *)cases[i][1], NULL };

		expect_usage_error(cases[i][1] ? 3 : 2, argv, NULL, cases[i][2]);
	}
	/* Options that need another. */
	char *offcpu_none[] = { "proftop", "--mode=offcpu", "-g", "none", "cmd", NULL };
	char *period_alone[] = { "proftop", "--switch-period=11", "cmd", NULL };

	expect_usage_error(5, offcpu_none, NULL, "--mode offcpu needs a call graph (-g dwarf or fp): "
			   "a context switch is sampled in the kernel's scheduler, and only the stack "
			   "says where the thread waited");
	expect_usage_error(3, period_alone, NULL, "--switch-period thins out context switches: it "
			   "needs --mode offcpu, runnable or wall");
	char *rate_alone[] = { "proftop", "--alloc-rate=1M", "cmd", NULL };
	char *alloc_pid[] = { "proftop", "--mode=alloc", "-p", "1", NULL };
	char *alloc_tmon[] = { "proftop", "--mode=inuse", "-o", "leaks.out", "cmd", NULL };

	expect_usage_error(3, rate_alone, NULL, "--alloc-rate sets how often allocations are "
			   "sampled: it needs --mode alloc");
	expect_usage_error(4, alloc_pid, NULL, "--mode alloc sees allocations through a library "
			   "preloaded into the command proftop starts: a running process (-p) cannot "
			   "have it loaded; start the program under proftop");
	expect_usage_error(5, alloc_tmon, NULL, EXPORT_TMON_NO_ALLOCATIONS);
	char *interval_alone[] = { "proftop", "--otlp-interval=5", "cmd", NULL };
	char *push_saved[] = { "proftop", "--otlp-endpoint=http://h", "-i", "t.out", NULL };

	expect_usage_error(3, interval_alone, NULL, "--otlp-interval says how often to push: it "
			   "needs --otlp-endpoint");
	expect_usage_error(4, push_saved, NULL, "--otlp-endpoint pushes the profile of a run: not "
			   "with -i");
	char *cap_alone[] = { "proftop", "--coverage-cap=5", "cmd", NULL };
	char *module_alone[] = { "proftop", "--module=libz", "cmd", NULL };
	char *coverage_all[] = { "proftop", "--mode=coverage", "-a", NULL };
	char *coverage_tmon[] = { "proftop", "--mode=coverage", "-o", "tmon.out", "cmd", NULL };

	char *lcov_threads[] = { "proftop", "--mode=coverage", "--per-thread", "-o", "c.info", "cmd",
				 NULL };

	expect_usage_error(6, lcov_threads, NULL, "--per-thread: an lcov tracefile holds the whole "
			   "run's lines, not a thread's");
	expect_usage_error(3, cap_alone, NULL, "--coverage-cap is of coverage: it needs --mode "
			   "coverage");
	expect_usage_error(3, module_alone, NULL, "--module is of coverage: it needs --mode coverage");
	expect_usage_error(3, coverage_all, NULL, "--mode coverage probes the lines of a command's "
			   "or -p's processes: not with -a");
	expect_usage_error(5, coverage_tmon, NULL, "tmon.out holds the time spent in subs: a "
			   "coverage run's executions go to lcov (-f lcov, a .info file), callgrind, "
			   "folded or pprof");

	/* -a is a target of its own. */
	char *all_cmd[] = { "proftop", "-a", "cmd", NULL };
	char *all_pid[] = { "proftop", "-a", "-p", "1", NULL };
	char *all_alloc[] = { "proftop", "-a", "--mode=alloc", NULL };
	char *serve_input[] = { "proftop", "--serve=6060", "-i", "tmon.out", NULL };
	char *bad_serve[] = { "proftop", "--serve=host:6060", "cmd", NULL };
	const char *all_alone = "-a profiles every process on the machine: give no command, -p or "
				"-i with it (-d SEC stops it after a while)";

	expect_usage_error(3, all_cmd, NULL, all_alone);
	expect_usage_error(4, all_pid, NULL, all_alone);
	expect_usage_error(3, all_alloc, NULL, "--mode alloc sees allocations through a library "
			   "preloaded into the command proftop starts: not with -a");
	expect_usage_error(4, serve_input, NULL, "--serve serves the profile of a run: not with -i");
	expect_usage_error(3, bad_serve, NULL, "--serve: 'host:6060' is no [ADDRESS:]PORT (a port 0 "
			   "to 65535, on 127.0.0.1 unless a numeric address is given: 0.0.0.0:6060, "
			   "[::1]:6060)");
}

/* --- $PROFTOP --------------------------------------------------------------------------------- */

static void env_sets_options(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse_env(&o, &msg, "freq=499:batch:theme=mono:max-rows=3:kernel=yes:"
				   "call-graph=fp:output=cpu.folded:tree=1",
				   2, "proftop", "./prog"), OPTIONS_OK);
	assert_int_equal(o.sample.freq, 499);
	assert_true(o.batch_mode && o.batch.tree && o.sample.kernel);
	assert_string_equal(o.tui.theme, "mono");
	assert_int_equal(o.batch.max_rows, 3);
	assert_int_equal(o.sample.callgraph, CALLGRAPH_FP);
	assert_string_equal(o.run.export.output, "cpu.folded");
	assert_string_equal(o.argv[0], "./prog");
	options_free(&o);
	/* A list and a file name name the target when the command line does not. */
	assert_int_equal(parse_env(&o, &msg, "pid=12,34", 1, "proftop"), OPTIONS_OK);
	assert_int_equal(o.npids, 2);
	assert_int_equal(o.pids[1], 34);
	options_free(&o);
	assert_int_equal(parse_env(&o, &msg, "input=saved.tmon", 2, "proftop", "-b"), OPTIONS_OK);
	assert_string_equal(o.input, "saved.tmon");
	options_free(&o);
}

static void command_line_wins(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse_env(&o, &msg, "freq=499:output=a:pid=1", 5, "proftop", "-F", "200",
				   "--output=b", "./prog"), OPTIONS_OK);
	assert_int_equal(o.sample.freq, 200);
	assert_string_equal(o.run.export.output, "b");
	assert_int_equal(o.npids, 0); /* the command replaces pid= */
	assert_null(o.pids);
	options_free(&o);
	/* -p starts a list of its own instead of adding to pid=. */
	assert_int_equal(parse_env(&o, &msg, "pid=1,2", 3, "proftop", "-p", "3"), OPTIONS_OK);
	assert_int_equal(o.npids, 1);
	assert_int_equal(o.pids[0], 3);
	options_free(&o);
	assert_int_equal(parse_env(&o, &msg, "input=x.tmon", 3, "proftop", "-p", "3"), OPTIONS_OK);
	assert_null(o.input);
	options_free(&o);
	assert_int_equal(parse_env(&o, &msg, "pid=4", 3, "proftop", "-i", "x.tmon"), OPTIONS_OK);
	assert_int_equal(o.npids, 0);
	options_free(&o);
}

static void env_escapes(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	/* NYTProf's rule: a backslash makes the next character literal, ':' and '=' and itself
	 * included; it works in names too. */
	assert_int_equal(parse_env(&o, &msg, "theme=a\\:b\\=c\\\\d:out\\put=x\\y", 2, "proftop",
				   "./prog"), OPTIONS_OK);
	assert_string_equal(o.tui.theme, "a:b=c\\d");
	assert_string_equal(o.run.export.output, "xy");
	options_free(&o);
	assert_int_equal(parse_env(&o, &msg, "output=\\:", 2, "proftop", "./prog"), OPTIONS_OK);
	assert_string_equal(o.run.export.output, ":");
	options_free(&o);
	assert_int_equal(parse_env(&o, &msg, "theme=", 2, "proftop", "./prog"), OPTIONS_OK);
	assert_string_equal(o.tui.theme, ""); /* as -t '' */
	options_free(&o);
}

static void env_bad_entries(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "freq=x", "PROFTOP: invalid frequency (1 to 100000 Hz): 'x' in 'freq=x'" },
		{ "batch:frq=3", "PROFTOP: unknown option 'frq' in 'frq=3'" },
		{ "-F=3", "PROFTOP: unknown option '-F' in '-F=3'" },
		{ "F=3", "PROFTOP: unknown option 'F' in 'F=3'" },
		/* what the test harness used to export */
		{ "/bin/proftop", "PROFTOP: unknown option '/bin/proftop' in '/bin/proftop'" },
		{ "freq", "PROFTOP: option 'freq' needs a value in 'freq'" },
		{ "batch=0", "PROFTOP: invalid flag value (none, 1 or yes): '0' in 'batch=0'" },
		{ "tree=no", "PROFTOP: invalid flag value (none, 1 or yes): 'no' in 'tree=no'" },
		{ "help", "PROFTOP: option 'help' not allowed (command line only) in 'help'" },
		{ "version=1",
		  "PROFTOP: option 'version' not allowed (command line only) in 'version=1'" },
		{ "theme=a=b",
		  "PROFTOP: a second '=' (write \\= for one in a value) in 'theme=a=b'" },
		{ "freq=9:theme=a\\", "PROFTOP: nothing after '\\' in 'theme=a\\'" },
		{ "pid=1,x", "PROFTOP: invalid PID: 'x' in 'pid=1,x'" },
		{ "window=0", "PROFTOP: invalid window (seconds, more than 0 and at most 3600): "
			      "'0' in 'window=0'" },
	};
	char *argv[] = { "proftop", "./prog", NULL };
	char *bad_too[] = { "proftop", "-F", "0", "./prog", NULL };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_usage_error(2, argv, cases[i][0], cases[i][1]);
	/* The environment's error is reported before the command line's, which comes after it. */
	expect_usage_error(4, bad_too, "freq=x", cases[0][1]);
}

/* What the user typed comes back visible, never as the escape sequence it holds (util.h's
 * rule): from a value, an option's name, $PROFTOP's names and values, report's options. */
static void errors_show_escapes(void **state)
{
	(void)state;
	static const char *const cli[][3] = {
		{ "-p", "1\033[2J", "invalid PID: '1^[[2J'" },
		{ "-F", "\033]0;title\a", "invalid frequency (1 to 100000 Hz): '^[]0;title^G'" },
		{ "--fr\033[31m", "cmd", "unknown or incomplete option '--fr^[[31m'" },
		{ "-\001", "cmd", "unknown option '-^A'" },
		{ "--mode", "cpu\302\233x", "invalid mode (cpu, offcpu, runnable, wall, alloc, inuse, "
		  "alloc-objects or inuse-objects): 'cpu\\u009bx'" },
		{ "-d", "\377\n", "invalid duration (seconds, more than 0 and at most 10000000): "
		  "'\\xff^J'" },
		{ "--serve", "\033[1m:80", "--serve: '^[[1m:80' is no [ADDRESS:]PORT (a port 0 to "
		  "65535, on 127.0.0.1 unless a numeric address is given: 0.0.0.0:6060, [::1]:6060)" },
	};
	static const char *const env[][2] = {
		{ "freq=\033[31mX", "PROFTOP: invalid frequency (1 to 100000 Hz): '^[[31mX' in "
		  "'freq=^[[31mX'" },
		{ "fr\033[2Jq=1", "PROFTOP: unknown option 'fr^[[2Jq' in 'fr^[[2Jq=1'" },
		{ "batch=\a", "PROFTOP: invalid flag value (none, 1 or yes): '^G' in 'batch=^G'" },
	};
	char *argv[] = { "proftop", "./prog", NULL };
	char *report[] = { "proftop", "report", "-\033", NULL };

	for (size_t i = 0; i < sizeof(cli) / sizeof(cli[0]); i++) {
		char *args[] = { "proftop", (char *)cli[i][0], (char *)cli[i][1], NULL };

		expect_usage_error(3, args, NULL, cli[i][2]);
	}
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		expect_usage_error(2, argv, env[i][0], env[i][1]);
	expect_usage_error(3, report, NULL, "unknown report option '-^['");
}

static void env_empty(void **state)
{
	(void)state;
	static const char *const empty[] = { NULL, "", ":", ":::" };
	struct options o;
	char *msg;

	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		assert_int_equal(parse_env(&o, &msg, empty[i], 2, "proftop", "./prog"), OPTIONS_OK);
		assert_int_equal(o.sample.freq, 999);
		assert_false(o.batch_mode);
		options_free(&o);
	}
	assert_int_equal(parse_env(&o, &msg, ":freq=5::batch:", 2, "proftop", "./prog"),
			 OPTIONS_OK);
	assert_int_equal(o.sample.freq, 5);
	assert_true(o.batch_mode);
	options_free(&o);
}

static void env_flags(void **state)
{
	(void)state;
	static const char *const on[] = { "batch", "batch=1", "batch=yes" };
	struct options o;
	char *msg;

	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		assert_int_equal(parse_env(&o, &msg, on[i], 2, "proftop", "./prog"), OPTIONS_OK);
		assert_true(o.batch_mode);
		options_free(&o);
	}
}

/* --help and --version answer whatever $PROFTOP holds: the usage error's hint points to --help. */
static void env_does_not_block_help(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse_env(&o, &msg, "frq=1", 2, "proftop", "--help"), OPTIONS_OK);
	assert_true(o.help);
	assert_null(msg);
	options_free(&o);
	assert_int_equal(parse_env(&o, &msg, "frq=1", 2, "proftop", "-V"), OPTIONS_OK);
	assert_true(o.version);
	options_free(&o);
	/* `proftop report` has options of its own and ignores $PROFTOP. */
	assert_int_equal(parse_env(&o, &msg, "frq=1", 2, "proftop", "report"), OPTIONS_OK);
	assert_true(o.report);
	options_free(&o);
}

static bool same_string(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_options(const struct options *a, const struct options *b)
{
	const struct export_options *ea = &a->run.export, *eb = &b->run.export;

	return a->sample.freq == b->sample.freq && a->sample.kernel == b->sample.kernel &&
	       a->sample.mode == b->sample.mode && a->sample.switch_period == b->sample.switch_period &&
	       a->sample.alloc_rate == b->sample.alloc_rate &&
	       a->sample.coverage_cap == b->sample.coverage_cap &&
	       a->nmodules == b->nmodules && a->sample.nmodules == b->sample.nmodules &&
	       (!a->nmodules || same_string(a->modules[0], b->modules[0])) &&
	       a->sample.system_wide == b->sample.system_wide &&
	       a->sample.include_self == b->sample.include_self &&
	       a->sample.collectors == b->sample.collectors && a->sample.python == b->sample.python &&
	       a->sample.perl == b->sample.perl &&
	       a->sample.callgraph == b->sample.callgraph &&
	       a->sample.stack_size == b->sample.stack_size && a->run.duration == b->run.duration &&
	       a->run.interval == b->run.interval && same_string(ea->output, eb->output) &&
	       ea->format == eb->format && ea->per_thread == eb->per_thread &&
	       a->batch.max_rows == b->batch.max_rows && a->batch.tree == b->batch.tree &&
	       a->batch.min_percent == b->batch.min_percent && a->tui.window == b->tui.window &&
	       same_string(a->tui.theme, b->tui.theme) && a->batch_mode == b->batch_mode &&
	       a->npids == b->npids && a->children == b->children &&
	       a->max_memory == b->max_memory && a->history == b->history &&
	       a->no_inline == b->no_inline && a->no_lines == b->no_lines &&
	       a->batch.histogram == b->batch.histogram &&
	       same_string(a->batch.annotate, b->batch.annotate) &&
	       a->batch.asm_code == b->batch.asm_code && a->tui.names == b->tui.names &&
	       a->batch.names == b->batch.names &&
	       (!a->npids || !memcmp(a->pids, b->pids, a->npids * sizeof(*a->pids))) &&
	       same_string(a->input, b->input) && same_string(a->baseline, b->baseline) &&
	       a->serving == b->serving && same_string(a->otlp.endpoint, b->otlp.endpoint) &&
	       a->otlp.interval == b->otlp.interval && same_string(a->service, b->service) &&
	       (!a->serving || (a->serve.len == b->serve.len &&
				!memcmp(&a->serve.sa, &b->serve.sa, a->serve.len))) &&
	       !a->argv == !b->argv;
}

/* A value for every option in the table, so a new option needs one here: name=value in $PROFTOP
 * does exactly what --name=value does, and something other than the default. */
static const char *const samples[][2] = {
	{ "freq", "499" },        { "duration", "2.5" },   { "pid", "12,34" },
	{ "children", NULL },     { "all-cpus", NULL },       { "include-self", NULL },
	{ "call-graph", "none" }, { "mode", "offcpu" },   { "switch-period", "10" },
	{ "alloc-rate", "64K" },    { "stack-size", "4096" },
	{ "coverage-cap", "5" },  { "module", "libz" },
	{ "batch", NULL },
	{ "interval", "0" },      { "theme", "light" },    { "window", "5" },  { "names", "bare" },
	{ "history", "120" },     { "serve", "6060" },     { "collectors", "3" },
	{ "otlp-endpoint", "http://127.0.0.1:4318" }, { "otlp-interval", "5" }, { "service", "shop" },
	{ "max-rows", "7" },      { "max-memory", "64M" }, { "tree", NULL },        { "min-percent", "2" },
	{ "annotate", "main" },   { "asm", NULL },          { "histogram", NULL },   { "no-inline", NULL },
	{ "no-lines", NULL },      { "python", "only" }, { "perl", "off" },
	{ "kernel", NULL },       { "output", "cpu.pb.gz" }, { "format", "folded" },
	{ "per-thread", NULL },   { "input", "t.tmon" },   { "baseline", "old.out" },
	{ "help", NULL },
	{ "version", NULL },
};

/* --children goes with -p: on both sides, and in the defaults compared with. */
static void env_same_as_command_line_with_pid(const char *name)
{
	char *cli = xasprintf("--%s", name);
	char *argv_cli[] = { "proftop", cli, "-p", "12", NULL };
	char *argv_env[] = { "proftop", "-p", "12", NULL };
	struct options by_cli, by_env, defaults;
	char *msg;

	assert_int_equal(options_parse(&by_cli, 4, argv_cli, NULL, &msg), OPTIONS_OK);
	assert_int_equal(options_parse(&by_env, 3, argv_env, name, &msg), OPTIONS_OK);
	assert_int_equal(options_parse(&defaults, 3, argv_env, NULL, &msg), OPTIONS_OK);
	if (!same_options(&by_cli, &by_env) || same_options(&by_env, &defaults))
		fail_msg("PROFTOP=%s does not do what %s does", name, cli);
	options_free(&by_cli);
	options_free(&by_env);
	options_free(&defaults);
	free(cli);
}

/* value with each ':' as "\\:", as $PROFTOP takes it. */
static char *escape_colons(const char *value)
{
	char *out = xmalloc(2 * strlen(value) + 1), *o = out;

	for (; *value; value++) {
		if (*value == ':')
			*o++ = '\\';
		*o++ = *value;
	}
	*o = '\0';
	return out;
}

static void env_same_as_command_line(const char *name, const char *value)
{
	/* pid, input and all-cpus are targets of their own; the others need one. Some need another
	 * option on both sides and in the defaults compared with: --switch-period the off-CPU
	 * mode, --alloc-rate the allocation one, --coverage-cap and --module coverage,
	 * --include-self -a (then the target). */
	const char *with = !strcmp(name, "switch-period") ? "mode=offcpu"
			   : !strcmp(name, "alloc-rate") ? "mode=alloc"
			   : !strcmp(name, "coverage-cap") || !strcmp(name, "module") ? "mode=coverage"
			   : !strcmp(name, "include-self") ? "all-cpus"
			   : !strcmp(name, "otlp-interval") ? "otlp-endpoint=http://h" : NULL;
	bool with_target = with && !strcmp(with, "all-cpus");
	bool target = strcmp(name, "pid") && strcmp(name, "input") && strcmp(name, "all-cpus") &&
		      !with_target;
	char *with_arg = xasprintf("--%s", with ? with : "");
	char *with_escaped = escape_colons(with ? with : "");
	char *with_env = xasprintf("%s:", with_escaped);
	char *cli = value ? xasprintf("--%s=%s", name, value) : xasprintf("--%s", name);
	char *escaped = value ? escape_colons(value) : NULL; /* $PROFTOP's separator */
	char *env = value ? xasprintf("%s%s=%s", with ? with_env : "", name, escaped)
			  : xasprintf("%s%s", with ? with_env : "", name);
	char *argv_cli[] = { "proftop", cli, with ? with_arg : "./prog", "./prog", NULL };
	char *argv_env[] = { "proftop", "./prog", NULL };
	char *argv_default[] = { "proftop", with ? with_arg : "./prog", "./prog", NULL };
	struct options by_cli, by_env, defaults;
	char *msg;

	assert_int_equal(options_parse(&by_cli, 2 + !!with + target, argv_cli, NULL, &msg),
			 OPTIONS_OK);
	assert_int_equal(options_parse(&by_env, target ? 2 : 1, argv_env, env, &msg), OPTIONS_OK);
	/* (the defaults of pid, input and all-cpus: with a command) */
	assert_int_equal(options_parse(&defaults, 1 + !!with + (target || !with), argv_default, NULL,
				       &msg), OPTIONS_OK);
	if (!same_options(&by_cli, &by_env) || same_options(&by_env, &defaults))
		fail_msg("PROFTOP=%s does not do what %s does", env, cli);
	options_free(&by_cli);
	options_free(&by_env);
	options_free(&defaults);
	free(cli);
	free(env);
	free(escaped);
	free(with_escaped);
	free(with_arg);
	free(with_env);
}

/* --max-memory: bytes with K, M or G, 0 for no limit; too small, too big or malformed is an
 * error naming the value. */
static void memory_sizes(void **state)
{
	(void)state;
	static const struct { const char *text; size_t bytes; } good[] = {
		{ "16M", 16u << 20 }, { "1G", 1u << 30 }, { "0", 0 }, { "2097152", 2u << 20 },
		{ "1024K", 1u << 20 },
	};
	static const char *const bad_sizes[] = { "12X", "-1", "512K", "2048G", "", "1MB", "M",
						 "99999999999999999999G" };
	struct options o;
	char *msg = NULL;

	assert_int_equal(parse(&o, &msg, 2, "proftop", "./prog"), OPTIONS_OK);
	assert_int_equal(o.max_memory, OPTIONS_DEFAULT_MAX_MEMORY);
	options_free(&o);
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		assert_int_equal(parse(&o, &msg, 4, "proftop", "--max-memory", good[i].text, "./prog"),
				 OPTIONS_OK);
		assert_int_equal(o.max_memory, good[i].bytes);
		options_free(&o);
	}
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(*bad_sizes); i++) {
		assert_int_equal(parse(&o, &msg, 4, "proftop", "--max-memory", bad_sizes[i], "./prog"),
				 OPTIONS_USAGE_ERROR);
		assert_non_null(strstr(msg, "memory size"));
		free(msg);
		msg = NULL;
		options_free(&o);
	}
}

/* --names: the screen's first level and batch's tables alike; anything else names the choices. */
static void names_levels(void **state)
{
	struct options o;
	char *msg = NULL;

	(void)state;
	assert_int_equal(parse(&o, &msg, 2, "proftop", "./prog"), OPTIONS_OK);
	assert_int_equal(o.tui.names, VIEW_NAMES_FULL);
	assert_int_equal(o.batch.names, VIEW_NAMES_FULL);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "--names", "short", "./prog"), OPTIONS_OK);
	assert_int_equal(o.tui.names, VIEW_NAMES_SHORT);
	assert_int_equal(o.batch.names, VIEW_NAMES_SHORT);
	options_free(&o);
	assert_int_equal(parse(&o, &msg, 4, "proftop", "--names", "long", "./prog"),
			 OPTIONS_USAGE_ERROR);
	assert_non_null(strstr(msg, "full, short or bare"));
	assert_non_null(strstr(msg, "long"));
	free(msg);
	options_free(&o);
}

static void env_sets_every_option(void **state)
{
	(void)state;
	const char *name;

	for (size_t i = 0; (name = options_name(i)); i++) {
		size_t k = 0;

		while (k < sizeof(samples) / sizeof(samples[0]) && strcmp(samples[k][0], name))
			k++;
		if (k == sizeof(samples) / sizeof(samples[0]))
			fail_msg("option '%s' has no sample value in test_options.c", name);
		if (!strcmp(name, "children"))
			env_same_as_command_line_with_pid(name);
		else if (strcmp(name, "help") && strcmp(name, "version"))
			env_same_as_command_line(name, samples[k][1]);
	}
}

/* --- the docs made from the table ------------------------------------------------------------- */

static char *written(void (*write)(FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	assert_non_null(mem);
	write(mem);
	fclose(mem);
	return text;
}

/* Whether NEEDLE occurs in TEXT with no name character (letter, digit, '-') right after it. */
static bool has_word(const char *text, const char *needle)
{
	size_t n = strlen(needle);

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		if (!(p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
			return true;
	return false;
}

static void help_and_man_list_every_option(void **state)
{
	(void)state;
	char *help = written(options_write_help), *man = written(options_write_man);
	const char *name;

	for (size_t i = 0; (name = options_name(i)); i++) {
		char *dashed = xasprintf("--%s", name), roffed[64] = "\\-\\-", *r = roffed + 4;

		for (const char *c = name; *c; c++) {
			if (*c == '-')
				*r++ = '\\';
			*r++ = *c;
		}
		*r = '\0';
		if (!has_word(help, dashed))
			fail_msg("--help does not list %s", dashed);
		if (!has_word(man, roffed))
			fail_msg("the man list does not have %s", roffed);
		free(dashed);
	}
	free(help);
	free(man);
}

/* The lines of PATH between its "options: begin" and "options: end" lines; NULL without both. */
static char *between_markers(const char *path)
{
	FILE *in = fopen(path, "r"), *mem;
	char *line = NULL, *text = NULL;
	size_t cap = 0, len = 0;
	int state = 0; /* 0 before, 1 between, 2 after the markers */

	if (!in)
		fail_msg("cannot open %s: run the unit tests from the source tree's root", path);
	mem = open_memstream(&text, &len);
	while (getline(&line, &cap, in) > 0) {
		if (state == 1 && strstr(line, "options: end"))
			state = 2;
		else if (state == 1)
			fputs(line, mem);
		else if (state == 0 && strstr(line, "options: begin"))
			state = 1;
	}
	fclose(mem);
	fclose(in);
	free(line);
	if (state != 2) {
		free(text);
		return NULL;
	}
	return text;
}

/* The line of HAVE where it first differs from WANT. */
static const char *first_difference(const char *have, const char *want)
{
	const char *line = have;

	for (size_t i = 0; have[i] && have[i] == want[i]; i++)
		if (have[i] == '\n')
			line = have + i + 1;
	return line;
}

static int line_length(const char *s)
{
	return (int)strcspn(s, "\n");
}

/* doc/proftop.1 and README.md hold what the table generates: `make man` writes it there. */
static void docs_match_table(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		void (*write)(FILE *);
	} docs[] = {
		{ "doc/proftop.1", options_write_man },
		{ "README.md", options_write_markdown },
	};

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		const char *path = docs[i].path, *diff;
		char *have = between_markers(path), *want = written(docs[i].write);

		if (!have)
			fail_msg("%s lacks its \"options: begin\" or \"options: end\" line", path);
		diff = first_difference(have, want);
		if (strcmp(have, want))
			fail_msg("%s's option list differs from src/options_table.c's table at \"%.*s\": "
				 "run make man", path, line_length(diff), diff);
		free(have);
		free(want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(snapshot_options),
		cmocka_unit_test(report_options),
		cmocka_unit_test(defaults_and_command),
		cmocka_unit_test(values),
		cmocka_unit_test(usage_errors),
		cmocka_unit_test(number_limits),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(screen_options),
		cmocka_unit_test(command_line_errors),
		cmocka_unit_test(env_sets_options),
		cmocka_unit_test(command_line_wins),
		cmocka_unit_test(env_escapes),
		cmocka_unit_test(env_bad_entries),
		cmocka_unit_test(errors_show_escapes),
		cmocka_unit_test(env_empty),
		cmocka_unit_test(env_flags),
		cmocka_unit_test(env_does_not_block_help),
		cmocka_unit_test(names_levels),
		cmocka_unit_test(env_sets_every_option),
		cmocka_unit_test(memory_sizes),
		cmocka_unit_test(help_and_man_list_every_option),
		cmocka_unit_test(docs_match_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
