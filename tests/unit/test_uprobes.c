/* test_uprobes.c — uprobes.c on this very binary run again as a child: functions called a known
 * number of times (1000, 12345, none) are counted exactly; with a cap of 100 the counts stop at
 * 100 and uprobes_recap() takes those probes out; a set detached before the child runs leaves it
 * unprobed; a set made before the child execs counts its calls and those of a thread it starts;
 * the instructions the kernel's uprobes refuse are told. Needs root (a BPF program); says so
 * otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/elfsyms.h"
#include "proftop/uprobes.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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

/* The slow child: counted_a every millisecond, for a second. */
static int child_slow_main(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		return 2;
	for (int i = 0; i < 1000; i++) {
		counted_a();
		usleep(1000);
	}
	return 0;
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

/* A child that waits for its go, exec'd already (or, before_exec, to exec at its go), in mode
 * (NULL: "--child"). */
static pid_t start_child(int *go, bool before_exec, const char *mode)
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
		execl(self, self, mode ? mode : "--child", arg, (char *)NULL);
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
	return start_child(go, false, NULL);
}

/* The file offset of this binary's link-time address vaddr. */
static uint64_t file_offset(uint64_t vaddr)
{
	int fd = open(self, O_RDONLY);
	Elf *elf;
	size_t n = 0;
	uint64_t offset = 0;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			offset = ph.p_offset + (vaddr - ph.p_vaddr);
	}
	elf_end(elf);
	close(fd);
	assert_true(offset != 0);
	return offset;
}

/* uprobes_recap(), the old links closed: how many capped instructions it took out. */
static int recap(struct uprobes *u)
{
	size_t before = uprobes_placed(u);
	int old[8];
	size_t n = uprobes_recap(u, old, 8);

	for (size_t i = 0; i < n; i++)
		close(old[i]);
	return (int)(before - uprobes_placed(u));
}

static struct uprobes *probe_functions(pid_t pid, uint64_t cap)
{
	static const char *const names[] = { "counted_a", "counted_b", "never_called" };
	uint64_t values[3], offsets[3];
	struct uprobes *u;
	char *why = NULL;
	int err = 0;

	assert_int_equal(elfsyms_find(self, names, values, NULL, 3), 0);
	for (int i = 0; i < 3; i++)
		offsets[i] = file_offset(values[i]);
	u = uprobes_attach(pid, self, offsets, 3, cap, &err, &why);
	if (!u)
		fail_msg("uprobes_attach: %s", why);
	assert_int_equal(uprobes_placed(u), 3);
	return u;
}

/* The child told to go, and ended well. */
static void run_to_end(int go, pid_t pid)
{
	int status;

	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void exact_counts(void **state)
{
	int go;
	pid_t pid;
	struct uprobes *u;

	(void)state;
	pid = start(&go);
	u = probe_functions(pid, 0);
	run_to_end(go, pid);
	assert_int_equal(uprobes_count(u, 0), 1000);
	assert_int_equal(uprobes_count(u, 1), 12345);
	assert_int_equal(uprobes_count(u, 2), 0);
	assert_int_equal(recap(u), 0); /* (no cap) */
	uprobes_detach(u);
	close(go);
}

static void capped_counts(void **state)
{
	int go;
	pid_t pid;
	struct uprobes *u;

	(void)state;
	pid = start(&go);
	u = probe_functions(pid, 100);
	run_to_end(go, pid);
	/* The program stopped counting at the cap; then the two probes are taken out (and, the
	 * process gone, the third with their link). */
	assert_int_equal(uprobes_count(u, 0), 100);
	assert_int_equal(uprobes_count(u, 1), 100);
	assert_int_equal(uprobes_count(u, 2), 0);
	assert_int_equal(recap(u), 3);
	assert_int_equal(uprobes_placed(u), 0);
	assert_int_equal(recap(u), 0);
	assert_int_equal(uprobes_count(u, 0), 100);
	uprobes_detach(u);
	close(go);
}

/* Taken out while the child runs: the counts stop where they were, the child runs on. */
static void recapped_while_running(void **state)
{
	int go, status;
	pid_t pid;
	struct uprobes *u;
	uint64_t seen;

	(void)state;
	pid = start_child(&go, false, "--child-slow");
	u = probe_functions(pid, 50);
	assert_int_equal(write(go, "g", 1), 1);
	while (uprobes_count(u, 0) < 50)
		usleep(1000);
	assert_int_equal(recap(u), 1);
	assert_int_equal(uprobes_placed(u), 2);
	seen = uprobes_count(u, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(uprobes_count(u, 0), seen);
	assert_int_equal(seen, 50);
	uprobes_detach(u);
	close(go);
}

/* Opened before the child execs the file: its own calls counted, and its thread's (inherited). */
static void before_exec_in_thread(void **state)
{
	int go;
	pid_t pid;
	struct uprobes *u;

	(void)state;
	pid = start_child(&go, true, NULL);
	u = probe_functions(pid, 0);
	run_to_end(go, pid);
	assert_int_equal(uprobes_count(u, 0), 2 * 1000);
	assert_int_equal(uprobes_count(u, 1), 2 * 12345);
	assert_int_equal(uprobes_count(u, 2), 0);
	uprobes_detach(u);
	close(go);
}

/* Freed before the child runs: no probe is left in it. */
static void freed_probes_gone(void **state)
{
	int go;
	pid_t pid;
	struct uprobes *u;

	(void)state;
	pid = start(&go);
	u = probe_functions(pid, 0);
	uprobes_detach(u);
	run_to_end(go, pid);
	close(go);
}

/* The instructions Linux's uprobes refuse (all 20 of proftop's own were these prefixes). */
static void probeable(void **state)
{
	static const unsigned char lock_add[] = { 0xf0, 0x48, 0x83, 0x07, 0x01 };
	static const unsigned char cs_nopw[] = { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0 };
	static const unsigned char fs_load[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 };
	static const unsigned char mov[] = { 0x48, 0x89, 0xe5 };
	static const unsigned char int3[] = { 0xcc };
	static const unsigned char rep_movs[] = { 0xf3, 0x48, 0xa5 };

	(void)state;
	assert_false(uprobes_probeable(lock_add, sizeof(lock_add)));
	assert_false(uprobes_probeable(cs_nopw, sizeof(cs_nopw)));
	assert_true(uprobes_probeable(fs_load, sizeof(fs_load)));
	assert_true(uprobes_probeable(mov, sizeof(mov)));
	assert_false(uprobes_probeable(int3, sizeof(int3)));
	assert_true(uprobes_probeable(rep_movs, sizeof(rep_movs)));
	assert_false(uprobes_probeable(mov, 0));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_counts),
		cmocka_unit_test(capped_counts),
		cmocka_unit_test(freed_probes_gone),
		cmocka_unit_test(before_exec_in_thread),
		cmocka_unit_test(recapped_while_running),
		cmocka_unit_test(probeable),
	};
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--child-slow"))
		return child_slow_main(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "--child-thread"))
		return child_thread_main();
	if (geteuid() != 0) {
		fprintf(stderr, "coverage's uprobes need root (a BPF program): cannot run\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
