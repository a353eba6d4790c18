/* export_folded.c — a snapshot as folded stacks, one line per distinct stack with self samples:
 * "outer;...;leaf COUNT", the input of flamegraph.pl and speedscope. The counts add up to the
 * samples of the scope. A frame is the function's name; ';' in a name (which would split it) becomes
 * ':' and the rest is in visible form (util.h), so a line break or an escape sequence in a name
 * shows as ^J or ^[ and never breaks a line (nor acts on a terminal, with -o -). Samples with no
 * function at all are counted as "[unknown]".
 *
 * Against a baseline the lines are "outer;...;leaf OLD NEW": every stack of either side with its
 * self samples in each, as flamegraph.pl's difffolded.pl writes them for a differential flame
 * graph. */
#include "proftop/export_writers.h"

#include "proftop/idmap.h"
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

/* Every line of the scope, in walk order: emit(arg, line, len, count) for each stack with self
 * samples (line is not terminated where len ends it). */
static void each_line(const struct snapshot *s, const struct export_scope *scope,
		      void (*emit)(void *arg, const char *line, size_t len, uint64_t count), void *arg)
{
	struct folded f = { 0 };
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	if (s->nodes[scope->root].self)
		emit(arg, "[unknown]", strlen("[unknown]"), s->nodes[scope->root].self);
	export_walk_begin(&w, s, scope, NULL, NULL);
	while (snapshot_walk_next(&w, &step)) {
		const struct snapshot_node *node = &s->nodes[step.node];
		const char *name = s->funcs[node->func].name;

		append_frame(&f, step.depth, *name ? name : "[unknown]");
		if (node->self)
			emit(arg, f.line, f.len, node->self);
	}
	snapshot_walk_end(&w);
	free(f.line);
	free(f.end);
}

static void print_line(void *arg, const char *line, size_t len, uint64_t count)
{
	FILE *out = arg;

	fwrite(line, 1, len, out);
	fprintf(out, " %llu\n", (unsigned long long)count);
}

int export_folded(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	each_line(s, scope, print_line, out);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}

/* --- against a baseline ---------------------------------------------------------------------- */

/* The stacks of both sides by their text: a stack is one line with both its counts. */
struct stacks {
	struct stack {
		char *line;
		uint64_t count[2]; /* the baseline's, now's */
	} *all;
	size_t n, cap;
	struct idmap index;       /* hash of the text → its stack (a collision hashes on) */
	int side;                 /* which count the lines being emitted add to */
};

static void add_stack(void *arg, const char *line, size_t len, uint64_t count)
{
	struct stacks *st = arg;

	for (uint64_t k = util_hash_bytes(line, len, 0x666f6c64);; k = util_hash_u64(k)) {
		uint32_t at = idmap_get(&st->index, k);

		if (at == IDMAP_MISSING) {
			xgrow((void **)&st->all, &st->cap, st->n + 1, sizeof(*st->all));
			at = (uint32_t)st->n++;
			st->all[at] = (struct stack){ xasprintf("%.*s", (int)len, line), { 0, 0 } };
			idmap_put(&st->index, k, at);
		} else if (strlen(st->all[at].line) != len || memcmp(st->all[at].line, line, len)) {
			continue;
		}
		st->all[at].count[st->side] += count;
		return;
	}
}

int export_folded_diff(FILE *out, const struct snapshot *old, const struct export_scope *old_scope,
		       const struct snapshot *now, const struct export_scope *scope)
{
	struct stacks st = { 0 };

	idmap_init(&st.index);
	st.side = 1;
	each_line(now, scope, add_stack, &st); /* now's order first, then what only the baseline has */
	st.side = 0;
	each_line(old, old_scope, add_stack, &st);
	for (size_t i = 0; i < st.n; i++) {
		fprintf(out, "%s %llu %llu\n", st.all[i].line, (unsigned long long)st.all[i].count[0],
			(unsigned long long)st.all[i].count[1]);
		free(st.all[i].line);
	}
	free(st.all);
	idmap_free(&st.index);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}
