/* theme.h — the screen's named roles (header, selected row, hot percentage, ...) and the colours
 * and attributes a theme gives them, read from small text files. No curses here: the TUI turns a
 * theme into curses attributes, so the parser is unit-tested and fuzzed on its own.
 *
 * A theme file (themes/NAME.theme) has one role per line:
 *
 *     # comment
 *     ROLE = [FG] [on BG] [ATTRIBUTE...]
 *
 * FG and BG are colours: default (the terminal's own), black, red, green, yellow, blue, magenta,
 * cyan, white, bright-black (or gray), bright-red ... bright-white, or colorN for N in 0..255.
 * Attributes: bold, dim, underline, reverse, italic, or normal (none). A role the file does not
 * set is drawn like `normal`; a role set twice is an error. */
#ifndef PROFTOP_THEME_H
#define PROFTOP_THEME_H

#include <stddef.h>
#include <stdint.h>

enum theme_role {
	THEME_NORMAL,          /* text with no other role */
	THEME_HEADER,          /* the title bar: target, state, elapsed time, frequency */
	THEME_TAB,             /* a view's name in the tab bar */
	THEME_TAB_ACTIVE,      /* the current view's name */
	THEME_COLUMNS,         /* the column headings */
	THEME_COLUMN_SORTED,   /* the heading of the sort column */
	THEME_SELECTED,        /* the row under the cursor */
	THEME_HOT,             /* a percentage of 10 or more */
	THEME_WARM,            /* 1 to 10 */
	THEME_COLD,            /* under 1 */
	THEME_COUNTER_ZERO,    /* a sampling counter at zero */
	THEME_COUNTER_NONZERO, /* a loss counter (overflow, dropped, ...) that is not zero */
	THEME_TREE,            /* tree guides and open/closed marks */
	THEME_MODULE,          /* the module column */
	THEME_STATUS,          /* the bottom line: key hints */
	THEME_MESSAGE,         /* a message on the bottom line */
	THEME_WARNING,         /* PAUSED, ended, errors */
	THEME_FILTER,          /* the filter being typed */
	THEME_SPARKLINE,       /* the timeline's bars: samples per second */
	THEME_FLAME_1,         /* flame graph frames, by module: three so that modules differ */
	THEME_FLAME_2,
	THEME_FLAME_3,
	THEME_FLAME_MATCH,     /* a frame the search matches */
	THEME_TIMELINE_RANGE,  /* the timeline's bars in the stretch shown */
	THEME_DIFF_GROWN,      /* against a baseline: a share that grew (a flame frame, a change) */
	THEME_DIFF_SHRUNK,     /* one that shrank */
	THEME_NROLES,
};

#define THEME_COLOR_DEFAULT (-1)

enum theme_attr {
	THEME_BOLD = 1,
	THEME_DIM = 2,
	THEME_UNDERLINE = 4,
	THEME_REVERSE = 8,
	THEME_ITALIC = 16,
};

struct theme_style {
	int16_t fg, bg;        /* 0..255 or THEME_COLOR_DEFAULT */
	uint8_t attrs;         /* enum theme_attr bits */
};

struct theme {
	char name[64];
	struct theme_style styles[THEME_NROLES];
};

/* The role's name in theme files ("tab-active"). */
const char *theme_role_name(enum theme_role role);

/* Parse a theme from text (len bytes; NULs are just bad characters). Returns 0, or -EINVAL with
 * *error (malloc'd) saying "line N, column C: what is wrong" (", column C" when a word is at
 * fault): where, never the text there, which may be any file's. The name is left empty. */
int theme_parse(struct theme *theme, const char *text, size_t len, char **error);

/* The themes compiled in: "default" and "mono" (the same as the files shipped), so proftop has
 * them without its theme directory. Returns -ENOENT for another name. */
int theme_builtin(struct theme *theme, const char *name);

/* Load a theme by NAME, looked for as NAME.theme in the theme directories, or by PATH (a name with
 * a '/' or ending in .theme). The built-in themes are found even without files. Returns 0, or
 * -errno with *error (malloc'd) saying what and where: "FILE:LINE:COLUMN: ..." for a bad file
 * (":COLUMN" when a word is at fault), without the file's text. */
int theme_load(struct theme *theme, const char *name, char **error);

/* The directories searched, in order: $XDG_CONFIG_HOME/proftop/themes (or
 * ~/.config/proftop/themes), the themes/ directory beside the proftop binary, and the installed
 * PROFTOP_THEMEDIR. Returns the count; dirs[i] are malloc'd, as is *dirs. */
size_t theme_dirs(char ***dirs);
/* The names of every theme found there and built in, sorted, each once. Free with
 * theme_names_free(). */
size_t theme_names(char ***names);
void theme_names_free(char **names, size_t count);

#endif
