/* uprobes.h — counting how often instructions of processes execute, with the kernel's uprobes
 * (the perf "uprobe" PMU): the means of coverage mode (coverage.h).
 *
 * A probe is a perf event of the uprobe PMU on one instruction of one file (its file offset) in
 * one thread (never inherited: the kernel would read the path's pointer again in the thread that
 * clones, and fail its clone with EFAULT; a new thread needs probes of its own). It may be opened before
 * the process execs the file: the kernel places the breakpoint when the file is mapped. Counting:
 * the kernel traps each execution and counts it (a few microseconds a hit). With a cap N the
 * event overflows every N hits and signals its owner (a thread waiting for signo, F_SETSIG: an
 * inherited event cannot have a ring, the kernel refuses one to mmap): uprobes_reap_fd() then
 * reads the count and closes the event, and closing is what removes the breakpoint (disabling it
 * leaves the trap: measured, a 2M-iteration loop 9 s disabled, 0.016 s closed). When the signal
 * queue is full the kernel sends SIGIO instead: the owner then reaps them all (uprobes_reap()). Everything a probe holds is an fd and its ring: whatever way proftop exits,
 * the kernel closes them and the program runs on unprobed.
 *
 * Needs root, or CAP_PERFMON (and CAP_SYS_ADMIN on kernels before 5.8), and read access to the
 * file. Not thread-safe. */
#ifndef PROFTOP_UPROBES_H
#define PROFTOP_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct uprobes;

/* The uprobe PMU's type (from /sys/bus/event_source/devices/uprobe/type), or -errno. */
int uprobes_pmu_type(void);

/* The file offset of the link-time address vaddr of the ELF file at path (its PT_LOAD segment's
 * offset plus vaddr's distance into it): what a probe is placed at. Returns 0 or -errno (-ENOENT:
 * no segment maps vaddr). */
int uprobes_file_offset(const char *path, uint64_t vaddr, uint64_t *offset);

/* A set of probes, each stopping at cap hits (0: never). With a cap, thread tid is sent signo
 * (and sometimes SIGIO) when a probe reaches it: it blocks both and waits for them. */
struct uprobes *uprobes_new(uint64_t cap, pid_t tid, int signo);
void uprobes_free(struct uprobes *u);

/* Probe the instruction at file offset offset of path in process (thread) pid. Returns the
 * probe's index (0, 1, ...), or -errno (-EACCES/-EPERM: not allowed; -EMFILE: out of file
 * descriptors; -ESRCH: no such process). */
int uprobes_add(struct uprobes *u, pid_t pid, const char *path, uint64_t offset);

/* The probe whose fd a signal named (si_fd): closed when it reached the cap (its count kept,
 * marked capped). Returns whether it was. */
bool uprobes_reap_fd(struct uprobes *u, int fd);
/* Every probe that reached the cap, closed. Returns how many. */
size_t uprobes_reap(struct uprobes *u);

/* Probe i's count so far (for a capped one: at least the cap, as counted when it closed), and
 * whether it was capped. */
uint64_t uprobes_count(struct uprobes *u, size_t i, bool *capped);
size_t uprobes_size(const struct uprobes *u);
/* Probes still open (their breakpoints in place). */
size_t uprobes_open(const struct uprobes *u);

#endif
