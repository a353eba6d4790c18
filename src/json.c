/* json.c — text from a target as a JSON string (json.h). */
#include "proftop/json.h"

#include "proftop/util.h"

void json_write_string(FILE *out, const char *text)
{
	char one[UTIL_VISIBLE_CHAR_MAX];

	putc('"', out);
	while (*text) {
		size_t n = util_visible_char(&text, one);

		for (size_t i = 0; i < n; i++) {
			if (one[i] == '"' || one[i] == '\\')
				putc('\\', out);
			putc(one[i], out);
		}
	}
	putc('"', out);
}
