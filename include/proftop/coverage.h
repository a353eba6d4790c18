/* coverage.h — coverage mode's probes: how often each source line of the wanted modules ran in
 * each watched process (its threads together), counted by uprobes (uprobes.h) on every address
 * that starts a line (covmap.h), each stopped at the cap.
 *
 * The session watches the command before it execs (exact counts from its first instruction), or
 * each process it attaches to. A module named without a path is probed when a watched process
 * maps it; a child process when its FORK record arrives (it runs unprobed until then). A thread
 * owned here takes the capped instructions' breakpoints out every 0.01 s. Thread-safe. */
#ifndef PROFTOP_COVERAGE_H
#define PROFTOP_COVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct covmap;
struct coverage;

/* Probes that stop at cap hits (0: never). NULL with *why (malloc'd) when none can be made. */
struct coverage *coverage_new(uint64_t cap, char **why);
/* Every probe closed (the programs run on unprobed), the thread stopped. */
void coverage_free(struct coverage *c);

/* Probe every line of the module at path in process pid (path need not be mapped yet: the
 * probes are placed when it is). ino, when not 0: the inode a mapping record named, which the
 * file at path must still be (a file replaced since is not probed: its offsets are another's).
 * Returns 0, or -errno with a message (malloc'd) in *message: the module has no lines, or the
 * kernel refused the probes (-EPERM: not allowed). 0 may come with a message too: a warning
 * (addresses whose instructions the kernel does not probe). */
int coverage_watch(struct coverage *c, pid_t pid, const char *path, ino_t ino, char **message);
/* Whether the file at path is the module --module named: name is its path, its file name, or
 * its file name's start up to a '.' or '-' (libz: libz.so.1.2.13). */
bool coverage_module_named(const char *name, const char *path);
/* Child process pid of watched process ppid: its parent's modules probed in it (0, or -errno
 * with *message as coverage_watch()'s). */
int coverage_child(struct coverage *c, pid_t ppid, pid_t pid, char **message);
/* Process pid ended: its counts are final (read on), its probes' links closed, and a process
 * that takes its pid later is another. */
void coverage_ended(struct coverage *c, pid_t pid);
/* Whether process pid is watched. */
bool coverage_watched(struct coverage *c, pid_t pid);

/* One watched process's lines of one module: counts (capped ones at least the cap), by
 * covmap's line index. slot numbers the (process, module) pairs from 0, stably. */
struct coverage_lines {
	size_t slot;
	pid_t pid;
	const struct covmap *map;
	const uint64_t *counts;
	const bool *capped;
	const bool *unprobed;      /* the kernel probes none of its addresses: not counted */
};
/* Each watched (process, module), with its lines' counts as of now. */
void coverage_read(struct coverage *c, void (*fn)(void *arg, const struct coverage_lines *lines),
		   void *arg);
/* Probes placed, and still open (the rest reached their cap or were of a process that ended). */
void coverage_probes(struct coverage *c, size_t *placed, size_t *open);

#endif
