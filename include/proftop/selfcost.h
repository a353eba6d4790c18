/* selfcost.h — what proftop itself costs: the CPU time of all its threads and its memory, as
 * Devel::DProf measured its own overhead ($over_utime, $over_tests) so that it can be taken into
 * account. The collector measures it once per publication (never per sample) and stamps it into
 * every snapshot it publishes, so each frontend and exporter reads the same figures. A snapshot
 * read back from a file has none: wall_ns is 0 and the figures are not shown at all. */
#ifndef PROFTOP_SELFCOST_H
#define PROFTOP_SELFCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct selfcost {
	uint64_t cpu_ns;   /* user + system time of every proftop thread since it started */
	uint64_t wall_ns;  /* time since proftop started; 0: not measured */
	uint64_t rss;      /* resident bytes now */
	uint64_t peak_rss; /* the most resident bytes so far */
	/* What the collector holds of it, by part of --max-memory (0s when not measured): */
	uint64_t trees;          /* the call trees and their pooled snapshots (profile_memory()) */
	uint64_t trees_budget;   /* their part (0: no limit) */
	uint64_t sources;        /* the DWARF open for source lines and the answers kept from it */
	uint64_t sources_budget; /* its part (0: no limit) */
	uint64_t sources_closed; /* times a module's DWARF was closed to keep within it */
	uint64_t history;        /* the timeline's seconds (bounded by --history, not by the budget) */
};

/* proftop's figures now (a getrusage() and two short /proc/self reads; tens of microseconds). */
void selfcost_measure(struct selfcost *out);
bool selfcost_known(const struct selfcost *cost);
/* proftop's CPU share in percent of one CPU (its threads together may pass 100) from before to
 * now; over its whole run when before is NULL, unmeasured or not earlier. -1 when now is
 * unmeasured. */
double selfcost_share(const struct selfcost *now, const struct selfcost *before);
/* The headers' field, "proftop 1.3% CPU 35.0M" (the share as selfcost_share() takes it, the
 * resident memory now); "" when now is unmeasured. Returns out. */
const char *selfcost_text(char *out, size_t size, const struct selfcost *now,
			  const struct selfcost *before);
/* What the collector holds, "call trees 20.1M of 24.0M, DWARF 1.2M of 8.0M, closed 3 times,
 * history 4.1M" (without "of" when there is no limit, without the closes when none, without the
 * history when it keeps none); "" when unmeasured. Returns out. */
const char *selfcost_memory_text(char *out, size_t size, const struct selfcost *cost);
/* The whole run's figures for a snapshot file's comment: "proftop itself: cpu 0.146s of
 * 11.204s (1.30%), rss 35.0M, peak 41.0M"; "" when unmeasured. Returns out. */
const char *selfcost_summary(char *out, size_t size, const struct selfcost *cost);

#endif
