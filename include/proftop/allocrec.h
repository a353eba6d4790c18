/* allocrec.h — what the allocation-sampling library preloaded into the target sends proftop
 * (--mode alloc), one record per slot of the shared ring (shmring.h), and the sampling both
 * sides agree on.
 *
 * Sampling is by bytes, not calls, as tcmalloc's and Go's heap profilers do: each allocated byte
 * has the same chance, a mean of one sample every `mean` bytes. The gap to the next sampled byte
 * is drawn from the exponential distribution (allocrec_next_gap()); an allocation that covers
 * it is sampled. A sampled allocation of size bytes stands for 1 / (1 - e^(-size/mean))
 * allocations of its size (allocrec_scale()): small allocations are sampled seldom and weigh
 * much, one of mean bytes or more nearly always and weighs about itself. The estimate is
 * unbiased; its error shrinks as the square root of the samples.
 *
 * A sampled block's free is sent too (with the block's address only): proftop takes the block
 * out of what is in use. Records are validated by proftop: the target writes them. */
#ifndef PROFTOP_ALLOCREC_H
#define PROFTOP_ALLOCREC_H

#include <stdint.h>

#define ALLOCREC_MAX_FRAMES 64
#define ALLOCREC_DEFAULT_MEAN (512u * 1024)

enum allocrec_kind {
	ALLOCREC_ALLOC = 1,    /* a sampled block: its stack */
	ALLOCREC_FREE = 2,     /* a sampled block freed (or given up by realloc) */
	ALLOCREC_UNTRACKED = 3, /* a sampled block whose free cannot be told (the set is full) */
};

struct allocrec {
	uint32_t kind;
	uint32_t nframes;           /* frames[] used, innermost first; at most ALLOCREC_MAX_FRAMES */
	uint32_t pid, tid;
	uint64_t addr;              /* the block */
	uint64_t size;              /* bytes asked for */
	uint64_t time_ns;           /* CLOCK_MONOTONIC */
	uint64_t frames[ALLOCREC_MAX_FRAMES]; /* return addresses (the first: the allocator's caller) */
};

/* The next gap, in bytes (at least 1), for a mean of mean bytes; *rng is the caller's
 * xorshift state (any non-zero value to start). */
uint64_t allocrec_next_gap(uint64_t *rng, uint64_t mean);
/* How many allocations of size bytes one sampled at mean stands for (at least 1). */
double allocrec_scale(uint64_t size, uint64_t mean);

#endif
