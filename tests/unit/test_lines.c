/* test_lines.c — source lines and inlined frames read from a real DWARF file: this test's own
 * binary (built with -g), whose helper() below the compiler must inline (always_inline) into
 * outer_a() and outer_b(). */
#include "proftop/lines.h"

#include "proftop/module.h"

#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static const unsigned helper_first_line = __LINE__ + 1;
static inline __attribute__((always_inline)) unsigned helper(unsigned x)
{
	for (unsigned i = 0; i < x % 7 + 3; i++)
		x = x * 2654435761u + i;
	return x;
}
static const unsigned helper_last_line = __LINE__ - 1;

static const unsigned call_line_a = __LINE__ + 3;
__attribute__((noinline)) unsigned outer_a(unsigned x)
{
	return helper(x) ^ 0x5a5a5a5au;
}

static const unsigned call_line_b = __LINE__ + 3;
__attribute__((noinline)) unsigned outer_b(unsigned x)
{
	return helper(x + 11) * 3u;
}

struct self {
	Elf *elf;
	int fd;
	uint64_t bias;     /* runtime address = link-time address + bias */
	struct lines *lines;
};

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr; /* the first object is the program */
	return 1;
}

static int open_self(void **state)
{
	struct self *s = calloc(1, sizeof(*s));
	const char *why = NULL;

	assert_non_null(s);
	assert_int_equal(module_init(), 0);
	s->fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(s->fd >= 0);
	s->elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(s->elf);
	dl_iterate_phdr(main_bias, &s->bias);
	s->lines = lines_new(s->elf, &why);
	if (!s->lines)
		fail_msg("no DWARF in the test binary: %s", why);
	*state = s;
	return 0;
}

static int close_self(void **state)
{
	struct self *s = *state;

	lines_free(s->lines);
	elf_end(s->elf);
	close(s->fd);
	free(s);
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* Some address of outer's code (from its start to where another function's begins) is inside
 * the inlined helper: its frames are helper (inlined, at one of its own lines), then outer at
 * the line of the call. */
static void inlined_into(struct self *s, unsigned (*outer)(unsigned), const char *name,
			 unsigned call_line)
{
	uint64_t start = (uint64_t)(uintptr_t)outer - s->bias;
	int found = 0;

	for (uint64_t a = start; a < start + 256; a++) {
		struct lines_frame f[LINES_MAX_FRAMES];
		size_t n = lines_lookup(s->lines, a, f, LINES_MAX_FRAMES);

		if (n && (!f[n - 1].function || strcmp(f[n - 1].function, name)))
			break; /* past the end of outer */
		if (n != 2 || !f[0].function || strcmp(f[0].function, "helper"))
			continue;
		assert_true(f[0].inlined);
		assert_true(ends_with(f[0].file, "test_lines.c"));
		assert_in_range(f[0].line, helper_first_line, helper_last_line);
		assert_false(f[1].inlined);
		assert_string_equal(f[1].function, name);
		assert_true(ends_with(f[1].file, "test_lines.c"));
		assert_int_equal(f[1].line, call_line);
		found++;
	}
	assert_true(found > 0);
}

static void inlined_frames(void **state)
{
	inlined_into(*state, outer_a, "outer_a", call_line_a);
	inlined_into(*state, outer_b, "outer_b", call_line_b);
}

/* The first instruction of a function is its own, at its opening line or the next. */
static void plain_function(void **state)
{
	struct self *s = *state;
	struct lines_frame f[LINES_MAX_FRAMES];
	size_t n = lines_lookup(s->lines, (uint64_t)(uintptr_t)outer_a - s->bias, f, LINES_MAX_FRAMES);

	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "outer_a");
	assert_false(f[0].inlined);
	assert_in_range(f[0].line, call_line_a - 2, call_line_a);
}

/* A chain cut at max keeps its innermost frames; no room, no frames. */
static void chain_cut(void **state)
{
	struct self *s = *state;
	uint64_t start = (uint64_t)(uintptr_t)outer_a - s->bias;
	struct lines_frame f[1];

	assert_int_equal(lines_lookup(s->lines, start, f, 0), 0);
	for (uint64_t a = start; a < start + 256; a++)
		if (lines_lookup(s->lines, a, f, 1) == 1 && f[0].function &&
		    !strcmp(f[0].function, "helper")) {
			assert_true(f[0].inlined);
			return;
		}
	fail_msg("no address of outer_a in helper");
}

/* Addresses no unit covers find nothing. */
static void outside(void **state)
{
	struct self *s = *state;
	struct lines_frame f[LINES_MAX_FRAMES];

	assert_int_equal(lines_lookup(s->lines, 0, f, LINES_MAX_FRAMES), 0);
	assert_int_equal(lines_lookup(s->lines, UINT64_MAX - 16, f, LINES_MAX_FRAMES), 0);
}

/* An ELF file without DWARF (a shipped, stripped binary) or no ELF at all: NULL, and why. */
static void no_dwarf(void **state)
{
	static char not_elf[] = "this is no ELF file at all";
	const char *why = NULL;
	Elf *elf = elf_memory(not_elf, sizeof(not_elf));

	(void)state;
	assert_null(lines_new(NULL, &why));
	assert_non_null(why);
	why = NULL;
	assert_null(lines_new(elf, &why));
	assert_non_null(why);
	elf_end(elf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inlined_frames),
		cmocka_unit_test(plain_function),
		cmocka_unit_test(chain_cut),
		cmocka_unit_test(outside),
		cmocka_unit_test(no_dwarf),
	};

	return cmocka_run_group_tests(tests, open_self, close_self);
}
