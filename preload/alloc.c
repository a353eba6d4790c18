/* alloc.c — libproftop-alloc.so, the allocation-sampling library proftop --mode alloc preloads
 * into the command it launches (LD_PRELOAD; children inherit it with the environment).
 *
 * It wraps the C allocator's entry points (malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc; C++'s new and delete reach malloc and free through
 * libstdc++) around glibc's own (__libc_malloc and the like: no dlsym, which itself allocates).
 * Each thread samples by bytes (allocrec.h): an allocation that covers the thread's gap to its
 * next sampled byte sends its stack (libunwind's local unw_backtrace) to proftop through the
 * shared ring (shmring.h) whose descriptor the environment names; its free is sent too (a
 * sampled block is known by a header, or, from the aligned allocators, by a set: "sampled
 * blocks" below).
 *
 * It never recurses or deadlocks: a thread inside it (unwinding may allocate) or not yet set up
 * goes straight to glibc; thread state is initial-exec TLS (no allocation on first use); the
 * ring and the set take no lock, so a signal handler that allocates, or a child forked while
 * another thread was inside, is safe; a forked child takes its own pid (pthread_atfork). Before its constructor ran (ld.so's own
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

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
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

/* The live set: the aligned allocators' sampled blocks not yet freed, open addressing on their
 * addresses (0: empty, 1: a block was here). free() looks at it only while it holds any, and a
 * counting filter in front keeps most of those looks at one load. */
#define LIVE_SLOTS (1u << 16)
#define LIVE_PROBES 64
#define FILTER_SLOTS (1u << 14)    /* 32 KiB: the free of a block never sampled stays in cache */
#define GONE 1

static _Atomic uint64_t live[LIVE_SLOTS];
static _Atomic uint16_t filter[FILTER_SLOTS];
static _Atomic uint64_t nlive;     /* sampled blocks in the set: while 0, a free looks no further */
static void *ring;                 /* set once by the constructor; NULL: not sampling */
static uint64_t mean = ALLOCREC_DEFAULT_MEAN;
static uintptr_t own_start, own_end; /* this library's code: its frames are left out */

static _Atomic uint32_t own_pid;   /* getpid(), kept: a system call per sample otherwise */
static TLS int busy;               /* inside: allocate straight from glibc */
static TLS uint32_t own_tid;       /* the thread's id once asked; 0: not yet */
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
			atomic_fetch_add_explicit(&nlive, 1, memory_order_release);
			return true;
		}
	}
	return false;
}

/* Whether addr was a sampled block (and is no more). */
static bool live_remove(uint64_t addr)
{
	uint64_t h = hash(addr);

	if (!atomic_load_explicit(&nlive, memory_order_acquire) ||
	    !atomic_load_explicit(&filter[h & (FILTER_SLOTS - 1)], memory_order_acquire))
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
			atomic_fetch_sub_explicit(&nlive, 1, memory_order_release);
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
	if (!own_tid)
		own_tid = (uint32_t)syscall(SYS_gettid);
	r->pid = atomic_load_explicit(&own_pid, memory_order_relaxed);
	r->tid = own_tid;
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

/* --- sampled blocks ----------------------------------------------------------------------------
 *
 * A block from malloc, calloc or realloc that is sampled is made HEADER bytes larger and
 * returned past a header: a tag (the block's address mixed with a secret drawn at start) and the
 * size asked for. free() tells a sampled block by its tag, one load in the cache line glibc's own
 * free reads next (a block never sampled has glibc's chunk header there, which matches the tag
 * only by a 2^-64 chance), so the frees of the other blocks, nearly all, cost a compare. The
 * aligned allocations (memalign and the like) cannot move their start: their sampled blocks go
 * in the live set, which free() looks at only while it holds any. */

#define HEADER 16

struct header {
	uint64_t tag;
	uint64_t size;
};

static uint64_t secret;
static size_t (*libc_usable_size)(void *);

static uint64_t tag_of(const void *user)
{
	return secret ^ (uint64_t)(uintptr_t)user;
}

/* (No secret, no ring: nothing was sampled, and nothing is looked at.) */
static bool has_header(const void *user)
{
	return secret && user && !((uintptr_t)user & (HEADER - 1)) &&
	       ((const struct header *)user - 1)->tag == tag_of(user);
}

/* due()'s rare part, out of line so that the common one saves no register: the allocation
 * covers the gap (or the thread's first: its gap is drawn now). */
__attribute__((noinline, cold)) static bool due_now(size_t size)
{
	busy = 1;
	if (!until) { /* the thread's first allocation: its gap is drawn now */
		rng = now_ns() ^ ((uint64_t)syscall(SYS_gettid) << 32) ^ (uint64_t)(uintptr_t)&busy;
		until = allocrec_next_gap(&rng, mean);
		if (size < until) {
			until -= size;
			busy = 0;
			return false;
		}
	}
	until = allocrec_next_gap(&rng, mean);
	busy = 0;
	return true;
}

/* Whether this allocation of size bytes is to be sampled (and the next gap drawn if so). */
static inline bool due(size_t size)
{
	if (!ring || busy)
		return false;
	if (__builtin_expect(size < until, 1)) {
		until -= size;
		return false;
	}
	return due_now(size);
}

/* A sampled block of size bytes for the caller: glibc's block with a header. */
__attribute__((noinline, cold)) static void *sampled(size_t size, bool zero)
{
	unsigned char *b;
	void *user;

	if (size > SIZE_MAX - HEADER)
		return NULL;
	b = zero ? __libc_calloc(1, size + HEADER) : __libc_malloc(size + HEADER);
	if (!b)
		return NULL;
	user = b + HEADER;
	*(struct header *)b = (struct header){ tag_of(user), size };
	busy = 1;
	send(ALLOCREC_ALLOC, (uint64_t)(uintptr_t)user, size, true);
	busy = 0;
	return user;
}

/* An aligned allocation at p that was sampled: it goes in the live set. */
__attribute__((noinline, cold)) static void sampled_aligned(void *p, size_t size)
{
	busy = 1;
	send(live_add((uint64_t)(uintptr_t)p) ? ALLOCREC_ALLOC : ALLOCREC_UNTRACKED,
	     (uint64_t)(uintptr_t)p, size, true);
	busy = 0;
}

/* Free user, a block of the caller's: glibc's, or a sampled one (whose free is sent). */
static void release(void *user)
{
	if (__builtin_expect(has_header(user), 0)) {
		struct header *h = (struct header *)user - 1;

		h->tag = 0;
		if (!busy) {
			busy = 1;
			send(ALLOCREC_FREE, (uint64_t)(uintptr_t)user, 0, false);
			busy = 0;
		}
		__libc_free(h);
		return;
	}
	if (__builtin_expect(atomic_load_explicit(&nlive, memory_order_relaxed) != 0, 0) && user &&
	    live_remove((uint64_t)(uintptr_t)user) && !busy) {
		busy = 1;
		send(ALLOCREC_FREE, (uint64_t)(uintptr_t)user, 0, false);
		busy = 0;
	}
	__libc_free(user);
}

EXPORT void *malloc(size_t size)
{
	return __builtin_expect(due(size), 0) ? sampled(size, false) : __libc_malloc(size);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return __libc_calloc(n, size); /* (which says ENOMEM) */
	return __builtin_expect(due(bytes), 0) ? sampled(bytes, true) : __libc_calloc(n, size);
}

EXPORT void free(void *p)
{
	release(p);
}

/* The usable size of a sampled block is what was asked for; glibc's would read the header. */
EXPORT size_t malloc_usable_size(void *p)
{
	if (has_header(p))
		return (size_t)((struct header *)p - 1)->size;
	if (!libc_usable_size && !busy) { /* before the constructor: looked up now */
		busy = 1;
		libc_usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
		busy = 0;
	}
	return p && libc_usable_size ? libc_usable_size(p) : 0;
}

/* A sampled block moves to a new block (sampled or not, as the gap says), by copying; another
 * one that the gap samples does too, to get its header. */
EXPORT void *realloc(void *p, size_t size)
{
	void *q;
	size_t old;

	if (!p)
		return malloc(size);
	if (!has_header(p) && !due(size)) {
		if (__builtin_expect(atomic_load_explicit(&nlive, memory_order_relaxed) != 0, 0) &&
		    size && live_remove((uint64_t)(uintptr_t)p)) {
			/* an aligned sampled block: it is not one once moved (its free is sent) */
			q = __libc_realloc(p, size);
			if (!q) {
				live_add((uint64_t)(uintptr_t)p);
				return NULL;
			}
			if (!busy) {
				busy = 1;
				send(ALLOCREC_FREE, (uint64_t)(uintptr_t)p, 0, false);
				busy = 0;
			}
			return q;
		}
		return __libc_realloc(p, size);
	}
	if (!size) { /* glibc's realloc(p, 0): p freed, NULL */
		release(p);
		return NULL;
	}
	old = has_header(p) ? (size_t)((struct header *)p - 1)->size : malloc_usable_size(p);
	q = has_header(p) ? malloc(size) : sampled(size, false);
	if (!q)
		return NULL;
	memcpy(q, p, old < size ? old : size);
	release(p);
	return q;
}

EXPORT void *memalign(size_t alignment, size_t size)
{
	void *p = __libc_memalign(alignment, size);

	if (p && __builtin_expect(due(size), 0))
		sampled_aligned(p, size);
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
	if (__builtin_expect(due(size), 0))
		sampled_aligned(p, size);
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
	if (p && __builtin_expect(due(size), 0))
		sampled_aligned(p, size);
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p = __libc_valloc(size);

	if (p && __builtin_expect(due(size), 0))
		sampled_aligned(p, size);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p = __libc_pvalloc(size);

	if (p && __builtin_expect(due(size), 0))
		sampled_aligned(p, size);
	return p;
}

/* In a forked child: another process, and its one thread another thread. */
static void forked(void)
{
	atomic_store_explicit(&own_pid, (uint32_t)getpid(), memory_order_relaxed);
	own_tid = 0;
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
	libc_usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
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
	atomic_store_explicit(&own_pid, (uint32_t)getpid(), memory_order_relaxed);
	pthread_atfork(NULL, NULL, forked);
	secret = now_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 40 ^
		 (uint64_t)(uintptr_t)&secret;
	secret |= 1; /* never 0: a zeroed word is no tag */
	ring = mem;
	busy = 0;
}
