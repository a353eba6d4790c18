/* profile.h — samples aggregated into call trees: the collector's working copy, from which it
 * makes the snapshots (snapshot.h) that everything else reads.
 *
 * The profile keeps one trie of call stacks per thread and their merge over all threads: a node is
 * a function reached by one path from its root, with the samples that ended there (self) and that
 * passed through it (total). Memory grows with the number of distinct paths, not with samples,
 * up to a budget past which cold paths fold (profile_set_max_memory). Functions are interned
 * once into ids by (module, name, address); id 0 is the root. Names live in a string pool the
 * profile shares with its snapshots.
 *
 * History: when kept, the profile also remembers which trie leaf the samples of each second
 * ended at (history.h), and makes snapshots of any stretch of the run from it: the same nodes,
 * functions and threads as a cumulative snapshot, counted over that stretch's samples only
 * (nodes without any there have zero counts). Every snapshot carries the timeline.
 *
 * One thread at a time touches a profile: the collector's, or with several collector workers
 * whichever holds the collector's profile_lock (collector.c). */
#ifndef PROFTOP_PROFILE_H
#define PROFTOP_PROFILE_H

#include "proftop/snapshot.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct asuser;
struct diag;

/* Node ids are 32 bits (UINT32_MAX is "no node"). */
#define PROFILE_MAX_THREADS (1u << 20)
#define PROFILE_MAX_NODES (UINT32_MAX - 2)

struct profile;

/* A new profile; what goes wrong is reported to diag (NULL: nowhere). */
struct profile *profile_new(struct diag *diag);
void profile_free(struct profile *profile);

/* The id of a function, interned on first sight: name starting at addr in module (NULL:
 * "[unknown]"; addr keeps two functions of one name apart, 0 when unknown), or when name is NULL
 * the address addr there, shown as "module+0xaddr" (just "0xaddr" without a module). */
uint32_t profile_func(struct profile *profile, const char *module, const char *name, uint64_t addr);
/* The id of the function name of module as code inlined into others: one id for all the places
 * it was inlined, apart from the function's own out-of-line copy. */
uint32_t profile_inlined_func(struct profile *profile, const char *module, const char *name);
/* A debug file arrived for module (at path, as the process mapped it): each of its functions
 * known only by where it starts (profile_func() with a NULL name) takes the name namer gives for
 * that address, with where the function ends in *end; NULL leaves it as it is. The id stays, so
 * its counts and paths do, and profile_func() with a NULL name finds it at that address from now
 * on; one whose new name another id already has stays unnamed. Returns how many were named. */
typedef const char *profile_namer_fn(void *arg, uint64_t addr, uint64_t *end);
size_t profile_name_funcs(struct profile *profile, const char *module, const char *path,
			  profile_namer_fn *namer, void *arg);
/* JIT code whose perf map names it late. The id of an address of process pid (> 0; else
 * profile_func()) that no symbol names but the process's perf map may later: shown as
 * "module+0xaddr" ("0xaddr" without a module), one function per address until then. */
uint32_t profile_jit_func(struct profile *profile, const char *module, uint64_t addr, pid_t pid);
/* pid's perf map names more: each address of pid still unnamed takes the name namer gives it,
 * in *module (NULL: none yet), and is merged into the function of that name (the one
 * profile_func(module, name, 0) gives): its samples count there from now on, in the flat table
 * and in the trees (which are made again: node ids change), and so do lookups of the address and
 * stacks added later that hold its id. Returns how many were named. */
typedef const char *profile_jit_namer_fn(void *arg, uint64_t addr, const char **module);
size_t profile_name_jit(struct profile *profile, pid_t pid, profile_jit_namer_fn *namer,
			void *arg);
/* Does an address of pid still wait for a name? */
bool profile_jit_waiting(const struct profile *profile, pid_t pid);
/* Nothing more of pid will be named (its map is another program's, or the process ended): its
 * addresses keep what they have, and a later process of the same pid starts anew. */
void profile_jit_forget(struct profile *profile, pid_t pid);
/* func's name as snapshots show it. */
const char *profile_func_name(const struct profile *profile, uint32_t func);
/* Where func's code is (snapshot_func's path and range): set once, later calls change nothing. */
void profile_func_code(struct profile *profile, uint32_t func, const char *path, uint64_t start,
		       uint64_t end);
/* Why func has no source lines (snapshot_func's no_lines): set once, later calls change nothing. */
void profile_func_no_lines(struct profile *profile, uint32_t func, const char *why);
/* The id of a site of func (snapshot.h): link-time address addr of its module, on file:line
 * (NULL, 0: unknown); interned on first sight, where file and line are taken (or later, when the
 * first sight had no file). Sites and node sites share a quarter of the memory budget: past it a
 * new address shares its function's one SNAPSHOT_SITE_OTHER site. */
uint32_t profile_site(struct profile *profile, uint32_t func, uint64_t addr, const char *file,
		      unsigned line);
/* The same for a source line that starts at addr (coverage's): a site of its own even when
 * another line starts at the same address (two statements on one instruction). */
uint32_t profile_line_site(struct profile *profile, uint32_t func, uint64_t addr,
			   const char *file, unsigned line);
/* Name a thread (from COMM records or /proc). */
void profile_set_comm(struct profile *profile, pid_t pid, pid_t tid, const char *comm);
/* Add one sample: funcs is the call stack, outermost first, leaf last. */
/* The name of thread tid (of process tid, by process), NULL when none is known. */
const char *profile_comm(const struct profile *profile, pid_t tid);
void profile_add(struct profile *profile, pid_t pid, pid_t tid, const uint32_t *funcs, size_t depth);
/* The same, with each frame's site (sites[i] for funcs[i]; PROFILE_NO_SITE when unknown): the
 * leaf's counts a self sample, every site on the stack a total one, and the leaf's thread node
 * counts the sample at the leaf's site (snapshot.h's node sites). */
#define PROFILE_NO_SITE UINT32_MAX
void profile_add_sites(struct profile *profile, pid_t pid, pid_t tid, const uint32_t *funcs,
		       const uint32_t *sites, size_t depth);
/* The same, count samples at once (coverage's executions of a line since the last reading). */
void profile_add_sites_n(struct profile *profile, pid_t pid, pid_t tid, const uint32_t *funcs,
			 const uint32_t *sites, size_t depth, uint64_t count);
/* Add count samples with the same stack at once (a profile read back from a file, an off-CPU
 * wait's microseconds), in the history's current second as one. */
void profile_add_n(struct profile *profile, pid_t pid, pid_t tid, const uint32_t *funcs,
		   size_t depth, uint64_t count);
/* Forget every sample: nodes, counts, the history's; functions, sites and threads stay, with
 * their ids (a profile made again from what still holds, the allocation modes' in-use). */
void profile_reset(struct profile *profile);
/* Samples added so far. */
uint64_t profile_samples(const struct profile *profile);

/* Keep the history, the newest seconds of it a second each (0, the default: keep none); its
 * second 0 began at origin_ns (CLOCK_MONOTONIC, like profile_set_time()'s clock). */
void profile_set_history(struct profile *profile, unsigned seconds, uint64_t origin_ns);
/* Before the first sample: when second 0 of the run begins. */
void profile_set_origin(struct profile *profile, uint64_t origin_ns);
/* Before the first sample: one tree per process instead of per thread (the threads'
 * samples all go to their process's, named by its main thread), for -a. */
void profile_set_by_process(struct profile *profile);
/* The profile is read from a file: its snapshots are ownerless (snapshot.h). */
void profile_set_ownerless(struct profile *profile);
/* Thread tid of pid (its process, by process) runs as owner; NULL: it ended before it was
 * looked at (SNAPSHOT_OWNER_GONE). */
void profile_set_owner(struct profile *profile, pid_t pid, pid_t tid, const struct asuser *owner);
/* tid (its process, by process) called execve(): who runs it is to be looked for again (a
 * root process may become another user's program: su, sudo -u, a service manager). */
void profile_forget_owner(struct profile *profile, pid_t pid, pid_t tid);
/* Whether tid's owner (its process's, by process) was looked for: set, or found gone. */
bool profile_owner_seen(const struct profile *profile, pid_t tid);
bool profile_has_history(const struct profile *profile);
/* Bytes the history holds (outside the memory budget, which counts the call trees). */
size_t profile_history_memory(const struct profile *profile);
/* The timeline also counts the samples whose stack passed through func (0: none). */
void profile_trace(struct profile *profile, uint32_t func);
/* The profile's clock (CLOCK_MONOTONIC ns): samples added from now on carry this time. Its owner
 * advances it as records arrive. */
void profile_set_time(struct profile *profile, uint64_t now_ns);

/* A new snapshot of every sample so far, with one reference. Its cost follows what changed
 * since one of the last few snapshots that no reader holds any more (see profile.c). */
struct snapshot *profile_snapshot(struct profile *profile);
/* Keep the tries, their index and the pooled snapshots within bytes by folding the coldest
 * subtrees into "[other]" nodes (0, the default: no limit). */
void profile_set_max_memory(struct profile *profile, size_t bytes);
/* Bytes the profile holds now (what the budget counts). */
size_t profile_memory(const struct profile *profile);
/* A new snapshot of the samples taken in the stretches of the history that overlap seconds
 * [from_s, to_s) of the run (see above); it says which seconds those span (range_start_s,
 * range_end_s). Without a history it has no samples. */
struct snapshot *profile_range_snapshot(struct profile *profile, uint64_t from_s, uint64_t to_s);

#endif
