/* export_walk.c — a writer's scope of a snapshot and its walk (export_walk.h). */
#include "proftop/export_walk.h"

uint64_t export_ns_to_ticks(uint64_t ns, unsigned hz)
{
	return (uint64_t)(((unsigned __int128)ns * hz + 500000000u) / 1000000000u);
}

void export_scope_merged(struct export_scope *scope, const struct snapshot *s)
{
	scope->root = s->merged_root;
	scope->thread = NULL;
}

void export_scope_of_tid(struct export_scope *scope, const struct snapshot *s, pid_t tid)
{
	export_scope_merged(scope, s);
	for (size_t i = 0; tid && i < s->nthreads; i++) {
		if (s->threads[i].tid == tid) {
			scope->root = s->threads[i].root;
			scope->thread = &s->threads[i];
		}
	}
}

void export_walk_begin(struct snapshot_walk *w, const struct snapshot *s,
		       const struct export_scope *scope, void (*leave)(void *arg, uint32_t node),
		       void *arg)
{
	*w = (struct snapshot_walk){ .nodes = s->nodes, .leave = leave, .arg = arg };
	snapshot_walk_begin(w, scope->root, false);
}
