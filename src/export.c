/* export.c — which format, which file names, and writing them so that a failure never leaves a
 * half-written file where a good one was.
 *
 * A file is written to a temporary name in its own directory (".NAME.PID.XXXXXX.tmp", created
 * with O_EXCL|O_NOFOLLOW and mode 0644 so the umask applies), flushed, fsync'd, and renamed over
 * the target; the directory is fsync'd after. A write killed on its way leaves its temporary
 * file: a later write of NAME removes it once its PID is gone and it is ten minutes old
 * (temp_is_stale()). A symbolic link at the target path is refused (rename would replace the
 * link, not follow it, but a user who put a link there meant something else). Targets that are
 * not regular files — /dev/null, a FIFO, a standard output that is a pipe or a terminal — are
 * written in place, since renaming over them would replace the device node; without ever
 * blocking (wait_write()), since the session keeps the signals that end it blocked
 * (ENDING_SIGNALS) and a blocked write() would make proftop deaf to them.
 * Numbered saves (export_save) link the temporary file into place with RENAME_NOREPLACE, so two
 * proftops saving at once never overwrite each other. */
#include "proftop/export.h"

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

static const char *const format_names[] = {
	[EXPORT_AUTO] = "auto",
	[EXPORT_TMON] = "tmon",
	[EXPORT_CALLGRIND] = "callgrind",
	[EXPORT_FOLDED] = "folded",
	[EXPORT_PPROF] = "pprof",
};

int export_format_parse(const char *name, enum export_format *format)
{
	for (int f = EXPORT_TMON; f <= EXPORT_PPROF; f++) {
		if (!strcmp(name, format_names[f])) {
			*format = (enum export_format)f;
			return 0;
		}
	}
	return -EINVAL;
}

const char *export_format_name(enum export_format format)
{
	return format_names[format];
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

enum export_format export_format_of_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	/* Leave out one trailing ".N" (a save counter or a thread id). */
	for (size_t i = len; i > 0; i--) {
		if (base[i - 1] == '.') {
			if (i < len)
				len = i - 1;
			break;
		}
		if (base[i - 1] < '0' || base[i - 1] > '9')
			break;
	}
	if (!strncmp(base, "callgrind.out", 13) || ends_with(base, len, ".callgrind"))
		return EXPORT_CALLGRIND;
	if (ends_with(base, len, ".folded") || ends_with(base, len, ".collapsed"))
		return EXPORT_FOLDED;
	if (ends_with(base, len, ".pb.gz") || ends_with(base, len, ".pprof") ||
	    ends_with(base, len, ".pb"))
		return EXPORT_PPROF;
	return EXPORT_TMON;
}

const char *export_default_path(enum export_format format)
{
	switch (format) {
	case EXPORT_CALLGRIND:
		return "callgrind.out";
	case EXPORT_FOLDED:
		return "proftop.folded";
	case EXPORT_PPROF:
		return "proftop.pb.gz";
	default:
		return "tmon.out";
	}
}

uint64_t export_ns_to_ticks(uint64_t ns, unsigned hz)
{
	return (uint64_t)(((unsigned __int128)ns * hz + 500000000u) / 1000000000u);
}

void export_scope_merged(struct export_scope *scope, const struct snapshot *s)
{
	scope->root = s->merged_root;
	scope->thread = NULL;
}

void export_scope_of_tid(struct export_scope *scope, const struct snapshot *s, pid_t tid)
{
	export_scope_merged(scope, s);
	for (size_t i = 0; tid && i < s->nthreads; i++) {
		if (s->threads[i].tid == tid) {
			scope->root = s->threads[i].root;
			scope->thread = &s->threads[i];
		}
	}
}

void export_walk_begin(struct snapshot_walk *w, const struct snapshot *s,
		       const struct export_scope *scope, void (*leave)(void *arg, uint32_t node),
		       void *arg)
{
	*w = (struct snapshot_walk){ .nodes = s->nodes, .leave = leave, .arg = arg };
	snapshot_walk_begin(w, scope->root, false);
}

/* --- files -------------------------------------------------------------------------------------- */

struct out_file {
	const char *path;
	FILE *fp;
	int fd;
	char *tmp;           /* the temporary name; NULL when writing in place or to stdout */
	char *dir;           /* its directory, for the fsync after the rename */
	bool is_stdout;
	struct outstream *stream; /* not a regular file: written in place, never blocking */
	char *gave_up;       /* why a write in place gave up (outstream_gave_up()); NULL: it did not */
	uint64_t written;    /* bytes a write in place handed on */
};

static char *fail_text(const char *path, const char *what, int err)
{
	return xasprintf("cannot write %s: %s%s%s", path, what ? what : "", what ? ": " : "",
			 strerror(err));
}

static const char *out_name(const struct out_file *f)
{
	return f->is_stdout ? "standard output" : f->path;
}

/* The error of writing f: errno err, or why a write in place gave up waiting. */
static char *write_fail_text(struct out_file *f, const char *what, int err)
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
static int open_temp(struct out_file *f, char **message)
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
static int open_in_place(struct out_file *f, mode_t mode, char **message)
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

static int open_stdout(struct out_file *f, char **message)
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

static int out_open(struct out_file *f, const char *path, char **message)
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
static int out_release(struct out_file *f)
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

static void out_abandon(struct out_file *f)
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
static int put_in_place(struct out_file *f, bool replace)
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
static int out_close(struct out_file *f, bool replace, char **message)
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
						    : write_fail_text(f, what, err);
		out_abandon(f);
		return -err;
	}
	if (f->tmp)
		sync_dir(f->dir);
	free(f->tmp);
	free(f->dir);
	f->tmp = f->dir = NULL;
	return 0;
}

/* What one file holds: a scope of the snapshot, and for a folded diff the baseline's tree of the
 * same thread (or all of it). */
struct export_job {
	const struct snapshot *s, *baseline;
	enum export_format format;
	bool replace;
};

static int write_format(FILE *out, const struct export_job *job, const struct export_scope *scope)
{
	const struct snapshot *s = job->s;

	switch (job->format) {
	case EXPORT_CALLGRIND:
		return export_callgrind(out, s, scope);
	case EXPORT_FOLDED:
		if (job->baseline) {
			struct export_scope old;

			export_scope_of_tid(&old, job->baseline, scope->thread ? scope->thread->tid : 0);
			return export_folded_diff(out, job->baseline, &old, s, scope);
		}
		return export_folded(out, s, scope);
	case EXPORT_PPROF:
		return export_pprof(out, s, scope);
	default:
		return export_tmon(out, s, scope);
	}
}

int export_stream(FILE *out, const struct snapshot *s, enum export_format format, char **message)
{
	struct export_job job = { s, NULL, format, false };
	struct export_scope scope;
	int err;

	*message = NULL;
	if (format == EXPORT_TMON && snapshot_allocations(s)) {
		*message = xstrdup(EXPORT_TMON_NO_ALLOCATIONS);
		return -EINVAL;
	}
	export_scope_merged(&scope, s);
	err = write_format(out, &job, &scope);
	if (!err && fflush(out))
		err = -errno;
	if (err)
		*message = xasprintf("writing the %s profile: %s", export_format_name(format),
				     strerror(-err));
	return err;
}

static int write_one(const struct export_job *job, const char *path,
		     const struct export_scope *scope, char **message)
{
	struct out_file f;
	int err = out_open(&f, path, message);

	if (err)
		return err;
	err = write_format(f.fp, job, scope);
	if (err) {
		*message = write_fail_text(&f, "writing", -err);
		out_abandon(&f);
		return err;
	}
	return out_close(&f, job->replace, message);
}

static char *thread_path(const char *path, const struct snapshot_thread *t)
{
	return xasprintf("%s.%d", path, (int)t->tid);
}

/* Every file of one save: path, or path.TID for each thread with samples. */
static int write_files(const struct snapshot *s, const struct snapshot *baseline, const char *path,
		       enum export_format format, bool per_thread, bool replace, char **message)
{
	struct export_job job = { s, baseline, format, replace };
	struct export_scope scope;

	if (format == EXPORT_AUTO)
		job.format = export_format_of_path(path);
	if (job.format == EXPORT_TMON && snapshot_allocations(s)) {
		*message = xstrdup(EXPORT_TMON_NO_ALLOCATIONS);
		return -EINVAL;
	}
	if (!per_thread) {
		export_scope_merged(&scope, s);
		return write_one(&job, path, &scope, message);
	}
	if (!strcmp(path, "-")) {
		*message = xstrdup("--per-thread writes one file per thread: it needs a file name, "
				   "not -");
		return -EINVAL;
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		char *name;
		int err;

		if (!s->nodes[s->threads[i].root].total)
			continue;
		name = thread_path(path, &s->threads[i]);
		scope = (struct export_scope){ s->threads[i].root, &s->threads[i] };
		err = write_one(&job, name, &scope, message);
		free(name);
		if (err)
			return err;
	}
	return 0;
}

/* -o - onto a terminal: never the screen's own, and never binary bytes. */
static int check_stdout(const struct export_options *o, bool screen, char **message)
{
	enum export_format format = o->format == EXPORT_AUTO ? export_format_of_path("-") : o->format;

	if (!isatty(STDOUT_FILENO))
		return 0;
	if (screen)
		*message = xstrdup("-o - would write the snapshot onto the terminal the screen uses: "
				   "give -o a file name, redirect standard output, or add -b");
	else if (format == EXPORT_PPROF)
		*message = xstrdup("-o -: a pprof snapshot is binary, and standard output is a "
				   "terminal: give -o a file name or redirect standard output");
	return *message ? -EINVAL : 0;
}

int export_check(const struct export_options *o, bool screen, char **message)
{
	struct out_file f = { .path = o->output, .fd = -1 };
	bool exists = false;
	mode_t mode = 0;
	int err;

	*message = NULL;
	if (!o->output)
		return 0;
	if (!strcmp(o->output, "-"))
		return check_stdout(o, screen, message);
	/* --per-thread writes FILE.TID, in FILE's directory. */
	err = o->per_thread ? 0 : look_at(o->output, &exists, &mode, message);
	if (err)
		return err;
	if (exists && !S_ISREG(mode)) { /* written in place; a FIFO's reader may come later */
		if (access(o->output, W_OK) == 0)
			return 0;
		err = errno;
		*message = fail_text(o->output, NULL, err);
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

int export_write(const struct snapshot *s, const struct snapshot *baseline, const char *path,
		 enum export_format format, bool per_thread, char **message)
{
	*message = NULL;
	return write_files(s, baseline, path, format, per_thread, true, message);
}

/* Whether any file a numbered save would write under name exists already. */
static bool taken(const struct snapshot *s, const char *name, bool per_thread)
{
	struct stat st;
	bool any = false;

	if (!per_thread)
		return lstat(name, &st) == 0 || errno != ENOENT;
	for (size_t i = 0; i < s->nthreads && !any; i++) {
		char *p = thread_path(name, &s->threads[i]);

		any = lstat(p, &st) == 0 || errno != ENOENT;
		free(p);
	}
	return any;
}

int export_save(const struct snapshot *s, const struct snapshot *baseline,
		const struct export_options *o, char **message)
{
	static const struct export_options defaults = { NULL, EXPORT_AUTO, false, NULL };
	enum export_format format;
	const char *base;
	int err;

	if (!o)
		o = &defaults;
	*message = NULL;
	format = o->format;
	if (o->output && strcmp(o->output, "-")) {
		err = write_files(s, baseline, o->output, format, o->per_thread, true, message);
		if (!err)
			*message = xasprintf("saved %s%s", o->output, o->per_thread ? ".TID" : "");
		return err;
	}
	base = o->base;
	if (format == EXPORT_AUTO) /* tmon.out holds no allocations: pprof does */
		format = base ? export_format_of_path(base)
			      : snapshot_allocations(s) ? EXPORT_PPROF : EXPORT_TMON;
	if (!base)
		base = export_default_path(format);
	for (unsigned n = 0; n < 100000; n++) {
		char *name = n ? xasprintf("%s.%u", base, n) : xstrdup(base);

		if (taken(s, name, o->per_thread)) {
			free(name);
			continue;
		}
		err = write_files(s, baseline, name, format, o->per_thread, false, message);
		if (err == -EEXIST) { /* someone else took the name meanwhile */
			free(*message);
			*message = NULL;
			free(name);
			continue;
		}
		if (!err)
			*message = xasprintf("saved %s%s", name, o->per_thread ? ".TID" : "");
		free(name);
		return err;
	}
	*message = xasprintf("cannot save: %s, %s.1 ... %s.99999 all exist", base, base, base);
	return -EEXIST;
}
