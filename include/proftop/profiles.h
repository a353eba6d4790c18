/* profiles.h — the run's set of profiles: one per kind of profile (enum sample_mode) its sources
 * feed, every function interned in each in the same order, so that an id names one function in
 * all (a view's selection holds when the kind shown changes).
 *
 * What is done "for every profile of this run" is one call here. With several workers the set
 * is shared: profiles_lock() guards it (and what the sources keep beside it, the waits of
 * off-CPU time); with one it is a no-op. */
#ifndef PROFTOP_PROFILES_H
#define PROFTOP_PROFILES_H

#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct profile;

/* A mask of kinds of profile: bit 1 << mode. */
#define PROFILES_MODE(mode) (1u << (unsigned)(mode))

struct profiles;

/* The profiles of the kinds in modes (a non-empty contiguous run of them); by_process: -a's
 * (profile_set_by_process()); shared: taken by several threads (profiles_lock() locks).
 * rebuilt: those of modes made again at each publication (no history, stretches or budget). */
struct profiles *profiles_new(uint32_t modes, uint32_t rebuilt, bool by_process, bool shared,
			      struct diag *diag);
void profiles_free(struct profiles *ps);
void profiles_lock(struct profiles *ps);
void profiles_unlock(struct profiles *ps);

/* The profile of mode; NULL when the run keeps none. */
struct profile *profiles_get(const struct profiles *ps, enum sample_mode mode);
/* The first of the run's kinds (the one whose counts say how many samples reached it). */
enum sample_mode profiles_first(const struct profiles *ps);
bool profiles_rebuilt(const struct profiles *ps, enum sample_mode mode);

/* The profiles' clock (profile_set_time()), and the run's start (profile_set_origin()). */
void profiles_set_time(struct profiles *ps, uint64_t now_ns);
void profiles_set_origin(struct profiles *ps, uint64_t start_ns);

/* A function's id in every profile: profile_func(), profile_inlined_func() when inlined. */
uint32_t profiles_func(struct profiles *ps, const char *module, const char *name, uint64_t addr,
		       bool inlined);
/* A JIT address no map names yet (profile_jit_func()). */
uint32_t profiles_jit_func(struct profiles *ps, const char *module, uint64_t addr, pid_t pid);
void profiles_func_code(struct profiles *ps, uint32_t func, const char *path, uint64_t start,
			uint64_t end);
void profiles_func_no_lines(struct profiles *ps, uint32_t func, const char *why);
/* The site of func at addr (profile_site()): the CPU profile's, the one that counts sites;
 * PROFILE_NO_SITE in a run without one. */
uint32_t profiles_site(struct profiles *ps, uint32_t func, uint64_t addr, const char *file,
		       unsigned line);

/* A COMM record: pid's thread tid is named comm; at an exec its owner is looked at again. */
void profiles_comm(struct profiles *ps, pid_t pid, pid_t tid, const char *comm, bool exec);
/* A thread's first sample: its owner (and under -a its process's name) as /proc says now.
 * Lazily, so that the processes never sampled (most of a machine's) cost nothing. */
void profiles_seen(struct profiles *ps, pid_t pid, pid_t tid, bool system_wide);

/* Late names: a debug file's functions (profile_name_funcs()), a perf map's (profile_name_jit()). */
void profiles_name_funcs(struct profiles *ps, const char *module, const char *path,
			 const char *(*namer)(void *arg, uint64_t addr, uint64_t *end), void *arg);
void profiles_name_jit(struct profiles *ps, pid_t pid,
		       const char *(*namer)(void *arg, uint64_t addr, const char **module), void *arg);
void profiles_jit_forget(struct profiles *ps, pid_t pid);
bool profiles_jit_waiting(struct profiles *ps, pid_t pid);

/* The history of each profile that keeps one (profile_set_history()). */
void profiles_set_history(struct profiles *ps, unsigned seconds, uint64_t origin_ns);
bool profiles_have_history(const struct profiles *ps);
/* The trees' budget, split evenly between the profiles that keep history (the wall profile holds
 * about what the CPU's does, the others less). */
void profiles_set_max_memory(struct profiles *ps, size_t bytes);
/* What the trees and their history hold now. */
void profiles_memory(const struct profiles *ps, size_t *trees, size_t *history);

#endif
