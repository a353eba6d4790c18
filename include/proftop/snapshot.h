/* snapshot.h — the profile as frontends, views and exporters read it: an immutable value made by
 * the collector (profile.c) or read back from a file, handed between threads by reference.
 *
 * A snapshot holds the per-thread call trees ("tries": a node is a function reached by one path
 * from its thread's root, with the samples that ended there, self, and that passed through it,
 * total), a tree merged over all threads, the flat function table derived from the merged tree
 * (TOTAL counts a function once per sample even when it recurses), and the threads.
 *
 * It owns everything it shows: its arrays, and a reference to the string pool its names live in.
 * So it may outlive the profile and the session it came from, and two snapshots can be compared.
 * It never changes after it is made and is freed when its last reference is dropped, on any
 * thread.
 *
 * Node layout: the per-thread tries and the merged tree share one array, in any order but one:
 * a parent's index is smaller than its children's. A thread's trie is the subtree under its root;
 * the merged tree the one under merged_root. Function id 0 is the root.
 *
 * Sites (per-address counts, with their source lines) have totals for the whole run only: a
 * stretch's snapshot (ranged) counts its self samples, without totals (sites_self_only). Each
 * thread node also has the histogram of its self samples by site (node_sites): where exactly the
 * samples that ended on that path were taken.
 *
 * A profile that outgrew its memory budget folded its coldest subtrees: their samples are in
 * "[other]" nodes, folded_nodes says how many nodes went, and the flat table is still exact. */
#ifndef PROFTOP_SNAPSHOT_H
#define PROFTOP_SNAPSHOT_H

#include "proftop/counters.h"
#include "proftop/sample.h"
#include "proftop/selfcost.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strpool;

#define SNAPSHOT_ROOT_FUNC 0u
#define SNAPSHOT_OFFCPU_FREQ 1000000u /* the freq of the modes that count microseconds */
#define SNAPSHOT_NO_NODE UINT32_MAX
#define SNAPSHOT_NCOMPANIONS (SAMPLE_MODE_INUSE_OBJECTS + 1 - SAMPLE_MODE_ALLOC)

struct snapshot_func {
	/* The function; "module+0xoffset" when it has no symbol; "name (inlined)" for an inlined one. */
	const char *name;
	const char *module; /* basename of its file, "[vdso]", or "[unknown]" */
	bool inlined;       /* code the compiler inlined into its callers: a frame from DWARF */
	/* Where its code is, for a disassembler: the ELF file as the process mapped it, and the
	 * function's link-time range there; NULL and 0, 0 when unknown. */
	const char *path;
	uint64_t code_start, code_end;
	/* Why its file's DWARF gave it no source lines when that is something wrong (corrupt, or
	 * a debug file of another build), as the warning said it; NULL otherwise. */
	const char *no_lines;
};

/* Where in a function its samples were: one instruction address of its module, with the source
 * line it is on. For a function's own frame that is the address's line; where the function
 * called another (or had one inlined), the line of that call. self counts the samples taken at
 * addr, total those with addr anywhere on their stack (once per sample). */
#define SNAPSHOT_SITE_OTHER UINT64_MAX /* addr of the addresses past the memory budget */

struct snapshot_site {
	uint32_t func;
	unsigned line;      /* 0: unknown */
	uint64_t addr;      /* link-time address in the function's module (the byte before a
			     * return address for a call) */
	const char *file;   /* the source file as the compiler recorded it; NULL: unknown */
	uint64_t self;
	uint64_t total;
};

/* One thread node's self samples at one site (their sum over a node is its self, short of the
 * samples that had no site: without line lookups, read back from a file, or once folded). A
 * node's entries are chained: snapshot_node_sites() gives the first, next the others. */
#define SNAPSHOT_NO_NODE_SITE UINT32_MAX

struct snapshot_node_site {
	uint32_t node;         /* a node of a thread's trie (merged nodes have none) */
	uint32_t site;         /* in sites; its function is the node's */
	uint32_t next;         /* the node's next entry; SNAPSHOT_NO_NODE_SITE after the last */
	uint64_t self;
};

struct snapshot_node {
	uint32_t func;
	uint32_t parent;       /* SNAPSHOT_NO_NODE for a root */
	uint32_t first_child;  /* SNAPSHOT_NO_NODE when a leaf */
	uint32_t next_sibling;
	uint64_t self;
	uint64_t total;
};

/* Whether a thread's owner is known (asuser.h; not in an ownerless snapshot). */
enum snapshot_owner {
	SNAPSHOT_OWNER_UNSEEN,	/* not looked for yet (before its first CPU sample), or not kept */
	SNAPSHOT_OWNER_KNOWN,	/* uid and gid say who */
	SNAPSHOT_OWNER_GONE,	/* looked for, but the thread had ended */
};

struct snapshot_thread {
	pid_t pid, tid;
	const char *comm;      /* NULL when unknown */
	uint32_t root;         /* this thread's root in the snapshot's nodes */
	uint64_t samples;
	enum snapshot_owner owner;
	uid_t uid;             /* its filesystem uid and gid, when owner is KNOWN */
	gid_t gid;
};

/* A stretch of the run's timeline: the samples taken in its seconds [start_s, end_s), and those
 * of them whose stack passed through the traced function (snapshot's traced_func). */
struct snapshot_span {
	uint64_t start_s, end_s;
	uint64_t samples;
	uint64_t traced;
};

/* A stretch of the run a reader selects: the seconds [from_s, to_s); or when last_ns is not 0,
 * the last last_ns before now (a window that moves with the run), rounded out to whole seconds. */
struct snapshot_range {
	uint64_t from_s, to_s;
	uint64_t last_ns;
};

struct snapshot {
	atomic_int refs;
	struct counters counters;  /* filled in by whoever publishes it */
	struct selfcost cost;      /* proftop's own, when published (none: read from a file) */
	uint64_t elapsed_ns;
	uint64_t user_ns, system_ns; /* the target's CPU time as the kernel counts it (0: unknown) */
	char fetching[80];         /* the module whose debug file debuginfod is asked for; "" */
	/* What the counts measure. offcpu, runnable and wall count microseconds (blocked, runnable,
	 * or both and the CPU's), not samples; freq is then SNAPSHOT_OFFCPU_FREQ, so that
	 * count / freq is seconds either way (snapshot_timed()). The allocation modes count bytes or
	 * objects (estimated from the sampled ones: snapshot_allocations()); freq is then the mean
	 * bytes between samples (--alloc-rate). */
	enum sample_mode mode;
	unsigned freq;
	uint64_t window_ns;        /* a window of the last seconds: its length; else 0 */
	bool ranged;               /* the samples of a stretch of the run only (a window is one): */
	uint64_t range_start_s;    /* the seconds [range_start_s, range_end_s) of the run */
	uint64_t range_end_s;
	size_t nspans;             /* the run's timeline, oldest first (none: no history kept) */
	const struct snapshot_span *spans;
	uint32_t traced_func;      /* whose samples the spans count in traced; 0: none */

	uint64_t coverage_cap;     /* coverage: a line's counting stopped at this (0: never) */
	uint64_t samples;          /* samples in the tree */
	uint64_t folded_nodes;     /* nodes folded into "[other]" to stay within the memory budget */
	bool by_process;           /* threads[] are processes (tid = pid): the run was -a */
	/* Read back from a file: its threads say nothing of who ran them, and source files are read
	 * as proftop. A run's snapshots (false) are read only as the owner of a thread the function
	 * ran in could (annotate_readers()): a thread whose owner is not known lets nothing be read. */
	bool ownerless;
	size_t nfuncs;
	const struct snapshot_func *funcs;
	size_t nnodes;
	const struct snapshot_node *nodes;
	uint32_t merged_root;      /* the tree over all threads */
	size_t nthreads;
	const struct snapshot_thread *threads;
	const uint64_t *func_self; /* per function id, over all threads */
	const uint64_t *func_total;
	size_t nsites;             /* 0 without line lookups */
	const struct snapshot_site *sites; /* in the order they were first seen */
	bool sites_self_only;      /* a window's: sites and node sites count self samples, no totals */
	size_t nnode_sites;        /* 0 where nsites is, and in a file read back */
	const struct snapshot_node_site *node_sites;
	const uint32_t *node_site_first; /* per node: its first entry; may be NULL when there is none */
	struct strpool *strings;   /* a reference: every name and comm above lives there */
	/* An allocation run's cumulative snapshot: the run's other allocation profiles made with it
	 * (index: mode - SAMPLE_MODE_ALLOC; its own and those of other snapshots NULL), each a
	 * reference, their function ids the same. Exports write all four; the Top view shows the
	 * objects beside the bytes. */
	struct snapshot *companions[SNAPSHOT_NCOMPANIONS];
};

/* The snapshot of mode that s is or came with (NULL: none). */
const struct snapshot *snapshot_companion(const struct snapshot *s, enum sample_mode mode);
/* The blocks that bytes, a snapshot of allocated or in-use bytes, counts: the objects profile
 * made with it, among with's companions (with: bytes itself, or the snapshot bytes came with),
 * whose function ids are bytes'. NULL when bytes counts no bytes or there is none. */
const struct snapshot *snapshot_objects(const struct snapshot *bytes,
					const struct snapshot *with);

/* An empty snapshot with one reference, owning one reference to strings: its maker fills in the
 * arrays (malloc'd; the last unref frees them). */
struct snapshot *snapshot_alloc(struct strpool *strings);
struct snapshot *snapshot_ref(struct snapshot *snapshot);
void snapshot_unref(struct snapshot *snapshot);

/* The times a file of the snapshot states: the run's wall-clock and CPU times, or for a stretch
 * its length and the CPU time its samples stand for (samples over the frequency, as user time:
 * the kernel counts no CPU time per stretch). In the timed modes, the time measured stands for
 * the CPU time (as user time), so that shares of it add up to 100%. */
/* Whether the counts are microseconds (every mode but cpu), not samples. */
bool snapshot_timed(const struct snapshot *snapshot);
/* Whether the counts are allocations (the allocation modes): bytes, or objects (blocks). */
bool snapshot_allocations(const struct snapshot *snapshot);
/* Whether the counts are executions of source lines (coverage: sites are its lines, coverage_cap
 * and counters.probes say more). */
bool snapshot_coverage(const struct snapshot *snapshot);
bool snapshot_bytes(const struct snapshot *snapshot);
/* What an allocation mode counts ("bytes allocated", "bytes in use (...)"); NULL for the others. */
const char *snapshot_alloc_measured(enum sample_mode mode);
/* What a snapshot's kind of profile counts, for frontends and exporters, which name no mode:
 * its name ("cpu", "offcpu", "inuse", ...), what its allocations measure (NULL when it counts
 * none), whether its timeline is a level at each moment (what is in use) rather than a sum, and
 * a sibling of the same run by kind name (itself, or a companion; NULL when it has none). */
const char *snapshot_kind(const struct snapshot *s);
const char *snapshot_alloc_measures(const struct snapshot *s);
bool snapshot_level(const struct snapshot *s);
const struct snapshot *snapshot_sibling(const struct snapshot *s, const char *kind);
/* The counts' column heading: "SAMPLES", "SECONDS", "BYTES" or "OBJECTS" (sample_mode_info()). */
const char *snapshot_unit(const struct snapshot *snapshot);
/* What 100% is in a timed mode, for headers ("blocked", "preempted", "thread time"); NULL in
 * cpu mode. */
const char *snapshot_time_measured(const struct snapshot *snapshot);
void snapshot_times(const struct snapshot *snapshot, uint64_t *real_ns, uint64_t *user_ns,
		    uint64_t *system_ns);

/* The first of node's self sites (an index into node_sites), SNAPSHOT_NO_NODE_SITE when it has
 * none; the next ones follow their next:
 *
 *     for (uint32_t e = snapshot_node_sites(s, node); e != SNAPSHOT_NO_NODE_SITE;
 *          e = s->node_sites[e].next)
 *             ... s->sites[s->node_sites[e].site], s->node_sites[e].self ... */
uint32_t snapshot_node_sites(const struct snapshot *snapshot, uint32_t node);

/* Flat totals (self, total per function) of the subtree under node, e.g. one thread's root.
 * self and total are arrays of snapshot->nfuncs, zeroed here. */
void snapshot_flat(const struct snapshot *snapshot, uint32_t node, uint64_t *self, uint64_t *total);

/* The snapshot as if inlined functions were not frames of their own (as --no-inline collects
 * it): each inlined node merges into its nearest caller that is not inlined, and its samples, per
 * node, per function, per site and per node site, count there. Function ids stay. A snapshot
 * without inlined functions comes back as a new reference to itself. */
struct snapshot *snapshot_fold_inlined(struct snapshot *snapshot);

/* What the Lines view reads of one thread: the functions and sites of snapshot as counted in the
 * subtree under scope (a thread's root): each site's self samples there (from the node sites; no
 * totals: sites_self_only), the flat self and total of that subtree, and samples its total. It
 * has no nodes and no threads. */
struct snapshot *snapshot_sites_in(struct snapshot *snapshot, uint32_t scope);

/* Depth-first, pre-order, over the nodes below top of a node array (a snapshot's, or a tree a
 * view built in the same layout). Children come hottest first (most total samples; ties by
 * function id, the order functions were first seen, which is stable between snapshots and
 * cheap), or in the array's own order when unordered (for sums). Nodes without samples, and
 * those keep() refuses, are left out together with their subtrees.
 *
 *     struct snapshot_walk w = { .nodes = s->nodes };
 *     struct snapshot_walk_step step;
 *
 *     snapshot_walk_begin(&w, top, false);
 *     while (snapshot_walk_next(&w, &step))
 *             ... step.node, step.depth; snapshot_walk_prune(&w) to skip its children ...
 *     snapshot_walk_end(&w);
 *
 * leave(), when set, is called for each visited node as the walk leaves its subtree (innermost
 * first), before the next node is returned and at the end: the caller can keep per-path state
 * (a function's frames on the path, an exit mark) without a stack of its own. */
struct snapshot_walk_frame;

struct snapshot_walk {
	const struct snapshot_node *nodes;
	bool (*keep)(void *arg, uint32_t node); /* NULL: every node with samples */
	void (*leave)(void *arg, uint32_t node);
	void *arg;
	bool unordered;
	/* The walk's own state. */
	struct snapshot_walk_frame *stack;
	size_t depth, cap;
	uint32_t *path;            /* the visited nodes from the first depth down to the last */
	size_t path_len, path_cap;
	bool expand;               /* the last node's children are still to be pushed */
};

struct snapshot_walk_step {
	uint32_t node;
	unsigned depth;            /* 0 for the first level (top itself, or its children) */
	bool hottest;              /* first among its siblings */
	bool last;                 /* last among its siblings */
};

/* Start below top; with include_top, top itself is the first node (depth 0). */
void snapshot_walk_begin(struct snapshot_walk *walk, uint32_t top, bool include_top);
/* The next node, or false at the end. */
bool snapshot_walk_next(struct snapshot_walk *walk, struct snapshot_walk_step *step);
/* Leave out the children of the node next() returned last. */
void snapshot_walk_prune(struct snapshot_walk *walk);
/* Whether the node next() returned last has a child the walk would visit. */
bool snapshot_walk_has_children(const struct snapshot_walk *walk);
/* Queue the children of the node next() returned last now rather than at the next call, and say
 * how many the walk will visit (so a caller that walks into them need not ask the above). */
size_t snapshot_walk_expand(struct snapshot_walk *walk);
/* The path to the node next() returned last, first level first; *len nodes. */
const uint32_t *snapshot_walk_path(const struct snapshot_walk *walk, size_t *len);
/* Leave what is still on the path (calling leave()) and free the walk's memory. */
void snapshot_walk_end(struct snapshot_walk *walk);

/* Call paths hashed, so that a node of one snapshot's tree is found in another's (a view's
 * expansions and cursor, a baseline's matching node): every tree's root has SNAPSHOT_ROOT_PATH,
 * and the child func of the node whose path is parent has snapshot_path_child(parent, func). */
#define SNAPSHOT_ROOT_PATH 0x70726f66746f7021ull
uint64_t snapshot_path_child(uint64_t parent, uint32_t func);

#endif
