/* libFuzzer target: util.c's visible form of text from the target (util_visible_str(),
 * util_visible()) on arbitrary bytes. What comes out holds no C0 or C1 control and no DEL, is
 * well-formed UTF-8, is its own visible form, and a bounded copy is a whole-character prefix of
 * it that fits. */
#include "proftop/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Abort unless s is well-formed UTF-8 without control characters. */
static void check_shown(const unsigned char *s)
{
	while (*s) {
		size_t n = *s < 0x80 ? 1 : *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : 2;

		if (*s < 0x20 || *s == 0x7f || (*s >= 0x80 && *s < 0xc2) || *s > 0xf4)
			abort();
		if (s[0] == 0xc2 && s[1] < 0xa0) /* C1 */
			abort();
		for (size_t i = 1; i < n; i++)
			if ((s[i] & 0xc0) != 0x80)
				abort();
		s += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *buf = NULL, *again = NULL, *cut;
	size_t cap = 0, again_cap = 0, len, bound;
	const char *shown;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	shown = util_visible_str(text, &buf, &cap);
	len = strlen(shown);
	check_shown((const unsigned char *)shown);
	if (len > 4 * strlen(text) || util_visible_str(shown, &again, &again_cap) != shown)
		abort();
	/* A bounded copy: a prefix that fits, short of the whole by less than one character. */
	bound = size ? data[0] % 16 : 0;
	cut = malloc(bound + 1);
	if (!cut)
		abort();
	if (util_visible(cut, bound + 1, text) != strlen(cut) || strlen(cut) > bound ||
	    strncmp(cut, shown, strlen(cut)) || strlen(cut) + UTIL_VISIBLE_CHAR_MAX <= (len < bound ? len : bound))
		abort();
	check_shown((const unsigned char *)cut);
	free(cut);
	free(again);
	free(buf);
	free(text);
	return 0;
}
