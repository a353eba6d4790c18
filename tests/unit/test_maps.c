/* test_maps.c — per-process address maps: overlap replacement and splitting, fork/exec/exit,
 * /proc/PID/maps lines, and the reread rate limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proftop/maps.h"

static void insert(struct maps *maps, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
		   const char *path)
{
	struct mapping m = { .start = start, .end = end, .pgoff = pgoff, .path = path,
			     .prot = PROT_READ | PROT_EXEC };

	maps_insert(maps, pid, &m);
}

/* The maps of pid, as "start-end@pgoff:path ..." for one readable assert per case. */
static const char *dump(struct maps *maps, pid_t pid)
{
	static char buf[1024];
	const struct mapping *v;
	size_t n, len = 0;

	v = maps_list(maps, pid, &n);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lx-%lx@%lx:%s",
					i ? " " : "", (unsigned long)v[i].start,
					(unsigned long)v[i].end, (unsigned long)v[i].pgoff, v[i].path);
	return buf;
}

static void test_insert_sorted(void **state)
{
	struct maps *maps = maps_new();

	(void)state;
	insert(maps, 1, 0x3000, 0x4000, 0, "c");
	insert(maps, 1, 0x1000, 0x2000, 0, "a");
	insert(maps, 1, 0x2000, 0x3000, 0, "b");
	insert(maps, 1, 0x5000, 0x5000, 0, "empty");	/* ignored */
	assert_string_equal(dump(maps, 1), "1000-2000@0:a 2000-3000@0:b 3000-4000@0:c");
	assert_string_equal(maps_find(maps, 1, 0x1fff)->path, "a");
	assert_string_equal(maps_find(maps, 1, 0x2000)->path, "b");
	assert_null(maps_find(maps, 1, 0x4000));
	assert_null(maps_find(maps, 1, 0xfff));
	assert_null(maps_find(maps, 2, 0x1000));
	maps_free(maps);
}

static void test_insert_replaces_and_splits(void **state)
{
	struct maps *maps = maps_new();

	(void)state;
	insert(maps, 1, 0x1000, 0x5000, 0x10000, "big");
	/* A hole in the middle: the head keeps its pgoff, the tail's moves with its start. */
	insert(maps, 1, 0x2000, 0x3000, 0, "hole");
	assert_string_equal(dump(maps, 1),
			    "1000-2000@10000:big 2000-3000@0:hole 3000-5000@12000:big");
	/* Covering the end of one and the start of the next, and one completely. */
	insert(maps, 1, 0x1800, 0x4000, 0x100, "span");
	assert_string_equal(dump(maps, 1),
			    "1000-1800@10000:big 1800-4000@100:span 4000-5000@13000:big");
	/* Exactly the same range: replaced. */
	insert(maps, 1, 0x1800, 0x4000, 0x200, "again");
	assert_string_equal(dump(maps, 1),
			    "1000-1800@10000:big 1800-4000@200:again 4000-5000@13000:big");
	/* Everything. */
	insert(maps, 1, 0, 0x10000, 0, "all");
	assert_string_equal(dump(maps, 1), "0-10000@0:all");
	maps_free(maps);
}

static void test_cookie_survives_split(void **state)
{
	struct maps *maps = maps_new();
	int cookie;

	(void)state;
	insert(maps, 1, 0x1000, 0x4000, 0, "f");
	maps_find(maps, 1, 0x1000)->cookie = &cookie;
	insert(maps, 1, 0x2000, 0x3000, 0, "g");
	assert_ptr_equal(maps_find(maps, 1, 0x1000)->cookie, &cookie);
	assert_ptr_equal(maps_find(maps, 1, 0x3000)->cookie, &cookie);
	assert_null(maps_find(maps, 1, 0x2000)->cookie);
	maps_free(maps);
}

static void test_fork_exec_exit(void **state)
{
	struct maps *maps = maps_new();

	(void)state;
	insert(maps, 10, 0x1000, 0x2000, 0, "parent");
	maps_fork(maps, 10, 11);
	assert_string_equal(dump(maps, 11), "1000-2000@0:parent");
	/* The copy is independent of the original. */
	insert(maps, 11, 0x1000, 0x2000, 0, "child");
	assert_string_equal(dump(maps, 10), "1000-2000@0:parent");
	assert_string_equal(dump(maps, 11), "1000-2000@0:child");
	/* A fork of an unknown parent gives an empty, never loaded, child. */
	maps_fork(maps, 99, 12);
	assert_string_equal(dump(maps, 12), "");
	assert_true(maps_reload_due(maps, 12, 1));

	maps_exec(maps, 10);
	assert_string_equal(dump(maps, 10), "");
	assert_null(maps_find(maps, 10, 0x1000));
	maps_exit(maps, 11);
	assert_null(maps_find(maps, 11, 0x1000));
	maps_exit(maps, 11);	/* twice is harmless */
	maps_exit(maps, 12345);
	maps_free(maps);
}

static void test_many_pids(void **state)
{
	struct maps *maps = maps_new();

	(void)state;
	for (pid_t pid = 1; pid <= 2000; pid++)
		insert(maps, pid, 0x1000 * (uint64_t)pid, 0x1000 * (uint64_t)pid + 0x800, 0, "x");
	for (pid_t pid = 1; pid <= 2000; pid += 2)
		maps_exit(maps, pid);
	for (pid_t pid = 1; pid <= 2000; pid++) {
		struct mapping *m = maps_find(maps, pid, 0x1000 * (uint64_t)pid + 0x10);

		if (pid % 2)
			assert_null(m);
		else
			assert_non_null(m);
	}
	maps_free(maps);
}

static void test_parse_line(void **state)
{
	char l1[] = "7f1c2a400000-7f1c2a428000 r-xp 00028000 fd:01 1835103                    "
		    "/usr/lib/x86_64-linux-gnu/libc.so.6\n";
	char l2[] = "7ffd5b1f1000-7ffd5b1f3000 r-xp 00000000 00:00 0                          "
		    "[vdso]";
	char l3[] = "55d4e0a00000-55d4e0a21000 rw-p 00000000 00:00 0 ";
	char l4[] = "1000-2000 r-xs 00001000 103:1a 42 /tmp/my file (deleted)\n";
	char bad[][64] = {
		"", "garbage", "1000-2000", "2000-1000 r-xp 0 00:00 0", "1000-2000 r-xp 0 0000 0",
		"10000000000000000-2 r-xp 0 00:00 0", "1000 2000 r-xp 0 00:00 0",
		"-2000 r-xp 0 00:00 0", "1000-2000 r-xp 0 00:00 x",
	};
	struct mapping m;

	(void)state;
	assert_int_equal(maps_parse_line(l1, &m), 0);
	assert_true(m.start == 0x7f1c2a400000ull && m.end == 0x7f1c2a428000ull);
	assert_int_equal(m.pgoff, 0x28000);
	assert_int_equal(m.maj, 0xfd);
	assert_int_equal(m.min, 1);
	assert_int_equal(m.ino, 1835103);
	assert_int_equal(m.prot, PROT_READ | PROT_EXEC);
	assert_string_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	assert_int_equal(maps_parse_line(l2, &m), 0);
	assert_string_equal(m.path, "[vdso]");
	assert_int_equal(maps_parse_line(l3, &m), 0);
	assert_string_equal(m.path, "");
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE);
	assert_int_equal(maps_parse_line(l4, &m), 0);
	assert_string_equal(m.path, "/tmp/my file (deleted)");
	assert_int_equal(m.maj, 0x103);
	assert_int_equal(m.min, 0x1a);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(maps_parse_line(bad[i], &m), -EINVAL);
}

__attribute__((noinline)) int test_maps_target(int x)
{
	return x * 5 + 3;
}

static void test_load_proc_self(void **state)
{
	struct maps *maps = maps_new();
	struct mapping *m;
	int (*volatile fn)(int) = test_maps_target;

	(void)state;
	assert_true(maps_reload_due(maps, getpid(), 1000));
	assert_int_equal(maps_load_proc(maps, getpid(), 1000), 0);
	m = maps_find(maps, getpid(), (uint64_t)(uintptr_t)fn);
	assert_non_null(m);
	assert_true(m->prot & PROT_EXEC);
	assert_non_null(strstr(m->path, "test_maps"));
	/* The rate limit: not again within MAPS_RELOAD_NS of the last attempt. */
	assert_false(maps_reload_due(maps, getpid(), 1000 + MAPS_RELOAD_NS - 1));
	assert_true(maps_reload_due(maps, getpid(), 1000 + MAPS_RELOAD_NS));
	/* A failed read (no such process) counts as an attempt too. */
	assert_true(maps_load_proc(maps, 0x7ffffff0, 5000) < 0);
	assert_false(maps_reload_due(maps, 0x7ffffff0, 5001));
	maps_free(maps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_sorted),
		cmocka_unit_test(test_insert_replaces_and_splits),
		cmocka_unit_test(test_cookie_survives_split),
		cmocka_unit_test(test_fork_exec_exit),
		cmocka_unit_test(test_many_pids),
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_load_proc_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
