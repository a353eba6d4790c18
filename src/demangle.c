/* demangle.c — C++ and Rust symbol names as people read them, through libiberty.
 *
 * cplus_demangle() with DMGL_AUTO tries Rust first (legacy Rust names are valid C++ names too, and
 * only the Rust demangler strips their hash) and then the Itanium C++ ABI. Passing DMGL_RUST alone
 * would turn the C++ demangler off, so the style is left on AUTO. */
#include "proftop/demangle.h"

#include <libiberty/demangle.h>

char *demangle_name(const char *name)
{
	/* Everything else is C, or a language we do not demangle: skip the demangler's work. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
