/* alloc_bench LIB MEAN COMMAND [ARG...] — run COMMAND with the allocation library LIB preloaded
 * (PROFTOP_ALLOC_MEAN=MEAN) and a ring it writes to, read as proftop will read it, until the
 * command ends; then say what came through. The command's own output (its rate) is left as is,
 * so the bench script can compare it with the bare command's. */
#include "proftop/allocrec.h"
#include "proftop/allocrun.h"
#include "proftop/shmring.h"
#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* proftop's ring, read as often as its sampler reads it. */
#define SLOTS ALLOCRUN_SLOTS
#define READ_EVERY_US 5000

int main(int argc, char **argv)
{
	uint32_t slot = ALLOCRUN_SLOT_SIZE;
	size_t bytes = shmring_bytes(SLOTS, slot), len;
	int fd = memfd_create("proftop-alloc-bench", MFD_CLOEXEC), status;
	struct shmring_reader rd;
	uint64_t records = 0, frees = 0, stack_bytes = 0;
	char ringtext[64];
	void *mem;
	pid_t child;

	if (argc < 4) {
		fprintf(stderr, "usage: alloc_bench LIB MEAN COMMAND [ARG...]\n");
		return 2;
	}
	if (fd < 0 || ftruncate(fd, (off_t)bytes) ||
	    (mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED ||
	    shmring_init(mem, bytes, SLOTS, slot)) {
		perror("alloc_bench: the ring");
		return 1;
	}
	shmring_reader_init(&rd, mem, SLOTS, slot);
	snprintf(ringtext, sizeof(ringtext), "/proc/%d/fd/%d", (int)getpid(), fd);
	child = fork();
	if (child == 0) {
		setenv("LD_PRELOAD", argv[1], 1);
		setenv("PROFTOP_ALLOC_RING", ringtext, 1);
		setenv("PROFTOP_ALLOC_MEAN", argv[2], 1);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	for (;;) {
		const struct allocrec *r;
		int done = waitpid(child, &status, WNOHANG) == child;

		while ((r = shmring_peek(&rd, util_now_ns(), &len))) {
			records++;
			frees += r->kind == ALLOCREC_FREE;
			stack_bytes += r->stack_size;
			shmring_release(&rd);
		}
		if (done)
			break;
		usleep(READ_EVERY_US);
	}
	fprintf(stderr, "alloc_bench: %llu records (%llu frees, %.0f bytes of stack per allocation), "
		"%llu dropped on a full ring\n", (unsigned long long)records,
		(unsigned long long)frees,
		records > frees ? (double)stack_bytes / (double)(records - frees) : 0.0,
		(unsigned long long)shmring_overflow(&rd));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
