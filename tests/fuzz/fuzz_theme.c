/* libFuzzer target: the theme parser on arbitrary bytes, as a user's theme file may hold. A parse
 * either succeeds with every style in range, or fails with a message naming a line that exists. */
#include "proftop/theme.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_style(const struct theme_style *s)
{
	if (s->fg < THEME_COLOR_DEFAULT || s->fg > 255 || s->bg < THEME_COLOR_DEFAULT || s->bg > 255 ||
	    s->attrs & ~(THEME_BOLD | THEME_DIM | THEME_UNDERLINE | THEME_REVERSE | THEME_ITALIC))
		abort();
}

static size_t count_lines(const uint8_t *data, size_t size)
{
	size_t n = 1;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct theme t;
	char *error = NULL;
	unsigned long line;

	if (!theme_parse(&t, (const char *)data, size, &error)) {
		for (int r = 0; r < THEME_NROLES; r++)
			check_style(&t.styles[r]);
		if (t.name[0])
			abort();
		return 0;
	}
	if (!error || strncmp(error, "line ", 5))
		abort();
	line = strtoul(error + 5, NULL, 10);
	if (line < 1 || line > count_lines(data, size))
		abort();
	free(error);
	return 0;
}
