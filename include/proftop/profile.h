/* profile.h — samples aggregated into call trees, and the immutable snapshots frontends read.
 *
 * The profile keeps one trie of call stacks per thread: a node is a function reached by one path
 * from the thread's root, with the samples that ended there (self) and that passed through it
 * (total). Memory grows with the number of distinct paths, not with samples. Functions are
 * interned once into ids; id 0 is the root.
 *
 * A snapshot is a copy made for readers on other threads: it never changes after it is made and
 * lives until its last reference is dropped. It holds the per-thread tries, a merged tree over all
 * threads, and the flat function table derived from the merged tree (TOTAL counts a function once
 * per sample even when it recurses). The strings it points to belong to the profile, which must
 * outlive its snapshots.
 *
 * Time windows: when a window length is set, the profile also remembers which trie leaf each recent
 * sample ended at, with its time, in a bounded deque (at most PROFILE_WINDOW_MAX samples, the
 * oldest forgotten first). A window snapshot has the same nodes, functions and threads as a
 * cumulative one, counted over the samples of the last window only: nodes with no sample in the
 * window are there with zero counts.
 *
 * Only the collector thread touches a profile. */
#ifndef PROFTOP_PROFILE_H
#define PROFTOP_PROFILE_H

#include "proftop/counters.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbol;

#define PROFILE_ROOT_FUNC 0u
#define PROFILE_NO_NODE UINT32_MAX

struct profile_func {
	const char *name;   /* the function, or "module+0xoffset" when it has no symbol */
	const char *module; /* basename of its file, "[vdso]", or "[unknown]" */
};

struct profile_node {
	uint32_t func;
	uint32_t parent;       /* PROFILE_NO_NODE for a root */
	uint32_t first_child;  /* PROFILE_NO_NODE when a leaf */
	uint32_t next_sibling;
	uint64_t self;
	uint64_t total;
};

struct profile_thread {
	pid_t pid, tid;
	const char *comm;
	uint32_t root;         /* this thread's root in the snapshot's nodes */
	uint64_t samples;
};

struct profile;

struct profile *profile_new(void);
void profile_free(struct profile *profile);

/* The id of the function a resolved address belongs to, interned on first sight. */
uint32_t profile_func(struct profile *profile, const struct symbol *symbol);
/* Name a thread (from COMM records or /proc). */
void profile_set_comm(struct profile *profile, pid_t pid, pid_t tid, const char *comm);
/* Add one sample: funcs is the call stack, outermost first, leaf last. */
void profile_add(struct profile *profile, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth);
/* Add count samples with the same stack at once (a profile read back from a file; no window). */
void profile_add_n(struct profile *profile, pid_t pid, pid_t tid, const uint32_t *funcs,
		   size_t depth, uint64_t count);
/* Samples added so far. */
uint64_t profile_samples(const struct profile *profile);

#define PROFILE_WINDOW_MAX (1u << 20)

/* Keep the samples of the last window_ns for window snapshots; 0 (the default) keeps none. */
void profile_set_window(struct profile *profile, uint64_t window_ns);
/* The profile's clock (CLOCK_MONOTONIC ns): samples added from now on carry this time. Its owner
 * advances it as records arrive. */
void profile_set_time(struct profile *profile, uint64_t now_ns);

struct profile_snapshot {
	atomic_int refs;
	struct counters counters;  /* filled in by whoever publishes it */
	uint64_t elapsed_ns;
	uint64_t user_ns, system_ns; /* the target's CPU time as the kernel counts it (0: unknown) */
	unsigned freq;
	uint64_t window_ns;        /* 0: every sample since the start; else the window's length */

	uint64_t samples;          /* samples in the tree */
	size_t nfuncs;
	const struct profile_func *funcs;
	size_t nnodes;
	const struct profile_node *nodes;
	uint32_t merged_root;      /* the tree over all threads */
	size_t nthreads;
	const struct profile_thread *threads;
	const uint64_t *func_self; /* per function id, over all threads */
	const uint64_t *func_total;
};

/* Node layout: indices below merged_root are the per-thread tries, merged_root and above the
 * merged tree. In both, a parent's index is smaller than its children's. */

/* A new snapshot with one reference. */
struct profile_snapshot *profile_snapshot(const struct profile *profile);
/* A new snapshot of the samples taken in the window before now_ns (see above); forgets the older
 * ones. */
struct profile_snapshot *profile_window_snapshot(struct profile *profile, uint64_t now_ns);
struct profile_snapshot *profile_snapshot_ref(struct profile_snapshot *snapshot);
void profile_snapshot_unref(struct profile_snapshot *snapshot);

/* Depth-first, pre-order walk of the subtree under top (start with n = top): the node after n,
 * or PROFILE_NO_NODE at the end. With on_path, each node's function count there is decremented
 * as its subtree is left (the caller increments it on the visit). */
uint32_t profile_walk_next(const struct profile_node *nodes, uint32_t top, uint32_t n,
			   uint32_t *on_path);

/* Flat totals (self, total per function) of the subtree under node, e.g. one thread's root.
 * self and total are arrays of snapshot->nfuncs, zeroed here. */
void profile_snapshot_flat(const struct profile_snapshot *snapshot, uint32_t node, uint64_t *self,
			   uint64_t *total);

#endif
