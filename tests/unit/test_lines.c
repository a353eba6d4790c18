/* test_lines.c — source lines and inlined frames read from a real DWARF file: this test's own
 * binary (built with -g), whose helper() below the compiler must inline (always_inline) into
 * outer_a() and outer_b(). */
#include "proftop/lines.h"

#include "proftop/module.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	s->lines = lines_new(s->elf, true, &why);
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
	assert_null(lines_new(NULL, true, &why));
	assert_non_null(why);
	why = NULL;
	assert_null(lines_new(elf, true, &why));
	assert_non_null(why);
	elf_end(elf);
}

/* The frames libdw's own scope walk gives for addr (dwarf_getscopes, then the DIEs around the
 * innermost scope): the names and inlined flags lines_lookup() must give, which reads them from
 * its index instead. Returns how many, innermost first. */
static size_t reference_frames(Dwarf *dwarf, uint64_t addr, const char **names, bool *inlined)
{
	Dwarf_Die cu, *scopes = NULL;
	size_t n = 0;
	int nscopes;

	if (!dwarf_addrdie(dwarf, addr, &cu))
		return 0;
	nscopes = dwarf_getscopes(&cu, addr, &scopes);
	if (nscopes > 0) {
		Dwarf_Die innermost = scopes[0];

		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&innermost, &scopes);
	}
	for (int i = 0; i < nscopes && n < LINES_MAX_FRAMES; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute attr;
		const char *linkage;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		linkage = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
		names[n] = linkage ? linkage : dwarf_diename(&scopes[i]);
		inlined[n++] = tag == DW_TAG_inlined_subroutine;
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
	return n;
}

/* The section named name of elf: its header in *shdr. */
static bool section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, shdr) && shdr->sh_name &&
		    !strcmp(elf_strptr(elf, shstrndx, shdr->sh_name) ?: "", name))
			return true;
	return false;
}

/* Over this binary's code (every address of its first 8 KiB, every 31st after),
 * the index gives the chains libdw's walk gives: the same functions, inlined the same way. */
static void index_agrees_with_libdw(void **state)
{
	struct self *s = *state;
	Dwarf *dwarf = dwarf_begin_elf(s->elf, DWARF_C_READ, NULL);
	GElf_Shdr text;
	size_t compared = 0, inlined_seen = 0;

	assert_non_null(dwarf);
	assert_true(section(s->elf, ".text", &text));
	for (uint64_t a = text.sh_addr; a < text.sh_addr + text.sh_size;
	     a += a - text.sh_addr < (8u << 10) ? 1 : 31) {
		struct lines_frame f[LINES_MAX_FRAMES];
		const char *names[LINES_MAX_FRAMES];
		bool inlined[LINES_MAX_FRAMES];
		size_t want = reference_frames(dwarf, a, names, inlined);
		size_t n = lines_lookup(s->lines, a, f, LINES_MAX_FRAMES);

		if (!want)
			continue;
		if (n != want)
			fail_msg("0x%llx: %zu frames, libdw has %zu", (unsigned long long)a, n, want);
		for (size_t i = 0; i < n; i++) {
			/* Demangled here, plain in the reference: C names are the same. */
			if (!f[i].function || !names[i] || strcmp(f[i].function, names[i]))
				fail_msg("0x%llx frame %zu: %s, libdw has %s", (unsigned long long)a, i,
					 f[i].function ?: "(none)", names[i] ?: "(none)");
			assert_int_equal(f[i].inlined, inlined[i]);
			inlined_seen += inlined[i];
		}
		compared++;
	}
	assert_true(compared > 5000);
	assert_true(inlined_seen > 100);
	assert_null(lines_error(s->lines));
	dwarf_end(dwarf);
}

/* This binary's bytes with section name overwritten with byte. */
static char *corrupted_copy(struct self *s, const char *name, int byte, size_t *size)
{
	GElf_Shdr shdr;
	struct stat st;
	char *image;

	assert_true(section(s->elf, name, &shdr));
	assert_int_equal(fstat(s->fd, &st), 0);
	image = malloc((size_t)st.st_size);
	assert_non_null(image);
	assert_int_equal(pread(s->fd, image, (size_t)st.st_size, 0), st.st_size);
	memset(image + shdr.sh_offset, byte, shdr.sh_size);
	*size = (size_t)st.st_size;
	return image;
}

/* Corrupt DWARF: lookups find what the rest still gives, and lines_error() names the part that
 * libdw refused. With a corrupt .debug_line the functions are still known, without their lines;
 * .debug_aranges is not needed at all. */
static void corrupt_sections(void **state)
{
	static const struct { const char *section; int byte; const char *error; bool names, lines; } cases[] = {
		{ ".debug_line", 0xff, "line table", true, false },
		{ ".debug_line", 0, "line table", true, false },
		{ ".debug_abbrev", 0xff, ".debug_abbrev", false, false },
		{ ".debug_info", 0xff, ".debug_info", false, false },
		{ ".debug_aranges", 0xff, NULL, true, true },
	};
	struct self *s = *state;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t size;
		char *image = corrupted_copy(s, cases[c].section, cases[c].byte, &size);
		Elf *elf = elf_memory(image, size);
		const char *why = NULL;
		struct lines *lines = lines_new(elf, true, &why);
		struct lines_frame f[LINES_MAX_FRAMES];
		size_t n;

		assert_non_null(lines);
		n = lines_lookup(lines, (uint64_t)(uintptr_t)outer_a - s->bias, f, LINES_MAX_FRAMES);
		if (cases[c].names) {
			assert_int_equal(n, 1);
			assert_string_equal(f[0].function, "outer_a");
			assert_int_equal(f[0].file != NULL, cases[c].lines);
		} else {
			assert_int_equal(n, 0);
		}
		if (!cases[c].error)
			assert_null(lines_error(lines));
		else if (!lines_error(lines) || !strstr(lines_error(lines), cases[c].error))
			fail_msg("%s: error \"%s\", want one about %s", cases[c].section,
				 lines_error(lines) ?: "(none)", cases[c].error);
		lines_free(lines);
		elf_end(elf);
		free(image);
	}
}

/* ---- memory ---------------------------------------------------------------------------------- */

/* The bytes in use on the heap: AddressSanitizer's allocator's count when it runs (glibc's
 * mallinfo2() then sees none of the blocks), else glibc's. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t heap_bytes(void)
{
	struct mallinfo2 m;

	if (__sanitizer_get_current_allocated_bytes)
		return __sanitizer_get_current_allocated_bytes();
	m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

/* Every address of the text range in steps of 97: most units of this binary (the whole engine
 * is linked in), their line tables and indexes. */
static size_t look_up_text(struct lines *lines, Elf *elf)
{
	struct lines_frame f[LINES_MAX_FRAMES];
	GElf_Shdr text;
	size_t found = 0;

	assert_true(section(elf, ".text", &text));
	for (uint64_t a = text.sh_addr; a < text.sh_addr + text.sh_size; a += 97)
		found += lines_lookup(lines, a, f, LINES_MAX_FRAMES) > 0;
	return found;
}

/* What lines_memory() counts is what the heap holds, within a third either way: libelf's copies
 * of the sections (a file read from its descriptor, as debug files are, or inflated), libdw's
 * units and line tables, the indexes. The file is this binary, or a copy of it with its debug
 * sections compressed (objcopy, as Debian's debug packages ship them). */
static void memory_of(const char *path, bool compressed)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t before, opened, counted_open, measured, counted;
	const char *why = NULL;
	struct lines *lines;
	Elf *elf;

	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	before = heap_bytes();
	lines = lines_new(elf, false, &why);
	if (!lines)
		fail_msg("%s: %s", path, why);
	opened = heap_bytes() - before;
	counted_open = lines_memory(lines);
	assert_true(look_up_text(lines, elf) > 1000);
	measured = heap_bytes() - before;
	counted = lines_memory(lines);
	if (counted < measured * 2 / 3 || counted > measured * 3 / 2)
		fail_msg("%s: %zu bytes counted, %zu held", compressed ? "compressed" : "plain", counted,
			 measured);
	/* The line tables and indexes read by the lookups are counted as they are read. */
	if (counted - counted_open < (measured - opened) * 2 / 3)
		fail_msg("%s: lookups took %zu bytes, %zu counted", compressed ? "compressed" : "plain",
			 measured - opened, counted - counted_open);
	lines_free(lines);
	elf_end(elf);
	close(fd);
}

static void memory_counted(void **state)
{
	char dir[] = "/tmp/proftop-lines-XXXXXX", self[4096], copy[64], cmd[4224];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	memory_of("/proc/self/exe", false);
	assert_true(len > 0);
	self[len] = 0;
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/z", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' %s", self, copy);
	if (system(cmd))
		fail_msg("objcopy (binutils) could not compress a copy of this binary");
	memory_of(copy, true);
	unlink(copy);
	rmdir(dir);
}

/* A mapped image: its uncompressed sections are file pages, not counted (module.c gives them
 * back); the same file read from its descriptor counts them, .debug_info among them. */
static void memory_mapped(void **state)
{
	struct self *s = *state;
	Elf *elf = elf_begin(s->fd, ELF_C_READ, NULL);
	struct lines *read, *mapped;
	const char *why = NULL;
	GElf_Shdr info;

	assert_non_null(elf);
	assert_true(section(s->elf, ".debug_info", &info));
	read = lines_new(elf, false, &why);
	mapped = lines_new(s->elf, true, &why);
	assert_non_null(read);
	assert_non_null(mapped);
	assert_true(lines_memory(mapped) < info.sh_size);
	assert_true(lines_memory(read) > lines_memory(mapped) + info.sh_size);
	lines_free(mapped);
	lines_free(read);
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
		cmocka_unit_test(index_agrees_with_libdw),
		cmocka_unit_test(corrupt_sections),
		cmocka_unit_test(memory_counted),
		cmocka_unit_test(memory_mapped),
	};

	return cmocka_run_group_tests(tests, open_self, close_self);
}
