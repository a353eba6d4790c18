/* main.c — parse the options, open the session, pick a frontend and run it. */
#include "proftop/ui/batch.h"
#include "proftop/export.h"
#include "proftop/export_otlp.h"
#include "proftop/options.h"
#include "proftop/report.h"
#include "proftop/session.h"
#include "proftop/ui/tui.h"
#include "proftop/util.h"

#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RING_BYTES (8u << 20)

/* The screen owns the terminal, so a launched command's output goes to a file instead, kept
 * (and named on exit) only if the command wrote anything. */
struct command_output {
	int fd;
	char path[64];
};

static void command_output_open(struct command_output *out, bool wanted)
{
	const char *dir = getenv("TMPDIR");

	out->fd = -1;
	if (!wanted)
		return;
	snprintf(out->path, sizeof(out->path), "%s/proftop-output.XXXXXX",
		 dir && *dir && strlen(dir) < 32 ? dir : "/tmp");
	out->fd = mkostemp(out->path, O_CLOEXEC);
}

static void command_output_close(struct command_output *out)
{
	struct stat st;

	if (out->fd < 0)
		return;
	if (fstat(out->fd, &st) == 0 && st.st_size > 0)
		fprintf(stderr, "proftop: the command's output is in %s\n", out->path);
	else
		unlink(out->path);
	close(out->fd);
}

/* The screen when there is a terminal for it; batch mode otherwise, or if it fails to start. The
 * batch tables go to stderr when the -o snapshot goes to stdout. */
static int run(struct session *session, const struct options *o, bool interactive)
{
	const char *output = o->run.export.output;
	int status = interactive ? tui_run(session, &o->tui) : -1;

	if (status < 0)
		status = batch_run(session, &o->batch, output && !strcmp(output, "-") ? stderr : stdout);
	return status;
}

/* Whether the -o file or the saves (-f, $PROFTOP_OUT_FILE) are written in time order. */
static bool time_ordered_output(const struct options *o)
{
	const struct export_options *e = &o->run.export;

	return export_keeps_time_order(e->output ? e->output : e->base ? e->base : "", e->format);
}

/* What the session needs from the options. The screen refreshes every -n seconds (0, "final
 * table only" in batch mode, means the default there) and keeps the run's history, as do
 * --serve and files written in time order (speedscope). */
static struct session_options session_options(const struct options *o, bool interactive,
					      int output_fd)
{
	struct session_options so = {
		.sample = o->sample,
		.argv = o->argv,
		.pids = o->pids,
		.npids = o->npids,
		.children = o->children,
		.input = o->input,
		.baseline = o->baseline,
		.ring_size = RING_BYTES,
		.history = interactive || o->serving || o->otlp.endpoint || time_ordered_output(o)
				   ? o->history
				   : 0,
		.max_memory = o->max_memory,
		.no_inline = o->no_inline,
		.no_lines = o->no_lines,
		.command_output_fd = output_fd,
		.serve = o->serving ? &o->serve : NULL,
		.otlp = o->otlp.endpoint ? &o->otlp : NULL,
		.run = o->run,
	};

	if (interactive && so.run.interval <= 0)
		so.run.interval = 1.0;
	if (interactive && so.run.interval < TUI_MIN_REFRESH)
		so.run.interval = TUI_MIN_REFRESH;
	return so;
}

/* Profile (or show a saved profile) with the options; returns the exit status. */
static int profile(const struct options *o)
{
	bool converting = o->input && o->run.export.output;
	bool interactive = !o->batch_mode && !converting && tui_usable();
	struct session *session = NULL;
	struct command_output output;
	struct session_options so;
	char *message = NULL;
	int status;

	export_otlp_set_service(o->service); /* (-f otlp files name it too) */
	/* Before profiling: a -o that cannot be written would otherwise cost the whole profile. */
	if (export_check(&o->run.export, interactive, &message)) {
		diag_print(stderr, DIAG_ERROR, message); /* the path may hold anything */
		free(message);
		return 1;
	}
	command_output_open(&output, interactive && o->argv);
	so = session_options(o, interactive, output.fd);
	status = session_open(&session, &so, &message);
	if (status) {
		diag_print(stderr, DIAG_ERROR, message); /* it may quote a saved profile's names */
		free(message);
	} else {
		status = converting ? session_run(session, NULL) : run(session, o, interactive);
	}
	session_free(session);
	command_output_close(&output);
	return status;
}

int main(int argc, char **argv)
{
	struct options options;
	char *message = NULL;
	int status = 0;

	/* The call trees' arrays are megabytes that a fold frees: mapped on their own they go back to
	 * the system when freed (glibc's adaptive threshold would move them into the heap, where a
	 * long run fragments them). */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (options_parse(&options, argc, argv, getenv("PROFTOP"), &message) != OPTIONS_OK) {
		fprintf(stderr, "proftop: %s\nTry 'proftop --help' for more information.\n", message);
		free(message);
		options_free(&options);
		return 2;
	}
	if (options.report && !options.help)
		status = report_run(&options.report_options, stdout, stderr);
	else if (options.help)
		options_write_help(stdout);
	else if (options.version)
		fputs("proftop " PROFTOP_VERSION "\n", stdout);
	else
		status = profile(&options);
	options_free(&options);
	return status;
}
