/* counters.h — the sampling-health figures every frontend shows, in the spirit of tprof(8)'s
 * diagnostics. They are disjoint: a sample the kernel took is counted in exactly one of samples,
 * overflow and dropped. */
#ifndef PROFTOP_COUNTERS_H
#define PROFTOP_COUNTERS_H

#include <stdint.h>

struct counters {
	uint64_t samples;   /* delivered to the profile */
	uint64_t overflow;  /* lost because proftop's own ring was full */
	uint64_t dropped;   /* lost by the kernel (PERF_RECORD_LOST): its ring was full */
	uint64_t throttled; /* times the kernel throttled the event (PERF_RECORD_THROTTLE) */
	uint64_t truncated; /* samples whose stack could not be unwound to its start */
	uint64_t switches;  /* of the samples, the context switches' (offcpu, runnable, wall) */
	/* The allocation modes: samples are the sampled allocations and frees; overflow counts the
	 * records the library dropped too (the ring it writes was full). */
	uint64_t allocated; /* bytes allocated so far (the estimate) */
	uint64_t in_use;    /* bytes in use now (the estimate) */
	/* Of the samples, those whose interpreter frames (Python's) could not be read
	 * consistently: the thread had moved on, or its memory did not read (resolver.h). */
	uint64_t unread;
	/* Coverage: samples are the lines reached; the probes placed, and those still open (the
	 * rest reached the cap, or were of a process that ended). */
	uint64_t probes, probes_open;
	/* --otlp-endpoint: the profiles sent to the collector, the tries that were retried, and the
	 * profiles given up (otlp_push.h); pushing is 1 while a pusher counts (all are uint64_t:
	 * the screen reads them as an array, tui_screen.h). */
	uint64_t pushing, pushed, push_retried, push_dropped;
};

#endif
