/* Unit tests of target_kernel_thread(): the kernel's own threads (kthreadd is pid 2 outside a
 * PID namespace) are told from processes, whose names may hold spaces and parentheses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/target.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kthreadd_is_a_kernel_thread),
		cmocka_unit_test(a_process_is_not),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
