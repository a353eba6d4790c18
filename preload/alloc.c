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
 * (shmring.h); its free is sent too (a sampled block is known by a set of their addresses: "the
 * live set" below; the block itself is the allocator's, untouched).
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
#include <stdio.h>
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
	int (*getattr)(pthread_t, pthread_attr_t *);
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
	if (alignment > 4096 || (alignment & (alignment - 1)) || size > ARENA_BYTES) {
		errno = alignment & (alignment - 1) ? EINVAL : ENOMEM;
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
	found.getattr = (int (*)(pthread_t, pthread_attr_t *))lookup("pthread_getattr_np");
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
static TLS int in_getattr;         /* inside the program's pthread_getattr_np() (below) */

/* --- the live set ------------------------------------------------------------------------------
 *
 * The sampled blocks not freed yet: open addressing on their addresses (0: empty, GONE: a block
 * was here). A sampled block is the allocator's block as it is (its size class, its usable size,
 * how realloc() grows it and what the allocator's own calls say of it are the allocator's), so
 * free() can tell it only by this set: it looks only while the set holds any, a counting filter
 * in front keeps most of those looks at one load, and a look probes no further than any block
 * was ever put. The set holds LIVE_SLOTS blocks at most, about the blocks sampled in a heap of
 * 128 GiB at the default mean (1 GiB at --alloc-rate 4K): past that, a sampled block is sent as
 * ALLOCREC_UNTRACKED, counted as allocated but never in use. 2 MiB and 128 KiB of zero pages,
 * touched as blocks are put. */
#define LIVE_SLOTS (1u << 18)
#define LIVE_PROBES 64
#define FILTER_SLOTS (1u << 16)
#define GONE 1u

static _Atomic uint64_t live[LIVE_SLOTS];
static _Atomic uint16_t filter[FILTER_SLOTS];
static _Atomic uint64_t nlive;     /* sampled blocks in the set: while 0, a free looks no further */
static _Atomic unsigned live_reach = 1; /* probes a look needs: 1 + the farthest a block went */

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

	if (addr <= GONE)
		return false;
	for (unsigned i = 0; i < LIVE_PROBES; i++) {
		_Atomic uint64_t *slot = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
		unsigned reach = atomic_load_explicit(&live_reach, memory_order_relaxed);

		if ((v == 0 || v == GONE) &&
		    atomic_compare_exchange_strong_explicit(slot, &v, addr, memory_order_relaxed,
							    memory_order_relaxed)) {
			while (reach < i + 1 &&
			       !atomic_compare_exchange_weak_explicit(&live_reach, &reach, i + 1,
								      memory_order_relaxed,
								      memory_order_relaxed))
				;
			atomic_fetch_add_explicit(&filter[h & (FILTER_SLOTS - 1)], 1,
						  memory_order_release);
			atomic_fetch_add_explicit(&nlive, 1, memory_order_release);
			return true;
		}
	}
	return false;
}

/* Whether addr is a sampled block's (taken out of the set when remove). */
static bool live_find(uint64_t addr, bool remove)
{
	uint64_t h = hash(addr);
	unsigned reach;

	if (!atomic_load_explicit(&filter[h & (FILTER_SLOTS - 1)], memory_order_acquire))
		return false;
	reach = atomic_load_explicit(&live_reach, memory_order_relaxed);
	for (unsigned i = 0; i < reach; i++) {
		_Atomic uint64_t *slot = &live[(h + i) & (LIVE_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);

		if (v == 0)
			return false;
		if (v != addr)
			continue;
		if (!remove)
			return true;
		if (atomic_compare_exchange_strong_explicit(slot, &v, GONE, memory_order_relaxed,
							    memory_order_relaxed)) {
			atomic_fetch_sub_explicit(&filter[h & (FILTER_SLOTS - 1)], 1,
						  memory_order_release);
			atomic_fetch_sub_explicit(&nlive, 1, memory_order_release);
			return true;
		}
	}
	return false;
}

/* Whether p is a sampled block (taken out of the set when remove): the common case, a set that
 * holds none, costs one load. */
static inline bool is_sampled(const void *p, bool remove)
{
	return __builtin_expect(atomic_load_explicit(&nlive, memory_order_relaxed) != 0, 0) && p &&
	       live_find((uint64_t)(uintptr_t)p, remove);
}

/* --- records ----------------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's stack, looked up at its first sample: the main thread's from where it
 * started down as far as its limit lets it grow; another's as pthreads made it, up to its thread
 * descriptor, which glibc keeps at the top. pthread_getattr_np() allocates while it holds the
 * thread's lock: not looked up while the program is inside it (a sample of its allocation would
 * take the lock again), nor when the next one is not known. */
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
	if (in_getattr || !next.getattr || next.getattr(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
		if (self > stack_lo && self < stack_hi)
			stack_hi = self;
	}
	pthread_attr_destroy(&attr);
}

/* The program's pthread_getattr_np(), marked: glibc allocates in it with the thread's lock held
 * (find_thread_stack() must not ask then). */
EXPORT int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr)
{
	int rc;

	if (!ready() || !next.getattr)
		return ENOSYS;
	in_getattr++;
	rc = next.getattr(thread, attr);
	in_getattr--;
	return rc;
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

#define PAGE 4096

/* due()'s rare part, out of line so that the common one saves no register: the allocation
 * covers the gap (or the thread's first: its gap is drawn now). Drawing a gap is floating-point
 * arithmetic: done with the SSE control word's defaults (every exception masked: a program that
 * traps inexact results must not get a SIGFPE in malloc), and the word, with the exception
 * flags the program may be watching (fetestexcept), put back as it was. */
__attribute__((noinline, cold)) static bool due_now(size_t size)
{
	int saved = errno;
	bool sample = true;
	uint32_t program_csr, default_csr = 0x1f80;

	__asm__ volatile("stmxcsr %0" : "=m"(program_csr));
	__asm__ volatile("ldmxcsr %0" : : "m"(default_csr));

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
	__asm__ volatile("ldmxcsr %0" : : "m"(program_csr));
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

/* A block p of size bytes that the allocator made and the gap samples: in the live set, and
 * reported. */
__attribute__((noinline, cold)) static void sampled(void *p, size_t size)
{
	report(live_add((uint64_t)(uintptr_t)p) ? ALLOCREC_ALLOC : ALLOCREC_UNTRACKED,
	       (uint64_t)(uintptr_t)p, size, true);
}

/* A sampled block freed (out of the set already): sent. */
__attribute__((noinline, cold)) static void freed(void *p)
{
	if (!busy)
		report(ALLOCREC_FREE, (uint64_t)(uintptr_t)p, 0, false);
}

/* --- the entry points -------------------------------------------------------------------------- */

EXPORT void *malloc(size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, 16);
	p = next.malloc(size);
	if (p && __builtin_expect(due(size), 0))
		sampled(p, size);
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (__builtin_expect(!ready(), 0)) {
		if (__builtin_mul_overflow(n, size, &bytes)) {
			errno = ENOMEM;
			return NULL;
		}
		return arena_alloc(bytes, 16);
	}
	p = next.calloc(n, size);
	if (p && __builtin_expect(due(n * size), 0))
		sampled(p, n * size);
	return p;
}

/* (A block that is not the arena's came from the next allocator, after it was known.) The free
 * is sent before the allocator may hand the block to another thread, whose allocation's record
 * then follows it. */
EXPORT void free(void *p)
{
	if (__builtin_expect(!p || in_arena(p), 0))
		return;
	if (is_sampled(p, true))
		freed(p);
	next.free(p);
}

EXPORT size_t malloc_usable_size(void *p)
{
	if (in_arena(p))
		return arena_size(p);
	if (!p || !ready() || !next.usable_size)
		return 0;
	return next.usable_size(p);
}

/* By the allocator's own realloc(): the block grows in place or moves as it would. A sampled
 * block is no more one once resized (its free is sent first, as free()'s); the block it becomes
 * is one allocation of size bytes, sampled as the gap says. (Should the allocator then fail,
 * the old block is put back in the set, but proftop has taken it as freed: the in-use profile
 * misses one block, on a failed realloc.) */
EXPORT void *realloc(void *p, size_t size)
{
	bool was_sampled;
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
	was_sampled = is_sampled(p, true);
	if (was_sampled)
		freed(p);
	q = next.realloc(p, size);
	if (!q && size && was_sampled)
		live_add((uint64_t)(uintptr_t)p);
	if (q && size && __builtin_expect(due(size), 0))
		sampled(q, size);
	return q;
}

EXPORT void *memalign(size_t alignment, size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, alignment);
	p = next.memalign ? next.memalign(alignment, size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled(p, size);
	return p;
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
	int err;

	if (__builtin_expect(!ready(), 0)) {
		void *p = arena_alloc(size, alignment);

		if (!p)
			return errno;
		*out = p;
		return 0;
	}
	if (!next.posix_memalign)
		return ENOMEM;
	err = next.posix_memalign(out, alignment, size);
	if (!err && __builtin_expect(due(size), 0))
		sampled(*out, size);
	return err;
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, alignment);
	p = next.aligned_alloc ? next.aligned_alloc(alignment, size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled(p, size);
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size, PAGE);
	p = next.valloc ? next.valloc(size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled(p, size);
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p;

	if (__builtin_expect(!ready(), 0))
		return arena_alloc(size > ARENA_BYTES ? size : (size + PAGE - 1) & ~(size_t)(PAGE - 1),
				   PAGE);
	p = next.pvalloc ? next.pvalloc(size) : NULL;
	if (p && __builtin_expect(due(size), 0))
		sampled(p, size);
	return p;
}

/* --- start ------------------------------------------------------------------------------------- */

/* In a forked child: another process, and its one thread another thread, whose gaps are drawn
 * afresh (not the parent's next ones). */
static void forked(void)
{
	atomic_store_explicit(&own_pid, (uint32_t)getpid(), memory_order_relaxed);
	own_tid = 0;
	until = 0;
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

/* Whether fd is proftop's ring: a memfd of its name. */
static bool is_ring_fd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return !strncmp(target, "/memfd:proftop-alloc", 20);
}

/* The ring on fd mapped (fd closed when close_it); NULL when it is none. */
static void *map_ring_fd(int fd, bool close_it)
{
	struct stat st;
	void *mem = MAP_FAILED;

	if (is_ring_fd(fd) && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (close_it)
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

/* The ring the environment names, mapped; NULL when there is none or it is not one. The command
 * proftop started inherits its descriptor: mapped, and closed before the program's main(), so
 * that the program has none. A program that command executes opens it by proftop's /proc path
 * (its own descriptor, for the mapping only); checked to be a memfd of the ring's name first
 * (opening anything else could act: a terminal, a FIFO). */
static void *map_ring(const struct alloc_env *env)
{
	int fd;

	if (env->fd >= 0 && is_ring_fd(env->fd))
		return map_ring_fd(env->fd, true);
	if (!env->ring || strncmp(env->ring, "/proc/", 6))
		return NULL;
	{
		char target[64];
		ssize_t n = readlink(env->ring, target, sizeof(target) - 1);

		if (n <= 0)
			return NULL;
		target[n] = '\0';
		if (strncmp(target, "/memfd:proftop-alloc", 20))
			return NULL;
	}
	fd = open(env->ring, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? NULL : map_ring_fd(fd, true);
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
	mem = map_ring(&env);
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
		ring = mem;
	}
	busy = 0;
	errno = saved;
}
