/* export_tmon.c — a snapshot as Devel::DProf's tmon.out, for dprofpp and `proftop report`.
 *
 * DProf records a trace: `+ id` when a sub is entered, `- id` when it exits, `@ u s r` for the
 * user/system/real ticks that passed in between, `& id package name` the first time an id is used.
 * A sampled profile has no such trace, so one is made from the call tree: a depth-first walk
 * enters each node once, spends its self samples there (one tick per sample: $hz is the sampling
 * frequency) and leaves it when the walk moves to another branch. dprofpp's exclusive time for a
 * function is then exactly its self samples / hz and its cumulative time its total samples / hz
 * (dprofpp counts a recursive sub's outermost activation only, as proftop does); #Calls is how
 * many distinct call paths reach the function, the times the walk entered it.
 *
 * The header is Perl that dprofpp evals: only numbers proftop computed go there, never a name or
 * a path from the target. Names go on `&` lines, which dprofpp splits on ASCII whitespace: each
 * whitespace byte in a name becomes U+00A0 (no-break space, which reads the same and which
 * `proftop report` turns back), the rest is in visible form (util.h: ESC as ^[), and a
 * package::name that two functions would share gets a #N suffix so that dprofpp keeps them apart
 * as proftop does. */
#include "proftop/export_writers.h"

#include "proftop/idmap.h"
#include "proftop/strpool.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct tmon {
	FILE *out;
	const struct snapshot *s;
	uint32_t *ids;            /* function → its tmon id; 0 until declared */
	uint32_t next_id;
	struct strpool *pool;     /* the "package::name" strings declared so far */
	struct idmap taken;       /* interned "package::name" → 1 */
	char *buf;                /* scratch for one cleaned field */
	size_t cap;
};

/* field with whitespace as U+00A0 and the rest in visible form; "[unknown]" when empty. Returns
 * a pointer into t->buf. */
static const char *clean(struct tmon *t, const char *field)
{
	size_t len = strlen(field), n = 0;

	if (!len) {
		field = "[unknown]";
		len = strlen(field);
	}
	xgrow((void **)&t->buf, &t->cap, UTIL_VISIBLE_CHAR_MAX * len + 1, 1);
	for (const char *p = field; *p;) {
		if (*p == ' ' || (*p >= '\t' && *p <= '\r')) {
			t->buf[n++] = (char)0xc2;
			t->buf[n++] = (char)0xa0;
			p++;
		} else {
			n += util_visible_char(&p, t->buf + n);
		}
	}
	t->buf[n] = '\0';
	return t->buf;
}

/* Emit the & line of a function, with a name no other function of this file has. */
static void declare(struct tmon *t, uint32_t func)
{
	const struct snapshot_func *f = &t->s->funcs[func];
	char *package = xstrdup(clean(t, f->module));
	char *name = xstrdup(clean(t, f->name));
	char *unique = NULL;

	for (unsigned n = 1;; n++) {
		char *full = n == 1 ? xasprintf("%s::%s", package, name)
				    : xasprintf("%s::%s#%u", package, name, n);
		const char *key = strpool_intern(t->pool, full, strlen(full));

		free(full);
		if (idmap_get(&t->taken, (uint64_t)(uintptr_t)key) == IDMAP_MISSING) {
			idmap_put(&t->taken, (uint64_t)(uintptr_t)key, 1);
			unique = n == 1 ? xstrdup(name) : xasprintf("%s#%u", name, n);
			break;
		}
	}
	t->ids[func] = t->next_id++;
	fprintf(t->out, "& %u %s %s\n", t->ids[func], package, unique);
	free(package);
	free(name);
	free(unique);
}

static void leave(void *arg, uint32_t node)
{
	struct tmon *t = arg;

	fprintf(t->out, "- %u\n", t->ids[t->s->nodes[node].func]);
}

static void header(FILE *out, const struct snapshot *s, unsigned hz, uint64_t marks)
{
	const struct counters *c = &s->counters;
	uint64_t real, user, system;
	char cost[128];

	snapshot_times(s, &real, &user, &system);
	fprintf(out, "#fOrTyTwO\n$hz=%u;\n$XS_VERSION='proftop %s';\n# All values are given in HZ\n",
		hz, PROFTOP_VERSION);
	fprintf(out, "$over_utime=0; $over_stime=0; $over_rtime=0;\n$over_tests=1;\n");
	fprintf(out, "$rrun_utime=%llu; $rrun_stime=%llu; $rrun_rtime=%llu;\n",
		(unsigned long long)export_ns_to_ticks(user, hz),
		(unsigned long long)export_ns_to_ticks(system, hz),
		(unsigned long long)export_ns_to_ticks(real, hz));
	fprintf(out, "$total_marks=%llu;\n", (unsigned long long)marks);
	fprintf(out, "# proftop: samples %llu overflow %llu dropped %llu throttled %llu "
		     "truncated %llu\n",
		(unsigned long long)c->samples, (unsigned long long)c->overflow,
		(unsigned long long)c->dropped, (unsigned long long)c->throttled,
		(unsigned long long)c->truncated);
	/* proftop's own cost, as a comment: $over_* is DProf's per-mark overhead inside the
	 * profiled program, which dprofpp takes off every sub's time; proftop's runs in another
	 * process and has taken nothing from the target's. */
	if (selfcost_known(&s->cost))
		fprintf(out, "# %s\n", selfcost_summary(cost, sizeof(cost), &s->cost));
	/* A timed mode's ticks are microseconds of that time: proftop -i shows it as it was. */
	if (snapshot_timed(s))
		fprintf(out, "# proftop: mode %s switches %llu\n", snapshot_kind(s),
			(unsigned long long)c->switches);
	fputs("\nPART2\n", out);
}

/* The nodes the walk will enter: the header says how many marks follow. */
static size_t count_nodes(const struct snapshot *s, const struct export_scope *scope)
{
	struct snapshot_walk w = { .nodes = s->nodes, .unordered = true };
	struct snapshot_walk_step step;
	size_t n = 0;

	snapshot_walk_begin(&w, scope->root, false);
	while (snapshot_walk_next(&w, &step))
		n++;
	snapshot_walk_end(&w);
	return n;
}

int export_tmon(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct tmon t = { out, s, xcalloc(s->nfuncs, sizeof(uint32_t)), 1, strpool_new(),
			  { 0 }, NULL, 0 };
	unsigned hz = s->freq ? s->freq : 1;
	uint64_t root_self = s->nodes[scope->root].self;
	struct snapshot_walk w;
	struct snapshot_walk_step step;

	idmap_init(&t.taken);
	header(out, s, hz, 2 * (uint64_t)count_nodes(s, scope));
	/* Samples with no function at all pass outside every sub. */
	if (root_self)
		fprintf(out, "@ %llu 0 %llu\n", (unsigned long long)root_self,
			(unsigned long long)root_self);
	export_walk_begin(&w, s, scope, leave, &t);
	while (snapshot_walk_next(&w, &step)) {
		const struct snapshot_node *node = &s->nodes[step.node];

		if (!t.ids[node->func])
			declare(&t, node->func);
		fprintf(out, "+ %u\n", t.ids[node->func]);
		if (node->self)
			fprintf(out, "@ %llu 0 %llu\n", (unsigned long long)node->self,
				(unsigned long long)node->self);
	}
	snapshot_walk_end(&w);
	free(t.ids);
	free(t.buf);
	strpool_free(t.pool);
	idmap_free(&t.taken);
	return ferror(out) ? -(errno ? errno : EIO) : 0;
}
