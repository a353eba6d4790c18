/* Unit tests of the profile's sites (per-address counts with their source lines): interning,
 * counting per sample, their copies in incremental snapshots, the memory budget's one
 * SNAPSHOT_SITE_OTHER site per function, inlined functions, and the sites of a stretch of the
 * run (self samples only).
 * Then the node sites (each thread node's self samples by site): they add up to the nodes' self,
 * are copied into incremental snapshots as in full ones, survive a fold with exact totals and stay
 * within the budget. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/strpool.h"
#include "unit_profiles.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t func(struct profile *p, const char *name)
{
	return profile_func(p, "prog", name, 0);
}

/* One site per (func, addr); file and line from the first sight; the file is the profile's own
 * copy, one pointer for equal names. */
static void sites_intern(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t f = func(p, "main"), g = func(p, "other");
	char file[32] = "src/a.c";
	char *same = strdup("src/a.c");
	uint32_t a = profile_site(p, f, 0x10, file, 5);

	strcpy(file, "src/zz.c");
	assert_int_equal(profile_site(p, f, 0x10, file, 99), a);
	uint32_t b = profile_site(p, f, 0x14, same, 6);
	uint32_t c = profile_site(p, g, 0x10, same, 7);
	uint32_t none = profile_site(p, f, 0x18, NULL, 0);
	assert_int_not_equal(b, a);
	assert_int_not_equal(c, a);
	assert_int_not_equal(c, b);
	assert_int_not_equal(none, a);
	free(same); /* the profile kept its own copy */

	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->nsites, 4);
	assert_int_equal(s->sites[a].func, f);
	assert_int_equal(s->sites[a].addr, 0x10);
	assert_int_equal(s->sites[a].line, 5);
	assert_string_equal(s->sites[a].file, "src/a.c");
	assert_ptr_equal(s->sites[a].file, strpool_find(s->strings, "src/a.c", 7));
	assert_ptr_equal(s->sites[b].file, s->sites[a].file);
	assert_ptr_equal(s->sites[c].file, s->sites[a].file);
	assert_int_equal(s->sites[b].line, 6);
	assert_int_equal(s->sites[c].func, g);
	assert_null(s->sites[none].file);
	assert_int_equal(s->sites[none].line, 0);
	for (size_t i = 0; i < s->nsites; i++)
		assert_true(s->sites[i].self == 0 && s->sites[i].total == 0);
	snapshot_unref(s);
	profile_free(p);
}

/* The leaf's site counts self; every site on the stack counts total once per sample, a
 * recursive one too; unknown sites are skipped; samples without sites leave them alone. */
static void sites_count_once_per_sample(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t m = func(p, "main"), rec = func(p, "rec"), leaf = func(p, "leaf");
	uint32_t sm = profile_site(p, m, 0x10, "m.c", 5), sr1 = profile_site(p, rec, 0x20, "r.c", 7);
	uint32_t sr2 = profile_site(p, rec, 0x24, "r.c", 8), sl = profile_site(p, leaf, 0x30, "l.c", 1);
	const uint32_t f1[] = { m, rec, rec, leaf }, s1[] = { sm, sr1, sr1, sl };
	const uint32_t f2[] = { m, rec, rec }, s2[] = { sm, sr1, sr1 };
	const uint32_t f3[] = { m, rec }, s3[] = { PROFILE_NO_SITE, sr2 };
	const uint32_t f4[] = { m, leaf }, s4[] = { sm, PROFILE_NO_SITE };

	profile_add_sites(p, 1, 1, f1, s1, 4);
	profile_add_sites(p, 1, 1, f2, s2, 3);
	profile_add_sites(p, 1, 1, f3, s3, 2);
	profile_add_sites(p, 1, 1, f4, s4, 2);
	for (int i = 0; i < 5; i++)
		profile_add(p, 1, 1, f1, 4);

	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->samples, 9);
	assert_int_equal(s->func_total[rec], 8); /* the flat table did count profile_add */
	assert_int_equal(s->sites[sm].self, 0);
	assert_int_equal(s->sites[sm].total, 3);
	assert_int_equal(s->sites[sr1].self, 1);
	assert_int_equal(s->sites[sr1].total, 2);
	assert_int_equal(s->sites[sr2].self, 1);
	assert_int_equal(s->sites[sr2].total, 1);
	assert_int_equal(s->sites[sl].self, 1);
	assert_int_equal(s->sites[sl].total, 1);
	snapshot_unref(s);
	profile_free(p);
}

/* --- snapshots ---------------------------------------------------------------------------------- */

#define MODEL_SITES 512

/* What the sites' counts should be. */
struct model {
	uint64_t self[MODEL_SITES], total[MODEL_SITES];
	size_t n;
};

struct fixture {
	struct profile *p;
	uint32_t main_, work;
	struct model m;
};

/* A new site of work at addr, on w.c:line. */
static uint32_t new_site(struct fixture *x, uint64_t addr, unsigned line)
{
	uint32_t id = profile_site(x->p, x->work, addr, "w.c", line);

	assert_int_equal(id, x->m.n);
	x->m.n++;
	return id;
}

/* One sample main → work, in work at leaf, main at caller (PROFILE_NO_SITE: unknown). */
static void sample(struct fixture *x, uint32_t caller, uint32_t leaf)
{
	const uint32_t funcs[] = { x->main_, x->work }, sites[] = { caller, leaf };

	profile_add_sites(x->p, 1, 1, funcs, sites, 2);
	x->m.self[leaf]++;
	x->m.total[leaf]++;
	if (caller != PROFILE_NO_SITE)
		x->m.total[caller]++;
}

static void assert_sites(const struct snapshot *s, const struct model *m)
{
	assert_int_equal(s->nsites, m->n);
	for (size_t i = 0; i < m->n; i++) {
		assert_int_equal(s->sites[i].self, m->self[i]);
		assert_int_equal(s->sites[i].total, m->total[i]);
	}
}

/* Snapshots show the sites as they were when made, a held one keeps them, and one updated from
 * a pooled snapshot (the profile's incremental copy of what changed) gets the new counts and
 * sites, however many generations it missed. */
static void snapshot_sites_incremental(void **state)
{
	(void)state;
	static struct fixture x; /* the model is large */
	memset(&x, 0, sizeof(x));
	x.p = profile_new(NULL);
	x.main_ = func(x.p, "main");
	x.work = func(x.p, "work");
	uint32_t sa = new_site(&x, 0x100, 10), sb;
	struct model at1, at4;

	sample(&x, PROFILE_NO_SITE, sa);
	sample(&x, PROFILE_NO_SITE, sa);
	struct snapshot *s1 = profile_snapshot(x.p); /* held to the end */
	at1 = x.m;
	assert_sites(s1, &at1);

	/* s1 is held: s2 is a new full copy. */
	for (int i = 0; i < 3; i++)
		sample(&x, PROFILE_NO_SITE, sa);
	sb = new_site(&x, 0x50, 3);
	sample(&x, sb, sa);
	struct snapshot *s2 = profile_snapshot(x.p);
	assert_sites(s2, &x.m);
	assert_int_equal(s2->sites[sa].self, 6);
	assert_sites(s1, &at1);

	/* s2 is dropped: s3 is s2 brought up to date, past its sites array's first capacity. */
	uintptr_t recycled = (uintptr_t)s2;
	snapshot_unref(s2);
	for (unsigned i = 0; i < 300; i++)
		sample(&x, sb, new_site(&x, 0x1000 + 4 * i, 100 + i));
	sample(&x, PROFILE_NO_SITE, sa);
	uint32_t unsampled = new_site(&x, 0x2000, 77);
	struct snapshot *s3 = profile_snapshot(x.p);
	assert_int_equal((uintptr_t)s3, recycled); /* else this tests a full copy */
	assert_sites(s3, &x.m);
	assert_int_equal(s3->sites[unsampled].addr, 0x2000);
	assert_int_equal(s3->sites[unsampled].line, 77);
	assert_int_equal(s3->sites[unsampled].func, x.work);
	assert_int_equal(s3->sites[301].line, 399);
	assert_string_equal(s3->sites[301].file, "w.c");
	assert_sites(s1, &at1);

	/* Again with no new site. */
	recycled = (uintptr_t)s3;
	snapshot_unref(s3);
	sample(&x, sb, 7);
	struct snapshot *s4 = profile_snapshot(x.p);
	assert_int_equal((uintptr_t)s4, recycled);
	assert_sites(s4, &x.m);
	at4 = x.m;

	/* s4 held, s1 dropped: s5 is s1, three snapshots behind, brought up to date. */
	recycled = (uintptr_t)s1;
	snapshot_unref(s1);
	sample(&x, PROFILE_NO_SITE, sb);
	struct snapshot *s5 = profile_snapshot(x.p);
	assert_int_equal((uintptr_t)s5, recycled);
	assert_sites(s5, &x.m);
	assert_sites(s4, &at4);
	snapshot_unref(s4);
	snapshot_unref(s5);
	profile_free(x.p);
}

/* Sites may take a quarter of the memory budget: past it, each function's new addresses share
 * its one SNAPSHOT_SITE_OTHER site, without a line, where their samples count; the sites made
 * before are still found. */
static void sites_past_the_budget(void **state)
{
	(void)state;
	const size_t budget = 64u << 10, tries = 5000;
	struct profile *p = profile_new(NULL);
	uint32_t f = func(p, "hot"), g = func(p, "cold");
	uint32_t *ids = malloc(tries * sizeof(*ids));
	size_t first_other = tries;

	profile_set_max_memory(p, budget);
	for (size_t i = 0; i < tries; i++)
		ids[i] = profile_site(p, f, 0x1000 + 4 * i, "hot.c", (unsigned)i + 1);

	struct snapshot *s = profile_snapshot(p);
	for (size_t i = 0; i < tries && first_other == tries; i++)
		if (s->sites[ids[i]].addr == SNAPSHOT_SITE_OTHER)
			first_other = i;
	assert_true(first_other > 0);
	assert_true(first_other < budget / 4 / sizeof(struct snapshot_site));
	for (size_t i = 0; i < first_other; i++) {
		assert_int_equal(s->sites[ids[i]].addr, 0x1000 + 4 * i);
		assert_int_equal(s->sites[ids[i]].line, i + 1);
	}
	uint32_t other = ids[first_other];
	for (size_t i = first_other; i < tries; i++)
		assert_int_equal(ids[i], other);
	assert_int_equal(s->nsites, first_other + 1);
	assert_int_equal(s->sites[other].func, f);
	assert_null(s->sites[other].file);
	assert_int_equal(s->sites[other].line, 0);
	snapshot_unref(s);

	assert_int_equal(profile_site(p, f, 0x1000, "x.c", 1), ids[0]);
	assert_int_equal(profile_site(p, f, 0xdead0, "x.c", 9), other);
	uint32_t g_other = profile_site(p, g, 0x1000, "cold.c", 1);
	assert_int_not_equal(g_other, other);

	const uint32_t stack[] = { f };
	const uint32_t at_other[] = { profile_site(p, f, 0xbeef0, "x.c", 2) }, at_first[] = { ids[0] };
	for (int i = 0; i < 3; i++)
		profile_add_sites(p, 1, 1, stack, at_other, 1);
	profile_add_sites(p, 1, 1, stack, at_first, 1);
	s = profile_snapshot(p);
	assert_int_equal(s->sites[other].self, 3);
	assert_int_equal(s->sites[other].total, 3);
	assert_int_equal(s->sites[ids[0]].self, 1);
	assert_int_equal(s->sites[g_other].func, g);
	assert_int_equal(s->sites[g_other].addr, SNAPSHOT_SITE_OTHER);
	assert_null(s->sites[g_other].file);
	snapshot_unref(s);
	free(ids);
	profile_free(p);
}

/* A function's inlined instances are a function of their own, shown "name (inlined)". */
static void inlined_funcs(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t out_of_line = profile_func(p, "prog", "step", 0);
	uint32_t inl = profile_inlined_func(p, "prog", "step");

	assert_int_not_equal(inl, out_of_line);
	assert_int_equal(profile_inlined_func(p, "prog", "step"), inl);
	assert_int_not_equal(profile_inlined_func(p, "lib.so", "step"), inl);
	assert_int_not_equal(profile_inlined_func(p, "prog", "walk"), inl);
	assert_int_equal(profile_func(p, "prog", "step", 0), out_of_line);

	struct snapshot *s = profile_snapshot(p);
	assert_true(s->funcs[inl].inlined);
	assert_string_equal(s->funcs[inl].name, "step (inlined)");
	assert_string_equal(s->funcs[inl].module, "prog");
	assert_false(s->funcs[out_of_line].inlined);
	assert_string_equal(s->funcs[out_of_line].name, "step");
	snapshot_unref(s);
	profile_free(p);
}

/* A stretch's snapshot's sites and node sites count its leaf samples, without totals; the
 * samples before it are not in its sites either. */
static void stretch_sites_count_the_stretch(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t f = func(p, "main"), g = func(p, "leaf");
	uint32_t sf = profile_site(p, f, 0x10, "m.c", 1), sg = profile_site(p, g, 0x20, "l.c", 2);
	const uint32_t stack[] = { f, g }, sites[] = { sf, sg }, short_stack[] = { f };

	profile_set_history(p, 600, 0);
	profile_set_time(p, 3000000000ull);
	for (int i = 0; i < 4; i++)
		profile_add_sites(p, 1, 1, stack, sites, 2); /* before the stretch */
	profile_set_time(p, 5000000000ull);
	profile_add_sites(p, 1, 1, stack, sites, 2);
	profile_add_sites(p, 1, 2, stack, sites, 2);
	profile_add_sites(p, 1, 2, short_stack, sites, 1);
	struct snapshot *w = profile_range_snapshot(p, 4, UINT64_MAX);
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(w->samples, 3);
	assert_true(w->sites_self_only);
	assert_false(s->sites_self_only);
	assert_int_equal(w->nsites, 2);
	assert_int_equal(w->sites[sg].self, 2);
	assert_int_equal(w->sites[sf].self, 1);
	assert_int_equal(w->sites[sg].total, 0);
	assert_int_equal(s->sites[sg].self, 6);
	assert_int_equal(s->sites[sf].total, 7);
	/* Per node: each thread's leaf node has its own entry. */
	uint64_t by_node = 0;
	size_t entries = 0;
	for (uint32_t n = 0; n < w->nnodes; n++)
		for (uint32_t e = snapshot_node_sites(w, n); e != SNAPSHOT_NO_NODE_SITE; e = w->node_sites[e].next) {
			assert_int_equal(w->node_sites[e].node, n);
			assert_int_equal(w->sites[w->node_sites[e].site].func, w->nodes[n].func);
			by_node += w->node_sites[e].self;
			entries++;
		}
	assert_int_equal(by_node, 3);
	assert_int_equal(entries, 3);
	snapshot_unref(w);
	snapshot_unref(s);
	profile_free(p);
}

/* --- node sites ---------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

#define NFUNCS 16
#define SITES_PER_FUNC 4

/* Functions f1..f16 of "prog" (funcs[1..16]), each with SITES_PER_FUNC sites. */
struct world {
	uint32_t funcs[NFUNCS + 1];
	uint32_t sites[NFUNCS + 1][SITES_PER_FUNC];
};

static void world_new(struct profile *p, struct world *w)
{
	char name[16];

	for (int i = 1; i <= NFUNCS; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		w->funcs[i] = func(p, name);
		for (int k = 0; k < SITES_PER_FUNC; k++)
			w->sites[i][k] = profile_site(p, w->funcs[i], 0x1000u * (unsigned)i + 4u * (unsigned)k,
						      "f.c", (unsigned)(10 * i + k));
	}
}

/* A random stack of depth 1..max with a site for every frame, in funcs[]/sites[]. */
static size_t random_sample(const struct world *w, uint32_t *funcs, uint32_t *sites, size_t max)
{
	size_t depth = 1 + rng() % max;

	for (size_t i = 0; i < depth; i++) {
		int f = 1 + (int)(rng() % NFUNCS);

		funcs[i] = w->funcs[f];
		sites[i] = w->sites[f][rng() % SITES_PER_FUNC];
	}
	return depth;
}

static bool is_merged(const struct snapshot *s, uint32_t node)
{
	while (s->nodes[node].parent != SNAPSHOT_NO_NODE)
		node = s->nodes[node].parent;
	return node == s->merged_root;
}

/* Each node's entries are its own, of its function's sites, each on one chain; thread nodes'
 * add up to their self, but for "[other]" nodes (func other), which have none; merged nodes have
 * none. Returns the entries' sum. */
static uint64_t assert_node_sites(const struct snapshot *s, uint32_t other)
{
	uint64_t sum = 0;
	size_t seen = 0;

	for (uint32_t n = 0; n < s->nnodes; n++) {
		uint64_t node_sum = 0;

		for (uint32_t e = snapshot_node_sites(s, n); e != SNAPSHOT_NO_NODE_SITE;
		     e = s->node_sites[e].next) {
			const struct snapshot_node_site *ns = &s->node_sites[e];

			assert_true(e < s->nnode_sites);
			assert_int_equal(ns->node, n);
			assert_true(ns->site < s->nsites);
			assert_int_equal(s->sites[ns->site].func, s->nodes[n].func);
			assert_true(ns->self > 0);
			node_sum += ns->self;
			seen++;
		}
		if (is_merged(s, n) || s->nodes[n].func == other)
			assert_int_equal(node_sum, 0);
		else
			assert_int_equal(node_sum, s->nodes[n].self);
		sum += node_sum;
	}
	assert_int_equal(seen, s->nnode_sites);
	return sum;
}

/* The same node sites, entry for entry (two profiles fed alike number them alike). */
static void assert_same_node_sites(const struct snapshot *a, const struct snapshot *b)
{
	assert_int_equal(a->nnodes, b->nnodes);
	assert_int_equal(a->nnode_sites, b->nnode_sites);
	for (size_t e = 0; e < a->nnode_sites; e++) {
		assert_int_equal(a->node_sites[e].node, b->node_sites[e].node);
		assert_int_equal(a->node_sites[e].site, b->node_sites[e].site);
		assert_int_equal(a->node_sites[e].next, b->node_sites[e].next);
		assert_int_equal(a->node_sites[e].self, b->node_sites[e].self);
	}
	for (uint32_t n = 0; n < a->nnodes; n++)
		assert_int_equal(snapshot_node_sites(a, n), snapshot_node_sites(b, n));
}

/* Samples on random stacks of two threads: every thread node's node sites add up to its self,
 * and each site's over all nodes to the site's self. Snapshots updated from recycled ones
 * (profile a drops them at random moments) equal full copies (profile b holds every one). */
static void node_sites_add_up_and_copy_incrementally(void **state)
{
	(void)state;
	struct profile *a = profile_new(NULL), *b = profile_new(NULL);
	struct world wa = { 0 }, wb = { 0 };
	struct snapshot *held[3] = { NULL }, **all = calloc(300, sizeof(*all));
	const struct snapshot *dropped[3] = { NULL };
	uint32_t funcs[8], sites[8];
	size_t nall = 0, recycled = 0;

	world_new(a, &wa);
	world_new(b, &wb);
	assert_memory_equal(&wa, &wb, sizeof(wa));
	for (int round = 0; round < 300; round++) {
		int samples = (int)(rng() % 40);

		for (int i = 0; i < samples; i++) {
			size_t depth = random_sample(&wa, funcs, sites, 6);
			pid_t tid = (pid_t)(1 + rng() % 2);

			profile_add_sites(a, 1, tid, funcs, sites, depth);
			profile_add_sites(b, 1, tid, funcs, sites, depth);
		}
		struct snapshot *sa = profile_snapshot(a);
		for (size_t i = 0; i < 3; i++)
			recycled += sa == dropped[i];
		all[nall] = profile_snapshot(b);
		assert_same_node_sites(sa, all[nall]);
		assert_int_equal(assert_node_sites(sa, UINT32_MAX), sa->samples);
		nall++;
		size_t slot = rng() % 3;
		dropped[round % 3] = held[slot];
		snapshot_unref(held[slot]);
		held[slot] = sa;
	}
	assert_true(recycled > 100); /* most were updated from a dropped one */
	struct snapshot *s = profile_snapshot(a);
	for (size_t site = 0; site < s->nsites; site++) {
		uint64_t sum = 0;

		for (size_t e = 0; e < s->nnode_sites; e++)
			if (s->node_sites[e].site == site)
				sum += s->node_sites[e].self;
		assert_int_equal(sum, s->sites[site].self);
	}
	snapshot_unref(s);
	for (size_t i = 0; i < 3; i++)
		snapshot_unref(held[i]);
	for (size_t i = 0; i < nall; i++)
		snapshot_unref(all[i]);
	free(all);
	profile_free(a);
	profile_free(b);
}

/* A node's entry counts in the snapshot made after it, recycled or not; a node that gets its
 * first entry after a snapshot was made finds it in the next, updated, one. */
static void node_sites_in_a_recycled_snapshot(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	struct world w;
	const uint32_t *f, *st;

	world_new(p, &w);
	f = w.funcs;
	st = w.sites[1];
	const uint32_t stack[] = { f[1], f[2] }, at[] = { st[0], w.sites[2][1] };
	const uint32_t other[] = { f[1], f[3] }, at_other[] = { st[0], w.sites[3][2] };

	profile_add_sites(p, 1, 1, stack, at, 2);
	struct snapshot *s1 = profile_snapshot(p);
	uintptr_t recycled = (uintptr_t)s1;
	uint32_t leaf = s1->node_sites[0].node;

	assert_int_equal(s1->nnode_sites, 1);
	assert_int_equal(s1->node_sites[0].self, 1);
	snapshot_unref(s1);
	profile_add_sites(p, 1, 1, stack, at, 2);
	profile_add_sites(p, 1, 1, other, at_other, 2);
	struct snapshot *s2 = profile_snapshot(p);
	assert_int_equal((uintptr_t)s2, recycled); /* else this tests a full copy */
	assert_int_equal(s2->nnode_sites, 2);
	assert_int_equal(s2->node_sites[snapshot_node_sites(s2, leaf)].self, 2);
	assert_int_equal(s2->node_sites[1].site, w.sites[3][2]);
	assert_int_equal(snapshot_node_sites(s2, s2->node_sites[1].node), 1);
	assert_int_equal(assert_node_sites(s2, UINT32_MAX), 3);
	snapshot_unref(s2);
	profile_free(p);
}

/* Past the budget the coldest paths fold into "[other]": the nodes that stay keep their node
 * sites (renumbered) and those that went lose theirs, so the node sites and the "[other]" nodes'
 * self samples add up to every sample, in held and in later snapshots alike. */
static void node_sites_survive_folds(void **state)
{
	(void)state;
	const size_t budget = 2u << 20;
	struct profile *p = profile_new(NULL);
	struct world w;
	uint32_t funcs[12], sites[12];
	struct snapshot *held = NULL;

	world_new(p, &w);
	profile_set_max_memory(p, budget);
	for (int i = 0; i < 200000; i++) {
		size_t depth = random_sample(&w, funcs, sites, 11);

		profile_add_sites(p, 1, (pid_t)(1 + rng() % 2), funcs, sites, depth);
		if (i % 5000 == 0) {
			snapshot_unref(held);
			held = profile_snapshot(p);
		}
	}
	struct snapshot *s = profile_snapshot(p);
	uint32_t other = unit_func_named(s, "[other]");
	uint64_t in_other = 0;

	assert_true(s->folded_nodes > 0);
	assert_int_not_equal(other, UINT32_MAX);
	for (uint32_t n = 0; n < s->nnodes; n++)
		if (s->nodes[n].func == other && !is_merged(s, n))
			in_other += s->nodes[n].self;
	assert_true(in_other > 0);
	assert_int_equal(assert_node_sites(s, other) + in_other, s->samples);
	in_other = 0;
	for (uint32_t n = 0; n < held->nnodes; n++)
		if (held->nodes[n].func == other && !is_merged(held, n))
			in_other += held->nodes[n].self;
	assert_int_equal(assert_node_sites(held, other) + in_other, held->samples);
	snapshot_unref(held);
	snapshot_unref(s);
	profile_free(p);
}

/* Node sites share the sites' quarter of the budget: past it, a new (node, site) pair counts at
 * the node's (node, SNAPSHOT_SITE_OTHER) entry, and every node's still add up to its self. */
static void node_sites_past_the_budget(void **state)
{
	(void)state;
	const size_t budget = 256u << 10;
	struct profile *p = profile_new(NULL);
	uint32_t f = func(p, "hot"), caller[64];
	uint32_t *ids = malloc(2000 * sizeof(*ids));
	char name[16];

	profile_set_max_memory(p, budget);
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		caller[i] = func(p, name);
	}
	for (int i = 0; i < 300; i++)
		ids[i] = profile_site(p, f, 0x1000 + 4 * (uint64_t)i, "hot.c", (unsigned)i + 1);
	/* 64 paths x 300 addresses: more pairs than a quarter of 256 KiB holds. */
	for (int c = 0; c < 64; c++)
		for (int i = 0; i < 300; i++) {
			const uint32_t stack[] = { caller[c], f }, at[] = { PROFILE_NO_SITE, ids[i] };

			profile_add_sites(p, 1, 1, stack, at, 2);
		}
	struct snapshot *s = profile_snapshot(p);
	size_t at_other = 0;

	assert_int_equal(s->folded_nodes, 0);
	assert_true(s->nnode_sites < 64 * 300);
	assert_true(s->nnode_sites * sizeof(struct snapshot_node_site) < budget / 4);
	for (size_t e = 0; e < s->nnode_sites; e++)
		if (s->sites[s->node_sites[e].site].addr == SNAPSHOT_SITE_OTHER) {
			at_other++;
			assert_int_equal(s->sites[s->node_sites[e].site].func, f);
		}
	assert_true(at_other > 0 && at_other <= 64); /* one per node at most */
	assert_int_equal(assert_node_sites(s, UINT32_MAX), 64 * 300);
	snapshot_unref(s);
	free(ids);
	profile_free(p);
}

/* Without sites there are no node sites; a file read back (profile_add_n) makes none. */
static void node_sites_none_without_sites(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t f = func(p, "main");
	const uint32_t stack[] = { f }, sites[] = { profile_site(p, f, 0x10, "m.c", 1) };

	profile_set_history(p, 600, 0);
	profile_set_time(p, 5000000000ull);
	profile_add_n(p, 1, 1, stack, 1, 5);
	profile_add(p, 1, 1, stack, 1);
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->nnode_sites, 0);
	for (uint32_t n = 0; n < s->nnodes; n++)
		assert_int_equal(snapshot_node_sites(s, n), SNAPSHOT_NO_NODE_SITE);
	snapshot_unref(s);
	profile_add_sites(p, 1, 1, stack, sites, 1);
	s = profile_snapshot(p);
	assert_int_equal(s->nnode_sites, 1);
	assert_int_equal(s->node_sites[0].self, 1);
	assert_int_equal(s->nodes[s->node_sites[0].node].self, 7);
	snapshot_unref(s);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sites_intern),
		cmocka_unit_test(sites_count_once_per_sample),
		cmocka_unit_test(snapshot_sites_incremental),
		cmocka_unit_test(sites_past_the_budget),
		cmocka_unit_test(inlined_funcs),
		cmocka_unit_test(stretch_sites_count_the_stretch),
		cmocka_unit_test(node_sites_add_up_and_copy_incrementally),
		cmocka_unit_test(node_sites_in_a_recycled_snapshot),
		cmocka_unit_test(node_sites_survive_folds),
		cmocka_unit_test(node_sites_past_the_budget),
		cmocka_unit_test(node_sites_none_without_sites),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
