/* alloc_env.c — the allocation library's environment (alloc_env.h).
 *
 * proftop starts the command with LD_PRELOAD naming this library first and PROFTOP_ALLOC_RING,
 * PROFTOP_ALLOC_MEAN and PROFTOP_ALLOC_FD set. The constructor takes them out of the environment the program
 * reads (getenv, environ, the environment its children inherit), so that a program that prints
 * or passes on its environment does what it does without proftop. To sample the programs it
 * executes too, the exec functions a program calls (execve, execv, execvp, execvpe, execl,
 * execle, execlp, fexecve, execveat, posix_spawn, posix_spawnp) are wrapped: each passes the
 * environment it was given with the three put back (this library first in LD_PRELOAD, before
 * the program's own preloads). system() and popen() start their shell inside glibc, with no
 * call to wrap: what they run is not sampled. /proc/PID/environ keeps the environment the
 * process started with: nothing can change that.
 *
 * The wrappers may run in a vfork()ed child, which shares its parent's memory, or in a signal
 * handler on a small alternate stack: they allocate nothing, change no state, and build the new
 * environment on the stack in as many bytes as it needs (its pointers and LD_PRELOAD's entry),
 * the program's own LD_PRELOAD entry replaced where it was. An environment of more than
 * ENV_MAX entries is passed on as it is (the program it runs is not sampled). */
#include "alloc_env.h"

#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

#define RING_VAR "PROFTOP_ALLOC_RING="
#define MEAN_VAR "PROFTOP_ALLOC_MEAN="
#define FD_VAR "PROFTOP_ALLOC_FD="
#define PRELOAD_VAR "LD_PRELOAD="
#define ENV_MAX 4096         /* entries of an environment the wrappers extend, at most */
#define VALUE_ROOM 4096      /* bytes of a variable kept (this library's path among them) */

/* What the constructor kept: whole "NAME=value" entries; empty when not set. */
static char kept_ring[VALUE_ROOM], kept_mean[64], kept_library[VALUE_ROOM];

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);
typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

/* The functions wrapped, as the next object defines them (NULL: not yet looked up). */
enum wrapped { EXECVE, EXECVPE, FEXECVE, EXECVEAT, POSIX_SPAWN, POSIX_SPAWNP, NWRAPPED };

static const char *const wrapped_names[NWRAPPED] = { "execve", "execvpe", "fexecve", "execveat",
						      "posix_spawn", "posix_spawnp" };
static void *_Atomic wrapped_fns[NWRAPPED];

void alloc_env_resolve(void *(*lookup)(const char *name))
{
	for (int i = 0; i < NWRAPPED; i++)
		atomic_store(&wrapped_fns[i], lookup(wrapped_names[i]));
}

/* The wrapped function, looked up now if the constructor has not run yet. */
static void *real(enum wrapped which)
{
	void *fn = atomic_load(&wrapped_fns[which]);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, wrapped_names[which]);
		atomic_store(&wrapped_fns[which], fn);
	}
	return fn;
}

/* Keep "name=value" in into (room bytes); false when it does not fit. */
static bool keep(char *into, size_t room, const char *name, const char *value)
{
	int n = snprintf(into, room, "%s%s", name, value);

	if (n < 0 || (size_t)n >= room) {
		into[0] = '\0';
		return false;
	}
	return true;
}

/* This library's path, as the dynamic loader loaded it. */
static const char *own_path(void)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)&own_path, &info) || !info.dli_fname)
		return NULL;
	return info.dli_fname;
}

/* LD_PRELOAD without this library when it comes first, as proftop puts it (the program's own
 * preloads stay); its separators are colons and spaces. */
static void take_preload(void)
{
	const char *preload = getenv("LD_PRELOAD"), *self = own_path();
	size_t len;

	if (!preload || !self)
		return;
	len = strcspn(preload, ": ");
	if (len != strlen(self) || strncmp(preload, self, len))
		return;
	if (!keep(kept_library, sizeof(kept_library), "", self))
		return;
	preload += len;
	preload += strspn(preload, ": ");
	if (*preload) {
		char rest[VALUE_ROOM];

		if (keep(rest, sizeof(rest), "", preload))
			setenv("LD_PRELOAD", rest, 1);
	} else {
		unsetenv("LD_PRELOAD");
	}
}

void alloc_env_take(struct alloc_env *env)
{
	const char *ring = getenv("PROFTOP_ALLOC_RING"), *mean = getenv("PROFTOP_ALLOC_MEAN");
	const char *fd = getenv("PROFTOP_ALLOC_FD");
	char *end;
	long n;

	env->ring = env->mean = NULL;
	env->fd = -1;
	if (!ring)
		return;
	if (fd) {
		n = strtol(fd, &end, 10);
		if (*fd && !*end && n >= 0 && n <= INT32_MAX)
			env->fd = (int)n;
	}
	if (keep(kept_ring, sizeof(kept_ring), RING_VAR, ring))
		env->ring = kept_ring + strlen(RING_VAR);
	if (mean && keep(kept_mean, sizeof(kept_mean), MEAN_VAR, mean))
		env->mean = kept_mean + strlen(MEAN_VAR);
	unsetenv("PROFTOP_ALLOC_RING");
	unsetenv("PROFTOP_ALLOC_MEAN");
	unsetenv("PROFTOP_ALLOC_FD");
	take_preload();
}

static bool named(const char *entry, const char *var)
{
	return !strncmp(entry, var, strlen(var));
}

/* Whether the LD_PRELOAD value names path among its entries. */
static bool preloads(const char *value, const char *path)
{
	size_t len = strlen(path);

	while (*value) {
		size_t n = strcspn(value, ": ");

		if (n == len && !strncmp(value, path, len))
			return true;
		value += n;
		value += strspn(value, ": ");
	}
	return false;
}

/* What with_ours() needs for envp: the entries of the environment it makes (0: none to make,
 * envp goes as it is) and the bytes of its LD_PRELOAD entry. */
struct env_need {
	size_t entries;
	size_t preload;
	const char *theirs;    /* the value of envp's own LD_PRELOAD; NULL: none */
};

static struct env_need env_need(char *const *envp)
{
	struct env_need need = { 0, 1, NULL };
	size_t n = 0;

	if (!kept_ring[0] || !kept_library[0])
		return need;
	for (; envp && envp[n]; n++) {
		if (n >= ENV_MAX)
			return need;
		if (named(envp[n], PRELOAD_VAR))
			need.theirs = envp[n] + strlen(PRELOAD_VAR);
	}
	need.entries = n + 4; /* LD_PRELOAD, the ring, the mean, NULL */
	need.preload = strlen(PRELOAD_VAR) + strlen(kept_library) + 2 +
		       (need.theirs ? strlen(need.theirs) : 0);
	return need;
}

/* Append text at *at in buf. (Not snprintf: the exec functions may be called from a signal
 * handler.) The caller sized buf for all it appends. */
static void append(char *buf, size_t *at, const char *text)
{
	size_t len = strlen(text);

	memcpy(buf + *at, text, len + 1);
	*at += len;
}

/* The LD_PRELOAD entry the programs executed get, into preload (need's bytes): this library,
 * then theirs, unless it is there already. */
static void make_preload(char *preload, const char *theirs)
{
	size_t at = 0;

	append(preload, &at, PRELOAD_VAR);
	if (theirs && preloads(theirs, kept_library)) {
		append(preload, &at, theirs);
		return;
	}
	append(preload, &at, kept_library);
	if (theirs && *theirs) {
		append(preload, &at, ":");
		append(preload, &at, theirs);
	}
}

/* envp with this library's variables put back, in out (need.entries entries) and preload
 * (need.preload bytes); envp itself when need says so. */
static char *const *with_ours(char *const *envp, char **out, char *preload, struct env_need need)
{
	size_t i = 0;
	bool placed = false;

	if (!need.entries)
		return envp;
	make_preload(preload, need.theirs);
	for (size_t k = 0; envp && envp[k]; k++) {
		if (named(envp[k], PRELOAD_VAR)) {
			if (!placed) /* where the program had it */
				out[i++] = preload;
			placed = true;
		} else if (!named(envp[k], RING_VAR) && !named(envp[k], MEAN_VAR) &&
			   !named(envp[k], FD_VAR)) {
			out[i++] = envp[k];
		}
	}
	if (!placed)
		out[i++] = preload;
	out[i++] = kept_ring;
	if (kept_mean[0])
		out[i++] = kept_mean;
	out[i] = NULL;
	return out;
}

static int no_function(void)
{
	errno = ENOSYS;
	return -1;
}

static int exec_env(const char *path, char *const argv[], char *const envp[], bool search)
{
	struct env_need need = env_need(envp);
	char *env[need.entries + 1], preload[need.preload];
	execve_fn *fn = (execve_fn *)real(search ? EXECVPE : EXECVE);

	return fn ? fn(path, argv, with_ours(envp, env, preload, need)) : no_function();
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_env(path, argv, envp, false);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return exec_env(path, argv, environ, false);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_env(file, argv, envp, true);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_env(file, argv, environ, true);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct env_need need = env_need(envp);
	char *env[need.entries + 1], preload[need.preload];
	fexecve_fn *fn = (fexecve_fn *)real(FEXECVE);

	return fn ? fn(fd, argv, with_ours(envp, env, preload, need)) : no_function();
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	struct env_need need = env_need(envp);
	char *env[need.entries + 1], preload[need.preload];
	execveat_fn *fn = (execveat_fn *)real(EXECVEAT);

	return fn ? fn(dirfd, path, argv, with_ours(envp, env, preload, need), flags)
		  : no_function();
}

static int spawn_env(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		     const posix_spawnattr_t *attr, char *const argv[], char *const envp[],
		     bool search)
{
	struct env_need need = env_need(envp);
	char *env[need.entries + 1], preload[need.preload];
	spawn_fn *fn = (spawn_fn *)real(search ? POSIX_SPAWNP : POSIX_SPAWN);

	return fn ? fn(pid, path, actions, attr, argv, with_ours(envp, env, preload, need))
		  : ENOSYS;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_env(pid, path, actions, attr, argv, envp, false);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_env(pid, file, actions, attr, argv, envp, true);
}

/* How many arguments the execl family was given: first and those after it up to the NULL. */
static size_t count_args(const char *first, va_list args)
{
	size_t n = 1;

	if (!first)
		return 0;
	while (va_arg(args, char *))
		n++;
	return n;
}

/* The argc arguments counted (first, then those in *args), and a NULL, into argv; *args is
 * left past the NULL that ended them. */
static void collect_args(const char *first, va_list *args, char **argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++)
		argv[i] = i ? va_arg(*args, char *) : (char *)first;
	argv[argc] = NULL;
	if (argc)
		(void)va_arg(*args, char *);
}

/* The execl family: the arguments after arg up to the NULL (and, with_envp, the environment
 * after it) in *args, executed as exec_env() does. */
static int exec_list(const char *path, const char *arg, va_list *args, bool search, bool with_envp)
{
	va_list counting;
	size_t argc;
	char *const *envp = environ;

	va_copy(counting, *args);
	argc = count_args(arg, counting);
	va_end(counting);
	char *argv[argc + 1];

	collect_args(arg, args, argv, argc);
	if (with_envp)
		envp = va_arg(*args, char *const *);
	return exec_env(path, argv, envp, search);
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list args;
	int rc;

	va_start(args, arg);
	rc = exec_list(path, arg, &args, false, false);
	va_end(args);
	return rc;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list args;
	int rc;

	va_start(args, arg);
	rc = exec_list(file, arg, &args, true, false);
	va_end(args);
	return rc;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list args;
	int rc;

	va_start(args, arg);
	rc = exec_list(path, arg, &args, false, true);
	va_end(args);
	return rc;
}
