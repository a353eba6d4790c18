/* Unit tests of command-line parsing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/options.h"

#include <stdlib.h>
#include <string.h>

static enum options_result parse(struct options *o, char **message, int argc, ...)
{
	static char *argv[32];
	va_list ap;

	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	argv[argc] = NULL;
	return options_parse(o, argc, argv, message);
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
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[6] = { "proftop" };
		int argc = 1;
		struct options o;
		char *msg = NULL;

		for (int j = 0; j < 4 && bad[i][j]; j++)
			argv[argc++] = (char *)bad[i][j];
		argv[argc] = NULL;
		assert_int_equal(options_parse(&o, argc, argv, &msg), OPTIONS_USAGE_ERROR);
		assert_non_null(msg);
		free(msg);
		options_free(&o);
	}
}

static void help_and_version(void **state)
{
	(void)state;
	struct options o;
	char *msg;

	assert_int_equal(parse(&o, &msg, 2, "proftop", "--help"), OPTIONS_OK);
	assert_true(o.help);
	assert_non_null(strstr(options_help(), "--freq"));
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
	assert_string_equal(msg, "invalid format (tmon, callgrind, folded or pprof): 'json'");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(snapshot_options),
		cmocka_unit_test(report_options),
		cmocka_unit_test(defaults_and_command),
		cmocka_unit_test(values),
		cmocka_unit_test(usage_errors),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(screen_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
