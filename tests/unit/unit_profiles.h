/* unit_profiles.h — what several unit tests do alike: add samples to a profile, find a function of
 * a snapshot by name. Included by the test files that need them; static, so each binary has its
 * own copy. */
#ifndef PROFTOP_UNIT_PROFILES_H
#define PROFTOP_UNIT_PROFILES_H

#include "proftop/profile.h"
#include "proftop/snapshot.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* count samples of thread tid (of process 7) on the stack of depth functions that follow. */
static inline void unit_add(struct profile *p, pid_t tid, int count, size_t depth, ...)
{
	uint32_t stack[16];
	va_list ap;

	va_start(ap, depth);
	for (size_t i = 0; i < depth && i < 16; i++)
		stack[i] = va_arg(ap, uint32_t);
	va_end(ap);
	for (int i = 0; i < count; i++)
		profile_add(p, 7, tid, stack, depth < 16 ? depth : 16);
}

/* The first function of s named name, UINT32_MAX when none is. */
static inline uint32_t unit_func_named(const struct snapshot *s, const char *name)
{
	for (uint32_t f = 0; f < s->nfuncs; f++)
		if (!strcmp(s->funcs[f].name, name))
			return f;
	return UINT32_MAX;
}

#endif
