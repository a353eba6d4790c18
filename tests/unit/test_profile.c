/* Unit tests of the call-tree profile, its snapshots and the view rows over them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/view.h"
#include "unit_profiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t func(struct profile *p, const char *module, const char *name)
{
	return profile_func(p, module, name, 0);
}

static const struct view_row *find_row(const struct view_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static void interning_is_stable(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	static const char module[] = "prog", a[] = "a", b[] = "b";
	uint32_t fa = func(p, module, a), fb = func(p, module, b);

	assert_int_not_equal(fa, fb);
	assert_int_not_equal(fa, SNAPSHOT_ROOT_FUNC);
	assert_int_equal(func(p, module, a), fa);
	uint32_t fu = profile_func(p, module, NULL, 0x1234);
	assert_int_equal(profile_func(p, module, NULL, 0x1234), fu);
	struct snapshot *s = profile_snapshot(p);
	assert_string_equal(s->funcs[fu].name, "prog+0x1234");
	assert_string_equal(s->funcs[fu].module, "prog");
	snapshot_unref(s);
	profile_free(p);
}

/* What a debug file arriving late names: "hot" at 0x1000, "cold" at 0x2000; nothing elsewhere. */
static const char *late_names(void *arg, uint64_t addr, uint64_t *end)
{
	(void)arg;
	*end = addr + 0x100;
	return addr == 0x1000 ? "hot" : addr == 0x2000 ? "cold" : NULL;
}

/* Rows known by their start address take their names in place: same id, same counts, found again
 * by name and by their address unnamed; one whose name another id has already, an inlined one, another module's, and an
 * address no function starts at stay as they were. */
static void late_names_rename_in_place(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0x10);
	uint32_t hot = profile_func(p, "prog", NULL, 0x1000), cold = profile_func(p, "prog", NULL, 0x2000);
	uint32_t taken = profile_func(p, "prog", "cold", 0x2000); /* named before, by .dynsym */
	uint32_t other = profile_func(p, "libother.so", NULL, 0x1000);
	uint32_t mid = profile_func(p, "prog", NULL, 0x1004);
	uint32_t inl = profile_inlined_func(p, "prog", "hot");
	uint32_t s1[] = { main_, hot }, s2[] = { main_, cold }, s3[] = { main_, other };

	for (int i = 0; i < 3; i++)
		profile_add(p, 1, 1, s1, 2);
	profile_add(p, 1, 1, s2, 2);
	profile_add(p, 1, 1, s3, 2);
	struct snapshot *before = profile_snapshot(p);

	assert_int_equal(profile_name_funcs(p, "prog", "/bin/prog", late_names, NULL), 1);
	struct snapshot *s = profile_snapshot(p);
	assert_string_equal(s->funcs[hot].name, "hot");
	assert_string_equal(s->funcs[hot].path, "/bin/prog");
	assert_int_equal(s->funcs[hot].code_start, 0x1000);
	assert_int_equal(s->funcs[hot].code_end, 0x1100);
	assert_int_equal(s->func_self[hot], 3);
	assert_int_equal(profile_func(p, "prog", "hot", 0x1000), hot);
	assert_string_equal(s->funcs[cold].name, "prog+0x2000");
	assert_int_not_equal(taken, cold);
	assert_string_equal(s->funcs[other].name, "libother.so+0x1000");
	assert_string_equal(s->funcs[mid].name, "prog+0x1004");
	assert_string_equal(s->funcs[inl].name, "hot (inlined)");
	/* The snapshot taken before keeps its names. */
	assert_string_equal(before->funcs[hot].name, "prog+0x1000");
	/* The old key finds it too: a collector worker that has not taken the debug file yet
	 * still looks the address up unnamed, and must count on the same row. */
	assert_int_equal(profile_func(p, "prog", NULL, 0x1000), hot);
	assert_int_equal(profile_func(p, "prog", NULL, 0x2000), cold);
	assert_int_not_equal(profile_func(p, "libother.so", "hot", 0x1000), hot);
	snapshot_unref(before);
	snapshot_unref(s);
	profile_free(p);
}

/* A site first seen without a line gets it when a later sight has one; one with a line keeps it. */
static void late_lines_fill_sites(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t f = profile_func(p, "prog", NULL, 0x1000);
	uint32_t site = profile_site(p, f, 0x1008, NULL, 0);
	uint32_t known = profile_site(p, f, 0x1010, "a.c", 3);

	assert_int_equal(profile_site(p, f, 0x1008, "a.c", 7), site);
	assert_int_equal(profile_site(p, f, 0x1010, "b.c", 9), known);
	struct snapshot *s = profile_snapshot(p);
	assert_string_equal(s->sites[site].file, "a.c");
	assert_int_equal(s->sites[site].line, 7);
	assert_string_equal(s->sites[known].file, "a.c");
	assert_int_equal(s->sites[known].line, 3);
	snapshot_unref(s);
	profile_free(p);
}

/* main → path_a → burn 60, main → path_b → mid_b → burn 30, main → solo 10. */
static void tree_self_and_total(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), pa = func(p, m, "path_a"), pb = func(p, m, "path_b");
	uint32_t mid = func(p, m, "mid_b"), burn = func(p, m, "burn"), solo = func(p, m, "solo");
	uint32_t s1[] = { main_, pa, burn }, s2[] = { main_, pb, mid, burn }, s3[] = { main_, solo };

	for (int i = 0; i < 60; i++)
		profile_add(p, 1, 1, s1, 3);
	for (int i = 0; i < 30; i++)
		profile_add(p, 1, 1, s2, 4);
	for (int i = 0; i < 10; i++)
		profile_add(p, 1, 1, s3, 2);
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->samples, 100);
	assert_int_equal(s->func_self[burn], 90);
	assert_int_equal(s->func_total[burn], 90);
	assert_int_equal(s->func_self[main_], 0);
	assert_int_equal(s->func_total[main_], 100);
	assert_int_equal(s->func_total[pb], 30);
	assert_int_equal(s->func_total[mid], 30);
	assert_int_equal(s->func_self[solo], 10);

	/* The merged root has main as its only child. */
	const struct snapshot_node *root = &s->nodes[s->merged_root];
	assert_int_equal(root->total, 100);
	const struct snapshot_node *child = &s->nodes[root->first_child];
	assert_int_equal(child->func, main_);
	assert_int_equal(child->next_sibling, SNAPSHOT_NO_NODE);

	struct view_top_query q = { VIEW_SORT_SELF, NULL, SNAPSHOT_NO_NODE };
	struct view_row *rows;
	size_t n = view_top(s, &q, &rows);
	assert_int_equal(n, 6);
	assert_string_equal(rows[0].name, "burn");
	assert_true(rows[0].self_pct > 89.9 && rows[0].self_pct < 90.1);
	free(rows);
	q.sort = VIEW_SORT_TOTAL;
	n = view_top(s, &q, &rows);
	assert_string_equal(rows[0].name, "main");
	free(rows);
	q.filter = "PATH_";
	n = view_top(s, &q, &rows);
	assert_int_equal(n, 2);
	free(rows);
	snapshot_unref(s);
	profile_free(p);
}

/* A function that recurses counts once per sample in TOTAL. */
static void recursion_counts_once(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), rec = func(p, m, "rec"), leaf = func(p, m, "leaf");
	uint32_t stack[62];

	stack[0] = main_;
	for (int i = 1; i <= 60; i++)
		stack[i] = rec;
	stack[61] = leaf;
	for (int i = 0; i < 5; i++)
		profile_add(p, 1, 1, stack, 62);
	profile_add(p, 1, 1, stack, 30); /* self in rec, 29 deep */
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->func_total[rec], 6);
	assert_int_equal(s->func_self[rec], 1);
	assert_int_equal(s->func_total[leaf], 5);
	assert_int_equal(s->func_total[main_], 6);
	snapshot_unref(s);
	profile_free(p);
}

/* Threads have their own tries; the merged tree sums them; a thread scope sees only its own. */
static void threads_merge_and_scope(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), w1 = func(p, m, "worker_one"), w2 = func(p, m, "worker_two");
	uint32_t s1[] = { main_, w1 }, s2[] = { main_, w2 };

	for (int i = 0; i < 30; i++)
		profile_add(p, 10, 11, s1, 2);
	for (int i = 0; i < 10; i++)
		profile_add(p, 10, 12, s2, 2);
	profile_set_comm(p, 10, 11, "one");
	struct snapshot *s = profile_snapshot(p);
	assert_int_equal(s->nthreads, 2);
	assert_int_equal(s->func_total[main_], 40);
	assert_string_equal(s->threads[0].comm, "one");
	assert_int_equal(s->threads[0].samples, 30);

	struct view_top_query q = { VIEW_SORT_SELF, NULL, s->threads[1].root };
	struct view_row *rows;
	size_t n = view_top(s, &q, &rows);
	const struct view_row *r = find_row(rows, n, "worker_two");
	assert_non_null(r);
	assert_null(find_row(rows, n, "worker_one"));
	assert_true(r->self_pct > 99.9);
	free(rows);

	/* The snapshot is immutable: more samples do not change it. */
	profile_add(p, 10, 11, s1, 2);
	assert_int_equal(s->func_total[main_], 40);
	snapshot_unref(s);
	profile_free(p);
}

/* -a: a tree per process, named by its main thread; its threads' samples all go there. */
static void trees_per_process(void **state)
{
	(void)state;
	static const char m[] = "prog";
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, m, "main"), w1 = func(p, m, "worker_one"), other = func(p, m, "other");
	uint32_t s1[] = { main_, w1 }, s2[] = { main_, other };

	profile_set_by_process(p);
	profile_set_comm(p, 10, 11, "a-thread"); /* not the process's name */
	profile_set_comm(p, 10, 10, "server");
	for (int i = 0; i < 30; i++)
		profile_add(p, 10, 11, s1, 2);
	for (int i = 0; i < 10; i++)
		profile_add(p, 10, 12, s1, 2);
	for (int i = 0; i < 5; i++)
		profile_add(p, 20, 21, s2, 2);
	assert_string_equal(profile_comm(p, 10), "server");
	assert_null(profile_comm(p, 20));
	struct snapshot *s = profile_snapshot(p);
	assert_true(s->by_process);
	assert_int_equal(s->nthreads, 2);
	assert_int_equal(s->threads[0].pid, 10);
	assert_int_equal(s->threads[0].tid, 10);
	assert_string_equal(s->threads[0].comm, "server");
	assert_int_equal(s->threads[0].samples, 40);
	assert_int_equal(s->threads[1].tid, 20);
	assert_int_equal(s->threads[1].samples, 5);
	snapshot_unref(s);
	profile_free(p);
}

/* --- incremental snapshots and the memory budget ------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

/* A random stack of 16 functions (funcs[1..16]), depth min..max. */
static size_t random_stack(const uint32_t *funcs, uint32_t *stack, size_t min, size_t max)
{
	size_t depth = min + rng() % (max - min + 1);

	for (size_t i = 0; i < depth; i++)
		stack[i] = funcs[1 + rng() % 16];
	return depth;
}

static void intern_16(struct profile *p, uint32_t *funcs)
{
	char name[16];

	for (int i = 1; i <= 16; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		funcs[i] = func(p, "prog", name);
	}
}

static void assert_same_snapshot(const struct snapshot *a, const struct snapshot *b)
{
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->nnodes, b->nnodes);
	assert_int_equal(a->merged_root, b->merged_root);
	assert_memory_equal(a->nodes, b->nodes, a->nnodes * sizeof(*a->nodes));
	assert_int_equal(a->nfuncs, b->nfuncs);
	for (size_t f = 0; f < a->nfuncs; f++) {
		assert_string_equal(a->funcs[f].name, b->funcs[f].name);
		assert_int_equal(a->func_self[f], b->func_self[f]);
		assert_int_equal(a->func_total[f], b->func_total[f]);
	}
	assert_int_equal(a->nthreads, b->nthreads);
	for (size_t t = 0; t < a->nthreads; t++) {
		assert_int_equal(a->threads[t].tid, b->threads[t].tid);
		assert_int_equal(a->threads[t].root, b->threads[t].root);
		assert_int_equal(a->threads[t].samples, b->threads[t].samples);
		assert_true((a->threads[t].comm == NULL) == (b->threads[t].comm == NULL));
		if (a->threads[t].comm)
			assert_string_equal(a->threads[t].comm, b->threads[t].comm);
	}
}

/* A snapshot updated from a recycled one equals a full copy of the same profile. Profile a
 * drops its snapshots at random moments (so they are recycled); b holds every one it made (so
 * each is a full copy). */
static void incremental_snapshots_equal_full_copies(void **state)
{
	(void)state;
	struct profile *a = profile_new(NULL), *b = profile_new(NULL);
	uint32_t fa[17], fb[17], stack[16];
	struct snapshot *held[3] = { NULL }, **all = calloc(400, sizeof(*all));
	size_t nall = 0;

	intern_16(a, fa);
	intern_16(b, fb);
	for (int round = 0; round < 400; round++) {
		int samples = (int)(rng() % 60);

		for (int i = 0; i < samples; i++) {
			size_t depth = random_stack(fa, stack, 0, 9);
			pid_t tid = (pid_t)(100 + rng() % 3);

			profile_add(a, 100, tid, stack, depth);
			profile_add(b, 100, tid, stack, depth);
		}
		if (round % 50 == 7) {
			char comm[24];

			snprintf(comm, sizeof(comm), "t%d", round);
			profile_set_comm(a, 100, 101, comm);
			profile_set_comm(b, 100, 101, comm);
			func(a, "late", comm);
			func(b, "late", comm);
		}
		struct snapshot *sa = profile_snapshot(a);
		all[nall] = profile_snapshot(b);
		assert_same_snapshot(sa, all[nall++]);
		/* Hold up to three; drop one at random. */
		size_t slot = rng() % 3;
		snapshot_unref(held[slot]);
		held[slot] = sa;
	}
	for (size_t i = 0; i < 3; i++)
		snapshot_unref(held[i]);
	for (size_t i = 0; i < nall; i++)
		snapshot_unref(all[i]);
	free(all);
	profile_free(a);
	profile_free(b);
}

/* Every node's total is its self plus its children's; "[other]" nodes are leaves. */
static void assert_totals_add_up(const struct snapshot *s, uint32_t other)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct snapshot_node *n = &s->nodes[i];
		uint64_t sum = n->self;

		for (uint32_t c = n->first_child; c != SNAPSHOT_NO_NODE; c = s->nodes[c].next_sibling) {
			assert_true(c > i);
			sum += s->nodes[c].total;
		}
		assert_int_equal(sum, n->total);
		if (n->func == other)
			assert_int_equal(n->first_child, SNAPSHOT_NO_NODE);
	}
}

/* Past the budget the coldest paths fold into "[other]": the tries stay within it, every total
 * stays exact, the flat table is untouched, and the time window still adds up. */
static void folding_keeps_totals_exact(void **state)
{
	(void)state;
	const size_t budget = 4u << 20;
	struct profile *p = profile_new(NULL), *u = profile_new(NULL);
	uint32_t fp[17], fu[17], stack[16];
	struct snapshot *held = NULL;

	intern_16(p, fp);
	intern_16(u, fu);
	profile_set_max_memory(p, budget);
	profile_set_history(p, 600, 0);
	for (int i = 0; i < 300000; i++) {
		size_t depth = random_stack(fp, stack, 4, 13);
		pid_t tid = (pid_t)(1 + rng() % 2);

		profile_set_time(p, (uint64_t)i * 1000000u);
		profile_add(p, 1, tid, stack, depth);
		profile_add(u, 1, tid, stack, depth);
		if (i % 5000 == 0) { /* a reader that keeps the last one */
			snapshot_unref(held);
			held = profile_snapshot(p);
		}
		assert_true(profile_memory(p) < 2 * budget);
	}
	struct snapshot *s = profile_snapshot(p), *full = profile_snapshot(u);
	uint32_t other = unit_func_named(s, "[other]");

	assert_true(s->folded_nodes > 0);
	assert_int_equal(full->folded_nodes, 0);
	assert_true(s->nnodes < full->nnodes / 2);
	assert_int_not_equal(other, SNAPSHOT_NO_NODE);
	assert_int_equal(s->samples, full->samples);
	assert_int_equal(s->nodes[s->merged_root].total, full->samples);
	for (size_t f = 0; f < full->nfuncs; f++) {
		assert_int_equal(s->func_self[f], full->func_self[f]);
		assert_int_equal(s->func_total[f], full->func_total[f]);
	}
	for (size_t t = 0; t < s->nthreads; t++)
		assert_int_equal(s->nodes[s->threads[t].root].total, full->threads[t].samples);
	assert_totals_add_up(s, other);
	assert_totals_add_up(held, other);

	/* The history's leaves were renumbered with the fold: its last 10 s, and the whole run. */
	struct snapshot *w = profile_range_snapshot(p, 290, UINT64_MAX);
	assert_int_equal(w->samples, 10000);
	assert_int_equal(w->nodes[w->merged_root].total, 10000);
	assert_totals_add_up(w, other);
	snapshot_unref(w);
	w = profile_range_snapshot(p, 0, UINT64_MAX);
	assert_int_equal(w->samples, 300000);
	for (size_t t = 0; t < w->nthreads; t++)
		assert_int_equal(w->threads[t].samples, full->threads[t].samples);
	assert_int_equal(w->nspans, 300);
	assert_int_equal(w->spans[299].start_s, 299);
	assert_totals_add_up(w, other);
	snapshot_unref(w);
	snapshot_unref(s);
	snapshot_unref(full);
	snapshot_unref(held);
	profile_free(p);
	profile_free(u);
}

/* A long run nobody looks at (no snapshot until the end, as batch -n 0): the tries keep within
 * the budget through every fold, not only the first (the check after a fold must come as soon
 * as the tree has grown by a check's worth again, and before its arrays double). */
static void budget_holds_fold_after_fold(void **state)
{
	(void)state;
	const size_t budget = 4u << 20;
	struct profile *p = profile_new(NULL);
	uint32_t fp[17], stack[16];
	size_t most = 0;
	struct snapshot *s;

	intern_16(p, fp);
	profile_set_max_memory(p, budget);
	for (int i = 0; i < 600000; i++) {
		size_t depth = random_stack(fp, stack, 4, 13);

		profile_add(p, 1, (pid_t)(1 + rng() % 2), stack, depth);
		if (profile_memory(p) > most)
			most = profile_memory(p);
	}
	s = profile_snapshot(p);
	assert_true(s->folded_nodes > 0);
	if (most > budget)
		fail_msg("the tries took %zu bytes under a budget of %zu", most, budget);
	snapshot_unref(s);
	profile_free(p);
}

/* A fold that keeps most of the tree: four threads, each main -> 1,002 hot callees with two cold
 * children each, folded at once (the budget set afterwards) with room for every hot node. Both
 * cold children of a hot node fold into one "[other]" of its own, so the rebuilt tree outgrows
 * the arrays it started with (half the old count: 15,040 nodes) in the fourth thread, at an
 * "[other]" node: one written where its array was before it moved shows under ASan. Totals stay
 * exact. */
static void fold_keeping_most_of_the_tree(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL);
	uint32_t main_ = func(p, "m", "main"), cold[2] = { func(p, "m", "cold1"), func(p, "m", "cold2") };
	uint32_t hot[1002];
	struct snapshot *before, *s;
	char name[16];

	for (int i = 0; i < 1002; i++) {
		snprintf(name, sizeof(name), "hot%d", i);
		hot[i] = func(p, "m", name);
	}
	for (pid_t tid = 1; tid <= 4; tid++) {
		for (int i = 0; i < 1002; i++) {
			const uint32_t alone[] = { main_, hot[i] };

			for (int c = 0; c < 2; c++)
				profile_add(p, 1, tid, (const uint32_t[]){ main_, hot[i], cold[c] }, 3);
			for (int k = 0; k < 10; k++)
				profile_add(p, 1, tid, alone, 2);
		}
	}
	before = profile_snapshot(p);
	assert_int_equal(before->nnodes, 15040);
	/* Room for 4,100 thread nodes (profile.c: 184 bytes a node, a quarter of the budget's
	 * nodes stay): the 4,016 roots, mains and hot nodes. */
	profile_set_max_memory(p, 4100 * 184 * 4);
	snapshot_unref(profile_snapshot(p));
	s = profile_snapshot(p);
	uint32_t other = unit_func_named(s, "[other]");
	assert_int_not_equal(other, SNAPSHOT_NO_NODE); /* it folded */
	assert_int_equal(s->folded_nodes, 15040 - s->nnodes);
	assert_int_equal(s->nnodes, 10030); /* 4 x (root, main, 1002 hot, 1002 [other]) + merged */
	assert_int_equal(s->nodes[s->merged_root].total, 4 * 1002 * 12);
	assert_int_equal(s->func_self[cold[0]], 4 * 1002);
	assert_totals_add_up(s, other);
	snapshot_unref(before);
	snapshot_unref(s);
	profile_free(p);
}

/* --- JIT addresses named late ------------------------------------------------------------------ */

/* The perf map written late: 0x1000..0x103f is m1, 0x1040..0x105f is m2, nothing else. */
static const char *jit_names(void *arg, uint64_t addr, const char **module)
{
	(void)arg;
	*module = "[jit]";
	return addr >= 0x1000 && addr < 0x1040 ? "m1" : addr >= 0x1040 && addr < 0x1060 ? "m2" : NULL;
}

/* Every node under root as "path self total" lines into out[] (room for the snapshot's nodes),
 * the path the names from root down. Returns how many. */
static size_t node_paths(const struct snapshot *s, uint32_t root, const char *prefix, char **out)
{
	size_t n = 0;

	for (uint32_t c = s->nodes[root].first_child; c != SNAPSHOT_NO_NODE; c = s->nodes[c].next_sibling) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%s", prefix, s->funcs[s->nodes[c].func].name);
		assert_true(asprintf(&out[n], "%s %llu %llu", path, (unsigned long long)s->nodes[c].self,
				     (unsigned long long)s->nodes[c].total) > 0);
		n++;
		n += node_paths(s, c, path, out + n);
	}
	return n;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The snapshots' trees are the same, node for node by the names on their paths, and so are their
 * flat tables by name; every node site's function is its node's. */
static void assert_same_by_name(const struct snapshot *a, const struct snapshot *b)
{
	char **pa = calloc(a->nnodes, sizeof(*pa)), **pb = calloc(b->nnodes, sizeof(*pb));
	size_t na = node_paths(a, a->merged_root, "", pa), nb = node_paths(b, b->merged_root, "", pb);

	for (size_t t = 0; t < a->nthreads; t++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "T%d", (int)a->threads[t].tid);
		na += node_paths(a, a->threads[t].root, prefix, pa + na);
		nb += node_paths(b, b->threads[t].root, prefix, pb + nb);
	}
	assert_int_equal(na, nb);
	qsort(pa, na, sizeof(*pa), by_string);
	qsort(pb, nb, sizeof(*pb), by_string);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(pa[i], pb[i]);
		free(pa[i]);
		free(pb[i]);
	}
	free(pa);
	free(pb);
	for (uint32_t f = 1; f < b->nfuncs; f++) {
		uint32_t g = unit_func_named(a, b->funcs[f].name);

		if (!b->func_total[f])
			continue;
		assert_int_not_equal(g, UINT32_MAX);
		assert_int_equal(a->func_self[g], b->func_self[f]);
		assert_int_equal(a->func_total[g], b->func_total[f]);
	}
	for (size_t e = 0; e < a->nnode_sites; e++)
		assert_int_equal(a->sites[a->node_sites[e].site].func, a->nodes[a->node_sites[e].node].func);
}

/* Addresses a perf map names late merge into the functions it names: the profile is the one
 * that had those names from the start, tree, flat table (recursion through two addresses of one
 * method counted once), node sites and history, including the samples added after with the old
 * ids; an address still unnamed stays as it was until its process is forgotten. */
static void jit_names_merge_like_named_from_start(void **state)
{
	(void)state;
	struct profile *p = profile_new(NULL), *u = profile_new(NULL);
	uint32_t fp[10], fu[10], stack[8], named[8], sites[8];
	uint32_t lib_site_p, lib_site_u;

	fp[0] = profile_func(p, "prog", "main", 0x10);
	fp[1] = profile_func(p, "prog", "lib", 0x20);
	fu[0] = profile_func(u, "prog", "main", 0x10);
	fu[1] = profile_func(u, "prog", "lib", 0x20);
	fp[2] = profile_func(p, "[jit]", "m1", 0); /* named from the start too */
	/* p: 3 to 9 are JIT addresses 0x1000, 0x1010, ... 0x1060: the first four m1's, two m2's, the
	 * last none's. u has the names they get. */
	for (int i = 3; i < 10; i++)
		fp[i] = profile_jit_func(p, "[anon]", 0x1000 + 0x10 * (uint64_t)(i - 3), 7);
	fu[2] = fu[3] = fu[4] = fu[5] = fu[6] = profile_func(u, "[jit]", "m1", 0);
	fu[7] = fu[8] = profile_func(u, "[jit]", "m2", 0);
	fu[9] = profile_jit_func(u, "[anon]", 0x1060, 7);
	assert_int_equal(profile_jit_func(p, "[anon]", 0x1000, 7), fp[3]);
	assert_int_not_equal(profile_jit_func(p, "[anon]", 0x1000, 8), fp[3]);
	lib_site_p = profile_site(p, fp[1], 0x24, "lib.c", 3);
	lib_site_u = profile_site(u, fu[1], 0x24, "lib.c", 3);
	profile_set_history(p, 600, 0);
	profile_set_history(u, 600, 0);
	for (int i = 0; i < 40000; i++) {
		size_t depth = 1 + rng() % 7;
		pid_t tid = (pid_t)(1 + rng() % 2);

		stack[0] = 0;
		for (size_t d = 1; d < depth; d++)
			stack[d] = 1 + rng() % 9;
		if (rng() % 3 == 0)
			stack[depth++] = 1; /* lib, at its site */
		for (size_t d = 0; d < depth; d++) {
			named[d] = fu[stack[d]];
			stack[d] = fp[stack[d]];
			sites[d] = PROFILE_NO_SITE;
		}
		sites[depth - 1] = stack[depth - 1] == fp[1] ? lib_site_p : PROFILE_NO_SITE;
		profile_set_time(p, (uint64_t)i * 100000u);
		profile_add_sites(p, 7, tid, stack, sites, depth);
		sites[depth - 1] = named[depth - 1] == fu[1] ? lib_site_u : PROFILE_NO_SITE;
		profile_set_time(u, (uint64_t)i * 100000u);
		profile_add_sites(u, 7, tid, named, sites, depth);
		if (i == 20000) {
			struct snapshot *held = profile_snapshot(p);

			assert_true(profile_jit_waiting(p, 7));
			assert_int_equal(profile_name_jit(p, 7, jit_names, NULL), 6);
			assert_int_equal(profile_name_jit(p, 7, jit_names, NULL), 0);
			assert_string_equal(held->funcs[fp[3]].name, "[anon]+0x1000");
			snapshot_unref(held);
		}
	}
	struct snapshot *a = profile_snapshot(p), *b = profile_snapshot(u);

	assert_same_by_name(a, b);
	assert_int_equal(a->func_total[fp[3]], 0);
	assert_string_equal(a->funcs[fp[9]].name, "[anon]+0x1060");
	assert_int_equal(profile_jit_func(p, "[anon]", 0x1000, 7), fp[2]);
	assert_int_equal(profile_jit_func(p, "[anon]", 0x1040, 7), unit_func_named(a, "m2"));
	snapshot_unref(a);
	snapshot_unref(b);
	a = profile_range_snapshot(p, 0, UINT64_MAX);
	b = profile_range_snapshot(u, 0, UINT64_MAX);
	assert_int_equal(a->samples, 40000);
	assert_same_by_name(a, b);
	snapshot_unref(a);
	snapshot_unref(b);

	/* The process ends: what is unnamed stays so, and a later one of the same pid is another. */
	assert_true(profile_jit_waiting(p, 7));
	profile_jit_forget(p, 7);
	assert_false(profile_jit_waiting(p, 7));
	assert_int_equal(profile_name_jit(p, 7, jit_names, NULL), 0);
	uint32_t again = profile_jit_func(p, "[anon]", 0x1000, 7);
	assert_int_not_equal(again, fp[3]);
	assert_int_not_equal(again, fp[2]);
	assert_true(profile_jit_waiting(p, 7));
	profile_free(p);
	profile_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interning_is_stable),
		cmocka_unit_test(tree_self_and_total),
		cmocka_unit_test(recursion_counts_once),
		cmocka_unit_test(threads_merge_and_scope),
		cmocka_unit_test(trees_per_process),
		cmocka_unit_test(incremental_snapshots_equal_full_copies),
		cmocka_unit_test(folding_keeps_totals_exact),
		cmocka_unit_test(fold_keeping_most_of_the_tree),
		cmocka_unit_test(budget_holds_fold_after_fold),
		cmocka_unit_test(late_names_rename_in_place),
		cmocka_unit_test(late_lines_fill_sites),
		cmocka_unit_test(jit_names_merge_like_named_from_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
