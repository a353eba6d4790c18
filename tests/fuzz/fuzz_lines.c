/* libFuzzer target: the line and inlined-frame reader (lines.c, over libdw) on arbitrary bytes
 * read as an ELF image from memory: .debug_info, .debug_line, .debug_aranges, .debug_abbrev and
 * the rest, corrupt or truncated. Every address of the image's text range (and some outside) is
 * looked up; every string returned (and what lines_error() says) is touched, and every chain must
 * fit its array. The image is then opened again as a file read into memory is (mapped false: the
 * sections lookups never read hidden from libdw, the sections held counted), with a few lookups.
 *
 * Seeds in corpus/fuzz_lines: inline.so (DWARF 5) and inline-dwarf4.so, three functions of which
 * two have a static inline helper inlined into them, built with gcc -O2 -g[dwarf-4] -shared -fPIC
 * -nostdlib -Wl,-z,max-page-size=0x1000 -Wl,-z,noseparate-code, .comment removed. */
#include "proftop/lines.h"
#include "proftop/module.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void touch(const char *s)
{
	if (s && strlen(s) > (1u << 30))
		abort();
}

static void look_up(struct lines *lines, uint64_t addr)
{
	struct lines_frame f[LINES_MAX_FRAMES];
	size_t n = lines_lookup(lines, addr, f, LINES_MAX_FRAMES);

	if (n > LINES_MAX_FRAMES)
		abort();
	for (size_t i = 0; i < n; i++) {
		touch(f[i].function);
		touch(f[i].file);
	}
}

/* data as a debug file read from its descriptor is: its section headers are libelf's to change. */
static void as_read(const uint8_t *data, size_t size)
{
	char *image = malloc(size ? size : 1);
	const char *why;
	struct lines *lines;
	Elf *elf;

	if (!image)
		return;
	memcpy(image, data, size);
	elf = elf_memory(image, size);
	lines = elf ? lines_new(elf, false, &why) : NULL;
	if (lines) {
		if (lines_memory(lines) < sizeof(void *))
			abort();
		for (uint64_t a = 0; a < 0x2000; a += 61)
			look_up(lines, a);
		lines_free(lines);
	}
	elf_end(elf);
	free(image);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready = -1;
	/* An exact-size copy: libelf reads it in place, so a read past it is AddressSanitizer's. */
	char *image = malloc(size ? size : 1);
	const char *why;
	struct lines *lines;
	Elf *elf;

	if (ready < 0)
		ready = module_init();
	if (ready || !image)
		return free(image), 0;
	memcpy(image, data, size);
	elf = elf_memory(image, size);
	lines = elf ? lines_new(elf, true, &why) : NULL;
	if (lines) {
		for (uint64_t a = 0; a < 0x2000; a++)
			look_up(lines, a);
		look_up(lines, UINT64_MAX);
		touch(lines_error(lines));
		lines_free(lines);
	}
	elf_end(elf);
	free(image);
	as_read(data, size);
	return 0;
}
