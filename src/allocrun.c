/* allocrun.c — an allocation run's launch (allocrun.h). */
#include "proftop/allocrun.h"

#include "proftop/allocrec.h"
#include "proftop/shmring.h"
#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PROFTOP_ALLOCLIBDIR
#define PROFTOP_ALLOCLIBDIR "/usr/local/lib/proftop"
#endif

/* Whether the ELF file open on fd has a program interpreter (PT_INTERP); -1 when it is no ELF
 * file libelf can read. */
static int has_interpreter(int fd)
{
	Elf *elf;
	size_t n;
	int found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		elf_end(elf);
		return -1;
	}
	for (size_t i = 0; i < n && !found; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			found = 1;
	}
	elf_end(elf);
	return found;
}

int allocrun_check_command(const char *command, char **why)
{
	char *path = util_find_command(command), safe[PATH_MAX * UTIL_VISIBLE_CHAR_MAX];
	struct stat st;
	int fd, interp;

	*why = NULL;
	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		free(path);
		return 0;
	}
	util_visible(safe, sizeof(safe), path);
	interp = has_interpreter(fd);
	close(fd);
	if (st.st_mode & (S_ISUID | S_ISGID))
		*why = xasprintf("%s is set%cid: the dynamic loader ignores LD_PRELOAD in it, so "
				 "--mode alloc cannot preload its allocation library (profile a copy "
				 "without the bit, or use --mode cpu)", safe,
				 st.st_mode & S_ISUID ? 'u' : 'g');
	else if (interp == 0)
		*why = xasprintf("%s is statically linked: it has no dynamic loader to preload "
				 "proftop's allocation library with, so --mode alloc cannot see its "
				 "allocations (link it dynamically, or use --mode cpu)", safe);
	free(path);
	return *why ? -1 : 0;
}

/* The directory proftop's executable is in (malloc'd), NULL when unknown. */
static char *own_directory(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(exe);
}

char *allocrun_find_library(const char *libdir, char **why)
{
	const char *env = getenv("PROFTOP_ALLOC_LIB");
	char *dir = own_directory(), *tried[3] = { 0 };
	char *found = NULL;

	*why = NULL;
	if (env && *env) {
		if (!access(env, R_OK) && env[0] == '/')
			found = xstrdup(env);
		else
			*why = xasprintf("PROFTOP_ALLOC_LIB names %s, which is %s", env,
					 env[0] != '/' ? "not an absolute path" : strerror(errno));
		free(dir);
		return found;
	}
	if (dir) {
		tried[0] = xasprintf("%s/%s", dir, ALLOCRUN_LIBRARY);
		tried[1] = xasprintf("%s/build/%s", dir, ALLOCRUN_LIBRARY);
	}
	tried[2] = xasprintf("%s/%s", libdir, ALLOCRUN_LIBRARY);
	for (int i = 0; i < 3 && !found; i++)
		if (tried[i] && !access(tried[i], R_OK))
			found = xstrdup(tried[i]);
	if (!found)
		*why = xasprintf("the allocation library %s is not installed: not beside proftop "
				 "(%s) nor in %s; make builds it, make install installs it, "
				 "PROFTOP_ALLOC_LIB names another", ALLOCRUN_LIBRARY, dir ? dir : "?",
				 libdir);
	for (int i = 0; i < 3; i++)
		free(tried[i]);
	free(dir);
	return found;
}

int allocrun_prepare(struct allocrun *run, const char *command, uint64_t mean, char **why)
{
	const char *preload = getenv("LD_PRELOAD");
	char *lib;
	int err;

	memset(run, 0, sizeof(*run));
	run->fd = -1;
	if (allocrun_check_command(command, why))
		return -1;
	lib = allocrun_find_library(PROFTOP_ALLOCLIBDIR, why);
	if (!lib)
		return -1;
	if (strpbrk(lib, " :")) { /* LD_PRELOAD's separators */
		*why = xasprintf("the allocation library's path %s has a space or a colon, which "
				 "LD_PRELOAD cannot hold: install it elsewhere or name a copy with "
				 "PROFTOP_ALLOC_LIB", lib);
		free(lib);
		return -1;
	}
	run->nslots = ALLOCRUN_SLOTS;
	run->slot_size = ALLOCRUN_SLOT_SIZE;
	run->bytes = shmring_bytes(run->nslots, run->slot_size);
	/* Inherited by the command, whose library maps it and closes it before the program runs;
	 * the programs it executes open it by its /proc path (which a proftop made non-dumpable by
	 * file capabilities does not let them: then only the command is sampled). */
	run->fd = memfd_create("proftop-alloc", 0);
	if (run->fd < 0 || ftruncate(run->fd, (off_t)run->bytes) < 0 ||
	    (run->ring = mmap(NULL, run->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, run->fd, 0)) ==
		    MAP_FAILED) {
		err = errno;
		run->ring = NULL;
		*why = xasprintf("cannot make the allocation ring (%zu bytes of shared memory): %s",
				 run->bytes, strerror(err));
		free(lib);
		allocrun_release(run);
		return -1;
	}
	shmring_init(run->ring, run->bytes, run->nslots, run->slot_size);
	/* The command's own preloads stay, after ours. */
	run->env[0] = preload && *preload ? xasprintf("LD_PRELOAD=%s:%s", lib, preload)
					  : xasprintf("LD_PRELOAD=%s", lib);
	run->env[1] = xasprintf("PROFTOP_ALLOC_RING=/proc/%d/fd/%d", (int)getpid(), run->fd);
	run->env[2] = xasprintf("PROFTOP_ALLOC_MEAN=%llu",
				(unsigned long long)(mean ? mean : ALLOCREC_DEFAULT_MEAN));
	run->env[3] = xasprintf("PROFTOP_ALLOC_FD=%d", run->fd);
	free(lib);
	return 0;
}

void allocrun_release(struct allocrun *run)
{
	if (run->fd >= 0)
		close(run->fd);
	run->fd = -1;
	if (run->ring)
		munmap(run->ring, run->bytes);
	run->ring = NULL;
	for (int i = 0; i < 4; i++) {
		free(run->env[i]);
		run->env[i] = NULL;
	}
}
