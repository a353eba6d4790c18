/* lies.h — what the fake interpreters (fakepython.c, fakeperl.c) share: two arenas to build lies
 * in (each phase is built in the one not in use, then the interpreter's symbol is pointed at
 * it, so a reader sees each lie whole), a thread that runs one phase of lies after another,
 * each for 50 ms, and a source of random words. A phase function
 * of NULL is the garbage phase: garbage() is called over and over for its 50 ms (the words
 * keep changing under a reader); any other is called once, and the thread sleeps. */
#ifndef LIES_H
#define LIES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ARENA 65536

static uint64_t arenas[2][ARENA / 8];
static uint64_t *arena = arenas[0];

/* The run-time address of the arena's word. */
static inline uint64_t at(size_t word)
{
	return (uint64_t)(uintptr_t)&arena[word];
}

static inline void set(uint64_t *base, size_t off, uint64_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

static inline void set32(uint64_t *base, size_t off, uint32_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

/* The other arena, zeroed, to build the next phase in. */
static inline void flip(void)
{
	arena = arena == arenas[0] ? arenas[1] : arenas[0];
	memset(arena, 0, sizeof(arenas[0]));
}

static inline uint64_t lies_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct lies {
	void (*const *phases)(void); /* NULL: garbage */
	size_t nphases;
	void (*garbage)(uint64_t *x);
	atomic_bool *done;
};

static inline void *lies_run(void *arg)
{
	const struct lies *l = arg;
	uint64_t x = 88172645463325252ull;

	for (unsigned phase = 0; !atomic_load(l->done); phase++) {
		void (*lie)(void) = l->phases[phase % l->nphases];
		struct timespec end, now;

		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_nsec += 50000000;
		if (end.tv_nsec >= 1000000000) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000;
		}
		if (lie)
			lie();
		do {
			if (lie)
				usleep(1000);
			else
				l->garbage(&x);
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (!atomic_load(l->done) && (now.tv_sec < end.tv_sec ||
			 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
	}
	return NULL;
}

#endif
