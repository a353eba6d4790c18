/* options_table.c — the table of proftop's options, and what is made from it.
 *
 * options_table[] says everything about each option once: its long and short names, its value's
 * name, the parser that checks and stores the value (options.c), the --help line and the man
 * page's paragraph. From it come getopt_long's arguments (and the pass over argv with them), the
 * names $PROFTOP accepts (options_spec_named()), the --help list and the option lists of
 * doc/proftop.1 and README.md (`make man` splices them in; test_options fails when they and the
 * table differ), so they cannot drift apart. */
#include "proftop/options_internal.h"

#include "proftop/util.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* --- the table -------------------------------------------------------------------------------- */

/* In the order --help and the man page list them. */
static const struct option_spec options_table[] = {
	{
		.name = "freq", .letter = 'F', .arg = "HZ", .parse = options_set_freq,
		.help = "samples per second per thread (default 999, max 100000)",
		.man = "Samples per second of CPU time, per thread (1 to 100000; default 999).",
	},
	{
		.name = "duration", .letter = 'd', .arg = "SEC", .parse = options_set_duration,
		.help = "stop after SEC seconds (fractions allowed); a launched\n"
			"command is then ended",
		.man = "Stop after \\fISEC\\fR seconds (fractions allowed; at most 10000000, about\n"
		       "115 days). A launched command is\n"
		       "then ended as on\n"
		       ".BR SIGTERM ;\n"
		       "attached processes keep running. Batch mode then prints its final table\n"
		       "and exits; the screen stays, showing the final profile, until \\fBq\\fR.",
	},
	{
		.name = "pid", .letter = 'p', .arg = "PID[,PID...]", .parse = options_set_pids,
		.help = "attach to running processes and all their threads",
		.man = "Attach to running processes: all their threads, and the threads and\n"
		       "processes they create. Detaching leaves them running untouched. A kernel\n"
		       "thread (kthreadd, a kworker) has no user space to profile: it is left out\n"
		       "with a warning, or is the error when no other PID is given.",
	},
	{
		.name = "children", .letter = 'C', .parse = options_set_children,
		.help = "with -p: also the processes they started before the\n"
			"attach (a server's workers), and theirs",
		.man = "With \\fB\\-p\\fR: attach also to the processes the named ones started before\n"
		       "proftop attached (a pre-forking server's workers, PostgreSQL's backends), and\n"
		       "to those these started, all their threads. The ones started after the attach\n"
		       "are followed without it. Without it, when a named process stays idle (under\n"
		       "1% of a CPU for 2 seconds, or the whole run) and processes it started before\n"
		       "the attach exist, proftop says how many: their work is not in the profile.",
	},
	{
		.name = "all-cpus", .letter = 'a', .parse = options_set_all_cpus,
		.help = "every process on the machine (root, CAP_PERFMON or\n"
			"perf_event_paranoid <= 0); Threads becomes Processes",
		.man = "Profile every process on the machine, as \\fBperf top\\fR does: an event\n"
		       "per CPU, the processes running then and every one started later, their\n"
		       "execs and exits followed as in launch mode (symbols of a process in another\n"
		       "mount namespace are read through\n"
		       ".IR /proc/PID/root ).\n"
		       "Needs root, CAP_PERFMON, or\n"
		       ".I /proc/sys/kernel/perf_event_paranoid\n"
		       "at 0 or lower. The call trees are kept per process, not per thread: the\n"
		       "screen's Threads view is then Processes (PID, COMMAND), and picking one\n"
		       "shows only it in every view; \\fB\\-\\-per\\-thread\\fR writes a file per\n"
		       "process. It runs until \\fB\\-d\\fR, \\fBq\\fR or a signal; give no command\n"
		       "and no \\fB\\-p\\fR with it. The header's user and system times are the\n"
		       "machine's. proftop's own process is left out (\\fB\\-\\-include\\-self\\fR\n"
		       "keeps it).",
	},
	{
		.name = "include-self", .parse = options_set_include_self,
		.help = "-a: proftop's own threads (sampler, collectors) too; left out\n"
			"by default",
		.man = "With \\fB\\-a\\fR, profile proftop's own process too: its sampler,\n"
		       "collector and other threads, which are otherwise left out, so that the\n"
		       "profile is of the machine's work and not of proftop's reading it.",
	},
	{
		.name = "call-graph", .letter = 'g', .arg = "MODE", .parse = options_set_call_graph,
		.help = "dwarf (default: unwind a copy of the user stack with the\n"
			"programs' DWARF CFI), fp (the kernel's frame-pointer\n"
			"callchain) or none (the sampled function only)",
		.man = "\\fBdwarf\\fR (default): unwind a copy of each sample's user stack with\n"
		       "the programs' DWARF call frame information. \\fBfp\\fR: the kernel walks\n"
		       "frame pointers (cheaper; code built without frame pointers gives short or\n"
		       "wrong stacks). \\fBnone\\fR: only the sampled function, so TOTAL% equals\n"
		       "SELF%.",
	},
	{
		.name = "mode", .arg = "MODE", .parse = options_set_mode,
		.help = "cpu (default: where the threads burn CPU time), offcpu\n"
			"(where they wait blocked), runnable (preempted, waiting for\n"
			"a CPU) or wall (all three); these sample every context\n"
			"switch and need perf_event_paranoid <= 1 or root. alloc:\n"
			"bytes allocated, and in use (inuse; at the end, the leaks),\n"
			"and their objects, from a library preloaded into the\n"
			"command. The screen's m key shows the others of such a run.\n"
			"coverage: how often each source line ran, with uprobes\n"
			"(root, or CAP_BPF and CAP_PERFMON; lines need -g)",
		.man = "\\fBcpu\\fR (default): sample where the threads run, \\fB\\-F\\fR times a second\n"
		       "of their CPU time. \\fBoffcpu\\fR: where they wait: every time a thread is\n"
		       "switched out of the CPU while blocked (in \\fBread\\fR(2), a lock, a sleep),\n"
		       "its stack is taken as a CPU sample's is, and the time until it runs again\n"
		       "is counted there. \\fBrunnable\\fR: the same for the switches out of a thread\n"
		       "that was still runnable (preempted: it waited for a CPU, not for anything\n"
		       "of its own). \\fBwall\\fR: the CPU samples (each as the CPU time it stands\n"
		       "for) and both kinds of waiting, so that each thread's rows add up to its\n"
		       "lifetime. A run in any mode but cpu keeps all four profiles (the CPU samples\n"
		       "and every context switch; its CPU samples count the time in the kernel too,\n"
		       "at the system call that spent it, or in the kernel's functions with\n"
		       "\\fB\\-\\-kernel\\fR): the screen's \\fBm\\fR key shows them in turn, the\n"
		       "views keeping their place, and what is saved is the mode shown. Counts are\n"
		       "then microseconds: the tables show seconds where they show samples, shares\n"
		       "of all the time measured, and the snapshots hold the times (tmon.out in\n"
		       "ticks of a microsecond). Without \\fB\\-\\-kernel\\fR a stack off the CPU ends\n"
		       "in the C library's wrapper of the call that blocked. A thread still switched\n"
		       "out counts while it waits (up to 0.2 s ago: its record may be on the way)\n"
		       "and until profiling ends. Attached (\\fB\\-p\\fR), a thread already waiting when\n"
		       "proftop's events are enabled (asleep, in an uninterruptible wait or stopped, in\n"
		       "\\fI/proc/PID/task/TID/status\\fR before and after they were, with no context switch in\n"
		       "between) waits from then until it runs again or profiling ends, on the stack it waits with:\n"
		       "its stack and instruction pointers in \\fI/proc/PID/task/TID/syscall\\fR and the top of its\n"
		       "stack in \\fI/proc/PID/mem\\fR, unwound as a switch's stack is (a caller whose frame needs\n"
		       "another register ends it), with \\fB\\-g fp\\fR the instruction alone; with \\fB\\-\\-kernel\\fR\n"
		       "the kernel's frames of \\fI/proc/PID/task/TID/stack\\fR (root's to read) over it. When the\n"
		       "user stack cannot be read (reading it needs ptrace access) the kernel's frames, or the function\n"
		       "\\fI/proc/PID/task/TID/wchan\\fR names, stand alone; a wait nothing is known of is not counted.\n"
		       "A thread's switches lost (the counters' overflow and dropped) or not\n"
		       "sampled (\\fB\\-\\-switch\\-period\\fR: a thread that switches a few times\n"
		       "may have none sampled) leave its waits uncounted. The switch event fires in\n"
		       "the kernel, so it needs\n"
		       ".I /proc/sys/kernel/perf_event_paranoid\n"
		       "at 1 or lower (or root, or CAP_PERFMON); proftop says so when it is not.\n"
		       ".IP\n"
		       "\\fBalloc\\fR: the command's heap allocations instead of its CPU time.\n"
		       "proftop preloads its allocation library (\\fIlibproftop\\-alloc.so\\fR, installed\n"
		       "in \\fIPREFIX/lib/proftop\\fR; \\fBPROFTOP_ALLOC_LIB\\fR names another) into\n"
		       "the command with \\fBLD_PRELOAD\\fR. It wraps malloc, calloc, realloc, free,\n"
		       "malloc_usable_size and the aligned allocators (C++'s new and delete reach\n"
		       "them through libstdc++) around the allocator the program would use without\n"
		       "it (glibc's, or another preloaded one: jemalloc, tcmalloc), samples by bytes\n"
		       "(\\fB\\-\\-alloc\\-rate\\fR) and sends each sampled block's registers and the top\n"
		       "of its stack (up to 16 KiB, as a CPU sample), which proftop unwinds, and\n"
		       "its free, through shared memory. Every block stays as the allocator made\n"
		       "it (its size, its usable size, how realloc grows it). The library walks no\n"
		       "stack in the program, keeps no descriptor open in it, does no I/O and\n"
		       "leaves errno and the floating\\-point flags as they were; the program sees\n"
		       "its environment without the library's variables and without the library in\n"
		       "\\fBLD_PRELOAD\\fR. The programs it executes through the exec functions or\n"
		       "posix_spawn are preloaded and sampled too (a static or setuid one, which no\n"
		       "library goes into, sees the variables); those system() and popen() start\n"
		       "are not, nor any when proftop is not dumpable (file capabilities: the\n"
		       "programs cannot open its descriptor). C++'s new and delete of an allocator\n"
		       "that replaces them (tcmalloc, jemalloc built so) do not reach the library.\n"
		       "Sampled blocks are followed to their free in a set of 262,144 at most\n"
		       "(about a heap of 128 GiB at the default rate); past that a sampled block\n"
		       "counts as allocated, never as in use. The run\n"
		       "keeps four profiles, shown in turn with \\fBm\\fR: \\fBalloc\\fR (bytes\n"
		       "allocated), \\fBinuse\\fR (bytes allocated and not freed: when the run ends,\n"
		       "what leaked; a process that exits keeps its blocks, one that executes\n"
		       "another program frees its image's), \\fBalloc\\-objects\\fR and \\fBinuse\\-objects\\fR (the same in\n"
		       "blocks); any of them may be named to start with. The counts are estimates\n"
		       "from the samples, each standing for the allocations of its size it\n"
		       "represents; their error is about one over the square root of the samples\n"
		       "behind a row. A statically linked or setuid command cannot have a library\n"
		       "preloaded, nor can a running process (\\fB\\-p\\fR): proftop says so. The\n"
		       "header shows the bytes allocated (and per second) and in use; the timeline\n"
		       "the bytes allocated each second, or in use at its end. Snapshots are\n"
		       "pprof (with alloc_objects, alloc_space, inuse_objects and inuse_space,\n"
		       "as Go's heap profiles), callgrind (events Bytes or Objects) or folded\n"
		       "(bytes or objects); tmon.out carries time only and is refused.\n"
		       ".IP\n"
		       "\\fBcoverage\\fR: which source lines of the command's executable (and of the\n"
		       "modules \\fB\\-\\-module\\fR adds) run, and how often, in the running, unmodified\n"
		       "program: the kernel's uprobes count every address that starts a line in the\n"
		       "DWARF line table (so the lines need \\fB\\-g\\fR, or a debug file), with\n"
		       "multi\\-uprobe BPF links per process and file (Linux 6.6 or later), and a line\n"
		       "counts the most any of its addresses ran, as gcov counts it (a function's\n"
		       "calls on its declaration's line). Each execution is a trap of a few\n"
		       "microseconds, so a line stops being counted at \\fB\\-\\-coverage\\-cap\\fR\n"
		       "executions (shown as at least that many; its breakpoints are removed within\n"
		       "0.01 s). Needs root, or CAP_BPF and CAP_PERFMON. The command is probed before\n"
		       "it starts, every thread of a process from its start; a child process from\n"
		       "the moment proftop sees it (its first instructions are not counted); a\n"
		       "module \\fB\\-\\-module\\fR names without a path from its mapping. An\n"
		       "instruction with a lock or segment prefix cannot be probed: a line with no\n"
		       "other address is left out, and proftop says how many. Top lists functions by\n"
		       "executions with the share of their lines that ran, the Lines view and\n"
		       "\\fB\\-\\-annotate\\fR show each line's count (\\fB#####\\fR: never ran,\n"
		       "\\fB>=\\fR\\fIN\\fR: capped), the timeline the lines first reached each second,\n"
		       "\\fB\\-\\-histogram\\fR each line's first address and count; snapshots are lcov\n"
		       "tracefiles (\\fB\\-f lcov\\fR or a \\fI.info\\fR name, for \\fBgenhtml\\fR(1)),\n"
		       "callgrind, folded or pprof. The probes are file descriptors of proftop's:\n"
		       "however proftop ends, the kernel removes them.",
	},
	{
		.name = "coverage-cap", .arg = "N", .parse = options_set_coverage_cap,
		.help = "--mode coverage: stop counting a line after N executions\n"
			"(its probe removed; shown as >= N); 0 counts every one\n"
			"(default 1000; 1: which lines ran, nearly free)",
		.man = "With \\fB\\-\\-mode coverage\\fR, a line stops being counted once it ran \\fIN\\fR\n"
		       "times (0 to 1000000000; default 1000; 0: never) and its probes are removed\n"
		       "within 0.01 s; the line shows as run at least \\fIN\\fR times: a hot loop then\n"
		       "costs about \\fIN\\fR traps, not one per iteration. \\fB1\\fR asks only which\n"
		       "lines ran.",
	},
	{
		.name = "module", .arg = "NAME", .parse = options_set_module,
		.help = "--mode coverage: count the lines of this shared library\n"
			"too (its file name, its name up to a '.' or '-', or a path);\n"
			"may be given again",
		.man = "With \\fB\\-\\-mode coverage\\fR, count the lines of a module besides the\n"
		       "command's executable, as Inferno's prof(3) \\fBmodule\\fR message adds one: a\n"
		       "path (probed from the start), or a file name, or the start of one up to a\n"
		       "\\fB.\\fR or \\fB\\-\\fR (\\fBlibz\\fR is \\fIlibz.so.1\\fR), probed when a\n"
		       "process maps it. May be given more than once.",
	},
	{
		.name = "alloc-rate", .arg = "BYTES", .parse = options_set_alloc_rate,
		.help = "--mode alloc: sample an allocation every BYTES bytes on\n"
			"average (K, M, G; default 512K): lower is more exact and costs\n"
			"the program more",
		.man = "With \\fB\\-\\-mode alloc\\fR, sample a mean of one allocated byte in\n"
		       "\\fIBYTES\\fR (with K, M or G: powers of 1024; 1 to 1G; default 512K), as\n"
		       "tcmalloc and Go's heap profiler do: each byte has the same chance, so a\n"
		       "block of \\fIBYTES\\fR or more is nearly always sampled, a small one seldom\n"
		       "(and then counts for the many it stands for). Each sample costs the program\n"
		       "a copy of the top of its stack (a few KiB, at most 16) into shared memory.",
	},
	{
		.name = "switch-period", .arg = "N", .parse = options_set_switch_period,
		.help = "modes but cpu: take the stack of one context switch in N\n"
			"(default 1; a prime such as 11 or 101), its time counted N\n"
			"times: for programs that switch very often",
		.man = "With \\fB\\-\\-mode\\fR other than cpu, sample one context switch in \\fIN\\fR (1 to\n"
		       "1000000; default 1, every one): only those copy a stack, and the time until\n"
		       "each comes back counts \\fIN\\fR times, for the switches between. A program\n"
		       "that switches tens of thousands of times a second is slowed far less, and\n"
		       "drops fewer records. Each thread counts its own switches, so a thread that\n"
		       "alternates between two waits would have only one of them sampled with an\n"
		       "even \\fIN\\fR: choose a prime (7, 11, 101), which no short pattern divides.",
	},
	{
		.name = "stack-size", .arg = "BYTES", .parse = options_set_stack_size,
		.help = "user stack copied per sample for dwarf (default 16384)",
		.man = "How much of the user stack each sample copies for \\fBdwarf\\fR unwinding\n"
		       "(a multiple of 8 from 64 to 65000; default 16384). A stack deeper than\n"
		       "that is counted as truncated. Measured on gcc compiling a 1,100-line C\n"
		       "file: 6% of samples truncated at 8 KiB (perf's default), 3% at 16 KiB,\n"
		       "0.7% at 32 KiB, none at 64 KiB; the test workloads (60 recursive frames\n"
		       "included) need 2 KiB. Each doubling doubles what the kernel copies and\n"
		       "buffers per sample, and with it the chance of dropped samples when many\n"
		       "threads run, so 16 KiB is the default; raise it when the truncated count\n"
		       "says so.",
	},
	{
		.name = "batch", .letter = 'b', .parse = options_set_batch,
		.help = "print tables instead of the interactive screen (implied when\n"
			"stdout is not a terminal)",
		.man = "Print tables instead of the interactive screen. Implied when standard\n"
		       "output is not a terminal.",
	},
	{
		.name = "interval", .letter = 'n', .arg = "SEC", .parse = options_set_interval,
		.help = "seconds between periodic tables in batch mode (default 1;\n"
			"0 prints only the final table), between screen refreshes\n"
			"otherwise (default 1, at least 0.1)",
		.man = "Seconds between the periodic tables of batch mode (default 1; 0 prints\n"
		       "only the final table). On the screen: seconds between refreshes (default\n"
		       "1, at least 0.1; 0 means the default). At most 10000000.",
	},
	{
		.name = "theme", .letter = 't', .arg = "NAME|PATH", .parse = options_set_theme,
		.help = "screen colours: default, light, mono, high-contrast, or a\n"
			"theme file (T cycles themes on the screen)",
		.man = "The screen's colours: \\fBdefault\\fR (for dark terminals),\n"
		       "\\fBlight\\fR, \\fBmono\\fR, \\fBhigh\\-contrast\\fR, another theme found\n"
		       "by name, or a theme file given by path (see\n"
		       ".BR THEMES ).\n"
		       "A theme that cannot be read or has an error is reported, with the file\n"
		       "and line, and the default theme is used.",
	},
	{
		.name = "window", .arg = "SEC", .parse = options_set_window,
		.help = "seconds of the screen's time window (key w; default 10)",
		.man = "Length of the screen's time window, which key \\fBw\\fR switches to (more\n"
		       "than 0, at most 3600; default 10).",
	},
	{
		.name = "names", .arg = "HOW", .parse = options_set_names,
		.help = "C++ and Rust function names: full (default), short (without\n"
			"parameter lists and return types) or bare (also without\n"
			"template arguments); the screen's p key switches",
		.man = "How the screen and batch mode's tables show function names: \\fBfull\\fR\n"
		       "(default), as demangled; \\fBshort\\fR, without the parameter list, the\n"
		       "return type and a member function's qualifiers, as \\fBc++filt \\-p\\fR prints\n"
		       "them (\\fIstd::vector<int, std::allocator<int> >::push_back\\fR for\n"
		       "\\fIvoid std::vector<int, std::allocator<int> >::push_back(int const&)\\fR);\n"
		       "\\fBbare\\fR, also with each list of template or generic arguments written\n"
		       "\\fB<>\\fR (\\fIstd::vector<>::push_back\\fR, Rust's\n"
		       "\\fI<alloc::vec::Vec<> as core::ops::drop::Drop>::drop\\fR). Clone suffixes\n"
		       "(\\fB[clone .cold]\\fR) and \\fB(inlined)\\fR stay; Rust names have no hash\n"
		       "in any form. The screen's \\fBp\\fR key switches between the three. The\n"
		       "filter reads whole names, \\fB\\-\\-annotate\\fR whole or shortened ones,\n"
		       "and the exported snapshots always have whole names.",
	},
	{
		.name = "history", .arg = "SEC", .parse = options_set_history,
		.help = "seconds of the screen's timeline kept a second each (default 600;\n"
			"older ones merge coarser; 0: no timeline, no window)",
		.man = "The screen keeps where the samples of every second of the run went, for\n"
		       "its timeline: the last \\fISEC\\fR seconds (default 600, at most\n"
		       OPTIONS_MAX_HISTORY_TEXT ") a second each, older ones merged into coarser\n"
		       "stretches (at most 64 of them), so its memory does not grow with the\n"
		       "run and no sample leaves it. 0 keeps none: no timeline and no time\n"
		       "window.",
	},
	{
		.name = "collectors", .arg = "N", .parse = options_set_collectors,
		.help = "unwind samples on N threads (default 1; with -a one per 16 CPUs,\n"
			"at most 8; the allocation modes use one)",
		.man = "Unwind and name the samples on \\fIN\\fR threads (1 to "
		       OPTIONS_MAX_COLLECTORS_TEXT "). Each follows\n"
		       "every process's mappings itself and takes every \\fIN\\fRth sample, so\n"
		       "one busy process is spread over all of them. Each also reads the ELF\n"
		       "and DWARF files it needs itself: memory for them grows \\fIN\\fR times\n"
		       "(the DWARF's part of \\fB\\-\\-max\\-memory\\fR is split between them),\n"
		       "and the first sight of a program is no faster. The default is one; with\n"
		       "\\fB\\-a\\fR, one per 16 CPUs proftop may run on, at most 8 (see\n"
		       "doc/scaling.md). The allocation modes use one, whatever is asked.",
	},
	{
		.name = "serve", .arg = "[ADDR:]PORT", .parse = options_set_serve,
		.help = "serve profiles over HTTP as Go's net/http/pprof does (on\n"
			"127.0.0.1 unless ADDR): go tool pprof http://HOST:PORT/debug/pprof/profile",
		.man = "Serve the profile over HTTP beside the screen or batch mode (or alone:\n"
		       "\\fB\\-b \\-n 0 \\-\\-serve\\fR), on port \\fIPORT\\fR of 127.0.0.1, or\n"
		       "of \\fIADDR\\fR when one is given (a numeric address: \\fB0.0.0.0:6060\\fR\n"
		       "for every interface, \\fB[::1]:6060\\fR); port 0 takes a free port.\n"
		       "proftop says where it listens, and the header says so while it does;\n"
		       "an address other machines reach is named as such. The pages are\n"
		       "those of Go's net/http/pprof that a profiler scrapes (see\n"
		       ".BR SERVING ),\n"
		       "so \\fBgo tool pprof http://127.0.0.1:6060/debug/pprof/profile\\fR and\n"
		       "a Parca scrape job read proftop as they read a Go program.",
	},
	{
		.name = "otlp-endpoint", .arg = "URL", .parse = options_set_otlp_endpoint,
		.help = "push the profile of every interval to an OpenTelemetry collector:\n"
			"POST URL/v1development/profiles (OTLP/HTTP, protobuf, gzip)",
		.man = "Push the profile to an OpenTelemetry collector (OTLP's profiles signal,\n"
		       "v1development), as an OTLP/HTTP exporter does: every\n"
		       "\\fB\\-\\-otlp\\-interval\\fR seconds the profile of that stretch of the run\n"
		       "(an in-use profile: what is in use then) goes to\n"
		       "\\fIURL\\fB/v1development/profiles\\fR (http:// or https://) in a POST of\n"
		       "application/x-protobuf, gzipped (uncompressed to a receiver that answers\n"
		       "415), from a thread of its own, so sampling and the screen never wait.\n"
		       "At most 16 profiles wait; the oldest is dropped past that. An answer of\n"
		       "429, 502, 503 or 504, or none, is retried up to 5 times, after a backoff\n"
		       "that doubles from a second, or after the time its Retry-After asks (up to\n"
		       "a minute); another error drops the profile. When profiling ends the last\n"
		       "stretch is pushed and what waits is sent for at most 5 seconds (a\n"
		       "receiver that cannot be reached is not waited for). The counters line and\n"
		       "batch mode's header say \\fBotlp sent\\fR, \\fBretried\\fR and\n"
		       "\\fBdropped\\fR. \\fB\\-f otlp\\fR writes the same request to a file.",
	},
	{
		.name = "otlp-interval", .arg = "SEC", .parse = options_set_otlp_interval,
		.help = "seconds between OTLP pushes (default 10)",
		.man = "Seconds between two pushes of \\fB\\-\\-otlp\\-endpoint\\fR (whole seconds,\n"
		       "1 to 86400; default 10).",
	},
	{
		.name = "service", .arg = "NAME", .parse = options_set_service,
		.help = "service.name of OTLP profiles (default: the command's name)",
		.man = "The \\fBservice.name\\fR resource attribute of the OTLP profiles pushed\n"
		       "or written (\\fB\\-f otlp\\fR); by default the name of the command's\n"
		       "process (its first process's, with \\fB\\-p\\fR).",
	},
	{
		.name = "max-memory", .arg = "SIZE", .parse = options_set_max_memory,
		.help = "memory for the call trees and the DWARF read for lines (default\n"
			"32M; K, M, G; 0: no limit): past it the coldest call paths fold\n"
			"into [other] and DWARF unread for 8 s is closed",
		.man = "Memory for what proftop keeps that grows with the run (default 32M; a\n"
		       "size in bytes, or with K, M or G; 0 for no limit). The call trees and\n"
		       "their snapshots take three quarters of it. Past that the coldest call\n"
		       "paths fold: their samples go to an \\fB[other]\\fR node under their\n"
		       "caller, so totals stay exact, the function table is not affected, and\n"
		       "the header says how many nodes folded. The DWARF read for source lines\n"
		       "and inlined frames (a file's debug sections, inflated when compressed,\n"
		       "its line tables and indexes) takes the last quarter, split between the\n"
		       "\\fB\\-\\-collectors\\fR. Past it, the DWARF of a file that no new address\n"
		       "needed for 8 seconds is closed (16, 32, then 64 once closed before),\n"
		       "what it answered is kept, and it is read again for the next address no\n"
		       "answer holds. A batch header ends with what each part holds:\n"
		       "\\fB(call trees 20.1M of 24.0M, DWARF 1.2M of 8.0M, closed 3 times)\\fR.\n"
		       "proftop's own memory is this plus its symbol tables, its 8 MiB ring\n"
		       "(and while the collector is behind, up to 64 MiB of records waiting for\n"
		       "room in it) and its libraries' code.",
	},
	{
		.name = "max-rows", .arg = "N", .parse = options_set_max_rows,
		.help = "rows per table (default 25 periodic, all in the final one)",
		.man = "Rows per table. By default a periodic table shows the 25 hottest\n"
		       "functions and the final table shows all of them.",
	},
	{
		.name = "tree", .parse = options_set_tree,
		.help = "batch mode prints the call tree (top-down) instead",
		.man = "In batch mode, print the call tree (top-down: each function under its\n"
		       "caller, hottest first, with TOTAL%, SELF% and SAMPLES, as on the screen)\n"
		       "instead of the function table.",
	},
	{
		.name = "min-percent", .arg = "PCT", .parse = options_set_min_percent,
		.help = "--tree leaves out nodes under PCT% of samples (default 0.5)",
		.man = "With \\fB\\-\\-tree\\fR, leave out nodes with less than \\fIPCT\\fR% of\n"
		       "all samples (default 0.5).",
	},
	{
		.name = "annotate", .arg = "FUNC", .parse = options_set_annotate,
		.help = "batch mode also prints FUNC's samples per source line",
		.man = "In batch mode, also print where inside the function \\fIFUNC\\fR the\n"
		       "samples were, after each table: one row per source line with samples\n"
		       "(SELF% and TOTAL% of the function's own samples, SAMPLES, file:line and\n"
		       "the line's text when the source file is on this machine; not when it is\n"
		       "newer than the binary or shorter than its lines, which the file's\n"
		       "heading or the row then says, as for a file that cannot be read; a\n"
		       "file is read only as the user of a process the function ran in could,\n"
		       "so root's \\fB\\-a\\fR or \\fB\\-p\\fR shows no text another user's program points at and\n"
		       "that user may not read). A call's cost\n"
		       "is on the line of the call, and code inlined into \\fIFUNC\\fR on the\n"
		       "line that called the inlined function. \\fIFUNC\\fR is a name as the\n"
		       "table shows it (an inlined one without \\(lq(inlined)\\(rq too).\n"
		       "Lines come from the DWARF of the file or of its debug file; a warning\n"
		       "names the file when that DWARF is corrupt (its lines are then unknown)\n"
		       "or when the debug file found is another build's (its build-id or\n"
		       "CRC-32 differs: it is not used).",
	},
	{
		.name = "asm", .parse = options_set_asm,
		.help = "--annotate also shows each line's instructions and their samples",
		.man = "With \\fB\\-\\-annotate\\fR, also print under each source line the\n"
		       "function's instructions on that line (disassembled with capstone from the\n"
		       "file on disk), each with the samples taken at it; the function's lines\n"
		       "without samples are then listed too. Bytes capstone cannot decode (data,\n"
		       "an instruction newer than it) are listed as \\fB.byte\\fR lines. An inlined\n"
		       "function's instructions are those of its copies in the functions its\n"
		       "samples were in, each on the line of the inlined function it is on. Nothing\n"
		       "is shown for a file that changed since it was profiled.",
	},
	{
		.name = "histogram", .parse = options_set_histogram,
		.help = "batch mode also prints each module's sampled addresses and counts",
		.man = "In batch mode, also print after each table, per module, the sampled\n"
		       "instruction addresses with their sample counts, as Inferno's prof(3)\n"
		       "histogram file has them: a line naming the module, then one\n"
		       "\\(lqaddress count\\(rq line per address (hexadecimal link-time address,\n"
		       "decimal count), in increasing address order, addresses without samples\n"
		       "left out.",
	},
	{
		.name = "python", .arg = "HOW", .parse = options_set_python,
		.help = "CPython's functions in the stacks: mixed (default: among the native\n"
			"frames), only (Python frames and the C extensions they call), off",
		.man = "What the stacks of a CPython process (3.8 to 3.13) show of its Python\n"
		       "functions, read from its memory as it runs. \\fBmixed\\fR (the default):\n"
		       "each call of the interpreter's evaluation function has the Python\n"
		       "functions it runs inside it, named by their qualified names, with their\n"
		       "\\fI.py\\fR file as the module and their lines as sites (the Lines view,\n"
		       "\\fB\\-\\-annotate\\fR, the exports). \\fBonly\\fR: the Python functions and\n"
		       "the native code they call outside the interpreter (C extensions), as\n"
		       "\\fBpy\\-spy\\fR shows them. \\fBoff\\fR: native frames only, and no process\n"
		       "memory is read. The frames are read some milliseconds after each\n"
		       "sample (README, Python): shares are exact over time, a single stack may\n"
		       "show where the thread went next.",
	},
	{
		.name = "perl", .arg = "HOW", .parse = options_set_perl,
		.help = "Perl's subs in the stacks: mixed (default: among the native frames),\n"
			"only (the subs and the native code they call outside perl), off",
		.man = "What the stacks of a perl process (Debian's 5.36) show of its subs,\n"
		       "read from its memory as it runs. \\fBmixed\\fR (the default): each call\n"
		       "of the run loop (\\fBPerl_runops_standard\\fR) has the subs it runs\n"
		       "inside it, named as Devel::DProf names them (the package as the module,\n"
		       "the sub's name; \\fB__ANON__[\\fIfile\\fB:\\fIline\\fB]\\fR for an\n"
		       "anonymous sub, \\fBRUNTIME\\fR of \\fBmain\\fR for the main program), an XS\n"
		       "sub by the name Perl calls it, and the statements as sites.\n"
		       "\\fBonly\\fR: the subs and the native code they call outside perl.\n"
		       "\\fBoff\\fR: native frames only. Only the main interpreter is read: the\n"
		       "threads of \\fBuse threads\\fR stay native.",
	},
	{
		.name = "no-inline", .parse = options_set_no_inline,
		.help = "inlined functions are not frames of their own: their samples\n"
			"count in the function they were inlined into",
		.man = "Do not show functions the compiler inlined as frames of their own. By\n"
		       "default a sample in inlined code has the inlined function (marked\n"
		       "\\(lq(inlined)\\(rq, read from the DWARF as \\fBperf report \\-\\-inline\\fR\n"
		       "does) as its innermost frame, under the function it was inlined into.",
	},
	{
		.name = "no-lines", .parse = options_set_no_lines,
		.help = "read no source lines and no inlined frames: less memory and collector\n"
			"time; the Lines view and the exports' line positions then have none",
		.man = "Do not look up source lines and inlined functions in the DWARF (as\n"
		       "\\fBpy\\-spy \\-\\-nolineno\\fR): proftop keeps no per-address counts, which\n"
		       "saves the collector the lookups (most on the first sight of each\n"
		       "address) and the memory of the counts and the line caches. Functions\n"
		       "are still named from the symbol tables. The Lines view, the callgrind\n"
		       "export's line positions and the pprof export's lines are then empty;\n"
		       "\\fB\\-\\-annotate\\fR and \\fB\\-\\-histogram\\fR cannot be used with it.",
	},
	{
		.name = "kernel", .parse = options_set_kernel,
		.help = "sample kernel mode too, with the kernel's part of the stacks\n"
			"(needs perf_event_paranoid <= 1)",
		.man = "Sample kernel mode as well as user mode: a stack then starts with the\n"
		       "kernel's part (its own callchain, above the user part \\fB\\-g dwarf\\fR\n"
		       "unwinds), named from\n"
		       ".I /proc/kallsyms\n"
		       "as \\fB[kernel.kallsyms]\\fR or \\fB[\\fR\\fImodule\\fR\\fB]\\fR, which shows\n"
		       "addresses to root only (and not at kernel.kptr_restrict 2): otherwise kernel\n"
		       "frames stay addresses, and proftop says why. Off the CPU, the kernel's\n"
		       "frames say what blocked (\\fBpipe_read\\fR, \\fBfutex_wait\\fR,\n"
		       "\\fBdo_nanosleep\\fR). Needs\n"
		       ".I /proc/sys/kernel/perf_event_paranoid\n"
		       "at 1 or lower (or CAP_PERFMON).",
	},
	{
		.name = "output", .letter = 'o', .arg = "FILE", .parse = options_set_output,
		.help = "write a snapshot to FILE when profiling ends (- for stdout,\n"
			"tables then go to stderr; never onto the screen's terminal,\n"
			"nor pprof or otlp onto any); SIGUSR1 writes one at any time",
		.man = "Write a snapshot of the profile to \\fIFILE\\fR when profiling ends: when\n"
		       "the command exits, at the \\fB\\-d\\fR duration, on \\fBq\\fR, or on\n"
		       ".BR SIGINT ,\n"
		       ".BR SIGTERM ,\n"
		       ".B SIGQUIT\n"
		       "or\n"
		       ".BR SIGHUP ,\n"
		       "or when batch mode's tables can no longer be written.\n"
		       "\\fB\\-o \\-\\fR writes it to standard output, and batch mode's tables\n"
		       "then go to standard error; it is refused when standard output is the\n"
		       "terminal the screen draws on, and for \\fBpprof\\fR and \\fBotlp\\fR (binary) when it is\n"
		       "any terminal. Before profiling starts, proftop checks that \\fIFILE\\fR's\n"
		       "directory takes a new file, so a wrong path costs no profile.\n"
		       ".B SIGUSR1\n"
		       "replaces \\fIFILE\\fR with a snapshot of the profile so far, and\n"
		       "profiling goes on.",
	},
	{
		.name = "format", .letter = 'f', .arg = "FORMAT", .parse = options_set_format,
		.help = "tmon (Devel::DProf's tmon.out, the default), callgrind,\n"
			"folded, pprof, otlp (OpenTelemetry), lcov (coverage) or\n"
			"speedscope (JSON, in time order); without -f, from the file name",
		.man = "The snapshot format: \\fBtmon\\fR, \\fBcallgrind\\fR, \\fBfolded\\fR,\n"
		       "\\fBpprof\\fR, \\fBotlp\\fR (OpenTelemetry's profiles signal: an\n"
		       "ExportProfilesServiceRequest of the v1development schema, as\n"
		       "\\fB\\-\\-otlp\\-endpoint\\fR sends it, unframed protobuf), \\fBlcov\\fR (a\n"
		       "coverage run's tracefile, for \\fBgenhtml\\fR(1))\n"
		       "or \\fBspeedscope\\fR (speedscope's JSON: a profile per thread, or per\n"
		       "process with \\fB\\-a\\fR, its samples in the order of the run's timeline,\n"
		       "a second each for the last \\fB\\-\\-history\\fR seconds, coarser before;\n"
		       "saves with \\fBs\\fR or SIGUSR1 too; a profile read with \\fB\\-i\\fR and an\n"
		       "in-use one are one stretch, hottest stack first).\n"
		       "Without \\fB\\-f\\fR the file name decides:\n"
		       "\\fBcallgrind.out\\fR* and *\\fB.callgrind\\fR are callgrind,\n"
		       "*\\fB.folded\\fR and *\\fB.collapsed\\fR folded, *\\fB.pb.gz\\fR,\n"
		       "*\\fB.pb\\fR and *\\fB.pprof\\fR pprof, *\\fB.otlp\\fR and *\\fB.otlp.pb\\fR otlp,\n"
		       "*\\fB.info\\fR lcov, *\\fB.speedscope.json\\fR speedscope (a trailing\n"
		       "\\fB.\\fR\\fIN\\fR is ignored), anything else \\fItmon.out\\fR.",
	},
	{
		.name = "per-thread", .parse = options_set_per_thread,
		.help = "one snapshot file per thread, FILE.TID",
		.man = "Write one snapshot file per thread with samples,\n"
		       "\\fIFILE\\fB.\\fITID\\fR, instead of one for all threads (as people name\n"
		       "the tmon.out of each process).",
	},
	{
		.name = "input", .letter = 'i', .arg = "FILE", .parse = options_set_input,
		.help = "show a saved tmon.out (screen, or the table with -b);\n"
			"with -o, convert it to that file",
		.man = "Profile nothing: read a saved \\fItmon.out\\fR (proftop's own or one\n"
		       "Devel::DProf wrote) and show it on the screen, or as batch mode's final\n"
		       "table (with \\fB\\-b\\fR, or when standard output is not a terminal).\n"
		       "With \\fB\\-o\\fR, convert it to that file instead (\\fB\\-f\\fR picks\n"
		       "the format). A file proftop wrote reads back to the profile that was\n"
		       "saved: ticks are samples, and the header's times and the sampling\n"
		       "counters come along.",
	},
	{
		.name = "baseline", .arg = "FILE", .parse = options_set_baseline,
		.help = "compare with a saved tmon.out (proftop's or Devel::DProf's):\n"
			"Top and Tree gain change columns, Flame colours growth;\n"
			"a folded -o file then has both counts per stack",
		.man = "Compare the profile with a saved \\fItmon.out\\fR (proftop's own or\n"
		       "one Devel::DProf wrote; read as \\fB\\-i\\fR reads one, and a file that\n"
		       "cannot be read or is not a tmon.out is the error, before profiling\n"
		       "starts). Functions are matched by name and module, and shares compare,\n"
		       "not counts, so runs of different lengths compare: Top gains\n"
		       "\\(*DSELF and \\(*DTOTAL (this profile's share minus the baseline's, in\n"
		       "points; sortable), with rows for the functions only the baseline has,\n"
		       "marked \\(lq(gone)\\(rq, and \\(lq(new)\\(rq on those only this profile\n"
		       "has; Tree gains the same per call path; Flame colours the frames\n"
		       "that grew or shrank by half a point or more (see\n"
		       ".BR DIFFERENCES ).\n"
		       "Batch mode's tables gain the same columns. A snapshot written in the\n"
		       "folded format (\\fB\\-o\\fR, \\fBs\\fR, SIGUSR1) then has two counts\n"
		       "per stack, \\(lqa;b;c OLD NEW\\(rq, the input of flamegraph.pl's\n"
		       "differential flame graphs; the other formats hold the profile alone.",
	},
	{
		.name = "help", .letter = 'h', .parse = options_set_help, .cli_only = true,
		.help = "show this help",
		.man = "Show a summary of the options and exit.",
	},
	{
		.name = "version", .letter = 'V', .parse = options_set_version, .cli_only = true,
		.help = "show the version",
		.man = "Show the version and exit.",
	},
};

enum {
	NOPTIONS = sizeof(options_table) / sizeof(options_table[0]),
	/* getopt_long returns an option's letter, or this plus its index when it has none. */
	LONG_ONLY_BASE = 256,
	/* The column --help's descriptions start at. */
	HELP_COLUMN = 25,
};

const struct option_spec *options_spec_named(const char *name)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		if (!strcmp(options_table[i].name, name))
			return &options_table[i];
	return NULL;
}

/* The option getopt_long returned as VAL (or left in optopt), or NULL; 0 is none. */
static const struct option_spec *option_of_val(int val)
{
	if (val >= LONG_ONLY_BASE + NOPTIONS)
		return NULL;
	if (val >= LONG_ONLY_BASE)
		return &options_table[val - LONG_ONLY_BASE];
	for (size_t i = 0; val && i < NOPTIONS; i++)
		if (options_table[i].letter == val)
			return &options_table[i];
	return NULL;
}

const char *options_name(size_t i)
{
	return i < NOPTIONS ? options_table[i].name : NULL;
}

/* --- the command line ------------------------------------------------------------------------- */

/* getopt_long's arguments, made from the table. The short options start with '+' (stop at the
 * first non-option, so the command's own options stay its own) and ':' (report a missing value
 * as ':', apart from an unknown option's '?'). */
struct getopt_args {
	struct option longopts[NOPTIONS + 1];
	char shortopts[2 + 2 * NOPTIONS + 1];
};

static void getopt_args_init(struct getopt_args *g)
{
	char *p = g->shortopts;

	*p++ = '+';
	*p++ = ':';
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct option_spec *s = &options_table[i];
		int has_arg = s->arg ? required_argument : no_argument;
		int val = s->letter ? s->letter : LONG_ONLY_BASE + (int)i;

		g->longopts[i] = (struct option){ s->name, has_arg, NULL, val };
		if (s->letter) {
			*p++ = s->letter;
			if (s->arg)
				*p++ = ':';
		}
	}
	*p = '\0';
	g->longopts[NOPTIONS] = (struct option){ NULL, 0, NULL, 0 };
}

/* What getopt_long's ':' or '?' meant. A missing value is always the last argument's, so
 * argv[optind - 1] says whether it was given long or short; a known option behind '?' is a flag
 * given a value (--batch=1); an unknown long or ambiguous abbreviation leaves optopt 0. */
static char *getopt_error(int opt, char **argv)
{
	const char *arg = argv[optind - 1];
	const struct option_spec *s = option_of_val(optopt);

	if (opt == ':' && s && !strncmp(arg, "--", 2))
		return xasprintf("option '--%s' needs a value", s->name);
	if (opt == ':')
		return xasprintf("option '-%c' needs a value", optopt);
	if (s)
		return xasprintf("option '--%s' takes no value", s->name);
	if (optopt)
		return xasprintf("unknown option '-%c'", optopt);
	return xasprintf("unknown or incomplete option '%s'", arg);
}

char *options_parse_command_line(struct options *o, int argc, char **argv)
{
	struct getopt_args g;
	int opt;

	getopt_args_init(&g);
	optind = 0; /* reset getopt, also for repeated calls in tests */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		const struct option_spec *s = option_of_val(opt);
		char *message = s ? s->parse(o, optarg) : getopt_error(opt, argv);

		if (message)
			return message;
	}
	if (optind < argc)
		o->argv = argv + optind;
	return NULL;
}

/* --- --help and the man page ------------------------------------------------------------------ */

static void write_help_entry(FILE *out, const char *indent, const struct option_spec *s)
{
	char left[64];
	const char *line = s->help, *end;
	int n;

	if (s->letter)
		n = snprintf(left, sizeof(left), "  -%c, --%s", s->letter, s->name);
	else
		n = snprintf(left, sizeof(left), "      --%s", s->name);
	if (s->arg)
		snprintf(left + n, sizeof(left) - (size_t)n, " %s", s->arg);
	/* A label too long for its column gets a line of its own. */
	if ((int)strlen(left) > HELP_COLUMN - 1)
		fprintf(out, "%s%s\n%s%*s", indent, left, indent, HELP_COLUMN, "");
	else
		fprintf(out, "%s%-*s ", indent, HELP_COLUMN - 1, left);
	while ((end = strchr(line, '\n'))) {
		fprintf(out, "%.*s\n%s%*s", (int)(end - line), line, indent, HELP_COLUMN, "");
		line = end + 1;
	}
	fprintf(out, "%s\n", line);
}

static void write_help_list(FILE *out, const char *indent)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		write_help_entry(out, indent, &options_table[i]);
}

void options_write_markdown(FILE *out)
{
	write_help_list(out, "    ");
}

void options_write_help(FILE *out)
{
	fputs("Usage: proftop [options] [--] command [arg...]\n"
	      "       proftop [options] -p PID[,PID...]\n"
	      "       proftop [options] -a\n"
	      "\n"
	      "A live sampling profiler: shows where a program's CPU time goes while it runs.\n"
	      "\n", out);
	write_help_list(out, "");
	fputs("\n"
	      "Options can also come from $PROFTOP, by long name: PROFTOP=freq=499:batch\n"
	      "(a \\ makes the next character literal); the command line overrides them.\n"
	      "\n"
	      "Launch mode exits with the command's status (128+N if signal N killed it).\n"
	      "Snapshots without -o (SIGUSR1, the screen's s key) go to tmon.out, then tmon.out.1,\n"
	      "... never replacing a file; $PROFTOP_OUT_FILE names the first one.\n"
	      "With $DEBUGINFOD_URLS set, the debug files of stripped programs and libraries are\n"
	      "fetched from those debuginfod servers in the background (libdebuginfod).\n"
	      "\n"
	      "       proftop report [-O N] [-T | -t] [-I] [-l] [-u | -s | -r] [-F] [FILE]\n"
	      "       proftop report --diff [-O N] [-F] OLD NEW\n"
	      "\n"
	      "prints what dprofpp prints for a tmon.out (default ./tmon.out): the top N (15)\n"
	      "subroutines by exclusive time (-I: inclusive, -l: by calls), or the call tree (-T; -t folds\n"
	      "repeats), in user+system time (-u user, -s system, -r real); -F closes subs a\n"
	      "truncated file left open. With --diff, per function its SELF% and TOTAL% in NEW\n"
	      "and the points they moved since OLD, the largest change first.\n", out);
}

/* In an option's name a '-' is a minus sign, which roff writes \-, not a hyphen. */
static void write_roff_char(FILE *out, char c)
{
	if (c == '-')
		fputs("\\-", out);
	else
		fputc(c, out);
}

static void write_roff_name(FILE *out, const char *s)
{
	while (*s)
		write_roff_char(out, *s++);
}

/* A value's name for roff: its words in italics, "PID[,PID...]" as \fIPID\fR[,\fIPID\fR...]. */
static void write_roff_arg(FILE *out, const char *s)
{
	while (*s) {
		const char *end = s;

		while (isalnum((unsigned char)*end))
			end++;
		if (end > s)
			fprintf(out, "\\fI%.*s\\fR", (int)(end - s), s);
		else
			write_roff_char(out, *end++);
		s = end;
	}
}

/* .TP, then ".BR \-F ", " \-\-freq " \fIHZ\fR"" (or .B for a lone flag) and the paragraph. */
static void write_man_entry(FILE *out, const struct option_spec *s)
{
	fputs(s->letter || s->arg ? ".TP\n.BR " : ".TP\n.B ", out);
	if (s->letter)
		fprintf(out, "\\-%c \", \" ", s->letter);
	fputs("\\-\\-", out);
	write_roff_name(out, s->name);
	if (s->arg) {
		fputs(" \" ", out);
		write_roff_arg(out, s->arg);
		fputs("\"", out);
	}
	fprintf(out, "\n%s\n", s->man);
}

void options_write_man(FILE *out)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		write_man_entry(out, &options_table[i]);
}
