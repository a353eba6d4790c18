/* libFuzzer target: the disassembly annotate shows (disasm.c, capstone) over hostile bytes. Every
 * input is disassembled twice:
 *  - as code (disasm_bytes() at an address from its first 8 bytes): the instructions must start
 *    at the first byte, each where the one before ends (1 to 15 bytes each), and reach the last
 *    one: a byte capstone cannot decode is shown as data, not the end of the listing (annotate
 *    counts the samples in an instruction's bytes). Each text is printable ASCII, NUL-terminated
 *    in its field;
 *  - as an ELF file (a memfd; disasm_function(), which reads the file, its symbols and DWARF):
 *    every function a module read from the same bytes finds in its code is disassembled the same
 *    way, the instructions inside it, their source files touched; a range that is not a function
 *    of the file is refused as stale, one too big as such. The code inlined there
 *    (disasm_inlined(), for the unnamed inlined functions and for the one the DWARF has at the
 *    function's start) is some of those instructions, or an error that says why.
 *
 * Seeds in corpus/fuzz_disasm: the ELF seeds of fuzz_lines (inline.so, DWARF 5 lines) and
 * fuzz_module (seed.so), and raw code: the .text of a -O2 build of tests/workloads/lines.c,
 * VEX/EVEX (AVX-512) encodings, prefixes past the 15-byte limit, bytes invalid in 64-bit mode. */
#include "proftop/disasm.h"
#include "proftop/lines.h"
#include "proftop/module.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FUNCS 16
#define SCAN_STEPS 8192

static void check_insns(const struct disasm_insn *insns, size_t n, uint64_t start, uint64_t end)
{
	if (end > start && !n)
		abort();
	for (size_t i = 0; i < n; i++) {
		const char *t = insns[i].text;
		size_t len = strnlen(t, sizeof(insns[i].text));

		if (len == sizeof(insns[i].text) || !len)
			abort();
		for (size_t k = 0; k < len; k++)
			if (t[k] < 0x20 || t[k] > 0x7e)
				abort();
		if (insns[i].addr < start || insns[i].addr >= end)
			abort();
		if (i ? insns[i].addr != insns[i - 1].addr + insns[i - 1].size
		      : insns[i].addr != start)
			abort();
		if (!insns[i].size || insns[i].size > 15)
			abort();
		if (insns[i].file && strlen(insns[i].file) > (1u << 30))
			abort();
	}
	if (n && insns[n - 1].addr + insns[n - 1].size != end)
		abort();
}

/* The code of [start, end) inlined from name: some of its instructions, by address, each whole. */
static void check_inlined(struct disasm *d, const char *path, const char *name, uint64_t start,
			  uint64_t end)
{
	struct disasm_range range = { start, end };
	struct disasm_insn *insns;
	const char *why = NULL;
	size_t n;

	if (disasm_inlined(d, path, name, &range, 1, &insns, &n, &why)) {
		if (!why || insns || n)
			abort();
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (insns[i].addr < start || !insns[i].size || insns[i].size > 15 ||
		    insns[i].addr + insns[i].size > end ||
		    (i && insns[i].addr < insns[i - 1].addr + insns[i - 1].size))
			abort();
	free(insns);
}

static void check_code(struct disasm *d, const uint8_t *data, size_t size)
{
	struct disasm_insn *insns;
	uint64_t start = 0;
	size_t n;

	memcpy(&start, data, size < 8 ? size : 8);
	start &= 0x00ffffffffffffffull; /* room for the code after it */
	n = disasm_bytes(d, NULL, data, size, start, &insns);
	check_insns(insns, n, start, start + size);
	free(insns);
}

/* The functions a module read from the same bytes finds through its code, disassembled from the
 * file. */
static void check_file(struct disasm *d, const uint8_t *data, size_t size)
{
	struct module *mod = module_new("fuzz", 4);
	void *image = xmalloc(size ? size : 1);
	int fd = memfd_create("fuzz_disasm", MFD_CLOEXEC);
	const struct module_unwind *uw;
	struct disasm_insn *insns;
	const char *why;
	char path[64];
	size_t nfuncs = 0, n;

	memcpy(image, data, size);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	module_load_image(mod, image, size);
	uw = module_unwind(mod);
	/* An empty range is refused as too big once the file is read, else as the file is. */
	if (disasm_function(d, path, 1, 0, &insns, &n, &why) != -EFBIG)
		uw = NULL;
	/* Through the code a byte at a time for a while (its range may be anything), from one
	 * function's end to the next. */
	for (uint64_t a = uw ? uw->code_start : 0, steps = 0;
	     uw && a < uw->code_end && nfuncs < MAX_FUNCS && steps < SCAN_STEPS; steps++) {
		uint64_t start, end, s2, e2;
		struct lines_frame frames[LINES_MAX_FRAMES];
		int err;

		if (!module_lookup_range(mod, a, &start, &end) || end <= a) {
			a++;
			continue;
		}
		nfuncs++;
		err = disasm_function(d, path, start, end, &insns, &n, &why);
		if (!err)
			check_insns(insns, n, start, end);
		else if (!why || insns || n)
			abort();
		free(insns);
		check_inlined(d, path, "[inlined]", start, end);
		/* The function inlined at the start of the range, as the DWARF names it. */
		if (module_source(mod, start, frames, LINES_MAX_FRAMES - 1) && frames[0].inlined &&
		    frames[0].function)
			check_inlined(d, path, frames[0].function, start, end);
		/* Not a function of the file, and too big to be shown. */
		err = disasm_function(d, path, start + 1, end + 1, &insns, &n, &why);
		free(insns);
		if (err != -ESTALE && end - start <= DISASM_MAX_BYTES &&
		    !(module_lookup_range(mod, start + 1, &s2, &e2) && s2 == start + 1 && e2 == end + 1))
			abort();
		if (disasm_function(d, path, start, start + DISASM_MAX_BYTES + 1, &insns, &n, &why) !=
		    -EFBIG)
			abort();
		a = end;
	}
	module_free(mod);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready = -1;
	struct disasm *d;

	if (ready < 0)
		ready = module_init();
	if (ready)
		return 0;
	d = disasm_new();
	check_code(d, data, size);
	check_file(d, data, size);
	disasm_free(d);
	return 0;
}
