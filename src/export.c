/* export.c — which format, which file names, and writing them so that a failure never leaves a
 * half-written file where a good one was.
 *
 * A file is written to a temporary name in its own directory (".NAME.XXXXXX.tmp", created with
 * O_EXCL|O_NOFOLLOW and mode 0644 so the umask applies), flushed, fsync'd, and renamed over the
 * target; the directory is fsync'd after. A symbolic link at the target path is refused (rename
 * would replace the link, not follow it, but a user who put a link there meant something else).
 * Targets that are not regular files — /dev/null, a FIFO — are written in place, since renaming
 * over them would replace the device node. Numbered saves (export_save) link the temporary file
 * into place with RENAME_NOREPLACE, so two proftops saving at once never overwrite each other. */
#include "proftop/export.h"

#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
};

static char *fail_text(const char *path, const char *what, int err)
{
	return xasprintf("cannot write %s: %s%s%s", path, what ? what : "", what ? ": " : "",
			 strerror(err));
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

/* Create the temporary file beside path. */
static int open_temp(struct out_file *f, char **message)
{
	const char *base = strrchr(f->path, '/');

	base = base ? base + 1 : f->path;
	f->dir = dir_of(f->path);
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t r = util_hash_u64(util_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)attempt);

		f->tmp = xasprintf("%s/.%s.%06llx.tmp", f->dir, base,
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

static int out_open(struct out_file *f, const char *path, char **message)
{
	struct stat st;
	int err;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -1;
	if (!strcmp(path, "-")) {
		f->is_stdout = true;
		f->fp = stdout;
		return 0;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			*message = xasprintf("cannot write %s: it is a symbolic link, which proftop does "
					     "not follow (name the file it points to)", path);
			return -ELOOP;
		}
		if (S_ISDIR(st.st_mode)) {
			*message = fail_text(path, NULL, EISDIR);
			return -EISDIR;
		}
		if (!S_ISREG(st.st_mode)) { /* a device or a FIFO: write in place */
			f->fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
			if (f->fd < 0) {
				err = errno;
				*message = fail_text(path, NULL, err);
				return -err;
			}
		}
	} else if (errno != ENOENT) {
		err = errno;
		*message = fail_text(path, NULL, err);
		return -err;
	}
	if (f->fd < 0) {
		err = open_temp(f, message);
		if (err)
			return err;
	}
	f->fp = fdopen(f->fd, "w");
	if (!f->fp)
		fatal("out of memory (fdopen)");
	setvbuf(f->fp, NULL, _IOFBF, OUT_BUFFER);
	return 0;
}

static void out_abandon(struct out_file *f)
{
	if (f->fp && !f->is_stdout)
		fclose(f->fp);
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	free(f->dir);
	f->fp = NULL;
	f->tmp = f->dir = NULL;
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
	int err = 0;
	const char *what = "writing";

	if (fflush(f->fp) != 0 || ferror(f->fp)) {
		err = errno ? errno : EIO;
	} else if (f->tmp && fsync(f->fd) < 0) {
		err = errno;
		what = "syncing";
	}
	if (f->is_stdout) {
		if (err)
			*message = fail_text("standard output", NULL, err);
		f->fp = NULL;
		return -err;
	}
	if (fclose(f->fp) != 0 && !err)
		err = errno;
	f->fp = NULL;
	if (!err && f->tmp) {
		err = -put_in_place(f, replace);
		what = "renaming the temporary file into place";
	}
	if (err) {
		*message = err == EEXIST && !replace ? fail_text(f->path, NULL, EEXIST)
						    : fail_text(f->path, what, err);
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

static int write_format(FILE *out, const struct snapshot *s, enum export_format format,
			const struct export_scope *scope)
{
	switch (format) {
	case EXPORT_CALLGRIND:
		return export_callgrind(out, s, scope);
	case EXPORT_FOLDED:
		return export_folded(out, s, scope);
	case EXPORT_PPROF:
		return export_pprof(out, s, scope);
	default:
		return export_tmon(out, s, scope);
	}
}

static int write_one(const struct snapshot *s, const char *path, enum export_format format,
		     const struct export_scope *scope, bool replace, char **message)
{
	struct out_file f;
	int err = out_open(&f, path, message);

	if (err)
		return err;
	err = write_format(f.fp, s, format, scope);
	if (err) {
		*message = fail_text(f.is_stdout ? "standard output" : path, "writing", -err);
		out_abandon(&f);
		return err;
	}
	return out_close(&f, replace, message);
}

static char *thread_path(const char *path, const struct snapshot_thread *t)
{
	return xasprintf("%s.%d", path, (int)t->tid);
}

/* Every file of one save: path, or path.TID for each thread with samples. */
static int write_files(const struct snapshot *s, const char *path, enum export_format format,
		       bool per_thread, bool replace, char **message)
{
	struct export_scope scope;

	if (format == EXPORT_AUTO)
		format = export_format_of_path(path);
	if (!per_thread) {
		export_scope_merged(&scope, s);
		return write_one(s, path, format, &scope, replace, message);
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
		err = write_one(s, name, format, &scope, replace, message);
		free(name);
		if (err)
			return err;
	}
	return 0;
}

int export_write(const struct snapshot *s, const char *path, enum export_format format,
		 bool per_thread, char **message)
{
	*message = NULL;
	return write_files(s, path, format, per_thread, true, message);
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

int export_save(const struct snapshot *s, const struct export_options *o, char **message)
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
		err = write_files(s, o->output, format, o->per_thread, true, message);
		if (!err)
			*message = xasprintf("saved %s%s", o->output, o->per_thread ? ".TID" : "");
		return err;
	}
	base = o->base;
	if (format == EXPORT_AUTO)
		format = base ? export_format_of_path(base) : EXPORT_TMON;
	if (!base)
		base = export_default_path(format);
	for (unsigned n = 0; n < 100000; n++) {
		char *name = n ? xasprintf("%s.%u", base, n) : xstrdup(base);

		if (taken(s, name, o->per_thread)) {
			free(name);
			continue;
		}
		err = write_files(s, name, format, o->per_thread, false, message);
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
