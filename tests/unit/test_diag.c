/* Unit tests of the diagnostics channel: order, once per text, a full queue summed up, and many
 * threads reporting while one delivers (run under ThreadSanitizer by make tsan). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/diag.h"

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct got {
	size_t n;
	enum diag_level level[DIAG_QUEUE_MAX + 8];
	char text[DIAG_QUEUE_MAX + 8][DIAG_TEXT_MAX + 1];
	size_t not_shown;          /* from "N more warnings not shown" */
};

static void collect(void *arg, enum diag_level level, const char *text)
{
	struct got *g = arg;
	size_t n;

	if (sscanf(text, "%zu more warnings not shown", &n) == 1) {
		g->not_shown += n;
		return;
	}
	if (g->n < DIAG_QUEUE_MAX + 8) {
		g->level[g->n] = level;
		snprintf(g->text[g->n], sizeof(g->text[g->n]), "%s", text);
	}
	g->n++;
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void order_levels_and_once(void **state)
{
	struct diag *d = diag_new();
	struct diag_ops ops = { collect };
	struct got g = { 0 };

	(void)state;
	assert_non_null(d);
	assert_false(readable(diag_fd(d)));
	diag_report(d, DIAG_WARNING, "cannot read %s", "/proc/1/maps");
	diag_report(d, DIAG_INFO, "saved tmon.out");
	diag_report(d, DIAG_WARNING, "cannot read %s", "/proc/1/maps"); /* said already */
	assert_true(readable(diag_fd(d)));
	assert_int_equal(diag_deliver(d, &ops, &g), 2);
	assert_false(readable(diag_fd(d)));
	assert_int_equal(g.n, 2);
	assert_string_equal(g.text[0], "cannot read /proc/1/maps");
	assert_int_equal(g.level[0], DIAG_WARNING);
	assert_string_equal(g.text[1], "saved tmon.out");
	assert_int_equal(g.level[1], DIAG_INFO);
	diag_report(d, DIAG_WARNING, "cannot read /proc/1/maps");
	assert_int_equal(diag_deliver(d, &ops, &g), 0);
	/* A path the target chose cannot put escape sequences on a terminal: its control characters
	 * (C1 and stray bytes too) are in visible form, as batch mode and the screen show names. */
	diag_report(d, DIAG_WARNING, "no symbols for %s", "/tmp/\033]0;x\007\n\302\233\377.so");
	g.n = 0;
	diag_deliver(d, &ops, &g);
	assert_string_equal(g.text[0], "no symbols for /tmp/^[]0;x^G^J\\u009b\\xff.so");
	assert_string_equal(diag_prefix(DIAG_WARNING), "warning: ");
	assert_string_equal(diag_prefix(DIAG_ERROR), "");
	diag_free(d);
	diag_report(NULL, DIAG_ERROR, "dropped"); /* a NULL channel takes anything */
	assert_int_equal(diag_deliver(NULL, &ops, &g), 0);
}

static void full_queue_is_summed_up(void **state)
{
	struct diag *d = diag_new();
	struct diag_ops ops = { collect };
	struct got g = { 0 };
	char long_text[DIAG_TEXT_MAX * 2];

	(void)state;
	for (int i = 0; i < DIAG_QUEUE_MAX + 10; i++)
		diag_report(d, DIAG_WARNING, "warning %d", i);
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = 0;
	diag_report(d, DIAG_WARNING, "%s", long_text);
	diag_deliver(d, &ops, &g);
	assert_int_equal(g.n, DIAG_QUEUE_MAX);
	assert_string_equal(g.text[DIAG_QUEUE_MAX - 1], "warning 63");
	assert_int_equal(g.not_shown, 11);
	/* The queue is empty again; a long text is cut, not refused. */
	memset(long_text, 'y', sizeof(long_text) - 1);
	diag_report(d, DIAG_WARNING, "%s", long_text);
	g.n = 0;
	diag_deliver(d, &ops, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(strlen(g.text[0]), DIAG_TEXT_MAX);
	diag_free(d);
}

/* A report of escapes longer than a report may be: cut at a whole character, nothing raw left;
 * diag_print() shows any text visibly too (a save's message names a file the user chose). */
static void reports_are_visible(void **state)
{
	struct diag *d = diag_new();
	struct diag_ops ops = { collect };
	struct got g = { 0 };
	char escapes[DIAG_TEXT_MAX + 1], *printed = NULL;
	size_t size = 0;
	FILE *out;

	(void)state;
	memset(escapes, '\033', DIAG_TEXT_MAX);
	escapes[DIAG_TEXT_MAX] = 0;
	diag_report(d, DIAG_WARNING, "x%s", escapes);
	diag_deliver(d, &ops, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(strlen(g.text[0]), DIAG_TEXT_MAX - 1); /* "x" and 119 whole "^[" */
	assert_null(strchr(g.text[0], '\033'));
	assert_string_equal(g.text[0] + strlen(g.text[0]) - 4, "^[^[");
	diag_free(d);
	out = open_memstream(&printed, &size);
	assert_non_null(out);
	diag_print(out, DIAG_ERROR, "cannot write /tmp/a\033[2J\nb");
	fclose(out);
	assert_string_equal(printed, "proftop: cannot write /tmp/a^[[2J^Jb\n");
	free(printed);
}

#define THREADS 4
#define PER_THREAD 5000

struct worker {
	struct diag *d;
	int id;
};

static void *reporter(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < PER_THREAD; i++) {
		diag_report(w->d, DIAG_WARNING, "thread %d report %d", w->id, i);
		diag_report(w->d, DIAG_WARNING, "the same text from every thread");
	}
	return NULL;
}

/* Every distinct report is either delivered or counted in a "not shown" line, whatever the
 * interleaving; the repeated text arrives once. */
static void threads_report_while_one_delivers(void **state)
{
	struct diag *d = diag_new();
	struct diag_ops ops = { collect };
	struct got g = { 0 };
	struct worker w[THREADS];
	pthread_t t[THREADS];
	size_t delivered = 0;

	(void)state;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ d, i };
		assert_int_equal(pthread_create(&t[i], NULL, reporter, &w[i]), 0);
	}
	for (int round = 0; round < 2000; round++) {
		g.n = 0;
		diag_deliver(d, &ops, &g);
		delivered += g.n;
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	g.n = 0;
	diag_deliver(d, &ops, &g);
	delivered += g.n;
	assert_int_equal(delivered + g.not_shown, THREADS * PER_THREAD + 1);
	diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order_levels_and_once),
		cmocka_unit_test(full_queue_is_summed_up),
		cmocka_unit_test(reports_are_visible),
		cmocka_unit_test(threads_report_while_one_delivers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
