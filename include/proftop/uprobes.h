/* uprobes.h — counting how often instructions of processes execute, with the kernel's uprobes:
 * the means of coverage mode (coverage.h).
 *
 * Each instruction probed is a uprobe event defined in tracefs (uprobe_events, as `perf probe`
 * defines them: group proftop_PID), and a probe is a perf event of it on one process, inherited
 * by the threads and children it starts (opened before the process execs the file, the
 * breakpoint is placed when the file is mapped). Counting: the kernel traps each execution and
 * counts it (a few microseconds a hit). With a cap N the event overflows every N hits and
 * signals its owner (a thread waiting for signo, F_SETSIG); uprobes_reap_fd() then reads the
 * count and closes the event, which takes the breakpoint out of that process. When the signal
 * queue is full the kernel sends SIGIO instead: the owner then reaps them all (uprobes_reap()).
 *
 * Why an anchor: the kernel unregisters a uprobe when its last perf event closes, and that waits
 * for a grace period (measured on Linux 6.18: 87 ms a probe, serialised; 64 probes closed by 1,
 * 8 or 64 threads alike took 5.5 s). A helper process proftop forks (setsid, every descriptor
 * closed) holds one more event of each on itself, where the file is never executed: closing the
 * target's events then only removes their breakpoints (5 µs each). When proftop ends, however it
 * ends, the helper reads the end of its pipe, closes its events (the slow part, in the
 * background: the programs were unprobed already) and deletes the definitions.
 *
 * Needs root (tracefs's uprobe_events is root's to write; tracefs is mounted at
 * /sys/kernel/tracing when it is not, as perf does) and read access to the file. Not
 * thread-safe. */
#ifndef PROFTOP_UPROBES_H
#define PROFTOP_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct uprobes;

/* The file offset of the link-time address vaddr of the ELF file at path (its PT_LOAD segment's
 * offset plus vaddr's distance into it): what a probe is placed at. Returns 0 or -errno (-ENOENT:
 * no segment maps vaddr). */
int uprobes_file_offset(const char *path, uint64_t vaddr, uint64_t *offset);

/* A set of probes, each stopping at cap hits (0: never). With a cap, thread tid is sent signo
 * (and sometimes SIGIO) when a probe reaches it: it blocks both and waits for them. NULL with
 * *why (malloc'd) when uprobes cannot be defined here (no tracefs, not allowed). */
struct uprobes *uprobes_new(uint64_t cap, pid_t tid, int signo, char **why);
/* Every probe closed (their breakpoints removed at once); the helper deletes the events. */
void uprobes_free(struct uprobes *u);

/* Probe the instruction at file offset offset of path in process (thread) pid and what it
 * starts. Returns the probe's index (0, 1, ...), or -errno (-EACCES/-EPERM: not allowed;
 * -EMFILE: out of file descriptors; -ESRCH: no such process; -EINVAL: a path tracefs cannot
 * name, with white space in it). */
int uprobes_add(struct uprobes *u, pid_t pid, const char *path, uint64_t offset);

/* The probe whose fd a signal named (si_fd): closed when it reached the cap (its count kept,
 * marked capped). Returns whether it was. */
bool uprobes_reap_fd(struct uprobes *u, int fd);
/* Every probe that reached the cap, closed. Returns how many. */
size_t uprobes_reap(struct uprobes *u);

/* Probe i's count so far, its threads' and children's with it (for a capped one: at least the
 * cap, as counted when it closed), and whether it was capped. */
uint64_t uprobes_count(struct uprobes *u, size_t i, bool *capped);
size_t uprobes_size(const struct uprobes *u);
/* Probes still open (their breakpoints in place). */
size_t uprobes_open(const struct uprobes *u);

#endif
