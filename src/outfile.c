/* outfile.c — writing a file so that a failure never leaves a half-written file where a good one
 * was (git's tempfile.c and lockfile.c are the model).
 *
 * A file is written to a temporary name in its own directory (".NAME.PID.XXXXXX.tmp", created
 * with O_EXCL|O_NOFOLLOW and mode 0644 so the umask applies), flushed, fsync'd, and renamed over
 * the target; the directory is fsync'd after. A write killed on its way leaves its temporary
 * file: a later write of NAME removes it once its PID is gone and it is ten minutes old
 * (temp_is_stale()). A symbolic link at the target path is refused (rename would replace the
 * link, not follow it, but a user who put a link there meant something else). Targets that are
 * not regular files — /dev/null, a FIFO, a standard output that is a pipe or a terminal — are
 * written in place, since renaming over them would replace the device node; without ever
 * blocking (outstream.h), since the session keeps the signals that end it blocked and a blocked
 * write() would make proftop deaf to them. Without replace, the temporary file is linked into
 * place with RENAME_NOREPLACE, so two proftops saving at once never overwrite each other. */
#include "proftop/outfile.h"

#include "proftop/outstream.h"
#include "proftop/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OUT_BUFFER (1u << 20)


static char *fail_text(const char *path, const char *what, int err)
{
	return xasprintf("cannot write %s: %s%s%s", path, what ? what : "", what ? ": " : "",
			 strerror(err));
}

static const char *out_name(const struct outfile *f)
{
	return f->is_stdout ? "standard output" : f->path;
}

/* The error of writing f: errno err, or why a write in place gave up waiting. */
char *outfile_error(struct outfile *f, const char *what, int err)
{
	if (f->stream && !f->gave_up) {
		f->gave_up = outstream_gave_up(f->stream);
		f->written = outstream_written(f->stream);
	}
	if (f->gave_up)
		return xasprintf("cannot write %s: %s: only %llu bytes of the snapshot went in",
				 out_name(f), f->gave_up, (unsigned long long)f->written);
	return fail_text(out_name(f), what, err);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(slash - path), path);
}

/* --- temporary files: ".NAME.PID.XXXXXX.tmp" ------------------------------------------------ */

/* A temporary file nobody has written to for this long is no write in progress: a write's
 * buffer goes out OUT_BUFFER bytes at a time, so a live write touches its file every few
 * milliseconds, a slow disk's fsync included. */
#define STALE_AGE_S (10 * 60)

/* The hex digits and ".tmp" at the end of a temporary name, at p. */
static bool temp_tail(const char *p)
{
	for (int i = 0; i < 6; i++, p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return !strcmp(p, ".tmp");
}

/* Whether name is the temporary name of a write of base: ".BASE.PID.XXXXXX.tmp" (six lowercase
 * hex digits), with *pid the PID that wrote it, or ".BASE.XXXXXX.tmp" as proftop named them
 * before they carried a PID, with *pid 0. */
static bool temp_of(const char *name, const char *base, pid_t *pid)
{
	size_t blen = strlen(base);
	const char *p = name + blen + 2;
	long v = 0;
	int digits = 0;

	if (name[0] != '.' || strncmp(name + 1, base, blen) || name[blen + 1] != '.')
		return false;
	*pid = 0;
	if (temp_tail(p))
		return true;
	for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
		v = v * 10 + (*p - '0');
	if (!digits || name[blen + 2] == '0' || v > INT_MAX || *p++ != '.')
		return false;
	*pid = (pid_t)v;
	return temp_tail(p);
}

/* Whether the temporary file st, written by pid (0: unknown), is what a killed write left.
 * Both must hold: its PID is gone and it has not been written to for STALE_AGE_S. The PID alone
 * is not enough, since another PID namespace (a container sharing the directory) or another
 * host (NFS) has PIDs this one cannot see; the age alone is not enough, since a writer stopped
 * with ^Z mid-write still means to rename its file. A PID that exists here, even reused by an
 * unrelated process, keeps the file: the cost of a wrong guess that way is a hidden file, the
 * other way a lost snapshot. */
static bool temp_is_stale(const struct stat *st, pid_t pid)
{
	if (!S_ISREG(st->st_mode) || time(NULL) - st->st_mtime < STALE_AGE_S)
		return false;
	return pid == 0 || (pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH);
}

/* Remove the temporary files of base in dir that writes killed on their way left behind
 * (temp_is_stale()). Nothing else is touched: not another name's, not what is no regular
 * file. */
static void remove_stale_temps(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	pid_t pid;

	while (d && (e = readdir(d))) {
		if (temp_of(e->d_name, base, &pid) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    temp_is_stale(&st, pid))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
}

/* Create the temporary file beside path, first removing stale ones of the same name. Its name
 * carries proftop's PID, so that a later write knows when it is stale. */
static int open_temp(struct outfile *f, char **message)
{
	const char *base = strrchr(f->path, '/');

	base = base ? base + 1 : f->path;
	f->dir = dir_of(f->path);
	remove_stale_temps(f->dir, base);
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t r = util_hash_u64(util_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)attempt);

		f->tmp = xasprintf("%s/.%s.%d.%06llx.tmp", f->dir, base, (int)getpid(),
				   (unsigned long long)(r & 0xffffff));
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST) {
			int err = errno;
			char *what = xasprintf("cannot create a file in %s", f->dir);

			*message = fail_text(f->path, what, err);
			free(what);
			free(f->tmp);
			free(f->dir);
			f->tmp = f->dir = NULL;
			return -err;
		}
		free(f->tmp);
		f->tmp = NULL;
	}
	*message = fail_text(f->path, "no free temporary name", EEXIST);
	free(f->dir);
	f->dir = NULL;
	return -EEXIST;
}

/* --- writing in place: FIFOs, devices, standard output --------------------------------------- */

/* Open what is at path in place, without waiting: a FIFO nobody reads is an error now. */
static int open_in_place(struct outfile *f, mode_t mode, char **message)
{
	int err;

	f->fd = open(f->path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (f->fd >= 0) {
		f->stream = outstream_open(f->fd, true);
		f->fp = outstream_file(f->stream);
		return 0;
	}
	err = errno;
	if (err == ENXIO && S_ISFIFO(mode))
		*message = xasprintf("cannot write %s: it is a FIFO that no process has open for "
				     "reading", f->path);
	else
		*message = fail_text(f->path, NULL, err);
	return -err;
}

static int open_stdout(struct outfile *f, char **message)
{
	struct stat st;

	f->is_stdout = true;
	if (fstat(STDOUT_FILENO, &st) < 0) { /* closed: what open() returns next could be 1 */
		int err = errno;

		*message = fail_text("standard output", NULL, err);
		return -err;
	}
	if (S_ISREG(st.st_mode)) {
		f->fp = stdout;
		return 0;
	}
	fflush(stdout);
	f->stream = outstream_reopen(STDOUT_FILENO);
	f->fp = outstream_file(f->stream);
	return 0;
}

/* What is at path already, if anything: a symbolic link or a directory is refused. Returns 0
 * with *exists and *mode, or -errno with *message. */
static int look_at(const char *path, bool *exists, mode_t *mode, char **message)
{
	struct stat st;

	*exists = lstat(path, &st) == 0;
	if (!*exists && errno != ENOENT) {
		int err = errno;

		*message = fail_text(path, NULL, err);
		return -err;
	}
	*mode = *exists ? st.st_mode : 0;
	if (*exists && S_ISLNK(st.st_mode)) {
		*message = xasprintf("cannot write %s: it is a symbolic link, which proftop does "
				     "not follow (name the file it points to)", path);
		return -ELOOP;
	}
	if (*exists && S_ISDIR(st.st_mode)) {
		*message = fail_text(path, NULL, EISDIR);
		return -EISDIR;
	}
	return 0;
}

int outfile_open(struct outfile *f, const char *path, char **message)
{
	bool exists;
	mode_t mode;
	int err;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -1;
	if (!strcmp(path, "-"))
		return open_stdout(f, message);
	err = look_at(path, &exists, &mode, message);
	if (err)
		return err;
	if (exists && !S_ISREG(mode)) /* a device or a FIFO: renaming over it would replace it */
		return open_in_place(f, mode, message);
	err = open_temp(f, message);
	if (err)
		return err;
	f->fp = fdopen(f->fd, "w");
	if (!f->fp)
		fatal("out of memory (fdopen)");
	setvbuf(f->fp, NULL, _IOFBF, OUT_BUFFER);
	return 0;
}

/* Close the stream and what it was written to (not standard output). Returns 0 or an errno. */
static int out_release(struct outfile *f)
{
	int err = 0;

	if (f->stream) {
		char *why;

		f->written = outstream_written(f->stream);
		err = outstream_close(f->stream, &why); /* descriptor 1 itself stays open */
		if (err && !f->gave_up)
			f->gave_up = why;
		else
			free(why);
	} else if (f->fp && f->fp != stdout && fclose(f->fp) != 0) {
		err = errno;
	}
	f->stream = NULL;
	f->fp = NULL;
	f->fd = -1;
	return err;
}

void outfile_abandon(struct outfile *f)
{
	out_release(f);
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	free(f->dir);
	free(f->gave_up);
	f->tmp = f->dir = f->gave_up = NULL;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fsync(fd) < 0) {
		/* some file systems cannot sync a directory; the rename is done either way */
	}
	close(fd);
}

/* Move the temporary file into place; without replace, an existing file is an EEXIST error. */
static int put_in_place(struct outfile *f, bool replace)
{
	if (replace)
		return rename(f->tmp, f->path) < 0 ? -errno : 0;
	if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* The file system cannot rename without replacing: link() never replaces either. */
	if (link(f->tmp, f->path) < 0)
		return -errno;
	unlink(f->tmp);
	return 0;
}

/* Flush, sync and move into place. On failure the temporary file is removed. */
int outfile_close(struct outfile *f, bool replace, char **message)
{
	int err = 0, close_err;
	const char *what = "writing";

	errno = 0;
	if (fflush(f->fp) != 0 || ferror(f->fp)) {
		err = errno ? errno : EIO;
	} else if (f->tmp && fsync(f->fd) < 0) {
		err = errno;
		what = "syncing";
	}
	close_err = out_release(f);
	if (!err)
		err = close_err;
	if (!err && f->tmp) {
		err = -put_in_place(f, replace);
		what = "renaming the temporary file into place";
	}
	if (err) {
		*message = err == EEXIST && !replace ? fail_text(f->path, NULL, EEXIST)
						    : outfile_error(f, what, err);
		outfile_abandon(f);
		return -err;
	}
	if (f->tmp)
		sync_dir(f->dir);
	free(f->tmp);
	free(f->dir);
	f->tmp = f->dir = NULL;
	return 0;
}

int outfile_check(const char *path, bool look, char **message)
{
	struct outfile f = { .path = path, .fd = -1 };
	bool exists = false;
	mode_t mode = 0;
	int err = look ? look_at(path, &exists, &mode, message) : 0;

	if (err)
		return err;
	if (exists && !S_ISREG(mode)) { /* written in place; a FIFO's reader may come later */
		if (access(path, W_OK) == 0)
			return 0;
		err = errno;
		*message = fail_text(path, NULL, err);
		return -err;
	}
	err = open_temp(&f, message);
	if (err)
		return err;
	close(f.fd);
	unlink(f.tmp);
	free(f.tmp);
	free(f.dir);
	return 0;
}
