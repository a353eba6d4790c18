/* libFuzzer target: the ELF module reader (module.c) on arbitrary bytes, read from memory as the
 * vdso's image is: headers, segments, symbol tables, notes, unwind tables, .debug_frame compressed
 * or not. The loaded module is then looked up at many addresses, its unwind tables are touched and
 * reads of arbitrary ranges are asked of it, none of which may reach past the image (a copy of the
 * input of its exact size, so AddressSanitizer sees any read past it). Its CFI rows
 * (unwind_rules.h) are read through the cache at input words and across its code, and must be
 * well formed. Source lines are asked at
 * some input words, which opens the image's DWARF, and what the module says is wrong with it
 * (or with the file's extent) is touched. No file, no process, no debug-file search is
 * involved.
 *
 * Seeds in corpus/fuzz_module: seed.so is a 5.6 KiB shared object of three small functions, built
 * with gcc -O1 -shared -fPIC -nostdlib -Wl,-z,max-page-size=0x1000 -Wl,-z,noseparate-code
 * -Wl,--build-id and stripped of .comment: headers, .symtab, .dynsym and a build-id note to
 * mutate. debug_frame.so is four functions built the same way with -g
 * -fno-asynchronous-unwind-tables, all debug sections but .debug_frame removed and that one
 * compressed (objcopy --compress-debug-sections=zlib): no .eh_frame_hdr, a zlib .debug_frame.
 * go.so is seed.so dressed as a Go program (objcopy --add-section .gopclntab=FILE-OF-ONE-BYTE
 * --redefine-sym seed_g=runtime.systemstack.abi0 --redefine-sym seed_l=runtime.goexit.abi0
 * --add-symbol runtime.etext=.text:0x18,function,local): Go's stack roots, and a marker at the
 * end of .text. */
#include "proftop/lines.h"
#include "proftop/module.h"
#include "proftop/unwind_rules.h"
#include "proftop/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lengths a reader asks for: libunwind's words, .eh_frame_hdr's header, and odd ones. */
static const size_t read_lens[] = { 1, 4, 8, 3, 16, 64, 4096 };

static uint64_t word_at(const uint8_t *data, size_t size, size_t i)
{
	uint64_t w = 0;

	memcpy(&w, data + i, size - i < sizeof(w) ? size - i : sizeof(w));
	return w;
}

/* A function name is a string: touch all of it. */
static void check_name(const char *name)
{
	if (name && strlen(name) > 64 * 1024 + 4096)
		abort();
}

/* A lookup's function must hold the address: it starts at or before it. A stack root (Go's) is
 * one of the module's functions. */
static void check_lookup(const struct module *mod, uint64_t addr)
{
	uint64_t start = 0;
	const char *name = module_lookup(mod, addr, &start);
	enum module_frame_kind kind = module_frame_kind(mod, addr);

	check_name(name);
	if (name && start > addr)
		abort();
	if ((kind != MODULE_FRAME_CALL && !name) || kind > MODULE_FRAME_TOP)
		abort();
}

/* Every file offset (in steps) translated and looked up, and every input word as an address. */
static void check_lookups(const struct module *mod, const uint8_t *data, size_t size)
{
	for (size_t off = 0; off < size + 8192; off += 61)
		check_lookup(mod, module_translate(mod, off));
	for (size_t i = 0; i < size; i += 8) {
		uint64_t addr = word_at(data, size, i);

		check_lookup(mod, addr);
		check_lookup(mod, addr + 1);
	}
}

/* Reads of every length at input words, around the unwind tables and across translated
 * offsets. */
static void check_reads(const struct module *mod, const uint8_t *data, size_t size)
{
	const struct module_unwind *uw = module_unwind(mod);
	unsigned char buf[4096];

	for (size_t i = 0; i < size; i += 8) {
		uint64_t addr = word_at(data, size, i);
		size_t len = read_lens[(i / 8) % (sizeof(read_lens) / sizeof(read_lens[0]))];

		module_read(mod, addr, buf, len);
		module_read(mod, module_translate(mod, i), buf, len);
	}
	if (!uw)
		return;
	for (size_t k = 0; k < sizeof(read_lens) / sizeof(read_lens[0]); k++) {
		module_read(mod, uw->eh_frame_hdr, buf, read_lens[k]);
		module_read(mod, uw->code_start, buf, read_lens[k]);
		module_read(mod, uw->code_end - 1, buf, read_lens[k]);
	}
	if (uw->debug_frame_size) {
		volatile unsigned char sink = uw->debug_frame[0] ^ uw->debug_frame[uw->debug_frame_size - 1];

		(void)sink;
	}
}

/* A row is NONE, COMPLEX, or SIMPLE with a register number and places that exist. */
static void check_row(const struct unwind_rule *r)
{
	if (r->kind > UNWIND_RULE_SIMPLE)
		abort();
	if (r->kind != UNWIND_RULE_SIMPLE)
		return;
	if (r->cfa_reg > 16)
		abort();
	for (int t = 0; t < UNWIND_NTRACKED; t++)
		if (r->where[t] > UNWIND_AT_CFA)
			abort();
}

/* Rows at input words and through the code, twice through a small cache (hits and collisions). */
static void check_rows(struct module *mod, const uint8_t *data, size_t size)
{
	const struct module_unwind *uw = module_unwind(mod);
	struct unwind_rules *rules = unwind_rules_new(6);

	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < size && i < 256 * 8; i += 8)
			check_row(unwind_rules_get(rules, mod, word_at(data, size, i)));
		for (uint64_t a = uw ? uw->code_start : 0; uw && a < uw->code_end && a - uw->code_start < 4096;
		     a += 7)
			check_row(unwind_rules_get(rules, mod, a));
	}
	unwind_rules_free(rules);
}

/* Source frames at the first input words; every string of theirs, and the module's word on what
 * is wrong with its DWARF or its extent, touched. */
static void check_source(struct module *mod, const uint8_t *data, size_t size)
{
	struct lines_frame f[LINES_MAX_FRAMES];
	bool news;

	for (size_t i = 0; i < size && i < 64 * 8; i += 8) {
		size_t n = module_source(mod, word_at(data, size, i), f, LINES_MAX_FRAMES);

		if (n > LINES_MAX_FRAMES)
			abort();
		for (size_t k = 0; k < n; k++) {
			check_name(f[k].function);
			check_name(f[k].file);
		}
	}
	check_name(module_source_problem(mod, &news));
	check_name(module_damage(mod));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module *mod;
	void *image;

	if (module_init())
		return 0;
	/* The module may let libelf write into its image: never into libFuzzer's input. */
	image = xmalloc(size ? size : 1);
	memcpy(image, data, size);
	mod = module_new("fuzz", 4);
	module_load_image(mod, image, size);
	check_lookups(mod, data, size);
	check_reads(mod, data, size);
	check_rows(mod, data, size);
	check_source(mod, data, size);
	module_free(mod);
	return 0;
}
