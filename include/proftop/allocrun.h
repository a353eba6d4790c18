/* allocrun.h — what an allocation run (--mode alloc) sets up before it launches the command:
 * the checks that the allocation library can go into it, the library's path, the shared ring
 * the library writes (shmring.h of allocrec.h's records) and the environment that tells the
 * command's processes where it is. The session owns it; the collector reads the ring. */
#ifndef PROFTOP_ALLOCRUN_H
#define PROFTOP_ALLOCRUN_H

#include <stddef.h>
#include <stdint.h>

/* The ring: 16 MiB of 256-byte slots. A free takes one slot; an allocation one and its stack
 * copy's (a few hundred bytes to 16 KiB: 2 to 65 slots). With the sampler's ring behind it, it
 * holds the records of a program allocating at --alloc-rate 64K while the collector reads its
 * debug information at the start (allocsplit: 40,000 records a second, 0.45 s; 8 MiB
 * overflowed). */
#define ALLOCRUN_SLOTS 65536u
#define ALLOCRUN_SLOT_SIZE 256u
#define ALLOCRUN_LIBRARY "libproftop-alloc.so"

struct allocrun {
	void *ring;                /* the ring, mapped shared */
	size_t bytes;
	uint32_t nslots, slot_size;
	int fd;                    /* its memfd: the command inherits it (and the library closes
				    * it at once); the programs it executes open it by its /proc
				    * path; -1: none */
	char *env[5];              /* LD_PRELOAD=, PROFTOP_ALLOC_RING=, PROFTOP_ALLOC_MEAN=,
				    * PROFTOP_ALLOC_FD=, NULL */
};

/* Whether the library can go into command (found as execvp() would): not a static executable
 * (no dynamic loader to preload with), not setuid or setgid (the loader ignores LD_PRELOAD
 * there). Returns 0, or -1 with *why saying what is wrong (malloc'd). A command that is not
 * found, not ELF (a script: its interpreter is what runs) or unreadable passes: exec decides. */
int allocrun_check_command(const char *command, char **why);
/* The library's path (malloc'd): $PROFTOP_ALLOC_LIB, beside proftop's executable, in its
 * build/ directory, or installed in libdir; NULL with *why when none is readable. */
char *allocrun_find_library(const char *libdir, char **why);
/* Check command, find the library, make the ring and the environment for a sample every mean
 * bytes. Returns 0, or -1 with *why (malloc'd). */
int allocrun_prepare(struct allocrun *run, const char *command, uint64_t mean, char **why);
/* The ring unmapped and its descriptor closed: after the command ended. */
void allocrun_release(struct allocrun *run);

#endif
