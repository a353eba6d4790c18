/* sampler_events.c — a sampler's (sampler.c) perf events: opened on the target per CPU, per
 * thread in attach mode, their kernel rings mapped; and the advice when the kernel refuses them.
 *
 * Events: one cpu-clock event per (task, CPU), and in the modes that sample context switches a
 * context-switches event beside it (which alone asks for the address-space and task records, so
 * they come once; its samples are marked as they are copied). The kernel refuses to mmap an
 * inherited per-task event that is not bound to a CPU, so every event is per CPU; one event per
 * CPU owns the mapped ring and the others send their records there (PERF_EVENT_IOC_SET_OUTPUT).
 * inherit=1 makes the kernel follow every thread and process the task creates after the event
 * was opened.
 *
 * Attach mode opens the events of every thread of the processes, scanning /proc/PID/task until a
 * pass finds nothing new; each event's id is remembered with the thread it counts for, which the
 * reading side's dedup (sampler.c) looks up.
 *
 * The kernel rings are as big as the mode wants (ring_pages_wanted()), within what the user may
 * lock; mapping falls back to smaller rings down to KERNEL_RING_MIN_PAGES. All of this runs before
 * the sampler thread starts (sampler_attach() too): the maps it fills are the thread's after. */
#include "proftop/sampler_internal.h"

#include "proftop/blocked.h"
#include "proftop/diag.h"
#include "proftop/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Data pages per CPU. A dwarf sample carries a 16 KiB stack copy: four busy threads at 999 Hz
 * write 64 MiB/s, and when the sampler thread waits for a CPU behind them for a few tens of
 * milliseconds the kernel must hold it all (a 60 s run with 512 KiB rings dropped 29 samples).
 * Unprivileged users may lock only about 512 KiB per CPU (perf_event_mlock_kb), so mapping
 * falls back to smaller rings. */
#define KERNEL_RING_PAGES 1024
/* The switch modes add a dwarf sample per switch out, 16 KiB in the ring whatever the stack
 * holds: at 10,000 switches a second on 2 CPUs each CPU's ring takes 80 MB/s, which 4 MiB holds
 * for 50 ms, and a sampler thread sharing busy CPUs was seen to wait 40 ms for one. They get
 * SWITCH_RING_TOTAL_PAGES shared among the CPUs, from KERNEL_RING_PAGES to 4 times that each
 * (more CPUs spread the switches over more rings). */
#define SWITCH_RING_TOTAL_PAGES 16384
#define SWITCH_RING_MAX_PAGES 4096
#define WAKEUP_MAX_BYTES (512u * 1024)
/* The smallest kernel ring tried: 32 KiB holds two dwarf samples of the largest stack copy. */
#define KERNEL_RING_MIN_PAGES 8
/* Samples waiting for room in the ring, at most (their memory is given back as they leave): the
 * switch modes bring 50 MB/s at 10,000 switches a second (a dwarf sample of a blocked thread
 * keeps about 5 KiB of stack), and a collector reading a library's DWARF at its first sample
 * on a loaded machine was seen to need a second or more. */
#define BACKLOG_LIMIT (64u << 20)

/* sampler_open()'s steps, for *what. */
static const char step_open[] = "perf_event_open";
static const char step_mmap[] = "mmap of a kernel ring buffer";

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int online_cpus(int **out)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int *cpus, count = 0;

	if (n < 1)
		n = 1;
	cpus = xmalloc((size_t)n * sizeof(*cpus));
	for (int cpu = 0; cpu < n; cpu++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		FILE *f = fopen(path, "re");
		int online = 1; /* cpu0 often has no "online" file: it cannot go offline */

		if (f) {
			if (fscanf(f, "%d", &online) != 1)
				online = 1;
			fclose(f);
		}
		if (online)
			cpus[count++] = cpu;
	}
	*out = cpus;
	return count;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A number from /proc/sys/kernel/NAME, or fallback when it cannot be read. */
static long kernel_sysctl(const char *name, long fallback)
{
	char path[96];
	long value;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "re");
	if (!f)
		return fallback;
	if (fscanf(f, "%ld", &value) != 1)
		value = fallback;
	fclose(f);
	return value;
}

/* The most data pages per CPU an unprivileged user can lock on every CPU at once: the kernel
 * allows perf_event_mlock_kb per CPU, in total (and beyond it RLIMIT_MEMLOCK). */
static size_t ring_pages_allowed(size_t want)
{
	long page = sysconf(_SC_PAGESIZE);
	long kb = kernel_sysctl("perf_event_mlock_kb", 516);
	size_t pages = 1;

	if (geteuid() == 0)
		return want;
	while (pages * 2 <= want && kb >= 0 && (pages * 2 + 1) * (size_t)page <= (size_t)kb * 1024)
		pages *= 2;
	return pages;
}

/* Map a kernel ring of at most max_pages data pages (want_pages is what proftop would like: a
 * smaller ring drops samples sooner, which the user is told). */
static int map_ring(struct sampler *s, struct kernel_ring *kr, int fd, size_t max_pages,
		    size_t want_pages)
{
	long page = sysconf(_SC_PAGESIZE);

	/* Fall back to smaller rings when the mlock budget is smaller than ours; the smallest is tried
	 * even when perf_event_mlock_kb says it is too big, as RLIMIT_MEMLOCK may still allow it. */
	if (max_pages < KERNEL_RING_MIN_PAGES)
		max_pages = KERNEL_RING_MIN_PAGES;
	for (size_t pages = max_pages; pages >= KERNEL_RING_MIN_PAGES; pages /= 2) {
		void *base = mmap(NULL, (pages + 1) * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
				  fd, 0);

		if (base != MAP_FAILED) {
			kr->fd = fd;
			kr->base = base;
			kr->data = (const unsigned char *)base + page;
			kr->data_size = pages * (size_t)page;
			if (pages < want_pages)
				diag_report(s->diag, DIAG_WARNING, "kernel buffers of %zu KiB per CPU, not "
					    "%zu (perf_event_mlock_kb): busy targets may drop samples",
					    kr->data_size / 1024, want_pages * (size_t)page / 1024);
			return 0;
		}
		if (errno != EPERM && errno != ENOMEM)
			return -errno;
	}
	return -EPERM;
}

/* Keep an event opened for tid, and which thread it counts for. */
static int remember_fd(struct sampler *s, int fd, pid_t tid, bool switches)
{
	uint64_t id;

	xgrow((void **)&s->fds, &s->fds_cap, s->nfds + 1, sizeof(*s->fds));
	s->fds[s->nfds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	idmap_put(&s->event_owner, id, (uint32_t)tid);
	idmap_put(&s->authority, (uint64_t)(uint32_t)tid, (uint32_t)tid);
	if (switches)
		idmap_put(&s->switch_ids, id, 1);
	return 0;
}

/* The data pages per CPU proftop would like (a power of two, as the kernel wants). */
static size_t ring_pages_wanted(const struct sampler *s, int ncpus)
{
	size_t pages = SWITCH_RING_MAX_PAGES;

	if (s->config.callgraph != CALLGRAPH_DWARF)
		return KERNEL_RING_PAGES / 8;
	if (!sample_mode_switches(s->config.mode))
		return KERNEL_RING_PAGES;
	while (pages > KERNEL_RING_PAGES && pages * (size_t)ncpus > SWITCH_RING_TOTAL_PAGES)
		pages /= 2;
	return pages;
}

/* Open the event of attr for pid on each CPU; the first event per CPU owns that CPU's ring. */
static int open_event(struct sampler *s, struct perf_event_attr *attr, pid_t pid, const int *cpus,
		      int ncpus, bool switches)
{
	size_t want = ring_pages_wanted(s, ncpus);
	size_t pages = ring_pages_allowed(want);
	size_t quarter = pages * (size_t)sysconf(_SC_PAGESIZE) / 4;

	/* Woken when a quarter of the ring is written (at most WAKEUP_MAX_BYTES): a busy thread's
	 * dwarf samples fill 16 MiB/s, and each wakeup costs a pass of the sampler. */
	if (quarter > WAKEUP_MAX_BYTES)
		quarter = WAKEUP_MAX_BYTES;
	if (quarter > attr->wakeup_watermark)
		attr->wakeup_watermark = (uint32_t)quarter;
	if (pid == -1) /* every task on the CPU: the kernel inherits nothing into a CPU's event */
		attr->inherit = 0;
	for (int i = 0; i < ncpus; i++) {
		int fd = perf_event_open(attr, pid, cpus[i], -1);
		int err;

		if (fd < 0)
			return -errno;
		err = remember_fd(s, fd, pid, switches);
		if (err)
			return err;
		if ((size_t)i >= s->nrings) {
			s->step = step_mmap;
			err = map_ring(s, &s->rings[i], fd, pages, want);
			if (err)
				return err;
			s->step = step_open;
			s->nrings = (size_t)i + 1;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[i].fd) < 0) {
			return -errno;
		}
	}
	return 0;
}

/* pid's events: cpu-clock, and the context switches' when the mode wants them; in the
 * allocation modes a dummy event for its mmap, comm and task records. */
static int open_task(struct sampler *s, pid_t pid, const int *cpus, int ncpus, bool enable_on_exec)
{
	struct perf_event_attr attr;
	int err;

	if (sample_mode_unsampled(s->config.mode))
		sample_dummy_attr_init(&attr, &s->config);
	else
		sample_attr_init(&attr, &s->config);
	attr.enable_on_exec = enable_on_exec;
	if (sample_mode_switches(s->config.mode)) {
		struct perf_event_attr sw;

		sample_switch_attr_init(&sw, &s->config);
		sw.enable_on_exec = enable_on_exec;
		err = open_event(s, &sw, pid, cpus, ncpus, true);
		if (err)
			return err;
		attr.mmap = attr.mmap2 = attr.comm = attr.comm_exec = attr.task = 0;
	}
	return open_event(s, &attr, pid, cpus, ncpus, false);
}

/* A thread opened in attach mode, for the waits that began before it (blocked.h). */
static void remember_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	xgrow((void **)&s->attached, &s->attached_cap, s->nattached + 1, sizeof(*s->attached));
	s->attached[s->nattached++] = (struct blocked_thread){ pid, tid };
}

/* Attach mode: every thread of pid, scanning /proc/PID/task until a pass finds nothing new so
 * threads created while we opened are not missed (later ones are inherited). */
static int open_process(struct sampler *s, pid_t pid, const int *cpus, int ncpus)
{
	pid_t *seen = NULL;
	size_t nseen = 0, cap = 0;
	bool found_new = true;
	int err = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	while (found_new && !err) {
		DIR *dir = opendir(path);
		struct dirent *de;

		if (!dir) {
			err = errno == ENOENT ? -ESRCH : -errno;
			break;
		}
		found_new = false;
		while ((de = readdir(dir)) && !err) {
			pid_t tid = (pid_t)atoi(de->d_name);
			size_t i;

			if (tid <= 0)
				continue;
			for (i = 0; i < nseen && seen[i] != tid; i++)
				;
			if (i < nseen)
				continue;
			xgrow((void **)&seen, &cap, nseen + 1, sizeof(*seen));
			seen[nseen++] = tid;
			found_new = true;
			err = open_task(s, tid, cpus, ncpus, false);
			if (err == -ESRCH) /* the thread ended meanwhile */
				err = 0;
			else if (!err && sample_mode_switches(s->config.mode))
				remember_thread(s, pid, tid);
		}
		closedir(dir);
	}
	free(seen);
	return err;
}

int sampler_open(struct sampler **out, const struct sample_config *config, const pid_t *pids,
		 size_t npids, bool launched, struct ring *ring, struct diag *diag, const char **what)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	int *cpus, ncpus, err = 0;

	s->config = *config;
	s->launched = launched;
	s->dedupe = !launched && !config->system_wide; /* one event per CPU: nothing inherited */
	s->drop_idle = config->system_wide && !config->kernel && sample_mode_switches(config->mode);
	s->drop_pid = config->system_wide && !config->include_self ? getpid() : 0;
	s->diag = diag;
	idmap_init(&s->event_owner);
	idmap_init(&s->switched);
	idmap_init(&s->switch_ids);
	idmap_init(&s->authority);
	s->sample_type = sample_type_for(config);
	s->ring = ring;
	s->wake_fd = -1;
	s->stop_fd = util_wake_new();
	backlog_init(&s->backlog, BACKLOG_LIMIT);
	s->bounce = xmalloc(65536);
	atomic_init(&s->requested_freq, config->freq);
	raise_fd_limit();
	ncpus = online_cpus(&cpus);
	s->rings = xcalloc((size_t)ncpus, sizeof(*s->rings));
	s->cursors = xcalloc((size_t)ncpus, sizeof(*s->cursors));
	*what = "eventfd";
	if (s->stop_fd < 0) {
		err = -errno;
		free(cpus);
		sampler_free(s);
		return err;
	}
	s->step = step_open;
	if (config->system_wide) {
		err = open_task(s, -1, cpus, ncpus, false);
	} else if (launched) {
		err = open_task(s, pids[0], cpus, ncpus, true);
	} else {
		for (size_t i = 0; i < npids && !err; i++)
			err = open_process(s, pids[i], cpus, ncpus);
	}
	free(cpus);
	if (!err && !s->nfds)
		err = -ESRCH; /* every thread of the attached processes ended meanwhile */
	*what = s->step;
	if (err) {
		sampler_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int sampler_attach(struct sampler *s, pid_t pid)
{
	int *cpus, ncpus = online_cpus(&cpus), err;

	s->step = step_open;
	err = open_process(s, pid, cpus, ncpus);
	free(cpus);
	return err;
}

/* Past perf_event_mlock_kb per CPU, summed over all of a user's perf buffers, the kernel counts
 * their pages against RLIMIT_MEMLOCK, unless perf_event_paranoid is -1 or the user has
 * CAP_IPC_LOCK (perf_mmap() in kernel/events/core.c). */
static char *mlock_advice(void)
{
	long page = sysconf(_SC_PAGESIZE), cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	char memlock[32] = "unlimited";

	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (rl.rlim_cur != RLIM_INFINITY)
		snprintf(memlock, sizeof(memlock), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	return xasprintf("the kernel's sample buffers are locked memory, and proftop's smallest, "
			 "%ld KiB per CPU on %ld CPUs, is more than this user may lock: "
			 "kernel.perf_event_mlock_kb (%ld KiB per CPU, for all of the user's perf "
			 "buffers), then RLIMIT_MEMLOCK (ulimit -l: %s); raise either, or set "
			 "kernel.perf_event_paranoid to -1, which lifts the limit, or run proftop with "
			 "CAP_IPC_LOCK", (KERNEL_RING_MIN_PAGES + 1) * page / 1024, cpus,
			 kernel_sysctl("perf_event_mlock_kb", 516), memlock);
}

/* perf_event_paranoid (Documentation/admin-guide/sysctl/kernel.rst): at 2 unprivileged users may
 * profile their own processes in user mode only, at 1 kernel mode too, at 0 CPU-wide events
 * (-a) too; -1 adds raw tracepoints, which proftop does not use. Some distributions' kernels
 * refuse everything above 2; mainline treats 3 as 2. */
static char *permission_advice(const struct sample_config *config, bool attach)
{
	long paranoid = kernel_sysctl("perf_event_paranoid", 2);
	bool switches = sample_mode_switches(config->mode);
	int needed = config->kernel || switches ? 1 : 2;

	if (config->system_wide)
		return xasprintf("-a samples every process on every CPU: it needs root, CAP_PERFMON, "
				 "or /proc/sys/kernel/perf_event_paranoid at 0 or lower (it is %ld: "
				 "sysctl -w kernel.perf_event_paranoid=0)", paranoid);

	if (switches && paranoid > 1 && geteuid() != 0)
		return xasprintf("/proc/sys/kernel/perf_event_paranoid is %ld: --mode %s samples "
				 "the context switches, which happen in the kernel, and needs it at 1 or "
				 "lower (sysctl -w kernel.perf_event_paranoid=1), or root, or "
				 "CAP_PERFMON; --mode cpu works as it is", paranoid,
				 sample_mode_name(config->mode));
	if (config->kernel && paranoid > 1 && geteuid() != 0)
		return xasprintf("/proc/sys/kernel/perf_event_paranoid is %ld: --kernel needs it at 1 "
				 "or lower (kernel samples of your own processes), or CAP_PERFMON",
				 paranoid);
	if (attach)
		return xasprintf("profiling another user's process needs root or CAP_PERFMON (and "
				 "ptrace permission); /proc/sys/kernel/perf_event_paranoid must also be "
				 "%d or lower", needed);
	if (paranoid > 2)
		return xasprintf("/proc/sys/kernel/perf_event_paranoid is %ld: it must be 2 or lower "
				 "to profile your own processes, or run proftop with CAP_PERFMON",
				 paranoid);
	return xasprintf("the kernel does not allow perf events here: "
			 "/proc/sys/kernel/perf_event_paranoid must be %d or lower to profile your own "
			 "processes%s, or run proftop with CAP_PERFMON", needed,
			 config->kernel ? " with --kernel" : "");
}

char *sampler_advice(int err, const char *what, const struct sample_config *config, bool attach)
{
	switch (-err) {
	case EACCES:
	case EPERM:
		return what == step_mmap ? mlock_advice() : permission_advice(config, attach);
	case ENOSYS:
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return xstrdup("this kernel has no perf events (CONFIG_PERF_EVENTS) or no cpu-clock "
			       "event");
	case EMFILE:
	case ENFILE:
		return xstrdup("too many open files: raise the limit (ulimit -n) or profile fewer "
			       "threads");
	case ESRCH:
		return xstrdup("the process ended before it could be profiled");
	case EINVAL:
		return xstrdup("the kernel refused the event settings (try a lower -F or another "
			       "--call-graph)");
	default:
		return xstrdup(strerror(-err));
	}
}
