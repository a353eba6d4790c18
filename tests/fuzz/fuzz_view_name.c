/* libFuzzer target: the shortened names (view_name.c) on arbitrary bytes, as a symbol table, the
 * DWARF or a JIT's map may name a function. Each level gives the name itself or a NUL-terminated
 * text no longer than it and within the buffer, and every byte of that text is one of the name's
 * (or the "<>" bare writes): nothing read past the name, nothing made up. */
#include "proftop/view_name.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *name, size_t len, enum view_names names, size_t size)
{
	char *buf = malloc(size);
	const char *got = view_name(name, names, buf, size);

	if (got != name) {
		size_t n = strnlen(got, size);

		if (got != buf || n >= size || n > len)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!memchr(name, got[i], len) && got[i] != '<' && got[i] != '>')
				abort();
	}
	if (names == VIEW_NAMES_FULL && got != name)
		abort();
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	size_t len;

	memcpy(name, data, size);
	name[size] = 0;
	len = strlen(name);
	for (int n = 0; n < VIEW_NAMES_COUNT; n++) {
		check(name, len, (enum view_names)n, len + 1);
		check(name, len, (enum view_names)n, 1 + len / 3);
	}
	free(name);
	return 0;
}
