/* alloc.c — libproftop-alloc.so, the allocation-sampling library proftop --mode alloc preloads
 * into the command it launches (LD_PRELOAD; children inherit it with the environment).
 *
 * It wraps the C allocator's entry points (malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc; C++'s new and delete reach malloc and free through
 * libstdc++) around glibc's own (__libc_malloc and the like: no dlsym, which itself allocates).
 * Each thread samples by bytes (allocrec.h): an allocation that covers the thread's gap to its
 * next sampled byte sends its stack (libunwind's local unw_backtrace) to proftop through the
 * shared ring (shmring.h) whose descriptor the environment names, and joins the set of sampled
 * live blocks, so that its free is sent too.
 *
 * It never recurses or deadlocks: a thread inside it (unwinding may allocate) or not yet set up
 * goes straight to glibc; thread state is initial-exec TLS (no allocation on first use); the
 * ring and the live set take no lock, so a signal handler that allocates, or a child forked
 * while another thread was inside, is safe. Before its constructor ran (ld.so's own
 * allocations, other libraries' constructors), with no ring in the environment, or when the
 * ring is not one, it samples nothing.
 *
 * Environment: PROFTOP_ALLOC_FD (the ring's memfd, inherited across exec), PROFTOP_ALLOC_MEAN
 * (bytes between samples on average). Threads: any of the target's; the state below is either
 * set once by the constructor before other threads exist, per-thread, or atomic. */
#include "proftop/allocrec.h"
#include "proftop/shmring.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
void *__libc_memalign(size_t alignment, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* The live set: sampled blocks not yet freed, open addressing on their addresses (0: empty,
 * 1: a block was here). A counting filter in front keeps the frees of blocks never sampled, all
 * but a few, at one load. */
#define LIVE_SLOTS (1u << 16)
#define LIVE_PROBES 64
#define FILTER_SLOTS (1u << 18)
#define GONE 1

static _Atomic uint64_t live[LIVE_SLOTS];
static _Atomic uint16_t filter[FILTER_SLOTS];
static void *ring;                 /* set once by the constructor; NULL: not sampling */
static uint64_t mean = ALLOCREC_DEFAULT_MEAN;
static uintptr_t own_start, own_end; /* this library's code: its frames are left out */

static TLS int busy;               /* inside: allocate straight from glibc */
static TLS uint64_t until;         /* bytes to this thread's next sampled one; 0: not drawn yet */
static TLS uint64_t rng;

static uint64_t hash(uint64_t addr)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdull;
	addr ^= addr >> 33;
	return addr;
}

static bool live_add(uint64_t addr)
{
	uint64_t h = hash(addr);

	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		_Atomic uint64_t *slot = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);

		if ((v == 0 || v == GONE) &&
		    atomic_compare_exchange_strong_explicit(slot, &v, addr, memory_order_relaxed,
							    memory_order_relaxed)) {
			atomic_fetch_add_explicit(&filter[h & (FILTER_SLOTS - 1)], 1,
						  memory_order_release);
			return true;
		}
	}
	return false;
}

/* Whether addr was a sampled block (and is no more). */
static bool live_remove(uint64_t addr)
{
	uint64_t h = hash(addr);

	if (!atomic_load_explicit(&filter[h & (FILTER_SLOTS - 1)], memory_order_acquire))
		return false;
	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		_Atomic uint64_t *slot = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);

		if (v == 0)
			return false;
		if (v == addr && atomic_compare_exchange_strong_explicit(slot, &v, GONE,
									 memory_order_relaxed,
									 memory_order_relaxed)) {
			atomic_fetch_sub_explicit(&filter[h & (FILTER_SLOTS - 1)], 1,
						  memory_order_release);
			return true;
		}
	}
	return false;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void send(uint32_t kind, uint64_t addr, uint64_t size, bool stack)
{
	uint64_t pos;
	struct allocrec *r = shmring_reserve(ring, &pos);
	void *ips[ALLOCREC_MAX_FRAMES + 8];
	int n = 0, skip = 0;

	if (!r)
		return;
	r->kind = kind;
	r->pid = (uint32_t)getpid();
	r->tid = (uint32_t)syscall(SYS_gettid);
	r->addr = addr;
	r->size = size;
	r->time_ns = now_ns();
	r->nframes = 0;
	if (stack) {
		n = unw_backtrace(ips, ALLOCREC_MAX_FRAMES + 8);
		while (skip < n && (uintptr_t)ips[skip] >= own_start && (uintptr_t)ips[skip] < own_end)
			skip++;
		for (int i = skip; i < n && r->nframes < ALLOCREC_MAX_FRAMES; i++)
			r->frames[r->nframes++] = (uint64_t)(uintptr_t)ips[i];
	}
	shmring_publish(ring, pos);
}

/* An allocation of size bytes at p: sampled when it covers this thread's gap. */
static void allocated(void *p, size_t size)
{
	if (!p || !ring || busy)
		return;
	if (!until) {
		rng = now_ns() ^ ((uint64_t)syscall(SYS_gettid) << 32) ^ (uint64_t)(uintptr_t)&busy;
		until = allocrec_next_gap(&rng, mean);
	}
	if (size < until) {
		until -= size;
		return;
	}
	busy = 1;
	until = allocrec_next_gap(&rng, mean);
	send(live_add((uint64_t)(uintptr_t)p) ? ALLOCREC_ALLOC : ALLOCREC_UNTRACKED,
	     (uint64_t)(uintptr_t)p, size, true);
	busy = 0;
}

/* p is about to be freed (or moved by realloc): its sample, if it was one, goes too. Before
 * glibc frees it, so that no other thread has the address again meanwhile. */
static bool freeing(void *p)
{
	if (!p || !ring || busy || !live_remove((uint64_t)(uintptr_t)p))
		return false;
	busy = 1;
	send(ALLOCREC_FREE, (uint64_t)(uintptr_t)p, 0, false);
	busy = 0;
	return true;
}

EXPORT void *malloc(size_t size)
{
	void *p = __libc_malloc(size);

	allocated(p, size);
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);

	allocated(p, n * size); /* (calloc returned NULL had it overflowed) */
	return p;
}

EXPORT void free(void *p)
{
	freeing(p);
	__libc_free(p);
}

EXPORT void *realloc(void *p, size_t size)
{
	bool was = freeing(p);
	void *q = __libc_realloc(p, size);

	if (!q && size && was) /* it failed: p is still there, and still sampled */
		live_add((uint64_t)(uintptr_t)p);
	allocated(q, size);
	return q;
}

EXPORT void *memalign(size_t alignment, size_t size)
{
	void *p = __libc_memalign(alignment, size);

	allocated(p, size);
	return p;
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
	void *p;

	if (!alignment || alignment % sizeof(void *) || (alignment & (alignment - 1)))
		return EINVAL;
	p = __libc_memalign(alignment, size);
	if (!p)
		return ENOMEM;
	allocated(p, size);
	*out = p;
	return 0;
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
	void *p;

	if (!alignment || (alignment & (alignment - 1))) {
		errno = EINVAL;
		return NULL;
	}
	p = __libc_memalign(alignment, size);
	allocated(p, size);
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p = __libc_valloc(size);

	allocated(p, size);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p = __libc_pvalloc(size);

	allocated(p, size);
	return p;
}

/* This library's executable segment: the frames of its own functions are not the target's. */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t self = (uintptr_t)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self >= start &&
		    self < start + ph->p_memsz) {
			own_start = start;
			own_end = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

__attribute__((constructor)) static void start(void)
{
	const char *fd_text = getenv("PROFTOP_ALLOC_FD"), *mean_text = getenv("PROFTOP_ALLOC_MEAN");
	char *end;
	long fd;
	struct stat st;
	void *mem;

	busy = 1;
	if (mean_text) {
		unsigned long long m = strtoull(mean_text, &end, 10);

		if (!*end && m >= 1)
			mean = m;
	}
	fd = fd_text ? strtol(fd_text, &end, 10) : -1;
	if (fd < 0 || fd > 1 << 20 || !fd_text || *end || fstat((int)fd, &st) || st.st_size <= 0) {
		busy = 0;
		return;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (mem == MAP_FAILED || !shmring_valid(mem, (size_t)st.st_size) ||
	    ((struct shmring_header *)mem)->slot_size < sizeof(struct allocrec)) {
		if (mem != MAP_FAILED)
			munmap(mem, (size_t)st.st_size);
		busy = 0;
		return;
	}
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&start);
	ring = mem;
	busy = 0;
}
