/* main.c — parse the options, pick a frontend, run the session. */
#include "proftop/batch.h"
#include "proftop/options.h"
#include "proftop/session.h"
#include "proftop/util.h"

#include <stdio.h>
#include <stdlib.h>

#define RING_BYTES (8u << 20)

int main(int argc, char **argv)
{
	struct options options;
	struct session_options so;
	struct session *session = NULL;
	char *message = NULL;
	int status;

	if (options_parse(&options, argc, argv, &message) != OPTIONS_OK) {
		fprintf(stderr, "proftop: %s\nTry 'proftop --help' for more information.\n", message);
		free(message);
		options_free(&options);
		return 2;
	}
	if (options.help || options.version) {
		fputs(options.help ? options_help() : "proftop " PROFTOP_VERSION "\n", stdout);
		options_free(&options);
		return 0;
	}
	so = (struct session_options){ options.sample, options.argv, options.pids, options.npids,
				       RING_BYTES };
	status = session_open(&session, &so, &message);
	if (status) {
		fprintf(stderr, "proftop: %s\n", message);
		free(message);
		options_free(&options);
		return status;
	}
	/* The interactive screen is the next frontend; until it exists every run is a batch run. */
	status = batch_run(session, &options.batch);
	session_free(session);
	options_free(&options);
	return status;
}
