/* Unit tests of util.c's fatal path: a worker thread's fatal error is finished on the thread that
 * registered the hook (the one that owns the terminal), which runs the hook, prints and exits 1.
 * Each case runs in a child process, since it ends the process. Then the visible form of text
 * from the target: what acts on a terminal shows, everything else stays. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_t main_thread;
static int report_fd = -1;   /* the child writes here what the hook saw */

static void hook(void)
{
	const char *where = pthread_equal(pthread_self(), main_thread) ? "hook on main\n"
								      : "hook elsewhere\n";

	if (write(report_fd, where, strlen(where)) < 0)
		_exit(3);
}

static void *worker(void *arg)
{
	(void)arg;
	fatal("out of memory (%d bytes)", 42);
}

/* Run body in a child; returns its exit status and what it wrote to stderr and report_fd. */
static int in_child(void (*body)(void), char *err, size_t err_size, char *said, size_t said_size)
{
	int errp[2], rep[2], status;
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(errp), 0);
	assert_int_equal(pipe(rep), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(errp[1], 2);
		report_fd = rep[1];
		main_thread = pthread_self();
		body();
		_exit(0);
	}
	close(errp[1]);
	close(rep[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	n = read(errp[0], err, err_size - 1);
	err[n > 0 ? n : 0] = 0;
	n = read(rep[0], said, said_size - 1);
	said[n > 0 ? n : 0] = 0;
	close(errp[0]);
	close(rep[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The main thread waits in poll() on the fatal fd, as the session's loop does. */
static void worker_fails_main_polls(void)
{
	struct pollfd p = { .fd = util_fatal_fd(), .events = POLLIN };
	pthread_t t;

	util_set_fatal_hook(hook);
	pthread_create(&t, NULL, worker, NULL);
	for (;;) {
		poll(&p, 1, 1000);
		util_fatal_check();
	}
}

/* The main thread is joining the worker, as session_stop() does. */
static void worker_fails_main_joins(void)
{
	pthread_t t;

	util_fatal_fd();
	util_set_fatal_hook(hook);
	pthread_create(&t, NULL, worker, NULL);
	util_join(t);
	_exit(0); /* not reached: the join finishes the worker's fatal error */
}

static void main_fails(void)
{
	util_set_fatal_hook(hook);
	fatal("cannot %s", "go on");
}

static void hook_runs_on_the_main_thread(void **state)
{
	char err[256], said[64];

	(void)state;
	assert_int_equal(in_child(worker_fails_main_polls, err, sizeof(err), said, sizeof(said)), 1);
	assert_string_equal(said, "hook on main\n");
	assert_string_equal(err, "proftop: out of memory (42 bytes)\n");
	assert_int_equal(in_child(worker_fails_main_joins, err, sizeof(err), said, sizeof(said)), 1);
	assert_string_equal(said, "hook on main\n");
	assert_string_equal(err, "proftop: out of memory (42 bytes)\n");
	assert_int_equal(in_child(main_fails, err, sizeof(err), said, sizeof(said)), 1);
	assert_string_equal(said, "hook on main\n");
	assert_string_equal(err, "proftop: cannot go on\n");
}

static void parse_hex(void **state)
{
	const char *after;
	uint64_t v;

	(void)state;
	assert_int_equal(util_parse_hex("7f00ab zz", NULL, &after, &v), 0);
	assert_int_equal(v, 0x7f00ab);
	assert_string_equal(after, " zz");
	assert_int_equal(util_parse_hex("x", NULL, &after, &v), -EINVAL);
	assert_int_equal(util_parse_hex("11111111111111111", NULL, &after, &v), -EINVAL);
}

static char *printed_safe(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	util_print_safe(mem, s);
	fclose(mem);
	return text;
}

/* util_print_safe() writes the one visible form (util.h) to a stream: C0 controls and DEL in
 * caret notation, C1 controls as \u00NN, bytes that are not UTF-8 as \xNN, the rest as it is. */
static void print_safe(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "jit\x1b]0;TITLE\a\x1b[2J", "jit^[]0;TITLE^G^[[2J" },
		{ "tab\tnew\nline\x7f", "tab^Inew^Jline^?" },
		{ "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5" },
		{ "csi\xc2\x9b" "2J", "csi\\u009b2J" },       /* U+009B, the 8-bit CSI */
		{ "raw\x9b\xff\xc3", "raw\\x9b\\xff\\xc3" }, /* not UTF-8 */
		{ "over\xc0\xaf\xed\xa0\x80", "over\\xc0\\xaf\\xed\\xa0\\x80" }, /* overlong, surrogate */
		{ "std::vector<int>::push_back", "std::vector<int>::push_back" },
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = printed_safe(cases[i][0]), *buf = NULL;
		size_t cap = 0;

		assert_string_equal(got, cases[i][1]);
		assert_string_equal(got, util_visible_str(cases[i][0], &buf, &cap));
		free(got);
		free(buf);
	}
}

/* visible(text) compared with want; the form of the form is itself. */
static void assert_visible(const char *text, const char *want)
{
	char *buf = NULL, *again = NULL;
	size_t cap = 0, again_cap = 0;
	const char *got = util_visible_str(text, &buf, &cap);

	assert_string_equal(got, want);
	assert_ptr_equal(util_visible_str(got, &again, &again_cap), got);
	assert_null(again);
	free(buf);
}

static void visible_text(void **state)
{
	char *buf = NULL;
	size_t cap = 0;
	const char *plain = "main operator new(unsigned long) [jit] libc.so.6";

	(void)state;
	/* Printable text, UTF-8 included, is the text itself: no copy. */
	assert_ptr_equal(util_visible_str(plain, &buf, &cap), plain);
	assert_visible("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 a\xc2\xa0" "b",
		       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 a\xc2\xa0" "b");
	assert_null(buf);
	/* C0 controls and DEL in caret notation, as curses draws them. */
	assert_visible("jit\033]0;TITLE\007\033[2J", "jit^[]0;TITLE^G^[[2J");
	assert_visible("\001\t\n\r\037\177", "^A^I^J^M^_^?");
	assert_visible("name\n", "name^J"); /* the first to change is the last */
	assert_visible("\033", "^[");
	/* C1 controls as code points; U+00A0 is no control. */
	assert_visible("\xc2\x80\xc2\x9b[2J\xc2\x9f", "\\u0080\\u009b[2J\\u009f");
	/* Bytes outside well-formed UTF-8: stray, overlong, surrogate, past U+10FFFF, cut short. */
	assert_visible("\xff\x80", "\\xff\\x80");
	assert_visible("\xc0\xaf", "\\xc0\\xaf");
	assert_visible("\xed\xa0\x80", "\\xed\\xa0\\x80");
	assert_visible("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	assert_visible("a\xe2\x82", "a\\xe2\\x82");
	assert_visible("\xe2\x82\033", "\\xe2\\x82^[");
	free(buf);
}

static void visible_cut_whole(void **state)
{
	char out[8], stray[65], *buf = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(util_visible(out, 3, "a\033b"), 1); /* "a^" would be half of ^[ */
	assert_string_equal(out, "a");
	assert_int_equal(util_visible(out, 4, "a\033b"), 3);
	assert_string_equal(out, "a^[");
	assert_int_equal(util_visible(out, 7, "\xc2\x9bx"), 6);
	assert_string_equal(out, "\\u009b");
	assert_int_equal(util_visible(out, 1, "abc"), 0);
	assert_string_equal(out, "");
	assert_int_equal(util_visible(out, 0, "abc"), 0);
	/* The worst case grows fourfold, and the buffer holds it. */
	memset(stray, 0xff, 64);
	stray[64] = 0;
	assert_int_equal(strlen(util_visible_str(stray, &buf, &cap)), 256);
	free(buf);
}

/* Tabs become spaces up to the next multiple of 8 bytes. */
static void assert_expanded(const char *text, const char *want)
{
	char *got = util_expand_tabs(text);

	assert_string_equal(got, want);
	free(got);
}

static void expand_tabs(void **state)
{
	(void)state;
	assert_expanded("\tx", "        x");
	assert_expanded("ab\tc", "ab      c");
	assert_expanded("1234567\tx", "1234567 x");
	assert_expanded("12345678\tx", "12345678        x");
	assert_expanded("\t\t", "                ");
	assert_expanded("a\tb\tc", "a       b       c");
	assert_expanded("no tabs here", "no tabs here");
	assert_expanded("", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hook_runs_on_the_main_thread),
		cmocka_unit_test(parse_hex),
		cmocka_unit_test(print_safe),
		cmocka_unit_test(visible_text),
		cmocka_unit_test(visible_cut_whole),
		cmocka_unit_test(expand_tabs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
