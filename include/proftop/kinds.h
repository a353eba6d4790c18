/* kinds.h — the collector's kinds of profile by name ("cpu", "offcpu", "inuse", ...), for the
 * code that holds a collector but names no mode (the HTTP endpoint): the name is the one
 * sample_mode_info() gives, snapshot_kind() answers for a snapshot of it. Every call is one of
 * the collector's thread-safe ones; a name that is no kind is a kind the run does not keep. */
#ifndef PROFTOP_KINDS_H
#define PROFTOP_KINDS_H

#include <stdbool.h>
#include <stdint.h>

struct collector;
struct snapshot;

/* The kind shown (as last asked: its snapshot may come at the next publication). */
const char *kinds_shown(struct collector *collector);
/* Whether kinds_stretch() can make stretches of kind (collector_keeps_stretches()). */
bool kinds_keeps_stretches(const struct collector *collector, const char *kind);
/* A snapshot of the run's seconds [from_s, to_s) of kind, with a reference for the caller
 * (collector_stretch()); NULL when kinds_keeps_stretches() says no. */
struct snapshot *kinds_stretch(struct collector *collector, const char *kind, uint64_t from_s,
			       uint64_t to_s);

#endif
