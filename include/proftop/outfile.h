/* outfile.h — a file written whole or not at all: to a temporary name beside it, renamed into
 * place once flushed and synced (outfile.c says how); a FIFO, a device or standard output written
 * in place, never blocking. Used by the main thread. */
#ifndef PROFTOP_OUTFILE_H
#define PROFTOP_OUTFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct outstream;

/* One file being written: write to fp. */
struct outfile {
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

/* Start writing path ("-": standard output). A symbolic link or a directory at path is refused.
 * Returns 0, or -errno with a malloc'd *message naming the path. */
int outfile_open(struct outfile *f, const char *path, char **message);
/* Flush, sync and move into place (without replace, an existing file is -EEXIST). On failure the
 * temporary file is removed. Returns 0, or -errno with a malloc'd *message. */
int outfile_close(struct outfile *f, bool replace, char **message);
/* Give up: the temporary file is removed, nothing is put in place. */
void outfile_abandon(struct outfile *f);
/* The malloc'd text of an error err while what ("writing", ...) f, or of why a write in place
 * gave up waiting for its reader. */
char *outfile_error(struct outfile *f, const char *what, int err);
/* Before writing: whether path can be written (look: what is at path is looked at too; without,
 * only its directory, for files named after it). Leaves nothing behind. Returns 0, or -errno
 * with a malloc'd *message. */
int outfile_check(const char *path, bool look, char **message);

#endif
