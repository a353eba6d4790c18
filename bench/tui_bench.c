/* tui_bench.c — `tui_bench frame` | `tui_bench live PROFTOP WORKLOAD [SECONDS]`: the TUI's costs.
 *
 * frame: a synthetic profile whose merged call tree has 111,110 nodes (fan-out 10, depth 5, one
 * sample per leaf path, made with profile_add), drawn by the real TUI code into a curses screen
 * of 200x50 on /dev/null. Times a frame of the Tree view with every node open (flattening all
 * 111,110 rows, then drawing the 45 on screen), with the hottest path open (the default), and
 * of the Top view and the Flame view. Median and worst of 50 frames each.
 *
 * flame: the Flame view of a 299,592-node tree, whole, zoomed, with a search, at two sizes.
 *
 * asm FILE START END: the Lines view with its disassembly on (`d`) for the function at link-time
 * [START, END) of the ELF file FILE (bench/run_tui.sh makes one of about 5,000 instructions), a
 * sample at every 7th instruction: the first frame (which disassembles it) and the median and
 * worst of 50 frames after it (rows rebuilt from the snapshot, counts looked up, drawn).
 *
 * live: the real binary on a pseudo-terminal of 200x50, profiling WORKLOAD: the time from fork
 * to the first complete frame (its tab bar) on the terminal, then the CPU time of proftop's UI
 * (main) thread over SECONDS (default 10) at the default refresh, as a share of one core. The
 * whole process's CPU (the sampler and collector threads too) is shown beside it.
 *
 * Prints figures; asserts nothing about them. */
#include "proftop/diff.h"
#include "proftop/disasm.h"
#include "proftop/module.h"
#include "proftop/profile.h"
#include "proftop/ui/tui_screen.h"
#include "proftop/util.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define FANOUT 10
#define DEPTH 5
#define FRAMES 50

/* --- frame ------------------------------------------------------------------------------------ */

/* A tree of fanout^1 + ... + fanout^depth nodes under the root (depth at most 8, fanout 10). */
static struct profile *synthetic_shape(int fanout, int depth)
{
	static const char module[] = "synthetic";
	struct profile *p = profile_new(NULL);
	uint32_t funcs[8][10], stack[8];
	char name[32];
	unsigned leaves = 1;

	for (int d = 0; d < depth; d++) {
		leaves *= (unsigned)fanout;
		for (int i = 0; i < fanout; i++) {
			snprintf(name, sizeof(name), "level%d_function_%d", d, i);
			funcs[d][i] = profile_func(p, module, name, 0);
		}
	}
	for (unsigned leaf = 0; leaf < leaves; leaf++) {
		unsigned rest = leaf;

		for (int d = depth - 1; d >= 0; d--) {
			stack[d] = funcs[d][rest % (unsigned)fanout];
			rest /= (unsigned)fanout;
		}
		/* uneven weights, so there is a hottest path */
		for (unsigned w = 0; w < 1 + (leaf % 7 == 0) * 3; w++)
			profile_add(p, 1, 1, stack, (size_t)depth);
	}
	return p;
}

static struct profile *synthetic_profile(void)
{
	return synthetic_shape(FANOUT, DEPTH);
}

/* Nodes below node (itself not counted). */
static size_t tree_size(const struct snapshot *s, uint32_t node)
{
	size_t n = 0;

	for (uint32_t c = s->nodes[node].first_child; c != SNAPSHOT_NO_NODE; c = s->nodes[c].next_sibling)
		n += 1 + tree_size(s, c);
	return n;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Frames of the screen's current view, rebuilt from scratch each time. */
static void time_frames(struct tui_screen *s, const char *what)
{
	uint64_t t[FRAMES];

	for (int i = 0; i < FRAMES; i++) {
		uint64_t t0 = util_now_ns();

		s->stale = true;
		tui_screen_rebuild(s);
		tui_draw(s);
		t[i] = util_now_ns() - t0;
	}
	qsort(t, FRAMES, sizeof(*t), compare_u64);
	printf("  %-44s %7.3f ms median  %7.3f ms worst  (%zu rows)\n", what, (double)t[FRAMES / 2] / 1e6,
	       (double)t[FRAMES - 1] / 1e6, s->lists[s->view].rows);
}

/* A curses screen of 200x50 on /dev/null, and a TUI state drawing into it. */
static SCREEN *bench_screen(struct tui_screen *s, FILE **out, FILE **in)
{
	struct theme theme;
	SCREEN *screen;

	*out = fopen("/dev/null", "w");
	*in = fopen("/dev/null", "r");
	if (!*out || !*in) {
		perror("/dev/null");
		exit(1);
	}
	screen = newterm("xterm-256color", *out, *in);
	if (!screen) {
		fprintf(stderr, "tui_bench: no terminfo for xterm-256color\n");
		exit(1);
	}
	resizeterm(50, 200);
	start_color();
	use_default_colors();
	tui_screen_init(s, "synthetic");
	theme_builtin(&theme, "default");
	tui_draw_theme(s, &theme);
	return screen;
}

static void bench_screen_end(struct tui_screen *s, SCREEN *screen, FILE *out, FILE *in)
{
	tui_screen_free(s);
	endwin();
	delscreen(screen);
	fclose(out);
	fclose(in);
}

/* The same views against a baseline: a profile of the same shape read from elsewhere (its own
 * functions, matched by name and module, the costlier way), with other weights. Frames reuse the
 * match; a new snapshot with new functions, or another thread scope, matches again: timed apart. */
static void bench_baseline(struct tui_screen *s, struct profile *p, struct snapshot *snap)
{
	struct profile *other = synthetic_shape(FANOUT, DEPTH);
	struct snapshot *old = profile_snapshot(other);
	struct diff_base *live = diff_base_new(old, "bench");
	uint64_t t[FRAMES];

	for (int i = 0; i < FRAMES; i++) {
		struct diff_base *base = diff_base_new(old, "bench");
		uint64_t t0 = util_now_ns();

		diff_base_match(base, snap, 0);
		t[i] = util_now_ns() - t0;
		diff_base_free(base);
	}
	qsort(t, FRAMES, sizeof(*t), compare_u64);
	printf("  %-44s %7.3f ms median  %7.3f ms worst  (%zu nodes)\n",
	       "baseline matched (by name, every node)", (double)t[FRAMES / 2] / 1e6,
	       (double)t[FRAMES - 1] / 1e6, tree_size(old, old->merged_root));
	/* Live: each new snapshot has found a function more, which the baseline lacks. */
	diff_base_match(live, snap, 0);
	for (int i = 0; i < FRAMES; i++) {
		char name[32];
		uint32_t f;
		struct snapshot *next;
		uint64_t t0;

		snprintf(name, sizeof(name), "found_later_%d", i);
		f = profile_func(p, "synthetic", name, 0);
		profile_add(p, 1, 1, &f, 1);
		next = profile_snapshot(p);
		t0 = util_now_ns();
		diff_base_match(live, next, 0);
		t[i] = util_now_ns() - t0;
		snapshot_unref(next);
	}
	qsort(t, FRAMES, sizeof(*t), compare_u64);
	printf("  %-44s %7.3f ms median  %7.3f ms worst\n", "matched again, a new function since",
	       (double)t[FRAMES / 2] / 1e6, (double)t[FRAMES - 1] / 1e6);
	diff_base_free(live);
	tui_screen_set_baseline(s, old, "bench");
	snapshot_unref(old);
	s->view = TUI_TREE;
	view_expansion_reset(&s->tree_open, true);
	time_frames(s, "Tree vs baseline, every node open");
	view_expansion_reset(&s->tree_open, false);
	time_frames(s, "Tree vs baseline, hottest path open");
	s->view = TUI_TOP;
	time_frames(s, "Top vs baseline");
	s->view = TUI_FLAME;
	time_frames(s, "Flame vs baseline");
	tui_screen_set_baseline(s, NULL, NULL);
	profile_free(other);
}

static int bench_frame(void)
{
	struct profile *p = synthetic_profile();
	struct snapshot *snap = profile_snapshot(p);
	struct tui_screen s;
	FILE *out, *in;
	SCREEN *screen = bench_screen(&s, &out, &in);

	printf("== TUI frame: %zu-node call tree (merged), %llu samples, 200x50 screen\n",
	       tree_size(snap, snap->merged_root), (unsigned long long)snap->samples);
	tui_screen_set_snapshot(&s, snap);
	s.view = TUI_TREE;
	view_expansion_reset(&s.tree_open, true);
	time_frames(&s, "Tree, every node open (flatten + draw)");
	view_expansion_reset(&s.tree_open, false);
	time_frames(&s, "Tree, hottest path open (the default)");
	s.view = TUI_TOP;
	time_frames(&s, "Top functions");
	s.view = TUI_FLAME;
	time_frames(&s, "Flame (lay out + draw)");
	bench_baseline(&s, p, snap);
	bench_screen_end(&s, screen, out, in);
	profile_free(p);
	return 0;
}

/* The Flame view of a 299,592-node tree (fan-out 8, depth 6), whole and zoomed two levels in, at
 * 200x50 and at 80x24. */
static int bench_flame(void)
{
	struct profile *p = synthetic_shape(8, 6);
	struct snapshot *snap = profile_snapshot(p);
	struct tui_screen s;
	FILE *out, *in;
	SCREEN *screen = bench_screen(&s, &out, &in);

	printf("== TUI Flame: %zu-node call tree (merged), %llu samples\n",
	       tree_size(snap, snap->merged_root), (unsigned long long)snap->samples);
	tui_screen_set_snapshot(&s, snap);
	s.view = TUI_FLAME;
	time_frames(&s, "Flame, 200x50 (lay out + draw)");
	snprintf(s.filter, sizeof(s.filter), "7");
	time_frames(&s, "Flame, 200x50, search \"7\" (every node)");
	s.filter[0] = 0;
	tui_screen_key(&s, 'j');
	tui_screen_key(&s, 'j');
	tui_screen_key(&s, '\n');
	time_frames(&s, "Flame, 200x50, zoomed two levels in");
	s.filter[0] = '7';
	s.filter[1] = 0;
	time_frames(&s, "Flame, 200x50, zoomed, search \"7\"");
	resizeterm(24, 80);
	time_frames(&s, "Flame, 80x24, zoomed, search \"7\"");
	bench_screen_end(&s, screen, out, in);
	profile_free(p);
	return 0;
}

/* --- asm -------------------------------------------------------------------------------------- */

static int bench_asm(const char *path, uint64_t start, uint64_t end)
{
	struct profile *p = profile_new(NULL);
	struct disasm *d = disasm_new();
	struct disasm_insn *insns;
	const char *why;
	size_t n;
	struct tui_screen s;
	FILE *out, *in;
	SCREEN *screen;
	uint64_t t0;

	if (module_init() || disasm_function(d, path, start, end, &insns, &n, &why)) {
		fprintf(stderr, "tui_bench: %s: %s\n", path, why);
		return 1;
	}
	uint32_t f = profile_func(p, "bench", "big_function", start);

	profile_func_code(p, f, path, start, end);
	for (size_t i = 0; i < n; i += 7) {
		uint32_t site = profile_site(p, f, insns[i].addr, insns[i].file, insns[i].line);

		for (size_t k = 0; k < 1 + i % 5; k++)
			profile_add_sites(p, 1, 1, &f, &site, 1);
	}
	screen = bench_screen(&s, &out, &in);
	tui_screen_set_snapshot(&s, profile_snapshot(p));
	s.view = TUI_LINES;
	s.lines_func = f;
	s.lines_fresh = true;
	s.lines_asm = true;
	t0 = util_now_ns();
	tui_screen_rebuild(&s);
	tui_draw(&s);
	printf("== TUI Lines with the disassembly: %zu instructions on %zu lines, 200x50 screen\n", n,
	       s.annotated.lines.nlines);
	printf("  %-44s %7.3f ms\n", "first frame (disassembles the function)",
	       (double)(util_now_ns() - t0) / 1e6);
	time_frames(&s, "Lines + instructions (rebuild + draw)");
	bench_screen_end(&s, screen, out, in);
	free(insns);
	disasm_free(d);
	profile_free(p);
	return 0;
}

/* --- live ------------------------------------------------------------------------------------- */

/* CPU nanoseconds of one thread: schedstat when the kernel has it, else clock ticks from stat. */
static uint64_t thread_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64];
	unsigned long long run = 0, ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (f && fscanf(f, "%llu", &run) == 1) {
		fclose(f);
		return run;
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

static uint64_t process_cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* Read what the terminal gets until needle shows up (NULL: until the deadline); true if it did.
 * The last bytes of a read are kept, as a needle may straddle two reads. */
static bool read_until(int fd, const char *needle, uint64_t deadline)
{
	char buf[8192];
	size_t have = 0, nlen = needle ? strlen(needle) : 0;

	while (util_now_ns() < deadline) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
		if (nlen && memmem(buf, have, needle, nlen))
			return true;
		if (nlen && have >= nlen) {
			memmove(buf, buf + have - (nlen - 1), nlen - 1);
			have = nlen - 1;
		} else if (!nlen) {
			have = 0;
		}
	}
	return false;
}

static int bench_live(const char *proftop, const char *workload, double seconds)
{
	struct winsize ws = { 50, 200, 0, 0 };
	uint64_t t0 = util_now_ns(), first, c0, p0, c1, p1, w0, w1;
	int master, status;
	char secs[32];
	pid_t pid;

	snprintf(secs, sizeof(secs), "%.0f", seconds + 30);
	pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0) {
		perror("forkpty");
		return 1;
	}
	if (pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		execl(proftop, proftop, "--", workload, secs, (char *)NULL);
		_exit(127);
	}
	if (!read_until(master, "4 Threads", t0 + 10000000000ull)) {
		fprintf(stderr, "tui_bench: no frame from %s within 10 s\n", proftop);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	first = util_now_ns() - t0;
	printf("== TUI live: %s -- %s, 200x50 pseudo-terminal, default refresh\n", proftop, workload);
	printf("  first frame on the terminal   %7.1f ms after fork\n", (double)first / 1e6);
	/* Let the start-up settle, then measure the UI thread over the run. */
	read_until(master, NULL, util_now_ns() + 1000000000ull);
	c0 = thread_cpu_ns(pid, pid);
	p0 = process_cpu_ns(pid);
	w0 = util_now_ns();
	read_until(master, NULL, w0 + (uint64_t)(seconds * 1e9));
	c1 = thread_cpu_ns(pid, pid);
	p1 = process_cpu_ns(pid);
	w1 = util_now_ns();
	printf("  UI thread CPU                 %7.3f %% of a core over %.0f s\n",
	       100.0 * (double)(c1 - c0) / (double)(w1 - w0), (double)(w1 - w0) / 1e9);
	printf("  whole proftop process CPU     %7.3f %% of a core (sampler + collector + UI)\n",
	       100.0 * (double)(p1 - p0) / (double)(w1 - w0));
	if (write(master, "q", 1) != 1)
		kill(pid, SIGTERM);
	read_until(master, NULL, util_now_ns() + 3000000000ull);
	waitpid(pid, &status, 0);
	close(master);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "flame"))
		return bench_flame();
	if (argc >= 2 && !strcmp(argv[1], "frame"))
		return bench_frame();
	if (argc >= 5 && !strcmp(argv[1], "asm"))
		return bench_asm(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
	if (argc >= 4 && !strcmp(argv[1], "live"))
		return bench_live(argv[2], argv[3], argc > 4 ? atof(argv[4]) : 10.0);
	fprintf(stderr, "usage: tui_bench frame | tui_bench flame | tui_bench asm FILE START END | "
			"tui_bench live PROFTOP WORKLOAD [SECONDS]\n");
	return 2;
}
