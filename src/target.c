/* target.c — launch a command behind a start barrier, or check PIDs to attach to; reap and report
 * the exit status. An attached process is followed by its pidfd (or its start time), never by
 * its number alone: the kernel gives a reaped process's pid to the next one in time.
 *
 * The processes an attached one started. Its events follow (inherit) every process it starts
 * once they are open, but not those it started before: a server's workers (PostgreSQL's
 * backends). Which those are is told by start times: a child that started no later than its
 * parent's events were opened (target_stamp(), in clock ticks after boot as /proc counts them,
 * rounded up: a child of the same tick counts as earlier) has none of its own, nor has anything
 * it started. Such processes are listed (target_unfollowed()) to attach to as well
 * (--children), or to say that they are not followed. */
#include "proftop/target.h"

#include "proftop/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct target {
	bool launched;          /* launch mode (else attach mode) */
	bool system;            /* -a: every process; pids are those running when it began */
	pid_t child;            /* launch mode: the command's pid */
	pid_t *pids;            /* the command, or the processes named with -p */
	size_t npids;
	char *description;      /* the command line or "pid 1,2" */
	int barrier_fd;         /* write end: closing it lets the child exec */
	int exec_status_fd;     /* read end: errno of a failed exec, or EOF */
	bool exited;            /* launch mode: the command has been reaped */
	int wait_status;        /* its waitpid() status */
	struct rusage rusage;   /* launch mode: its resource use, once reaped */
	uint64_t *cpu_first;    /* attach mode: user, system ns of each pid when attached ... */
	uint64_t *cpu_last;     /* ... and when last seen */
	int *pidfds;            /* attach mode: each process's pidfd (-1: none could be had) ... */
	unsigned long long *starts; /* ... and start time: they tell it from a later process that
				     * was given its pid */
	unsigned long long *stamps; /* ... when its events were open by (clock ticks after boot;
				     * 0: not yet) ... */
	uint64_t *own_first;    /* ... its own CPU time then (utime + stime, ns) ... */
	size_t *roots;          /* ... and which named process (an index below nnamed) it is or
				 * descends from */
	size_t nnamed;          /* the processes named with -p come first */
	size_t cap;             /* room in the per-process arrays */
};

/* Give the command /dev/null as input and output_fd as its output, for a screen that owns the
 * terminal. Best effort: on failure the command keeps proftop's. */
static void child_redirect(int output_fd)
{
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (null_fd >= 0) {
		dup2(null_fd, STDIN_FILENO);
		close(null_fd);
	}
	dup2(output_fd, STDOUT_FILENO);
	dup2(output_fd, STDERR_FILENO);
}

static void child_run(char **argv, char *const *env, int barrier_fd, int status_fd, int output_fd,
		      pid_t parent)
{
	sigset_t none;
	char byte;
	int err;

	ssize_t n;

	/* Die with proftop: a command it can no longer end must not run on unprofiled. The check
	 * after it covers a proftop that died before the prctl. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	/* Block until the parent armed the events. End of file means proftop gave up or died:
	 * then the command must not run at all. */
	do
		n = read(barrier_fd, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);
	close(barrier_fd);
	if (output_fd >= 0)
		child_redirect(output_fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	for (; env && *env; env++)
		putenv(*env);
	execvp(argv[0], argv);
	err = errno;
	if (write(status_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

/* argv joined by spaces. */
static char *join_args(char **argv)
{
	size_t len = 1;
	char *text, *p;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	p = text = xmalloc(len);
	for (char **a = argv; *a; a++)
		p += sprintf(p, "%s%s", a == argv ? "" : " ", *a);
	*p = '\0';
	return text;
}

static struct target *target_new(void)
{
	struct target *t = xcalloc(1, sizeof(*t));

	t->barrier_fd = t->exec_status_fd = -1;
	return t;
}

static void close_pair(int fds[2])
{
	close(fds[0]);
	close(fds[1]);
}

/* The launched command's target: pid, waiting behind barrier_fd, reporting on exec_status_fd. */
static struct target *launched(pid_t pid, char **argv, int barrier_fd, int exec_status_fd)
{
	struct target *target = target_new();

	target->launched = true;
	target->child = pid;
	target->pids = xmalloc(sizeof(*target->pids));
	target->pids[0] = pid;
	target->npids = 1;
	target->description = join_args(argv);
	target->barrier_fd = barrier_fd;
	target->exec_status_fd = exec_status_fd;
	return target;
}

int target_launch(struct target **out, char **argv, int output_fd, char *const *env)
{
	int barrier[2], status[2], err;
	pid_t pid, parent = getpid();

	*out = NULL;
	if (pipe2(barrier, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(status, O_CLOEXEC) < 0) {
		err = -errno;
		close_pair(barrier);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close_pair(barrier);
		close_pair(status);
		return err;
	}
	if (pid == 0) {
		close(barrier[1]);
		close(status[0]);
		child_run(argv, env, barrier[0], status[1], output_fd, parent);
	}
	close(barrier[0]);
	close(status[1]);
	*out = launched(pid, argv, barrier[1], status[0]);
	return 0;
}

bool target_launched(const struct target *target)
{
	return target->launched;
}

const pid_t *target_pids(const struct target *target, size_t *count)
{
	*count = target->npids;
	return target->pids;
}

const char *target_describe(const struct target *target)
{
	return target->description;
}

int target_start(struct target *target)
{
	ssize_t n;
	int err = 0;

	/* The child execs on this byte. Should it have died already, the write fails and the read
	 * below sees end of file: the session then finds it exited. */
	if (write(target->barrier_fd, "g", 1) < 0) {
		/* see above */
	}
	close(target->barrier_fd);
	target->barrier_fd = -1;
	do
		n = read(target->exec_status_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(target->exec_status_fd);
	target->exec_status_fd = -1;
	if (n == (ssize_t)sizeof(err) && err) {
		while (wait4(target->child, &target->wait_status, 0, &target->rusage) < 0 &&
		       errno == EINTR)
			;
		target->exited = true;
		return err;
	}
	return 0;
}

void target_abandon(struct target *target)
{
	if (!target->launched || target->exited)
		return;
	kill(target->child, SIGKILL);
	if (target->barrier_fd >= 0)
		close(target->barrier_fd);
	if (target->exec_status_fd >= 0)
		close(target->exec_status_fd);
	target->barrier_fd = target->exec_status_fd = -1;
	while (waitpid(target->child, &target->wait_status, 0) < 0 && errno == EINTR)
		;
	target->exited = true;
}

/* /proc/PID/stat into buf: "pid (comm) state ppid ...". The command name may hold spaces and
 * parentheses, so the fields after it are found from its last ')': returns where they start (at
 * the blank before the state), or NULL when the file cannot be read. */
static char *proc_stat(pid_t pid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!util_read_small(path, buf, size))
		return NULL;
	return strrchr(buf, ')');
}

/* What /proc/PID/stat says of a process. */
struct proc_fields {
	char state;                 /* R, S, ..., Z (zombie), X (dead) */
	pid_t ppid;
	long threads;
	unsigned long long start;   /* clock ticks after boot */
	uint64_t cpu_ns[2];         /* utime + cutime and stime + cstime, ns */
	uint64_t own_ns;            /* utime + stime: without the children it reaped */
};

static int proc_fields_read(pid_t pid, struct proc_fields *f)
{
	char buf[1024];
	unsigned long long utime, stime, cutime, cstime;
	long tick = sysconf(_SC_CLK_TCK);
	const char *p = proc_stat(pid, buf, sizeof(buf));
	int ppid;

	/* After ") ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt, then
	 * utime stime cutime cstime, priority nice num_threads itrealvalue starttime. */
	if (!p || tick <= 0 || sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
				      "%llu %llu %*d %*d %ld %*d %llu", &f->state, &ppid, &utime, &stime,
				      &cutime, &cstime, &f->threads, &f->start) != 8)
		return -EINVAL;
	f->ppid = (pid_t)ppid;
	f->cpu_ns[0] = (utime + cutime) * (1000000000ull / (unsigned long long)tick);
	f->cpu_ns[1] = (stime + cstime) * (1000000000ull / (unsigned long long)tick);
	f->own_ns = (utime + stime) * (1000000000ull / (unsigned long long)tick);
	return 0;
}

/* Whether the process is over: a zombie (or dead) with no other thread. (A main thread that
 * called pthread_exit() leaves a zombie leader while the other threads run on.) */
static bool proc_fields_ended(const struct proc_fields *f)
{
	return (f->state == 'Z' || f->state == 'X') && f->threads <= 1;
}

static uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

/* The machine's CPU time outside idle, user (with nice) and system (with irq, softirq), ns. */
static int system_cpu_times(uint64_t ns[2])
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq;
	long tick = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle,
		   &iowait, &irq, &softirq);
	fclose(f);
	if (n != 7 || tick <= 0)
		return -EINVAL;
	ns[0] = (user + nice) * (1000000000ull / (unsigned long long)tick);
	ns[1] = (system + irq + softirq) * (1000000000ull / (unsigned long long)tick);
	return 0;
}

/* Whether the process behind pidfd is still there, if only as a zombie: not reaped yet. */
static bool pidfd_unreaped(int pidfd)
{
	return pidfd_send_signal(pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

/* /proc/PID/stat of the i-th attached process into f; false when it cannot be read or when the
 * pid has passed to another process. A pid names a process until that process is reaped: one not
 * reaped after the read was the one read. Without a pidfd (pidfd_open came with Linux 5.3; a
 * seccomp filter may refuse it) the start time tells, unless the two processes started in the
 * same clock tick, which takes one that ended and was reaped within a tick of its start. */
static bool attached_read(const struct target *target, size_t i, struct proc_fields *f)
{
	if (proc_fields_read(target->pids[i], f))
		return false;
	if (target->pidfds[i] >= 0)
		return pidfd_unreaped(target->pidfds[i]);
	return f->start == target->starts[i];
}

/* Attach mode: each process's CPU time since it was attached, as last seen. */
static void attached_cpu_times(struct target *target, uint64_t *user_ns, uint64_t *system_ns)
{
	struct proc_fields f;

	for (size_t i = 0; i < target->npids; i++) {
		uint64_t *first = &target->cpu_first[2 * i], *last = &target->cpu_last[2 * i];

		if (attached_read(target, i, &f) && f.cpu_ns[0] >= first[0] && f.cpu_ns[1] >= first[1])
			memcpy(last, f.cpu_ns, sizeof(f.cpu_ns));
		*user_ns += last[0] - first[0];
		*system_ns += last[1] - first[1];
	}
}

void target_cpu_times(struct target *target, uint64_t *user_ns, uint64_t *system_ns)
{
	uint64_t ns[2] = { 0, 0 };
	struct proc_fields f;

	*user_ns = *system_ns = 0;
	if (target->system) {
		if (system_cpu_times(ns) == 0 && ns[0] >= target->cpu_first[0] &&
		    ns[1] >= target->cpu_first[1]) {
			*user_ns = ns[0] - target->cpu_first[0];
			*system_ns = ns[1] - target->cpu_first[1];
		}
	} else if (!target->launched) {
		attached_cpu_times(target, user_ns, system_ns);
	} else if (target->exited) {
		*user_ns = timeval_ns(&target->rusage.ru_utime);
		*system_ns = timeval_ns(&target->rusage.ru_stime);
	} else if (proc_fields_read(target->child, &f) == 0) {
		*user_ns = f.cpu_ns[0];
		*system_ns = f.cpu_ns[1];
	}
}

bool target_kernel_thread(pid_t pid, char *name, size_t size)
{
	/* PF_KTHREAD in include/linux/sched.h: a kernel thread has no user space, no maps, no exe. */
	static const unsigned pf_kthread = 0x00200000;
	char buf[1024], *end = proc_stat(pid, buf, sizeof(buf)), *start;
	unsigned flags;

	/* After ") ": state ppid pgrp session tty_nr tpgid flags. */
	if (!end || sscanf(end + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1 ||
	    !(flags & pf_kthread))
		return false;
	start = strchr(buf, '(');
	*end = '\0';
	snprintf(name, size, "%s", start ? start + 1 : "?");
	return true;
}

/* The process a pid belongs to: a thread id names its thread group. */
static pid_t thread_group_of(pid_t pid)
{
	char path[64], line[128];
	pid_t tgid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? tgid : pid;
}

/* "pid 1,2,3". */
static char *describe_pids(const pid_t *pids, size_t npids)
{
	char *text = xmalloc(4 + 12 * npids + 1), *p = text;

	p += sprintf(p, "pid");
	for (size_t i = 0; i < npids; i++)
		p += sprintf(p, "%s%d", i ? "," : " ", (int)pids[i]);
	return text;
}

/* Each process once, whether named twice or by one of its threads: two events on one thread
 * would count its samples twice. */
static void attach_unique(struct target *target, const pid_t *pids, size_t npids)
{
	target->pids = xmalloc(npids * sizeof(*pids));
	for (size_t i = 0; i < npids; i++) {
		pid_t tgid = thread_group_of(pids[i]);
		size_t j;

		for (j = 0; j < target->npids && target->pids[j] != tgid; j++)
			;
		if (j == target->npids)
			target->pids[target->npids++] = tgid;
	}
}

/* Room for n attached processes in every per-process array (the pids' own included). */
static void attached_room(struct target *t, size_t n)
{
	size_t cap = t->cap;

	if (n <= cap)
		return;
	cap = n < 2 * cap ? 2 * cap : n;
	t->pids = xrealloc(t->pids, cap * sizeof(*t->pids));
	t->cpu_first = xrealloc(t->cpu_first, 2 * cap * sizeof(*t->cpu_first));
	t->cpu_last = xrealloc(t->cpu_last, 2 * cap * sizeof(*t->cpu_last));
	t->starts = xrealloc(t->starts, cap * sizeof(*t->starts));
	t->stamps = xrealloc(t->stamps, cap * sizeof(*t->stamps));
	t->own_first = xrealloc(t->own_first, cap * sizeof(*t->own_first));
	t->roots = xrealloc(t->roots, cap * sizeof(*t->roots));
	t->pidfds = xrealloc(t->pidfds, cap * sizeof(*t->pidfds));
	t->cap = cap;
}

/* The i-th process attached to, under the named process root: its pidfd, start time and CPU
 * times so far. Returns 0, or -ESRCH when it has ended. */
static int attach_one(struct target *target, size_t i, size_t root)
{
	struct proc_fields f;

	target->stamps[i] = 0;
	target->roots[i] = root;
	target->pidfds[i] = pidfd_open(target->pids[i], 0);
	if (target->pidfds[i] < 0 && errno == ESRCH)
		return -ESRCH;
	if (proc_fields_read(target->pids[i], &f))
		return -ESRCH;
	target->starts[i] = f.start;
	if (!attached_read(target, i, &f))
		return -ESRCH;
	memcpy(&target->cpu_first[2 * i], f.cpu_ns, sizeof(f.cpu_ns));
	memcpy(&target->cpu_last[2 * i], f.cpu_ns, sizeof(f.cpu_ns));
	target->own_first[i] = f.own_ns;
	return 0;
}

int target_attach(struct target **out, const pid_t *pids, size_t npids, pid_t *missing)
{
	struct target *target;

	*out = NULL;
	for (size_t i = 0; i < npids; i++) {
		if (kill(pids[i], 0) < 0 && errno == ESRCH) {
			*missing = pids[i];
			return -ESRCH;
		}
	}
	target = target_new();
	attach_unique(target, pids, npids);
	npids = target->npids;
	target->nnamed = npids;
	target->description = describe_pids(target->pids, npids);
	attached_room(target, npids);
	for (size_t i = 0; i < npids; i++)
		target->pidfds[i] = -1;
	/* From here on each pid stands for the process that has it now, and for no later one. */
	for (size_t i = 0; i < npids; i++) {
		if (attach_one(target, i, i)) {
			*missing = target->pids[i];
			target_free(target);
			return -ESRCH;
		}
	}
	*out = target;
	return 0;
}

/* --- the processes the attached ones started --------------------------------------------------- */

/* The clock of /proc's start times (CLOCK_BOOTTIME, in clock ticks), rounded up. */
static unsigned long long boot_ticks(void)
{
	long tick = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	if (tick <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts))
		return ULLONG_MAX;
	return ((unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec) *
	       (unsigned long long)tick / 1000000000ull + 1;
}

void target_stamp(struct target *target)
{
	unsigned long long now = boot_ticks();

	for (size_t i = 0; i < target->npids; i++)
		if (!target->stamps[i])
			target->stamps[i] = now;
}

/* A live process as /proc says: who started it, when; and, once known, what it is to the
 * target: attached (its index), or unfollowed under a named process. */
struct proc_node {
	pid_t pid, ppid;
	unsigned long long start;
	size_t attached;        /* index in the target's pids; SIZE_MAX: not attached */
	size_t root;            /* unfollowed: the named process it descends from; SIZE_MAX: no */
};

static int proc_node_by_pid(const void *a, const void *b)
{
	const struct proc_node *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every live process (zombies left out), sorted by pid. */
static size_t proc_nodes_read(struct proc_node **out)
{
	DIR *dir = opendir("/proc");
	struct proc_node *nodes = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	while (dir && (de = readdir(dir))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		struct proc_fields f;

		if (*end || pid <= 0 || pid > INT_MAX || proc_fields_read((pid_t)pid, &f) ||
		    f.state == 'Z' || f.state == 'X')
			continue;
		xgrow((void **)&nodes, &cap, n + 1, sizeof(*nodes));
		nodes[n++] = (struct proc_node){ (pid_t)pid, f.ppid, f.start, SIZE_MAX, SIZE_MAX };
	}
	if (dir)
		closedir(dir);
	if (n)
		qsort(nodes, n, sizeof(*nodes), proc_node_by_pid);
	*out = nodes;
	return n;
}

static struct proc_node *proc_node_find(struct proc_node *nodes, size_t n, pid_t pid)
{
	struct proc_node key = { .pid = pid };

	return n ? bsearch(&key, nodes, n, sizeof(*nodes), proc_node_by_pid) : NULL;
}

/* Whether node is unfollowed, from its parent: started by an attached process before its events
 * were open, or by an unfollowed one. Sets node->root; returns whether it changed. */
static bool proc_node_settle(const struct target *t, struct proc_node *nodes, size_t n,
			     struct proc_node *node)
{
	struct proc_node *parent = proc_node_find(nodes, n, node->ppid);
	size_t at;

	if (node->attached != SIZE_MAX || node->root != SIZE_MAX || !parent)
		return false;
	at = parent->attached;
	if (at != SIZE_MAX && t->stamps[at] && node->start <= t->stamps[at])
		node->root = t->roots[at];
	else if (at == SIZE_MAX && parent->root != SIZE_MAX)
		node->root = parent->root;
	return node->root != SIZE_MAX;
}

static int proc_node_by_start(const void *a, const void *b)
{
	const struct proc_node *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

size_t target_unfollowed(const struct target *target, pid_t **pids, size_t **roots)
{
	struct proc_node *nodes, *node;
	size_t n = proc_nodes_read(&nodes), found = 0;
	bool changed = true;

	*pids = NULL;
	*roots = NULL;
	for (size_t i = 0; i < target->npids; i++)
		if ((node = proc_node_find(nodes, n, target->pids[i])) && node->start == target->starts[i])
			node->attached = i;
	/* A parent's state is settled before its child's in the pass after, at the latest: passes
	 * until none changes, each at least one generation further down. */
	while (changed) {
		changed = false;
		for (size_t i = 0; i < n; i++)
			changed |= proc_node_settle(target, nodes, n, &nodes[i]);
	}
	/* Parents before their children: a child starts no earlier than its parent. */
	qsort(nodes, n, sizeof(*nodes), proc_node_by_start);
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].root == SIZE_MAX)
			continue;
		*pids = xrealloc(*pids, (found + 1) * sizeof(**pids));
		*roots = xrealloc(*roots, (found + 1) * sizeof(**roots));
		(*pids)[found] = nodes[i].pid;
		(*roots)[found++] = nodes[i].root;
	}
	free(nodes);
	return found;
}

int target_adopt(struct target *target, pid_t pid, size_t root)
{
	size_t i = target->npids;
	int err;

	attached_room(target, i + 1);
	target->pids[i] = pid;
	target->pidfds[i] = -1;
	err = attach_one(target, i, root < target->nnamed ? root : 0);
	if (err) {
		if (target->pidfds[i] >= 0)
			close(target->pidfds[i]);
		return err;
	}
	target->npids++;
	return 0;
}

size_t target_named(const struct target *target)
{
	return target->nnamed;
}

uint64_t target_named_own_cpu_ns(const struct target *target, size_t i)
{
	struct proc_fields f;

	if (i >= target->nnamed || !attached_read(target, i, &f) || f.own_ns < target->own_first[i])
		return 0;
	return f.own_ns - target->own_first[i];
}

int target_system(struct target **out)
{
	struct target *target = target_new();
	size_t cap = 0;
	DIR *dir = opendir("/proc");
	struct dirent *de;

	*out = NULL;
	if (!dir) {
		int err = -errno;

		target_free(target);
		return err;
	}
	while ((de = readdir(dir))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		xgrow((void **)&target->pids, &cap, target->npids + 1, sizeof(*target->pids));
		target->pids[target->npids++] = (pid_t)pid;
	}
	closedir(dir);
	target->system = true;
	target->description = xstrdup("all CPUs");
	target->cpu_first = xcalloc(2, sizeof(uint64_t));
	target->cpu_last = xcalloc(2, sizeof(uint64_t));
	system_cpu_times(target->cpu_first);
	*out = target;
	return 0;
}

bool target_system_wide(const struct target *target)
{
	return target->system;
}

bool target_poll(struct target *target)
{
	pid_t r;

	if (!target->launched || target->exited)
		return target->exited;
	r = wait4(target->child, &target->wait_status, WNOHANG, &target->rusage);
	if (r == target->child)
		target->exited = true;
	return target->exited;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

bool target_wait(struct target *target, unsigned ms)
{
	for (unsigned waited = 0; waited < ms; waited += 10) {
		if (target_poll(target))
			return true;
		sleep_ms(10);
	}
	return target_poll(target);
}

void target_terminate(struct target *target, unsigned grace_ms)
{
	if (!target->launched || target_poll(target))
		return;
	kill(target->child, SIGTERM);
	if (target_wait(target, grace_ms))
		return;
	kill(target->child, SIGKILL);
	while (wait4(target->child, &target->wait_status, 0, &target->rusage) < 0 && errno == EINTR)
		;
	target->exited = true;
}

int target_exit_code(const struct target *target)
{
	if (!target->launched)
		return 0;
	if (WIFEXITED(target->wait_status))
		return WEXITSTATUS(target->wait_status);
	if (WIFSIGNALED(target->wait_status))
		return 128 + WTERMSIG(target->wait_status);
	return 1;
}

bool target_pid_gone(pid_t pid)
{
	struct proc_fields f;

	return proc_fields_read(pid, &f) || proc_fields_ended(&f);
}

bool target_any_alive(const struct target *target)
{
	struct proc_fields f;

	if (target->system) /* the machine runs on */
		return true;
	/* A pid whose process ended may already name a new one: that one was never attached to. */
	for (size_t i = 0; i < target->npids; i++)
		if (attached_read(target, i, &f) && !proc_fields_ended(&f))
			return true;
	return false;
}

void target_free(struct target *target)
{
	if (!target)
		return;
	free(target->pids);
	free(target->description);
	free(target->cpu_first);
	free(target->cpu_last);
	free(target->starts);
	free(target->stamps);
	free(target->own_first);
	free(target->roots);
	for (size_t i = 0; target->pidfds && i < target->npids; i++)
		if (target->pidfds[i] >= 0)
			close(target->pidfds[i]);
	free(target->pidfds);
	free(target);
}
