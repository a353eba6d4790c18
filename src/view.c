/* view.c — snapshot → rows: the top functions, call trees flattened for display, callers trees
 * and threads.
 *
 * Flattening a tree is the snapshot's walk (hottest child first) pruned at closed nodes, so a
 * frame costs the rows it shows, not the size of the tree. */
#include "proftop/view.h"

#include "proftop/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int compare_names(const struct view_row *a, const struct view_row *b)
{
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->module, b->module);
}

static int by_self(const void *pa, const void *pb)
{
	const struct view_row *a = pa, *b = pb;

	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return compare_names(a, b);
}

static int by_total(const void *pa, const void *pb)
{
	const struct view_row *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	return compare_names(a, b);
}

static int by_name(const void *a, const void *b)
{
	return compare_names(a, b);
}

static int by_module(const void *pa, const void *pb)
{
	const struct view_row *a = pa, *b = pb;
	int c = strcmp(a->module, b->module);

	return c ? c : by_self(pa, pb);
}

/* The largest change first, growth or shrinkage (report --diff's order), then the other change. */
static int by_changes(const struct view_row *a, const struct view_row *b, double da, double db,
		      double ea, double eb)
{
	if (da != db)
		return da < db ? 1 : -1;
	if (ea != eb)
		return ea < eb ? 1 : -1;
	return compare_names(a, b);
}

static int by_delta_self(const void *pa, const void *pb)
{
	const struct view_row *a = pa, *b = pb;

	return by_changes(a, b, fabs(a->self_pct - a->old_self_pct),
			  fabs(b->self_pct - b->old_self_pct), fabs(a->total_pct - a->old_total_pct),
			  fabs(b->total_pct - b->old_total_pct));
}

static int by_delta_total(const void *pa, const void *pb)
{
	const struct view_row *a = pa, *b = pb;

	return by_changes(a, b, fabs(a->total_pct - a->old_total_pct),
			  fabs(b->total_pct - b->old_total_pct), fabs(a->self_pct - a->old_self_pct),
			  fabs(b->self_pct - b->old_self_pct));
}

static int (*const comparators[])(const void *, const void *) = {
	[VIEW_SORT_SELF] = by_self,
	[VIEW_SORT_TOTAL] = by_total,
	[VIEW_SORT_NAME] = by_name,
	[VIEW_SORT_MODULE] = by_module,
	[VIEW_SORT_DELTA_SELF] = by_delta_self,
	[VIEW_SORT_DELTA_TOTAL] = by_delta_total,
};

static void cell_layout(struct view_cells *c)
{
	static const int width[VIEW_NCELLS_DIFF] = { 8, 8, 10, 8, 8 };

	for (int i = 0, x = 0; i < VIEW_NCELLS_DIFF; x += width[i], i++) {
		c->x[i] = x;
		c->width[i] = width[i];
	}
}

void view_cells(struct view_cells *c, double first_pct, double second_pct, uint64_t count)
{
	cell_layout(c);
	snprintf(c->text[VIEW_CELL_FIRST], sizeof(c->text[0]), "%7.2f ", first_pct);
	if (second_pct < 0) /* none: a window's or a thread's lines have no totals */
		snprintf(c->text[VIEW_CELL_SECOND], sizeof(c->text[0]), "%7s ", "-");
	else
		snprintf(c->text[VIEW_CELL_SECOND], sizeof(c->text[0]), "%7.2f ", second_pct);
	snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8llu  ", (unsigned long long)count);
	c->text[VIEW_CELL_DELTA_FIRST][0] = c->text[VIEW_CELL_DELTA_SECOND][0] = '\0';
}

void view_seconds_cell(struct view_cells *c, uint64_t microseconds)
{
	snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8.3f  ", (double)microseconds / 1e6);
}

void view_count_cell(struct view_cells *c, const struct snapshot *s, uint64_t count)
{
	char bytes[16];

	if (snapshot_timed(s))
		view_seconds_cell(c, count);
	else if (snapshot_bytes(s))
		snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8s  ",
			 util_bytes_text(bytes, sizeof(bytes), count));
	else
		snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8llu  ",
			 (unsigned long long)count);
}

void view_line_count_cell(struct view_cells *c, const struct snapshot *s, uint64_t count)
{
	if (s->mode != SAMPLE_MODE_COVERAGE)
		view_count_cell(c, s, count);
	else if (!count)
		snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8s  ", "#####");
	else if (s->coverage_cap && count >= s->coverage_cap) {
		char capped[24];

		snprintf(capped, sizeof(capped), ">=%llu", (unsigned long long)s->coverage_cap);
		snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8s  ", capped);
	}
	else
		view_count_cell(c, s, count);
}

void view_lines_cell(char *text, size_t size, const struct view_row *r)
{
	if (!r->lines)
		snprintf(text, size, "%16s", "");
	else
		snprintf(text, size, "%5u/%-4u%4.0f%% ", r->lines_reached, r->lines,
			 100.0 * r->lines_reached / r->lines);
}

const char *view_line_count_heading(const struct snapshot *s)
{
	return s && s->mode == SAMPLE_MODE_COVERAGE ? "EXECUTED" : "SAMPLES";
}

/* A change as "%+7.2f ", where what rounds to nothing is +0.00, never -0.00. */
static void delta_cell(char *text, size_t size, double delta)
{
	snprintf(text, size, "%+7.2f ", fabs(delta) < 0.005 ? 0.0 : delta);
}

void view_delta_cells(struct view_cells *c, double first_delta, double second_delta)
{
	delta_cell(c->text[VIEW_CELL_DELTA_FIRST], sizeof(c->text[0]), first_delta);
	delta_cell(c->text[VIEW_CELL_DELTA_SECOND], sizeof(c->text[0]), second_delta);
}

/* text right-aligned in width columns and a space; UTF-8 counts a column per character. */
static void heading(char *out, size_t size, int width, const char *text)
{
	int columns = 0;

	for (const char *p = text; *p; p++)
		columns += (*p & 0xc0) != 0x80;
	snprintf(out, size, "%*s%s ", columns < width ? width - columns : 0, "", text);
}

void view_cell_headings(struct view_cells *c, const char *first, const char *second,
			const char *count)
{
	cell_layout(c);
	heading(c->text[VIEW_CELL_FIRST], sizeof(c->text[0]), 7, first);
	heading(c->text[VIEW_CELL_SECOND], sizeof(c->text[0]), 7, second);
	snprintf(c->text[VIEW_CELL_COUNT], sizeof(c->text[0]), "%8s  ", count);
	c->text[VIEW_CELL_DELTA_FIRST][0] = c->text[VIEW_CELL_DELTA_SECOND][0] = '\0';
}

void view_delta_headings(struct view_cells *c, const char *first, const char *second)
{
	heading(c->text[VIEW_CELL_DELTA_FIRST], sizeof(c->text[0]), 7, first);
	heading(c->text[VIEW_CELL_DELTA_SECOND], sizeof(c->text[0]), 7, second);
}

bool view_matches(const struct snapshot_func *f, const char *filter)
{
	return !filter || !*filter || strcasestr(f->name, filter) || strcasestr(f->module, filter);
}

/* A row of a function only the baseline has samples of in scope: fn is now's function func, or
 * the baseline's own (func 0) when now has none of its name. */
static struct view_row gone_row(const struct snapshot_func *fn, uint32_t func, uint64_t old_self,
				uint64_t old_total, uint64_t old_samples)
{
	return (struct view_row){
		.func = func,
		.name = fn->name,
		.module = fn->module,
		.old_self_pct = diff_share(old_self, old_samples),
		.old_total_pct = diff_share(old_total, old_samples),
		.only_old = true,
	};
}

size_t view_top(const struct snapshot *s, const struct view_top_query *q,
		struct view_row **rows_out)
{
	uint32_t scope = q->scope == SNAPSHOT_NO_NODE ? s->merged_root : q->scope;
	uint64_t *self = NULL, *total = NULL;
	const uint64_t *use_self = s->func_self, *use_total = s->func_total;
	const struct diff_base *base = q->base;
	const struct diff_unmatched *unmatched = NULL;
	size_t nunmatched = base ? diff_base_unmatched(base, &unmatched) : 0;
	uint64_t old_samples = base ? diff_base_samples(base) : 0;
	struct view_row *rows = xmalloc((s->nfuncs + nunmatched + 1) * sizeof(*rows));
	uint64_t in_scope = s->nnodes ? s->nodes[scope].total : 0;
	size_t n = 0;

	if (scope != s->merged_root) {
		self = xmalloc(s->nfuncs * sizeof(*self));
		total = xmalloc(s->nfuncs * sizeof(*total));
		snapshot_flat(s, scope, self, total);
		use_self = self;
		use_total = total;
	}
	/* Coverage: every function probed is a row (one that never ran at 0), with its lines. */
	bool coverage = s->mode == SAMPLE_MODE_COVERAGE && scope == s->merged_root;
	uint32_t *lines = coverage ? xcalloc(s->nfuncs, sizeof(*lines)) : NULL;
	uint32_t *reached = coverage ? xcalloc(s->nfuncs, sizeof(*reached)) : NULL;

	for (size_t i = 0; coverage && i < s->nsites; i++)
		if (s->sites[i].func < s->nfuncs && s->sites[i].addr != SNAPSHOT_SITE_OTHER) {
			lines[s->sites[i].func]++;
			reached[s->sites[i].func] += s->sites[i].self > 0;
		}
	for (uint32_t f = 1; f < s->nfuncs; f++) {
		uint64_t old_self = 0, old_total = 0;

		if (base)
			diff_base_func(base, f, &old_self, &old_total);
		if ((!use_total[f] && !old_total && !(coverage && lines[f])) ||
		    !view_matches(&s->funcs[f], q->filter))
			continue;
		if (!use_total[f] && !(coverage && lines[f])) {
			rows[n++] = gone_row(&s->funcs[f], f, old_self, old_total, old_samples);
			continue;
		}
		rows[n] = (struct view_row){
			.func = f,
			.name = s->funcs[f].name,
			.module = s->funcs[f].module,
			.self = use_self[f],
			.total = use_total[f],
			.self_pct = diff_share(use_self[f], in_scope),
			.total_pct = diff_share(use_total[f], in_scope),
			.old_self_pct = diff_share(old_self, old_samples),
			.old_total_pct = diff_share(old_total, old_samples),
			.only_new = base && !old_total,
			.lines = coverage ? lines[f] : 0,
			.lines_reached = coverage ? reached[f] : 0,
		};
		n++;
	}
	free(lines);
	free(reached);
	for (size_t i = 0; i < nunmatched; i++) {
		const struct snapshot *old = diff_base_snapshot(base);
		const struct diff_unmatched *u = &unmatched[i];

		if (view_matches(&old->funcs[u->func], q->filter))
			rows[n++] = gone_row(&old->funcs[u->func], SNAPSHOT_ROOT_FUNC, u->self, u->total,
					     old_samples);
	}
	qsort(rows, n, sizeof(*rows), comparators[q->sort]);
	free(self);
	free(total);
	*rows_out = rows;
	return n;
}

/* --- call trees -------------------------------------------------------------------------------- */


void view_expansion_init(struct view_expansion *e)
{
	idmap_init(&e->state);
	e->all = false;
}

void view_expansion_free(struct view_expansion *e)
{
	idmap_free(&e->state);
}

void view_expansion_reset(struct view_expansion *e, bool all)
{
	idmap_free(&e->state);
	e->all = all;
}

void view_expansion_set(struct view_expansion *e, uint64_t path, bool open)
{
	idmap_put(&e->state, path, open);
}

void view_tree_of(struct view_tree *t, const struct snapshot *s, uint32_t node)
{
	*t = (struct view_tree){
		.nodes = s->nodes,
		.nnodes = s->nnodes,
		.funcs = s->funcs,
		.nfuncs = s->nfuncs,
		.root = node == SNAPSHOT_NO_NODE ? s->merged_root : node,
		.root_path = SNAPSHOT_ROOT_PATH,
	};
}

void view_tree_free(struct view_tree *t)
{
	free(t->owned);
	t->owned = NULL;
}

size_t view_tree_funcs(const struct view_tree *t, uint32_t node, uint32_t *funcs, size_t max)
{
	size_t depth = 0;

	for (uint32_t n = node; n != t->root && n != SNAPSHOT_NO_NODE; n = t->nodes[n].parent)
		depth++;
	if (depth > max)
		return 0;
	for (uint32_t n = node, i = (uint32_t)depth; n != t->root && n != SNAPSHOT_NO_NODE;
	     n = t->nodes[n].parent)
		funcs[--i] = t->nodes[n].func;
	return depth;
}

uint64_t view_tree_path(const struct view_tree *t, uint32_t node)
{
	uint32_t funcs[512];
	size_t depth = view_tree_funcs(t, node, funcs, sizeof(funcs) / sizeof(*funcs));
	uint64_t path = t->root_path;

	for (size_t i = 0; i < depth; i++)
		path = snapshot_path_child(path, funcs[i]);
	return path;
}

uint32_t view_tree_find(const struct view_tree *t, const uint32_t *funcs, size_t depth)
{
	uint32_t n = t->root;

	for (size_t i = 0; i < depth && n != SNAPSHOT_NO_NODE; i++) {
		uint32_t c = t->nodes[n].first_child;

		while (c != SNAPSHOT_NO_NODE && t->nodes[c].func != funcs[i])
			c = t->nodes[c].next_sibling;
		n = c;
	}
	return n;
}

enum {
	MARK_MATCH = 1,            /* the node or one below matches the filter */
	MARK_BELOW = 2,            /* a node strictly below matches */
};

/* One flattening: the tree, the query and what is derived from them. */
struct flatten {
	const struct view_tree *tree;
	const struct view_tree_query *query;
	uint64_t base;
	double scale;              /* 100 / base */
	uint64_t old_base;         /* the baseline's samples at the tree's root */
	const uint8_t *marks;      /* with a filter: MARK_* per node */
	uint64_t *paths;           /* per depth: the path hash of the node last shown there */
	size_t paths_cap;
};

/* Whether a node with samples shows: it matches the filter (or leads to a match) and is not
 * under the minimum share. */
static bool shown(void *arg, uint32_t node)
{
	const struct flatten *f = arg;
	uint64_t total = f->tree->nodes[node].total;

	if (f->marks && !(f->marks[node] & MARK_MATCH))
		return false;
	return !f->query->min_pct || (double)total * 100.0 >= f->query->min_pct * (double)f->base;
}

static bool is_open(const struct flatten *f, uint64_t path, uint32_t node, bool hottest)
{
	const struct view_expansion *e = f->query->expansion;
	uint32_t state;

	if (!e)
		return true;
	state = idmap_get(&e->state, path);
	if (state != IDMAP_MISSING)
		return state != 0;
	return e->all || hottest || (f->marks && (f->marks[node] & MARK_BELOW));
}

/* MARK_* for every node, from the functions that match the filter. Children come after their
 * parents, so one reverse pass carries a match up to every ancestor. */
static uint8_t *mark_matches(const struct view_tree *t, const char *filter)
{
	uint8_t *marks = xcalloc(t->nnodes ? t->nnodes : 1, 1);
	uint8_t *func_match = xcalloc(t->nfuncs ? t->nfuncs : 1, 1);

	for (size_t f = 1; f < t->nfuncs; f++)
		func_match[f] = view_matches(&t->funcs[f], filter);
	for (size_t i = t->nnodes; i-- > 0;) {
		const struct snapshot_node *n = &t->nodes[i];

		if (func_match[n->func])
			marks[i] |= MARK_MATCH;
		if ((marks[i] & MARK_MATCH) && n->parent != SNAPSHOT_NO_NODE)
			marks[n->parent] |= MARK_MATCH | MARK_BELOW;
	}
	free(func_match);
	return marks;
}

/* The path hash of a row at depth: the root's own with show_root, else its parent's mixed with
 * its function. */
static uint64_t row_path(struct flatten *f, unsigned depth, uint32_t func)
{
	uint64_t path;

	if (f->query->show_root && depth == 0)
		path = f->tree->root_path;
	else
		path = snapshot_path_child(depth ? f->paths[depth - 1] : f->tree->root_path, func);
	if (depth >= f->paths_cap)
		xgrow((void **)&f->paths, &f->paths_cap, depth + 1, sizeof(*f->paths));
	f->paths[depth] = path;
	return path;
}

static void fill_row(struct view_tree_row *r, const struct flatten *f,
		     const struct snapshot_walk_step *step, uint64_t path, bool has_children,
		     bool open)
{
	const struct snapshot_node *n = &f->tree->nodes[step->node];
	const struct snapshot_func *fn = &f->tree->funcs[n->func];

	r->node = step->node;
	r->func = n->func;
	r->name = fn->name;
	r->module = fn->module;
	r->depth = step->depth;
	r->self = n->self;
	r->total = n->total;
	r->self_pct = (double)n->self * f->scale;
	r->total_pct = (double)n->total * f->scale;
	r->path = path;
	r->has_children = has_children;
	r->open = open && has_children;
	r->last = step->last;
	if (f->query->baseline) {
		uint64_t self, total;

		r->only_new = !diff_base_node(f->query->baseline, path, &self, &total) || !total;
		r->old_self_pct = diff_share(self, f->old_base);
		r->old_total_pct = diff_share(total, f->old_base);
	}
}

size_t view_tree(const struct view_tree *t, const struct view_tree_query *q,
		 struct view_tree_row **rows, size_t *cap)
{
	struct flatten f = { t, q, q->base ? q->base : t->nodes[t->root].total, 0, 0, NULL, NULL, 0 };
	struct snapshot_walk w = { .nodes = t->nodes, .keep = shown, .arg = &f };
	struct snapshot_walk_step step;
	size_t n = 0;

	f.scale = f.base ? 100.0 / (double)f.base : 0;
	if (q->baseline) {
		uint64_t self;

		diff_base_node(q->baseline, t->root_path, &self, &f.old_base);
	}
	if (q->filter && *q->filter)
		f.marks = mark_matches(t, q->filter);
	snapshot_walk_begin(&w, t->root, q->show_root);
	while (snapshot_walk_next(&w, &step)) {
		uint32_t func = t->nodes[step.node].func;
		uint64_t path = row_path(&f, step.depth, func);
		bool open = is_open(&f, path, step.node, step.hottest);
		bool has_children = open ? snapshot_walk_expand(&w) > 0
					 : snapshot_walk_has_children(&w);

		if (!open)
			snapshot_walk_prune(&w);
		if (n == *cap)
			xgrow((void **)rows, cap, n + 1, sizeof(**rows));
		fill_row(&(*rows)[n++], &f, &step, path, has_children, open);
	}
	snapshot_walk_end(&w);
	free(f.paths);
	free((void *)f.marks);
	return n;
}

/* (view.h) room's whole levels are indented; past them the mark takes their place. */
void view_tree_indent(struct view_indent *out, unsigned depth, int room, bool utf8)
{
	int levels = room > 1 ? room / 2 : 0, width;

	memset(out, 0, sizeof(*out));
	if (depth <= (unsigned)levels) {
		out->columns = (int)depth * 2;
		return;
	}
	width = snprintf(out->mark, sizeof(out->mark), "%s%u", utf8 ? "·" : ":", depth);
	width -= utf8 ? 1 : 0; /* the middle dot is two bytes, one column */
	out->columns = levels * 2 > width + 1 ? levels * 2 : width + 1;
	out->mark_x = out->columns - 1 - width;
}

/* --- callers ----------------------------------------------------------------------------------- */

struct inverted {
	struct snapshot_node *nodes;
	size_t n, cap;
	struct idmap children;     /* parent << 32 | func → node */
};

static uint32_t inverted_child(struct inverted *inv, uint32_t parent, uint32_t func)
{
	uint64_t key = (uint64_t)parent << 32 | func;
	uint32_t c = idmap_get(&inv->children, key);

	if (c != IDMAP_MISSING)
		return c;
	xgrow((void **)&inv->nodes, &inv->cap, inv->n + 1, sizeof(*inv->nodes));
	c = (uint32_t)inv->n++;
	inv->nodes[c] = (struct snapshot_node){ func, parent, SNAPSHOT_NO_NODE,
					       inv->nodes[parent].first_child, 0, 0 };
	inv->nodes[parent].first_child = c;
	idmap_put(&inv->children, key, c);
	return c;
}

/* Add the samples through node (an outermost occurrence of the function) along its callers. */
static void add_callers(struct inverted *inv, const struct snapshot_node *nodes, uint32_t node,
			uint32_t top)
{
	uint64_t w = nodes[node].total;
	uint32_t at = 0;

	inv->nodes[0].total += w;
	for (uint32_t a = nodes[node].parent; a != SNAPSHOT_NO_NODE && a != top &&
					     nodes[a].parent != SNAPSHOT_NO_NODE;
	     a = nodes[a].parent) {
		at = inverted_child(inv, at, nodes[a].func);
		inv->nodes[at].total += w;
	}
	inv->nodes[at].self += w;
}

struct callers {
	struct inverted inv;
	const struct snapshot_node *nodes;
	uint32_t func, top;
	uint32_t *on_path;         /* per function: its frames on the walk's path */
};

static void callers_leave(void *arg, uint32_t node)
{
	struct callers *c = arg;

	c->on_path[c->nodes[node].func]--;
}

void view_callers(struct view_tree *t, const struct snapshot *s, uint32_t scope, uint32_t func)
{
	uint32_t top = scope == SNAPSHOT_NO_NODE ? s->merged_root : scope;
	struct callers c = { { NULL, 0, 0, { 0 } }, s->nodes, func, top,
			     xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(uint32_t)) };
	struct snapshot_walk w = { .nodes = s->nodes, .leave = callers_leave, .arg = &c,
				   .unordered = true };
	struct snapshot_walk_step step;

	idmap_init(&c.inv.children);
	xgrow((void **)&c.inv.nodes, &c.inv.cap, 1, sizeof(*c.inv.nodes));
	c.inv.nodes[c.inv.n++] = (struct snapshot_node){ func, SNAPSHOT_NO_NODE, SNAPSHOT_NO_NODE,
							 SNAPSHOT_NO_NODE, 0, 0 };
	/* Only the outermost occurrence of func on a path counts, so recursion adds its samples
	 * once, as snapshot_flat() counts totals. */
	snapshot_walk_begin(&w, top, false);
	while (snapshot_walk_next(&w, &step)) {
		uint32_t f = s->nodes[step.node].func;

		if (f == func && !c.on_path[func])
			add_callers(&c.inv, s->nodes, step.node, top);
		c.on_path[f]++;
	}
	snapshot_walk_end(&w);
	idmap_free(&c.inv.children);
	free(c.on_path);
	*t = (struct view_tree){
		.nodes = c.inv.nodes,
		.nnodes = c.inv.n,
		.funcs = s->funcs,
		.nfuncs = s->nfuncs,
		.root = 0,
		.root_path = snapshot_path_child(SNAPSHOT_ROOT_PATH, func), /* each function's callers open apart */
		.owned = c.inv.nodes,
	};
}

/* --- threads ----------------------------------------------------------------------------------- */

static int by_samples(const void *pa, const void *pb)
{
	const struct view_thread_row *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* For each thread, the function with the most self samples in its trie. */
static void hottest_per_thread(const struct snapshot *s, uint32_t *hot, uint64_t *hot_self)
{
	uint32_t *owner = xmalloc(s->nnodes * sizeof(*owner)); /* the node's thread, or none */
	uint64_t *self = NULL;
	size_t nslots = 0, cap = 0;
	struct idmap slots;        /* thread << 32 | func → index in self */

	idmap_init(&slots);
	for (size_t i = 0; i < s->nnodes; i++) /* parents come first: roots have none */
		owner[i] = s->nodes[i].parent == SNAPSHOT_NO_NODE ? UINT32_MAX : owner[s->nodes[i].parent];
	for (size_t t = 0; t < s->nthreads; t++)
		owner[s->threads[t].root] = (uint32_t)t;
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct snapshot_node *n = &s->nodes[i];
		uint64_t key;
		uint32_t slot;

		if (n->parent != SNAPSHOT_NO_NODE)
			owner[i] = owner[n->parent];
		if (!n->self || n->func == SNAPSHOT_ROOT_FUNC || owner[i] == UINT32_MAX)
			continue;
		key = (uint64_t)owner[i] << 32 | n->func;
		slot = idmap_get(&slots, key);
		if (slot == IDMAP_MISSING) {
			xgrow((void **)&self, &cap, nslots + 1, sizeof(*self));
			self[nslots] = 0;
			slot = (uint32_t)nslots++;
			idmap_put(&slots, key, slot);
		}
		self[slot] += n->self;
		if (self[slot] > hot_self[owner[i]] ||
		    (self[slot] == hot_self[owner[i]] && n->func < hot[owner[i]])) {
			hot_self[owner[i]] = self[slot];
			hot[owner[i]] = n->func;
		}
	}
	idmap_free(&slots);
	free(self);
	free(owner);
}

static bool thread_matches(const struct view_thread_row *r, const struct snapshot *s,
			   const char *filter)
{
	return !filter || !*filter || strcasestr(r->comm, filter) ||
	       (r->hot_func && view_matches(&s->funcs[r->hot_func], filter));
}

/* A thread's name, or else its process's: threads created without exec or prctl(PR_SET_NAME) get
 * no COMM record of their own. by_tid maps a tid to its index in s->threads. */
static const char *thread_name(const struct snapshot *s, const struct snapshot_thread *t,
			       const struct idmap *by_tid)
{
	uint32_t main_thread;

	if (t->comm)
		return t->comm;
	main_thread = idmap_get(by_tid, (uint64_t)(uint32_t)t->pid);
	if (main_thread != IDMAP_MISSING && s->threads[main_thread].comm)
		return s->threads[main_thread].comm;
	return "";
}

size_t view_threads(const struct snapshot *s, const char *filter,
		    struct view_thread_row **rows_out)
{
	struct view_thread_row *rows = xmalloc((s->nthreads ? s->nthreads : 1) * sizeof(*rows));
	uint32_t *hot = xcalloc(s->nthreads ? s->nthreads : 1, sizeof(*hot));
	uint64_t *hot_self = xcalloc(s->nthreads ? s->nthreads : 1, sizeof(*hot_self));
	struct idmap by_tid;
	size_t n = 0;

	idmap_init(&by_tid);
	for (size_t i = 0; i < s->nthreads; i++)
		idmap_put(&by_tid, (uint64_t)(uint32_t)s->threads[i].tid, (uint32_t)i);
	hottest_per_thread(s, hot, hot_self);
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct snapshot_thread *t = &s->threads[i];

		if (!t->samples)
			continue;
		rows[n] = (struct view_thread_row){
			.pid = t->pid,
			.tid = t->tid,
			.comm = thread_name(s, t, &by_tid),
			.root = t->root,
			.samples = t->samples,
			.pct = s->samples ? 100.0 * (double)t->samples / (double)s->samples : 0,
			.hot_func = hot[i],
			.hot_name = hot[i] ? s->funcs[hot[i]].name : "",
			.hot_module = hot[i] ? s->funcs[hot[i]].module : "",
			.hot_pct = 100.0 * (double)hot_self[i] / (double)t->samples,
		};
		if (thread_matches(&rows[n], s, filter))
			n++;
	}
	qsort(rows, n, sizeof(*rows), by_samples);
	idmap_free(&by_tid);
	free(hot);
	free(hot_self);
	*rows_out = rows;
	return n;
}
