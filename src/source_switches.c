/* source_switches.c — the context switches: the time each thread spends switched out, counted
 * on the stack it left the CPU with, as blocked (offcpu) or preempted (runnable), and both in
 * the wall clock's profile (whose CPU part source_cpu.c adds).
 *
 * A thread switched out waits to run again. Its switch sample gives the stack, its switch-out
 * record the time and whether it was preempted (still runnable); when it is switched back in,
 * the time between counts on that stack. A thread found waiting when proftop attached
 * (blocked.h) has its record's stack and time instead: its wait is a whole one, not one switch
 * in --switch-period, and ends at its next switch record.
 *
 * A thread's switches all go to worker tid % N, which keeps its wait; the waits of every worker
 * are counted so far at each publication, so they live under the profiles' lock. */
#include "proftop/source.h"

#include "proftop/blocked.h"
#include "proftop/idmap.h"
#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/resolver.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

/* A wait still going on is counted up to this long ago (count_waiting_so_far()): records take
 * tens of milliseconds from the kernel to the collector. */
#define WAIT_LAG_NS 200000000ull

struct waiting {
	pid_t pid, tid;
	uint64_t out_ns;           /* 0: no switch-out seen since the stack */
	uint64_t counted_us;       /* of this wait, counted already (a long one, while it lasts) */
	bool preempted;
	bool attached;             /* found waiting at the attach */
	size_t depth;              /* 0: no stack */
	uint32_t funcs[];          /* RESOLVER_MAX_FRAMES, outermost first */
};

struct switches_state {
	struct source_env *env;
	struct idmap waiting_of;   /* tid → its struct waiting in waiting */
	struct waiting **waiting;  /* one per live thread seen switching (an exited one's is reused) */
	size_t nwaiting, waiting_cap;
	uint32_t *free_waiting;    /* indices of exited threads' */
	size_t nfree_waiting, free_waiting_cap;
};

static bool switches_in_run(const struct sample_config *config)
{
	return sample_mode_switches(config->mode);
}

static void *switches_worker_new(struct source_env *env)
{
	struct switches_state *s = xcalloc(1, sizeof(*s));

	s->env = env;
	idmap_init(&s->waiting_of);
	return s;
}

static void switches_worker_free(void *state)
{
	struct switches_state *s = state;

	if (!s)
		return;
	for (size_t i = 0; i < s->nwaiting; i++)
		free(s->waiting[i]);
	free(s->waiting);
	free(s->free_waiting);
	idmap_free(&s->waiting_of);
	free(s);
}

/* The thread's struct waiting, NULL when it has none (an index left by an exited thread of the
 * same tid belongs to another thread now, or to none). */
static struct waiting *find_waiting(struct switches_state *s, uint32_t tid)
{
	uint32_t at = idmap_get(&s->waiting_of, tid);

	return at != IDMAP_MISSING && s->waiting[at]->tid == (pid_t)tid ? s->waiting[at] : NULL;
}

static struct waiting *waiting_of(struct switches_state *s, uint32_t tid)
{
	struct waiting *wt = find_waiting(s, tid);
	uint32_t at;

	if (wt)
		return wt;
	if (s->nfree_waiting) {
		at = s->free_waiting[--s->nfree_waiting];
	} else {
		xgrow((void **)&s->waiting, &s->waiting_cap, s->nwaiting + 1, sizeof(*s->waiting));
		s->waiting[s->nwaiting] = xcalloc(1, sizeof(struct waiting) +
						     RESOLVER_MAX_FRAMES * sizeof(uint32_t));
		at = (uint32_t)s->nwaiting++;
	}
	s->waiting[at]->tid = (pid_t)tid;
	idmap_put(&s->waiting_of, tid, at);
	return s->waiting[at];
}

/* A thread's wait begins on the stack funcs[0..depth) (profiles locked). */
static void wait_on(struct waiting *wt, pid_t pid, const uint32_t *funcs, size_t depth)
{
	wt->pid = pid;
	wt->depth = depth;
	memcpy(wt->funcs, funcs, depth * sizeof(*funcs));
}

/* A context switch's sample: the stack the thread leaves the CPU with. The event fires in the
 * kernel; without --kernel the stack starts at the user registers the thread entered it with. */
static void switch_sample(struct switches_state *s, const struct sample_record *r)
{
	const struct sample_config *config = s->env->config;
	struct profiles *ps = s->env->profiles;
	struct sample_record user = *r;
	uint32_t funcs[RESOLVER_MAX_FRAMES], sites[RESOLVER_MAX_FRAMES];
	struct waiting *wt;
	size_t depth;

	/* Dwarf stacks: without user registers there is no user stack to show: a kernel thread
	 * (-a), or a thread's last switch out on its way out of exit(). Only --kernel shows such
	 * waits. */
	if (!config->kernel && s->env->regs_mask && !r->sample.regs_abi)
		return;
	if (!config->kernel && r->sample.regs_abi)
		user.sample.user = true;
	depth = resolver_sample_stack(s->env->resolver, &user, funcs, sites);
	profiles_lock(ps);
	profiles_seen(ps, (pid_t)r->pid, (pid_t)r->tid, config->system_wide);
	wt = waiting_of(s, r->tid);
	wt->out_ns = 0;
	wt->attached = false;
	wait_on(wt, (pid_t)r->pid, funcs, depth);
	profiles_unlock(ps);
}

/* The time w was switched out until now_ns counts on its stack, in microseconds: as blocked, or
 * as runnable when it was preempted (runnable: not waiting on anything), and in the wall clock
 * either way. With one switch in N sampled, N times that: it stands for the N-1 switches not
 * sampled too. */
static void count_waited(struct switches_state *s, struct waiting *w, uint64_t now_ns)
{
	struct profiles *ps = s->env->profiles;
	unsigned period = s->env->config->switch_period;
	uint64_t us = now_ns > w->out_ns ? (now_ns - w->out_ns + 500) / 1000 : 0;

	if (!w->attached)
		us *= period > 1 ? period : 1;
	if (us <= w->counted_us)
		return;
	us -= w->counted_us;
	w->counted_us += us;
	profile_add_n(profiles_get(ps, w->preempted ? SAMPLE_MODE_RUNNABLE : SAMPLE_MODE_OFFCPU),
		      w->pid, w->tid, w->funcs, w->depth, us);
	profile_add_n(profiles_get(ps, SAMPLE_MODE_WALL), w->pid, w->tid, w->funcs, w->depth, us);
}

/* Out: when, and whether preempted. In: the time since counts (count_waited()). The switches
 * between samples have no stack: nothing is waiting for them. */
static void switch_record(struct switches_state *s, const struct sample_record *r)
{
	struct profiles *ps = s->env->profiles;
	struct waiting *wt;

	profiles_lock(ps);
	wt = find_waiting(s, r->tid);
	if (!wt || !wt->depth) {
		/* a switch between samples */
	} else if (wt->attached && r->switched.out) {
		/* it ran since the attach after all (blocked.h makes sure it did not): no wait */
		wt->depth = 0;
		wt->out_ns = 0;
	} else if (r->switched.out) {
		if (!wt->out_ns) { /* the switch the stack was taken at */
			wt->out_ns = r->time;
			wt->counted_us = 0;
			wt->preempted = r->switched.preempted;
		}
	} else {
		if (wt->out_ns) {
			profiles_set_time(ps, s->env->record_ns);
			count_waited(s, wt, r->time);
		}
		wt->depth = 0;
		wt->out_ns = 0;
	}
	profiles_unlock(ps);
}

/* A thread found waiting at the attach (blocked.h): its wait counts from the record's time on
 * its user stack, unwound as a switch sample's, with the kernel's frames over it under --kernel;
 * on the kernel's frames alone when the user stack could not be read. */
static void blocked_wait(struct switches_state *s, const void *data, size_t len)
{
	struct profiles *ps = s->env->profiles;
	uint32_t funcs[RESOLVER_MAX_FRAMES], sites[RESOLVER_MAX_FRAMES];
	struct blockedrec b;
	struct sample_record r;
	struct waiting *wt;
	const char *kernel;
	size_t kernel_len, depth = 0;

	if (blocked_parse(data, len, &b, &r, &kernel, &kernel_len) ||
	    !source_env_owns(s->env, b.tid))
		return;
	if (b.ip)
		depth = resolver_sample_stack(s->env->resolver, &r, funcs, sites);
	if (s->env->config->kernel || !depth)
		depth = resolver_kernel_frames(s->env->resolver, kernel, kernel_len, funcs, depth);
	if (!depth)
		return; /* nothing known of it: not counted, as a switch without a stack */
	profiles_lock(ps);
	profiles_seen(ps, (pid_t)b.pid, (pid_t)b.tid, s->env->config->system_wide);
	wt = waiting_of(s, r.tid);
	wt->out_ns = b.since_ns;
	wt->counted_us = 0;
	wt->preempted = false;
	wt->attached = true;
	wait_on(wt, (pid_t)b.pid, funcs, depth);
	profiles_unlock(ps);
}

/* A switch's sample (its header says so), a switch record, a thread blocked at the attach. */
static bool switches_record(void *state, const void *data, size_t len)
{
	struct switches_state *s = state;
	const struct perf_event_header *h = data;
	struct sample_record r;

	if (h->type == SAMPLE_RECORD_BLOCKED) {
		blocked_wait(s, data, len);
		return true;
	}
	if (!(h->type == PERF_RECORD_SAMPLE && (h->misc & SAMPLE_MISC_SWITCH_EVENT)) &&
	    h->type != PERF_RECORD_SWITCH && h->type != PERF_RECORD_SWITCH_CPU_WIDE)
		return false;
	if (sample_parse(data, len, s->env->sample_type, s->env->regs_mask, &r) < 0 ||
	    !source_env_owns(s->env, r.tid))
		return true;
	if (r.kind == SAMPLE_KIND_SAMPLE)
		switch_sample(s, &r);
	else if (r.kind == SAMPLE_KIND_SWITCH)
		switch_record(s, &r);
	return true;
}

/* A thread that ended will not come back: its struct waiting is free for another. */
static void switches_thread_exited(void *state, pid_t tid)
{
	struct switches_state *s = state;
	struct waiting *wt;

	profiles_lock(s->env->profiles);
	wt = find_waiting(s, (uint32_t)tid);
	if (wt) {
		wt->tid = 0;
		wt->depth = 0;
		xgrow((void **)&s->free_waiting, &s->free_waiting_cap, s->nfree_waiting + 1,
		      sizeof(*s->free_waiting));
		s->free_waiting[s->nfree_waiting++] = idmap_get(&s->waiting_of, (uint32_t)tid);
	}
	profiles_unlock(s->env->profiles);
}

/* Before a publication the waits still going on count so far, so that a thread blocked for
 * minutes shows now, in the seconds it waited, not all at once when it wakes. Up to WAIT_LAG_NS
 * ago only: a thread back in since then may have its record still on the way, and time counted
 * is not taken back. At the end, the threads still switched out waited until now (the switch
 * records' clock is CLOCK_MONOTONIC, as util_now_ns()'s). */
static void switches_publishing(void *const *states, unsigned nworkers, uint64_t now_ns,
				bool ended)
{
	uint64_t until = ended ? now_ns : now_ns - WAIT_LAG_NS;

	if (!ended && now_ns < WAIT_LAG_NS)
		return;
	profiles_set_time(((struct switches_state *)states[0])->env->profiles, until);
	for (unsigned k = 0; k < nworkers; k++) {
		struct switches_state *s = states[k];

		for (size_t i = 0; i < s->nwaiting; i++) {
			struct waiting *w = s->waiting[i];

			if (w->tid && w->depth && w->out_ns && (ended || w->out_ns < until))
				count_waited(s, w, until);
			if (ended) {
				w->depth = 0;
				w->out_ns = 0;
			}
		}
	}
}

/* Its kinds count microseconds: a snapshot's freq says so. */
static void switches_stamp(void *const *states, unsigned nworkers, struct snapshot *s)
{
	(void)states;
	(void)nworkers;
	s->freq = SNAPSHOT_OFFCPU_FREQ;
}

const struct source source_switches = {
	.name = "switches",
	.feeds = PROFILES_MODE(SAMPLE_MODE_OFFCPU) | PROFILES_MODE(SAMPLE_MODE_RUNNABLE) |
		 PROFILES_MODE(SAMPLE_MODE_WALL),
	.owns = PROFILES_MODE(SAMPLE_MODE_OFFCPU) | PROFILES_MODE(SAMPLE_MODE_RUNNABLE) |
		PROFILES_MODE(SAMPLE_MODE_WALL),
	.in_run = switches_in_run,
	.worker_new = switches_worker_new,
	.worker_free = switches_worker_free,
	.record = switches_record,
	.thread_exited = switches_thread_exited,
	.publishing = switches_publishing,
	.stamp = switches_stamp,
};
