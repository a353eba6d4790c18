/* export_folded.c — a snapshot as folded stacks, one line per distinct stack with self samples:
 * "outer;...;leaf COUNT", the input of flamegraph.pl and speedscope. The counts add up to the
 * samples of the scope. A frame is the function's name; ';' in a name (which would split it) becomes
 * ':' and the rest is in visible form (util.h), so a line break or an escape sequence in a name
 * shows as ^J or ^[ and never breaks a line (nor acts on a terminal, with -o -). Samples with no
 * function at all are counted as "[unknown]". */
#include "proftop/export.h"

#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct folded {
	char *line;              /* the current path, "a;b;c" */
	size_t len, cap;
	size_t *end;             /* per path depth: where that frame's text ends in line */
	size_t end_cap;
};

static void append_frame(struct folded *f, size_t depth, const char *name)
{
	size_t at = depth ? f->end[depth - 1] : 0;

	/* No character grows past UTIL_VISIBLE_CHAR_MAX bytes. */
	xgrow((void **)&f->line, &f->cap, at + UTIL_VISIBLE_CHAR_MAX * strlen(name) + 2, 1);
	if (depth)
		f->line[at++] = ';';
	while (*name) {
		if (*name == ';') {
			f->line[at++] = ':';
			name++;
		} else {
			at += util_visible_char(&name, f->line + at);
		}
	}
	f->line[at] = '\0';
	xgrow((void **)&f->end, &f->end_cap, depth + 1, sizeof(*f->end));
	f->end[depth] = f->len = at;
}

int export_folded(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct folded f = { 0 };
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	if (s->nodes[scope->root].self)
		fprintf(out, "[unknown] %llu\n", (unsigned long long)s->nodes[scope->root].self);
	export_walk_begin(&w, s, scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step)) {
		const struct snapshot_node *node = &s->nodes[step.node];
		const char *name = s->funcs[node->func].name;

		append_frame(&f, step.depth, *name ? name : "[unknown]");
		if (!node->self)
			continue;
		fwrite(f.line, 1, f.len, out);
		fprintf(out, " %llu\n", (unsigned long long)node->self);
	}
	snapshot_walk_end(&w);
	free(f.line);
	free(f.end);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}
