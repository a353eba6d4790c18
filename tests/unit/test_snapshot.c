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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(snapshot_outlives_its_profile),
		cmocka_unit_test(functions_are_keyed_by_start),
		cmocka_unit_test(walk_order_and_leaves),
		cmocka_unit_test(walk_prune_and_path),
		cmocka_unit_test(walk_keep_and_unordered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
