/* resolver.h — a worker's way from a sample to its call stack of function ids: the symbolizer
 * (address spaces and modules), the unwinder, and the caches of resolved frames.
 *
 * One belongs to one collector worker (collector.c): nothing here is thread-safe but what it
 * adds to the run's profiles, under profiles_lock(). Its counters (truncated stacks, the DWARF
 * held) are atomics any thread may read.
 *
 * Frames that are not machine code (an interpreter's) join a stack at one point,
 * resolver_stack(), from the frame sources of resolver_frame_kinds (frame_source.h): a kind of
 * frame is one such module, not a branch here. */
#ifndef PROFTOP_RESOLVER_H
#define PROFTOP_RESOLVER_H

#include "proftop/frame_source.h"
#include "proftop/sample.h"
#include "proftop/unwind.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct profiles;
struct resolver;
struct symbol;
struct handoff;

/* Frames of one sample, inlined and spliced ones included. */
#define RESOLVER_MAX_FRAMES (UNWIND_MAX_FRAMES * 2)

/* What a resolver reads of each frame's source (DWARF, through module_source()). */
enum resolver_lines {
	RESOLVER_LINES_INLINE,     /* lines, and inlined functions as frames of their own */
	RESOLVER_LINES_ONLY,       /* lines only: inlined code counts in the function it is in */
	RESOLVER_LINES_OFF,        /* functions only: no sites, no DWARF read */
};

/* A resolver adding to profiles, unwinding as config says (the allocation modes always by DWARF:
 * their records carry registers and a stack), with the interpreters' frames config->python
 * asks for. */
struct resolver *resolver_new(struct profiles *profiles, const struct sample_config *config,
			      struct diag *diag);
void resolver_free(struct resolver *r);
struct symbolizer *resolver_symbolizer(struct resolver *r);
void resolver_set_lines(struct resolver *r, enum resolver_lines lines);
void resolver_set_rules(struct resolver *r, bool rules);

/* An address-space record (mmap, fork, comm at an exec, exit), read at now_ns: every worker
 * applies every one. A process that exited is forgotten a grace period later
 * (resolver_tick()), its samples may still be in the ring. */
void resolver_address_record(struct resolver *r, const struct sample_record *rec, uint64_t now_ns);
/* Once per round: processes gone, perf maps due, and the DWARF held within budget bytes
 * (0: no limit), checked once a second. */
void resolver_tick(struct resolver *r, uint64_t now_ns, size_t budget);
/* The DWARF held at the last tick, and how many modules' DWARF was closed for the budget. */
size_t resolver_sources_held(const struct resolver *r);
uint64_t resolver_sources_closed(const struct resolver *r);
/* Stacks cut (too deep, or the unwinding lost its way) so far. */
uint64_t resolver_truncated(const struct resolver *r);

/* The sample's native addresses, innermost first (unwinder_unwind()). */
size_t resolver_unwind(struct resolver *r, const struct sample_record *rec, uint64_t *ips,
		       size_t max, bool *truncated);
/* The call stack of ips[0..n) in thread tid of pid, innermost first (the first the instruction
 * itself when first_exact, else a return address like the others), as function ids and their
 * sites into funcs[], sites[] (room for RESOLVER_MAX_FRAMES each), outermost first. Returns
 * its depth. */
size_t resolver_stack(struct resolver *r, pid_t pid, pid_t tid, const uint64_t *ips, size_t n,
		      bool first_exact, bool truncated, uint32_t *funcs, uint32_t *sites);
/* Both: a sample's call stack. */
size_t resolver_sample_stack(struct resolver *r, const struct sample_record *rec, uint32_t *funcs,
			     uint32_t *sites);
/* Kernel frames by name (a blocked record's, blocked.h) appended to funcs[0..depth), outermost
 * first, named as --kernel's would be when /proc/kallsyms knows them. Returns the new depth. */
size_t resolver_kernel_frames(struct resolver *r, const char *frames, size_t len, uint32_t *funcs,
			      size_t depth);

/* Debug files from debuginfod (handoff.h; NULL: no more): the modules that lack one ask for
 * it, and resolver_take_debug_files() takes those sent since it last looked: what was stripped
 * is named from now on (and what the profiles interned unnamed is named where it stood), what
 * had no lines gets them. when_waiting: only if some are waiting (a look without a lock). */
void resolver_use_handoff(struct resolver *r, struct handoff *h);
void resolver_take_debug_files(struct resolver *r, bool when_waiting);

/* At most this many frame sources; resolver_new() adds every kind of resolver_frame_kinds. */
#define RESOLVER_MAX_FRAME_SOURCES 4
extern const struct frame_source_ops *const resolver_frame_kinds[];

/* Stacks whose spliced frames could not be read consistently, every kind's. Any thread. */
uint64_t resolver_unread_frames(const struct resolver *r);

#endif
