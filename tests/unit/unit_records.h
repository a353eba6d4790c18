/* unit_records.h — PERF_RECORD_* records as the kernel writes them for a CALLGRAPH_NONE
 * sample_config (sample_type_for()), pushed into a ring as the sampler would: for tests that
 * drive a collector without perf events. */
#ifndef PROFTOP_UNIT_RECORDS_H
#define PROFTOP_UNIT_RECORDS_H

#include "proftop/ring.h"

#include <linux/perf_event.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline void push(struct ring *ring, const void *record, size_t len)
{
	void *dst;

	while (!(dst = ring_reserve(ring, len)))
		sched_yield(); /* the producer here may wait; the real sampler counts overflow */
	memcpy(dst, record, len);
	ring_commit(ring);
}

/* A sample as the kernel writes it for sample_type_for(&config): identifier, ip, pid/tid, time. */
static inline void push_sample_marked(struct ring *ring, uint16_t mark, uint64_t ip, uint32_t tid,
			       uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint64_t id, ip;
		uint32_t pid, tid;
		uint64_t time;
	} r = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER | mark, sizeof(r) }, 1, ip,
		(uint32_t)getpid(), tid, time };

	push(ring, &r, sizeof(r));
}

static inline void push_sample(struct ring *ring, uint64_t ip, uint32_t tid, uint64_t time)
{
	push_sample_marked(ring, 0, ip, tid, time);
}

/* A PERF_RECORD_SWITCH of tid: out (preempted or not) or back in, at time. */
static inline void push_switch(struct ring *ring, uint32_t tid, bool out, bool preempted, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t time, id;
	} r = { { PERF_RECORD_SWITCH,
		  (uint16_t)((out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
			     (preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0)),
		  sizeof(r) },
		(uint32_t)getpid(), tid, time, 1 };

	push(ring, &r, sizeof(r));
}

/* A COMM record naming a thread: pid/tid, the name padded to 8 bytes, the sample_id trailer. */
static inline void push_comm(struct ring *ring, uint32_t tid, const char *name, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
		uint32_t tpid, ttid;
		uint64_t time, id;
	} r = { { PERF_RECORD_COMM, 0, sizeof(r) }, (uint32_t)getpid(), tid, { 0 },
		(uint32_t)getpid(), tid, time, 1 };

	snprintf(r.comm, sizeof(r.comm), "%s", name);
	push(ring, &r, sizeof(r));
}

/* An EXIT record of thread tid of this process, with the sample_id trailer. */
static inline void push_exit(struct ring *ring, uint32_t tid, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		uint32_t tpid, ttid;
		uint64_t stime, id;
	} r = { { PERF_RECORD_EXIT, 0, sizeof(r) }, (uint32_t)getpid(), (uint32_t)getppid(), tid,
		(uint32_t)getpid(), time, (uint32_t)getpid(), tid, time, 1 };

	push(ring, &r, sizeof(r));
}

#endif
