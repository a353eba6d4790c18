/* test_coverage.c — coverage.c on this very binary run again as a child: the lines where three
 * functions are declared count their calls (1000, 12345, none), read with coverage_read(); with a
 * cap of 100 they stop at 100 and the recapping thread takes their probes out while the child
 * still runs. Needs root (a BPF program); says so otherwise. Under ThreadSanitizer (make tsan:
 * coverage.c starts a thread) the reads race the recapping thread. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/coverage.h"
#include "proftop/covmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char self[4096];
volatile unsigned sink;

__attribute__((noinline)) void covered_a(void)
{
	sink++;
}

__attribute__((noinline)) void covered_b(void)
{
	sink += 2;
}

__attribute__((noinline)) void never_covered(void)
{
	sink += 3;
}

static int child_main(int go, bool slow)
{
	char c;

	if (read(go, &c, 1) != 1)
		return 2;
	for (int i = 0; i < 1000; i++)
		covered_a();
	for (int i = 0; i < 12345; i++) {
		covered_b();
		if (slow && i % 100 == 0)
			usleep(1000);
	}
	if (sink == 12345678)
		never_covered();
	return 0;
}

static pid_t start(int *go, bool slow)
{
	int fds[2];
	pid_t pid;
	char arg[16];

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[1]);
		snprintf(arg, sizeof(arg), "%d", fds[0]);
		execl(self, self, slow ? "--slow-child" : "--child", arg, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

struct calls {
	uint64_t a, b, never;
	bool capped_b;
	size_t slots;
};

/* The count of the line each function's entry is on: its calls. */
static void read_calls(void *arg, const struct coverage_lines *l)
{
	struct calls *c = arg;

	c->slots++;
	for (size_t f = 0; f < l->map->nfuncs; f++) {
		const struct covmap_func *fn = &l->map->funcs[f];
		uint64_t n;

		if (fn->entry_line == UINT32_MAX)
			continue;
		n = l->counts[fn->entry_line];
		if (!strcmp(fn->name, "covered_a"))
			c->a = n;
		else if (!strcmp(fn->name, "covered_b")) {
			c->b = n;
			c->capped_b = l->capped[fn->entry_line];
		} else if (!strcmp(fn->name, "never_covered"))
			c->never = n;
	}
}

static struct coverage *watched(pid_t pid, uint64_t cap)
{
	char *why = NULL, *message = NULL;
	struct coverage *c = coverage_new(cap, &why);

	if (!c)
		fail_msg("coverage_new: %s", why);
	if (coverage_watch(c, pid, self, 0, &message))
		fail_msg("coverage_watch: %s", message);
	free(message);
	assert_true(coverage_watched(c, pid));
	assert_false(coverage_watched(c, pid + 1));
	return c;
}

static void counts_calls(void **state)
{
	int go, status;
	pid_t pid = start(&go, false);
	struct coverage *c = watched(pid, 0);
	struct calls calls = { 0 };

	(void)state;
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	coverage_read(c, read_calls, &calls);
	assert_int_equal(calls.slots, 1);
	assert_int_equal(calls.a, 1000);
	assert_int_equal(calls.b, 12345);
	assert_int_equal(calls.never, 0);
	coverage_free(c);
	close(go);
}

static void capped_while_running(void **state)
{
	int go, status;
	pid_t pid = start(&go, true);
	struct coverage *c = watched(pid, 100);
	struct calls calls = { 0 };
	size_t placed = 0, open = 0, open_at_start;

	(void)state;
	coverage_probes(c, &placed, &open_at_start);
	assert_true(placed > 3);
	assert_int_equal(open_at_start, placed);
	assert_int_equal(write(go, "g", 1), 1);
	/* covered_b runs for a second and more: its probe is out long before it ends. */
	for (int i = 0; i < 500 && (open == 0 || open == open_at_start); i++) {
		usleep(2000);
		coverage_read(c, read_calls, &calls);
		coverage_probes(c, &placed, &open);
	}
	assert_true(open < open_at_start);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	coverage_read(c, read_calls, &calls);
	assert_int_equal(calls.a, 100);
	assert_int_equal(calls.b, 100);
	assert_true(calls.capped_b);
	assert_int_equal(calls.never, 0);
	coverage_free(c);
	close(go);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_calls),
		cmocka_unit_test(capped_while_running),
	};
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(atoi(argv[2]), false);
	if (argc == 3 && !strcmp(argv[1], "--slow-child"))
		return child_main(atoi(argv[2]), true);
	if (geteuid() != 0) {
		fprintf(stderr, "coverage's uprobes need root (a BPF program): cannot run\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
