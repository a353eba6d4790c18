/* test_perfmap.c — the /tmp/perf-PID.map parser: lines good and bad, later lines winning,
 * incremental parsing of a growing file, and refresh from a real file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proftop/perfmap.h"
#include "proftop/strpool.h"

static int parse(const char *line, struct perfmap_entry *e)
{
	return perfmap_parse_line(line, strlen(line), e);
}

static void test_parse_line_good(void **state)
{
	struct perfmap_entry e;

	(void)state;
	assert_int_equal(parse("7f0000001000 40 LazyCompile:~foo /app/x.js:1", &e), 0);
	assert_true(e.start == 0x7f0000001000ull && e.size == 0x40);
	assert_int_equal(e.name_len, strlen("LazyCompile:~foo /app/x.js:1"));
	assert_memory_equal(e.name, "LazyCompile:~foo", 16);

	assert_int_equal(parse("0x1000 0X20 stub\r", &e), 0);
	assert_true(e.start == 0x1000 && e.size == 0x20);
	assert_int_equal(e.name_len, 4);

	assert_int_equal(parse("  ABCdef\t10   name with  spaces  ", &e), 0);
	assert_true(e.start == 0xabcdef && e.size == 0x10);
	assert_int_equal(e.name_len, strlen("name with  spaces"));
}

static void test_parse_line_bad(void **state)
{
	static const char *const bad[] = {
		"", "\r", "garbage", "1000", "1000 20", "1000 20 ", "1000 0 zero-size",
		"xyz 20 name", "1000 zz name", "1000-20 name", "0x 20 name", "1000 0x name",
		"ffffffffffffffff 2 wraps", "10000000000000000 1 too-big", "1000  20name",
	};
	struct perfmap_entry e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &e), -EINVAL);
	/* A NUL inside the name. */
	assert_int_equal(perfmap_parse_line("1000 20 ab\0cd", 13, &e), -EINVAL);
}

static void test_parse_file(void **state)
{
	static const char text[] =
		"1000 100 first\n"
		"this line is garbage\n"
		"\n"
		"3000 10 third\n"
		"1000 80 first-again\n"	/* the same start: the later line wins */
		"2000 10 second\r\n"
		"\x01\x02\xff binary junk\n"
		"4000 10 unterminated";
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	size_t used;

	(void)state;
	used = perfmap_parse(map, text, sizeof(text) - 1);
	assert_int_equal(used, sizeof(text) - 1 - strlen("4000 10 unterminated"));
	assert_int_equal(perfmap_count(map), 4);
	assert_string_equal(perfmap_lookup(map, 0x1000), "first-again");
	assert_string_equal(perfmap_lookup(map, 0x107f), "first-again");
	assert_null(perfmap_lookup(map, 0x1080));
	assert_string_equal(perfmap_lookup(map, 0x200f), "second");
	assert_string_equal(perfmap_lookup(map, 0x3000), "third");
	assert_string_equal(perfmap_lookup(map, 0x4000), "unterminated");
	assert_null(perfmap_lookup(map, 0xfff));
	assert_null(perfmap_lookup(map, 0x4010));

	/* The writer finishes its line: parsed again, the same entry, no duplicate. */
	used = perfmap_parse(map, "4000 10 unterminated-now-done\n", 30);
	assert_int_equal(used, 30);
	assert_int_equal(perfmap_count(map), 4);
	assert_string_equal(perfmap_lookup(map, 0x4000), "unterminated-now-done");
	perfmap_free(map);
	/* Names belong to the pool and outlive the map. */
	assert_string_equal(strpool_intern(pool, "third", 5), "third");
	strpool_free(pool);
}

static void test_refresh_file(void **state)
{
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	char path[64];
	const char *old;
	FILE *file;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("junk\n10000 100 jit_one\n", file);
	fflush(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000), 0);
	old = perfmap_lookup(map, 0x10010);
	assert_string_equal(old, "jit_one");

	/* Appended, but within the recheck interval: not seen yet. */
	fputs("20000 100 jit_two\n", file);
	fflush(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS - 1), 0);
	assert_null(perfmap_lookup(map, 0x20010));
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS), 0);
	assert_string_equal(perfmap_lookup(map, 0x20010), "jit_two");
	assert_ptr_equal(perfmap_lookup(map, 0x10010), old);
	fclose(file);

	/* Rewritten shorter: parsed from scratch. */
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("30000 10 c\n", file);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + 2 * PERFMAP_RECHECK_NS), 0);
	assert_null(perfmap_lookup(map, 0x10010));
	assert_string_equal(perfmap_lookup(map, 0x30000), "c");
	/* The old name is still valid memory. */
	assert_string_equal(old, "jit_one");

	/* Gone: an error, and what was known stays. */
	unlink(path);
	assert_true(perfmap_refresh(map, getpid(), 1000 + 3 * PERFMAP_RECHECK_NS) < 0);
	assert_string_equal(perfmap_lookup(map, 0x30000), "c");
	perfmap_free(map);
	strpool_free(pool);
}

static void test_refresh_wrong_owner(void **state)
{
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	char path[64];
	FILE *file;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("10000 100 not_mine\n", file);
	fclose(file);
	/* Owned by someone the target is not: ignored. Only root can hand a file away. */
	if (geteuid() != 0 || chown(path, 12345, 12345)) {
		unlink(path);
		perfmap_free(map);
		strpool_free(pool);
		skip();
	}
	assert_int_equal(perfmap_refresh(map, getpid(), 1000), -EPERM);
	assert_null(perfmap_lookup(map, 0x10010));
	unlink(path);
	perfmap_free(map);
	strpool_free(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line_good),
		cmocka_unit_test(test_parse_line_bad),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_refresh_file),
		cmocka_unit_test(test_refresh_wrong_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
