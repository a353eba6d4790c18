/* profiles.c — the run's set of profiles (profiles.h): the loops "for every profile of this
 * run" in one place, and the lock that guards them when several workers add to them.
 *
 * Every function is interned in each profile in the same order, so ids agree; a disagreement
 * would be a bug here, reported rather than hidden. */
#include "proftop/profiles.h"

#include "proftop/asuser.h"
#include "proftop/diag.h"
#include "proftop/profile.h"
#include "proftop/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct profiles {
	struct profile *of[SAMPLE_NMODES]; /* NULL: not this run's */
	enum sample_mode first;
	size_t n;                  /* [first, first + n) */
	uint32_t rebuilt;
	bool shared;
	pthread_mutex_t lock;
	struct diag *diag;
};

#define EACH(ps, m) for (size_t m = (ps)->first; m < (ps)->first + (ps)->n; m++)

struct profiles *profiles_new(uint32_t modes, uint32_t rebuilt, bool by_process, bool shared,
			      struct diag *diag)
{
	struct profiles *ps = xcalloc(1, sizeof(*ps));

	while (!(modes & PROFILES_MODE(ps->first)))
		ps->first++;
	while (ps->first + ps->n < SAMPLE_NMODES && (modes & PROFILES_MODE(ps->first + ps->n)))
		ps->n++;
	ps->rebuilt = rebuilt;
	ps->shared = shared;
	ps->diag = diag;
	pthread_mutex_init(&ps->lock, NULL);
	EACH(ps, m) {
		ps->of[m] = profile_new(diag);
		if (by_process)
			profile_set_by_process(ps->of[m]);
		/* The one function a profile interns by itself (when it folds): first, in all. */
		if (ps->n > 1)
			profile_func(ps->of[m], NULL, "[other]", 0);
	}
	return ps;
}

void profiles_free(struct profiles *ps)
{
	if (!ps)
		return;
	EACH(ps, m)
		profile_free(ps->of[m]);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

void profiles_lock(struct profiles *ps)
{
	if (ps->shared)
		pthread_mutex_lock(&ps->lock);
}

void profiles_unlock(struct profiles *ps)
{
	if (ps->shared)
		pthread_mutex_unlock(&ps->lock);
}

struct profile *profiles_get(const struct profiles *ps, enum sample_mode mode)
{
	return (unsigned)mode < SAMPLE_NMODES ? ps->of[mode] : NULL;
}

enum sample_mode profiles_first(const struct profiles *ps)
{
	return ps->first;
}

bool profiles_rebuilt(const struct profiles *ps, enum sample_mode mode)
{
	return (unsigned)mode < SAMPLE_NMODES && (ps->rebuilt & PROFILES_MODE(mode));
}

void profiles_set_time(struct profiles *ps, uint64_t now_ns)
{
	EACH(ps, m)
		profile_set_time(ps->of[m], now_ns);
}

void profiles_set_origin(struct profiles *ps, uint64_t start_ns)
{
	EACH(ps, m)
		profile_set_origin(ps->of[m], start_ns);
}

/* The id the first profile gave, checked against another's. */
static uint32_t agree(struct profiles *ps, size_t m, uint32_t id, uint32_t got, const char *what)
{
	if (m == ps->first)
		return got;
	if (got != id)
		diag_report(ps->diag, DIAG_ERROR, "internal: %s %u of the %s profile is %u in the %s "
			    "profile", what, got, sample_mode_name((enum sample_mode)m), id,
			    sample_mode_name(ps->first));
	return id;
}

uint32_t profiles_func(struct profiles *ps, const char *module, const char *name, uint64_t addr,
		       bool inlined)
{
	uint32_t id = 0;

	EACH(ps, m)
		id = agree(ps, m, id, inlined ? profile_inlined_func(ps->of[m], module, name)
					      : profile_func(ps->of[m], module, name, addr),
			   "function");
	return id;
}

uint32_t profiles_jit_func(struct profiles *ps, const char *module, uint64_t addr, pid_t pid)
{
	uint32_t id = 0;

	EACH(ps, m)
		id = agree(ps, m, id, profile_jit_func(ps->of[m], module, addr, pid), "JIT address");
	return id;
}

void profiles_func_code(struct profiles *ps, uint32_t func, const char *path, uint64_t start,
			uint64_t end)
{
	EACH(ps, m)
		profile_func_code(ps->of[m], func, path, start, end);
}

void profiles_func_no_lines(struct profiles *ps, uint32_t func, const char *why)
{
	EACH(ps, m)
		profile_func_no_lines(ps->of[m], func, why);
}

uint32_t profiles_site(struct profiles *ps, uint32_t func, uint64_t addr, const char *file,
		       unsigned line)
{
	struct profile *cpu = ps->of[SAMPLE_MODE_CPU];

	return cpu ? profile_site(cpu, func, addr, file, line) : PROFILE_NO_SITE;
}

void profiles_comm(struct profiles *ps, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	EACH(ps, m) {
		profile_set_comm(ps->of[m], pid, tid, comm);
		if (exec)
			profile_forget_owner(ps->of[m], pid, tid);
	}
}

/* -a: a process is named at its first sample (unless a COMM record, at an exec, named it):
 * as /proc says then, which is its parent's name for a fork that did not exec; "" when it is
 * gone already. */
static void name_at_first_sample(struct profiles *ps, pid_t pid)
{
	char path[64], comm[32];

	if (profile_comm(ps->of[ps->first], pid))
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	util_read_small(path, comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	EACH(ps, m)
		profile_set_comm(ps->of[m], pid, pid, comm);
}

/* Who runs a thread is looked at its first sample, and again at the first after an exec (a COMM
 * record forgets it), as /proc says then (gone: never known), so that the frontends read its
 * source files only as its owner could (asuser.h). The thread's, or its process's main thread's
 * under -a (a process is one entry there). */
void profiles_seen(struct profiles *ps, pid_t pid, pid_t tid, bool system_wide)
{
	struct asuser owner;
	bool known;

	if (system_wide) {
		name_at_first_sample(ps, pid);
		tid = pid;
	}
	if (profile_owner_seen(ps->of[ps->first], tid))
		return;
	known = !asuser_of_thread(pid, tid, &owner);
	EACH(ps, m)
		profile_set_owner(ps->of[m], pid, tid, known ? &owner : NULL);
}

void profiles_name_funcs(struct profiles *ps, const char *module, const char *path,
			 const char *(*namer)(void *arg, uint64_t addr, uint64_t *end), void *arg)
{
	EACH(ps, m)
		profile_name_funcs(ps->of[m], module, path, namer, arg);
}

void profiles_name_jit(struct profiles *ps, pid_t pid,
		       const char *(*namer)(void *arg, uint64_t addr, const char **module), void *arg)
{
	EACH(ps, m)
		profile_name_jit(ps->of[m], pid, namer, arg);
}

void profiles_jit_forget(struct profiles *ps, pid_t pid)
{
	EACH(ps, m)
		profile_jit_forget(ps->of[m], pid);
}

bool profiles_jit_waiting(struct profiles *ps, pid_t pid)
{
	return profile_jit_waiting(ps->of[ps->first], pid);
}

void profiles_set_history(struct profiles *ps, unsigned seconds, uint64_t origin_ns)
{
	EACH(ps, m)
		if (!profiles_rebuilt(ps, (enum sample_mode)m))
			profile_set_history(ps->of[m], seconds, origin_ns);
}

bool profiles_have_history(const struct profiles *ps)
{
	return profile_has_history(ps->of[ps->first]);
}

void profiles_set_max_memory(struct profiles *ps, size_t bytes)
{
	size_t n = 0;

	EACH(ps, m)
		n += !profiles_rebuilt(ps, (enum sample_mode)m);
	EACH(ps, m)
		if (!profiles_rebuilt(ps, (enum sample_mode)m))
			profile_set_max_memory(ps->of[m], bytes / (n ? n : 1));
}

void profiles_memory(const struct profiles *ps, size_t *trees, size_t *history)
{
	*trees = 0;
	*history = 0;
	EACH(ps, m) {
		*trees += profile_memory(ps->of[m]);
		*history += profile_history_memory(ps->of[m]);
	}
}
