/* main.c — parse the options, pick a frontend, run the session. */
#include "proftop/batch.h"
#include "proftop/export.h"
#include "proftop/options.h"
#include "proftop/report.h"
#include "proftop/session.h"
#include "proftop/tui.h"
#include "proftop/util.h"

#include <fcntl.h>
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

/* The screen's refresh is -n (0, "final table only" in batch mode, means the default there). */
static int run_screen(struct session *session, const struct options *options)
{
	struct tui_options o = options->tui;

	o.refresh = options->batch.interval > 0 ? options->batch.interval : 1.0;
	o.duration = options->batch.duration;
	o.export = &options->export;
	return tui_run(session, &o);
}

/* The -o snapshot. Returns 0, or 1 after saying why it could not be written. */
static int write_snapshot(const struct snapshot *s, const struct export_options *e)
{
	char *message;

	if (!export_write(s, e->output, e->format, e->per_thread, &message))
		return 0;
	fprintf(stderr, "proftop: %s\n", message);
	free(message);
	return 1;
}

/* -i: a saved tmon.out converted with -o, else shown on the screen or as the final table. */
static int show_file(const struct options *options, bool interactive)
{
	struct report_options ro = { .path = options->input };
	struct snapshot *s;
	struct report *r;
	char *message;
	int status = 0;

	if (report_read(&ro, NULL, &r, &message)) {
		fprintf(stderr, "proftop: %s\n", message);
		free(message);
		return 1;
	}
	s = report_snapshot(r);
	report_free(r);
	if (options->export.output)
		status = write_snapshot(s, &options->export);
	else if (!interactive || tui_browse(s, options->input, &options->tui) < 0)
		batch_print_table(stdout, s, "=== proftop final", &options->batch,
				  options->batch.max_rows);
	snapshot_unref(s);
	return status;
}

int main(int argc, char **argv)
{
	struct options options;
	struct session_options so;
	struct session *session = NULL;
	struct command_output output;
	char *message = NULL;
	int status;
	bool interactive;

	if (options_parse(&options, argc, argv, &message) != OPTIONS_OK) {
		fprintf(stderr, "proftop: %s\nTry 'proftop --help' for more information.\n", message);
		free(message);
		options_free(&options);
		return 2;
	}
	if (options.report && !options.help) {
		status = report_run(&options.report_options, stdout, stderr);
		options_free(&options);
		return status;
	}
	if (options.help || options.version) {
		fputs(options.help ? options_help() : "proftop " PROFTOP_VERSION "\n", stdout);
		options_free(&options);
		return 0;
	}
	interactive = !options.batch_mode && tui_usable();
	options.batch.export = &options.export;
	if (options.input) {
		status = show_file(&options, interactive);
		options_free(&options);
		return status;
	}
	command_output_open(&output, interactive && options.argv);
	so = (struct session_options){ options.sample, options.argv, options.pids, options.npids,
				       RING_BYTES,
				       interactive ? (uint64_t)llround(options.tui.window * 1e9) : 0,
				       output.fd };
	status = session_open(&session, &so, &message);
	if (status) {
		fprintf(stderr, "proftop: %s\n", message);
		free(message);
		command_output_close(&output);
		options_free(&options);
		return status;
	}
	/* The screen when there is a terminal for it; batch mode otherwise, or if it fails to start. */
	status = interactive ? run_screen(session, &options) : -1;
	if (status < 0)
		status = batch_run(session, &options.batch);
	if (options.export.output) {
		struct snapshot *s = session_snapshot(session);

		if (write_snapshot(s, &options.export))
			status = 1;
		snapshot_unref(s);
	}
	session_free(session);
	command_output_close(&output);
	options_free(&options);
	return status;
}
