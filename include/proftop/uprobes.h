/* uprobes.h — counting how often instructions of a process execute, with the kernel's uprobes
 * and a BPF program: the means of coverage mode (coverage.h).
 *
 * A set is one process and one file: multi-uprobe BPF links (Linux 6.6+) on the instructions at
 * the given file offsets, filtered to that process (all its threads, from the moment they
 * start; not its children), whose program adds one to the instruction's counter in an array
 * map that proftop reads through a mapping (no system call per count). It may be made before
 * the process execs the file: the kernel places the breakpoints when the file is mapped.
 *
 * Why not a perf event per instruction (the uprobe PMU, or tracefs's uprobe events): the kernel
 * unregisters a uprobe, when its last event closes, with a wait for a grace period: measured on
 * Linux 6.18, 87 ms each, serialised (64 probes closed by 1, 8 or 64 threads alike took 5.5 s;
 * 16,000 probes, a CPU busy for 20 minutes). A link unregisters all its uprobes with one wait:
 * 15,971 probes attached in 0.03 s and detached in 0.08 s.
 *
 * The cap: the program stops counting an instruction at cap (0: never); uprobes_recap() then
 * makes its chunk's link (CHUNK instructions each) again without the capped instructions (their
 * breakpoints removed when the old link is closed), the new link made first, so that no
 * execution goes uncounted.
 *
 * Needs root, or CAP_BPF and CAP_PERFMON. Everything a set holds is file descriptors: however
 * proftop ends, the kernel closes them and removes the breakpoints. Not thread-safe. */
#ifndef PROFTOP_UPROBES_H
#define PROFTOP_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct uprobes;

/* Count the instructions at offsets[0..n) of the file at path in process pid (and its threads),
 * each stopping at cap (0: never). NULL with *why (malloc'd) and *err (-errno) when the kernel
 * refuses: -EPERM not allowed, -EINVAL no multi-uprobe links (before Linux 6.6), -ESRCH no such
 * process, -ENOTSUP an instruction it does not probe (uprobes_probeable() tells most of them). */
struct uprobes *uprobes_attach(pid_t pid, const char *path, const uint64_t *offsets, size_t n,
			       uint64_t cap, int *err, char **why);
/* The breakpoints removed, the counts gone (its links closed with uprobes_close_links()). */
void uprobes_detach(struct uprobes *u);
/* Its process ended: every descriptor closed, the counts kept (readable until the detach). */
void uprobes_retire(struct uprobes *u);

/* Instruction i's count so far (at most about cap: a count the program stopped). */
uint64_t uprobes_count(const struct uprobes *u, size_t i);
/* The instructions that reached the cap since the last call are left out of new links (their
 * chunk's: a few hundred instructions each). The links replaced go to old_links[0..max) (how
 * many: returned): each close() takes their breakpoints out and waits for a grace period (87 ms
 * here, shared by closes made at once from several threads): the caller closes them where that
 * wait holds up nothing. */
size_t uprobes_recap(struct uprobes *u, int *old_links, size_t max);
/* Close links (uprobes_recap()'s old ones) at once, from threads of their own, 64 at a time: a
 * link's close waits for a grace period, which closes made at once share (32 links: 0.09 s at
 * once, 32 waits one by one). */
void uprobes_close_links(const int *links, size_t n);
/* Instructions still probed. */
size_t uprobes_placed(const struct uprobes *u);

/* Whether the x86-64 instruction whose first bytes are code[0..len) can be probed: Linux's
 * uprobes refuse an instruction with a LOCK or ES/CS/SS/DS segment prefix, and a few opcodes
 * (int3, int n, hlt, in/out). */
bool uprobes_probeable(const unsigned char *code, size_t len);

#endif
