/* target.h — the processes being profiled: a command launched behind a start barrier, PIDs
 * that already run, or every process on the machine.
 *
 * Launch: target_launch() forks a child that waits on a pipe until target_start() releases it, so
 * the sampler can arm its events (enable_on_exec) before the command's first instruction. The
 * child reports an exec failure through a close-on-exec pipe: EOF on it means execvp succeeded. */
#ifndef PROFTOP_TARGET_H
#define PROFTOP_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct target;

/* Fork the command; the child waits on the barrier. With output_fd >= 0 the command's standard
 * output and error go there and its input is /dev/null (the screen owns the terminal). env
 * (NULL-terminated "NAME=value" strings; NULL: none) is added to its environment.
 * Returns 0 or -errno. */
int target_launch(struct target **out, char **argv, int output_fd, char *const *env);
/* Release the barrier. Returns 0 when the command runs, or the (positive) errno of its failed
 * exec, in which case the child has already been reaped. */
int target_start(struct target *target);
/* Attach mode: check every PID exists; each process is kept once, a thread id standing for its
 * process. From then on the target is those processes, not their numbers: a pid given to a new
 * process after one ended names nothing attached to (a pidfd, or the start time, tells them
 * apart). Returns 0, or -ESRCH with *missing set. */
int target_attach(struct target **out, const pid_t *pids, size_t npids, pid_t *missing);
/* Attach mode: the events of every process attached so far are open: a process any of them
 * starts from now on is followed by them (inherited). Called after each round of opening. */
void target_stamp(struct target *target);
/* Attach mode: the live processes the attached ones started that their events do not follow:
 * started before the attached parent's events were open (target_stamp()), or by such a
 * process (and so on down). Parents come before their children. Returns how many; *pids is
 * malloc'd (NULL when none), and *roots (malloc'd, as long) holds for each the index of the
 * named process (below target_named()) it descends from. */
size_t target_unfollowed(const struct target *target, pid_t **pids, size_t **roots);
/* Attach to pid as well, one of target_unfollowed()'s under the named process root: it joins
 * target_pids(), its CPU time the target's. Returns 0, or -ESRCH when it has ended. */
int target_adopt(struct target *target, pid_t pid, size_t root);
/* Attach mode: how many processes -p named; they are the first of target_pids(). */
size_t target_named(const struct target *target);
/* The CPU time the i-th named process used itself since it was attached (not its children's),
 * in ns; 0 once it is gone. */
uint64_t target_named_own_cpu_ns(const struct target *target, size_t i);
/* -a: every process on the machine, those running now listed as target_pids() (for their
 * maps); it never ends by itself, and its CPU times are the machine's (/proc/stat) since.
 * Returns 0 or -errno. */
int target_system(struct target **out);
bool target_system_wide(const struct target *target);
/* Whether pid is a kernel thread (kthreadd, a kworker): nothing proftop can profile, as it has no
 * user space. If so, its name goes to name. False also when pid does not exist. */
bool target_kernel_thread(pid_t pid, char *name, size_t size);

/* True in launch mode. */
bool target_launched(const struct target *target);
/* The processes to profile: the command (launch mode) or the attached ones. */
const pid_t *target_pids(const struct target *target, size_t *count);
/* The command line, or "pid 1,2". */
const char *target_describe(const struct target *target);

/* Reap the command if it has exited (non-blocking). True once it has. */
bool target_poll(struct target *target);
/* Wait up to ms for the command to exit by itself; true once it has. */
bool target_wait(struct target *target, unsigned ms);
/* End the command: SIGTERM, then SIGKILL after grace_ms; waits for it. */
void target_terminate(struct target *target, unsigned grace_ms);
/* A target that was launched but never started (events could not be armed): kill and reap it. */
void target_abandon(struct target *target);
/* The exit status proftop returns for the command: its code, or 128+signal. */
int target_exit_code(const struct target *target);
/* The CPU time the target used, user and system, in ns: the command's with the children it
 * waited for (launch mode), or each attached process's since it was attached (attach mode; a
 * process gone counts as when last seen). The kernel counts in clock ticks until the command is
 * reaped. */
void target_cpu_times(struct target *target, uint64_t *user_ns, uint64_t *system_ns);
/* Whether pid has ended: no /proc entry, or a zombie (with no thread left running). */
bool target_pid_gone(pid_t pid);
/* True while at least one attached process has not ended (zombies waiting for their parent
 * have, and so has one whose pid another process took). */
bool target_any_alive(const struct target *target);

void target_free(struct target *target);

#endif
