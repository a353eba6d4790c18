/* source_cpu.c — the CPU samples (cpu-clock, freq times a second of each thread's CPU time):
 * each sample's stack counts once in the CPU profile (with its sites), and in the wall clock's
 * for the time a sample stands for when the run keeps one.
 *
 * Workers share the samples by their sequence number: the k-th goes to worker k % N, so one busy
 * thread is spread over every worker. With several, a worker's samples wait in its batch and go
 * into the profiles together, under one hold of the lock (one per sample had two workers slower
 * than one: the lock and the profile's lines going back and forth between their CPUs). */
#include "proftop/source.h"

#include "proftop/profile.h"
#include "proftop/profiles.h"
#include "proftop/resolver.h"
#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

#define BATCH_SAMPLES 64

/* A sample unwound, waiting for the profiles; its functions and then its sites are in
 * batch_frames. */
struct batched {
	pid_t pid, tid;
	size_t depth;
	uint64_t when_ns;
};

struct cpu_state {
	struct source_env *env;
	uint64_t samples_seen;     /* read, its own and the others' */
	uint64_t sample_us;        /* what a sample stands for in the wall profile */
	struct batched *batched;   /* several workers: BATCH_SAMPLES */
	size_t nbatched;
	uint32_t *batch_frames;    /* BATCH_SAMPLES * 2 * RESOLVER_MAX_FRAMES */
	size_t nbatch_frames;
};

static bool cpu_in_run(const struct sample_config *config)
{
	return !sample_mode_unsampled(config->mode);
}

static void *cpu_worker_new(struct source_env *env)
{
	struct cpu_state *s = xcalloc(1, sizeof(*s));

	s->env = env;
	s->sample_us = (sample_period_ns(env->config->freq) + 500) / 1000;
	if (env->nworkers > 1) {
		s->batched = xcalloc(BATCH_SAMPLES, sizeof(*s->batched));
		s->batch_frames = xcalloc(BATCH_SAMPLES * 2 * RESOLVER_MAX_FRAMES,
					  sizeof(*s->batch_frames));
	}
	return s;
}

static void cpu_worker_free(void *state)
{
	struct cpu_state *s = state;

	if (!s)
		return;
	free(s->batched);
	free(s->batch_frames);
	free(s);
}

/* A sample's stack into the profiles (under the profiles' lock when shared). */
static void add_sample(struct cpu_state *s, pid_t pid, pid_t tid, const uint32_t *funcs,
		       const uint32_t *sites, size_t depth, uint64_t when_ns)
{
	struct profiles *ps = s->env->profiles;
	struct profile *wall = profiles_get(ps, SAMPLE_MODE_WALL);

	profiles_set_time(ps, when_ns);
	profiles_seen(ps, pid, tid, s->env->config->system_wide);
	profile_add_sites(profiles_get(ps, SAMPLE_MODE_CPU), pid, tid, funcs,
			  s->env->sites ? sites : NULL, depth);
	if (wall)
		profile_add_n(wall, pid, tid, funcs, depth, s->sample_us);
}

static void cpu_flush(void *state)
{
	struct cpu_state *s = state;
	size_t at = 0;

	if (!s->nbatched)
		return;
	profiles_lock(s->env->profiles);
	for (size_t i = 0; i < s->nbatched; i++) {
		const struct batched *b = &s->batched[i];

		add_sample(s, b->pid, b->tid, s->batch_frames + at, s->batch_frames + at + b->depth,
			   b->depth, b->when_ns);
		at += 2 * b->depth;
	}
	profiles_unlock(s->env->profiles);
	s->nbatched = 0;
	s->nbatch_frames = 0;
}

static void handle_sample(struct cpu_state *s, const struct sample_record *r)
{
	uint32_t funcs[RESOLVER_MAX_FRAMES], sites[RESOLVER_MAX_FRAMES];
	struct sample_record user = *r;
	size_t depth;

	if (!s->env->config->kernel && !r->sample.user && r->sample.regs_abi)
		user.sample.user = true;
	depth = resolver_sample_stack(s->env->resolver, &user, funcs, sites);
	if (s->env->nworkers == 1) {
		add_sample(s, (pid_t)r->pid, (pid_t)r->tid, funcs, sites, depth, s->env->record_ns);
		return;
	}
	if (s->nbatched == BATCH_SAMPLES ||
	    s->nbatch_frames + 2 * depth > BATCH_SAMPLES * 2 * RESOLVER_MAX_FRAMES)
		cpu_flush(s);
	s->batched[s->nbatched++] = (struct batched){ (pid_t)r->pid, (pid_t)r->tid, depth,
						       s->env->record_ns };
	memcpy(s->batch_frames + s->nbatch_frames, funcs, depth * sizeof(*funcs));
	memcpy(s->batch_frames + s->nbatch_frames + depth, sites, depth * sizeof(*sites));
	s->nbatch_frames += 2 * depth;
}

/* Every sample the switches' source did not take (it comes first in source_table). Told by its
 * header: another worker's is not even parsed. */
static bool cpu_record(void *state, const void *data, size_t len)
{
	struct cpu_state *s = state;
	const struct perf_event_header *h = data;
	struct sample_record r;

	if (h->type != PERF_RECORD_SAMPLE)
		return false;
	if (s->samples_seen++ % s->env->nworkers == s->env->index &&
	    sample_parse(data, len, s->env->sample_type, s->env->regs_mask, &r) == 0)
		handle_sample(s, &r);
	return true;
}

const struct source source_cpu = {
	.name = "cpu",
	.feeds = PROFILES_MODE(SAMPLE_MODE_CPU) | PROFILES_MODE(SAMPLE_MODE_WALL),
	.owns = PROFILES_MODE(SAMPLE_MODE_CPU),
	.in_run = cpu_in_run,
	.worker_new = cpu_worker_new,
	.worker_free = cpu_worker_free,
	.record = cpu_record,
	.flush = cpu_flush,
};
