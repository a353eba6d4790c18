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
	assert_true(o.batch.interval == 1.0);
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
	assert_true(o.batch.duration == 1.5);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_and_command),
		cmocka_unit_test(values),
		cmocka_unit_test(usage_errors),
		cmocka_unit_test(help_and_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
