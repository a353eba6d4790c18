/* diff.c — a profile against a baseline (see diff.h): both snapshots' flat tables, functions
 * matched by name and module through a hash of the pair. */
#include "proftop/diff.h"

#include "proftop/idmap.h"
#include "proftop/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t diff_key(const struct snapshot_func *f)
{
	uint64_t h = util_hash_bytes(f->name, strlen(f->name), 0x64696666);

	return util_hash_bytes(f->module, strlen(f->module), h);
}

static double share(uint64_t count, uint64_t samples)
{
	return samples ? 100.0 * (double)count / (double)samples : 0.0;
}

/* The row of f, made on first sight: keyed by name and module, a collision told by comparing. */
static struct diff_row *diff_row_of(struct idmap *index, struct diff_row **rows, size_t *n,
				    size_t *cap, const struct snapshot_func *f)
{
	for (uint64_t k = diff_key(f);; k = util_hash_u64(k)) {
		uint32_t at = idmap_get(index, k);

		if (at == IDMAP_MISSING) {
			xgrow((void **)rows, cap, *n + 1, sizeof(**rows));
			(*rows)[*n] = (struct diff_row){ .name = f->name, .module = f->module,
							 .only_new = true, .only_old = true };
			idmap_put(index, k, (uint32_t)*n);
			return &(*rows)[(*n)++];
		}
		if (!strcmp((*rows)[at].name, f->name) && !strcmp((*rows)[at].module, f->module))
			return &(*rows)[at];
	}
}

static int diff_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double da = fabs(a->self - a->old_self), db = fabs(b->self - b->old_self);
	double ta = fabs(a->total - a->old_total), tb = fabs(b->total - b->old_total);
	int c;

	if (da != db)
		return da < db ? 1 : -1;
	if (ta != tb)
		return ta < tb ? 1 : -1;
	c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->module, b->module);
}

size_t diff_rows(const struct snapshot *old, const struct snapshot *new, struct diff_row **rows)
{
	const struct snapshot *side[2] = { new, old };
	struct idmap index;
	size_t n = 0, cap = 0;

	*rows = NULL;
	idmap_init(&index);
	for (int s = 0; s < 2; s++) {
		for (uint32_t f = 1; f < side[s]->nfuncs; f++) {
			struct diff_row *r;

			if (!side[s]->func_self[f] && !side[s]->func_total[f])
				continue;
			r = diff_row_of(&index, rows, &n, &cap, &side[s]->funcs[f]);
			if (s == 0) {
				r->self = share(side[s]->func_self[f], side[s]->samples);
				r->total = share(side[s]->func_total[f], side[s]->samples);
				r->only_old = false;
			} else {
				r->old_self = share(side[s]->func_self[f], side[s]->samples);
				r->old_total = share(side[s]->func_total[f], side[s]->samples);
				r->only_new = false;
			}
		}
	}
	idmap_free(&index);
	if (n > 1)
		qsort(*rows, n, sizeof(**rows), diff_cmp);
	return n;
}
