/* view_name.h — function names as the screen and batch mode show them: whole, or shortened for
 * reading (--names, the screen's p key). Pure string functions: no snapshot, no curses.
 *
 *     full    void std::vector<int, std::allocator<int> >::push_back(int const&)
 *     short   std::vector<int, std::allocator<int> >::push_back
 *     bare    std::vector<>::push_back
 *
 * short is what libiberty's demangler prints without DMGL_PARAMS (no parameter list, no return
 * type, no const or & qualifiers of a member function), with the clone suffixes kept
 * ("foo [clone .cold]" is another function than "foo") and a Rust legacy hash ("::h" and 16 hex
 * digits) dropped should one be left; bare also writes each list of template or generic
 * arguments as "<>". A name that is not a demangled function (C, Go, a JIT's, "lib.so+0x1f0") is
 * shown as it is, and so is anything this does not parse as balanced brackets. */
#ifndef PROFTOP_VIEW_NAME_H
#define PROFTOP_VIEW_NAME_H

#include <stddef.h>

enum view_names {
	VIEW_NAMES_FULL,           /* as demangled (the default) */
	VIEW_NAMES_SHORT,          /* without parameter lists and return types */
	VIEW_NAMES_BARE,           /* ... and without template arguments */
	VIEW_NAMES_COUNT,
};

/* "full", "short", "bare": the --names values and the screen's messages. */
const char *view_names_label(enum view_names names);
/* The level named label; -1 when none is. */
int view_names_parse(const char *label);

/* name as names shows it: name itself when that changes nothing, else buf (size bytes, at least
 * 1), which gets as much of the shortened name as fits (it is never longer than name). */
const char *view_name(const char *name, enum view_names names, char *buf, size_t size);

#endif
