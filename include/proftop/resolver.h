/* resolver.h — a worker's way from a sample to its call stack of function ids: the symbolizer
 * (address spaces and modules), the unwinder, and the caches of resolved frames.
 *
 * One belongs to one collector worker (collector.c): nothing here is thread-safe but what it
 * adds to the run's profiles, under profiles_lock(). Its counters (truncated stacks, the DWARF
 * held) are atomics any thread may read.
 *
 * Frames that are not machine code. An interpreter runs its program's functions inside one
 * native function (CPython's evaluation loop): each activation of it on the native stack runs a
 * run of the interpreter's frames, which the process's memory describes. A frame source
 * (resolver_add_frames()) tells the resolver which native functions those are and gives, for a
 * sample's thread, the frames of each activation; the resolver puts them in the stack just
 * inside (as callees of) the native frame that runs them. A kind of frame is one such module,
 * not a branch here. */
#ifndef PROFTOP_RESOLVER_H
#define PROFTOP_RESOLVER_H

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

/* One frame of a frame source (see the file comment). Its strings need only last the call. */
struct resolver_frame {
	const char *module;        /* the MODULE column: where the function is ("app.py") */
	const char *name;          /* the function's name as its language's users read it */
	uint64_t addr;             /* tells two functions of one name and module apart */
	const char *file;          /* the site's source file; NULL: no site */
	unsigned line;
};

/* The native frame that runs a source's frames: its module's file and load bias (run-time minus
 * link-time address), from which the source finds its interpreter in the process. */
struct resolver_native {
	const char *path;
	uint64_t bias;
};

struct resolver_frames_ops {
	const char *name;          /* the kind's ("python"): resolver_disable_frames() */
	/* A worker's state of the kind, and its end. */
	void *(*create)(struct diag *diag);
	void (*destroy)(void *arg);
	/* Stacks whose frames of the kind could not be read consistently so far. Any thread. */
	uint64_t (*unread)(void *arg);
	/* Whether the native function sym is the interpreter's own (its module's): frames that
	 * --python=only folds away. */
	bool (*is_interpreter)(void *arg, const struct symbol *sym);
	/* Whether the native function sym runs frames of this source (its evaluation function).
	 * Asked once per function and module (cached with the frame): a pure function of sym. */
	bool (*runs_frames)(void *arg, const struct symbol *sym);
	/* The frames run by the nth (0: innermost) such native frame of a stack of thread tid of
	 * pid, innermost first, into out[0..max). Returns how many; 0: none known (the native
	 * frame stands alone). Called for each such frame of a stack, innermost first, so that
	 * nth 0 is the moment to read the thread's frames. */
	size_t (*frames)(void *arg, pid_t pid, pid_t tid, unsigned nth,
			 const struct resolver_native *native, struct resolver_frame *out, size_t max);
	/* The stack is resolved: used native frames ran this source's frames (NULL: not told). */
	void (*stack_end)(void *arg, pid_t pid, pid_t tid, unsigned used);
	/* pid exited or exec'd: what was known of it is stale (NULL: nothing kept). */
	void (*forget)(void *arg, pid_t pid);
};
/* At most this many frame sources; resolver_new() adds every kind of resolver_frame_kinds. */
#define RESOLVER_MAX_FRAME_SOURCES 4
extern const struct resolver_frames_ops *const resolver_frame_kinds[];

/* Stacks whose spliced frames could not be read consistently, every kind's. Any thread. */
uint64_t resolver_unread_frames(const struct resolver *r);

#endif
