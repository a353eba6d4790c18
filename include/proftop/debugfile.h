/* debugfile.h — a module's separate debug file: where distributions put the .symtab (and the
 * .debug_frame) they strip from the files they ship.
 *
 * A module names its debug file in two ways, both read from its own sections: an NT_GNU_BUILD_ID
 * note (the file is then /usr/lib/debug/.build-id/xx/yyyy.debug) and a .gnu_debuglink section (a
 * file name, looked for beside the module, in .debug/ beside it and under /usr/lib/debug, with
 * the CRC-32 of that file). A candidate is the debug file when it is another file than the
 * module, an ELF file with a .symtab, and the right one: the same build-id when both have one,
 * else (found by its debuglink) the same CRC, which is not read in a file over 1 GiB. Each place is looked up inside the process's root
 * first (another mount namespace), then in ours. A file found there that is not the right one
 * (the debug file of another build, left beside a rebuilt binary) is never used, but named.
 *
 * Nothing is cached here: the module reader looks once per module and takes from the file what
 * the module lacks. The build-id reader serves the pprof writer too. */
#ifndef PROFTOP_DEBUGFILE_H
#define PROFTOP_DEBUGFILE_H

#include <libelf.h>
#include <stddef.h>
#include <sys/types.h>

/* Build-ids are 20 bytes (sha1) in practice; anything longer is not worth a lookup. */
#define DEBUGFILE_BUILD_ID_MAX 64

/* Where a module came from, which is where its debug file is looked for. */
struct debugfile_origin {
	pid_t pid;		/* a process that maps it: its root is searched first */
	const char *path;	/* as mapped */
	size_t path_len;	/* of path without the kernel's " (deleted)" */
	dev_t dev;		/* the file opened for the module: a debug file must be another one */
	ino_t ino;
};

/* An open debug file, read through libelf. */
struct debugfile {
	Elf *elf;
	int fd;
	char *path;	/* where it was found (inside the process's root) */
};

/* Find and open the debug file of the module whose ELF image is elf (the file origin describes).
 * Returns 0, or -ENOENT when no file fits. Then, when rejected is not NULL, *rejected is NULL or
 * (malloc'd) names the first file that was where a debug file was looked for but is not this
 * module's, and why: another build's (its build-id or CRC-32 differs), not ELF, no .symtab. */
int debugfile_open(struct debugfile *out, Elf *elf, const struct debugfile_origin *origin,
		   char **rejected);
/* Open path (a file fetched for the module: fetch.h) as the debug file of the module whose ELF
 * image is elf, if it is that: an ELF file with a .symtab and the module's build-id. Returns 0, or
 * -ENOENT with *rejected (malloc'd, when rejected is not NULL) saying why it is not. */
int debugfile_open_path(struct debugfile *out, Elf *elf, const char *path,
			const struct debugfile_origin *origin, char **rejected);
void debugfile_close(struct debugfile *debug);

/* The GNU build-id of the ELF file elf (its NT_GNU_BUILD_ID note) into out, which has room for
 * DEBUGFILE_BUILD_ID_MAX bytes. Returns its length, 0 when it has none. */
size_t debugfile_build_id(Elf *elf, unsigned char *out);

#endif
