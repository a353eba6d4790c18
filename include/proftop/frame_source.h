/* frame_source.h — a source of frames that are not machine code, for the resolver (resolver.h):
 * an interpreter runs its program's functions inside one native function (CPython's evaluation
 * loop), each activation of it on the native stack running a run of the interpreter's frames,
 * which the process's memory describes. A frame source says which native functions those are
 * and gives, for a sample's thread, the frames of each activation; the resolver puts them in
 * the stack just inside (as callees of) the native frame that runs them.
 *
 * A new kind: a module with its `const struct frame_source_ops`, and a line in resolver.c's
 * resolver_frame_kinds. Its state is a worker's: nothing here is called from two threads. */
#ifndef PROFTOP_FRAME_SOURCE_H
#define PROFTOP_FRAME_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct symbol;

/* One frame of a frame source. Its strings need only last the call. */
struct frame_source_frame {
	const char *module;        /* the MODULE column: where the function is ("app.py") */
	const char *name;          /* the function's name as its language's users read it */
	uint64_t addr;             /* tells two functions of one name and module apart */
	const char *file;          /* the site's source file; NULL: no site */
	unsigned line;
};

/* The native frame that runs a source's frames: its module's file and load bias (run-time minus
 * link-time address), from which the source finds its interpreter in the process, and what it
 * called. */
struct frame_source_native {
	const char *path;
	uint64_t bias;
	uint64_t callee;           /* the address of the native frame it called (0: none: the
				    * sample is in it): Perl's XS subs are told by it */
};

struct frame_source_ops {
	const char *name;          /* the kind's ("python", "perl"): its option's name */
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
	/* The frames run by the nth (0: innermost) of the count such native frames of a stack of
	 * thread tid of pid, innermost first, into out[0..max). Returns how many; 0: none known
	 * (the native frame stands alone). Called for each such frame of a stack, innermost
	 * first, so that nth 0 is the moment to read the thread's frames. */
	size_t (*frames)(void *arg, pid_t pid, pid_t tid, unsigned nth, unsigned count,
			 const struct frame_source_native *native, struct frame_source_frame *out,
			 size_t max);
	/* The stack is resolved: used native frames ran this source's frames (NULL: not told). */
	void (*stack_end)(void *arg, pid_t pid, pid_t tid, unsigned used);
	/* pid exited or exec'd: what was known of it is stale (NULL: nothing kept). */
	void (*forget)(void *arg, pid_t pid);
};
#endif
