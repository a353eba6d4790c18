/* demangle.h — C++ and Rust symbol names as people read them.
 *
 * A thin wrapper over libiberty's demangler (the one binutils and gdb use), kept in its own file
 * because libiberty's headers declare names (basename, xmalloc) that clash with libc's and ours. */
#ifndef PROFTOP_DEMANGLE_H
#define PROFTOP_DEMANGLE_H

/* The demangled form of an Itanium C++ ("_Z...") or Rust (legacy "_ZN...17h<hash>E" or v0
 * "_R...") name, with parameter types, in a malloc'ed string the caller frees; NULL when name is
 * not such a name or is malformed. */
char *demangle_name(const char *name);

#endif
