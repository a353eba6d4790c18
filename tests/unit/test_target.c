/* Unit tests of target_kernel_thread(): the kernel's own threads (kthreadd is pid 2 outside a
 * PID namespace) are told from processes, whose names may hold spaces and parentheses. And of
 * attach mode's end: an attached process that ended is over even once a new process has its pid. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/target.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void kthreadd_is_a_kernel_thread(void **state)
{
	char comm[32] = "", name[64] = "";
	FILE *f = fopen("/proc/2/comm", "re");

	(void)state;
	if (!f || !fgets(comm, sizeof(comm), f) || strcmp(comm, "kthreadd\n")) {
		if (f)
			fclose(f);
		skip(); /* in a PID namespace pid 2 is someone else */
	}
	fclose(f);
	assert_true(target_kernel_thread(2, name, sizeof(name)));
	assert_string_equal(name, "kthreadd");
}

/* A process is not one, even named to look like the end of a stat line's name field. */
static void a_process_is_not(void **state)
{
	char name[64] = "unchanged";
	int status;
	pid_t child;

	(void)state;
	assert_false(target_kernel_thread(getpid(), name, sizeof(name)));
	assert_string_equal(name, "unchanged");
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_NAME, "a) (b) 2097152");
		_exit(target_kernel_thread(getpid(), name, sizeof(name)) ? 1 : 0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Reaped: no such pid now, which is not a kernel thread either. */
	assert_false(target_kernel_thread(child, name, sizeof(name)));
}

static void child_pause(void)
{
	for (;;)
		pause();
}

static void child_burn(void)
{
	for (volatile unsigned long n = 0;; n++)
		;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A child running body whose pid is want, which must be free: the kernel hands out the number
 * after ns_last_pid (root only). Another process on the machine may take it first: try again.
 * Returns -1 when it could not be had. */
static pid_t fork_with_pid(pid_t want, void (*body)(void))
{
	for (int tries = 0; tries < 50; tries++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "we");
		pid_t pid;

		if (!f)
			return -1;
		fprintf(f, "%d", (int)want - 1);
		if (fclose(f))
			return -1;
		pid = fork();
		if (pid == 0)
			body();
		if (pid == want || pid < 0)
			return pid;
		end_child(pid);
	}
	return -1;
}

/* user + system ns of pid by /proc/PID/stat (huge when it cannot be read). */
static unsigned long long cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long utime = 0, stime = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return ~0ull;
	if (!fgets(buf, sizeof(buf), f) || !strrchr(buf, ')') ||
	    sscanf(strrchr(buf, ')') + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &utime, &stime) != 2)
		utime = stime = ~0ull / 2;
	fclose(f);
	return (utime + stime) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK));
}

/* The process attached to lives for lifetime, is killed and reaped, and a new one, burning CPU,
 * takes its pid: the target has ended, and the newcomer's CPU time is not counted as the
 * target's. Returns 0, or which step failed (run in a child as well, without cmocka's checks). */
static int reuse_a_pid(long lifetime_ns)
{
	struct timespec life = { 0, lifetime_ns }, tick = { 0, 10000000 };
	struct target *t;
	pid_t first, second, missing = 0;
	uint64_t user, system;
	int failed = 0;

	first = fork();
	if (first < 0)
		return 1;
	if (first == 0)
		child_pause();
	if (target_attach(&t, &first, 1, &missing))
		return 2;
	nanosleep(&life, NULL);
	if (!target_any_alive(t))
		failed = 3;
	end_child(first);
	second = fork_with_pid(first, child_burn);
	if (!failed && second != first)
		failed = 4;
	while (!failed && cpu_ns(second) < 200000000ull)
		nanosleep(&tick, NULL);
	target_cpu_times(t, &user, &system);
	if (!failed && user + system >= 100000000ull)
		failed = 5;
	if (!failed && target_any_alive(t))
		failed = 6;
	if (second > 0)
		end_child(second);
	target_free(t);
	return failed;
}

/* Even when the newcomer came in the very clock tick the first one started (a pidfd tells). */
static void a_reused_pid_is_not_the_process(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* writing ns_last_pid, to have a pid used again at once, takes root */
	assert_int_equal(reuse_a_pid(0), 0);
}

/* pidfd_open() failing as on a kernel before 5.3 (a seccomp filter here): the start time tells
 * a process that lived a few clock ticks from the next one. */
static void without_a_pidfd_the_start_time_tells(void **state)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	int status;
	pid_t child;

	(void)state;
	if (geteuid() != 0)
		skip(); /* as above */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP,
		    SECCOMP_MODE_FILTER, &prog))
			_exit(10);
		if (pidfd_open(getpid(), 0) >= 0 || errno != ENOSYS)
			_exit(11);
		_exit(reuse_a_pid(50000000));
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Killed and not yet reaped (a zombie): over. */
static void a_zombie_has_ended(void **state)
{
	struct target *t;
	pid_t child, missing = 0;
	struct timespec tick = { 0, 10000000 };

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		child_pause();
	assert_int_equal(target_attach(&t, &child, 1, &missing), 0);
	kill(child, SIGKILL);
	for (int i = 0; i < 500 && target_any_alive(t); i++)
		nanosleep(&tick, NULL);
	assert_false(target_any_alive(t));
	assert_true(target_pid_gone(child));
	assert_int_equal(waitpid(child, NULL, 0), child);
	target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kthreadd_is_a_kernel_thread),
		cmocka_unit_test(a_process_is_not),
		cmocka_unit_test(a_reused_pid_is_not_the_process),
		cmocka_unit_test(without_a_pidfd_the_start_time_tells),
		cmocka_unit_test(a_zombie_has_ended),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
