/* source_alloc.c — the allocations the preloaded library samples (allocrec.h): bytes and blocks
 * allocated on the stack that allocated them, and the sampled blocks in use (a heap of them,
 * until their free), from which the in-use profiles are made again at each publication.
 *
 * Its records need the one heap, in order: one worker (source.one_worker). */
#include "proftop/source.h"

#include "proftop/allocrec.h"
#include "proftop/heap.h"
#include "proftop/idmap.h"
#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/resolver.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct alloc_state {
	struct source_env *env;
	uint64_t mean;             /* bytes between samples (allocrec_scale()) */
	struct heap heap;          /* the sampled blocks in use */
	double objects_carry;      /* the fraction of an object the rounding left over */
	uint64_t records;
	/* When each process last exec'd (pid → index into exec_ns): its older image's blocks went
	 * with it, and its records that arrive after the exec's are not in use. */
	struct idmap exec_index;
	uint64_t *exec_ns;
	size_t nexec, exec_cap;
	/* What is in use at the end of each second of the run (bytes, objects). */
	uint64_t (*inuse_seconds)[2];
	size_t ninuse_seconds, inuse_seconds_cap;
};

static bool alloc_in_run(const struct sample_config *config)
{
	return sample_mode_allocations(config->mode);
}

static void *alloc_worker_new(struct source_env *env)
{
	struct alloc_state *s = xcalloc(1, sizeof(*s));

	s->env = env;
	s->mean = env->config->alloc_rate ? env->config->alloc_rate : ALLOCREC_DEFAULT_MEAN;
	heap_init(&s->heap);
	idmap_init(&s->exec_index);
	return s;
}

static void alloc_worker_free(void *state)
{
	struct alloc_state *s = state;

	if (!s)
		return;
	heap_free(&s->heap);
	idmap_free(&s->exec_index);
	free(s->exec_ns);
	free(s->inuse_seconds);
	free(s);
}

/* What is in use now stands for every second up to now's (the timeline of the in-use kinds). */
static void note_inuse(struct alloc_state *s, uint64_t now_ns)
{
	uint64_t start = s->env->start_ns;
	uint64_t second = now_ns > start ? (now_ns - start) / 1000000000u : 0;

	if (second >= (uint64_t)1 << 32) /* a clock gone wrong: no room for it */
		return;
	while (s->ninuse_seconds <= second) {
		xgrow((void **)&s->inuse_seconds, &s->inuse_seconds_cap, s->ninuse_seconds + 1,
		      sizeof(*s->inuse_seconds));
		s->inuse_seconds[s->ninuse_seconds][0] = s->heap.bytes;
		s->inuse_seconds[s->ninuse_seconds++][1] = s->heap.objects;
	}
	s->inuse_seconds[second][0] = s->heap.bytes;
	s->inuse_seconds[second][1] = s->heap.objects;
}

/* An exec: the process's image, and with it every block it had in use, is gone. Its blocks
 * here all came before the exec's record (the sampler passes an allocation after the kernel's
 * records written before it); an older image's record may still follow it (allocations made
 * before the exec come after the records of the sampler's pass that read it), which its time
 * tells (the events' clock is the library's, CLOCK_MONOTONIC: sample.c). */
static void note_exec(struct alloc_state *s, const void *data, size_t len)
{
	const struct perf_event_header *h = data;
	struct sample_record r;
	uint32_t i;

	if (h->type != PERF_RECORD_COMM ||
	    sample_parse(data, len, s->env->sample_type, s->env->regs_mask, &r) < 0 || !r.comm.exec)
		return;
	i = idmap_get(&s->exec_index, r.pid);
	if (i == IDMAP_MISSING) {
		xgrow((void **)&s->exec_ns, &s->exec_cap, s->nexec + 1, sizeof(*s->exec_ns));
		i = (uint32_t)s->nexec++;
		idmap_put(&s->exec_index, r.pid, i);
	}
	s->exec_ns[i] = r.time;
	heap_remove_pid(&s->heap, (pid_t)r.pid);
}

/* Whether the record was made by an image of its process that an exec has ended. */
static bool of_ended_image(const struct alloc_state *s, const struct allocrec *a)
{
	uint32_t i = idmap_get(&s->exec_index, a->pid);

	return i != IDMAP_MISSING && a->time_ns < s->exec_ns[i];
}

/* The allocation's call stack, unwound from the registers and the stack its record carries (r),
 * without the allocation library's frames, where the unwinding starts; as function ids and
 * their sites, outermost first; returns its depth. */
static size_t alloc_stack(struct alloc_state *s, const struct allocrec *a,
			  const struct sample_record *r, uint32_t *funcs, uint32_t *sites)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	bool truncated;
	size_t n = resolver_unwind(s->env->resolver, r, ips, UNWIND_MAX_FRAMES, &truncated), skip = 0;

	while (skip < n && ips[skip] >= a->code_start && ips[skip] < a->code_end)
		skip++;
	/* The first frame left is the allocator's caller: a return address like the others. */
	return resolver_stack(s->env->resolver, (pid_t)a->pid, (pid_t)a->tid, ips + skip, n - skip,
			      false, truncated || skip == n, funcs, sites);
}

/* A sampled allocation: counted in the allocated profiles, and kept until its free. The record
 * comes from the target's memory: sample_parse_alloc() checked its bounds, the rest here. */
static void handle_alloc(struct alloc_state *s, const struct allocrec *a,
			 const struct sample_record *r)
{
	struct profiles *ps = s->env->profiles;
	uint32_t funcs[RESOLVER_MAX_FRAMES], sites[RESOLVER_MAX_FRAMES];
	double scale, objects;
	uint64_t bytes, whole;
	size_t depth;
	bool ended;

	if (!a->addr || a->size > ((uint64_t)1 << 48))
		return;
	/* An ended image's stack cannot be unwound in the maps that replaced it: no function. */
	ended = of_ended_image(s, a);
	depth = ended ? 0 : alloc_stack(s, a, r, funcs, sites);
	/* C++'s operator new is the allocator's caller, not the program's: its caller is. */
	while (depth > 1 &&
	       !strncmp(profile_func_name(profiles_get(ps, SAMPLE_MODE_ALLOC), funcs[depth - 1]),
			"operator new", 12))
		depth--;
	scale = allocrec_scale(a->size ? a->size : 1, s->mean);
	bytes = (uint64_t)llround((double)(a->size ? a->size : 1) * scale);
	/* Objects are fractions of a block: carried over, so their sum stays the estimate's. */
	objects = scale + s->objects_carry;
	whole = (uint64_t)objects;
	s->objects_carry = objects - (double)whole;
	profile_add_n(profiles_get(ps, SAMPLE_MODE_ALLOC), (pid_t)a->pid, (pid_t)a->tid, funcs, depth,
		      bytes);
	if (whole)
		profile_add_n(profiles_get(ps, SAMPLE_MODE_ALLOC_OBJECTS), (pid_t)a->pid,
			      (pid_t)a->tid, funcs, depth, whole);
	/* (an untracked block's free cannot be told; an ended image's block is not in use) */
	if (a->kind == ALLOCREC_ALLOC && !ended)
		heap_add(&s->heap, (pid_t)a->pid, (pid_t)a->tid, a->addr, bytes, whole, funcs,
			 (uint32_t)depth);
}

/* A SAMPLE_RECORD_ALLOC record (sample.h). */
static bool alloc_record(void *state, const void *data, size_t len)
{
	struct alloc_state *s = state;
	const struct perf_event_header *h = data;
	struct sample_record r;
	struct allocrec a;
	uint64_t now_ns = util_now_ns();

	if (h->type != SAMPLE_RECORD_ALLOC) {
		note_exec(s, data, len); /* (the resolver reads it too) */
		return false;
	}
	if (sample_parse_alloc(h, len, &a, &r))
		return true;
	/* Counted in the second it was made (the target's clock is ours, CLOCK_MONOTONIC; a time
	 * out of the run is taken as now). */
	profiles_set_time(s->env->profiles, a.time_ns >= s->env->start_ns && a.time_ns <= now_ns
						    ? a.time_ns : now_ns);
	s->records++;
	if (a.kind != ALLOCREC_FREE)
		handle_alloc(s, &a, &r);
	else if (!of_ended_image(s, &a)) /* (an ended image's blocks are gone already) */
		heap_remove(&s->heap, (pid_t)a.pid, a.addr);
	note_inuse(s, now_ns);
	return true;
}

/* The in-use profiles made again from the blocks in use now. */
static void rebuild_inuse(struct alloc_state *s)
{
	struct profile *bytes = profiles_get(s->env->profiles, SAMPLE_MODE_INUSE);
	struct profile *objects = profiles_get(s->env->profiles, SAMPLE_MODE_INUSE_OBJECTS);

	profile_reset(bytes);
	profile_reset(objects);
	for (size_t i = 0; i < s->heap.capacity; i++) {
		const struct heap_block *b = &s->heap.slots[i];

		if (!heap_used(b))
			continue;
		profile_add_n(bytes, b->pid, b->tid, b->funcs, b->depth, b->bytes);
		if (b->objects)
			profile_add_n(objects, b->pid, b->tid, b->funcs, b->depth, b->objects);
	}
}

/* An in-use snapshot's timeline: what was in use at the end of each span's seconds (the spans
 * of the allocated bytes' timeline, whose seconds they are). */
static void inuse_timeline(const struct alloc_state *st, struct snapshot *s,
			   const struct snapshot *alloc, bool objects)
{
	struct snapshot_span *spans = alloc->nspans ? xmalloc(alloc->nspans * sizeof(*spans)) : NULL;

	for (size_t i = 0; i < alloc->nspans; i++) {
		uint64_t last = alloc->spans[i].end_s ? alloc->spans[i].end_s - 1 : 0;

		spans[i] = alloc->spans[i];
		spans[i].traced = 0;
		if (last >= st->ninuse_seconds)
			last = st->ninuse_seconds ? st->ninuse_seconds - 1 : 0;
		spans[i].samples = st->ninuse_seconds ? st->inuse_seconds[last][objects] : 0;
	}
	free((void *)s->spans);
	s->spans = spans;
	s->nspans = alloc->nspans;
	s->traced_func = 0;
}

/* The four cumulative snapshots, the in-use ones made again from the blocks in use (with their
 * timeline); the one shown gets the others as companions (exports write all four). */
static struct snapshot *alloc_snapshot(void *const *states, unsigned nworkers,
				       enum sample_mode shown, uint32_t traced, uint64_t now_ns,
				       void (*stamp)(void *arg, struct snapshot *s), void *arg)
{
	struct alloc_state *st = states[0];
	struct snapshot *all[SNAPSHOT_NCOMPANIONS], *s;

	(void)nworkers;
	rebuild_inuse(st);
	note_inuse(st, now_ns);
	/* The shown one first: the pooled snapshot it reuses lets go of its companions, which
	 * their profiles can then reuse in turn (profile.c). */
	for (int k = 0; k < SNAPSHOT_NCOMPANIONS; k++) {
		int i = (shown - SAMPLE_MODE_ALLOC + k) % SNAPSHOT_NCOMPANIONS;
		struct profile *p = profiles_get(st->env->profiles, (enum sample_mode)(SAMPLE_MODE_ALLOC + i));

		profile_trace(p, traced);
		all[i] = profile_snapshot(p);
		all[i]->mode = (enum sample_mode)(SAMPLE_MODE_ALLOC + i);
		stamp(arg, all[i]);
	}
	inuse_timeline(st, all[SAMPLE_MODE_INUSE - SAMPLE_MODE_ALLOC],
		       all[SAMPLE_MODE_ALLOC - SAMPLE_MODE_ALLOC], false);
	inuse_timeline(st, all[SAMPLE_MODE_INUSE_OBJECTS - SAMPLE_MODE_ALLOC],
		       all[SAMPLE_MODE_ALLOC_OBJECTS - SAMPLE_MODE_ALLOC], true);
	s = all[shown - SAMPLE_MODE_ALLOC];
	for (int i = 0; i < SNAPSHOT_NCOMPANIONS; i++)
		if (all[i] != s)
			s->companions[i] = all[i];
	return s;
}

/* An allocation snapshot counts records, bytes allocated and in use; its freq is the mean. */
static void alloc_stamp(void *const *states, unsigned nworkers, struct snapshot *s)
{
	struct alloc_state *st = states[0];

	(void)nworkers;
	s->counters.samples = st->records;
	s->counters.allocated = profile_samples(profiles_get(st->env->profiles, SAMPLE_MODE_ALLOC));
	s->counters.in_use = st->heap.bytes;
	s->freq = (unsigned)st->mean;
}

#define ALLOC_KINDS (PROFILES_MODE(SAMPLE_MODE_ALLOC) | PROFILES_MODE(SAMPLE_MODE_INUSE) | \
		     PROFILES_MODE(SAMPLE_MODE_ALLOC_OBJECTS) | PROFILES_MODE(SAMPLE_MODE_INUSE_OBJECTS))

const struct source source_alloc = {
	.name = "alloc",
	.feeds = ALLOC_KINDS,
	.owns = ALLOC_KINDS,
	.rebuilt = PROFILES_MODE(SAMPLE_MODE_INUSE) | PROFILES_MODE(SAMPLE_MODE_INUSE_OBJECTS),
	.one_worker = true,
	.in_run = alloc_in_run,
	.worker_new = alloc_worker_new,
	.worker_free = alloc_worker_free,
	.record = alloc_record,
	.snapshot = alloc_snapshot,
	.stamp = alloc_stamp,
};
