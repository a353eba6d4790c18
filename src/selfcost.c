/* selfcost.c — proftop's own CPU time and memory (selfcost.h).
 *
 * The CPU time is getrusage(RUSAGE_SELF): every thread's, the ended ones' included, at the
 * kernel's full precision (/proc/self/stat counts clock ticks, too coarse for the share of one
 * refresh). The wall time runs from the process's start as /proc/self/stat gives it (clock ticks
 * since boot, the clock CLOCK_BOOTTIME reads), so that both figures cover the same span: the
 * setup before the first sample costs what it costs. The resident memory is /proc/self/statm's,
 * the peak getrusage's ru_maxrss. */
#include "proftop/selfcost.h"

#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* When the process started, in nanoseconds of CLOCK_BOOTTIME; 0: unknown. */
static uint64_t started_ns(void)
{
	char buf[1024], *p;
	long tick = sysconf(_SC_CLK_TCK);
	unsigned long long ticks;

	/* The command name (field 2) may hold spaces and parentheses: fields are counted after
	 * its last ')'. starttime is field 22, the 20th after it. */
	if (tick <= 0 || !util_read_small("/proc/self/stat", buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return 0;
	p++;
	for (int field = 3; field < 22; field++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	if (sscanf(p, " %llu", &ticks) != 1)
		return 0;
	return (uint64_t)ticks * (1000000000ull / (uint64_t)tick);
}

static uint64_t resident_bytes(void)
{
	char buf[256];
	unsigned long long size, resident;
	long page = sysconf(_SC_PAGESIZE);

	if (page <= 0 || !util_read_small("/proc/self/statm", buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * (uint64_t)page;
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000u;
}

void selfcost_measure(struct selfcost *out)
{
	struct rusage ru;
	struct timespec now;
	uint64_t start = started_ns(), now_ns;

	*out = (struct selfcost){ 0 };
	if (!start || getrusage(RUSAGE_SELF, &ru) < 0 || clock_gettime(CLOCK_BOOTTIME, &now) < 0)
		return;
	now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	out->cpu_ns = timeval_ns(ru.ru_utime) + timeval_ns(ru.ru_stime);
	/* starttime is rounded down to a tick: never 0, the mark of no measure. */
	out->wall_ns = now_ns > start ? now_ns - start : 1;
	out->rss = resident_bytes();
	out->peak_rss = (uint64_t)ru.ru_maxrss * 1024u;
	if (out->peak_rss < out->rss) /* read a moment apart */
		out->peak_rss = out->rss;
}

bool selfcost_known(const struct selfcost *c)
{
	return c && c->wall_ns;
}

double selfcost_share(const struct selfcost *now, const struct selfcost *before)
{
	uint64_t cpu, wall;

	if (!selfcost_known(now))
		return -1;
	cpu = now->cpu_ns;
	wall = now->wall_ns;
	if (selfcost_known(before) && before->wall_ns < now->wall_ns) {
		cpu = now->cpu_ns > before->cpu_ns ? now->cpu_ns - before->cpu_ns : 0;
		wall = now->wall_ns - before->wall_ns;
	}
	return 100.0 * (double)cpu / (double)wall;
}

const char *selfcost_text(char *out, size_t size, const struct selfcost *now,
			  const struct selfcost *before)
{
	char rss[16];

	if (!selfcost_known(now)) {
		snprintf(out, size, "%s", "");
		return out;
	}
	snprintf(out, size, "proftop %.1f%% CPU %s", selfcost_share(now, before),
		 util_bytes_text(rss, sizeof(rss), now->rss));
	return out;
}

/* "NAME 1.2M of 8.0M", or "NAME 1.2M" without a limit. */
static int part_text(char *out, size_t size, const char *name, uint64_t bytes, uint64_t budget)
{
	char held[16], of[16];

	if (!budget)
		return snprintf(out, size, "%s %s", name, util_bytes_text(held, sizeof(held), bytes));
	return snprintf(out, size, "%s %s of %s", name, util_bytes_text(held, sizeof(held), bytes),
			util_bytes_text(of, sizeof(of), budget));
}

const char *selfcost_memory_text(char *out, size_t size, const struct selfcost *c)
{
	int n;

	snprintf(out, size, "%s", "");
	if (!selfcost_known(c) || (!c->trees && !c->sources))
		return out;
	n = part_text(out, size, "call trees", c->trees, c->trees_budget);
	if (n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, ", ");
	if (n >= 0 && (size_t)n < size)
		n += part_text(out + n, size - (size_t)n, "DWARF", c->sources, c->sources_budget);
	if (c->sources_closed && n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, ", closed %llu time%s",
			      (unsigned long long)c->sources_closed, c->sources_closed == 1 ? "" : "s");
	if (c->history && n >= 0 && (size_t)n < size) {
		n += snprintf(out + n, size - (size_t)n, ", ");
		if (n >= 0 && (size_t)n < size)
			part_text(out + n, size - (size_t)n, "history", c->history, 0);
	}
	return out;
}

const char *selfcost_summary(char *out, size_t size, const struct selfcost *c)
{
	char rss[16], peak[16];

	if (!selfcost_known(c)) {
		snprintf(out, size, "%s", "");
		return out;
	}
	snprintf(out, size, "proftop itself: cpu %.3fs of %.3fs (%.2f%%), rss %s, peak %s",
		 (double)c->cpu_ns / 1e9, (double)c->wall_ns / 1e9, selfcost_share(c, NULL),
		 util_bytes_text(rss, sizeof(rss), c->rss),
		 util_bytes_text(peak, sizeof(peak), c->peak_rss));
	return out;
}
