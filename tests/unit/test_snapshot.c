/* Unit tests of snapshots as values: they own their names (a snapshot outlives its profile), and
 * the one walk every reader uses (order, pruning, leave calls, paths). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/profile.h"
#include "proftop/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* main → a → leaf 5, main → b 7, main → a → a 2 (recursion), main 1; thread 2: main → c 3. */
static struct snapshot *example(uint32_t *main_, uint32_t *a, uint32_t *b, uint32_t *c,
				uint32_t *leaf)
{
	struct profile *p = profile_new(NULL);
	char module[] = "prog", name[16];
	struct snapshot *s;

	/* Names from buffers that are overwritten: the profile must keep its own copies. */
	strcpy(name, "main");
	*main_ = profile_func(p, module, name, 0x10);
	strcpy(name, "a");
	*a = profile_func(p, module, name, 0x20);
	strcpy(name, "b");
	*b = profile_func(p, module, name, 0x30);
	strcpy(name, "c");
	*c = profile_func(p, module, name, 0x40);
	strcpy(name, "leaf");
	*leaf = profile_func(p, module, name, 0x50);
	for (int i = 0; i < 5; i++)
		profile_add(p, 1, 1, (uint32_t[]){ *main_, *a, *leaf }, 3);
	for (int i = 0; i < 7; i++)
		profile_add(p, 1, 1, (uint32_t[]){ *main_, *b }, 2);
	for (int i = 0; i < 2; i++)
		profile_add(p, 1, 1, (uint32_t[]){ *main_, *a, *a }, 3);
	profile_add(p, 1, 1, (uint32_t[]){ *main_ }, 1);
	for (int i = 0; i < 3; i++)
		profile_add(p, 1, 2, (uint32_t[]){ *main_, *c }, 2);
	strcpy(name, "worker");
	profile_set_comm(p, 1, 2, name);
	memset(name, 'x', sizeof(name) - 1);
	memset(module, 'y', sizeof(module) - 1);
	s = profile_snapshot(p);
	profile_free(p);
	return s;
}

/* Freed profile, overwritten buffers: the names are still there (ASan would see a use after
 * free). */
static void snapshot_outlives_its_profile(void **state)
{
	uint32_t m, a, b, c, leaf;
	struct snapshot *s = example(&m, &a, &b, &c, &leaf);

	(void)state;
	assert_string_equal(s->funcs[leaf].name, "leaf");
	assert_string_equal(s->funcs[leaf].module, "prog");
	assert_string_equal(s->threads[1].comm, "worker");
	assert_int_equal(s->samples, 18);
	assert_int_equal(s->func_total[a], 7);
	struct snapshot *again = snapshot_ref(s);
	snapshot_unref(s);
	assert_string_equal(again->funcs[m].name, "main");
	snapshot_unref(again);
}

/* One function per (module, name, start): two static functions of one name stay apart. */
static void functions_are_keyed_by_start(void **state)
{
	struct profile *p = profile_new(NULL);
	uint32_t x = profile_func(p, "prog", "helper", 0x100);
	uint32_t y = profile_func(p, "prog", "helper", 0x200);
	uint32_t u = profile_func(p, NULL, NULL, 0xabc);

	(void)state;
	assert_int_not_equal(x, y);
	assert_int_equal(profile_func(p, "prog", "helper", 0x100), x);
	assert_int_equal(profile_func(p, NULL, NULL, 0xabc), u);
	struct snapshot *s = profile_snapshot(p);
	assert_string_equal(s->funcs[u].name, "0xabc");
	assert_string_equal(s->funcs[u].module, "[unknown]");
	snapshot_unref(s);
	profile_free(p);
}

struct trace {
	const struct snapshot *s;
	char text[256];
};

static void note_leave(void *arg, uint32_t node)
{
	struct trace *t = arg;
	size_t n = strlen(t->text);

	snprintf(t->text + n, sizeof(t->text) - n, "-%s ", t->s->funcs[t->s->nodes[node].func].name);
}

/* The merged tree walked: hottest first, depths, first/last flags, and leave() after each
 * subtree, innermost first. */
static void walk_order_and_leaves(void **state)
{
	uint32_t m, a, b, c, leaf;
	struct snapshot *s = example(&m, &a, &b, &c, &leaf);
	struct trace t = { s, "" };
	struct snapshot_walk w = { .nodes = s->nodes, .leave = note_leave, .arg = &t };
	struct snapshot_walk_step step;

	(void)state;
	snapshot_walk_begin(&w, s->merged_root, false);
	while (snapshot_walk_next(&w, &step)) {
		size_t n = strlen(t.text);

		snprintf(t.text + n, sizeof(t.text) - n, "+%s%u%s ",
			 s->funcs[s->nodes[step.node].func].name, step.depth,
			 step.hottest ? "h" : step.last ? "l" : "");
	}
	snapshot_walk_end(&w);
	/* main 18: a 7 (leaf 5, a 2), b 7, c 3; a and b tie at 7, a has the lower id. */
	assert_string_equal(t.text, "+main0h +a1h +leaf2h -leaf +a2l -a -a +b1 -b +c1l -c -main ");
	snapshot_unref(s);
}

/* Pruning skips a subtree; has_children and the path describe the node just returned. */
static void walk_prune_and_path(void **state)
{
	uint32_t m, a, b, c, leaf;
	struct snapshot *s = example(&m, &a, &b, &c, &leaf);
	struct snapshot_walk w = { .nodes = s->nodes };
	struct snapshot_walk_step step;
	size_t visited = 0, len;

	(void)state;
	snapshot_walk_begin(&w, s->merged_root, true);
	while (snapshot_walk_next(&w, &step)) {
		uint32_t f = s->nodes[step.node].func;
		const uint32_t *path = snapshot_walk_path(&w, &len);

		visited++;
		assert_int_equal(len, step.depth + 1);
		assert_int_equal(path[len - 1], step.node);
		if (f == a) {
			assert_true(snapshot_walk_has_children(&w));
			snapshot_walk_prune(&w);
		}
		if (f == b)
			assert_false(snapshot_walk_has_children(&w));
		assert_int_not_equal(f, leaf);
	}
	snapshot_walk_end(&w);
	assert_int_equal(visited, 5); /* root, main, a, b, c */
	snapshot_unref(s);
}

/* keep() leaves out a node and everything below it; unordered walks still visit every node. */
static bool not_a(void *arg, uint32_t node)
{
	const struct snapshot *s = arg;

	return strcmp(s->funcs[s->nodes[node].func].name, "a") != 0;
}

static void walk_keep_and_unordered(void **state)
{
	uint32_t m, a, b, c, leaf;
	struct snapshot *s = example(&m, &a, &b, &c, &leaf);
	struct snapshot_walk kept = { .nodes = s->nodes, .keep = not_a, .arg = s };
	struct snapshot_walk all = { .nodes = s->nodes, .unordered = true };
	struct snapshot_walk_step step;
	size_t n = 0;

	(void)state;
	snapshot_walk_begin(&kept, s->merged_root, false);
	while (snapshot_walk_next(&kept, &step))
		n++;
	snapshot_walk_end(&kept);
	assert_int_equal(n, 3); /* main, b, c */
	n = 0;
	snapshot_walk_begin(&all, s->threads[0].root, false);
	while (snapshot_walk_next(&all, &step))
		n++;
	snapshot_walk_end(&all);
	assert_int_equal(n, 5); /* thread 1: main, a, leaf, a, b */
	snapshot_unref(s);
}

/* The child of node with function func, or SNAPSHOT_NO_NODE. */
static uint32_t child_of(const struct snapshot *s, uint32_t node, uint32_t func)
{
	for (uint32_t c = s->nodes[node].first_child; c != SNAPSHOT_NO_NODE; c = s->nodes[c].next_sibling)
		if (s->nodes[c].func == func)
			return c;
	return SNAPSHOT_NO_NODE;
}

/* Folding inlined frames: helper, inlined into caller_a and caller_b, merges into them; the leaf
 * it called joins the leaf caller_a called itself; self per function and per site moves to the
 * caller's frame at the same address; the original is left alone. */
static void fold_inlined_merges_into_callers(void **state)
{
	struct profile *p = profile_new(NULL);
	uint32_t m = profile_func(p, "prog", "main", 0x10), ca = profile_func(p, "prog", "caller_a", 0x20);
	uint32_t cb = profile_func(p, "prog", "caller_b", 0x30), l = profile_func(p, "prog", "leaf", 0x40);
	uint32_t h = profile_inlined_func(p, "prog", "helper");
	uint32_t sm = profile_site(p, m, 0x10, "m.c", 1), sca = profile_site(p, ca, 0x20, "a.c", 5);
	uint32_t sh_a = profile_site(p, h, 0x20, "h.h", 50), sca2 = profile_site(p, ca, 0x24, "a.c", 6);
	uint32_t scb = profile_site(p, cb, 0x30, "b.c", 9), sh_b = profile_site(p, h, 0x30, "h.h", 50);
	uint32_t sl = profile_site(p, l, 0x40, "l.c", 2);
	struct snapshot *s, *f;
	uint32_t node;

	(void)state;
	for (int i = 0; i < 4; i++)
		profile_add_sites(p, 1, 1, (uint32_t[]){ m, ca, h }, (uint32_t[]){ sm, sca, sh_a }, 3);
	for (int i = 0; i < 2; i++)
		profile_add_sites(p, 1, 1, (uint32_t[]){ m, ca }, (uint32_t[]){ sm, sca2 }, 2);
	profile_add_sites(p, 1, 1, (uint32_t[]){ m, ca, h, l }, (uint32_t[]){ sm, sca, sh_a, sl }, 4);
	for (int i = 0; i < 3; i++)
		profile_add_sites(p, 1, 1, (uint32_t[]){ m, ca, l }, (uint32_t[]){ sm, sca2, sl }, 3);
	for (int i = 0; i < 5; i++)
		profile_add_sites(p, 1, 2, (uint32_t[]){ m, cb, h }, (uint32_t[]){ sm, scb, sh_b }, 3);
	s = profile_snapshot(p);
	profile_free(p);
	f = snapshot_fold_inlined(s);
	assert_ptr_not_equal(f, s);

	assert_int_equal(f->samples, 15);
	assert_int_equal(f->func_self[h], 0);
	assert_int_equal(f->func_total[h], 0);
	assert_int_equal(f->func_self[ca], 6);
	assert_int_equal(f->func_total[ca], 10);
	assert_int_equal(f->func_self[cb], 5);
	assert_int_equal(f->func_self[l], 4);
	assert_int_equal(f->func_total[m], 15);
	node = child_of(f, child_of(f, f->merged_root, m), ca);
	assert_int_not_equal(node, SNAPSHOT_NO_NODE);
	assert_int_equal(f->nodes[node].self, 6);
	assert_int_equal(f->nodes[node].total, 10);
	assert_int_equal(child_of(f, node, h), SNAPSHOT_NO_NODE);
	assert_int_not_equal(child_of(f, node, l), SNAPSHOT_NO_NODE);
	assert_int_equal(f->nodes[child_of(f, node, l)].self, 4);
	assert_int_equal(f->nodes[f->merged_root].total, 15);
	for (size_t t = 0; t < f->nthreads; t++) {
		uint32_t root = f->threads[t].root, top = child_of(f, root, m);

		assert_int_equal(f->nodes[root].total, f->threads[t].tid == 2 ? 5 : 10);
		if (f->threads[t].tid == 2)
			assert_int_equal(f->nodes[child_of(f, top, cb)].self, 5);
	}
	for (size_t i = 0; i < f->nnodes; i++)
		assert_false(f->nodes[i].func == h);
	assert_int_equal(f->sites[sca].self, 4);
	assert_int_equal(f->sites[sh_a].self, 0);
	assert_int_equal(f->sites[scb].self, 5);
	assert_int_equal(f->sites[sh_b].self, 0);
	assert_int_equal(f->sites[sca2].self, 2);
	assert_int_equal(f->sites[sl].self, 4);
	/* Node sites too: each thread node's add up to its self; caller_a's of thread 1 has helper's
	 * at its own frame's site (4) and its own (2); the two leaf nodes that merged, one entry. */
	for (uint32_t n = 0; n < f->nnodes; n++) {
		uint64_t sum = 0;

		for (uint32_t e = snapshot_node_sites(f, n); e != SNAPSHOT_NO_NODE_SITE;
		     e = f->node_sites[e].next) {
			assert_int_equal(f->node_sites[e].node, n);
			assert_int_equal(f->sites[f->node_sites[e].site].func, f->nodes[n].func);
			sum += f->node_sites[e].self;
		}
		assert_true(sum == f->nodes[n].self || sum == 0);
	}
	for (size_t t = 0; t < f->nthreads; t++) {
		uint32_t top = child_of(f, f->threads[t].root, m), e;

		if (f->threads[t].tid != 1)
			continue;
		node = child_of(f, top, ca);
		e = snapshot_node_sites(f, node);
		assert_int_equal(f->nodes[node].self, 6);
		assert_int_equal(f->node_sites[e].site, sca2);
		assert_int_equal(f->node_sites[e].self, 2);
		e = f->node_sites[e].next;
		assert_int_equal(f->node_sites[e].site, sca);
		assert_int_equal(f->node_sites[e].self, 4);
		assert_int_equal(f->node_sites[e].next, SNAPSHOT_NO_NODE_SITE);
		e = snapshot_node_sites(f, child_of(f, node, l));
		assert_int_equal(f->node_sites[e].site, sl);
		assert_int_equal(f->node_sites[e].self, 4);
		assert_int_equal(f->node_sites[e].next, SNAPSHOT_NO_NODE_SITE);
	}
	assert_int_equal(f->nnode_sites, 4); /* thread 1: ca at sca, sca2; l at sl; thread 2: cb */

	/* The original is unchanged; a snapshot without inlined functions is itself. */
	assert_int_equal(s->func_self[h], 9);
	assert_int_equal(s->sites[sh_a].self, 4);
	snapshot_unref(f);
	snapshot_unref(s);
	uint32_t a, b, c, leaf;
	s = example(&m, &a, &b, &c, &leaf);
	f = snapshot_fold_inlined(s);
	assert_ptr_equal(f, s);
	snapshot_unref(f);
	snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(snapshot_outlives_its_profile),
		cmocka_unit_test(functions_are_keyed_by_start),
		cmocka_unit_test(walk_order_and_leaves),
		cmocka_unit_test(walk_prune_and_path),
		cmocka_unit_test(walk_keep_and_unordered),
		cmocka_unit_test(fold_inlined_merges_into_callers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
