/* Unit tests of the theme parser, the shipped themes and theme lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/ui/theme.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(struct theme *t, const char *text, char **error)
{
	*error = NULL;
	return theme_parse(t, text, strlen(text), error);
}

static void styles_and_defaults(void **state)
{
	(void)state;
	struct theme t;
	char *error;

	assert_int_equal(parse(&t, "# a comment\n\n"
				   "normal = white on black\n"
				   "  header=black on color214 bold underline # trailing comment\n"
				   "hot = bright-red\n"
				   "selected = reverse\n"
				   "cold = on gray dim\n",
			       &error), 0);
	assert_null(error);
	assert_int_equal(t.styles[THEME_NORMAL].fg, 7);
	assert_int_equal(t.styles[THEME_NORMAL].bg, 0);
	assert_int_equal(t.styles[THEME_HEADER].fg, 0);
	assert_int_equal(t.styles[THEME_HEADER].bg, 214);
	assert_int_equal(t.styles[THEME_HEADER].attrs, THEME_BOLD | THEME_UNDERLINE);
	assert_int_equal(t.styles[THEME_HOT].fg, 9);
	assert_int_equal(t.styles[THEME_HOT].bg, THEME_COLOR_DEFAULT);
	assert_int_equal(t.styles[THEME_SELECTED].fg, THEME_COLOR_DEFAULT);
	assert_int_equal(t.styles[THEME_SELECTED].attrs, THEME_REVERSE);
	assert_int_equal(t.styles[THEME_COLD].fg, THEME_COLOR_DEFAULT);
	assert_int_equal(t.styles[THEME_COLD].bg, 8);
	assert_int_equal(t.styles[THEME_COLD].attrs, THEME_DIM);
	/* Roles left out look like normal. */
	assert_int_equal(t.styles[THEME_TREE].fg, 7);
	assert_int_equal(t.styles[THEME_TREE].bg, 0);
	assert_string_equal(t.name, "");
	/* No final newline, CRLF line ends. */
	assert_int_equal(parse(&t, "warm = yellow\r\nmodule = cyan", &error), 0);
	assert_int_equal(t.styles[THEME_MODULE].fg, 6);
	assert_int_equal(parse(&t, "", &error), 0);
}

static void expect_error(const char *text, const char *message)
{
	struct theme t;
	char *error;

	assert_int_not_equal(parse(&t, text, &error), 0);
	assert_non_null(error);
	if (strcmp(error, message))
		fail_msg("'%s': got \"%s\", want \"%s\"", text, error, message);
	free(error);
}

/* An error says where, and never what the file holds there: a theme may be any file. */
static void errors_name_the_line(void **state)
{
	(void)state;
	expect_error("normal = default\nheadr = red\n", "line 2, column 1: unknown role");
	expect_error("hot red\n", "line 1, column 1: expected 'ROLE = STYLE': no '=' after the role");
	expect_error("hot =\n", "line 1: no style after '='");
	expect_error("\n\nhot = rouge\n", "line 3, column 7: unknown colour or attribute");
	expect_error("hot = red blue\n",
		     "line 1, column 11: a second foreground colour (write 'on' before a background)");
	expect_error("hot = red on\n", "line 1, column 11: 'on' needs a colour after it");
	expect_error("hot = on red on blue\n",
		     "line 1, column 14: a second 'on': a style has one background");
	expect_error("hot = color256\n", "line 1, column 7: unknown colour or attribute");
	expect_error("hot = red\n  hot = blue\n", "line 2, column 3: role set twice (line 1 set it first)");
	expect_error("hot = r\001d\n", "line 1, column 7: unknown colour or attribute");
	expect_error("hot = abcdefghijklmnopqrstuvwxyz0123456789\n",
		     "line 1, column 7: unknown colour or attribute");
	/* /etc/shadow as a theme: its first entry is not in the message. */
	expect_error("root:$y$j9T$secrethash:19000:0:99999:7:::\n", "line 1, column 1: unknown role");
	expect_error("hot = secret\n", "line 1, column 7: unknown colour or attribute");
	/* A NUL is a bad character, not the end of the text. */
	struct theme t;
	char *error = NULL;
	static const char nul[] = "hot = red\nwarm = ye\0low\n";
	assert_int_not_equal(theme_parse(&t, nul, sizeof(nul) - 1, &error), 0);
	assert_string_equal(error, "line 2, column 8: unknown colour or attribute");
	free(error);
}

/* A theme file's errors name the file and the position, not the content. */
static void file_errors_name_the_position(void **state)
{
	char path[] = "/tmp/proftop-test-theme-XXXXXX";
	int fd = mkstemp(path);
	struct theme t;
	char *error = NULL, *want;
	static const char text[] = "normal = default\nroot:$y$j9T$secrethash:19000\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	assert_int_equal(theme_load(&t, path, &error), -EINVAL);
	want = malloc(strlen(path) + 64);
	assert_non_null(want);
	sprintf(want, "%s:2:1: unknown role", path);
	assert_string_equal(error, want);
	free(want);
	free(error);
	unlink(path);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	*len = fread(buf, 1, 65535, f);
	fclose(f);
	return buf;
}

/* The source tree's themes/ (unit tests run from the repository root). */
static void shipped_themes_parse(void **state)
{
	(void)state;
	static const char *const names[] = { "default", "light", "mono", "high-contrast" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char path[64], *text, *error = NULL;
		size_t len;
		struct theme t;

		snprintf(path, sizeof(path), "themes/%s.theme", names[i]);
		text = slurp(path, &len);
		if (theme_parse(&t, text, len, &error))
			fail_msg("%s: %s", path, error);
		free(text);
		/* Every role is named in the file: it would otherwise silently look like normal. */
		text = slurp(path, &len);
		for (int r = 0; r < THEME_NROLES; r++) {
			char needle[40];

			snprintf(needle, sizeof(needle), "\n%s ", theme_role_name(r));
			if (!strstr(text, needle))
				fail_msg("%s does not set %s", path, theme_role_name(r));
		}
		free(text);
		/* Loading by path names it after the file. */
		assert_int_equal(theme_load(&t, path, &error), 0);
		assert_string_equal(t.name, names[i]);
	}
}

static void builtins_match_their_files(void **state)
{
	(void)state;
	static const char *const names[] = { "default", "mono" };

	for (size_t i = 0; i < 2; i++) {
		struct theme file, builtin;
		char path[64], *error = NULL;

		snprintf(path, sizeof(path), "themes/%s.theme", names[i]);
		assert_int_equal(theme_load(&file, path, &error), 0);
		assert_int_equal(theme_builtin(&builtin, names[i]), 0);
		assert_string_equal(builtin.name, names[i]);
		assert_memory_equal(file.styles, builtin.styles, sizeof(file.styles));
	}
	struct theme t;
	assert_int_equal(theme_builtin(&t, "light"), -ENOENT);
}

static void load_reports_file_and_line(void **state)
{
	(void)state;
	char path[] = "/tmp/proftop-theme-XXXXXX.theme", *error = NULL;
	int fd = mkstemps(path, 6);
	struct theme t;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "normal = default\nhot = purple\n", 30), 30);
	close(fd);
	assert_int_equal(theme_load(&t, path, &error), -EINVAL);
	char *want;
	assert_true(asprintf(&want, "%s:2:7: unknown colour or attribute", path) > 0);
	assert_string_equal(error, want);
	free(want);
	free(error);
	unlink(path);
	assert_int_equal(theme_load(&t, path, &error), -ENOENT);
	assert_non_null(strstr(error, "No such file"));
	free(error);
	/* Names: not found anywhere, found as a built-in. */
	assert_int_equal(theme_load(&t, "no-such-theme-here", &error), -ENOENT);
	assert_non_null(strstr(error, "no theme named 'no-such-theme-here' (looked in "));
	free(error);
	setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
	assert_int_equal(theme_load(&t, "mono", &error), 0);
	assert_string_equal(t.name, "mono");
}

/* The error theme_load gives for path, which must not load. */
static void assert_load_error(const char *path, int want_err, const char *want_why)
{
	struct theme t;
	char *error = NULL, *want;

	assert_int_equal(theme_load(&t, path, &error), want_err);
	assert_true(asprintf(&want, "%s: %s", path, want_why) > 0);
	assert_string_equal(error, want);
	free(want);
	free(error);
}

/* A theme file must be a regular file: a FIFO nobody writes to, a device or a directory is an
 * error at once (the alarm turns a wait on the FIFO into a failure), never a wait or a read that
 * does not end. */
static void load_refuses_what_is_not_a_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/proftop-theme-XXXXXX", *fifo;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&fifo, "%s/fifo.theme", dir) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10);
	assert_load_error(fifo, -EINVAL, "not a regular file");
	assert_load_error("/dev/zero", -EINVAL, "not a regular file");
	alarm(0);
	assert_load_error(dir, -EISDIR, "Is a directory");
	unlink(fifo);
	rmdir(dir);
	free(fifo);
}

static void names_are_listed(void **state)
{
	(void)state;
	char **names;
	size_t n = theme_names(&names);

	assert_true(n >= 2);
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(names[i - 1], names[i]) < 0);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found += !strcmp(names[i], "default") || !strcmp(names[i], "mono");
	assert_int_equal(found, 2);
	theme_names_free(names, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(styles_and_defaults),
		cmocka_unit_test(errors_name_the_line),
		cmocka_unit_test(file_errors_name_the_position),
		cmocka_unit_test(shipped_themes_parse),
		cmocka_unit_test(builtins_match_their_files),
		cmocka_unit_test(load_reports_file_and_line),
		cmocka_unit_test(load_refuses_what_is_not_a_file),
		cmocka_unit_test(names_are_listed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
