/* export_writers.h — the formats a snapshot is written in, each by its own file (export_tmon.c,
 * export_callgrind.c, export_folded.c, export_pprof.c, export_lcov.c, export_otlp.c,
 * export_speedscope.c) over a scope that export_walk.h walks; export.c picks one and the file. */
#ifndef PROFTOP_EXPORT_WRITERS_H
#define PROFTOP_EXPORT_WRITERS_H

#include <stdio.h>

#include "proftop/export_walk.h"
#include "proftop/snapshot.h"

struct export_timeline;

/* Each writes the scope's tree to out and returns 0 or -errno (a write error on out). */
int export_tmon(FILE *out, const struct snapshot *snapshot,
		const struct export_scope *scope);
int export_callgrind(FILE *out, const struct snapshot *snapshot,
		     const struct export_scope *scope);
int export_folded(FILE *out, const struct snapshot *snapshot,
		  const struct export_scope *scope);
/* Folded stacks of now against a baseline: "a;b;c OLD NEW" per stack of either side. */
int export_folded_diff(FILE *out, const struct snapshot *old, const struct export_scope *old_scope,
		       const struct snapshot *now, const struct export_scope *scope);
int export_pprof(FILE *out, const struct snapshot *snapshot,
		 const struct export_scope *scope);
/* A coverage snapshot's lines (its sites) as an lcov tracefile: the whole run's, whatever the
 * scope (sites are not split by thread). */
int export_lcov(FILE *out, const struct snapshot *snapshot, const struct export_scope *scope);
/* An OTLP ExportProfilesServiceRequest (export_otlp.h), unframed protobuf. */
int export_otlp(FILE *out, const struct snapshot *snapshot, const struct export_scope *scope);
/* speedscope's JSON: a profile per thread of the scope, its samples in the order of timeline's
 * stretches (NULL or empty: the snapshot as one stretch). */
int export_speedscope(FILE *out, const struct snapshot *snapshot, const struct export_scope *scope,
		      const struct export_timeline *timeline);

#endif
