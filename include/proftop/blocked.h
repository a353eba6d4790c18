/* blocked.h — the threads found waiting when proftop attaches to running processes, and what /proc
 * tells of each wait, so that a wait that began before the attach counts from it in the switch
 * modes: its switch out happened before proftop's events existed, so it has no sample and no
 * record, only the switch back in.
 *
 * A thread is found waiting when /proc/PID/task/TID/status says it sleeps (S), waits
 * uninterruptibly (D) or is stopped (T, t) both before the events are enabled and after, with the
 * same count of context switches (voluntary and not) both times: it was off the CPU all along
 * (a thread that ran in between was switched out once more, which counts), so its next switch is
 * a switch in, and its wait counts from the enabling to there (or to the end of the run).
 *
 * What is known of each wait is read in between, never guessed:
 * - the user registers it entered the kernel with, as far as /proc/PID/task/TID/syscall shows
 *   them (the instruction and stack pointers), and the top of its user stack from that stack
 *   pointer up (/proc/PID/mem): the stack it will be switched in with, which the collector
 *   unwinds as it does a switch sample's (the other registers are unknown: a caller whose frame
 *   needs one ends the stack there);
 * - the kernel's frames, innermost first (/proc/PID/task/TID/stack, readable by root only), or
 *   else the kernel function it waits in (/proc/PID/task/TID/wchan).
 * Reading the registers and the memory needs ptrace access to the thread (Yama's ptrace_scope
 * may refuse it where perf_event_open() is allowed); what cannot be read is left out.
 *
 * The collector gets each wait as a SAMPLE_RECORD_BLOCKED record: a perf_event_header of that
 * type, struct blockedrec, stack_size bytes of stack, then kernel_size bytes of kernel frames,
 * each its name and its module ("" for the core kernel's) as two NUL-terminated strings. */
#ifndef PROFTOP_BLOCKED_H
#define PROFTOP_BLOCKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Kernel frames kept per wait, at most BLOCKED_KERNEL_MAX bytes of them; the longest name or
 * module kept (longer ones are not the kernel's, as in kallsyms.h). The stack fills the rest of a
 * record, whose size is 16 bits, up to what it was asked for (--stack-size). */
#define BLOCKED_KFRAMES_MAX 64
#define BLOCKED_KERNEL_MAX 4096
#define BLOCKED_NAME_MAX 512

struct blockedrec {
	uint32_t pid, tid;
	uint64_t since_ns;          /* CLOCK_MONOTONIC: when the events were enabled */
	uint64_t ip, sp;            /* user registers at the wait; ip 0: unknown */
	uint32_t stack_size;        /* bytes of user stack from sp that follow */
	uint32_t kernel_size;       /* bytes of kernel frames after the stack */
};

/* /proc/PID/task/TID/status's state letter and its voluntary + nonvoluntary context switches.
 * Returns 0, or -EINVAL when the text has not all three. Pure. */
int blocked_parse_status(const char *text, char *state, uint64_t *switches);
/* /proc/PID/task/TID/syscall's user stack and instruction pointers ("NR ARGS... SP PC", or
 * "-1 SP PC" outside a system call). Returns 0, -EAGAIN for "running", -EINVAL for anything
 * else. Pure. */
int blocked_parse_syscall(const char *text, uint64_t *sp, uint64_t *ip);
/* The frames of /proc/PID/task/TID/stack ("[<0>] NAME+0xOFF/0xSIZE [MODULE]" lines) into out
 * (cap bytes) in the record's form, at most BLOCKED_KFRAMES_MAX; returns the bytes written. A
 * line that does not parse ends the frames. Pure. */
size_t blocked_parse_kstack(const char *text, char *out, size_t cap);
/* The next kernel frame of a record's kernel part [*at, end): its name and module (NULL for the
 * core kernel's); false at the end or at a frame that is not two terminated strings. */
bool blocked_next_kframe(const char **at, const char *end, const char **name,
			 const char **module);
/* Whether a state letter of /proc's is a thread off the CPU and not runnable. */
bool blocked_state_waits(char state);

struct blocked;

struct blocked_thread {
	pid_t pid, tid;
};

/* Before the events are enabled: which of the n threads wait, and what /proc tells of their
 * waits (up to stack_bytes of user stack each). NULL when none does. */
struct blocked *blocked_scan(const struct blocked_thread *threads, size_t n, uint32_t stack_bytes);
/* After: keep the threads still in the wait they were found in; their waits count from
 * since_ns. Returns how many were kept. */
size_t blocked_confirm(struct blocked *b, uint64_t since_ns);
size_t blocked_count(const struct blocked *b);
/* The i-th thread kept: its tid, and its SAMPLE_RECORD_BLOCKED record (*len bytes, valid until
 * blocked_free()). */
const void *blocked_record(const struct blocked *b, size_t i, pid_t *tid, size_t *len);
void blocked_free(struct blocked *b);

struct sample_record;
/* Parse a SAMPLE_RECORD_BLOCKED record of len bytes: its fixed part into *blocked, *out as the
 * switch sample of a DWARF run it stands for (the instruction and stack pointers its only
 * registers, the others 0; no registers when the instruction pointer is unknown; the stack
 * pointing into the record), and its kernel frames' bytes in [*kernel, *kernel + *kernel_len)
 * (blocked_next_kframe() reads them). Returns 0, or -EINVAL for a record too short for its
 * parts, kernel frames not ending in a terminator, or ids that are no thread's. */
int blocked_parse(const void *record, size_t len, struct blockedrec *blocked,
		  struct sample_record *out, const char **kernel, size_t *kernel_len);

#endif
