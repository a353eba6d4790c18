/* profile_internal.h — what profile.c, profile_snapshot.c and profile_fold.c share of a profile
 * (profile.h): its definition, the change logs every change goes through, and the calls between
 * the three. Not for other modules. */
#ifndef PROFTOP_PROFILE_INTERNAL_H
#define PROFTOP_PROFILE_INTERNAL_H

#include "proftop/profile.h"

#include "proftop/idmap.h"
#include "proftop/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct history;
struct strpool;

#define POOL_SIZE 3
/* Look at memory every this many new nodes (and after each snapshot). */
#define BUDGET_CHECK_NODES 4096u

enum { LOG_NODES, LOG_FUNCS, LOG_THREADS, LOG_SITES, LOG_NODE_SITES, NLOGS };

struct change_log {
	uint32_t *gen_of;      /* per item: the generation it was last logged in */
	size_t gen_cap;
	uint32_t *items;       /* the items changed, oldest first; each once per generation */
	size_t n, cap;
};

/* A snapshot the profile made and may update into a newer one. */
struct pooled {
	struct snapshot *snapshot;
	struct snapshot_node *nodes;   /* its arrays, writable here */
	struct snapshot_func *funcs;
	uint64_t *self, *total;
	struct snapshot_thread *threads;
	struct snapshot_site *sites;
	struct snapshot_node_site *node_sites;
	uint32_t *node_site_first;     /* nodes_cap of them */
	size_t nodes_cap, funcs_cap, threads_cap, sites_cap, node_sites_cap;
	size_t log_pos[NLOGS];         /* where each log stood when it was made */
};

struct func_key {
	const char *module;    /* interned in the profile's strings, so compared by pointer */
	const char *name;      /* NULL: the function is the address below */
	uint64_t addr;         /* where a named function starts; an unnamed one's address */
	uint64_t inlined;      /* 1: its inlined instances (addr 0) */
	uint64_t jit_pid;      /* a JIT's unnamed address (profile_jit_func()): its process; else 0 */
};

struct profile {
	struct diag *diag;
	bool by_process;           /* a tree per process, not per thread (-a) */
	bool ownerless;            /* read from a file (profile_set_ownerless()) */
	struct strpool *strings;   /* names, modules, comms; shared with the snapshots */

	struct snapshot_func *funcs;
	struct func_key *func_keys;
	uint64_t *func_self, *func_total;
	uint64_t *func_seen;       /* the sample that last counted the function's total */
	size_t nfuncs, funcs_cap;
	struct idmap func_index;   /* hash of func_key -> id (verified on lookup) */
	struct idmap renamed_index; /* hash of (module, addr) -> an id named after it was interned
				     * unnamed there (profile_name_funcs(); verified on lookup) */
	uint32_t *merged_into;     /* per function: the one it was merged into (never a merged one
				    * itself); 0: none */
	size_t nmerged;
	uint32_t *jit_funcs;       /* the JIT addresses of live processes, named or not */
	size_t njit_funcs, jit_funcs_cap;
	uint32_t *remapped;        /* a stack added, its merged functions replaced */
	size_t remapped_cap;

	struct snapshot_node *nodes;
	uint32_t *merged_of;
	size_t nnodes, nodes_cap;
	struct idmap child_index;  /* parent << 32 | func -> node */

	struct snapshot_thread *threads;
	size_t nthreads, threads_cap;
	struct idmap thread_index; /* tid -> thread */
	uint64_t samples;

	struct snapshot_site *sites;
	uint64_t *site_seen;       /* the sample that last counted the site's total */
	size_t nsites, sites_cap;
	struct idmap site_index;   /* hash of site_key -> id (verified on lookup) */
	struct snapshot_node_site *node_sites;
	size_t nnode_sites, node_sites_cap;
	uint32_t *node_site_first; /* per node (nodes_cap): its first entry */
	struct idmap node_site_index; /* node << 32 | site -> entry */

	size_t max_bytes;          /* the memory budget; 0: none */
	size_t next_check;         /* node count at which memory is looked at again */
	uint32_t other_func;       /* "[other]", once something folded */
	uint64_t folded_nodes;
	unsigned folds;

	struct change_log logs[NLOGS];
	uint32_t gen;
	struct pooled pool[POOL_SIZE]; /* oldest first */
	size_t npool;

	uint64_t now_ns;
	struct history *history;   /* NULL: none kept */
	unsigned history_seconds;
	uint32_t traced_func;      /* the timeline counts its samples too; 0: none */
	uint64_t origin_ns;        /* when the history's second 0 began */
};

/* Item was made or changed: log it once in this generation. Nothing is logged while nothing is
 * pooled. */
static inline void log_change(struct profile *p, int which, uint32_t item)
{
	struct change_log *l = &p->logs[which];

	if (!p->npool || l->gen_of[item] == p->gen)
		return;
	l->gen_of[item] = p->gen;
	if (l->n == l->cap)
		xgrow((void **)&l->items, &l->cap, l->n + 1, sizeof(*l->items));
	l->items[l->n++] = item;
}

/* Where func counts now: the function it was merged into, if it was. */
static inline uint32_t func_now(const struct profile *p, uint32_t func)
{
	return p->merged_into[func] ? p->merged_into[func] : func;
}

/* The change logs and the pool (profile_snapshot.c). */
void profile_log_reserve(struct change_log *l, size_t count);
void profile_pool_drop(struct profile *p);
void profile_logs_restart(struct profile *p);

/* The memory budget and the tries made again (profile_fold.c). */
void profile_check_budget(struct profile *p);
void profile_merge_funcs(struct profile *p, const uint32_t *merged, size_t n);

#endif
