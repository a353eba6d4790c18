/* The /proc/kallsyms reader: lines as the kernel writes them and as it never does, lookups at
 * a function's edges, modules, aliases, lookups by name (of one name in two places, the core
 * kernel's), the hidden addresses of kptr_restrict, and the real file when it shows addresses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse(const char *line, struct kallsyms_line *l)
{
	return kallsyms_parse_line(line, strlen(line), l);
}

static void lines(void **state)
{
	struct kallsyms_line l;

	(void)state;
	assert_int_equal(parse("ffffffff81000000 T _stext", &l), 0);
	assert_true(l.addr == 0xffffffff81000000ull && l.type == 'T' && !l.module);
	assert_int_equal(l.name_len, 6);
	assert_memory_equal(l.name, "_stext", 6);
	assert_int_equal(parse("ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]", &l), 0);
	assert_int_equal(l.module_len, strlen("__builtin__ftrace"));
	assert_memory_equal(l.module, "__builtin__ftrace", l.module_len);
	assert_int_equal(parse("0000000000000000 T hidden", &l), 0);
	assert_true(l.addr == 0);
	/* What the kernel never writes. */
	static const char *const bad[] = {
		"", "ffffffff81000000", "ffffffff81000000 T", "ffffffff81000000 T ",
		"ffffffff8100000g T x", "1ffffffff81000000 T x", " T x", "ffff  T x",
		"ffffffff81000000 TT x", "ffffffff81000000 T a b", "ffffffff81000000 T x\t",
		"ffffffff81000000 T x\t[]", "ffffffff81000000 T x\t[m", "ffffffff81000000 T x\t[m] y",
		"ffffffff81000000 T x\tm", "ffffffff81000000 T x\t[m]]", "ffffffff81000000 T \x1b[2J",
		"ffffffff81000000 T x\t[\x07]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(parse(bad[i], &l), -EINVAL);
	char longname[KALLSYMS_NAME_MAX + 32];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "ffffffff81000000 T ", 19);
	assert_int_equal(parse(longname, &l), -EINVAL);
}

static void lookups(void **state)
{
	static const char text[] =
		"ffffffff81000100 T second\n"
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000050 D some_data\n"
		"ffffffff81000200 t static_one\r\n"
		"garbage line\n"
		"ffffffff81000300 W weak_one\n"
		"ffffffffc0001000 t mod_func\t[ext4]\n"
		"ffffffffc0002000 T last"; /* no newline at the end */
	struct kallsyms *k = kallsyms_parse(text, sizeof(text) - 1);
	uint64_t start;
	const char *module, *name;

	(void)state;
	assert_int_equal(kallsyms_count(k), 6); /* the alias and the data left out */
	assert_null(kallsyms_lookup(k, 0xffffffff80ffffffull, &start, &module));
	name = kallsyms_lookup(k, 0xffffffff81000000ull, &start, &module);
	assert_string_equal(name, "_stext"); /* of two aliases, the first by name */
	assert_string_equal(module, "[kernel.kallsyms]");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff810000ffull, &start, &module), "_stext");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000100ull, &start, &module), "second");
	assert_true(start == 0xffffffff81000100ull);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000250ull, &start, &module), "static_one");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000301ull, &start, &module), "weak_one");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0001010ull, &start, &module), "mod_func");
	assert_string_equal(module, "[ext4]");
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0002000ull + KALLSYMS_FUNC_MAX - 1, &start,
					    &module), "last");
	assert_null(kallsyms_lookup(k, 0xffffffffc0002000ull + KALLSYMS_FUNC_MAX, &start, &module));
	kallsyms_free(k);
}

/* By name: what kallsyms_lookup() says at its start; the core kernel's first of one name, a
 * module's when asked for; an alias left out and the data not found. */
static void finds(void **state)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t init_once\n"
		"ffffffff81000050 D some_data\n"
		"ffffffffc0001000 t init_once\t[ext4]\n"
		"ffffffffc0000000 t nfs_wait\t[nfs]\n"
		"ffffffff81000200 T zzz_last\n";
	struct kallsyms *k = kallsyms_parse(text, sizeof(text) - 1);
	uint64_t start, at;
	const char *module, *found, *looked;

	(void)state;
	found = kallsyms_find(k, "init_once", NULL, &start, &module);
	assert_string_equal(found, "init_once");
	assert_true(start == 0xffffffff81000100ull);
	assert_string_equal(module, "[kernel.kallsyms]");
	looked = kallsyms_lookup(k, start, &at, &module);
	assert_ptr_equal(looked, found);
	found = kallsyms_find(k, "init_once", "[ext4]", &start, &module);
	assert_true(start == 0xffffffffc0001000ull);
	assert_string_equal(module, "[ext4]");
	assert_non_null(kallsyms_find(k, "nfs_wait", NULL, &start, &module));
	assert_string_equal(module, "[nfs]");
	assert_string_equal(kallsyms_find(k, "zzz_last", NULL, &start, &module), "zzz_last");
	assert_string_equal(kallsyms_find(k, "_stext", NULL, &start, &module), "_stext");
	assert_null(kallsyms_find(k, "_text", NULL, &start, &module)); /* an alias of _stext */
	assert_null(kallsyms_find(k, "some_data", NULL, &start, &module));
	assert_null(kallsyms_find(k, "init_once", "[xfs]", &start, &module));
	assert_null(kallsyms_find(k, "", NULL, &start, &module));
	assert_null(kallsyms_find(k, "zzzz", NULL, &start, &module));
	kallsyms_free(k);
	k = kallsyms_parse("", 0);
	assert_null(kallsyms_find(k, "x", NULL, &start, &module));
	kallsyms_free(k);
}

/* kptr_restrict: every address 0. Nothing to look up, and load says why. */
static void hidden_addresses(void **state)
{
	char path[] = "/tmp/proftop-kallsyms.XXXXXX", *why;
	int fd = mkstemp(path);
	static const char text[] = "0000000000000000 T _stext\n0000000000000000 t schedule\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_null(kallsyms_load(path, &why));
	assert_non_null(strstr(why, "shows no function at an address (kernel.kptr_restrict"));
	free(why);
	unlink(path);
	assert_null(kallsyms_load("/nonexistent/kallsyms", &why));
	assert_non_null(strstr(why, "/nonexistent/kallsyms: No such file or directory"));
	free(why);
}

/* The real file, where it shows addresses (root here): the scheduler is in it. */
static void real_file(void **state)
{
	char *why;
	struct kallsyms *k = kallsyms_load(NULL, &why);
	uint64_t start, start2;
	const char *module, *name = NULL;

	(void)state;
	if (!k) {
		print_message("skipped: %s\n", why);
		free(why);
		return;
	}
	assert_true(kallsyms_count(k) > 1000);
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[1024];
	unsigned long long addr = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " T schedule\n") && sscanf(line, "%llx", &addr) == 1)
			break;
	fclose(f);
	assert_true(addr != 0);
	name = kallsyms_lookup(k, addr + 1, &start, &module);
	assert_non_null(name);
	assert_true(start <= addr + 1);
	assert_string_equal(module, "[kernel.kallsyms]");
	/* schedule, or an alias at its address */
	assert_non_null(kallsyms_lookup(k, addr, &start2, &module));
	assert_true(start2 == addr);
	/* and found by name where it is */
	assert_non_null(kallsyms_find(k, "schedule", NULL, &start2, &module));
	assert_true(start2 == addr);
	kallsyms_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines),
		cmocka_unit_test(lookups),
		cmocka_unit_test(finds),
		cmocka_unit_test(hidden_addresses),
		cmocka_unit_test(real_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
