/* strpool.h — interned strings that live as long as their pool.
 *
 * strpool_intern() returns the pool's copy of a string: equal strings share one pointer, and every
 * pointer stays valid (and never moves) until strpool_free(). The symbolizer promises callers that
 * names outlive reloads of the data they came from; a pool is how it keeps that promise without
 * copying the same path or JIT name again for every process, and the profile how its snapshots
 * own their names.
 *
 * Threads: one thread interns. A string it returned may be read on any thread that received it
 * through a synchronised handoff (a snapshot published under a lock), and references may be taken
 * and dropped on any thread. */
#ifndef PROFTOP_STRPOOL_H
#define PROFTOP_STRPOOL_H

#include <stddef.h>

struct strpool;

/* A new pool with one reference. */
struct strpool *strpool_new(void);
/* Another reference to pool. */
struct strpool *strpool_ref(struct strpool *pool);
/* Drop a reference; the last one frees the pool and every string in it. */
void strpool_free(struct strpool *pool);
/* The pool's NUL-terminated copy of s[0..len) (s need not be terminated). */
const char *strpool_intern(struct strpool *pool, const char *s, size_t len);
/* The pool's copy of s[0..len) if it has one, else NULL; adds nothing. */
const char *strpool_find(const struct strpool *pool, const char *s, size_t len);
/* The most memory interning a new string of len bytes costs: its copy and its share of the
 * index. What a caller that must bound what it adds counts. */
size_t strpool_cost(size_t len);

#endif
