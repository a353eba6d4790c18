/* export_callgrind.c — a snapshot in callgrind's format, for callgrind_annotate and KCachegrind.
 *
 * One event, Samples. Each function gets a block with its self samples and one call record per
 * function it calls, whose cost is the inclusive cost of those calls; tools compute a function's
 * inclusive cost as its self cost plus the costs of its calls. ob= names the module (the ELF
 * file). Names are compressed ("fn=(7) name" once, "fn=(7)" after), with ob/cob, the files
 * (fl/fi/fe/cfl) and fn/cfn each a name space of its own.
 *
 * Positions. With the snapshot's sites (annotate.h) and the whole profile in scope, a function's
 * fl= is the source file of its hottest line and its self cost is split over its lines, with fi=
 * before lines of another file; a call is on its caller's line when the caller has one line that
 * calls anything (a call's cost is on the caller's line, whatever it calls), else on line 0 (the
 * sites do not say which line called which callee). Without lines (a per-thread scope: sites
 * count every thread; or no DWARF), fl= names the module and every position is line 0.
 *
 * Recursion: if every call edge carried the full total of the callee's subtree, a recursive
 * function's inclusive cost would count the same samples once per level. So a sample is charged
 * to one edge out of each function on its stack: the edge out of that function's innermost frame.
 * Then self + calls = proftop's TOTAL for every function, and direct self-calls (f → f) carry
 * nothing and are left out. In the tree walk: a node n of function g under parent p (function f,
 * f != g) adds n.total to f → g; and when n's function already has a frame a higher on the path,
 * n.total leaves the edge out of a (a → the next node after a on the path). #calls is the number
 * of distinct call paths through the edge, as in tmon.out. */
#include "proftop/export_writers.h"

#include "proftop/annotate.h"
#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct edge {
	uint32_t caller, callee;
	uint64_t cost, calls;
};

struct callgrind {
	const struct snapshot *s;
	struct edge *edges;
	size_t nedges, edges_cap;
	struct idmap edge_index;   /* caller << 32 | callee → edge */
	int32_t *innermost;        /* function → depth of its innermost frame on the path, or -1 */
	int32_t *saved;            /* per path depth: innermost[] of its function before it */
	size_t saved_cap;
	const struct snapshot_walk *walk;
};

static struct edge *edge_of(struct callgrind *c, uint32_t caller, uint32_t callee)
{
	uint64_t key = (uint64_t)caller << 32 | callee;
	uint32_t i = idmap_get(&c->edge_index, key);

	if (i == IDMAP_MISSING) {
		xgrow((void **)&c->edges, &c->edges_cap, c->nedges + 1, sizeof(*c->edges));
		i = (uint32_t)c->nedges++;
		c->edges[i] = (struct edge){ caller, callee, 0, 0 };
		idmap_put(&c->edge_index, key, i);
	}
	return &c->edges[i];
}

/* The walk left node: its function's innermost frame is again the one before it. The walk's path
 * is already without node, so its length is node's depth. */
static void leave(void *arg, uint32_t node)
{
	struct callgrind *c = arg;
	size_t depth;

	snapshot_walk_path(c->walk, &depth);
	c->innermost[c->s->nodes[node].func] = c->saved[depth];
}

static void visit(struct callgrind *c, const struct snapshot_walk_step *step)
{
	const struct snapshot_node *node = &c->s->nodes[step->node];
	const struct snapshot_node *parent = &c->s->nodes[node->parent];
	size_t depth = step->depth, len;
	const uint32_t *path = snapshot_walk_path(c->walk, &len);
	int32_t above;

	if (depth > 0 && parent->func != node->func) {
		struct edge *e = edge_of(c, parent->func, node->func);

		e->cost += node->total;
		e->calls++;
	}
	above = c->innermost[node->func];
	if (above >= 0 && (size_t)above + 1 < depth) {
		uint32_t next = path[above + 1];

		edge_of(c, node->func, c->s->nodes[next].func)->cost -= node->total;
	}
	xgrow((void **)&c->saved, &c->saved_cap, depth + 1, sizeof(*c->saved));
	c->saved[depth] = above;
	c->innermost[node->func] = (int32_t)depth;
}

static int by_total(const void *a, const void *b, void *arg)
{
	const uint64_t *total = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (total[x] != total[y])
		return total[x] > total[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_caller_then_cost(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

/* A name on one line, in visible form (util.h): a line break in it shows as ^J. */
static void put_name(FILE *out, const char *name)
{
	util_print_safe(out, *name ? name : "[unknown]");
	putc('\n', out);
}

/* "(id) name" the first time, "(id)" after: callgrind's name compression. */
static void put_ref(FILE *out, const char *key, uint32_t id, bool *seen, const char *name)
{
	fprintf(out, "%s=(%u)", key, id);
	if (seen[id]) {
		putc('\n', out);
		return;
	}
	seen[id] = true;
	putc(' ', out);
	put_name(out, name);
}

/* Number the modules of the functions in the scope: functions with the same module string share
 * an id (the first such function's). */
static void number_modules(const struct snapshot *s, const uint64_t *total, uint32_t *id)
{
	struct strpool *pool = strpool_new();
	struct idmap first;

	idmap_init(&first);
	for (uint32_t f = 1; f < s->nfuncs; f++) {
		const char *m;
		uint32_t g;

		if (!total[f])
			continue;
		m = strpool_intern(pool, s->funcs[f].module, strlen(s->funcs[f].module));
		g = idmap_get(&first, (uint64_t)(uintptr_t)m);
		if (g == IDMAP_MISSING)
			idmap_put(&first, (uint64_t)(uintptr_t)m, g = f);
		id[f] = g;
	}
	idmap_free(&first);
	strpool_free(pool);
}

struct names {
	bool *ob, *fn;             /* ids whose name was given already, per name space */
};

/* The file name space: each name gets an id on first use. */
struct files {
	struct strpool *pool;
	struct idmap ids;          /* interned name → id */
	bool *seen;
	size_t n, cap;
};

static void file_ref(FILE *out, struct files *files, const char *key, const char *name)
{
	const char *interned = strpool_intern(files->pool, name, strlen(name));
	uint32_t id = idmap_get(&files->ids, (uint64_t)(uintptr_t)interned);

	if (id == IDMAP_MISSING) { /* ids from 1, as the other name spaces' */
		xgrow((void **)&files->seen, &files->cap, files->n + 2, sizeof(*files->seen));
		id = (uint32_t)++files->n;
		files->seen[id] = false;
		idmap_put(&files->ids, (uint64_t)(uintptr_t)interned, id);
	}
	put_ref(out, key, id, files->seen, name);
}

/* Walk the scope's tree for its call edges, sorted by caller; returns first_edge: the edges out
 * of f are first_edge[f] .. first_edge[f + 1]. */
static size_t *collect_edges(struct callgrind *c, const struct export_scope *scope)
{
	const struct snapshot *s = c->s;
	size_t *first_edge = xcalloc(s->nfuncs + 1, sizeof(*first_edge));
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	c->innermost = xmalloc(s->nfuncs * sizeof(*c->innermost));
	memset(c->innermost, 0xff, s->nfuncs * sizeof(*c->innermost));
	c->walk = &w;
	export_walk_begin(&w, s, scope, leave, c);
	while (snapshot_walk_next(&w, &step))
		visit(c, &step);
	snapshot_walk_end(&w);
	if (c->nedges) /* no calls at all (only leaf frames): edges is NULL, which qsort may not get */
		qsort(c->edges, c->nedges, sizeof(*c->edges), by_caller_then_cost);
	for (size_t e = 0; e < c->nedges; e++)
		first_edge[c->edges[e].caller + 1]++;
	for (size_t f = 0; f < s->nfuncs; f++)
		first_edge[f + 1] += first_edge[f];
	return first_edge;
}

static void write_header(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	fprintf(out, "# callgrind format\nversion: 1\ncreator: proftop %s\n", PROFTOP_VERSION);
	if (scope->thread)
		fprintf(out, "pid: %d\nthread: %d\n", (int)scope->thread->pid, (int)scope->thread->tid);
	if (snapshot_timed(s)) {
		char event[32]; /* "Offcpu_us", "Runnable_us", "Wall_us" */

		snprintf(event, sizeof(event), "%s_us", snapshot_kind(s));
		event[0] = (char)toupper((unsigned char)event[0]);
		fprintf(out, "positions: line\nevent: %s : %s time, %s (microseconds)\n"
			     "events: %s\nsummary: %llu\n\n",
			event, snapshot_kind(s), snapshot_time_measured(s), event,
			(unsigned long long)s->nodes[scope->root].total);
	} else if (snapshot_allocations(s)) { /* "Bytes : alloc: bytes allocated" */
		const char *event = snapshot_bytes(s) ? "Bytes" : "Objects";

		fprintf(out, "positions: line\nevent: %s : %s: %s (sampled every %u bytes)\n"
			     "events: %s\nsummary: %llu\n\n",
			event, snapshot_kind(s), snapshot_alloc_measures(s), s->freq,
			event, (unsigned long long)s->nodes[scope->root].total);
	} else {
		fprintf(out, "positions: line\nevent: Samples : CPU samples at %u Hz\nevents: Samples\n"
			     "summary: %llu\n\n",
			s->freq, (unsigned long long)s->nodes[scope->root].total);
	}
}

/* What the writing of function blocks needs. */
struct blocks {
	FILE *out;
	const struct callgrind *c;
	const uint64_t *self;
	const size_t *first_edge;
	const uint32_t *module_id;
	struct names seen;
	struct files files;
	const char **file_of;      /* per function: its fl= name */
	size_t *site_first;        /* the sites' index (annotate_index); NULL: no lines */
	uint32_t *site_ids;
};

static void put_function(struct blocks *b, uint32_t f, bool called)
{
	const struct snapshot *s = b->c->s;

	put_ref(b->out, called ? "cob" : "ob", b->module_id[f], b->seen.ob, s->funcs[f].module);
	file_ref(b->out, &b->files, called ? "cfl" : "fl", b->file_of[f]);
	put_ref(b->out, called ? "cfn" : "fn", f, b->seen.fn, s->funcs[f].name);
}

/* f's self cost per line (after its fl=); what no line holds goes on line 0. The line calls
 * are on, when there is one, in *call (NULL, 0 when there is none or more than one). */
static void write_self_lines(struct blocks *b, uint32_t f, const struct annotation *a,
			     const struct annotate_line **call)
{
	const char *file = b->file_of[f];
	uint64_t placed = 0;
	size_t calling = 0;

	*call = NULL;
	for (size_t i = 0; i < a->nlines; i++) {
		const struct annotate_line *l = &a->lines[i];

		if (!l->file)
			continue;
		if (l->total > l->self && !calling++)
			*call = l;
		if (!l->self || placed + l->self > b->self[f])
			continue;
		if (strcmp(l->file, file))
			file_ref(b->out, &b->files, "fi", file = l->file);
		fprintf(b->out, "%u %llu\n", l->line, (unsigned long long)l->self);
		placed += l->self;
	}
	if (calling != 1)
		*call = NULL;
	if (placed < b->self[f])
		fprintf(b->out, "0 %llu\n", (unsigned long long)(b->self[f] - placed));
	/* Calls are recorded at the file their line is in. */
	if (*call && strcmp((*call)->file, file))
		file_ref(b->out, &b->files, "fi", (*call)->file);
	else if (!*call && file != b->file_of[f])
		file_ref(b->out, &b->files, "fe", b->file_of[f]);
}

/* f's block: its position and self cost, then one call record per function it calls. */
static void write_function(struct blocks *b, uint32_t f)
{
	const struct annotate_line *call = NULL;
	struct annotation a = { 0 };

	put_function(b, f, false);
	if (b->site_first)
		annotate_indexed(b->c->s, f, b->site_first, b->site_ids, &a);
	if (a.has_lines)
		write_self_lines(b, f, &a, &call);
	else if (b->self[f])
		fprintf(b->out, "0 %llu\n", (unsigned long long)b->self[f]);
	for (size_t e = b->first_edge[f]; e < b->first_edge[f + 1]; e++) {
		const struct edge *edge = &b->c->edges[e];

		put_function(b, edge->callee, true);
		fprintf(b->out, "calls=%llu 0\n%u %llu\n", (unsigned long long)edge->calls,
			call ? call->line : 0, (unsigned long long)edge->cost);
	}
	annotation_free(&a);
	putc('\n', b->out);
}

/* Each function's fl=: the file of its hottest line, else its module. */
static void name_files(struct blocks *b, const uint64_t *total)
{
	const struct snapshot *s = b->c->s;

	for (uint32_t f = 1; f < s->nfuncs; f++) {
		struct annotation a = { 0 };

		b->file_of[f] = s->funcs[f].module;
		if (!total[f] || !b->site_first)
			continue;
		annotate_indexed(s, f, b->site_first, b->site_ids, &a);
		if (a.has_lines && a.lines[annotate_hottest(&a)].file)
			b->file_of[f] = a.lines[annotate_hottest(&a)].file;
		annotation_free(&a);
	}
}

int export_callgrind(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct callgrind c = { .s = s };
	uint64_t *self = xmalloc(s->nfuncs * sizeof(*self));
	uint64_t *total = xmalloc(s->nfuncs * sizeof(*total));
	uint32_t *funcs = xmalloc(s->nfuncs * sizeof(*funcs));
	uint32_t *module_id = xcalloc(s->nfuncs, sizeof(*module_id));
	struct blocks b = { out, &c, self, NULL, module_id, { xcalloc(s->nfuncs, 1), xcalloc(s->nfuncs, 1) },
			    { strpool_new() }, xcalloc(s->nfuncs, sizeof(*b.file_of)) };
	size_t nfuncs = 0;

	idmap_init(&c.edge_index);
	idmap_init(&b.files.ids);
	b.first_edge = collect_edges(&c, scope);
	snapshot_flat(s, scope->root, self, total);
	number_modules(s, total, module_id);
	/* Sites count every thread: a thread's scope has no lines. */
	if (s->nsites && !scope->thread)
		b.site_first = annotate_index(s, &b.site_ids);
	name_files(&b, total);
	for (uint32_t f = 1; f < s->nfuncs; f++)
		if (total[f])
			funcs[nfuncs++] = f;
	qsort_r(funcs, nfuncs, sizeof(*funcs), by_total, total);
	write_header(out, s, scope);
	for (size_t i = 0; i < nfuncs; i++)
		write_function(&b, funcs[i]);
	fprintf(out, "totals: %llu\n", (unsigned long long)s->nodes[scope->root].total);

	idmap_free(&c.edge_index);
	free(c.edges);
	free(c.innermost);
	free(c.saved);
	free(self);
	free(total);
	free(funcs);
	free((void *)b.first_edge);
	free(module_id);
	free(b.seen.ob);
	free(b.seen.fn);
	free(b.site_first);
	free(b.site_ids);
	free(b.file_of);
	free(b.files.seen);
	idmap_free(&b.files.ids);
	strpool_free(b.files.pool);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}
