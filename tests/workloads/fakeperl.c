/* fakeperl SECONDS [other] — a process that lies about being perl 5.36, for proftop's Perl sub reader
 * (hostile_perl.sh): it exports PL_curinterp, PL_interp_size (5.36's 3,768) and
 * Perl_pp_entersub, and spends its time in a function named Perl_runops_standard, while a second
 * thread keeps rewriting what PL_curinterp leads to, a phase every 50 ms: a chain of context
 * stacks that comes round; a stack claiming a million contexts over a large zeroed mapping; subs
 * whose globs, stashes and names point at themselves or claim lengths of gigabytes, a call op
 * whose stack points anywhere; and words pointing anywhere, changing while they are read.
 * With "other" it says its interpreter is 4,000 bytes: a perl whose layout proftop does not
 * know. Exits 0 after SECONDS. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lies.h"

#define ZEROS (128u << 20) /* a million 104-byte contexts, all zero */

uint64_t PL_curinterp;
uint16_t PL_interp_size = 3768;

static uint8_t *zeros;
static atomic_bool done;

/* 5.36's offsets (perlframes.c's layout): interpreter: stack_sp 0, op 8, curcop 208,
 * curstackinfo 224, phase 2512; stack info: cxstack 8, prev 16, cxix 32, cxmax 36; context
 * (104 bytes): type 0, oldcop 16, retop 48, cv 72; SV: body 0, flags 12, sv_u 16; CV body: stash
 * 32, start 40, gv 56, file 64, flags 92; GV body: name 32, stash 40; HV: aux at body + 32, its
 * name 0, count 28; HEK: length 4, key 8; op: type 32. */

/* The interpreter at arena[0] (it takes 3,768 bytes: words 0 to 470), its stack info at
 * arena[1000]. */
static void interpreter(void)
{
	set(arena, 224, at(1000));
	set32(arena, 2512, 4); /* running */
}

static void looping_stacks(void)
{
	flip();
	interpreter();
	set(&arena[1000], 16, at(1100));        /* prev: another stack ... */
	set32(&arena[1000], 32, (uint32_t)-1);  /* (no contexts) */
	set(&arena[1100], 16, at(1000));        /* ... whose prev is the first */
	set32(&arena[1100], 32, (uint32_t)-1);
	PL_curinterp = at(0);
}

static void million_contexts(void)
{
	flip();
	interpreter();
	set(&arena[1000], 8, (uint64_t)(uintptr_t)zeros);
	set32(&arena[1000], 32, (1u << 20) - 2);
	set32(&arena[1000], 36, (1u << 20) - 1);
	PL_curinterp = at(0);
}

static void lying_subs(void)
{
	flip();
	interpreter();
	set(arena, 8, at(3000));                /* op: a call */
	set32(&arena[3000], 32, 184);
	set(arena, 0, at(3100));                /* stack_sp: its sub anywhere */
	set(&arena[3100], 8, 0x7fffdeadbeefull);
	set(&arena[1000], 8, at(1200));         /* contexts at arena[1200] */
	set32(&arena[1000], 32, 1);
	set32(&arena[1000], 36, 7);
	for (int i = 0; i < 2; i++) {           /* two subs, from C (retop 0) */
		uint64_t *cx = &arena[1200 + 13 * i];

		*(uint8_t *)cx = 9;
		set(cx, 72, at(2000));
	}
	set(&arena[2000], 0, at(2100));         /* the CV: its body */
	set32(&arena[2000], 12, 13);
	set(&arena[2100], 56, at(2200));        /* its glob */
	set(&arena[2100], 64, at(2600));        /* its file: no NUL for 64 KB */
	set(&arena[2200], 0, at(2300));
	set32(&arena[2200], 12, 9);
	set(&arena[2300], 32, at(2500));        /* name: a HEK claiming 2 GB */
	set(&arena[2300], 40, at(2400));        /* stash: an HV whose aux names it by itself */
	set(&arena[2400], 0, at(2400));
	set32(&arena[2400], 12, 12 | 0x02000000);
	set32(&arena[2400], 32 + 28, 5);        /* a names array ... */
	set(&arena[2400], 32, at(2400));        /* ... which is the HV again */
	set32(&arena[2500], 4, 0x7fffffff);
	memset(&arena[2600], 'x', 8 * 1000);
	PL_curinterp = at(0);
}

static void garbage(uint64_t *x)
{
	PL_curinterp = at(lies_random(x) % (ARENA / 8));
	for (size_t i = 0; i < ARENA / 8; i++) {
		uint64_t r = lies_random(x);

		arena[i] = r & 1 ? at(r % (ARENA / 8)) : r >> (r & 63);
	}
}

static void (*const phases[])(void) = { looping_stacks, million_contexts, lying_subs, NULL };
static const struct lies lies = { phases, 4, garbage, &done };

/* A name the reader looks up (an XS sub is told by it). */
__attribute__((noinline)) void Perl_pp_entersub(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Where the samples land: the run loop's name. */
__attribute__((noinline)) uint64_t Perl_runops_standard(uint64_t n)
{
	volatile uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += i * i;
	return s;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	struct timespec start, now;
	pthread_t t;

	if (argc > 2 && !strcmp(argv[2], "other"))
		PL_interp_size = 4000;
	zeros = mmap(NULL, ZEROS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (zeros == MAP_FAILED)
		return 1;
	lying_subs();
	Perl_pp_entersub();
	pthread_create(&t, NULL, lies_run, (void *)&lies);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		Perl_runops_standard(100000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
		 seconds);
	atomic_store(&done, true);
	pthread_join(t, NULL);
	return 0;
}
