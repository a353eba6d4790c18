/* view.c — snapshot → rows. */
#include "proftop/view.h"

#include "proftop/util.h"

#include <stdbool.h>
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

static int (*const comparators[])(const void *, const void *) = {
	[VIEW_SORT_SELF] = by_self,
	[VIEW_SORT_TOTAL] = by_total,
	[VIEW_SORT_NAME] = by_name,
	[VIEW_SORT_MODULE] = by_module,
};

static bool matches(const struct profile_func *f, const char *filter)
{
	return !filter || !*filter || strcasestr(f->name, filter) || strcasestr(f->module, filter);
}

size_t view_top(const struct profile_snapshot *s, const struct view_top_query *q,
		struct view_row **rows_out)
{
	uint32_t scope = q->scope == PROFILE_NO_NODE ? s->merged_root : q->scope;
	uint64_t *self = NULL, *total = NULL;
	const uint64_t *use_self = s->func_self, *use_total = s->func_total;
	struct view_row *rows = xmalloc((s->nfuncs ? s->nfuncs : 1) * sizeof(*rows));
	uint64_t in_scope = s->nnodes ? s->nodes[scope].total : 0;
	size_t n = 0;

	if (scope != s->merged_root) {
		self = xmalloc(s->nfuncs * sizeof(*self));
		total = xmalloc(s->nfuncs * sizeof(*total));
		profile_snapshot_flat(s, scope, self, total);
		use_self = self;
		use_total = total;
	}
	for (uint32_t f = 1; f < s->nfuncs; f++) {
		if (!use_total[f] || !matches(&s->funcs[f], q->filter))
			continue;
		rows[n] = (struct view_row){
			.func = f,
			.name = s->funcs[f].name,
			.module = s->funcs[f].module,
			.self = use_self[f],
			.total = use_total[f],
			.self_pct = in_scope ? 100.0 * (double)use_self[f] / (double)in_scope : 0,
			.total_pct = in_scope ? 100.0 * (double)use_total[f] / (double)in_scope : 0,
		};
		n++;
	}
	qsort(rows, n, sizeof(*rows), comparators[q->sort]);
	free(self);
	free(total);
	*rows_out = rows;
	return n;
}
