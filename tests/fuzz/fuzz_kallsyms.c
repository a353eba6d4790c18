/* libFuzzer target: the /proc/kallsyms reader on arbitrary bytes. Every line that parses keeps
 * the parser's promises (a name inside the line, short, without control characters or blanks;
 * a module inside it too); the table made of all of them answers lookups at each 8-byte value
 * of the input with a function that starts at or before it, not too far, of a bracketed module;
 * and each name found at an address is found by name (kallsyms_find()) at a start where
 * kallsyms_lookup() names a function of that name. */
#include "proftop/kallsyms.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_line(const uint8_t *line, size_t len)
{
	struct kallsyms_line l;
	const char *start = (const char *)line, *end = start + len;

	if (kallsyms_parse_line(start, len, &l))
		return;
	if (!l.name_len || l.name_len > KALLSYMS_NAME_MAX || l.name < start ||
	    l.name + l.name_len > end || memchr(l.name, ' ', l.name_len) ||
	    memchr(l.name, '\t', l.name_len) || memchr(l.name, '\n', l.name_len))
		abort();
	if (l.module && (!l.module_len || l.module < start || l.module + l.module_len > end ||
			 memchr(l.module, ']', l.module_len)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *k;

	for (size_t i = 0, start = 0; i <= size; i++) {
		if (i == size || data[i] == '\n') {
			check_line(data + start, i - start);
			start = i + 1;
		}
	}
	k = kallsyms_parse((const char *)data, size);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t addr, start;
		const char *module, *name;

		memcpy(&addr, data + i, 8);
		name = kallsyms_lookup(k, addr, &start, &module);
		if (name && (!*name || strlen(name) > KALLSYMS_NAME_MAX || start > addr ||
			     addr - start >= KALLSYMS_FUNC_MAX || module[0] != '[' ||
			     module[strlen(module) - 1] != ']'))
			abort();
		if (name) {
			uint64_t found_start, at;
			const char *found_module, *found = kallsyms_find(k, name, NULL, &found_start,
									 &found_module);

			if (!found || strcmp(found, name) ||
			    strcmp(kallsyms_lookup(k, found_start, &at, &found_module), name) ||
			    at != found_start)
				abort();
		}
	}
	kallsyms_free(k);
	return 0;
}
