/* Unit tests of how snapshot files are written: atomically (temporary file, fsync, rename), with
 * 0644 less the umask, never through a symbolic link, devices and FIFOs written in place without
 * ever blocking, numbered saves that never replace a file, per-thread names, stale temporary
 * files cleared, the check made before profiling, and clear errors that leave the previous file
 * as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/export.h"
#include "proftop/profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fixture {
	struct profile *p;
	struct snapshot *s;
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	static const char m[] = "prog";
	uint32_t stack[2];

	f->p = profile_new(NULL);
	stack[0] = profile_func(f->p, m, "main", 0);
	stack[1] = profile_func(f->p, m, "work", 0);
	for (int i = 0; i < 5; i++)
		profile_add(f->p, 40, 40, stack, 2);
	for (int i = 0; i < 3; i++)
		profile_add(f->p, 40, 41, stack, 1);
	f->s = profile_snapshot(f->p);
	f->s->freq = 100;
	strcpy(f->dir, "/tmp/proftop-export-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(chmod(f->dir, 0755), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	snapshot_unref(f->s);
	profile_free(f->p);
	free(f);
	return 0;
}

/* dir/name, in one of 16 buffers used in turn (enough for any one test here). */
static char *path_in(const struct fixture *f, const char *name)
{
	static char buf[16][256];
	static int next;
	char *p = buf[next++ % 16];

	snprintf(p, sizeof(buf[0]), "%s/%s", f->dir, name);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(fp);
	buf[fread(buf, 1, (1 << 16) - 1, fp)] = '\0';
	fclose(fp);
	return buf;
}

/* How many entries of dir start with '.', i.e. temporary files left behind. */
static int leftovers(const struct fixture *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void writes_and_replaces(void **state)
{
	struct fixture *f = *state;
	const char *path = path_in(f, "tmon.out");
	struct stat before, after;
	char *message, *text;
	mode_t old = umask(022);

	write_text(path, "old\n");
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(export_write(f->s, NULL, path, EXPORT_AUTO, false, &message), 0);
	assert_null(message);
	assert_int_equal(stat(path, &after), 0);
	assert_int_not_equal(before.st_ino, after.st_ino); /* a new file renamed into place */
	assert_int_equal(after.st_mode & 07777, 0644);
	text = read_text(path);
	assert_true(!strncmp(text, "#fOrTyTwO\n", 10));
	free(text);
	assert_int_equal(leftovers(f), 0);

	umask(077);
	path = path_in(f, "p.folded");
	assert_int_equal(export_write(f->s, NULL, path, EXPORT_AUTO, false, &message), 0);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0600);
	text = read_text(path);
	assert_string_equal(text, "main 3\nmain;work 5\n");
	free(text);
	umask(old);
}

static void symlink_is_not_followed(void **state)
{
	struct fixture *f = *state;
	const char *target = path_in(f, "precious"), *link = path_in(f, "tmon.out");
	struct stat st;
	char *message, *text;

	write_text(target, "precious\n");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(export_write(f->s, NULL, link, EXPORT_TMON, false, &message), -ELOOP);
	assert_non_null(strstr(message, "symbolic link"));
	assert_non_null(strstr(message, link));
	free(message);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	text = read_text(target);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(leftovers(f), 0);
}

/* Run export_write in a child that cannot write to dir: as root, the child drops to nobody
 * (root writes anywhere); otherwise the directory is made read-only. Returns its result and
 * fills message. */
static int write_unprivileged(struct fixture *f, const char *path, char *message, size_t size)
{
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	if (getuid() != 0)
		assert_int_equal(chmod(f->dir, 0555), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *msg = NULL;
		int err;

		close(fds[0]);
		if (getuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(99);
		err = export_write(f->s, NULL, path, EXPORT_TMON, false, &msg);
		if (msg && write(fds[1], msg, strlen(msg)) < 0)
			_exit(98);
		_exit(-err);
	}
	close(fds[1]);
	n = read(fds[0], message, size - 1);
	message[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (getuid() != 0)
		chmod(f->dir, 0755);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void unwritable_directory(void **state)
{
	struct fixture *f = *state;
	const char *path = path_in(f, "tmon.out");
	char message[512], *text;

	write_text(path, "previous\n");
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(write_unprivileged(f, path, message, sizeof(message)), EACCES);
	assert_non_null(strstr(message, "cannot write "));
	assert_non_null(strstr(message, "cannot create a file in "));
	assert_non_null(strstr(message, "Permission denied"));
	text = read_text(path);
	assert_string_equal(text, "previous\n");
	free(text);
	assert_int_equal(leftovers(f), 0);
}

/* Devices are written in place: /dev/null stays /dev/null (renaming over it as root would
 * replace the device node), and /dev/full's ENOSPC is reported. */
static void devices_in_place(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char *message;

	assert_int_equal(export_write(f->s, NULL, "/dev/null", EXPORT_PPROF, false, &message), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	if (stat("/dev/full", &st) == 0) {
		assert_int_equal(export_write(f->s, NULL, "/dev/full", EXPORT_TMON, false, &message),
				 -ENOSPC);
		assert_non_null(strstr(message, "cannot write /dev/full"));
		assert_non_null(strstr(message, "No space left on device"));
		free(message);
	}
	assert_int_equal(export_write(f->s, NULL, f->dir, EXPORT_TMON, false, &message), -EISDIR);
	assert_non_null(strstr(message, "Is a directory"));
	free(message);
}

static void numbered_saves_never_replace(void **state)
{
	struct fixture *f = *state;
	struct export_options o = { NULL, EXPORT_AUTO, false, path_in(f, "tmon.out") };
	char *message, *text;

	write_text(path_in(f, "tmon.out"), "first\n");
	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	assert_string_equal(strrchr(message, '/'), "/tmon.out.1");
	assert_true(!strncmp(message, "saved ", 6));
	free(message);
	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	assert_string_equal(strrchr(message, '/'), "/tmon.out.2");
	free(message);
	text = read_text(path_in(f, "tmon.out"));
	assert_string_equal(text, "first\n");
	free(text);
	text = read_text(path_in(f, "tmon.out.2"));
	assert_true(!strncmp(text, "#fOrTyTwO\n", 10));
	free(text);

	/* The format follows the name; -f wins over it. */
	o.base = path_in(f, "cpu.folded");
	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	free(message);
	text = read_text(path_in(f, "cpu.folded"));
	assert_string_equal(text, "main 3\nmain;work 5\n");
	free(text);
	o.format = EXPORT_CALLGRIND;
	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	free(message);
	text = read_text(path_in(f, "cpu.folded.1"));
	assert_true(!strncmp(text, "# callgrind format\n", 19));
	free(text);

	/* With -o FILE, a save replaces FILE. */
	o = (struct export_options){ path_in(f, "out.folded"), EXPORT_AUTO, false, NULL };
	write_text(o.output, "old\n");
	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	free(message);
	text = read_text(o.output);
	assert_string_equal(text, "main 3\nmain;work 5\n");
	free(text);
	assert_int_equal(leftovers(f), 0);
}

static void per_thread_files(void **state)
{
	struct fixture *f = *state;
	struct export_options o = { NULL, EXPORT_FOLDED, true, path_in(f, "t.folded") };
	char *message, *text;

	assert_int_equal(export_write(f->s, NULL, path_in(f, "w.folded"), EXPORT_AUTO, true, &message), 0);
	text = read_text(path_in(f, "w.folded.40"));
	assert_string_equal(text, "main;work 5\n");
	free(text);
	text = read_text(path_in(f, "w.folded.41"));
	assert_string_equal(text, "main 3\n");
	free(text);
	assert_int_equal(access(path_in(f, "w.folded"), F_OK), -1);

	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	free(message);
	assert_int_equal(export_save(f->s, NULL, &o, &message), 0);
	free(message);
	assert_int_equal(access(path_in(f, "t.folded.40"), F_OK), 0);
	assert_int_equal(access(path_in(f, "t.folded.1.41"), F_OK), 0);

	assert_int_equal(export_write(f->s, NULL, "-", EXPORT_AUTO, true, &message), -EINVAL);
	assert_non_null(strstr(message, "--per-thread"));
	free(message);
}

/* A FIFO is written in place: with a reader, the snapshot goes in; without one, the write is an
 * error at once, not a wait (the alarm turns a wait into a failure). */
static void fifo_needs_a_reader(void **state)
{
	struct fixture *f = *state;
	const char *fifo = path_in(f, "out.folded");
	char *message = NULL, buf[256];
	int reader;
	ssize_t n;

	assert_int_equal(mkfifo(fifo, 0644), 0);
	alarm(20);
	assert_int_equal(export_write(f->s, NULL, fifo, EXPORT_AUTO, false, &message), -ENXIO);
	char *want;
	assert_true(asprintf(&want, "cannot write %s: it is a FIFO that no process has open for "
				    "reading", fifo) > 0);
	assert_string_equal(message, want);
	free(want);
	free(message);

	reader = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_int_equal(export_write(f->s, NULL, fifo, EXPORT_AUTO, false, &message), 0);
	n = read(reader, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "main 3\nmain;work 5\n");
	close(reader);
	alarm(0);
	assert_int_equal(leftovers(f), 0);
}

/* A snapshot of 2000 functions: more than a small pipe holds. */
static struct snapshot *big_snapshot(struct profile *p)
{
	uint32_t stack[2];
	char name[32];
	struct snapshot *s;

	stack[0] = profile_func(p, "prog", "main", 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "function_%d", i);
		stack[1] = profile_func(p, "prog", name, 0);
		profile_add(p, 40, 40, stack, 2);
	}
	s = profile_snapshot(p);
	s->freq = 100;
	return s;
}

/* A reader that stops reading cannot hold proftop: with a signal that ends the session blocked
 * (as the session blocks it) and pending, the write that waits for room is abandoned, says so,
 * and leaves the signal pending for the session. */
static void stuck_reader_and(struct fixture *f, int sig, const char *said)
{
	const char *fifo = path_in(f, "out.folded");
	struct profile *p = profile_new(NULL);
	struct snapshot *s = big_snapshot(p);
	sigset_t term, old, pending;
	char *message = NULL;
	int reader, signo;

	assert_int_equal(mkfifo(fifo, 0644), 0);
	reader = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_true(fcntl(reader, F_SETPIPE_SZ, 4096) >= 4096);
	sigemptyset(&term);
	sigaddset(&term, sig);
	assert_int_equal(sigprocmask(SIG_BLOCK, &term, &old), 0);
	assert_int_equal(raise(sig), 0);
	alarm(20);
	assert_int_equal(export_write(s, NULL, fifo, EXPORT_AUTO, false, &message), -EINTR);
	alarm(0);
	assert_non_null(strstr(message, said));
	free(message);
	assert_int_equal(sigpending(&pending), 0);
	assert_true(sigismember(&pending, sig));
	assert_int_equal(sigwait(&term, &signo), 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	close(reader);
	unlink(fifo);
	snapshot_unref(s);
	profile_free(p);
}

static void stuck_reader_and_a_signal(void **state)
{
	stuck_reader_and(*state, SIGTERM, "out.folded: interrupted by SIGTERM while waiting to "
					  "write: only ");
	stuck_reader_and(*state, SIGQUIT, "out.folded: interrupted by SIGQUIT while waiting to "
					  "write: only ");
}

/* A PID that no process has: a child's, once reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* A write of NAME removes the temporary files of NAME that a killed writer left (its PID gone,
 * or none in the name as proftop used to write them, and an hour old), and nothing else: not
 * a dead PID's written a moment ago, not those of a live PID, of another name, of another
 * pattern, nor a symbolic link with such a name. */
static void stale_temporary_files(void **state)
{
	struct fixture *f = *state;
	pid_t dead = dead_pid(), alive = getppid();
	char *message, stale[64], fresh[64], legacy[64], live[64], other[64], upper[64],
		longer[64], link[64];
	const char *old[] = { stale, legacy, live, other, upper, longer };

	snprintf(stale, sizeof(stale), ".tmon.out.%d.0a1b2c.tmp", (int)dead);
	snprintf(fresh, sizeof(fresh), ".tmon.out.%d.3d4e5f.tmp", (int)dead);
	snprintf(legacy, sizeof(legacy), ".tmon.out.0a1b2c.tmp");
	snprintf(live, sizeof(live), ".tmon.out.%d.0a1b2c.tmp", (int)alive);
	snprintf(other, sizeof(other), ".tmon.out.1.%d.0a1b2c.tmp", (int)dead);
	snprintf(upper, sizeof(upper), ".tmon.out.%d.0A1B2C.tmp", (int)dead);
	snprintf(longer, sizeof(longer), ".tmon.out.%d.0a1b2c.tmp~", (int)dead);
	snprintf(link, sizeof(link), ".tmon.out.%d.123456.tmp", (int)dead);
	write_text(path_in(f, fresh), "a dead PID's, but written a moment ago\n");
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		struct timespec hour_ago[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };

		write_text(path_in(f, old[i]), "an hour old\n");
		assert_int_equal(utimensat(AT_FDCWD, path_in(f, old[i]), hour_ago, 0), 0);
	}
	assert_int_equal(symlink("tmon.out", path_in(f, link)), 0);

	assert_int_equal(export_write(f->s, NULL, path_in(f, "tmon.out"), EXPORT_AUTO, false, &message),
			 0);
	assert_int_equal(access(path_in(f, stale), F_OK), -1);
	assert_int_equal(access(path_in(f, legacy), F_OK), -1);
	assert_int_equal(access(path_in(f, fresh), F_OK), 0);
	assert_int_equal(access(path_in(f, live), F_OK), 0);
	assert_int_equal(access(path_in(f, other), F_OK), 0);
	assert_int_equal(access(path_in(f, upper), F_OK), 0);
	assert_int_equal(access(path_in(f, longer), F_OK), 0);
	struct stat st;
	assert_int_equal(lstat(path_in(f, link), &st), 0);
	assert_int_equal(leftovers(f), 6);
}

/* The check before profiling: what the final write would refuse is refused now, naming the
 * path, and the check leaves nothing behind. */
static void checked_before_profiling(void **state)
{
	struct fixture *f = *state;
	struct export_options o = { path_in(f, "cpu.folded"), EXPORT_AUTO, false, NULL };
	char *message, *want;

	assert_int_equal(export_check(&o, false, &message), 0);
	assert_null(message);
	assert_int_equal(access(o.output, F_OK), -1);
	assert_int_equal(leftovers(f), 0);

	o.output = path_in(f, "missing/cpu.folded");
	assert_int_equal(export_check(&o, false, &message), -ENOENT);
	assert_true(asprintf(&want, "cannot write %s: cannot create a file in %s/missing: No such "
				    "file or directory", o.output, f->dir) > 0);
	assert_string_equal(message, want);
	free(want);
	free(message);
	o.per_thread = true;
	assert_int_equal(export_check(&o, false, &message), -ENOENT);
	free(message);
	o.per_thread = false;

	o.output = f->dir;
	assert_int_equal(export_check(&o, false, &message), -EISDIR);
	assert_non_null(strstr(message, "Is a directory"));
	free(message);

	assert_int_equal(symlink("cpu.folded", path_in(f, "link.folded")), 0);
	o.output = path_in(f, "link.folded");
	assert_int_equal(export_check(&o, false, &message), -ELOOP);
	assert_non_null(strstr(message, "symbolic link"));
	free(message);

	/* A FIFO's reader may come later: opening it now would end the reader's input. */
	o.output = path_in(f, "fifo.folded");
	assert_int_equal(mkfifo(o.output, 0644), 0);
	alarm(20);
	assert_int_equal(export_check(&o, false, &message), 0);
	alarm(0);
	o.output = NULL;
	assert_int_equal(export_check(&o, true, &message), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(writes_and_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_is_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(unwritable_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(devices_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(numbered_saves_never_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(per_thread_files, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo_needs_a_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(stuck_reader_and_a_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(stale_temporary_files, setup, teardown),
		cmocka_unit_test_setup_teardown(checked_before_profiling, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
