/* allocrec.h — what the allocation-sampling library preloaded into the target sends proftop
 * (--mode alloc), one record of the shared ring (shmring.h) each, and the sampling both sides
 * agree on.
 *
 * Sampling is by bytes, not calls, as tcmalloc's and Go's heap profilers do: each allocated byte
 * has the same chance, a mean of one sample every `mean` bytes. The gap to the next sampled byte
 * is drawn from the exponential distribution (allocrec_next_gap()); an allocation that covers
 * it is sampled. A sampled allocation of size bytes stands for 1 / (1 - e^(-size/mean))
 * allocations of its size (allocrec_scale()): small allocations are sampled seldom and weigh
 * much, one of mean bytes or more nearly always and weighs about itself. The estimate is
 * unbiased; its error shrinks as the square root of the samples.
 *
 * The library does not walk the stack in the program: as the kernel does for a CPU sample, it
 * sends the registers the unwinder needs and a copy of the top of the stack, and proftop's
 * collector unwinds them with the CFI it keeps for CPU samples. The registers are taken inside
 * the library, so the stack starts with its own frames, which the collector leaves out (the
 * record says where the library's code is). A sampled block's free is sent too (with the
 * block's address only): proftop takes the block out of what is in use. Records are validated
 * by proftop: the target writes them. */
#ifndef PROFTOP_ALLOCREC_H
#define PROFTOP_ALLOCREC_H

#include <stdint.h>

#define ALLOCREC_DEFAULT_MEAN (512u * 1024)
/* Bytes of stack a sampled allocation copies at most: as much as a CPU sample by default. */
#define ALLOCREC_STACK_MAX 16384u

enum allocrec_kind {
	ALLOCREC_ALLOC = 1,    /* a sampled block: its stack */
	ALLOCREC_FREE = 2,     /* a sampled block freed (or given up by realloc) */
	ALLOCREC_UNTRACKED = 3, /* a sampled block whose free cannot be told (the set is full) */
};

/* The registers a record carries: x86-64's instruction and stack pointers and the callee-saved
 * ones, which are all that CFI needs to step from frame to frame in compiled code. */
enum allocrec_reg {
	ALLOCREC_REG_IP,
	ALLOCREC_REG_SP,
	ALLOCREC_REG_BX,
	ALLOCREC_REG_BP,
	ALLOCREC_REG_R12,
	ALLOCREC_REG_R13,
	ALLOCREC_REG_R14,
	ALLOCREC_REG_R15,
	ALLOCREC_NREGS
};

struct allocrec {
	uint32_t kind;
	uint32_t stack_size;        /* bytes of stack[] (from regs[ALLOCREC_REG_SP] up); 0: none */
	uint32_t pid, tid;
	uint64_t addr;              /* the block */
	uint64_t size;              /* bytes asked for */
	uint64_t time_ns;           /* CLOCK_MONOTONIC */
	uint64_t code_start, code_end; /* the library's code: its frames, where the stack starts */
	uint64_t regs[ALLOCREC_NREGS]; /* as they were inside the library (allocrec_reg) */
	/* then stack_size bytes of stack (at most ALLOCREC_STACK_MAX) */
};

/* The registers a record carries, as they are where this is inlined (allocrec_reg's order): the
 * instruction pointer is this code's own, so CFI steps from the function it is in to its
 * callers. */
__attribute__((always_inline)) static inline void allocrec_take_registers(uint64_t *regs)
{
	__asm__ volatile("leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, 0(%0)\n\t"
			 "movq %%rsp, 8(%0)\n\t"
			 "movq %%rbx, 16(%0)\n\t"
			 "movq %%rbp, 24(%0)\n\t"
			 "movq %%r12, 32(%0)\n\t"
			 "movq %%r13, 40(%0)\n\t"
			 "movq %%r14, 48(%0)\n\t"
			 "movq %%r15, 56(%0)\n\t"
			 :
			 : "r"(regs)
			 : "rax", "memory");
}

/* The next gap, in bytes (at least 1), for a mean of mean bytes; *rng is the caller's
 * xorshift state (any non-zero value to start). */
uint64_t allocrec_next_gap(uint64_t *rng, uint64_t mean);
/* -ln(k / 2^53) for k in [1, 2^53], without libm. */
double allocrec_neg_log_unit(uint64_t k);
/* How many allocations of size bytes one sampled at mean stands for (at least 1). */
double allocrec_scale(uint64_t size, uint64_t mean);

#endif
