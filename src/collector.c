/* collector.c — the collector: drains the ring, keeps the address spaces current, turns samples
 * into call stacks of function ids and adds them to the profile.
 *
 * Snapshots are made on request only: a reader that wants a fresh one (collector_snapshot())
 * raises `requested`, wakes the thread and waits on `published_cond` for the next publication.
 * So a run nobody looks at (batch with -n 0) makes none until the end, and a screen makes one
 * per refresh; their cost follows what changed since the last one (profile.c).
 *
 * Unwinding threads ("workers", --collectors N). Each worker owns a symbolizer (the address
 * spaces and the modules), an unwinder and the frame caches, and is one reader of the ring: it
 * reads every record in ring order, applies every address-space record (mmap, fork, exec, exit)
 * itself, and takes its share of the rest: the CPU samples by their sequence number (the k-th
 * goes to worker k % N), the context switches (samples and records) and exits of thread tid to
 * worker tid % N (a thread's wait is followed by one worker), a process's COMM to pid % N. So a
 * sample is always unwound against the maps of its own moment, with no lock on the way, and a
 * single busy process is spread over every worker. The price is N copies of the modules (each
 * worker reads the ELF and DWARF it needs itself: libdw's handles are not shared between
 * threads) and every worker reading every address-space record.
 *
 * With one worker (the default, but under -a on 32 CPUs or more; always in the allocation modes,
 * whose records need the one heap of blocks in use, in order) the collector thread is that worker, and
 * nothing is locked. With more, the collector thread only coordinates (wakes the workers, takes
 * debuginfod's files, publishes, makes stretches), and `profile_lock` guards the profiles and
 * the workers' waiting threads: a worker takes it to intern the functions of a frame it has not
 * resolved before, and to add its samples (a batch at a time); the collector thread to publish.
 * A snapshot then misses what the workers have not added yet: the records of their current
 * round and their batches (milliseconds); the final one misses nothing.
 *
 * JIT code a perf map names late (symbols.h): a worker's symbolizer tells it (jit_ops) when a map
 * whose addresses went unnamed changes, and the worker names them in the profiles, under
 * profile_lock; the end of the run looks at such maps a last time before the final publication.
 *
 * Threads: everything in struct collector but what publish_lock guards (`published`,
 * `published_range`, `range`, `ranged`, `publications`, `requested`, `thread_live`,
 * `stretches`, `end_ns`, `fetched`), what profile_lock guards (above) and the atomics (`stop`,
 * the CPU times, a worker's `truncated`) belongs to the collector thread while it runs, a
 * struct worker to its worker's thread, and after they ended everything belongs to whoever
 * holds late_lock: the session's thread, or a reader's (the HTTP endpoint's) making a stretch
 * itself (collector_stretch()). */
#include "proftop/collector.h"

#include "proftop/allocrec.h"
#include "proftop/asuser.h"
#include "proftop/blocked.h"
#include "proftop/diag.h"
#include "proftop/fetch.h"
#include "proftop/heap.h"
#include "proftop/idmap.h"
#include "proftop/lines.h"
#include "proftop/module.h"
#include "proftop/profile.h"
#include "proftop/ring.h"
#include "proftop/sampler.h"
#include "proftop/symbols.h"
#include "proftop/target.h"
#include "proftop/unwind.h"
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* How long a reader waits for a snapshot it asked for before it takes the newest there is. */
#define REQUEST_WAIT_NS 500000000ull
/* Samples of a process can still be in the ring (read from another CPU's kernel buffer) after
 * its EXIT record: forget its address space only this much later. */
#define EXIT_GRACE_NS 2000000000ull
/* A wait still going on is counted up to this long ago (count_waiting_so_far()): records take
 * tens of milliseconds from the kernel to the collector. */
#define WAIT_LAG_NS 200000000ull
/* How often a worker keeps its modules' DWARF within its share of the budget. */
#define TRIM_NS 1000000000ull

/* Resolved frames: (pid, address) -> its chain of (function, site): the function the address
 * is in, preceded by the functions inlined there, innermost first. Unwinding a deep stack
 * resolves the same return addresses sample after sample; each resolution is two binary
 * searches, a few hashes and a DWARF lookup (which the module keeps). A chain of up to
 * CHAIN_CACHED frames is kept in its entry; a deeper one (rare) is made again each time. Any
 * change to an address space bumps the generation, which empties the cache at once. */
#define FRAME_CACHE_SIZE 16384
#define CHAIN_CACHED 4
/* Frames of one sample, inlined ones included. */
#define SAMPLE_MAX_FRAMES (UNWIND_MAX_FRAMES * 2)

struct chain_frame {
	uint32_t func;
	uint32_t site;             /* PROFILE_NO_SITE: none */
};

struct frame_cache_entry {
	uint64_t addr;
	pid_t pid;
	uint32_t generation;
	uint32_t depth;
	struct chain_frame chain[CHAIN_CACHED];
};

/* Behind it, the same chains by (module, link-time address): a chain in an ELF file depends on
 * nothing else, so these outlive address-space changes (a build's compiler processes, a second
 * each, all map the same cc1 and libc, and each one's mmaps empty the cache above). Forgotten
 * only when modules' names change (a debug file arrived). */
#define MODULE_FRAME_CACHE_SIZE 16384

struct module_frame_entry {
	const struct module *mod;  /* NULL: empty */
	uint64_t addr;
	uint32_t generation;
	uint32_t depth;
	struct chain_frame chain[CHAIN_CACHED];
};

struct exited {
	pid_t pid;
	uint64_t at_ns;
};

/* A thread switched out, waiting to run again. Its switch sample gave the stack,
 * its switch-out record the time and whether it was preempted (still runnable); when it is
 * switched back in, the time between counts on that stack. A thread found waiting when proftop
 * attached (blocked.h) has its record's stack and time instead: its wait is a whole one, not one
 * switch in --switch-period, and ends at its next switch record. */
struct waiting {
	pid_t pid, tid;
	uint64_t out_ns;           /* 0: no switch-out seen since the stack */
	uint64_t counted_us;       /* of this wait, counted already (a long one, while it lasts) */
	bool preempted;
	bool attached;             /* found waiting at the attach */
	size_t depth;              /* 0: no stack */
	uint32_t funcs[];          /* SAMPLE_MAX_FRAMES, outermost first */
};

/* A reader's request for a stretch of the run (collector_stretch()), on the reader's stack. */
struct stretch_request {
	enum sample_mode mode;
	uint64_t from_s, to_s;
	struct snapshot *made;
	bool done;
	struct stretch_request *next;
};

/* A CPU sample unwound, waiting for the profiles (flush_batch()); its functions and then its
 * sites are in the worker's batch_frames. */
struct batched {
	pid_t pid, tid;
	size_t depth;
	uint64_t when_ns;
};

#define BATCH_SAMPLES 64

/* One unwinding thread's: see the file comment. */
struct worker {
	struct collector *c;
	unsigned index;            /* its reader of the ring, and its share of the records */
	struct symbolizer *symbolizer;
	struct unwinder *unwinder;
	struct frame_cache_entry *frames;
	uint32_t frames_generation;
	struct module_frame_entry *module_frames;
	uint32_t module_frames_generation;
	struct exited *exited;     /* processes to forget, oldest first */
	size_t nexited, exited_cap;
	_Atomic uint64_t truncated;
	uint64_t samples_seen;     /* CPU samples read, its own and the others' */
	size_t fetched_applied;    /* of the collector's fetched files (0 again: take them again) */
	/* Off-CPU mode (guarded by profile_lock when shared): tid → its struct waiting in waiting. */
	struct idmap waiting_of;
	struct waiting **waiting;  /* one per live thread seen switching (an exited one's is reused) */
	size_t nwaiting, waiting_cap;
	uint32_t *free_waiting;    /* indices of exited threads' */
	size_t nfree_waiting, free_waiting_cap;
	uint64_t record_ns;        /* when the record being handled was read */
	struct batched *batched;   /* several workers: BATCH_SAMPLES */
	size_t nbatched;
	uint32_t *batch_frames;    /* BATCH_SAMPLES * 2 * SAMPLE_MAX_FRAMES */
	size_t nbatch_frames;
	int wake_fd;               /* its own thread's (-1 for the collector thread's worker) */
	pthread_t thread;
	bool running;
	uint64_t trim_ns;          /* when its DWARF is next kept within its share */
	uint64_t sources_closed;   /* DWARF closed for memory so far (sources_closed_now) */
	_Atomic uint64_t sources_closed_now;
	_Atomic size_t sources_held; /* the bytes its modules' source lines held at the last trim */
};

struct collector {
	struct ring *ring;
	struct sampler *sampler;
	struct sample_config config;
	struct diag *diag;
	uint64_t sample_type, regs_mask;
	struct worker *workers;
	unsigned nworkers;
	pthread_mutex_t profile_lock; /* with several workers: see the file comment */
	/* One profile per mode (sample_mode) the run keeps (NULL for the others): the CPU's alone;
	 * when the run samples the context switches, cpu to wall; in an allocation run the four
	 * allocation ones, [first_mode, first_mode + nprofiles). Every function is interned in each,
	 * in the same order, so an id names one function in all (a view's selection holds when the
	 * mode shown changes); only the CPU's has sites. */
	struct profile *profiles[SAMPLE_NMODES];
	enum sample_mode first_mode;
	size_t nprofiles;
	uint64_t cpu_sample_us;    /* what a CPU sample stands for in the timed profiles */
	_Atomic int shown;         /* the mode whose snapshots are published */
	enum collector_source source;
	size_t trees_budget;       /* the call trees' part of --max-memory (0: no limit) */
	size_t sources_budget;     /* each worker's part for its modules' DWARF (0: no limit) */
	struct fetcher *fetcher;   /* debuginfod; NULL: not asked */
	struct fetched **fetched;  /* debug files sent so far, each worker's to take */
	size_t nfetched, fetched_cap;
	_Atomic size_t fetched_count; /* nfetched, for a look without the lock */
	uint64_t start_ns;
	uint64_t end_ns;           /* when collector_finish() first ran; 0 before */
	pthread_mutex_t late_lock; /* everything once the threads ended */
	struct stretch_request *stretches; /* asked for, not yet taken by the thread */
	int wake_fd;
	pthread_t thread;
	bool running;
	atomic_bool stop;
	pthread_mutex_t publish_lock;
	pthread_cond_t published_cond;
	uint64_t publications;     /* snapshots published so far */
	bool requested;            /* a reader waits for the next one */
	bool thread_live;          /* the thread runs and will answer requests */
	struct snapshot *published;
	struct snapshot *published_range; /* NULL unless ranged */
	struct snapshot_range range; /* what a reader selected, when ranged */
	bool ranged;
	_Atomic uint32_t traced_func; /* the function the timeline follows; 0: none */
	/* Allocation modes: the sampled blocks in use, and what is in use at the end of each second
	 * of the run (bytes, objects). */
	uint64_t alloc_mean;
	struct heap heap;
	double objects_carry;      /* the fraction of an object the rounding left over */
	uint64_t alloc_records;
	uint64_t (*inuse_seconds)[2];
	size_t ninuse_seconds, inuse_seconds_cap;
	_Atomic uint64_t cpu_user_ns, cpu_system_ns; /* the target's, set by the session */
	struct selfcost cost;      /* proftop's own, measured once per publication */
};

/* The profiles (and the workers' waiting threads), when several workers share them. */
static void lock_profiles(struct collector *c)
{
	if (c->nworkers > 1)
		pthread_mutex_lock(&c->profile_lock);
}

static void unlock_profiles(struct collector *c)
{
	if (c->nworkers > 1)
		pthread_mutex_unlock(&c->profile_lock);
}

/* --- JIT maps read late ---------------------------------------------------------------------- */

struct jit_naming {
	struct worker *w;
	pid_t pid;
};

/* A JIT address's name for profile_name_jit(): what the worker's symbolizer read of the map. */
static const char *jit_name_at(void *arg, uint64_t addr, const char **module)
{
	struct jit_naming *n = arg;

	return symbolizer_jit_name(n->w->symbolizer, n->pid, addr, module);
}

/* pid's perf map changed: its addresses interned unnamed take the names it gives now. */
static void jit_named(void *arg, pid_t pid)
{
	struct jit_naming n = { arg, pid };
	struct collector *c = n.w->c;

	lock_profiles(c);
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_name_jit(c->profiles[m], pid, jit_name_at, &n);
	unlock_profiles(c);
}

static void jit_forget(void *arg, pid_t pid)
{
	struct collector *c = ((struct worker *)arg)->c;

	lock_profiles(c);
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_jit_forget(c->profiles[m], pid);
	unlock_profiles(c);
}

static bool jit_waiting(void *arg, pid_t pid)
{
	struct collector *c = ((struct worker *)arg)->c;
	bool waiting;

	lock_profiles(c);
	waiting = profile_jit_waiting(c->profiles[c->first_mode], pid);
	unlock_profiles(c);
	return waiting;
}

static const struct symbolizer_jit_ops jit_ops = {
	.named = jit_named,
	.forget = jit_forget,
	.waiting = jit_waiting,
};

static void worker_init(struct collector *c, struct worker *w, unsigned index)
{
	w->c = c;
	w->index = index;
	w->symbolizer = symbolizer_new(c->diag);
	symbolizer_set_jit_ops(w->symbolizer, &jit_ops, w);
	/* Allocations come with registers and a stack copy, whatever -g says. */
	w->unwinder = unwinder_new(sample_mode_allocations(c->config.mode) ? CALLGRAPH_DWARF
									    : c->config.callgraph,
				   w->symbolizer, c->diag);
	w->frames = xcalloc(FRAME_CACHE_SIZE, sizeof(*w->frames));
	w->frames_generation = 1; /* zeroed entries are of no generation */
	w->module_frames = xcalloc(MODULE_FRAME_CACHE_SIZE, sizeof(*w->module_frames));
	w->module_frames_generation = 1;
	atomic_init(&w->truncated, 0);
	atomic_init(&w->sources_closed_now, 0);
	atomic_init(&w->sources_held, 0);
	idmap_init(&w->waiting_of);
	w->wake_fd = -1;
	if (c->nworkers > 1) {
		w->batched = xcalloc(BATCH_SAMPLES, sizeof(*w->batched));
		w->batch_frames = xcalloc(BATCH_SAMPLES * 2 * SAMPLE_MAX_FRAMES,
					  sizeof(*w->batch_frames));
	}
}

static void worker_free(struct worker *w)
{
	unwinder_free(w->unwinder);
	symbolizer_free(w->symbolizer);
	free(w->exited);
	free(w->frames);
	free(w->module_frames);
	for (size_t i = 0; i < w->nwaiting; i++)
		free(w->waiting[i]);
	free(w->waiting);
	free(w->free_waiting);
	idmap_free(&w->waiting_of);
	free(w->batched);
	free(w->batch_frames);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
}

int collector_new(struct collector **out, struct ring *ring, struct sampler *sampler,
		  const struct sample_config *config, struct diag *diag)
{
	struct collector *c;
	pthread_condattr_t cond_clock;
	unsigned nworkers = config->collectors ? config->collectors : 1;

	*out = NULL;
	/* Each worker reads the ring; allocation records need the one heap, in order. */
	if (nworkers != ring_readers(ring) || nworkers > COLLECTOR_MAX_WORKERS ||
	    (nworkers > 1 && sample_mode_allocations(config->mode)))
		return -EINVAL;
	c = xcalloc(1, sizeof(*c));
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		int err = -errno;

		free(c);
		return err;
	}
	c->ring = ring;
	c->sampler = sampler;
	c->diag = diag;
	c->config = *config;
	c->sample_type = sample_type_for(config);
	c->regs_mask = config->callgraph == CALLGRAPH_DWARF ? sample_regs_mask() : 0;
	c->nworkers = nworkers;
	c->workers = xcalloc(nworkers, sizeof(*c->workers));
	for (unsigned i = 0; i < nworkers; i++)
		worker_init(c, &c->workers[i], i);
	c->first_mode = sample_mode_family(config->mode, &c->nprofiles);
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++) {
		c->profiles[m] = profile_new(diag);
		if (config->system_wide)
			profile_set_by_process(c->profiles[m]);
		/* The one function a profile interns by itself (when it folds): first, in all. */
		if (c->nprofiles > 1)
			profile_func(c->profiles[m], NULL, "[other]", 0);
	}
	c->cpu_sample_us = (sample_period_ns(config->freq) + 500) / 1000;
	atomic_init(&c->shown, (int)config->mode);
	atomic_init(&c->fetched_count, 0);
	heap_init(&c->heap);
	c->alloc_mean = config->alloc_rate ? config->alloc_rate : ALLOCREC_DEFAULT_MEAN;
	pthread_mutex_init(&c->profile_lock, NULL);
	pthread_mutex_init(&c->publish_lock, NULL);
	pthread_mutex_init(&c->late_lock, NULL);
	pthread_condattr_init(&cond_clock);
	pthread_condattr_setclock(&cond_clock, CLOCK_MONOTONIC);
	pthread_cond_init(&c->published_cond, &cond_clock);
	pthread_condattr_destroy(&cond_clock);
	c->start_ns = util_now_ns();
	*out = c;
	return 0;
}

unsigned collector_default_workers(long cpus)
{
	long n = cpus / COLLECTOR_CPUS_PER_WORKER;

	return n < 1 ? 1 : n > COLLECTOR_DEFAULT_MAX_WORKERS ? COLLECTOR_DEFAULT_MAX_WORKERS
							     : (unsigned)n;
}

int collector_wake_fd(const struct collector *c)
{
	return c->wake_fd;
}

void collector_set_unwind_rules(struct collector *c, bool rules)
{
	for (unsigned i = 0; i < c->nworkers; i++)
		unwinder_set_rules(c->workers[i].unwinder, rules);
}

void collector_set_source(struct collector *c, enum collector_source source)
{
	c->source = source;
}

/* A module of the worker's symbolizer lacks symbols or DWARF: ask debuginfod, unless it sent
 * that build-id's file already (to another worker, or for another module of the same build-id):
 * then the worker takes the files sent again, before its next record (drain()), when the module
 * is in place. */
static void want_debug_file(void *arg, const unsigned char *build_id, size_t len,
			    const char *module)
{
	struct worker *w = arg;
	struct collector *c = w->c;
	bool sent = false;

	pthread_mutex_lock(&c->publish_lock);
	for (size_t i = 0; i < c->nfetched && !sent; i++)
		sent = c->fetched[i]->build_id_len == len &&
		       !memcmp(c->fetched[i]->build_id, build_id, len);
	pthread_mutex_unlock(&c->publish_lock);
	if (sent)
		w->fetched_applied = 0;
	else
		fetcher_want(c->fetcher, build_id, len, module);
}

bool collector_use_debuginfod(struct collector *c)
{
	c->fetcher = fetcher_new(c->wake_fd);
	if (c->fetcher)
		for (unsigned i = 0; i < c->nworkers; i++)
			symbolizer_want_debug_files(c->workers[i].symbolizer, want_debug_file,
						    &c->workers[i]);
	else if (errno)
		diag_report(c->diag, DIAG_WARNING, "debuginfod: no debug files are fetched: %s",
			    strerror(errno));
	return c->fetcher != NULL;
}

/* An address space changed: what the cache says may no longer hold. */
static void forget_frames(struct worker *w)
{
	w->frames_generation++;
}

/* The profiles' clock (profile_set_time()), in all of them. */
static void profiles_set_time(struct collector *c, uint64_t now_ns)
{
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_set_time(c->profiles[m], now_ns);
}

/* The id of a function (profile_func, or profile_inlined_func when inlined), in every profile. */
static uint32_t intern_func(struct collector *c, const char *module, const char *name,
			    uint64_t addr, bool inlined)
{
	uint32_t id = 0;

	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++) {
		uint32_t got = inlined ? profile_inlined_func(c->profiles[m], module, name)
				       : profile_func(c->profiles[m], module, name, addr);

		if (m == c->first_mode)
			id = got;
		else if (got != id)
			diag_report(c->diag, DIAG_ERROR, "internal: function %u of the %s profile is %u "
				    "in the %s profile", got, sample_mode_name((enum sample_mode)m), id,
				    sample_mode_name(c->first_mode));
	}
	return id;
}

/* The id of pid's JIT address addr that no map names yet (profile_jit_func()), in every
 * profile. */
static uint32_t intern_jit_func(struct collector *c, const char *module, uint64_t addr, pid_t pid)
{
	uint32_t id = 0;

	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++) {
		uint32_t got = profile_jit_func(c->profiles[m], module, addr, pid);

		if (m == c->first_mode)
			id = got;
		else if (got != id)
			diag_report(c->diag, DIAG_ERROR, "internal: JIT address %u of the %s profile is "
				    "%u in the %s profile", got, sample_mode_name((enum sample_mode)m), id,
				    sample_mode_name(c->first_mode));
	}
	return id;
}

static void func_code(struct collector *c, uint32_t func, const char *path, uint64_t start,
		      uint64_t end)
{
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_func_code(c->profiles[m], func, path, start, end);
}

static void func_no_lines(struct collector *c, uint32_t func, const char *why)
{
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_func_no_lines(c->profiles[m], func, why);
}

/* The site of func at addr (profile_site()): the CPU profile's, the one that counts sites; none in
 * an allocation run, whose counts are not samples. */
static uint32_t site_of(struct collector *c, uint32_t func, uint64_t addr, const char *file,
			unsigned line)
{
	struct profile *cpu = c->profiles[SAMPLE_MODE_CPU];

	return cpu ? profile_site(cpu, func, addr, file, line) : PROFILE_NO_SITE;
}

/* The chain of the address sym describes in pid into out[] (room for LINES_MAX_FRAMES):
 * innermost first, the function of the symbol last. Returns its length. The module's part (its
 * line tables, the slow part the first time) is read before the profiles are locked. */
static size_t make_chain(struct worker *w, pid_t pid, const struct symbol *sym,
			 struct chain_frame *out)
{
	struct collector *c = w->c;
	struct lines_frame lf[LINES_MAX_FRAMES];
	bool lines = c->source != COLLECTOR_SOURCE_OFF && sym->elf, whole, news = false;
	const char *problem = NULL;
	size_t n = 0, depth = 0;
	uint32_t func;

	if (lines) {
		n = module_source(sym->elf, sym->module_addr, lf, LINES_MAX_FRAMES - 1);
		problem = module_source_problem(sym->elf, &news);
		if (news)
			diag_report(c->diag, DIAG_WARNING, "%s", problem);
	}
	lock_profiles(c);
	if (!sym->function && sym->jit_addr)
		func = intern_jit_func(c, sym->module, sym->jit_addr, pid);
	else
		func = intern_func(c, sym->module, sym->function, sym->function || sym->bounded ?
				   sym->function_addr : sym->module_addr, false);
	if (sym->function && sym->elf)
		func_code(c, func, module_path(sym->elf), sym->function_addr, sym->function_end);
	if (!lines) {
		out[depth++] = (struct chain_frame){ func, PROFILE_NO_SITE };
		unlock_profiles(c);
		return depth;
	}
	/* Unless the chain was cut, its last frame is the symbol's own function: its line is that
	 * function's, and the frames before it were inlined into it. */
	whole = n && !lf[n - 1].inlined;
	if (c->source == COLLECTOR_SOURCE_INLINE)
		for (size_t i = 0; i + whole < n; i++)
			out[depth++] = (struct chain_frame){
				intern_func(c, sym->module,
					    lf[i].function ? lf[i].function : "[inlined]", 0, true),
				PROFILE_NO_SITE,
			};
	for (size_t i = 0; i < depth; i++) {
		out[i].site = site_of(c, out[i].func, sym->module_addr, lf[i].file, lf[i].line);
		if (problem && !lf[i].file)
			func_no_lines(c, out[i].func, problem);
	}
	out[depth++] = (struct chain_frame){
		func, site_of(c, func, sym->module_addr, whole ? lf[n - 1].file : NULL,
			      whole ? lf[n - 1].line : 0),
	};
	if (problem && !(whole && lf[n - 1].file))
		func_no_lines(c, func, problem);
	unlock_profiles(c);
	return depth;
}

struct naming {
	struct collector *c;
	struct module *mod;
};

/* A function's name for profile_name_funcs(): the one starting at addr. */
static const char *name_at(void *arg, uint64_t addr, uint64_t *end)
{
	struct naming *n = arg;
	uint64_t start;
	const char *name = module_lookup_range(n->mod, addr, &start, end);

	return name && start == addr ? name : NULL;
}

static void module_named(void *arg, const char *module, struct module *mod)
{
	struct naming n = { arg, mod };

	lock_profiles(n.c);
	for (size_t m = n.c->first_mode; m < n.c->first_mode + n.c->nprofiles; m++)
		profile_name_funcs(n.c->profiles[m], module, module_path(mod), name_at, &n);
	unlock_profiles(n.c);
}

static void wake_fd_write(int fd)
{
	if (write(fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0) {
		/* saturated: the thread is awake already */
	}
}

static void wake_workers(struct collector *c)
{
	for (unsigned i = 0; i < c->nworkers; i++)
		if (c->workers[i].wake_fd >= 0)
			wake_fd_write(c->workers[i].wake_fd);
}

/* Debug files debuginfod sent, or could not: the ones sent go to every worker
 * (apply_fetched()); the collector thread reports the rest. */
static void take_fetched(struct collector *c)
{
	struct fetched done;
	bool any = false;

	while (c->fetcher && fetcher_take(c->fetcher, &done)) {
		if (done.err == -ENOENT) {
			diag_report(c->diag, DIAG_INFO, "debuginfod has no debug file for %s", done.name);
		} else if (done.err) {
			diag_report(c->diag, DIAG_WARNING, "debuginfod: no debug file could be fetched from "
				    "%s: %s; stripped files' functions show as module+0x...",
				    fetcher_urls(c->fetcher), strerror(-done.err));
		} else {
			struct fetched *f = xmalloc(sizeof(*f));

			*f = done; /* (its strings go with it) */
			pthread_mutex_lock(&c->publish_lock);
			xgrow((void **)&c->fetched, &c->fetched_cap, c->nfetched + 1, sizeof(*c->fetched));
			c->fetched[c->nfetched++] = f;
			atomic_store_explicit(&c->fetched_count, c->nfetched, memory_order_relaxed);
			pthread_mutex_unlock(&c->publish_lock);
			any = true;
			continue;
		}
		fetched_clear(&done);
	}
	if (any)
		wake_workers(c);
}

/* The worker's symbolizer takes the debug files sent since it last looked: what was stripped is
 * named from now on (and what had only its start address is named where it stood), what had no
 * lines gets them. */
static void apply_fetched(struct worker *w)
{
	struct collector *c = w->c;

	for (;;) {
		struct fetched *f = NULL;
		char *why = NULL;

		pthread_mutex_lock(&c->publish_lock);
		if (w->fetched_applied < c->nfetched)
			f = c->fetched[w->fetched_applied++];
		pthread_mutex_unlock(&c->publish_lock);
		if (!f)
			return;
		/* (every worker reports and names: the channel says a text once, and naming
		 * what is named already changes nothing) */
		if (symbolizer_add_debug_file(w->symbolizer, f->build_id, f->build_id_len, f->path,
					      &why, module_named, c)) {
			forget_frames(w);
			w->module_frames_generation++;
			diag_report(c->diag, DIAG_INFO, "debuginfod sent the debug file of %s: its "
				    "functions and lines are named", f->name);
		} else if (why) {
			diag_report(c->diag, DIAG_WARNING, "debuginfod sent for %s: %s; not used",
				    f->name, why);
		}
		free(why);
	}
}

/* Profiling is over: nothing would take what arrives from now on. */
static void stop_fetching(struct collector *c)
{
	char name[64];
	size_t waiting;

	if (!c->fetcher)
		return;
	waiting = fetcher_status(c->fetcher, name, sizeof(name));
	if (name[0])
		diag_report(c->diag, DIAG_WARNING, "debuginfod was still fetching the debug file of %s "
			    "when profiling ended%s: not used", name,
			    waiting ? " (more were waiting)" : "");
	for (unsigned i = 0; i < c->nworkers; i++)
		symbolizer_want_debug_files(c->workers[i].symbolizer, NULL, NULL);
	fetcher_free(c->fetcher);
	c->fetcher = NULL;
}

/* The module cache's slot for addr in pid, with its key, when an ELF file with an image maps it
 * (the symbolizer then resolves addr from that file alone); else NULL. */
static struct module_frame_entry *module_frame(struct worker *w, pid_t pid, uint64_t addr,
					       const struct module **mod, uint64_t *module_addr)
{
	struct unwind_info info;

	if (symbolizer_unwind_info(w->symbolizer, pid, addr, &info) < 0)
		return NULL;
	*mod = info.module;
	*module_addr = addr - info.bias;
	return &w->module_frames[util_hash_u64(*module_addr ^ ((uint64_t)(uintptr_t)*mod << 16)) &
				 (MODULE_FRAME_CACHE_SIZE - 1)];
}

static const struct chain_frame *cache_frame(struct worker *w, struct frame_cache_entry *e,
					     pid_t pid, uint64_t addr,
					     const struct chain_frame *chain, size_t depth)
{
	e->addr = addr;
	e->pid = pid;
	e->generation = w->frames_generation;
	e->depth = (uint32_t)depth;
	memcpy(e->chain, chain, depth * sizeof(*chain));
	return e->chain;
}

/* The chain of addr in pid: from the caches, or made and cached. */
static const struct chain_frame *resolve_frame(struct worker *w, pid_t pid, uint64_t addr,
					       struct chain_frame *scratch, size_t *depth)
{
	struct frame_cache_entry *e =
		&w->frames[util_hash_u64(addr ^ ((uint64_t)(uint32_t)pid << 40)) & (FRAME_CACHE_SIZE - 1)];
	const struct module *mod = NULL;
	struct module_frame_entry *me;
	uint64_t module_addr = 0;
	struct symbol sym;

	if (e->generation == w->frames_generation && e->addr == addr && e->pid == pid) {
		*depth = e->depth;
		return e->chain;
	}
	me = module_frame(w, pid, addr, &mod, &module_addr);
	if (me && me->generation == w->module_frames_generation && me->mod == mod &&
	    me->addr == module_addr) {
		*depth = me->depth;
		return cache_frame(w, e, pid, addr, me->chain, me->depth);
	}
	symbolizer_resolve(w->symbolizer, pid, addr, &sym);
	*depth = make_chain(w, pid, &sym, scratch);
	/* An unnamed address may be named later (a JIT appends to its perf map): not cached. */
	if ((!sym.function && !sym.bounded) || *depth > CHAIN_CACHED)
		return scratch;
	if (me && sym.elf == mod) {
		*me = (struct module_frame_entry){ .mod = mod, .addr = module_addr,
						   .generation = w->module_frames_generation,
						   .depth = (uint32_t)*depth };
		memcpy(me->chain, scratch, *depth * sizeof(*scratch));
	}
	return cache_frame(w, e, pid, addr, scratch, *depth);
}

/* The call stack of the addresses ips[] of pid, innermost first (the first the instruction
 * itself when first_exact, else a return address like the others), as function ids and their
 * sites, outermost first; returns its depth. */
static size_t stack_of(struct worker *w, pid_t pid, const uint64_t *ips, size_t n,
		       bool first_exact, bool truncated, uint32_t *funcs, uint32_t *sites)
{
	struct chain_frame frames[SAMPLE_MAX_FRAMES], scratch[LINES_MAX_FRAMES];
	size_t depth = 0;

	/* Return addresses point after the call: look up the byte before them to stay inside the
	 * calling function (and on the call's line). A stack too deep with its inlined frames
	 * loses its outermost ones. */
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const struct chain_frame *chain =
			resolve_frame(w, pid, i == 0 && first_exact ? ips[i] : ips[i] - 1, scratch, &len);

		if (len > SAMPLE_MAX_FRAMES - depth) {
			truncated = true;
			len = SAMPLE_MAX_FRAMES - depth;
		}
		memcpy(&frames[depth], chain, len * sizeof(*chain));
		depth += len;
	}
	if (truncated)
		atomic_fetch_add_explicit(&w->truncated, 1, memory_order_relaxed);
	/* The profile wants the outermost frame first. */
	for (size_t i = 0; i < depth; i++) {
		funcs[depth - 1 - i] = frames[i].func;
		sites[depth - 1 - i] = frames[i].site;
	}
	return depth;
}

/* The sample's call stack as function ids and their sites, outermost first; returns its depth. */
static size_t sample_stack(struct worker *w, const struct sample_record *r, uint32_t *funcs,
			   uint32_t *sites)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	bool truncated;
	size_t n = unwinder_unwind(w->unwinder, r, ips, UNWIND_MAX_FRAMES, &truncated);

	return stack_of(w, (pid_t)r->pid, ips, n, true, truncated, funcs, sites);
}

/* -a: a process is named at its first sample (unless a COMM record, at an exec, named it):
 * as /proc says then, which is its parent's name for a fork that did not exec; "" when it is
 * gone already. Named lazily, so the processes never sampled (most of a machine's) cost
 * nothing. Under profile_lock when shared. */
static void name_at_first_sample(struct collector *c, pid_t pid)
{
	char path[64], comm[32];

	if (profile_comm(c->profiles[c->first_mode], pid))
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	util_read_small(path, comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_set_comm(c->profiles[m], pid, pid, comm);
}

/* Who runs a thread is looked at its first sample, and again at the first after an exec (a COMM
 * record forgets it), as /proc says then (gone: never known), so that the frontends read its
 * source files only as its owner could (asuser.h). The thread's, or its process's main thread's
 * under -a (a process is one entry there). Under profile_lock when shared. */
static void owner_at_first_sample(struct collector *c, pid_t pid, pid_t tid)
{
	struct asuser owner;
	bool known;

	if (c->config.system_wide)
		tid = pid;
	if (profile_owner_seen(c->profiles[c->first_mode], tid))
		return;
	known = !asuser_of_thread(pid, tid, &owner);
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_set_owner(c->profiles[m], pid, tid, known ? &owner : NULL);
}

/* A CPU sample's stack into the profiles (under profile_lock when shared). */
static void add_sample(struct collector *c, pid_t pid, pid_t tid, const uint32_t *funcs,
		       const uint32_t *sites, size_t depth, uint64_t when_ns)
{
	profiles_set_time(c, when_ns);
	if (c->config.system_wide)
		name_at_first_sample(c, pid);
	owner_at_first_sample(c, pid, tid);
	profile_add_sites(c->profiles[SAMPLE_MODE_CPU], pid, tid, funcs,
			  c->source == COLLECTOR_SOURCE_OFF ? NULL : sites, depth);
	if (c->profiles[SAMPLE_MODE_WALL])
		profile_add_n(c->profiles[SAMPLE_MODE_WALL], pid, tid, funcs, depth, c->cpu_sample_us);
}

/* Several workers: the samples a worker unwound wait in its batch, and go into the profiles
 * together, under one hold of the lock (one per sample had two workers slower than one: the
 * lock and the profile's lines going back and forth between their CPUs). */
static void flush_batch(struct worker *w)
{
	struct collector *c = w->c;
	size_t at = 0;

	if (!w->nbatched)
		return;
	lock_profiles(c);
	for (size_t i = 0; i < w->nbatched; i++) {
		const struct batched *b = &w->batched[i];

		add_sample(c, b->pid, b->tid, w->batch_frames + at, w->batch_frames + at + b->depth,
			   b->depth, b->when_ns);
		at += 2 * b->depth;
	}
	unlock_profiles(c);
	w->nbatched = 0;
	w->nbatch_frames = 0;
}

static void handle_sample(struct worker *w, const struct sample_record *r)
{
	struct collector *c = w->c;
	uint32_t funcs[SAMPLE_MAX_FRAMES], sites[SAMPLE_MAX_FRAMES];
	struct sample_record user = *r;
	size_t depth;

	if (!c->profiles[SAMPLE_MODE_CPU]) /* not this run's */
		return;
	if (!c->config.kernel && !r->sample.user && r->sample.regs_abi)
		user.sample.user = true;
	depth = sample_stack(w, &user, funcs, sites);
	if (c->nworkers == 1) {
		add_sample(c, (pid_t)r->pid, (pid_t)r->tid, funcs, sites, depth, w->record_ns);
		return;
	}
	if (w->nbatched == BATCH_SAMPLES ||
	    w->nbatch_frames + 2 * depth > BATCH_SAMPLES * 2 * SAMPLE_MAX_FRAMES)
		flush_batch(w);
	w->batched[w->nbatched++] = (struct batched){ (pid_t)r->pid, (pid_t)r->tid, depth,
						       w->record_ns };
	memcpy(w->batch_frames + w->nbatch_frames, funcs, depth * sizeof(*funcs));
	memcpy(w->batch_frames + w->nbatch_frames + depth, sites, depth * sizeof(*sites));
	w->nbatch_frames += 2 * depth;
}

/* --- context switches ------------------------------------------------------------------------- */

/* The thread's struct waiting, NULL when it has none (an index left by an exited thread of the
 * same tid belongs to another thread now, or to none). */
static struct waiting *find_waiting(struct worker *w, uint32_t tid)
{
	uint32_t at = idmap_get(&w->waiting_of, tid);

	return at != IDMAP_MISSING && w->waiting[at]->tid == (pid_t)tid ? w->waiting[at] : NULL;
}

static struct waiting *waiting_of(struct worker *w, const struct sample_record *r)
{
	struct waiting *wt = find_waiting(w, r->tid);
	uint32_t at;

	if (wt)
		return wt;
	if (w->nfree_waiting) {
		at = w->free_waiting[--w->nfree_waiting];
	} else {
		xgrow((void **)&w->waiting, &w->waiting_cap, w->nwaiting + 1, sizeof(*w->waiting));
		w->waiting[w->nwaiting] = xcalloc(1, sizeof(struct waiting) +
						     SAMPLE_MAX_FRAMES * sizeof(uint32_t));
		at = (uint32_t)w->nwaiting++;
	}
	w->waiting[at]->tid = (pid_t)r->tid;
	idmap_put(&w->waiting_of, r->tid, at);
	return w->waiting[at];
}

/* A context switch's sample: the stack the thread leaves the CPU with. The event fires in the
 * kernel; without --kernel the stack starts at the user registers the thread entered it with. */
static void switch_sample(struct worker *w, const struct sample_record *r)
{
	struct collector *c = w->c;
	struct sample_record user = *r;
	uint32_t funcs[SAMPLE_MAX_FRAMES], sites[SAMPLE_MAX_FRAMES];
	struct waiting *wt;
	size_t depth;

	/* Dwarf stacks: without user registers there is no user stack to show: a kernel thread
	 * (-a), or a thread's last switch out on its way out of exit(). Only --kernel shows such
	 * waits. */
	if (!c->config.kernel && c->regs_mask && !r->sample.regs_abi)
		return;
	if (!c->config.kernel && r->sample.regs_abi)
		user.sample.user = true;
	depth = sample_stack(w, &user, funcs, sites);
	lock_profiles(c);
	if (c->config.system_wide)
		name_at_first_sample(c, (pid_t)r->pid);
	owner_at_first_sample(c, (pid_t)r->pid, (pid_t)r->tid);
	wt = waiting_of(w, r);
	wt->pid = (pid_t)r->pid;
	wt->tid = (pid_t)r->tid;
	wt->out_ns = 0;
	wt->attached = false;
	wt->depth = depth;
	memcpy(wt->funcs, funcs, depth * sizeof(*funcs));
	unlock_profiles(c);
}

/* The time w was switched out until now_ns counts on its stack, in microseconds: as blocked, or
 * as runnable when it was preempted (runnable: not waiting on anything), and in the wall clock
 * either way. With one switch in N sampled, N times that: it stands for the N-1 switches not
 * sampled too. */
static void count_waited(struct collector *c, struct waiting *w, uint64_t now_ns)
{
	uint64_t us = now_ns > w->out_ns ? (now_ns - w->out_ns + 500) / 1000 : 0;

	if (!w->attached)
		us *= c->config.switch_period > 1 ? c->config.switch_period : 1;
	if (us <= w->counted_us)
		return;
	us -= w->counted_us;
	w->counted_us += us;
	profile_add_n(c->profiles[w->preempted ? SAMPLE_MODE_RUNNABLE : SAMPLE_MODE_OFFCPU], w->pid,
		      w->tid, w->funcs, w->depth, us);
	profile_add_n(c->profiles[SAMPLE_MODE_WALL], w->pid, w->tid, w->funcs, w->depth, us);
}

/* Out: when, and whether preempted. In: the time since counts (count_waited()). The switches
 * between samples have no stack: nothing is waiting for them. */
static void switch_record(struct worker *w, const struct sample_record *r)
{
	struct collector *c = w->c;
	struct waiting *wt;

	lock_profiles(c);
	wt = find_waiting(w, r->tid);
	if (!wt || !wt->depth) {
		/* a switch between samples */
	} else if (wt->attached && r->switched.out) {
		/* it ran since the attach after all (blocked.h makes sure it did not): no wait */
		wt->depth = 0;
		wt->out_ns = 0;
	} else if (r->switched.out) {
		if (!wt->out_ns) { /* the switch the stack was taken at */
			wt->out_ns = r->time;
			wt->counted_us = 0;
			wt->preempted = r->switched.preempted;
		}
	} else {
		if (wt->out_ns) {
			profiles_set_time(c, w->record_ns);
			count_waited(c, wt, r->time);
		}
		wt->depth = 0;
		wt->out_ns = 0;
	}
	unlock_profiles(c);
}

/* Before a publication: the waits still going on count so far, so that a thread blocked for
 * minutes shows now, in the seconds it waited, not all at once when it wakes. Up to
 * WAIT_LAG_NS ago only: a thread back in since then may have its record still on the way,
 * and time counted is not taken back. Under profile_lock when shared. */
static void count_waiting_so_far(struct collector *c, uint64_t now_ns)
{
	if (now_ns < WAIT_LAG_NS)
		return;
	profiles_set_time(c, now_ns - WAIT_LAG_NS); /* (the seconds they fall in) */
	for (unsigned k = 0; k < c->nworkers; k++)
		for (size_t i = 0; i < c->workers[k].nwaiting; i++) {
			struct waiting *w = c->workers[k].waiting[i];

			if (w->tid && w->depth && w->out_ns && w->out_ns < now_ns - WAIT_LAG_NS)
				count_waited(c, w, now_ns - WAIT_LAG_NS);
		}
}

/* Profiling ended: the threads still switched out waited until now (the switch records' clock
 * is CLOCK_MONOTONIC, as util_now_ns()'s). */
static void count_still_waiting(struct collector *c, uint64_t now_ns)
{
	profiles_set_time(c, now_ns);
	for (unsigned k = 0; k < c->nworkers; k++)
		for (size_t i = 0; i < c->workers[k].nwaiting; i++) {
			struct waiting *w = c->workers[k].waiting[i];

			if (w->tid && w->depth && w->out_ns)
				count_waited(c, w, now_ns);
			w->depth = 0;
			w->out_ns = 0;
		}
}

/* A thread that ended will not come back: its struct waiting is free for another. */
static void forget_waiting(struct worker *w, pid_t tid)
{
	struct waiting *wt;

	lock_profiles(w->c);
	wt = find_waiting(w, (uint32_t)tid);
	if (wt) {
		wt->tid = 0;
		wt->depth = 0;
		xgrow((void **)&w->free_waiting, &w->free_waiting_cap, w->nfree_waiting + 1,
		      sizeof(*w->free_waiting));
		w->free_waiting[w->nfree_waiting++] = idmap_get(&w->waiting_of, (uint32_t)tid);
	}
	unlock_profiles(w->c);
}

static void alloc_record(struct worker *w, const struct perf_event_header *h, size_t len);

/* Is the record of thread (or process) id this worker's share? */
static bool owns_id(const struct worker *w, uint32_t id)
{
	return id % w->c->nworkers == w->index;
}

/* A blocked record's kernel frames appended to funcs (outermost first: the record's innermost
 * last), each named as a kernel frame of --kernel would be when /proc/kallsyms knows it, else by
 * its name alone. Returns the new depth. */
static size_t kernel_frames(struct worker *w, const char *frames, size_t len, uint32_t *funcs,
			    size_t depth)
{
	const char *names[BLOCKED_KFRAMES_MAX], *modules[BLOCKED_KFRAMES_MAX];
	const char *at = frames, *end = frames + len;
	size_t n = 0;

	while (n < BLOCKED_KFRAMES_MAX && blocked_next_kframe(&at, end, &names[n], &modules[n]))
		n++;
	while (n-- > 0 && depth < SAMPLE_MAX_FRAMES) {
		char module[BLOCKED_NAME_MAX + 2];
		struct symbol sym;

		if (modules[n])
			snprintf(module, sizeof(module), "[%s]", modules[n]);
		lock_profiles(w->c);
		if (symbolizer_kernel_function(w->symbolizer, names[n], modules[n] ? module : NULL, &sym))
			funcs[depth++] = intern_func(w->c, sym.module, sym.function, sym.function_addr, false);
		else
			funcs[depth++] = intern_func(w->c, modules[n] ? module : "[kernel.kallsyms]",
						     names[n], 0, false);
		unlock_profiles(w->c);
	}
	return depth;
}

/* A thread found waiting at the attach (blocked.h): its wait counts from the record's time on
 * its user stack, unwound as a switch sample's, with the kernel's frames over it under --kernel;
 * on the kernel's frames alone when the user stack could not be read. */
static void blocked_wait(struct worker *w, const void *data, size_t len)
{
	struct collector *c = w->c;
	uint32_t funcs[SAMPLE_MAX_FRAMES], sites[SAMPLE_MAX_FRAMES];
	struct blockedrec b;
	struct sample_record r;
	struct waiting *wt;
	const char *kernel;
	size_t kernel_len, depth = 0;

	if (!c->profiles[SAMPLE_MODE_OFFCPU] ||
	    sample_parse_blocked(data, len, &b, &r, &kernel, &kernel_len) || !owns_id(w, b.tid))
		return;
	if (b.ip)
		depth = sample_stack(w, &r, funcs, sites);
	if (c->config.kernel || !depth)
		depth = kernel_frames(w, kernel, kernel_len, funcs, depth);
	if (!depth)
		return; /* nothing known of it: not counted, as a switch without a stack */
	lock_profiles(c);
	owner_at_first_sample(c, (pid_t)b.pid, (pid_t)b.tid);
	wt = waiting_of(w, &r);
	wt->pid = (pid_t)b.pid;
	wt->out_ns = b.since_ns;
	wt->counted_us = 0;
	wt->preempted = false;
	wt->attached = true;
	wt->depth = depth;
	memcpy(wt->funcs, funcs, depth * sizeof(*funcs));
	unlock_profiles(c);
}

/* One record, in ring order (the file comment says which ones are this worker's). */
static void handle_record(struct worker *w, const void *data, size_t len)
{
	struct collector *c = w->c;
	struct sample_record r;
	const struct perf_event_header *h = data;

	if (len < sizeof(*h))
		return;
	if (h->type == SAMPLE_RECORD_ALLOC) {
		alloc_record(w, h, len); /* (one worker in the allocation modes) */
		return;
	}
	if (h->type == SAMPLE_RECORD_BLOCKED) {
		blocked_wait(w, data, len);
		return;
	}
	/* A CPU sample, told by its header: another worker's is not even parsed. */
	if (h->type == PERF_RECORD_SAMPLE &&
	    !((h->misc & SAMPLE_MISC_SWITCH_EVENT) && c->profiles[SAMPLE_MODE_OFFCPU])) {
		if (w->samples_seen++ % c->nworkers == w->index &&
		    sample_parse(data, len, c->sample_type, c->regs_mask, &r) == 0)
			handle_sample(w, &r);
		return;
	}
	if (sample_parse(data, len, c->sample_type, c->regs_mask, &r) < 0)
		return;
	switch (r.kind) {
	case SAMPLE_KIND_SAMPLE: /* a context switch's */
		if (owns_id(w, r.tid))
			switch_sample(w, &r);
		break;
	case SAMPLE_KIND_SWITCH:
		if (c->profiles[SAMPLE_MODE_OFFCPU] && owns_id(w, r.tid))
			switch_record(w, &r);
		break;
	case SAMPLE_KIND_MMAP:
		forget_frames(w);
		symbolizer_mmap(w->symbolizer, (pid_t)r.pid, r.mmap.start, r.mmap.len, r.mmap.pgoff,
				r.mmap.maj, r.mmap.min, r.mmap.ino, r.mmap.prot, r.mmap.path);
		break;
	case SAMPLE_KIND_COMM:
		if (r.comm.exec) {
			forget_frames(w);
			symbolizer_exec(w->symbolizer, (pid_t)r.pid);
			unwinder_forget(w->unwinder, (pid_t)r.pid);
		}
		if (!owns_id(w, r.pid))
			break;
		lock_profiles(c);
		for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++) {
			profile_set_comm(c->profiles[m], (pid_t)r.pid, (pid_t)r.tid, r.comm.comm);
			if (r.comm.exec)
				profile_forget_owner(c->profiles[m], (pid_t)r.pid, (pid_t)r.tid);
		}
		unlock_profiles(c);
		break;
	case SAMPLE_KIND_FORK:
		if (r.pid != r.task.ppid) /* a new process, not a new thread */
			symbolizer_fork(w->symbolizer, (pid_t)r.task.ppid, (pid_t)r.pid);
		break;
	case SAMPLE_KIND_EXIT:
		if (owns_id(w, r.tid))
			forget_waiting(w, (pid_t)r.tid);
		/* Any thread's exit may be its process's last (the main thread can end first). */
		if (!w->nexited || w->exited[w->nexited - 1].pid != (pid_t)r.pid) {
			xgrow((void **)&w->exited, &w->exited_cap, w->nexited + 1, sizeof(*w->exited));
			w->exited[w->nexited++] = (struct exited){ (pid_t)r.pid, w->record_ns };
		}
		break;
	default:
		break;
	}
}

/* --- allocations ------------------------------------------------------------------------------ */

/* The in-use profiles are made again at each publication: no history, no budget of their own
 * (they hold what the blocks in use hold). */
static bool made_again(enum sample_mode mode)
{
	return mode == SAMPLE_MODE_INUSE || mode == SAMPLE_MODE_INUSE_OBJECTS;
}

/* The second of the run now_ns is in. */
static uint64_t run_second_of(const struct collector *c, uint64_t now_ns)
{
	return now_ns > c->start_ns ? (now_ns - c->start_ns) / 1000000000u : 0;
}

/* What is in use now stands for every second up to now's (the timeline of the in-use modes). */
static void note_inuse(struct collector *c, uint64_t now_ns)
{
	uint64_t second = run_second_of(c, now_ns);

	if (second >= (uint64_t)1 << 32) /* a clock gone wrong: no room for it */
		return;
	while (c->ninuse_seconds <= second) {
		xgrow((void **)&c->inuse_seconds, &c->inuse_seconds_cap, c->ninuse_seconds + 1,
		      sizeof(*c->inuse_seconds));
		c->inuse_seconds[c->ninuse_seconds][0] = c->heap.bytes;
		c->inuse_seconds[c->ninuse_seconds++][1] = c->heap.objects;
	}
	c->inuse_seconds[second][0] = c->heap.bytes;
	c->inuse_seconds[second][1] = c->heap.objects;
}

/* The allocation's call stack, unwound from the registers and the stack its record carries (r),
 * without the allocation library's frames, where the unwinding starts; as function ids and
 * their sites, outermost first; returns its depth. */
static size_t alloc_stack(struct worker *w, const struct allocrec *a, const struct sample_record *r,
			  uint32_t *funcs, uint32_t *sites)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	bool truncated;
	size_t n = unwinder_unwind(w->unwinder, r, ips, UNWIND_MAX_FRAMES, &truncated), skip = 0;

	while (skip < n && ips[skip] >= a->code_start && ips[skip] < a->code_end)
		skip++;
	/* The first frame left is the allocator's caller: a return address like the others. */
	return stack_of(w, (pid_t)a->pid, ips + skip, n - skip, false, truncated || skip == n,
			funcs, sites);
}

/* A sampled allocation: counted in the allocated profiles, and kept until its free. The record
 * comes from the target's memory: sample_parse_alloc() checked its bounds, the rest here. */
static void handle_alloc(struct worker *w, const struct allocrec *a, const struct sample_record *r)
{
	struct collector *c = w->c;
	uint32_t funcs[SAMPLE_MAX_FRAMES], sites[SAMPLE_MAX_FRAMES];
	double scale, objects;
	uint64_t bytes, whole;
	size_t depth;

	if (!a->addr || a->size > ((uint64_t)1 << 48))
		return;
	depth = alloc_stack(w, a, r, funcs, sites);
	/* C++'s operator new is the allocator's caller, not the program's: its caller is. */
	while (depth > 1 &&
	       !strncmp(profile_func_name(c->profiles[SAMPLE_MODE_ALLOC], funcs[depth - 1]),
			"operator new", 12))
		depth--;
	scale = allocrec_scale(a->size ? a->size : 1, c->alloc_mean);
	bytes = (uint64_t)llround((double)(a->size ? a->size : 1) * scale);
	/* Objects are fractions of a block: carried over, so their sum stays the estimate's. */
	objects = scale + c->objects_carry;
	whole = (uint64_t)objects;
	c->objects_carry = objects - (double)whole;
	profile_add_n(c->profiles[SAMPLE_MODE_ALLOC], (pid_t)a->pid, (pid_t)a->tid, funcs, depth,
		      bytes);
	if (whole)
		profile_add_n(c->profiles[SAMPLE_MODE_ALLOC_OBJECTS], (pid_t)a->pid, (pid_t)a->tid,
			      funcs, depth, whole);
	if (a->kind == ALLOCREC_ALLOC) /* (an untracked block's free cannot be told) */
		heap_add(&c->heap, (pid_t)a->pid, (pid_t)a->tid, a->addr, bytes, whole, funcs,
			 (uint32_t)depth);
}

/* A SAMPLE_RECORD_ALLOC record of len bytes (sample.h). */
static void alloc_record(struct worker *w, const struct perf_event_header *h, size_t len)
{
	struct collector *c = w->c;
	struct sample_record r;
	struct allocrec a;
	uint64_t now_ns = util_now_ns();

	if (!c->profiles[SAMPLE_MODE_ALLOC] || sample_parse_alloc(h, len, &a, &r))
		return;
	/* Counted in the second it was made (the target's clock is ours, CLOCK_MONOTONIC; a time
	 * out of the run is taken as now). */
	profiles_set_time(c, a.time_ns >= c->start_ns && a.time_ns <= now_ns ? a.time_ns : now_ns);
	c->alloc_records++;
	if (a.kind == ALLOCREC_FREE)
		heap_remove(&c->heap, (pid_t)a.pid, a.addr);
	else
		handle_alloc(w, &a, &r);
	note_inuse(c, now_ns);
}

/* The in-use profiles made again from the blocks in use now. */
static void rebuild_inuse(struct collector *c)
{
	struct profile *bytes = c->profiles[SAMPLE_MODE_INUSE];
	struct profile *objects = c->profiles[SAMPLE_MODE_INUSE_OBJECTS];

	profile_reset(bytes);
	profile_reset(objects);
	for (size_t i = 0; i < c->heap.capacity; i++) {
		const struct heap_block *b = &c->heap.slots[i];

		if (!heap_used(b))
			continue;
		profile_add_n(bytes, b->pid, b->tid, b->funcs, b->depth, b->bytes);
		if (b->objects)
			profile_add_n(objects, b->pid, b->tid, b->funcs, b->depth, b->objects);
	}
}

/* An in-use snapshot's timeline: what was in use at the end of each span's seconds (the spans
 * of the allocated bytes' timeline, whose seconds they are). */
static void inuse_timeline(struct collector *c, struct snapshot *s, const struct snapshot *alloc,
			   bool objects)
{
	struct snapshot_span *spans = alloc->nspans ? xmalloc(alloc->nspans * sizeof(*spans)) : NULL;

	for (size_t i = 0; i < alloc->nspans; i++) {
		uint64_t last = alloc->spans[i].end_s ? alloc->spans[i].end_s - 1 : 0;

		spans[i] = alloc->spans[i];
		spans[i].traced = 0;
		if (last >= c->ninuse_seconds)
			last = c->ninuse_seconds ? c->ninuse_seconds - 1 : 0;
		spans[i].samples = c->ninuse_seconds ? c->inuse_seconds[last][objects] : 0;
	}
	free((void *)s->spans);
	s->spans = spans;
	s->nspans = alloc->nspans;
	s->traced_func = 0;
}

void collector_process(struct collector *c, const void *record, size_t len)
{
	uint64_t now = util_now_ns();

	for (unsigned i = 0; i < c->nworkers; i++) {
		c->workers[i].record_ns = now;
		handle_record(&c->workers[i], record, len);
		flush_batch(&c->workers[i]);
	}
}

uint64_t collector_samples(const struct collector *c)
{
	return profile_samples(c->profiles[c->first_mode]);
}

/* The worker reads what the ring holds now. */
static void drain(struct worker *w)
{
	const void *data;
	size_t len;

	while ((data = ring_peek_reader(w->c->ring, w->index, &len))) {
		/* A file sent while this worker was busy, or one a module it loaded since wants:
		 * taken before the next record, so that few of its addresses are interned unnamed
		 * after another worker named them. */
		if (atomic_load_explicit(&w->c->fetched_count, memory_order_relaxed) >
		    w->fetched_applied)
			apply_fetched(w);
		w->record_ns = util_now_ns(); /* (the profiles' clock, set where they are added to) */
		handle_record(w, data, len);
		ring_release_reader(w->c->ring, w->index);
	}
	flush_batch(w);
}

static uint64_t truncated_stacks(struct collector *c)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < c->nworkers; i++)
		n += atomic_load_explicit(&c->workers[i].truncated, memory_order_relaxed);
	return n;
}

static void stamp(struct collector *c, struct snapshot *s, enum sample_mode mode, uint64_t now)
{
	if (c->sampler) /* a replaying collector has none */
		sampler_counters(c->sampler, &s->counters);
	s->counters.truncated = truncated_stacks(c);
	if (c->profiles[SAMPLE_MODE_ALLOC]) {
		s->counters.samples = c->alloc_records;
		s->counters.allocated = profile_samples(c->profiles[SAMPLE_MODE_ALLOC]);
		s->counters.in_use = c->heap.bytes;
	}
	s->elapsed_ns = now - c->start_ns;
	s->freq = c->sampler ? sampler_freq(c->sampler) : c->config.freq;
	s->mode = mode;
	if (snapshot_timed(s))
		s->freq = SNAPSHOT_OFFCPU_FREQ;
	else if (snapshot_allocations(s))
		s->freq = (unsigned)c->alloc_mean;
	s->user_ns = atomic_load_explicit(&c->cpu_user_ns, memory_order_relaxed);
	s->system_ns = atomic_load_explicit(&c->cpu_system_ns, memory_order_relaxed);
	s->cost = c->cost;
	if (c->fetcher) {
		char name[48];
		size_t waiting = fetcher_status(c->fetcher, name, sizeof(name));

		if (waiting)
			snprintf(s->fetching, sizeof(s->fetching), "%s (+%zu)", name, waiting);
		else
			snprintf(s->fetching, sizeof(s->fetching), "%s", name);
	}
}

void collector_set_cpu_times(struct collector *c, uint64_t user_ns, uint64_t system_ns)
{
	atomic_store_explicit(&c->cpu_user_ns, user_ns, memory_order_relaxed);
	atomic_store_explicit(&c->cpu_system_ns, system_ns, memory_order_relaxed);
}

/* The snapshot of the selected stretch: a window's ends move with the run. Once profiling ended
 * the clock stops at its end, so a window made later still shows its last seconds. */
static struct snapshot *range_snapshot(struct collector *c, struct profile *p,
				       const struct snapshot_range *r, uint64_t now)
{
	uint64_t elapsed = now - c->start_ns, from_s = r->from_s, to_s = r->to_s;
	struct snapshot *s;

	if (r->last_ns) {
		from_s = elapsed > r->last_ns ? (elapsed - r->last_ns) / 1000000000u : 0;
		to_s = UINT64_MAX;
	}
	s = profile_range_snapshot(p, from_s, to_s);
	s->window_ns = r->last_ns;
	return s;
}

/* An allocation run's four cumulative snapshots, the in-use ones made again from the blocks
 * in use (with their timeline); the one shown gets the others as companions (exports write
 * all four). */
static struct snapshot *allocation_snapshots(struct collector *c, enum sample_mode shown,
					     uint64_t now)
{
	struct snapshot *all[SNAPSHOT_NCOMPANIONS], *s;
	uint32_t traced = atomic_load_explicit(&c->traced_func, memory_order_relaxed);

	rebuild_inuse(c);
	note_inuse(c, now);
	/* The shown one first: the pooled snapshot it reuses lets go of its companions, which
	 * their profiles can then reuse in turn (profile.c). */
	for (int k = 0; k < SNAPSHOT_NCOMPANIONS; k++) {
		int i = (shown - SAMPLE_MODE_ALLOC + k) % SNAPSHOT_NCOMPANIONS;
		enum sample_mode m = (enum sample_mode)(SAMPLE_MODE_ALLOC + i);

		profile_trace(c->profiles[m], traced);
		all[i] = profile_snapshot(c->profiles[m]);
		stamp(c, all[i], m, now);
	}
	inuse_timeline(c, all[SAMPLE_MODE_INUSE - SAMPLE_MODE_ALLOC],
		       all[SAMPLE_MODE_ALLOC - SAMPLE_MODE_ALLOC], false);
	inuse_timeline(c, all[SAMPLE_MODE_INUSE_OBJECTS - SAMPLE_MODE_ALLOC],
		       all[SAMPLE_MODE_ALLOC_OBJECTS - SAMPLE_MODE_ALLOC], true);
	s = all[shown - SAMPLE_MODE_ALLOC];
	for (int i = 0; i < SNAPSHOT_NCOMPANIONS; i++)
		if (all[i] != s)
			s->companions[i] = all[i];
	return s;
}

/* What the collector holds by part of the budget, into its cost; with the profiles locked. */
static void measure_parts(struct collector *c)
{
	c->cost.trees = 0;
	c->cost.history = 0;
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++) {
		c->cost.trees += profile_memory(c->profiles[m]);
		c->cost.history += profile_history_memory(c->profiles[m]);
	}
	c->cost.trees_budget = c->trees_budget;
	c->cost.sources = 0;
	c->cost.sources_closed = 0;
	for (unsigned i = 0; i < c->nworkers; i++) {
		c->cost.sources += atomic_load_explicit(&c->workers[i].sources_held,
							memory_order_relaxed);
		c->cost.sources_closed += atomic_load_explicit(&c->workers[i].sources_closed_now,
							       memory_order_relaxed);
	}
	c->cost.sources_budget = c->sources_budget * c->nworkers;
}

/* The cumulative snapshot, and the one of the selected stretch while a reader selected one. */
static void publish(struct collector *c)
{
	uint64_t now = c->end_ns ? c->end_ns : util_now_ns();
	struct snapshot *s, *old, *range = NULL, *old_range;
	struct snapshot_range selected;
	bool ranged;
	enum sample_mode mode = atomic_load_explicit(&c->shown, memory_order_relaxed);
	struct profile *p = c->profiles[mode];

	selfcost_measure(&c->cost);
	lock_profiles(c);
	measure_parts(c);
	if (c->profiles[SAMPLE_MODE_OFFCPU] && !c->end_ns)
		count_waiting_so_far(c, now);
	if (c->profiles[SAMPLE_MODE_ALLOC]) {
		s = allocation_snapshots(c, mode, now);
	} else {
		profile_trace(p, atomic_load_explicit(&c->traced_func, memory_order_relaxed));
		s = profile_snapshot(p);
		stamp(c, s, mode, now);
	}
	pthread_mutex_lock(&c->publish_lock);
	selected = c->range;
	ranged = c->ranged;
	pthread_mutex_unlock(&c->publish_lock);
	if (ranged && made_again(mode)) { /* what is in use has no stretches: it is now */
		range = snapshot_ref(s);
	} else if (ranged) {
		range = range_snapshot(c, p, &selected, now);
		stamp(c, range, mode, now);
	}
	unlock_profiles(c);
	pthread_mutex_lock(&c->publish_lock);
	old = c->published;
	c->published = s;
	old_range = c->published_range;
	c->published_range = range;
	c->publications++;
	c->requested = false;
	pthread_cond_broadcast(&c->published_cond);
	pthread_mutex_unlock(&c->publish_lock);
	snapshot_unref(old);
	snapshot_unref(old_range);
}

/* A stretch of the run in mode: on the collector thread, or after the end under late_lock. */
static struct snapshot *make_stretch(struct collector *c, enum sample_mode mode, uint64_t from_s,
				     uint64_t to_s)
{
	struct snapshot *s;

	/* Its cost is of now: nothing may have published since the first seconds (a server's
	 * batch run without periodic tables publishes only at the end). */
	selfcost_measure(&c->cost);
	lock_profiles(c);
	measure_parts(c);
	s = profile_range_snapshot(c->profiles[mode], from_s, to_s);
	stamp(c, s, mode, c->end_ns ? c->end_ns : util_now_ns());
	unlock_profiles(c);
	return s;
}

/* The thread: every stretch readers asked for. A request lives on its reader's stack, and the
 * reader waits until done is set under publish_lock. */
static void make_stretches(struct collector *c)
{
	struct stretch_request *list, *r;

	pthread_mutex_lock(&c->publish_lock);
	list = c->stretches;
	c->stretches = NULL;
	pthread_mutex_unlock(&c->publish_lock);
	if (!list)
		return;
	for (r = list; r; r = r->next)
		r->made = make_stretch(c, r->mode, r->from_s, r->to_s);
	pthread_mutex_lock(&c->publish_lock);
	for (r = list; r; r = r->next)
		r->done = true;
	pthread_cond_broadcast(&c->published_cond);
	pthread_mutex_unlock(&c->publish_lock);
}

static bool publish_requested(struct collector *c)
{
	bool requested;

	pthread_mutex_lock(&c->publish_lock);
	requested = c->requested;
	pthread_mutex_unlock(&c->publish_lock);
	return requested;
}

static void wake(struct collector *c)
{
	wake_fd_write(c->wake_fd);
}

/* Ask the thread for a snapshot and wait (a bounded time) until one is published. Nothing to
 * wait for once the thread ended: the final snapshot is there. */
static void request_fresh(struct collector *c)
{
	uint64_t deadline = util_now_ns() + REQUEST_WAIT_NS, seen;
	struct timespec until = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };

	pthread_mutex_lock(&c->publish_lock);
	seen = c->publications;
	if (c->thread_live) {
		c->requested = true;
		wake(c);
	}
	while (c->thread_live && c->publications == seen && util_now_ns() < deadline)
		pthread_cond_timedwait(&c->published_cond, &c->publish_lock, &until);
	pthread_mutex_unlock(&c->publish_lock);
}

/* Forget the processes that had a thread exit more than the grace period ago and are gone; one
 * still running gets checked again at its next thread's exit. */
static void forget_exited(struct worker *w, uint64_t now)
{
	size_t done = 0;

	while (done < w->nexited && now - w->exited[done].at_ns >= EXIT_GRACE_NS) {
		if (target_pid_gone(w->exited[done].pid)) {
			forget_frames(w);
			symbolizer_exit(w->symbolizer, w->exited[done].pid);
			unwinder_forget(w->unwinder, w->exited[done].pid);
		}
		done++;
	}
	if (done) {
		memmove(w->exited, w->exited + done, (w->nexited - done) * sizeof(*w->exited));
		w->nexited -= done;
	}
}

/* Once a second, the worker's modules' DWARF within its share of the budget. What the DWARF
 * freed is mostly small blocks of libdw's among the heap's others: handed back explicitly. */
static void trim_sources(struct worker *w, uint64_t now)
{
	uint64_t closed = w->sources_closed;
	size_t held;

	if (now < w->trim_ns)
		return;
	w->trim_ns = now + TRIM_NS;
	held = symbolizer_trim_sources(w->symbolizer, w->c->sources_budget, &w->sources_closed);
	atomic_store_explicit(&w->sources_held, held, memory_order_relaxed);
	if (w->sources_closed == closed)
		return;
	atomic_store_explicit(&w->sources_closed_now, w->sources_closed, memory_order_relaxed);
	malloc_trim(0);
}

/* A worker's round: the debug files sent, the records, the processes gone, the DWARF held. */
static void work(struct worker *w)
{
	uint64_t now;

	apply_fetched(w);
	drain(w);
	now = util_now_ns();
	forget_exited(w, now);
	symbolizer_settle_jits(w->symbolizer);
	trim_sources(w, now);
}

/* A worker's thread (several workers). It owns its struct worker, reads the ring as reader
 * w->index, and takes profile_lock for what it adds (file comment). It ends when the collector
 * stops it, after reading everything the ring holds then. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pollfd pfd = { .fd = w->wake_fd, .events = POLLIN };

	while (!atomic_load_explicit(&w->c->stop, memory_order_acquire)) {
		uint64_t count;

		poll(&pfd, 1, 50);
		if (read(w->wake_fd, &count, sizeof(count)) < 0) {
			/* nothing signalled: the poll timed out */
		}
		work(w);
	}
	work(w);
	return NULL;
}

/* The collector thread. With one worker it is that worker too (and owns it); with several it
 * wakes theirs when the sampler wakes it. Either way it takes debuginfod's files, makes the
 * stretches asked for and publishes. */
static void *collector_main(void *arg)
{
	struct collector *c = arg;
	struct pollfd pfd = { .fd = c->wake_fd, .events = POLLIN };

	while (!atomic_load_explicit(&c->stop, memory_order_acquire)) {
		uint64_t count;

		poll(&pfd, 1, 50);
		if (read(c->wake_fd, &count, sizeof(count)) < 0) {
			/* nothing signalled: the poll timed out */
		}
		take_fetched(c);
		if (c->nworkers == 1)
			work(&c->workers[0]);
		else
			wake_workers(c);
		make_stretches(c);
		if (publish_requested(c))
			publish(c);
	}
	return NULL;
}

/* Stop and join the workers' threads (they read the ring to its end first). */
static void stop_workers(struct collector *c)
{
	wake_workers(c);
	for (unsigned i = 0; i < c->nworkers; i++)
		if (c->workers[i].running) {
			util_join(c->workers[i].thread);
			c->workers[i].running = false;
		}
}

/* Several workers: a thread for each (one worker is the collector thread itself). */
static int start_workers(struct collector *c)
{
	if (c->nworkers == 1)
		return 0;
	for (unsigned i = 0; i < c->nworkers; i++) {
		struct worker *w = &c->workers[i];
		int err;

		w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->wake_fd < 0)
			err = errno;
		else
			err = pthread_create(&w->thread, NULL, worker_main, w);
		if (err) {
			atomic_store_explicit(&c->stop, true, memory_order_release);
			stop_workers(c);
			return -err;
		}
		w->running = true;
	}
	return 0;
}

int collector_start(struct collector *c, const pid_t *pids, size_t npids)
{
	int err;

	for (size_t i = 0; i < npids; i++) {
		for (unsigned k = 0; k < c->nworkers; k++) {
			err = symbolizer_load_proc(c->workers[k].symbolizer, pids[i]);
			/* -a lists every process: some end meanwhile, kernel threads have no maps. */
			if (err && !k && !c->config.system_wide)
				diag_report(c->diag, DIAG_WARNING, "cannot read /proc/%d/maps: %s; its "
					    "functions are named from the mappings it makes from now on",
					    (int)pids[i], strerror(-err));
		}
	}
	/* The run's clock starts now, after the maps were read (under -a, every process's): the
	 * history's seconds count from here too, as collector_elapsed() does. */
	c->start_ns = util_now_ns();
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_set_origin(c->profiles[m], c->start_ns);
	publish(c);
	err = start_workers(c);
	if (err)
		return err;
	pthread_mutex_lock(&c->publish_lock);
	c->thread_live = true;
	pthread_mutex_unlock(&c->publish_lock);
	err = pthread_create(&c->thread, NULL, collector_main, c);
	if (err) {
		pthread_mutex_lock(&c->publish_lock);
		c->thread_live = false;
		pthread_mutex_unlock(&c->publish_lock);
		atomic_store_explicit(&c->stop, true, memory_order_release);
		stop_workers(c);
		return -err;
	}
	c->running = true;
	return 0;
}

void collector_finish(struct collector *c)
{
	if (c->running) {
		atomic_store_explicit(&c->stop, true, memory_order_release);
		wake(c);
		util_join(c->thread);
		c->running = false;
		stop_workers(c);
		/* Readers waiting for a stretch make it themselves, under late_lock: after the
		 * final drain below. */
		pthread_mutex_lock(&c->late_lock);
		pthread_mutex_lock(&c->publish_lock);
		c->thread_live = false;
		pthread_cond_broadcast(&c->published_cond);
		pthread_mutex_unlock(&c->publish_lock);
	} else {
		pthread_mutex_lock(&c->late_lock);
	}
	/* The threads have ended: every worker is this thread's now. */
	for (unsigned i = 0; i < c->nworkers; i++)
		drain(&c->workers[i]);
	if (!c->end_ns) {
		uint64_t now = util_now_ns();

		pthread_mutex_lock(&c->publish_lock);
		c->end_ns = now;
		pthread_mutex_unlock(&c->publish_lock);
		if (c->profiles[SAMPLE_MODE_OFFCPU])
			count_still_waiting(c, c->end_ns);
		/* A JIT may have written its map as its process ended: what it names is named
		 * before the last publication. */
		for (unsigned i = 0; i < c->nworkers; i++)
			symbolizer_jit_final(c->workers[i].symbolizer);
	}
	take_fetched(c);
	for (unsigned i = 0; i < c->nworkers; i++)
		apply_fetched(&c->workers[i]);
	stop_fetching(c);
	publish(c);
	pthread_mutex_unlock(&c->late_lock);
}

uint64_t collector_elapsed(struct collector *c, bool *ended)
{
	uint64_t end;

	pthread_mutex_lock(&c->publish_lock);
	end = c->end_ns;
	pthread_mutex_unlock(&c->publish_lock);
	*ended = end != 0;
	return (end ? end : util_now_ns()) - c->start_ns;
}

bool collector_keeps_stretches(const struct collector *c, enum sample_mode mode)
{
	return (unsigned)mode < SAMPLE_NMODES && c->profiles[mode] && !made_again(mode) &&
	       profile_has_history(c->profiles[mode]);
}

struct snapshot *collector_stretch(struct collector *c, enum sample_mode mode, uint64_t from_s,
				   uint64_t to_s)
{
	struct stretch_request req = { .mode = mode, .from_s = from_s, .to_s = to_s };

	if (!collector_keeps_stretches(c, mode))
		return NULL;
	pthread_mutex_lock(&c->publish_lock);
	if (c->thread_live) {
		req.next = c->stretches;
		c->stretches = &req;
		wake(c);
		while (!req.done && c->thread_live)
			pthread_cond_wait(&c->published_cond, &c->publish_lock);
		/* The thread ended before taking it: take it back. */
		for (struct stretch_request **r = &c->stretches; !req.done && *r; r = &(*r)->next)
			if (*r == &req) {
				*r = req.next;
				break;
			}
	}
	pthread_mutex_unlock(&c->publish_lock);
	if (req.done)
		return req.made;
	pthread_mutex_lock(&c->late_lock);
	req.made = make_stretch(c, mode, from_s, to_s);
	pthread_mutex_unlock(&c->late_lock);
	return req.made;
}

void collector_set_history(struct collector *c, unsigned seconds)
{
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		if (!made_again((enum sample_mode)m))
			profile_set_history(c->profiles[m], seconds, c->start_ns);
}

void collector_set_max_memory(struct collector *c, size_t bytes)
{
	/* The trees' part split evenly: the wall profile holds about what the CPU's does, the others
	 * less (and the allocated bytes' as much as their objects'). */
	size_t n = c->nprofiles - (c->profiles[SAMPLE_MODE_INUSE] ? 2 : 0);

	c->sources_budget = bytes / COLLECTOR_SOURCES_SHARE;
	c->trees_budget = bytes - c->sources_budget;
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		if (!made_again((enum sample_mode)m))
			profile_set_max_memory(c->profiles[m], c->trees_budget / n);
	/* Each worker reads its own copy of the DWARF it needs. */
	c->sources_budget /= c->nworkers;
	if (bytes && !c->sources_budget)
		c->sources_budget = 1;
}

/* After the end, on the caller's thread: a reader may be making a stretch. */
static void publish_late(struct collector *c)
{
	pthread_mutex_lock(&c->late_lock);
	publish(c);
	pthread_mutex_unlock(&c->late_lock);
}

bool collector_select(struct collector *c, const struct snapshot_range *range)
{
	if (range && !profile_has_history(c->profiles[c->first_mode]))
		return false;
	pthread_mutex_lock(&c->publish_lock);
	c->ranged = range != NULL;
	if (range)
		c->range = *range;
	pthread_mutex_unlock(&c->publish_lock);
	/* After the end nobody else publishes: make the stretch now, on the caller's thread. */
	if (range && c->end_ns && !c->running)
		publish_late(c);
	return true;
}

bool collector_show(struct collector *c, enum sample_mode mode)
{
	int was;

	if ((unsigned)mode >= SAMPLE_NMODES || !c->profiles[mode])
		return false;
	was = atomic_exchange_explicit(&c->shown, (int)mode, memory_order_relaxed);
	/* After the end nobody else publishes: make it now, on the caller's thread. */
	if (was != (int)mode && c->end_ns && !c->running)
		publish_late(c);
	return true;
}

enum sample_mode collector_shown(struct collector *c)
{
	return (enum sample_mode)atomic_load_explicit(&c->shown, memory_order_relaxed);
}

void collector_trace(struct collector *c, uint32_t func)
{
	uint32_t was = atomic_exchange_explicit(&c->traced_func, func, memory_order_relaxed);

	/* After the end nobody else publishes: count it now, on the caller's thread. */
	if (was != func && c->end_ns && !c->running)
		publish_late(c);
}

struct snapshot *collector_snapshots(struct collector *c, struct snapshot **range)
{
	struct snapshot *s;

	request_fresh(c);
	pthread_mutex_lock(&c->publish_lock);
	s = snapshot_ref(c->published);
	*range = c->published_range ? snapshot_ref(c->published_range) : NULL;
	pthread_mutex_unlock(&c->publish_lock);
	return s;
}

struct snapshot *collector_snapshot(struct collector *c)
{
	struct snapshot *range, *s = collector_snapshots(c, &range);

	snapshot_unref(range);
	return s;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	collector_finish(c);
	snapshot_unref(c->published);
	snapshot_unref(c->published_range);
	for (size_t m = c->first_mode; m < c->first_mode + c->nprofiles; m++)
		profile_free(c->profiles[m]);
	for (unsigned i = 0; i < c->nworkers; i++)
		worker_free(&c->workers[i]);
	free(c->workers);
	for (size_t i = 0; i < c->nfetched; i++) {
		fetched_clear(c->fetched[i]);
		free(c->fetched[i]);
	}
	free(c->fetched);
	heap_free(&c->heap);
	free(c->inuse_seconds);
	close(c->wake_fd);
	pthread_mutex_destroy(&c->publish_lock);
	pthread_mutex_destroy(&c->profile_lock);
	pthread_mutex_destroy(&c->late_lock);
	pthread_cond_destroy(&c->published_cond);
	free(c);
}
