/* test_perfmap.c — the /tmp/perf-PID.map parser: lines good and bad, later lines winning (also
 * across parses, in any order, against a plain model), incremental parsing of a growing file,
 * refresh from a real file, and the limits a huge or hostile map meets (long names and lines,
 * entries, name bytes, the time a refresh may take: it stops at its deadline and the next goes on
 * from there; a file only touched, or rewritten, is told apart by its content), and a jitdump
 * found by its mapping (V8's --perf-prof, outside /tmp). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proftop/jitdump.h"
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

/* Lines parsed in pieces, in random order of starts with many written again: each lookup is what
 * a plain model says, the last line read for the greatest start at or below the address. */
static void test_parse_pieces_model(void **state)
{
	enum { LINES = 20000, STARTS = 3000 };
	static uint64_t start[LINES], size[LINES];
	static size_t last[STARTS];
	static char text[LINES * 40];
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	size_t len = 0, used = 0, piece = 1;
	unsigned seed = 7;

	(void)state;
	for (size_t i = 0; i < LINES; i++) {
		start[i] = 0x1000 + 0x40 * (uint64_t)(rand_r(&seed) % STARTS);
		size[i] = 1 + (uint64_t)(rand_r(&seed) % 0x80);
		len += (size_t)sprintf(text + len, "%llx %llx f%zu\n", (unsigned long long)start[i],
				       (unsigned long long)size[i], i);
	}
	/* Pieces of 1, 2, 4, ... bytes, then the rest: each parse takes whole lines, and the
	 * next goes on from there. */
	while (used < len) {
		size_t n = piece < len - used ? piece : len - used;

		used += perfmap_parse(map, text + used, n);
		piece *= 2;
	}
	/* The model: the last line of each start. */
	for (size_t k = 0; k < STARTS; k++)
		last[k] = LINES;
	for (size_t i = 0; i < LINES; i++)
		last[(start[i] - 0x1000) / 0x40] = i;
	for (uint64_t addr = 0xff0; addr < 0x1000 + 0x40 * STARTS + 0x100; addr += 3) {
		size_t k = addr < 0x1000 ? STARTS : (size_t)((addr - 0x1000) / 0x40), best = LINES;
		char want[16];

		if (k > STARTS - 1 && addr >= 0x1000)
			k = STARTS - 1;
		for (; k < STARTS && best == LINES; k--)
			best = last[k];
		if (best == LINES || addr >= start[best] + size[best]) {
			assert_null(perfmap_lookup(map, addr));
			continue;
		}
		sprintf(want, "f%zu", best);
		assert_string_equal(perfmap_lookup(map, addr), want);
	}
	perfmap_free(map);
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
	assert_int_equal(perfmap_refresh(map, getpid(), 1000, UINT64_MAX), 0);
	old = perfmap_lookup(map, 0x10010);
	assert_string_equal(old, "jit_one");

	/* Appended, but within the recheck interval: not seen yet. */
	fputs("20000 100 jit_two\n", file);
	fflush(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS - 1, UINT64_MAX), 0);
	assert_null(perfmap_lookup(map, 0x20010));
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS, UINT64_MAX), 0);
	assert_string_equal(perfmap_lookup(map, 0x20010), "jit_two");
	assert_ptr_equal(perfmap_lookup(map, 0x10010), old);
	fclose(file);

	/* Rewritten shorter: parsed from scratch. */
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("30000 10 c\n", file);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + 2 * PERFMAP_RECHECK_NS, UINT64_MAX), 0);
	assert_null(perfmap_lookup(map, 0x10010));
	assert_string_equal(perfmap_lookup(map, 0x30000), "c");
	/* The old name is still valid memory. */
	assert_string_equal(old, "jit_one");

	/* Gone: an error, and what was known stays. */
	unlink(path);
	assert_true(perfmap_refresh(map, getpid(), 1000 + 3 * PERFMAP_RECHECK_NS, UINT64_MAX) < 0);
	assert_string_equal(perfmap_lookup(map, 0x30000), "c");
	perfmap_free(map);
	strpool_free(pool);
}

/* A jitdump at path: its header (40 bytes) and one code load of name at addr, 16 bytes long. */
static void write_dump(const char *path, uint64_t addr, const char *name)
{
	uint8_t buf[256] = { 0 };
	uint32_t magic = JITDUMP_MAGIC, version = 1, header = 40, id = JITDUMP_CODE_LOAD;
	uint32_t total = (uint32_t)(56 + strlen(name) + 1);
	uint64_t size = 16;
	FILE *file = fopen(path, "w");

	assert_non_null(file);
	memcpy(buf, &magic, 4);
	memcpy(buf + 4, &version, 4);
	memcpy(buf + 8, &header, 4);
	memcpy(buf + 40, &id, 4);
	memcpy(buf + 44, &total, 4);
	memcpy(buf + 40 + 32, &addr, 8);
	memcpy(buf + 40 + 40, &size, 8);
	memcpy(buf + 40 + 56, name, strlen(name) + 1);
	assert_int_equal(fwrite(buf, 1, 40 + total, file), 40 + total);
	fclose(file);
}

/* A dump the process mapped is read where it is, if its name is the process's: not another
 * pid's (a forked child maps its parent's), nor a relative path. */
static void test_mapped_dump(void **state)
{
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	char dir[] = "/tmp/test_perfmap.XXXXXX", mine[96], other[96];
	uint64_t now = 1000;

	(void)state;
	assert_true(perfmap_dump_name("/x/jit-12.dump") && perfmap_dump_name("jit-7.dump"));
	assert_false(perfmap_dump_name("/x/jit-.dump") || perfmap_dump_name("/x/jit-12.dumpy") ||
		     perfmap_dump_name("/x/jit-12.dump (deleted)") ||
		     perfmap_dump_name("/x/jit-1234567890.dump") || perfmap_dump_name("/x/perf-1.map") ||
		     perfmap_dump_name("/x/jit-0.dump"));
	assert_non_null(mkdtemp(dir));
	snprintf(mine, sizeof(mine), "%s/jit-%d.dump", dir, (int)getpid());
	snprintf(other, sizeof(other), "%s/jit-%d.dump", dir, (int)getpid() + 1);
	write_dump(mine, 0x5000, "JS:*mine");
	write_dump(other, 0x5000, "JS:*other");
	assert_true(perfmap_wants_dump(map));
	perfmap_offer_dump(map, strrchr(mine, '/') + 1); /* relative: refused */
	assert_true(perfmap_wants_dump(map));
	/* Before the map knows the process, another pid's is taken, but never read. */
	perfmap_offer_dump(map, other);
	assert_false(perfmap_wants_dump(map));
	perfmap_refresh(map, getpid(), now, UINT64_MAX);
	assert_null(perfmap_lookup(map, 0x5004));
	/* Now it knows: it wants the process's own, and refuses the other. */
	assert_true(perfmap_wants_dump(map));
	perfmap_offer_dump(map, other);
	assert_true(perfmap_wants_dump(map));
	perfmap_offer_dump(map, mine);
	perfmap_refresh(map, getpid(), now + PERFMAP_RECHECK_NS, UINT64_MAX);
	assert_string_equal(perfmap_lookup(map, 0x5004), "JS:*mine");
	assert_false(perfmap_wants_dump(map));
	perfmap_free(map);
	unlink(mine);
	unlink(other);
	rmdir(dir);
	strpool_free(pool);
}

/* A buffer of n lines "START 10 NAME", START from base in steps of 0x10, built by name(). */
static char *lines(size_t n, uint64_t base, void (*name)(char *out, size_t i), size_t *len)
{
	char *buf = malloc(n * 64), item[40];
	size_t pos = 0;

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++) {
		name(item, i);
		pos += (size_t)sprintf(buf + pos, "%llx 10 %s\n", (unsigned long long)(base + 16 * i),
				       item);
	}
	*len = pos;
	return buf;
}

static void name_of_16(char *out, size_t i)
{
	sprintf(out, "fn%zu", i % 16);
}

static void name_unique(char *out, size_t i)
{
	sprintf(out, "n%019zu", i);
}

static void test_long_name_cut(void **state)
{
	char line[8 + 5000];
	struct perfmap_entry e;

	(void)state;
	memcpy(line, "1000 10 ", 8);
	memset(line + 8, 'a', 5000);
	assert_int_equal(perfmap_parse_line(line, sizeof(line), &e), 0);
	assert_int_equal(e.name_len, PERFMAP_NAME_MAX);
	assert_true(e.cut);
	/* "é" (C3 A9) across the limit: cut before it, not between its bytes. */
	memcpy(line + 8 + PERFMAP_NAME_MAX - 1, "\xc3\xa9", 2);
	assert_int_equal(perfmap_parse_line(line, sizeof(line), &e), 0);
	assert_int_equal(e.name_len, PERFMAP_NAME_MAX - 1);
	/* Exactly at the limit: whole. */
	assert_int_equal(perfmap_parse_line(line, 8 + PERFMAP_NAME_MAX - 1, &e), 0);
	assert_false(e.cut);
	assert_int_equal(e.name_len, PERFMAP_NAME_MAX - 1);
}

/* A line far longer than a name may be: its head names the function, the rest is skipped, even
 * when it arrives in a later call and looks like a line of its own. */
static void test_overlong_line(void **state)
{
	static const char fake[] = "3000 10 fake\n2000 10 after\n";
	size_t head = 8 + 100000, used;
	char *buf = malloc(head + sizeof(fake));
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);

	(void)state;
	assert_non_null(buf);
	memcpy(buf, "1000 10 ", 8);
	memset(buf + 8, 'x', head - 8);
	memcpy(buf + head, fake, sizeof(fake));
	used = perfmap_parse(map, buf, head);
	assert_int_equal(used, head);
	assert_int_equal(strlen(perfmap_lookup(map, 0x1000)), PERFMAP_NAME_MAX);
	used += perfmap_parse(map, buf + used, head + sizeof(fake) - 1 - used);
	assert_int_equal(used, head + sizeof(fake) - 1);
	assert_null(perfmap_lookup(map, 0x3000));
	assert_string_equal(perfmap_lookup(map, 0x2000), "after");
	assert_int_equal(perfmap_count(map), 2);
	assert_int_equal(perfmap_cut_names(map), 1);
	assert_int_equal(perfmap_skipped(map), 0);
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

/* An overlong line whose name starts late (leading zeros) has a head that ends inside a
 * character: its name is cut before that character. */
static void test_overlong_line_cut_whole(void **state)
{
	size_t zeros = PERFMAP_LINE_MAX - 8 - 101, len = PERFMAP_LINE_MAX + 100, at;
	char *buf = malloc(len + 1);
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	const char *name;

	(void)state;
	assert_non_null(buf);
	memset(buf, '0', zeros);
	memcpy(buf + zeros, "1000 10 ", 8);
	for (at = zeros + 8; at + 2 <= len; at += 2)
		memcpy(buf + at, "\xc3\xa9", 2); /* é: the head's last byte is its first half */
	buf[at] = '\n';
	assert_int_equal((PERFMAP_LINE_MAX - zeros - 8) % 2, 1);
	perfmap_parse(map, buf, at + 1);
	name = perfmap_lookup(map, 0x1000);
	assert_non_null(name);
	assert_int_equal(strlen(name), PERFMAP_LINE_MAX - zeros - 8 - 1);
	assert_int_equal((unsigned char)name[strlen(name) - 1], 0xa9);
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

/* Past PERFMAP_ENTRIES_MAX distinct starts new ones are skipped and counted; a known start is
 * still replaced. */
static void test_entries_limit(void **state)
{
	size_t len, extra = 1000;
	char *buf = lines(PERFMAP_ENTRIES_MAX + extra, 0x100000, name_of_16, &len);
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);

	(void)state;
	assert_int_equal(perfmap_parse(map, buf, len), len);
	assert_int_equal(perfmap_count(map), PERFMAP_ENTRIES_MAX);
	assert_int_equal(perfmap_skipped(map), extra);
	assert_string_equal(perfmap_lookup(map, 0x100000 + 16 * (PERFMAP_ENTRIES_MAX - 1)), "fn15");
	assert_null(perfmap_lookup(map, 0x100000 + 16 * PERFMAP_ENTRIES_MAX));
	perfmap_parse(map, "100000 10 replaced\n", 19);
	assert_string_equal(perfmap_lookup(map, 0x100000), "replaced");
	assert_int_equal(perfmap_count(map), PERFMAP_ENTRIES_MAX);
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

/* Starts written again (code compiled again at the same place) do not fill the map: in one read
 * of more lines than it holds, half of them written twice, no line is skipped. */
static void test_entries_replaced_not_counted(void **state)
{
	size_t len, more_len, half = PERFMAP_ENTRIES_MAX / 2, extra = 1000;
	char *buf = lines(half, 0x100000, name_of_16, &len), *more, *all;
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);

	(void)state;
	more = lines(extra, 0x100000 + 16 * half, name_of_16, &more_len);
	all = malloc(2 * len + more_len);
	assert_non_null(all);
	memcpy(all, buf, len);
	memcpy(all + len, buf, len);
	memcpy(all + 2 * len, more, more_len);
	assert_int_equal(perfmap_parse(map, all, 2 * len + more_len), 2 * len + more_len);
	free(all);
	assert_int_equal(perfmap_count(map), half + extra);
	assert_int_equal(perfmap_skipped(map), 0);
	assert_string_equal(perfmap_lookup(map, 0x100000 + 16 * (half + extra - 1)), "fn7");
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
	free(more);
}

/* New names stop at PERFMAP_NAMES_MAX of pool cost; names the pool has cost nothing. */
static void test_names_limit(void **state)
{
	size_t keep = PERFMAP_NAMES_MAX / strpool_cost(20), len;
	char *buf = lines(keep + 1000, 0x100000, name_unique, &len);
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	char line[64];

	(void)state;
	perfmap_parse(map, buf, len);
	assert_int_equal(perfmap_count(map), keep);
	assert_int_equal(perfmap_skipped(map), 1000);
	sprintf(line, "10 10 n%019d\n", 7);
	perfmap_parse(map, line, strlen(line));
	assert_string_equal(perfmap_lookup(map, 0x10), "n0000000000000000007");
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

static FILE *own_map(char *path, size_t size)
{
	FILE *file;

	snprintf(path, size, "/tmp/perf-%d.map", (int)getpid());
	file = fopen(path, "w");
	assert_non_null(file);
	return file;
}

/* A file read a chunk at a time: lines across chunk boundaries are whole, not cut. */
static void test_refresh_many_lines(void **state)
{
	size_t n = 40000, len;
	char path[64], *buf = lines(n, 0x100000, name_unique, &len), want[40];
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	FILE *file = own_map(path, sizeof(path));

	(void)state;
	assert_int_equal(fwrite(buf, 1, len, file), len);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000, UINT64_MAX), 0);
	assert_int_equal(perfmap_count(map), n);
	for (size_t i = 0; i < n; i++) {
		name_unique(want, i);
		assert_string_equal(perfmap_lookup(map, 0x100000 + 16 * i), want);
	}
	unlink(path);
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

/* A long line still being written is read no further than its head, and skipped up to its end
 * when the writer gets there. */
static void test_refresh_long_line(void **state)
{
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	char path[64];
	FILE *file = own_map(path, sizeof(path));
	const char *name;

	(void)state;
	fputs("1000 10 one\n3000 10 ", file);
	for (int i = 0; i < 300000; i++)
		putc('y', file);
	fflush(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000, UINT64_MAX), 0);
	name = perfmap_lookup(map, 0x3000);
	assert_non_null(name);
	assert_int_equal(strlen(name), PERFMAP_NAME_MAX);
	for (int i = 0; i < 300000; i++)
		putc('y', file);
	fputs(" 5000 10 not-a-line\n4000 10 four\n", file);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS, UINT64_MAX), 0);
	assert_string_equal(perfmap_lookup(map, 0x4000), "four");
	assert_ptr_equal(perfmap_lookup(map, 0x3000), name);
	assert_null(perfmap_lookup(map, 0x5000));
	assert_string_equal(perfmap_lookup(map, 0x1000), "one");
	assert_int_equal(perfmap_count(map), 3);
	assert_int_equal(perfmap_cut_names(map), 1);
	unlink(path);
	perfmap_free(map);
	strpool_free(pool);
}

/* A refresh past its deadline reads one chunk and stops; the next goes on from there, and one
 * with time enough reads the rest. The map says meanwhile since when it is behind. */
static void test_refresh_deadline(void **state)
{
	size_t n = 100000, len, first, second;
	char path[64], *buf = lines(n, 0x100000, name_unique, &len), want[40];
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	FILE *file = own_map(path, sizeof(path));
	uint64_t now = 1000;

	(void)state;
	assert_int_equal(fwrite(buf, 1, len, file), len);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), now, 0), 0);
	first = perfmap_count(map);
	assert_true(first > 0 && first < n / 4);
	assert_string_equal(perfmap_lookup(map, 0x100000), "n0000000000000000000");
	assert_null(perfmap_lookup(map, 0x100000 + 16 * (n - 1)));
	assert_true(perfmap_behind_since(map) == now);

	now += PERFMAP_RECHECK_NS;
	assert_int_equal(perfmap_refresh(map, getpid(), now, 0), 0);
	second = perfmap_count(map);
	/* Went on: about as much again, not the same chunk read anew. */
	assert_true(second > first && second <= 2 * first + 1);
	assert_true(perfmap_behind_since(map) == 1000);

	now += PERFMAP_RECHECK_NS;
	assert_int_equal(perfmap_refresh(map, getpid(), now, UINT64_MAX), 0);
	assert_int_equal(perfmap_count(map), n);
	assert_int_equal(perfmap_behind_since(map), 0);
	for (size_t i = 0; i < n; i += 997) {
		name_unique(want, i);
		assert_string_equal(perfmap_lookup(map, 0x100000 + 16 * i), want);
	}
	unlink(path);
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

/* A file whose times change but whose content does not (touched) is not read again: a refresh
 * with no time at all still knows every function. */
static void test_refresh_touched(void **state)
{
	size_t n = 100000, len;
	char path[64], *buf = lines(n, 0x100000, name_unique, &len);
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	FILE *file = own_map(path, sizeof(path));
	struct timespec times[2] = { { 12345, 0 }, { 12345, 678 } };

	(void)state;
	assert_int_equal(fwrite(buf, 1, len, file), len);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000, UINT64_MAX), 0);
	assert_int_equal(perfmap_count(map), n);
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS, 0), 0);
	assert_int_equal(perfmap_count(map), n);
	assert_string_equal(perfmap_lookup(map, 0x100000 + 16 * (n - 1)), "n0000000000000099999");
	unlink(path);
	perfmap_free(map);
	strpool_free(pool);
	free(buf);
}

/* A file rewritten in place, to the same size or longer, no longer holds what was read: it is
 * read anew, and the functions only the old one named are gone. */
static void test_refresh_rewritten(void **state)
{
	struct strpool *pool = strpool_new();
	struct perfmap *map = perfmap_new(pool);
	char path[64];
	FILE *file = own_map(path, sizeof(path));

	(void)state;
	fputs("1000 10 old_one\n2000 10 old_two\n", file);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000, UINT64_MAX), 0);
	assert_string_equal(perfmap_lookup(map, 0x2000), "old_two");
	/* Same size, same inode (opened for writing, not replaced), other lines. */
	file = fopen(path, "r+");
	assert_non_null(file);
	fputs("3000 10 new_one\n4000 10 new_two\n", file);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + PERFMAP_RECHECK_NS, UINT64_MAX), 0);
	assert_null(perfmap_lookup(map, 0x1000));
	assert_string_equal(perfmap_lookup(map, 0x4000), "new_two");
	assert_int_equal(perfmap_count(map), 2);
	/* Truncated and written longer: the same. */
	file = fopen(path, "w");
	assert_non_null(file);
	fputs("5000 10 newer_one\n6000 10 newer_two\n7000 10 newer_three\n", file);
	fclose(file);
	assert_int_equal(perfmap_refresh(map, getpid(), 1000 + 2 * PERFMAP_RECHECK_NS, UINT64_MAX),
			 0);
	assert_null(perfmap_lookup(map, 0x3000));
	assert_string_equal(perfmap_lookup(map, 0x7000), "newer_three");
	assert_int_equal(perfmap_count(map), 3);
	unlink(path);
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
	assert_int_equal(perfmap_refresh(map, getpid(), 1000, UINT64_MAX), -EPERM);
	assert_null(perfmap_lookup(map, 0x10010));
	unlink(path);
	perfmap_free(map);
	strpool_free(pool);
}

/* /proc/PID/status as the kernel writes it gives the owner and the namespace pid; numbers it
 * never writes (signed, cut by other text, overflowing) say nothing. fuzz_status found the parser
 * taking "NSpid:\t4294967297" for pid 1 and "Uid:\t-1\t-1" for uid (uid_t)-1. */
static void test_status_lines(void **state)
{
	static const char *const ignored[] = {
		"Uid:\t-1\t-1\t-1\t-1\n", "Uid:\t+5\t5\n", "Uid:\t4294967295\t0\n",
		"Uid:\t99999999999\t0\n", "Uid:\t5x\t5\n", "Uid:\t5\n", "Uid:\t5\t6x\n",
		"NSpid:\t4294967297\n", "NSpid:\t1035x\n", "NSpid:\t0\n", "NSpid:\t-3\n",
		"NSpid:\t7\t18446744073709551616\n", "NSpid\t5\n", "Name:\tUid:\t7\t7\n",
	};
	struct perfmap_owner o = { .uid = { 11, 12 }, .nspid = 13 };

	(void)state;
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		perfmap_status_line(ignored[i], &o);
		assert_false(o.has_uid);
		assert_true(o.uid[0] == 11 && o.uid[1] == 12 && o.nspid == 13);
	}
	perfmap_status_line("Uid:\t1000\t1001\t1000\t1000\n", &o);
	assert_true(o.has_uid && o.uid[0] == 1000 && o.uid[1] == 1001);
	perfmap_status_line("Uid:\t4294967294\t0", &o);
	assert_true(o.uid[0] == 4294967294u && o.uid[1] == 0);
	perfmap_status_line("NSpid:\t10355\t1\n", &o);
	assert_int_equal(o.nspid, 1);
	perfmap_status_line("NSpid:\t10355\t2147483647 \n", &o);
	assert_int_equal(o.nspid, 2147483647);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line_good),
		cmocka_unit_test(test_parse_line_bad),
		cmocka_unit_test(test_status_lines),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_parse_pieces_model),
		cmocka_unit_test(test_refresh_file),
		cmocka_unit_test(test_refresh_wrong_owner),
		cmocka_unit_test(test_mapped_dump),
		cmocka_unit_test(test_long_name_cut),
		cmocka_unit_test(test_overlong_line),
		cmocka_unit_test(test_overlong_line_cut_whole),
		cmocka_unit_test(test_entries_limit),
		cmocka_unit_test(test_entries_replaced_not_counted),
		cmocka_unit_test(test_names_limit),
		cmocka_unit_test(test_refresh_many_lines),
		cmocka_unit_test(test_refresh_long_line),
		cmocka_unit_test(test_refresh_deadline),
		cmocka_unit_test(test_refresh_touched),
		cmocka_unit_test(test_refresh_rewritten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
