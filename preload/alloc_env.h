/* alloc_env.h — the allocation library's environment (alloc_env.c): the variables proftop hands
 * it, taken out of what the program sees, and put back into the environment of the programs it
 * executes, so that they are sampled too. Internal to libproftop-alloc.so. */
#ifndef PROFTOP_ALLOC_ENV_H
#define PROFTOP_ALLOC_ENV_H

/* The variables as proftop set them (NULL: not set); they point into alloc_env.c's own copies,
 * which live as long as the process. */
struct alloc_env {
	const char *ring;  /* PROFTOP_ALLOC_RING: the path the ring is mapped from */
	const char *mean;  /* PROFTOP_ALLOC_MEAN: bytes between samples on average */
	int fd;            /* PROFTOP_ALLOC_FD: the ring's descriptor, inherited by the command
			    * proftop started (not passed on); -1: none */
};

/* Called by the constructor, before the program's main(), with the thread busy (the calls to
 * setenv allocate): read the variables into *env, keep the ring's path and the mean for the
 * programs this one executes, and give the program the environment it would have without
 * proftop (no PROFTOP_ALLOC_*, and LD_PRELOAD without this library). Nothing changes when PROFTOP_ALLOC_RING is not set: the
 * library was preloaded by someone else. */
void alloc_env_take(struct alloc_env *env);

/* Look up the exec functions this library wraps with lookup (dlsym RTLD_NEXT). */
void alloc_env_resolve(void *(*lookup)(const char *name));

#endif
