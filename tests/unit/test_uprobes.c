/* test_uprobes.c — uprobes.c on this very binary run again as a child: functions called a known
 * number of times (1000, 12345, none) are counted exactly; with a cap of 100 the probes stop at
 * 100 and are closed (the child then runs its calls at full speed); the probes are gone when
 * the set is freed (a child probed then freed runs on and exits 0); probes opened before the
 * child execs count its calls, and those of a thread it starts (inherited). Needs perf events with
 * uprobes (root here); says so otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/elfsyms.h"
#include "proftop/uprobes.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char self[4096];
volatile unsigned sink;

__attribute__((noinline)) void counted_a(void)
{
	sink++;
}

__attribute__((noinline)) void counted_b(void)
{
	sink += 2;
}

__attribute__((noinline)) void never_called(void)
{
	sink += 3;
}

static void *calls(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		counted_a();
	for (int i = 0; i < 12345; i++)
		counted_b();
	if (sink == 12345678)
		never_called();
	return NULL;
}

/* The child: waits for its go, then calls. */
static int child_main(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		return 2;
	calls(NULL);
	return 0;
}

/* The child exec'd after its go: calls, then calls again in a thread of its own. */
static int child_thread_main(void)
{
	pthread_t t;

	calls(NULL);
	if (pthread_create(&t, NULL, calls, NULL) || pthread_join(t, NULL))
		return 3;
	return 0;
}

/* A child that waits for its go, exec'd already (or, before_exec, to exec at its go). */
static pid_t start_child(int *go, bool before_exec)
{
	int fds[2];
	pid_t pid;
	char arg[16], c;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[1]);
		if (before_exec) {
			if (read(fds[0], &c, 1) != 1)
				_exit(126);
			execl(self, self, "--child-thread", (char *)NULL);
			_exit(127);
		}
		snprintf(arg, sizeof(arg), "%d", fds[0]);
		execl(self, self, "--child", arg, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	if (!before_exec)
		usleep(100000); /* (exec'd: its mappings are the file's) */
	return pid;
}

static pid_t start(int *go)
{
	return start_child(go, false);
}

static struct uprobes *new_set_signalled(uint64_t cap, int signo)
{
	char *why = NULL;
	struct uprobes *u = uprobes_new(cap, gettid(), signo, &why);

	if (!u)
		fail_msg("uprobes_new: %s", why);
	return u;
}

static struct uprobes *new_set(uint64_t cap)
{
	return new_set_signalled(cap, 0);
}

static void probe_functions(struct uprobes *u, pid_t pid)
{
	static const char *const names[] = { "counted_a", "counted_b", "never_called" };
	uint64_t values[3], offset;

	assert_int_equal(elfsyms_find(self, names, values, NULL, 3), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(values[i] != 0);
		assert_int_equal(uprobes_file_offset(self, values[i], &offset), 0);
		assert_int_equal(uprobes_add(u, pid, self, offset), i);
	}
}

static void exact_counts(void **state)
{
	int go, status;
	pid_t pid;
	struct uprobes *u;
	bool capped;

	(void)state;
	pid = start(&go);
	u = new_set(0);
	probe_functions(u, pid);
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(uprobes_count(u, 0, &capped), 1000);
	assert_false(capped);
	assert_int_equal(uprobes_count(u, 1, &capped), 12345);
	assert_int_equal(uprobes_count(u, 2, &capped), 0);
	uprobes_free(u);
	close(go);
}

static void capped_counts(void **state)
{
	int go, status, reaped = 0, signo = SIGRTMIN + 3;
	pid_t pid;
	struct uprobes *u;
	bool capped;
	sigset_t set, old;
	siginfo_t info;
	struct timespec wait = { 0, 1000000 };

	(void)state;
	sigemptyset(&set);
	sigaddset(&set, signo);
	sigaddset(&set, SIGIO);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, &old), 0);
	pid = start(&go);
	u = new_set_signalled(100, signo);
	probe_functions(u, pid);
	assert_int_equal(write(go, "g", 1), 1);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		int got = sigtimedwait(&set, &info, &wait);

		if (got == signo)
			reaped += uprobes_reap_fd(u, info.si_fd);
		else if (got == SIGIO)
			reaped += (int)uprobes_reap(u);
	}
	reaped += (int)uprobes_reap(u);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(reaped, 2);
	assert_int_equal(uprobes_open(u), 1);
	assert_true(uprobes_count(u, 0, &capped) >= 100);
	assert_true(capped);
	assert_true(uprobes_count(u, 1, &capped) >= 100);
	assert_true(capped);
	assert_int_equal(uprobes_count(u, 2, &capped), 0);
	assert_false(capped);
	uprobes_free(u);
	close(go);
	while (sigtimedwait(&set, &info, &(struct timespec){ 0, 0 }) > 0)
		;
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
}

/* Opened before the child execs the file: its own calls counted, and its thread's (inherited). */
static void before_exec_in_thread(void **state)
{
	int go, status;
	pid_t pid;
	struct uprobes *u;
	bool capped;

	(void)state;
	pid = start_child(&go, true);
	u = new_set(0);
	probe_functions(u, pid);
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(uprobes_count(u, 0, &capped), 2 * 1000);
	assert_int_equal(uprobes_count(u, 1, &capped), 2 * 12345);
	assert_int_equal(uprobes_count(u, 2, &capped), 0);
	assert_false(capped);
	uprobes_free(u);
	close(go);
}

/* Freed before the child runs: no probe is left in it. */
static void freed_probes_gone(void **state)
{
	int go, status;
	pid_t pid;
	struct uprobes *u;

	(void)state;
	pid = start(&go);
	u = new_set(0);
	probe_functions(u, pid);
	uprobes_free(u);
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_counts),
		cmocka_unit_test(capped_counts),
		cmocka_unit_test(freed_probes_gone),
		cmocka_unit_test(before_exec_in_thread),
	};
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "--child-thread"))
		return child_thread_main();
	{
		char *why = NULL;
		struct uprobes *u = uprobes_new(0, 0, 0, &why);

		if (!u) {
			fprintf(stderr, "uprobes cannot be defined here (%s): cannot run\n", why);
			return 1;
		}
		uprobes_free(u);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
