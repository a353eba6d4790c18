/* libFuzzer target: the theme parser on arbitrary bytes, as a user's theme file may hold. A parse
 * either succeeds with every style in range, or fails with a message naming a line that exists
 * (and a column in it), followed by one of the parser's own sentences: nothing of the text. */
#include "proftop/ui/theme.h"

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

/* What the parser may say after the position: its words only. */
static const char *const messages[] = {
	"unknown role",
	"role set twice (line ",
	"expected 'ROLE = STYLE': no '=' after the role",
	"no style after '='",
	"unknown colour or attribute",
	"a second foreground colour (write 'on' before a background)",
	"a second 'on': a style has one background",
	"'on' needs a colour after it",
};

static void check_message(const char *m)
{
	for (size_t i = 0; i < sizeof(messages) / sizeof(*messages); i++) {
		size_t n = strlen(messages[i]);

		if (!strncmp(m, messages[i], n) &&
		    (!m[n] || (messages[i][n - 1] == ' ' && strspn(m + n, "0123456789") > 0 &&
			       !strcmp(m + n + strspn(m + n, "0123456789"), " set it first)"))))
			return;
	}
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
	char *error = NULL, *at;
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
	line = strtoul(error + 5, &at, 10);
	if (line < 1 || line > count_lines(data, size))
		abort();
	if (!strncmp(at, ", column ", 9) && strtoul(at + 9, &at, 10) < 1)
		abort();
	if (strncmp(at, ": ", 2))
		abort();
	check_message(at + 2);
	free(error);
	return 0;
}
