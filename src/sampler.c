/* sampler.c — perf events on the target, and the sampler thread that drains their kernel rings.
 *
 * Events: one cpu-clock event per (task, CPU), and in the modes that sample context switches a
 * context-switches event beside it (which alone asks for the address-space and task records, so
 * they come once; its samples are marked as they are copied). The kernel refuses to mmap an
 * inherited per-task event that is not bound to a CPU, so every event is per CPU; one event per
 * CPU owns the mapped ring and the others send their records there (PERF_EVENT_IOC_SET_OUTPUT).
 * inherit=1 makes the kernel follow every thread and process the task creates after the event
 * was opened.
 *
 * -a opens one event per CPU for every task (pid -1), which inherits nothing; proftop's own
 * samples and switches are dropped as they are read, unless --include-self.
 *
 * Attach mode opens an event on every thread of the processes: a thread created while proftop
 * opens them gets the event inherited from its creator and one of its own, and would be sampled
 * twice. Every record carries the id of the event proftop opened (an inherited event reports
 * its ancestor's id), so a thread with events of its own is counted from those only, and a
 * thread created later from the events of its creating thread's "authority" (the FORK record
 * says who created it).
 *
 * Attach mode in the modes that sample switches: the threads waiting when the events are enabled
 * switched out before they existed. Those found waiting all along (blocked.h) each get a
 * SAMPLE_RECORD_BLOCKED record in the ring before the kernel's first, and their switch records
 * are forwarded up to their first switch in, where their waits end.
 *
 * Records the ring has no room for wait in the backlog (backlog.h), in order: samples and switch
 * records up to BACKLOG_LIMIT bytes of them, then they are counted as overflow; address-space
 * records always, as losing one would misname every later sample.
 *
 * Threads: the sampler thread owns the event fds, the kernel rings, the backlog and the
 * dedup and switch-event maps (filled before it starts). Other threads touch only the atomic
 * counters, the requested frequency and the stop flag. */
#include "proftop/sampler.h"

#include "proftop/allocrec.h"
#include "proftop/backlog.h"
#include "proftop/blocked.h"
#include "proftop/shmring.h"

#include "proftop/diag.h"
#include "proftop/idmap.h"
#include "proftop/ring.h"
#include "proftop/util.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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
#define POLL_MS 20
/* The allocation ring (allocrun.h) is read every ALLOC_POLL_MS. */
#define ALLOC_POLL_MS 5
/* At the end, how long the allocations left in the shared ring and the records left in the
 * backlog wait for the collector. */
#define FINAL_WAIT_NS 5000000000ull
#define CONSUMER_WAKE_NS 10000000ull
#define WAKEUP_MAX_BYTES (512u * 1024)
/* The smallest kernel ring tried: 32 KiB holds two dwarf samples of the largest stack copy. */
#define KERNEL_RING_MIN_PAGES 8
/* Samples waiting for room in the ring, at most (their memory is given back as they leave): the
 * switch modes bring 50 MB/s at 10,000 switches a second (a dwarf sample of a blocked thread
 * keeps about 5 KiB of stack), and a collector reading a library's DWARF at its first sample
 * on a loaded machine was seen to need a second or more. */
#define BACKLOG_LIMIT (64u << 20)
/* While records wait in the backlog, how often the sampler looks for room in the ring. */
#define BACKLOG_POLL_MS 2

/* sampler_open()'s steps, for *what. */
static const char step_open[] = "perf_event_open";
static const char step_mmap[] = "mmap of a kernel ring buffer";

struct kernel_ring {
	int fd;
	void *base;             /* the perf_event_mmap_page, then the data pages */
	const unsigned char *data; /* the data pages */
	size_t data_size;
};

/* A kernel ring being drained: records between data_tail and data_head, which the kernel
 * publishes with a release store; storing the new tail tells it the space is free again. */
struct ring_cursor {
	struct kernel_ring *kr;
	uint64_t head, tail;
	struct perf_event_header next; /* valid when has_next */
	uint64_t next_time;
	bool has_next;
};

struct sampler {
	struct sample_config config;
	uint64_t sample_type;
	struct ring *ring;
	struct diag *diag;
	int wake_fd;
	bool unsignalled;       /* records pushed since the consumer was last woken */
	uint64_t signalled_ns;
	int *fds;               /* every event */
	size_t nfds, fds_cap;
	struct kernel_ring *rings; /* one per CPU */
	size_t nrings;
	struct backlog backlog; /* records waiting for room in the ring, oldest first */
	unsigned char *bounce;  /* a record that wraps the end of a kernel ring is copied here */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	int stop_fd;            /* eventfd: sampler_stop() wakes the thread at once */
	const char *step;       /* what sampler_open() is doing: step_open or step_mmap */
	atomic_uint requested_freq; /* at most config.freq: samples beyond it are thinned out */
	unsigned thin_credit;
	struct ring_cursor *cursors; /* one per ring, for drain_rings() */
	bool launched;          /* the events arm at the command's exec */
	bool dedupe;            /* attach mode: see the file's header */
	bool drop_idle;         /* -a: samples of the idle task are dropped (idle()) */
	pid_t drop_pid;         /* -a: proftop's own samples and switches are dropped; 0: none */
	struct idmap event_owner; /* event id → the tid proftop opened it for */
	struct idmap authority; /* tid → the tid whose events count for it */
	struct idmap switched;  /* tid → 1 while its last sampled switch is not back in */
	struct idmap switch_ids; /* ids of the context-switch events (→ 1) */
	struct blocked_thread *attached; /* attach mode, switch modes: the threads opened */
	size_t nattached, attached_cap;
	_Atomic uint64_t samples, switches, overflow, dropped, throttled;
	struct shmring_reader alloc_reader; /* an allocation run's shared ring */
	bool allocs;            /* alloc_reader is set */
	bool allocs_waiting;    /* the last pass left records there: no room in the ring */
};

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

	if (sample_mode_allocations(s->config.mode))
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
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
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

/* A lower frequency than the events sample at keeps requested/config.freq of the samples,
 * evenly. The kernel cannot change the period of the events it inherited into new threads
 * (PERF_EVENT_IOC_PERIOD reaches only the event it is called on), so the rate is changed here,
 * the same for every thread. */
static bool thin_out(struct sampler *s)
{
	unsigned want = atomic_load_explicit(&s->requested_freq, memory_order_relaxed);

	if (want >= s->config.freq)
		return false;
	s->thin_credit += want;
	if (s->thin_credit >= s->config.freq) {
		s->thin_credit -= s->config.freq;
		return false;
	}
	return true;
}

/* A dwarf sample holds a stack copy of the full --stack-size of which only dyn_size bytes were
 * filled (a few hundred for most stacks): the length of the record without the unfilled part, or
 * h->size when there is nothing to leave out. *stack_at is where the stack's size field is. */
static size_t trimmed_size(const struct sampler *s, const struct perf_event_header *h,
			   size_t *stack_at, uint64_t *keep)
{
	struct sample_record r;
	size_t at, size;

	if (h->type != PERF_RECORD_SAMPLE || !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
	    sample_parse(h, h->size, s->sample_type, sample_regs_mask(), &r) || !r.sample.stack)
		return h->size;
	at = (size_t)(r.sample.stack - (const unsigned char *)h) - 8;
	memcpy(&size, (const char *)h + at, sizeof(size));
	*keep = (r.sample.stack_size + 7) & ~(uint64_t)7;
	/* Only when the stack is the record's last field (then dyn_size follows it and ends it). */
	if (at + 8 + size + 8 != h->size || *keep >= size)
		return h->size;
	*stack_at = at;
	return at + 8 + *keep + 8;
}

/* Copy h to dst, leaving out the unfilled stack (see above) when len is shorter than h. */
static void copy_record(void *dst, const struct perf_event_header *h, size_t len, size_t stack_at,
			uint64_t keep)
{
	char *d = dst;
	uint64_t dyn;

	if (len == h->size) {
		memcpy(dst, h, len);
		return;
	}
	memcpy(d, h, stack_at);
	((struct perf_event_header *)dst)->size = (uint16_t)len;
	memcpy(d + stack_at, &keep, 8);
	memcpy(d + stack_at + 8, (const char *)h + stack_at + 8, keep);
	memcpy(&dyn, (const char *)h + h->size - 8, 8);
	memcpy(d + stack_at + 8 + keep, &dyn, 8);
}

/* Whether a sample is the context-switch event's (its id is one of theirs). */
static bool is_switch_sample(const struct sampler *s, const struct perf_event_header *h)
{
	struct sample_layout at;
	uint64_t id;

	if (!s->switch_ids.count || sample_layout(s->sample_type, h, &at) || at.id < 0)
		return false;
	memcpy(&id, (const char *)h + at.id, sizeof(id));
	return idmap_get(&s->switch_ids, id) != IDMAP_MISSING;
}

/* A record is in the ring: the samples and switches that reached the collector are counted. */
static void count_forwarded(struct sampler *s, const struct perf_event_header *h)
{
	if (h->type != PERF_RECORD_SAMPLE)
		return;
	atomic_fetch_add_explicit(&s->samples, 1, memory_order_relaxed);
	if (h->misc & SAMPLE_MISC_SWITCH_EVENT)
		atomic_fetch_add_explicit(&s->switches, 1, memory_order_relaxed);
}

/* Samples and switch records may be lost (counted as overflow); the others may not. */
static bool lossy(const struct perf_event_header *h)
{
	return h->type == PERF_RECORD_SAMPLE || h->type == PERF_RECORD_SWITCH ||
	       h->type == PERF_RECORD_SWITCH_CPU_WIDE;
}

/* Copy a kernel record into the proftop ring, or into the backlog behind the records waiting
 * there (the file's header says what it takes). A sample's copy carries mark in its misc
 * (SAMPLE_MISC_SWITCH_EVENT or 0). */
static void forward(struct sampler *s, const struct perf_event_header *h, uint16_t mark)
{
	size_t stack_at = 0;
	uint64_t keep = 0;
	size_t len = trimmed_size(s, h, &stack_at, &keep);
	void *dst = backlog_empty(&s->backlog) ? ring_reserve(s->ring, len) : NULL;
	bool in_ring = dst != NULL;

	if (!dst)
		dst = backlog_reserve(&s->backlog, len, lossy(h));
	if (!dst) {
		if (!lossy(h))
			fatal("out of memory (%u bytes)", BACKLOG_CHUNK);
		atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
		return;
	}
	copy_record(dst, h, len, stack_at, keep);
	if (h->type == PERF_RECORD_SAMPLE) { /* the mark is ours alone */
		struct perf_event_header *copy = dst;

		copy->misc = (uint16_t)((copy->misc & ~SAMPLE_MISC_SWITCH_EVENT) | mark);
	}
	if (in_ring) {
		ring_commit(s->ring);
		count_forwarded(s, dst);
	}
}

/* Move what waits in the backlog into the ring, as far as it has room. */
static bool flush_backlog(struct sampler *s)
{
	const void *rec;
	bool pushed = false;
	size_t len;

	while ((rec = backlog_peek(&s->backlog, &len))) {
		void *dst = ring_reserve(s->ring, len);

		if (!dst)
			break;
		memcpy(dst, rec, len);
		ring_commit(s->ring);
		count_forwarded(s, dst);
		backlog_pop(&s->backlog);
		pushed = true;
	}
	return pushed;
}

/* The end: what the backlog still holds is lost; its samples and switch records are counted. */
static void drop_backlog(struct sampler *s)
{
	const struct perf_event_header *h;
	size_t len;

	while ((h = backlog_peek(&s->backlog, &len))) {
		if (lossy(h))
			atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
		backlog_pop(&s->backlog);
	}
}

/* Whether a sample's event is the one that counts for its thread (see the file's header). */
static bool counts(struct sampler *s, const struct perf_event_header *h)
{
	struct sample_layout at;
	uint32_t pid_tid[2];
	uint64_t id;
	uint32_t authority;

	if (!s->dedupe || sample_layout(s->sample_type, h, &at) || at.id < 0 || at.pid_tid < 0)
		return true;
	memcpy(&id, (const char *)h + at.id, sizeof(id));
	memcpy(pid_tid, (const char *)h + at.pid_tid, sizeof(pid_tid));
	authority = idmap_get(&s->authority, pid_tid[1]);
	return authority == IDMAP_MISSING || idmap_get(&s->event_owner, id) == authority;
}

/* A new thread or process is counted from the events that count for its creator. */
static void inherit_authority(struct sampler *s, const struct perf_event_header *h)
{
	struct sample_record r;
	uint32_t authority;

	if (!s->dedupe || sample_parse(h, h->size, s->sample_type, 0, &r) ||
	    idmap_get(&s->authority, r.tid) != IDMAP_MISSING)
		return;
	authority = idmap_get(&s->authority, r.task.ptid);
	if (authority != IDMAP_MISSING)
		idmap_put(&s->authority, r.tid, authority);
}

static void count_lost(struct sampler *s, const struct perf_event_header *h)
{
	struct sample_record r;

	if (sample_parse(h, h->size, s->sample_type, 0, &r) == 0)
		atomic_fetch_add_explicit(&s->dropped, r.lost.lost, memory_order_relaxed);
}

/* The process and thread a record is about (where sample_layout() says its pid/tid are);
 * false: none. */
static bool record_ids(const struct sampler *s, const struct perf_event_header *h, uint32_t *pid,
		       uint32_t *tid)
{
	struct sample_layout at;
	uint32_t pid_tid[2];

	if (sample_layout(s->sample_type, h, &at) || at.pid_tid < 0)
		return false;
	memcpy(pid_tid, (const char *)h + at.pid_tid, sizeof(pid_tid));
	*pid = pid_tid[0];
	*tid = pid_tid[1];
	return true;
}

static bool record_tid(const struct sampler *s, const struct perf_event_header *h, uint32_t *tid)
{
	uint32_t pid;

	return record_ids(s, h, &pid, tid);
}

/* The switch records the collector needs are the ones after a sampled switch out,
 * up to the thread's switch back in; with --switch-period N the others (N-1 in N) stay here. */
static void mark_switched(struct sampler *s, const struct perf_event_header *h)
{
	uint32_t tid;

	if (record_tid(s, h, &tid))
		idmap_put(&s->switched, tid, 1);
}

static bool switch_wanted(struct sampler *s, const struct perf_event_header *h)
{
	uint32_t tid, state;

	if (!record_tid(s, h, &tid))
		return false;
	state = idmap_get(&s->switched, tid);
	if (state == IDMAP_MISSING || !state)
		return false;
	if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT))
		idmap_put(&s->switched, tid, 0); /* back in: done with this one */
	return true;
}

/* -a in the modes that sample kernel time (for its weight against switches) without --kernel:
 * a sample of a CPU's idle task (pid 0) has no stack to show. Other runs see no idle task. */
static bool idle(const struct sampler *s, const struct perf_event_header *h)
{
	uint32_t tid;

	return s->drop_idle && record_tid(s, h, &tid) && tid == 0;
}

/* -a without --include-self: a sample or switch of proftop itself (its sampler, its collectors
 * unwinding) is not the machine's work. Dropped here, before it costs the ring and the
 * collector anything. */
static bool own(const struct sampler *s, const struct perf_event_header *h)
{
	uint32_t pid, tid;

	return s->drop_pid && record_ids(s, h, &pid, &tid) && pid == (uint32_t)s->drop_pid;
}

static void handle_record(struct sampler *s, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		/* The modes with switches weigh CPU samples as time against the switches' times:
		 * none is thinned out (the +/- keys are refused there). */
		if (counts(s, h) && !idle(s, h) && !own(s, h) &&
		    (sample_mode_switches(s->config.mode) || !thin_out(s))) {
			bool switched = is_switch_sample(s, h);

			forward(s, h, switched ? SAMPLE_MISC_SWITCH_EVENT : 0);
			if (switched)
				mark_switched(s, h);
		}
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (counts(s, h) && !own(s, h) && switch_wanted(s, h))
			forward(s, h, 0);
		break;
	case PERF_RECORD_FORK:
		inherit_authority(s, h);
		forward(s, h, 0);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
		forward(s, h, 0);
		break;
	case PERF_RECORD_LOST:
		count_lost(s, h);
		break;
	case PERF_RECORD_THROTTLE:
		atomic_fetch_add_explicit(&s->throttled, 1, memory_order_relaxed);
		break;
	default:
		break;
	}
}

/* Copy len bytes at ring position pos, across the end of the buffer if need be. */
static void cursor_copy(const struct ring_cursor *c, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (c->kr->data_size - 1)), first = c->kr->data_size - off;

	if (first >= len) {
		memcpy(dst, c->kr->data + off, len);
	} else {
		memcpy(dst, c->kr->data + off, first);
		memcpy((char *)dst + first, c->kr->data, len - first);
	}
}

/* The next record's header and time (where sample_layout() says it is). */
static void cursor_peek(struct ring_cursor *c, uint64_t sample_type)
{
	struct sample_layout at;

	c->has_next = false;
	if (c->head - c->tail < sizeof(c->next))
		return;
	cursor_copy(c, c->tail, &c->next, sizeof(c->next));
	if (c->next.size < sizeof(c->next) || c->next.size > c->head - c->tail)
		return; /* cannot happen with a sane kernel; never loop on it */
	c->next_time = 0;
	if (sample_layout(sample_type, &c->next, &at) == 0 && at.time >= 0)
		cursor_copy(c, c->tail + (uint64_t)at.time, &c->next_time, sizeof(c->next_time));
	c->has_next = true;
}

/* The record at the cursor, in place or (when it wraps) in the bounce buffer. */
static const struct perf_event_header *cursor_record(struct sampler *s, const struct ring_cursor *c)
{
	size_t off = (size_t)(c->tail & (c->kr->data_size - 1));

	if (c->kr->data_size - off >= c->next.size)
		return (const struct perf_event_header *)(c->kr->data + off);
	cursor_copy(c, c->tail, s->bounce, c->next.size);
	return (const struct perf_event_header *)s->bounce;
}

/* Drain every CPU's ring, merging their records by time: a process that exec'd on one CPU and
 * was sampled on another must have its new maps before its samples. (Records a CPU writes
 * after this pass began wait for the next one.) */
static bool drain_rings(struct sampler *s)
{
	struct ring_cursor *cursors = s->cursors;
	bool any = false;

	for (size_t i = 0; i < s->nrings; i++) {
		struct perf_event_mmap_page *meta = s->rings[i].base;

		cursors[i] = (struct ring_cursor){
			.kr = &s->rings[i],
			.head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE),
			.tail = meta->data_tail,
		};
		cursor_peek(&cursors[i], s->sample_type);
	}
	for (;;) {
		struct ring_cursor *oldest = NULL;

		for (size_t i = 0; i < s->nrings; i++)
			if (cursors[i].has_next && (!oldest || cursors[i].next_time < oldest->next_time))
				oldest = &cursors[i];
		if (!oldest)
			break;
		handle_record(s, cursor_record(s, oldest));
		oldest->tail += oldest->next.size;
		cursor_peek(oldest, s->sample_type);
		any = true;
	}
	for (size_t i = 0; i < s->nrings; i++) {
		struct perf_event_mmap_page *meta = s->rings[i].base;

		__atomic_store_n(&meta->data_tail, cursors[i].tail, __ATOMIC_RELEASE);
	}
	return any;
}

/* Whether to wake the consumer now: a wakeup per pass (each kernel watermark) would be hundreds
 * a second; records wait at most CONSUMER_WAKE_NS, or until the ring is a quarter full. */
static bool consumer_due(const struct sampler *s)
{
	return util_now_ns() - s->signalled_ns >= CONSUMER_WAKE_NS ||
	       ring_used(s->ring) >= ring_capacity(s->ring) / 4;
}

/* The allocation library's records reserved before this pass read the kernel's (up to), after
 * those: an allocation made after an exec or an mmap then always follows its records, which the
 * kernel wrote before the allocation was made; one reserved while the kernel rings were read
 * waits for the next pass. As SAMPLE_RECORD_ALLOC records: the target writes the shared slots,
 * so a record's length is taken once, bounded by what the ring says the record holds, and what
 * is copied says that length (the collector validates the rest). A record the ring has no room
 * for stays in the shared ring for the next pass (allocs_waiting): the two rings together
 * buffer a collector that is busy, say reading the program's debug information at its start;
 * the library's drops what that cannot hold (overflow). */
static bool drain_allocs(struct sampler *s, uint64_t up_to)
{
	const unsigned char *slot;
	bool pushed = false;
	uint64_t now = util_now_ns();
	size_t bytes;

	s->allocs_waiting = false;
	/* Records still waiting for room (in the backlog) go first: the allocations wait in the
	 * shared ring meanwhile. */
	while (s->allocs && backlog_empty(&s->backlog) && shmring_read(&s->alloc_reader) < up_to &&
	       (slot = shmring_peek(&s->alloc_reader, now, &bytes))) {
		uint32_t stack;
		size_t len;
		struct perf_event_header *h;

		/* Past a dead producer's slot, peek may have gone beyond the bound. */
		if (shmring_read(&s->alloc_reader) >= up_to)
			break;
		if (bytes < sizeof(struct allocrec)) {
			shmring_release(&s->alloc_reader);
			continue;
		}
		memcpy(&stack, slot + offsetof(struct allocrec, stack_size), sizeof(stack));
		if (stack > ALLOCREC_STACK_MAX || stack > bytes - sizeof(struct allocrec))
			stack = 0;
		len = sizeof(*h) + sizeof(struct allocrec) + stack;
		h = ring_reserve(s->ring, len);
		if (!h) {
			s->allocs_waiting = true;
			break;
		}
		*h = (struct perf_event_header){ SAMPLE_RECORD_ALLOC, 0, (uint16_t)len };
		memcpy(h + 1, slot, len - sizeof(*h));
		memcpy((unsigned char *)(h + 1) + offsetof(struct allocrec, stack_size), &stack,
		       sizeof(stack));
		shmring_release(&s->alloc_reader);
		ring_commit(s->ring);
		pushed = true;
	}
	return pushed;
}

/* How far a pass may read the allocation ring: to what producers had reserved, as the target
 * says, but never more than one lap (a target that keeps writing, or forges the head, cannot
 * keep the sampler reading). */
static uint64_t allocs_bound(const struct sampler *s)
{
	uint64_t reserved = shmring_reserved(&s->alloc_reader), read = shmring_read(&s->alloc_reader);

	return (int64_t)(reserved - read) > (int64_t)s->alloc_reader.nslots
		       ? read + s->alloc_reader.nslots : reserved;
}

/* The allocation records left in the shared ring once the sampler thread ended, dropped and
 * counted: the collector did not make room for them in time. */
static void drop_allocs(struct sampler *s)
{
	uint64_t up_to = s->allocs ? allocs_bound(s) : 0;
	size_t bytes;

	while (s->allocs && shmring_read(&s->alloc_reader) < up_to &&
	       shmring_peek(&s->alloc_reader, util_now_ns(), &bytes)) {
		shmring_release(&s->alloc_reader);
		atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
	}
}

static void wake_consumer(struct sampler *s)
{
	uint64_t one = 1;

	if (s->wake_fd < 0)
		return;
	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the consumer is awake anyway */
	}
	s->unsignalled = false;
	s->signalled_ns = util_now_ns();
}

static bool drain_all(struct sampler *s)
{
	bool pushed = flush_backlog(s);
	uint64_t allocs_up_to = s->allocs ? allocs_bound(s) : 0;

	pushed |= drain_rings(s);
	pushed |= drain_allocs(s, allocs_up_to);
	s->unsignalled |= pushed;
	if (s->unsignalled && consumer_due(s))
		wake_consumer(s);
	return pushed;
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	struct pollfd *pfds = xcalloc(s->nrings + 1, sizeof(*pfds));

	for (size_t i = 0; i < s->nrings; i++)
		pfds[i] = (struct pollfd){ .fd = s->rings[i].fd, .events = POLLIN };
	pfds[s->nrings] = (struct pollfd){ .fd = s->stop_fd, .events = POLLIN };
	while (!atomic_load_explicit(&s->stop, memory_order_acquire)) {
		/* The allocation library wakes nobody: its ring is looked at every ALLOC_POLL_MS;
		 * nor does the collector as it makes room for the backlog. */
		poll(pfds, s->nrings + 1, s->allocs ? ALLOC_POLL_MS
					: backlog_empty(&s->backlog) ? POLL_MS : BACKLOG_POLL_MS);
		/* The task that owns a ring's event exited: its fd reports POLLHUP forever. Stop
		 * polling it; its ring is still drained every pass. */
		for (size_t i = 0; i < s->nrings; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				pfds[i].fd = -1;
		drain_all(s);
	}
	free(pfds);
	return NULL;
}

/* The waits found in the ring, each thread's switch records forwarded up to its switch in. Before
 * the thread starts: this thread is the ring's producer until then. */
static void push_waits(struct sampler *s, struct blocked *waits)
{
	for (size_t i = 0; i < blocked_count(waits); i++) {
		pid_t tid;
		size_t len;
		const void *rec = blocked_record(waits, i, &tid, &len);
		void *dst = ring_reserve(s->ring, len);

		if (dst) {
			memcpy(dst, rec, len);
			ring_commit(s->ring);
		} else if ((dst = backlog_reserve(&s->backlog, len, true))) {
			memcpy(dst, rec, len);
		} else {
			atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
			continue;
		}
		idmap_put(&s->switched, (uint32_t)tid, 1);
	}
}

int sampler_start(struct sampler *s, int wake_fd)
{
	struct blocked *waits = NULL;
	int err;

	s->wake_fd = wake_fd;
	if (s->nattached)
		waits = blocked_scan(s->attached, s->nattached,
				     s->config.callgraph == CALLGRAPH_DWARF ? s->config.stack_size : 0);
	/* A launched command's events arm themselves at its exec (enable_on_exec): enabling them
	 * now would sample proftop's own child searching PATH. */
	for (size_t i = 0; !s->launched && i < s->nfds; i++)
		if (ioctl(s->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0 && errno != ESRCH)
			diag_report(s->diag, DIAG_WARNING, "could not enable a perf event: %s; a thread "
				    "may go unsampled", strerror(errno));
	if (waits) {
		blocked_confirm(waits, util_now_ns());
		push_waits(s, waits);
		blocked_free(waits);
	}
	err = pthread_create(&s->thread, NULL, sampler_main, s);
	if (err)
		return -err;
	s->running = true;
	return 0;
}

void sampler_stop(struct sampler *s)
{
	if (!s->running)
		return;
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	atomic_store_explicit(&s->stop, true, memory_order_release);
	if (write(s->stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0) {
		/* saturated: the thread is awake already */
	}
	util_join(s->thread);
	s->running = false;
	/* The thread is gone: what the kernel still holds is ours to drain here; twice, for the
	 * allocations reserved while the first pass read the kernel's rings, and again while the
	 * allocations and the backlog wait for the collector (running still) to make room, for a
	 * while. */
	drain_all(s);
	drain_all(s);
	for (uint64_t until = util_now_ns() + FINAL_WAIT_NS;
	     (s->allocs_waiting || !backlog_empty(&s->backlog)) && util_now_ns() < until;) {
		wake_consumer(s);
		usleep(1000);
		drain_all(s);
	}
	drop_allocs(s);
	drop_backlog(s);
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	for (size_t i = 0; i < s->nrings; i++)
		munmap(s->rings[i].base, s->rings[i].data_size + (size_t)sysconf(_SC_PAGESIZE));
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	backlog_free(&s->backlog);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	idmap_free(&s->event_owner);
	idmap_free(&s->authority);
	idmap_free(&s->switched);
	idmap_free(&s->switch_ids);
	free(s->attached);
	free(s->fds);
	free(s->rings);
	free(s->cursors);
	free(s->bounce);
	free(s);
}

void sampler_set_alloc_ring(struct sampler *s, void *ring, uint32_t nslots, uint32_t slot_size)
{
	shmring_reader_init(&s->alloc_reader, ring, nslots, slot_size);
	s->allocs = true;
}

void sampler_counters(const struct sampler *s, struct counters *out)
{
	memset(out, 0, sizeof(*out));
	out->samples = atomic_load_explicit(&s->samples, memory_order_relaxed);
	out->switches = atomic_load_explicit(&s->switches, memory_order_relaxed);
	out->overflow = atomic_load_explicit(&s->overflow, memory_order_relaxed) +
			(s->allocs ? shmring_overflow(&s->alloc_reader) : 0);
	out->dropped = atomic_load_explicit(&s->dropped, memory_order_relaxed);
	out->throttled = atomic_load_explicit(&s->throttled, memory_order_relaxed);
}

bool sampler_freq_fixed(const struct sampler *s)
{
	return sample_mode_switches(s->config.mode) || sample_mode_allocations(s->config.mode);
}

unsigned sampler_set_freq(struct sampler *s, unsigned freq)
{
	if (freq > s->config.freq)
		freq = s->config.freq;
	if (freq < 1)
		freq = 1;
	atomic_store_explicit(&s->requested_freq, freq, memory_order_relaxed);
	return freq;
}

unsigned sampler_freq(const struct sampler *s)
{
	return atomic_load_explicit(&((struct sampler *)s)->requested_freq, memory_order_relaxed);
}
