/* tui_keys.c — what the key table in tui_screen.c says, read three ways: the binding a key has
 * where the screen is (the dispatch), each view's bottom line of hints, and the help. Key names
 * are written here, once, for both texts. Nothing here keeps state; curses only for KEY_*.
 *
 * The help has a line per binding with help text, in the table's order (the most used first),
 * under a title and a line naming the help's own keys. Its keys column names the binding's keys
 * and those of the bindings after it that have none ("Up k Down j"); when the binding does not
 * work in every view, its text starts with the views it works in ("Tree, Callers: "). */
#include "proftop/ui/tui_screen.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#define KEYS_W 21 /* the help's keys column; the explanations start two columns after it */
#define WRAP_MIN 60 /* narrower help lines are cut, not wrapped: too little would be left */

static const struct {
	int key;
	const char *name;
} key_names[] = {
	{ KEY_UP, "Up" },
	{ KEY_DOWN, "Down" },
	{ KEY_LEFT, "Left" },
	{ KEY_RIGHT, "Right" },
	{ KEY_PPAGE, "PgUp" },
	{ KEY_NPAGE, "PgDn" },
	{ KEY_HOME, "Home" },
	{ KEY_END, "End" },
	{ '\t', "Tab" },
	{ KEY_BTAB, "Shift-Tab" },
	{ '\n', "Enter" },
	{ '\r', "Enter" },
	{ KEY_ENTER, "Enter" },
	{ TUI_ESC, "Esc" },
	{ ' ', "space" },
	{ KEY_BACKSPACE, "Backspace" },
	{ TUI_DEL, "Backspace" },
	{ TUI_CTRL_H, "Backspace" },
	{ TUI_CTRL_L, "Ctrl-L" },
	{ TUI_CTRL_U, "Ctrl-U" },
	{ KEY_F(1), "F1" },
	{ KEY_F(10), "F10" },
};

const char *tui_keys_name(int key, char one[static 2])
{
	for (size_t i = 0; i < sizeof(key_names) / sizeof(*key_names); i++)
		if (key_names[i].key == key)
			return key_names[i].name;
	if (key < ' ' || key > '~')
		return NULL;
	one[0] = (char)key;
	one[1] = 0;
	return one;
}

static bool binds(const struct tui_binding *b, int key)
{
	for (int i = 0; i < TUI_BINDING_KEYS && b->keys[i]; i++)
		if (b->keys[i] == key)
			return true;
	return false;
}

const struct tui_binding *tui_keys_find(int key, unsigned where)
{
	size_t n;
	const struct tui_binding *table = tui_screen_bindings(&n);

	for (size_t i = 0; i < n; i++)
		if ((table[i].where & where) && binds(&table[i], key))
			return &table[i];
	return NULL;
}

/* Text at the end of buf, as much as fits. */
static void append(char *buf, size_t size, const char *text)
{
	size_t len = strlen(buf);

	snprintf(buf + len, size - len, "%s", text);
}

/* --- the bottom line -------------------------------------------------------------------------- */

/* The hints shown where (a TUI_IN_* bit) in the order of their places; returns how many (at most
 * max). */
static size_t view_hints(unsigned where, const struct tui_hint **out, size_t max)
{
	size_t n, count = 0;
	const struct tui_binding *table = tui_screen_bindings(&n);

	for (size_t i = 0; i < n && count < max; i++) {
		const struct tui_hint *h = &table[i].hint;
		size_t j = count++;

		if (!h->label || !(h->in & where)) {
			count--;
			continue;
		}
		for (; j > 0 && out[j - 1]->at > h->at; j--)
			out[j] = out[j - 1];
		out[j] = h;
	}
	return count;
}

/* Columns the line of hints would take: " a  b  c". */
static size_t hints_width(const struct tui_hint *const *h, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		w += (i ? 2 : 1) + strlen(h[i]->label);
	return w;
}

/* Drop the rightmost hint of the highest rank above 1; false when only rank 1 is left. */
static bool drop_one(const struct tui_hint **h, size_t *n)
{
	size_t worst = *n;

	for (size_t i = 0; i < *n; i++)
		if (h[i]->rank > 1 && (worst == *n || h[i]->rank >= h[worst]->rank))
			worst = i;
	if (worst == *n)
		return false;
	memmove(&h[worst], &h[worst + 1], (*n - worst - 1) * sizeof(*h));
	(*n)--;
	return true;
}

void tui_keys_hints(unsigned where, int width, char *buf, size_t size)
{
	const struct tui_hint *h[32];
	size_t n = view_hints(where, h, sizeof(h) / sizeof(*h));

	while (hints_width(h, n) > (size_t)(width > 0 ? width : 0) && drop_one(h, &n))
		;
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		append(buf, size, buf[0] ? "  " : " ");
		append(buf, size, h[i]->label);
	}
}

/* --- the help --------------------------------------------------------------------------------- */

/* The names of b's keys after those in buf, each name once (Enter has three codes). */
static void add_key_names(char *buf, size_t size, const struct tui_binding *b)
{
	char prev[16] = "";

	for (int i = 0; i < TUI_BINDING_KEYS && b->keys[i]; i++) {
		char one[2];
		const char *name = tui_keys_name(b->keys[i], one);

		if (!name || !strcmp(name, prev))
			continue;
		append(buf, size, buf[0] ? " " : "");
		append(buf, size, name);
		snprintf(prev, sizeof(prev), "%s", name);
	}
}

/* "Tree, Callers: " when where is not every view; "Timeline: " for the timeline's own keys. */
static void add_views(char *buf, size_t size, unsigned where)
{
	if ((where & TUI_IN_VIEWS) == TUI_IN_VIEWS)
		return;
	if (!(where & TUI_IN_VIEWS)) {
		append(buf, size, "Timeline: ");
		return;
	}
	for (int v = 0; v < TUI_NVIEWS; v++) {
		if (where & (1u << v)) {
			append(buf, size, buf[0] ? ", " : "");
			append(buf, size, tui_screen_view_name((enum tui_view)v));
		}
	}
	append(buf, size, ": ");
}

static void put_line(struct tui_help *h, const char *keys, const char *text, int len)
{
	if (h->n < TUI_HELP_LINES &&
	    snprintf(h->line[h->n], TUI_HELP_WIDTH, "%-*s  %.*s", KEYS_W, keys, len, text) >= 0)
		h->n++;
}

/* text[0..len) under keys, wrapped at blanks into lines of width columns; a word longer than a
 * line is cut, as is everything past TUI_HELP_WIDTH. */
static void add_line(struct tui_help *h, const char *keys, const char *text, int len, int width)
{
	int room = width >= WRAP_MIN ? width - KEYS_W - 2 : len;

	while (len > room) {
		int cut = room;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (!cut)
			cut = room;
		put_line(h, keys, text, cut);
		keys = "";
		for (text += cut, len -= cut; len && *text == ' '; text++, len--)
			;
	}
	put_line(h, keys, text, len);
}

/* The lines of binding b: keys, then its views and help text, each \n starting a line. */
static void add_binding(struct tui_help *h, const struct tui_binding *b, const char *keys,
			int width)
{
	char text[2 * TUI_HELP_WIDTH] = ""; /* its lines are cut to the help's width one by one */
	const char *line = text, *end;

	add_views(text, sizeof(text), b->where);
	append(text, sizeof(text), b->help);
	for (;;) {
		end = strchrnul(line, '\n');
		add_line(h, line == text ? keys : "", line, (int)(end - line), width);
		if (!*end)
			break;
		line = end + 1;
	}
}

/* The help's own keys (TUI_IN_HELP), what they do. */
static void help_keys_line(char *buf, size_t size)
{
	size_t n;
	const struct tui_binding *table = tui_screen_bindings(&n);

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		if (table[i].where & TUI_IN_HELP)
			add_key_names(buf, size, &table[i]);
	append(buf, size, ": scroll; other keys close");
}

void tui_keys_help(struct tui_help *h, int width)
{
	size_t n;
	const struct tui_binding *table = tui_screen_bindings(&n);
	char prev[TUI_HELP_WIDTH] = "";

	snprintf(h->line[0], TUI_HELP_WIDTH, "proftop keys, the most used first");
	help_keys_line(h->line[1], TUI_HELP_WIDTH);
	h->line[2][0] = 0;
	h->n = TUI_HELP_HEAD + 1;
	for (size_t i = 0; i < n; i++) {
		char keys[TUI_HELP_WIDTH] = "";

		if (!table[i].help || !(table[i].where & (TUI_IN_VIEWS | TUI_IN_TIMELINE)))
			continue;
		add_key_names(keys, sizeof(keys), &table[i]);
		for (size_t j = i + 1; j < n && !table[j].help; j++)
			if (table[j].where & (TUI_IN_VIEWS | TUI_IN_TIMELINE))
				add_key_names(keys, sizeof(keys), &table[j]);
		/* Enter's views one under the other, its name once */
		add_binding(h, &table[i], strcmp(keys, prev) ? keys : "", width);
		snprintf(prev, sizeof(prev), "%s", keys);
	}
}
