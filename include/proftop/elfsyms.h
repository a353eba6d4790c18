/* elfsyms.h — the values of named symbols of an ELF file (its .symtab and .dynsym): how the
 * interpreter readers (pyframes.c, perlframes.c) find an interpreter's globals in its file. */
#ifndef PROFTOP_ELFSYMS_H
#define PROFTOP_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

/* For each of names[0..n), its defined symbol's value (link-time address) into values[i], 0
 * when the file has none, and its size into sizes[i] (sizes may be NULL). Returns 0, or -errno
 * (-ENOEXEC: not an ELF file). */
int elfsyms_find(const char *path, const char *const *names, uint64_t *values, uint64_t *sizes,
		 size_t n);

#endif
