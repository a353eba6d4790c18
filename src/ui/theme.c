/* theme.c — theme files → styles per role, and where theme files are found.
 *
 * The parser reads a line at a time from a (pointer, length) buffer, never past it: the text may
 * come from any file and holds no terminator. A line is split into words at blanks; '=' is a word
 * of its own and '#' at the start of a word begins a comment.
 *
 * An error names the line and the column of the word at fault, never the word: `-t` may be given
 * any file (root's `-t /etc/shadow`), and the message must not show what the file holds. */
#include "proftop/ui/theme.h"

#include "proftop/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THEME_BYTES (64 * 1024)

static const char *const role_names[THEME_NROLES] = {
	[THEME_NORMAL] = "normal",
	[THEME_HEADER] = "header",
	[THEME_TAB] = "tab",
	[THEME_TAB_ACTIVE] = "tab-active",
	[THEME_COLUMNS] = "columns",
	[THEME_COLUMN_SORTED] = "column-sorted",
	[THEME_SELECTED] = "selected",
	[THEME_HOT] = "hot",
	[THEME_WARM] = "warm",
	[THEME_COLD] = "cold",
	[THEME_COUNTER_ZERO] = "counter-zero",
	[THEME_COUNTER_NONZERO] = "counter-nonzero",
	[THEME_TREE] = "tree",
	[THEME_MODULE] = "module",
	[THEME_STATUS] = "status",
	[THEME_MESSAGE] = "message",
	[THEME_WARNING] = "warning",
	[THEME_FILTER] = "filter",
	[THEME_SPARKLINE] = "sparkline",
	[THEME_FLAME_1] = "flame-1",
	[THEME_FLAME_2] = "flame-2",
	[THEME_FLAME_3] = "flame-3",
	[THEME_FLAME_MATCH] = "flame-match",
	[THEME_TIMELINE_RANGE] = "timeline-range",
	[THEME_DIFF_GROWN] = "diff-grown",
	[THEME_DIFF_SHRUNK] = "diff-shrunk",
};

static const struct {
	const char *name;
	int16_t color;
} color_names[] = {
	{ "default", THEME_COLOR_DEFAULT },
	{ "black", 0 }, { "red", 1 }, { "green", 2 }, { "yellow", 3 },
	{ "blue", 4 }, { "magenta", 5 }, { "cyan", 6 }, { "white", 7 },
	{ "bright-black", 8 }, { "gray", 8 }, { "grey", 8 },
	{ "bright-red", 9 }, { "bright-green", 10 }, { "bright-yellow", 11 },
	{ "bright-blue", 12 }, { "bright-magenta", 13 }, { "bright-cyan", 14 },
	{ "bright-white", 15 },
};

static const struct {
	const char *name;
	uint8_t attr;
} attr_names[] = {
	{ "normal", 0 }, { "bold", THEME_BOLD }, { "dim", THEME_DIM },
	{ "underline", THEME_UNDERLINE }, { "reverse", THEME_REVERSE }, { "italic", THEME_ITALIC },
};

/* The shipped themes/default.theme and themes/mono.theme, without their comments (a unit test
 * checks they stay the same). */
static const char builtin_default[] =
	"normal          = default\n"
	"header          = black on cyan\n"
	"tab             = default\n"
	"tab-active      = black on green bold\n"
	"columns         = black on green\n"
	"column-sorted   = black on cyan bold\n"
	"selected        = black on cyan\n"
	"hot             = bright-red bold\n"
	"warm            = yellow\n"
	"cold            = default\n"
	"counter-zero    = green\n"
	"counter-nonzero = bright-white on red bold\n"
	"tree            = blue bold\n"
	"module          = cyan\n"
	"status          = black on cyan\n"
	"message         = bright-white on blue bold\n"
	"warning         = black on yellow bold\n"
	"filter          = black on yellow\n"
	"sparkline       = cyan\n"
	"flame-1         = black on red\n"
	"flame-2         = black on yellow\n"
	"flame-3         = black on bright-red\n"
	"flame-match     = black on magenta bold\n"
	"timeline-range  = black on green\n"
	"diff-grown      = bright-white on red bold\n"
	"diff-shrunk     = bright-white on blue bold\n";

static const char builtin_mono[] =
	"normal          = normal\n"
	"header          = reverse\n"
	"tab             = normal\n"
	"tab-active      = reverse bold\n"
	"columns         = reverse\n"
	"column-sorted   = reverse bold underline\n"
	"selected        = reverse\n"
	"hot             = bold\n"
	"warm            = normal\n"
	"cold            = dim\n"
	"counter-zero    = normal\n"
	"counter-nonzero = bold underline\n"
	"tree            = dim\n"
	"module          = normal\n"
	"status          = reverse\n"
	"message         = bold\n"
	"warning         = reverse bold\n"
	"filter          = underline\n"
	"sparkline       = bold\n"
	"flame-1         = reverse\n"
	"flame-2         = reverse\n"
	"flame-3         = reverse\n"
	"flame-match     = reverse bold underline\n"
	"timeline-range  = underline bold\n"
	"diff-grown      = reverse bold\n"
	"diff-shrunk     = underline\n";

const char *theme_role_name(enum theme_role role)
{
	return (unsigned)role < THEME_NROLES ? role_names[role] : "?";
}

/* --- the parser ------------------------------------------------------------------------------- */

struct word {
	const char *text;
	size_t len;
};

struct line {
	const char *start;       /* the line's first byte */
	const char *at, *end;
	unsigned number;
	char *error;             /* the first error, without its position */
	unsigned column;         /* of the word at fault; 0: none in particular */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The next word of the line; false at its end or at a comment. */
static bool next_word(struct line *l, struct word *w)
{
	while (l->at < l->end && is_blank(*l->at))
		l->at++;
	if (l->at == l->end || *l->at == '#')
		return false;
	w->text = l->at;
	if (*l->at == '=') {
		l->at++;
	} else {
		while (l->at < l->end && !is_blank(*l->at) && *l->at != '=')
			l->at++;
	}
	w->len = (size_t)(l->at - w->text);
	return true;
}

static bool word_is(const struct word *w, const char *s)
{
	return strlen(s) == w->len && !memcmp(w->text, s, w->len);
}

/* Record what is wrong (what: malloc'd) and where: w's column, if w. */
static bool fail_with(struct line *l, char *what, const struct word *w)
{
	if (!l->error) {
		l->error = what;
		l->column = w ? (unsigned)(w->text - l->start) + 1 : 0;
	} else {
		free(what);
	}
	return false;
}

static bool fail(struct line *l, const char *what, const struct word *w)
{
	return fail_with(l, xstrdup(what), w);
}

static bool parse_color(const struct word *w, int16_t *color)
{
	int v = 0;

	for (size_t i = 0; i < sizeof(color_names) / sizeof(*color_names); i++) {
		if (word_is(w, color_names[i].name)) {
			*color = color_names[i].color;
			return true;
		}
	}
	if (w->len < 6 || w->len > 8 || memcmp(w->text, "color", 5))
		return false;
	for (size_t i = 5; i < w->len; i++) {
		if (!isdigit((unsigned char)w->text[i]))
			return false;
		v = v * 10 + (w->text[i] - '0');
	}
	if (v > 255)
		return false;
	*color = (int16_t)v;
	return true;
}

static bool parse_attr(const struct word *w, uint8_t *attrs)
{
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(*attr_names); i++) {
		if (word_is(w, attr_names[i].name)) {
			*attrs |= attr_names[i].attr;
			return true;
		}
	}
	return false;
}

/* The words after '=': [FG] [on BG] [ATTRIBUTE...], in any order but FG before BG. */
static bool parse_style(struct line *l, struct theme_style *style)
{
	struct word w, on = { NULL, 0 };
	bool fg = false, bg = false, want_bg = false, any = false;
	int16_t color;

	*style = (struct theme_style){ THEME_COLOR_DEFAULT, THEME_COLOR_DEFAULT, 0 };
	while (next_word(l, &w)) {
		any = true;
		if (word_is(&w, "on")) {
			if (bg || want_bg)
				return fail(l, "a second 'on': a style has one background", &w);
			want_bg = true;
			on = w;
		} else if (parse_color(&w, &color)) {
			if (want_bg) {
				style->bg = color;
				bg = true;
				want_bg = false;
			} else if (!fg) {
				style->fg = color;
				fg = true;
			} else {
				return fail(l, "a second foreground colour (write 'on' before a background)",
					    &w);
			}
		} else if (!parse_attr(&w, &style->attrs)) {
			return fail(l, "unknown colour or attribute", &w);
		}
	}
	if (want_bg)
		return fail(l, "'on' needs a colour after it", &on);
	if (!any)
		return fail(l, "no style after '='", NULL);
	return true;
}

/* set[r]: the line that set role r; 0: none yet. */
static bool parse_line(struct line *l, struct theme *t, unsigned *set)
{
	struct word w, eq;
	int role = -1;

	if (!next_word(l, &w))
		return true; /* blank or comment */
	for (int r = 0; r < THEME_NROLES; r++)
		if (word_is(&w, role_names[r]))
			role = r;
	if (role < 0)
		return fail(l, "unknown role", &w);
	if (set[role])
		return fail_with(l, xasprintf("role set twice (line %u set it first)", set[role]),
				 &w);
	if (!next_word(l, &eq) || !word_is(&eq, "="))
		return fail(l, "expected 'ROLE = STYLE': no '=' after the role", &w);
	if (!parse_style(l, &t->styles[role]))
		return false;
	set[role] = l->number;
	return true;
}

/* Parse; on error returns its line number and sets *error (without the position) and *column
 * (0: none in particular). */
static unsigned parse(struct theme *t, const char *text, size_t len, char **error,
		      unsigned *column)
{
	unsigned set[THEME_NROLES] = { 0 };
	const char *end = text + len;
	struct line l = { text, text, text, 0, NULL, 0 };

	memset(t, 0, sizeof(*t));
	while (l.at < end || l.number == 0) {
		const char *nl = memchr(l.at, '\n', (size_t)(end - l.at));

		l.start = l.at;
		l.end = nl ? nl : end;
		l.number++;
		if (!parse_line(&l, t, set)) {
			*error = l.error;
			*column = l.column;
			return l.number;
		}
		if (!nl)
			break;
		l.at = nl + 1;
	}
	for (int r = 0; r < THEME_NROLES; r++)
		if (!set[r])
			t->styles[r] = set[THEME_NORMAL] ? t->styles[THEME_NORMAL]
				: (struct theme_style){ THEME_COLOR_DEFAULT, THEME_COLOR_DEFAULT, 0 };
	return 0;
}

/* "LINE" or "LINE:COLUMN", or "line LINE" or "line LINE, column COLUMN" (words). */
static char *position(unsigned line, unsigned column, bool words)
{
	if (!column)
		return xasprintf(words ? "line %u" : "%u", line);
	return xasprintf(words ? "line %u, column %u" : "%u:%u", line, column);
}

int theme_parse(struct theme *t, const char *text, size_t len, char **error)
{
	char *why = NULL, *where;
	unsigned column, line = parse(t, text, len, &why, &column);

	if (!line)
		return 0;
	where = position(line, column, true);
	*error = xasprintf("%s: %s", where, why);
	free(where);
	free(why);
	return -EINVAL;
}

int theme_builtin(struct theme *t, const char *name)
{
	const char *text = !strcmp(name, "default") ? builtin_default
			   : !strcmp(name, "mono")  ? builtin_mono
						    : NULL;
	char *error = NULL;
	unsigned column;

	if (!text)
		return -ENOENT;
	if (parse(t, text, strlen(text), &error, &column))
		fatal("built-in theme %s: %s", name, error);
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

/* --- files ------------------------------------------------------------------------------------ */

/* Up to max bytes of fd into buf; returns how many, or -errno. */
static ssize_t read_up_to(int fd, char *buf, size_t max)
{
	size_t n = 0;

	while (n < max) {
		ssize_t got = read(fd, buf + n, max - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			break;
		n += (size_t)got;
	}
	return (ssize_t)n;
}

/* The bytes of the theme file at path, which must be a regular file: opening a FIFO without a
 * writer, or reading a terminal or a device, would wait or read for ever before the screen even
 * starts. Returns 0, or -errno with *error saying what was wrong. */
static int read_file(const char *path, char **text, size_t *len, char **error)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t got = 0;
	int err = 0;

	*text = NULL;
	if (fd < 0 || fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (!err) {
		*text = xmalloc(MAX_THEME_BYTES + 1);
		got = read_up_to(fd, *text, MAX_THEME_BYTES + 1);
		err = got < 0 ? (int)got : got > MAX_THEME_BYTES ? -EFBIG : 0;
	}
	if (fd >= 0)
		close(fd);
	if (err == -EFBIG)
		*error = xasprintf("%s: larger than %d bytes", path, MAX_THEME_BYTES);
	else if (err == -EINVAL)
		*error = xasprintf("%s: not a regular file", path);
	else if (err)
		*error = xasprintf("%s: %s", path, strerror(-err));
	if (err) {
		free(*text);
		return err;
	}
	*len = (size_t)got;
	return 0;
}

/* "light" from ".../light.theme". */
static void name_from_path(char *name, size_t size, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);

	if (n > 6 && !strcmp(base + n - 6, ".theme"))
		n -= 6;
	snprintf(name, size, "%.*s", (int)n, base);
}

static int load_file(struct theme *t, const char *path, char **error)
{
	char *text = NULL, *why = NULL, *where;
	size_t len = 0;
	unsigned line, column;
	int err = read_file(path, &text, &len, error);

	if (err)
		return err;
	line = parse(t, text, len, &why, &column);
	free(text);
	if (line) {
		where = position(line, column, false);
		*error = xasprintf("%s:%s: %s", path, where, why);
		free(where);
		free(why);
		return -EINVAL;
	}
	name_from_path(t->name, sizeof(t->name), path);
	return 0;
}

static bool is_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 6 && !strcmp(name + n - 6, ".theme"));
}

size_t theme_dirs(char ***dirs_out)
{
	char **dirs = xcalloc(3, sizeof(*dirs));
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t count = 0;

	if (xdg && *xdg)
		dirs[count++] = xasprintf("%s/proftop/themes", xdg);
	else if (home && *home)
		dirs[count++] = xasprintf("%s/.config/proftop/themes", home);
	if (n > 0) {
		exe[n] = 0;
		if (strrchr(exe, '/'))
			*strrchr(exe, '/') = 0;
		dirs[count++] = xasprintf("%s/themes", exe);
	}
	dirs[count++] = xstrdup(PROFTOP_THEMEDIR);
	*dirs_out = dirs;
	return count;
}

static void free_list(char **list, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(list[i]);
	free(list);
}

int theme_load(struct theme *t, const char *name, char **error)
{
	char **dirs, *looked;
	size_t ndirs;

	if (is_path(name))
		return load_file(t, name, error);
	if (!*name || strlen(name) > 48) {
		*error = xasprintf("invalid theme name '%.48s'", name);
		return -EINVAL;
	}
	ndirs = theme_dirs(&dirs);
	for (size_t i = 0; i < ndirs; i++) {
		char *path = xasprintf("%s/%s.theme", dirs[i], name);

		if (!access(path, F_OK)) {
			int err = load_file(t, path, error);

			free(path);
			free_list(dirs, ndirs);
			return err;
		}
		free(path);
	}
	if (!theme_builtin(t, name)) {
		free_list(dirs, ndirs);
		return 0;
	}
	looked = xstrdup(dirs[0]);
	for (size_t i = 1; i < ndirs; i++) {
		char *next = xasprintf("%s, %s", looked, dirs[i]);

		free(looked);
		looked = next;
	}
	*error = xasprintf("no theme named '%s' (looked in %s)", name, looked);
	free(looked);
	free_list(dirs, ndirs);
	return -ENOENT;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_name(char ***names, size_t *count, size_t *cap, const char *name)
{
	for (size_t i = 0; i < *count; i++)
		if (!strcmp((*names)[i], name))
			return;
	xgrow((void **)names, cap, *count + 1, sizeof(**names));
	(*names)[(*count)++] = xstrdup(name);
}

size_t theme_names(char ***out)
{
	char **dirs, **names = NULL;
	size_t ndirs = theme_dirs(&dirs), count = 0, cap = 0;

	add_name(&names, &count, &cap, "default");
	add_name(&names, &count, &cap, "mono");
	for (size_t i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			size_t n = strlen(e->d_name);
			char name[64];

			if (n <= 6 || n - 6 >= sizeof(name) || strcmp(e->d_name + n - 6, ".theme"))
				continue;
			name_from_path(name, sizeof(name), e->d_name);
			add_name(&names, &count, &cap, name);
		}
		if (d)
			closedir(d);
	}
	free_list(dirs, ndirs);
	qsort(names, count, sizeof(*names), compare_names);
	*out = names;
	return count;
}

void theme_names_free(char **names, size_t count)
{
	free_list(names, count);
}
