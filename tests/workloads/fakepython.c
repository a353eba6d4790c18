/* fakepython SECONDS — a process that lies about being CPython 3.12, for proftop's Python frame
 * reader (hostile_python.sh): it exports _PyRuntime, Py_Version (3.12) and PyCode_Type, and spends
 * its time in a function named _PyEval_EvalFrameDefault, while a second thread keeps rewriting
 * what those symbols lead to, a phase every 50 ms: a thread-state list that loops without ever
 * naming a thread; a thread state that names the spinning thread, whose frame chain loops, whose
 * code object's strings claim lengths of terabytes and whose line table claims more than memory;
 * and words pointing anywhere, changing while they are read. Exits 0 after SECONDS. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lies.h"

uint64_t _PyRuntime[ARENA / 8] __attribute__((aligned(64)));
uint32_t Py_Version = 0x030c01f0;
uint64_t PyCode_Type[64];

static atomic_bool done;
static pid_t spinner;

/* 3.12's offsets (pyframes.c's layout): runtime → interpreters.head 40, interpreter → threads.head
 * 72, thread state: next 8, interp 16, cframe 56, native_thread_id 144; cframe → current_frame 0;
 * interpreter frame: previous 8, f_code 0, owner 70, prev_instr 56; code: ob_type 8, name 120,
 * qualname 128, filename 112, firstlineno 68, linetable 136. */

static void looping_threads(void)
{
	flip();
	set(arena, 72, at(100));               /* its first thread state at arena[100] */
	set(&arena[100], 8, at(100));          /* ... whose next is itself */
	set(&arena[100], 16, at(0));
	set(&arena[100], 144, 1);              /* a tid nobody has */
	set(_PyRuntime, 40, at(0));            /* interp at arena[0] */
}

static void lying_frames(void)
{
	flip();
	set(arena, 72, at(100));
	set(&arena[100], 16, at(0));
	set(&arena[100], 144, (uint64_t)spinner);
	set(&arena[100], 56, at(200));         /* cframe */
	set(&arena[200], 0, at(300));          /* current frame */
	set(&arena[300], 8, at(300));          /* previous: itself */
	set(&arena[300], 0, at(400));          /* f_code */
	set(&arena[400], 8, (uint64_t)(uintptr_t)PyCode_Type);
	set(&arena[400], 120, at(600));        /* co_name: a str claiming a terabyte */
	set(&arena[400], 128, at(600));
	set(&arena[400], 112, at(600));
	set(&arena[400], 136, at(700));        /* co_linetable: bytes claiming more than memory */
	set(&arena[600], 16, (uint64_t)1 << 40);
	set(&arena[600], 32, 0xe4);            /* compact, ascii, kind 1 */
	set(&arena[700], 16, (uint64_t)1 << 62);
	set(_PyRuntime, 40, at(0));
}

static void garbage(uint64_t *x)
{
	set(_PyRuntime, 40, at(lies_random(x) % (ARENA / 8)));
	for (size_t i = 0; i < ARENA / 8; i++) {
		uint64_t r = lies_random(x);

		arena[i] = r & 1 ? at(r % (ARENA / 8)) : r >> (r & 63);
	}
}

static void (*const phases[])(void) = { looping_threads, lying_frames, NULL };
static const struct lies lies = { phases, 3, garbage, &done };

/* Where the samples land: the name the reader looks for. */
__attribute__((noinline)) uint64_t _PyEval_EvalFrameDefault(uint64_t n)
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

	spinner = (pid_t)syscall(SYS_gettid);
	lying_frames();
	pthread_create(&t, NULL, lies_run, (void *)&lies);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		_PyEval_EvalFrameDefault(100000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
		 seconds);
	atomic_store(&done, true);
	pthread_join(t, NULL);
	return 0;
}
