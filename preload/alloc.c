/* alloc.c — libproftop-alloc.so, the allocation-sampling library proftop --mode alloc preloads
 * into the command it launches (and, through alloc_env.c, into the programs it executes).
 *
 * It wraps the C allocator's entry points (malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, malloc_usable_size; C++'s new and delete reach
 * malloc and free through libstdc++) around the next definition of each in the symbol search
 * order (dlsym RTLD_NEXT): the one the program would call without this library, glibc's or
 * another preloaded allocator's (jemalloc, tcmalloc), so every block comes from, and goes back
 * to, the allocator the program chose, which answers its errors as it would. Each thread
 * samples by bytes (allocrec.h): an allocation that covers the thread's gap to its next sampled
 * byte sends its registers and the top of its stack to proftop through the shared ring
 * (shmring.h); its free is sent too (a sampled block is known by a set of their addresses, or a
 * small one by a header: "sampled blocks" below).
 *
 * What it must not do: change what the program sees. It walks no stack, opens no descriptor
 * once the program runs, does no I/O, and gives errno back as it found it; a failing call
 * fails as the next allocator's does.
 *
 * It never recurses or deadlocks: a thread inside it (pthread_getattr_np allocates) goes
 * straight to the next allocator; while the next allocator's functions are being looked up
 * (dlsym may allocate) allocations come from a static arena; thread state is initial-exec TLS
 * (no allocation on first use); the ring and the set take no lock, so a signal handler that
 * allocates, or a child forked while another thread was inside, is safe; a forked child takes
 * its own pid (pthread_atfork). Before its constructor ran (ld.so's own allocations, other
 * libraries' constructors), with no ring, or when the ring is not one, it samples nothing.
 *
 * Threads: any of the target's; the state below is either set once by the constructor before
 * other threads exist, per-thread, or atomic. */
#include "alloc_env.h"
#include "proftop/allocrec.h"
#include "proftop/shmring.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

extern void *__libc_stack_end; /* ld.so's: where the main thread's stack started */

/* --- the next allocator ------------------------------------------------------------------------
 *
 * Looked up once, at the first call (which may come before the constructor). dlsym may
 * allocate: what the looking-up asks for, and whatever another thread asks for meanwhile, comes
 * from a static arena, which is never given back (its blocks are known by their address). */

struct next_allocator {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable_size)(void *);
};

enum { UNRESOLVED, RESOLVING, RESOLVED };

static struct next_allocator next;
static _Atomic int next_state;

#define ARENA_BYTES (256u * 1024)
static _Alignas(4096) unsigned char arena[ARENA_BYTES];
static _Atomic size_t arena_used;

static bool in_arena(const void *p)
{
	return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA_BYTES;
}

/* size bytes at alignment (a power of two, at most a page) from the arena, zeroed (it never
 * reuses a byte); a size_t before each block holds its size. NULL and ENOMEM when it is full. */
static void *arena_alloc(size_t size, size_t alignment)
{
	size_t at, start, end;

	if (alignment < 16)
		alignment = 16;
	if (alignment > 4096 || size > ARENA_BYTES) {
		errno = ENOMEM;
		return NULL;
	}
	at = atomic_load_explicit(&arena_used, memory_order_relaxed);
	do {
		start = (at + sizeof(size_t) + alignment - 1) & ~(alignment - 1);
		end = start + size;
		if (end > ARENA_BYTES) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!atomic_compare_exchange_weak_explicit(&arena_used, &at, end, memory_order_relaxed,
							memory_order_relaxed));
	memcpy(arena + start - sizeof(size_t), &size, sizeof(size));
	return arena + start;
}

static size_t arena_size(const void *p)
{
	size_t size;

	memcpy(&size, (const unsigned char *)p - sizeof(size_t), sizeof(size));
	return size;
}

static void *lookup(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* Look the next allocator up, unless another thread does (the arena serves this one meanwhile);
 * whether it is known now. Out of line: the entry points' common path saves no register. */
__attribute__((noinline, cold)) static bool resolve(void)
{
	int state = UNRESOLVED, saved = errno;
	struct next_allocator found;

	if (!atomic_compare_exchange_strong_explicit(&next_state, &state, RESOLVING,
						     memory_order_acquire, memory_order_acquire))
		return state == RESOLVED;
	found.malloc = (void *(*)(size_t))lookup("malloc");
	found.calloc = (void *(*)(size_t, size_t))lookup("calloc");
	found.realloc = (void *(*)(void *, size_t))lookup("realloc");
	found.free = (void (*)(void *))lookup("free");
	found.memalign = (void *(*)(size_t, size_t))lookup("memalign");
	found.posix_memalign = (int (*)(void **, size_t, size_t))lookup("posix_memalign");
	found.aligned_alloc = (void *(*)(size_t, size_t))lookup("aligned_alloc");
	found.valloc = (void *(*)(size_t))lookup("valloc");
	found.pvalloc = (void *(*)(size_t))lookup("pvalloc");
	found.usable_size = (size_t (*)(void *))lookup("malloc_usable_size");
	next = found;
	alloc_env_resolve(lookup);
	atomic_store_explicit(&next_state, RESOLVED, memory_order_release);
	errno = saved;
	return true;
}

/* Whether the next allocator is known; looked up now if it is not, and not by this thread
 * already (false: take the arena). */
static inline bool ready(void)
{
	if (__builtin_expect(atomic_load_explicit(&next_state, memory_order_acquire) == RESOLVED, 1))
		return true;
	return resolve();
}

/* --- sampling state ---------------------------------------------------------------------------- */

static void *ring;                 /* set once by the constructor; NULL: not sampling */
static uint64_t mean = ALLOCREC_DEFAULT_MEAN;
static uintptr_t own_start, own_end; /* this library's code: its frames are left out */
static pthread_t main_thread;      /* whose stack is the process's (set by the constructor) */
static uintptr_t main_stack_max;   /* how far below __libc_stack_end that stack may reach */

static _Atomic uint32_t own_pid;   /* getpid(), kept: a system call per sample otherwise */
static TLS int busy;               /* inside: allocate straight from the next allocator */
static TLS uint32_t own_tid;       /* the thread's id once asked; 0: not yet */
static TLS uint64_t until;         /* bytes to this thread's next sampled one; 0: not drawn yet */
static TLS uint64_t rng;
static TLS uintptr_t stack_lo, stack_hi; /* the thread's stack; hi 0: not looked up yet */

/* --- the live set ------------------------------------------------------------------------------
 *
 * Sampled blocks without a header (below: "sampled blocks"), and a header block whose header
 * free() may not read. Open addressing on their addresses (0: empty, 1: a block was here), a
 * block's address with LIVE_HEADER when it has a header. free() looks at the set only while it
 * holds any, and a counting filter in front keeps most of those looks at one load. It holds
 * about as many blocks as the program's heap has bytes in use over the sampling mean (32 GiB at
 * 512 KiB, 256 MiB at --alloc-rate 4K); past that a sampled block that needs the set is not
 * told at its free (ALLOCREC_UNTRACKED), or takes a header. */
#define LIVE_SLOTS (1u << 16)
#define LIVE_PROBES 64
#define FILTER_SLOTS (1u << 14)    /* 32 KiB: the free of a block never sampled stays in cache */
#define GONE 1u
#define LIVE_HEADER 2u             /* (addresses are 16-byte aligned: the low bits are free) */

enum block_kind {
	BLOCK_PLAIN,   /* not sampled */
	BLOCK_HEADER,  /* sampled, behind a header */
	BLOCK_LISTED,  /* sampled, in the live set as it is */
};

static _Atomic uint64_t live[LIVE_SLOTS];
static _Atomic uint16_t filter[FILTER_SLOTS];
static _Atomic uint64_t nlive;     /* sampled blocks in the set: while 0, a free looks no further */

static uint64_t hash(uint64_t addr)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdull;
	addr ^= addr >> 33;
	return addr;
}

static bool live_add(uint64_t addr, enum block_kind kind)
{
	uint64_t h = hash(addr), value = addr | (kind == BLOCK_HEADER ? LIVE_HEADER : 0);

	if (addr & 15)
		return false;
	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		_Atomic uint64_t *slot = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);

		if ((v == 0 || v == GONE) &&
		    atomic_compare_exchange_strong_explicit(slot, &v, value, memory_order_relaxed,
							    memory_order_relaxed)) {
			atomic_fetch_add_explicit(&filter[h & (FILTER_SLOTS - 1)], 1,
						  memory_order_release);
			atomic_fetch_add_explicit(&nlive, 1, memory_order_release);
			return true;
		}
	}
	return false;
}

/* What the set says addr is (BLOCK_PLAIN: not in it), taken out of it when remove. */
static enum block_kind live_find(uint64_t addr, bool remove)
{
	uint64_t h = hash(addr);

	if (!atomic_load_explicit(&nlive, memory_order_acquire) ||
	    !atomic_load_explicit(&filter[h & (FILTER_SLOTS - 1)], memory_order_acquire))
		return BLOCK_PLAIN;
	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		_Atomic uint64_t *slot = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
		enum block_kind kind = v & LIVE_HEADER ? BLOCK_HEADER : BLOCK_LISTED;

		if (v == 0)
			return BLOCK_PLAIN;
		if ((v & ~(uint64_t)15) != addr)
			continue;
		if (!remove)
			return kind;
		if (atomic_compare_exchange_strong_explicit(slot, &v, GONE, memory_order_relaxed,
							    memory_order_relaxed)) {
			atomic_fetch_sub_explicit(&filter[h & (FILTER_SLOTS - 1)], 1,
						  memory_order_release);
			atomic_fetch_sub_explicit(&nlive, 1, memory_order_release);
			return kind;
		}
	}
	return BLOCK_PLAIN;
}

/* --- records ----------------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's stack, looked up at its first sample: the main thread's from where it
 * started down as far as its limit lets it grow; another's as pthreads made it (which may
 * allocate: the caller is busy), up to its thread descriptor, which glibc keeps at the top. */
static void find_thread_stack(void)
{
	uintptr_t self = (uintptr_t)pthread_self();
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_equal(pthread_self(), main_thread)) {
		stack_hi = (uintptr_t)__libc_stack_end;
		stack_lo = stack_hi > main_stack_max ? stack_hi - main_stack_max : 0;
		return;
	}
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
		if (self > stack_lo && self < stack_hi)
			stack_hi = self;
	}
	pthread_attr_destroy(&attr);
}

/* Bytes of stack a record made from here will copy, at most: from this frame to the end of
 * the thread's stack, and a little for the frames below it that record_stack() adds. */
#define STACK_SLACK 512u

static uint32_t stack_room(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	if (!stack_hi)
		find_thread_stack();
	if (here >= stack_lo && here < stack_hi && stack_hi - here + STACK_SLACK < ALLOCREC_STACK_MAX)
		return (uint32_t)(stack_hi - here + STACK_SLACK);
	return ALLOCREC_STACK_MAX;
}

/* Copy up to max bytes of the stack from sp to into; the bytes copied. Within the thread's own
 * stack a plain copy, bounded by its end; elsewhere (a signal's alternate stack, a coroutine's)
 * through process_vm_readv(), which stops at the first unmapped page instead of faulting. */
static uint32_t copy_stack(unsigned char *into, uintptr_t sp, uint32_t max)
{
	struct iovec local = { into, max }, remote = { (void *)sp, max };
	ssize_t got;

	if (sp >= stack_lo && sp < stack_hi) {
		uint32_t n = stack_hi - sp < max ? (uint32_t)(stack_hi - sp) : max;

		memcpy(into, (const void *)sp, n);
		return n;
	}
	got = process_vm_readv((pid_t)atomic_load_explicit(&own_pid, memory_order_relaxed), &local,
			       1, &remote, 1, 0);
	return got > 0 ? (uint32_t)got : 0;
}

/* The registers of this frame and up to room bytes of the stack above it into r: proftop
 * unwinds from here, through this library's frames (which it leaves out) to the program's. */
__attribute__((noinline)) static void record_stack(struct allocrec *r, uint32_t room)
{
	allocrec_take_registers(r->regs);
	r->stack_size = copy_stack((unsigned char *)(r + 1), (uintptr_t)r->regs[ALLOCREC_REG_SP], room);
}

/* Send one record (the caller is busy). A full ring drops it (the ring counts it). */
static void send(uint32_t kind, uint64_t addr, uint64_t size, bool stack)
{
	uint64_t pos;
	uint32_t room = stack ? stack_room() : 0;
	struct allocrec *r = shmring_reserve(ring, sizeof(*r) + room, &pos);

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
	r->code_start = own_start;
	r->code_end = own_end;
	r->stack_size = 0;
	if (stack)
		record_stack(r, room);
	shmring_publish(ring, pos);
}

/* send() from an entry point: busy meanwhile, and errno as it was. */
static void report(uint32_t kind, uint64_t addr, uint64_t size, bool stack)
{
	int saved = errno;

	busy = 1;
	send(kind, addr, size, stack);
	busy = 0;
	errno = saved;
}

/* --- sampled blocks ----------------------------------------------------------------------------
 *
 * A sampled block of LISTED_MIN bytes or more is the next allocator's block as it is, its
 * address in the live set: its size class, its usable size and how realloc() grows it are the
 * allocator's own. So are the aligned allocators' (memalign and the like). A smaller one is
 * made HEADER bytes larger and returned past a header: a tag (the block's address mixed with a
 * secret drawn at start). free() tells it by its tag, one load just before the block (a block
 * never sampled has its allocator's chunk header or its neighbour's bytes there, which match
 * the tag only by a 2^-64 chance), so the frees of the other blocks, nearly all, cost a compare
 * while the live set is empty, and a load of its filter while it is not. The 16 bytes more may
 * take a small block into the allocator's next size class; a sampled small block is rare, and
 * its usable size is the larger block's less the header. The tag is read only when it is in the
 * block's own page: a block at the start of a page may have nothing mapped before it, so a
 * header block whose header would be there (or that is not 16-byte aligned) goes in the live
 * set too. */

#define LISTED_MIN 1024
#define HEADER 16
#define PAGE 4096

struct header {
	uint64_t tag;
	uint64_t unused;
};

static uint64_t secret;

static uint64_t tag_of(const void *user)
{
	return secret ^ (uint64_t)(uintptr_t)user;
}

/* Whether user's header may be read (see above). */
static bool header_readable(const void *user)
{
	uintptr_t at = (uintptr_t)user;

	return !(at & 15) && (at & (PAGE - 1)) >= HEADER;
}

/* (No secret, no ring: nothing was sampled, and nothing is looked at.) */
static inline bool has_header(const void *user)
{
	return secret && user && header_readable(user) &&
	       ((const struct header *)user - 1)->tag == tag_of(user);
}

/* What user is: a plain block, a sampled one behind a header, or one in the live set. */
static inline enum block_kind block_of(const void *user, bool remove)
{
	if (__builtin_expect(has_header(user), 0))
		return BLOCK_HEADER;
	if (__builtin_expect(atomic_load_explicit(&nlive, memory_order_relaxed) != 0, 0) && user)
		return live_find((uint64_t)(uintptr_t)user, remove);
	return BLOCK_PLAIN;
}

/* due()'s rare part, out of line so that the common one saves no register: the allocation
 * covers the gap (or the thread's first: its gap is drawn now). */
__attribute__((noinline, cold)) static bool due_now(size_t size)
{
	int saved = errno;
	bool sample = true;

	if (!until) { /* the thread's first allocation: its gap is drawn now */
		rng = now_ns() ^ ((uint64_t)syscall(SYS_gettid) << 32) ^ (uint64_t)(uintptr_t)&busy;
		until = allocrec_next_gap(&rng, mean);
		if (size < until) {
			until -= size;
			sample = false;
		}
	}
	if (sample)
		until = allocrec_next_gap(&rng, mean);
	errno = saved;
	return sample;
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

/* A sampled block of size bytes for the caller (zeroed when zero), reported. */
__attribute__((noinline, cold)) static void *sampled(size_t size, bool zero)
{
	unsigned char *b;
	void *user;

	if (size >= LISTED_MIN) {
		b = zero ? next.calloc(1, size) : next.malloc(size);
		if (!b || live_add((uint64_t)(uintptr_t)b, BLOCK_LISTED)) {
			if (b)
				report(ALLOCREC_ALLOC, (uint64_t)(uintptr_t)b, size, true);
			return b;
		}
		next.free(b); /* the set is full: with a header, then */
	}
	/* A size with no room for the header is not sampled: the allocator refuses it. */
	if (size > PTRDIFF_MAX - HEADER)
		return zero ? next.calloc(1, size) : next.malloc(size);
	b = zero ? next.calloc(1, size + HEADER) : next.malloc(size + HEADER);
	if (!b)
		return NULL;
	user = b + HEADER;
	*(struct header *)b = (struct header){ tag_of(user), 0 };
	if (!header_readable(user) && !live_add((uint64_t)(uintptr_t)user, BLOCK_HEADER)) {
		/* No way to tell it at its free: not sampled after all. */
		next.free(b);
		return zero ? next.calloc(1, size) : next.malloc(size);
	}
	report(ALLOCREC_ALLOC, (uint64_t)(uintptr_t)user, size, true);
	return user;
}

/* A block p of size bytes that the allocator made and the gap samples, as it is (an aligned
 * one, or one realloc() moved): in the live set. */
__attribute__((noinline, cold)) static void sampled_listed(void *p, size_t size)
{
	report(live_add((uint64_t)(uintptr_t)p, BLOCK_LISTED) ? ALLOCREC_ALLOC : ALLOCREC_UNTRACKED,
	       (uint64_t)(uintptr_t)p, size, true);
}

/* The free of a sampled block of kind, out of the set already: sent, the header's tag undone. */
__attribute__((noinline, cold)) static void release_sampled(void *user, enum block_kind kind)
{
	if (kind == BLOCK_HEADER)
		((struct header *)user - 1)->tag = 0;
	if (!busy)
		report(ALLOCREC_FREE, (uint64_t)(uintptr_t)user, 0, false);
	next.free(kind == BLOCK_HEADER ? (unsigned char *)user - HEADER : user);
}

/* Free user, a block of the caller's: a plain one, or a sampled one (whose free is sent). */
static inline void release(void *user)
{
	enum block_kind kind = block_of(user, true);

	if (__builtin_expect(kind != BLOCK_PLAIN, 0))
		release_sampled(user, kind);
	else
		next.free(user);
}

/* The bytes the caller may use in user: its allocator's, less the header of a sampled block. */
static size_t usable(void *user, enum block_kind kind)
{
	size_t n;

	if (!next.usable_size)
		return 0;
	if (kind != BLOCK_HEADER)
		return next.usable_size(user);
	n = next.usable_size((unsigned char *)user - HEADER);
	return n > HEADER ? n - HEADER : 0;
}

/* --- the entry points -------------------------------------------------------------------------- */

EXPORT void *malloc(size_t size)
{
	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, 16);
	return __builtin_expect(due(size), 0) ? sampled(size, false) : next.malloc(size);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_expect(!ready(), 0)) {
		if (__builtin_mul_overflow(n, size, &bytes)) {
			errno = ENOMEM;
			return NULL;
		}
		return arena_alloc(bytes, 16);
	}
	if (__builtin_mul_overflow(n, size, &bytes))
		return next.calloc(n, size); /* (which says ENOMEM) */
	return __builtin_expect(due(bytes), 0) ? sampled(bytes, true) : next.calloc(n, size);
}

/* (A block that is not the arena's came from the next allocator, after it was known.) */
EXPORT void free(void *p)
{
	if (__builtin_expect(!p || in_arena(p), 0))
		return;
	release(p);
}

EXPORT size_t malloc_usable_size(void *p)
{
	if (in_arena(p))
		return arena_size(p);
	if (!p || !ready())
		return 0;
	return usable(p, block_of(p, false));
}

/* realloc() of a block without a header (plain or listed) by the allocator's own realloc():
 * the block grows in place as it would. A listed block is no more a sampled one once moved (its
 * free is sent); the block it becomes is one allocation of size bytes, sampled as the gap says
 * (as it is when it is large; by moving it behind a header when it is small). */
static void *realloc_as_is(void *p, size_t size, enum block_kind kind)
{
	void *q;

	if (kind == BLOCK_PLAIN && (!size || !due(size)))
		return next.realloc(p, size);
	if (kind == BLOCK_PLAIN && size < LISTED_MIN) { /* due: moved behind a header */
		size_t old = usable(p, kind);

		q = sampled(size, false);
		if (!q)
			return NULL;
		memcpy(q, p, old < size ? old : size);
		next.free(p);
		return q;
	}
	if (kind == BLOCK_LISTED)
		block_of(p, true);
	q = next.realloc(p, size);
	if (kind == BLOCK_LISTED) {
		if (!q && size) { /* failed: p is as it was */
			live_add((uint64_t)(uintptr_t)p, BLOCK_LISTED);
			return NULL;
		}
		if (!busy)
			report(ALLOCREC_FREE, (uint64_t)(uintptr_t)p, 0, false);
		if (q && size && !due(size))
			return q;
	}
	if (q && size)
		sampled_listed(q, size);
	return q;
}

/* realloc() of a block behind a header: moved, by copying, to a block sampled or not as the gap
 * says; to nothing, as the allocator's realloc(p, 0) does. */
static void *realloc_header(void *p, size_t size)
{
	size_t old = usable(p, BLOCK_HEADER);
	void *q;

	if (!size) {
		block_of(p, true);
		((struct header *)p - 1)->tag = 0;
		if (!busy)
			report(ALLOCREC_FREE, (uint64_t)(uintptr_t)p, 0, false);
		return next.realloc((unsigned char *)p - HEADER, 0);
	}
	q = malloc(size);
	if (!q)
		return NULL;
	memcpy(q, p, old < size ? old : size);
	release(p);
	return q;
}

EXPORT void *realloc(void *p, size_t size)
{
	enum block_kind kind;
	void *q;

	if (!p)
		return malloc(size);
	if (__builtin_expect(in_arena(p), 0) || !ready()) {
		if (!in_arena(p))
			return NULL;
		q = malloc(size);
		if (q)
			memcpy(q, p, arena_size(p) < size ? arena_size(p) : size);
		return q;
	}
	kind = block_of(p, false);
	return kind == BLOCK_HEADER ? realloc_header(p, size) : realloc_as_is(p, size, kind);
}

EXPORT void *memalign(size_t alignment, size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, alignment);
	p = next.memalign ? next.memalign(alignment, size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled_listed(p, size);
	return p;
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
	int err;

	if (__builtin_expect(!ready(), 0)) {
		*out = arena_alloc(size, alignment);
		return *out ? 0 : ENOMEM;
	}
	if (!next.posix_memalign)
		return ENOMEM;
	err = next.posix_memalign(out, alignment, size);
	if (!err && __builtin_expect(due(size), 0))
		sampled_listed(*out, size);
	return err;
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, alignment);
	p = next.aligned_alloc ? next.aligned_alloc(alignment, size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled_listed(p, size);
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, PAGE);
	p = next.valloc ? next.valloc(size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled_listed(p, size);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc((size + PAGE - 1) & ~(size_t)(PAGE - 1), PAGE);
	p = next.pvalloc ? next.pvalloc(size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled_listed(p, size);
	return p;
}

/* --- start ------------------------------------------------------------------------------------- */

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

/* The ring the environment names (/proc/PID/fd/N: proftop's descriptor, so that the program
 * inherits none), mapped; NULL when there is none or it is not one. The descriptor lives only
 * for the mapping, before the program's main(). */
static void *map_ring(const char *path)
{
	struct stat st;
	void *mem;
	int fd;

	if (!path || strncmp(path, "/proc/", 6))
		return NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED)
		return NULL;
	if (!shmring_valid(mem, (size_t)st.st_size) ||
	    shmring_max_payload(((struct shmring_header *)mem)->nslots,
				((struct shmring_header *)mem)->slot_size) <
		    sizeof(struct allocrec) + ALLOCREC_STACK_MAX) {
		munmap(mem, (size_t)st.st_size);
		return NULL;
	}
	return mem;
}

__attribute__((constructor)) static void start(void)
{
	int saved = errno;
	struct alloc_env env;
	struct rlimit limit;
	void *mem;

	busy = 1;
	ready();
	alloc_env_take(&env); /* the variables, out of the program's environment */
	if (env.mean) {
		char *end;
		unsigned long long m = strtoull(env.mean, &end, 10);

		if (!*end && m >= 1)
			mean = m;
	}
	mem = map_ring(env.ring);
	if (mem) {
		dl_iterate_phdr(find_self, (void *)(uintptr_t)&start);
		main_thread = pthread_self();
		main_stack_max = 8u << 20;
		if (!getrlimit(RLIMIT_STACK, &limit) && limit.rlim_cur != RLIM_INFINITY)
			main_stack_max = limit.rlim_cur;
		else
			main_stack_max = (uintptr_t)1 << 30;
		atomic_store_explicit(&own_pid, (uint32_t)getpid(), memory_order_relaxed);
		pthread_atfork(NULL, NULL, forked);
		secret = now_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 40 ^
			 (uint64_t)(uintptr_t)&secret;
		secret |= 1; /* never 0: a zeroed word is no tag */
		ring = mem;
	}
	busy = 0;
	errno = saved;
}
