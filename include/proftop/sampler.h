/* sampler.h — the sampling engine: perf events on the target and the thread that drains them.
 *
 * The sampler thread owns the perf event file descriptors and their kernel ring buffers. It copies
 * each record it needs into the proftop ring (the only data it shares, besides atomic counters)
 * and never waits for the consumer: a sample that does not fit is counted as overflow. Records
 * that describe the address space (MMAP2, COMM, FORK, EXIT) are not dropped while sampling:
 * when the ring is full they wait in a queue owned by the sampler and go first on the next
 * pass. */
#ifndef PROFTOP_SAMPLER_H
#define PROFTOP_SAMPLER_H

#include "proftop/counters.h"
#include "proftop/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct diag;
struct ring;
struct sampler;

/* Open and map the events (not yet enabled): for the one launched command (pids[0], armed to
 * start at its exec), or for every thread of each attached process. What goes wrong later is
 * reported to diag. Returns 0 or -errno, with *what naming the step that failed (static string). */
int sampler_open(struct sampler **out, const struct sample_config *config, const pid_t *pids,
		 size_t npids, bool launched, struct ring *ring, struct diag *diag, const char **what);
/* Attach mode, before sampler_start(): open events on every thread of pid as well (a process
 * the attached ones started before their events were open, which inherited none). Returns 0,
 * -ESRCH when it ended meanwhile, or -errno (then sampler_advice()'s step is perf_event_open). */
int sampler_attach(struct sampler *sampler, pid_t pid);
/* A sentence of advice (malloc'd) for an error from sampler_open() at step what, with the config
 * it was given (attach: for existing processes). Reads the kernel's limits to say which one. */
char *sampler_advice(int err, const char *what, const struct sample_config *config, bool attach);
/* Start the thread, and enable the events in attach mode (a launched command's arm at exec); in
 * attach mode in the switch modes, the threads found waiting around the enabling go into the
 * ring first (blocked.h). wake_fd, an eventfd, is signalled after each pass that pushed records.
 * Returns 0 or -errno. */
int sampler_start(struct sampler *sampler, int wake_fd);
/* Disable the events, drain what the kernel still holds, join the thread, close the events. */
void sampler_stop(struct sampler *sampler);
void sampler_free(struct sampler *sampler);

/* Counters (truncated stays 0: unwinding happens downstream). Safe from any thread. */
void sampler_counters(const struct sampler *sampler, struct counters *out);
/* Ask for a new sampling frequency, at most the one the events were opened with (the kernel
 * cannot change inherited events: the sampler thins samples out instead). Returns the frequency
 * in effect. Safe from any thread. */
unsigned sampler_set_freq(struct sampler *sampler, unsigned freq);
/* Before sampler_start(), in an allocation run: the shared ring the allocation library writes
 * (allocrun.h), whose records the thread moves into the ring as SAMPLE_RECORD_ALLOC records
 * (and counts those it drops, and those the library dropped, as overflow). */
void sampler_set_alloc_ring(struct sampler *sampler, void *ring, uint32_t nslots,
			    uint32_t slot_size);
/* Whether sampler_set_freq() is not to be used: the context switches are sampled too, and no
 * CPU sample may be thinned out (they are weighed as time against the switches'); or the run
 * counts allocations and samples no CPU. */
bool sampler_freq_fixed(const struct sampler *sampler);
unsigned sampler_freq(const struct sampler *sampler);

#endif
