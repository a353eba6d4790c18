/* export_walk.h — what every writer of a snapshot (export_writers.h) walks: one scope of it (the
 * merged tree or a thread's), depth first, and time in the format's ticks. */
#ifndef PROFTOP_EXPORT_WALK_H
#define PROFTOP_EXPORT_WALK_H

#include <stdint.h>
#include <sys/types.h>

#include "proftop/snapshot.h"

/* One tree of a snapshot: the merged tree (thread NULL, root merged_root) or one thread's. */
struct export_scope {
	uint32_t root;
	const struct snapshot_thread *thread;
};

void export_scope_merged(struct export_scope *scope, const struct snapshot *snapshot);
/* The tree of thread tid, or the merged tree when tid is 0 or the snapshot has no such thread. */
void export_scope_of_tid(struct export_scope *scope, const struct snapshot *snapshot, pid_t tid);

/* The walk every writer makes over a scope: depth first, hottest child first (the snapshot's
 * walk), leave(arg, node) called as each node's subtree ends. */
void export_walk_begin(struct snapshot_walk *walk, const struct snapshot *snapshot,
		       const struct export_scope *scope, void (*leave)(void *arg, uint32_t node),
		       void *arg);

/* Ticks of hz in ns nanoseconds, rounded. */
uint64_t export_ns_to_ticks(uint64_t ns, unsigned hz);

#endif
