/* libFuzzer target: $PROFTOP's parser on arbitrary bytes, as a user's environment may hold. A
 * parse either succeeds or fails with a message, and every string it leaves in the options points
 * into the strings it was given or its own copy (ASan checks the reads). */
#include "proftop/options.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* strlen() reads every byte of s: ASan reports one that does not end inside its buffer. */
static size_t length(const char *s)
{
	return s ? strlen(s) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *env = malloc(size + 1), *message = NULL;
	char *argv[] = { "proftop", "./prog", NULL };
	struct options o;
	enum options_result r;

	memcpy(env, data, size);
	env[size] = '\0';
	/* Odd sizes go without a command, so pid= and input= name the target. */
	r = options_parse(&o, size % 2 ? 1 : 2, argv, env, &message);
	if ((r == OPTIONS_OK) != !message)
		abort();
	if (r == OPTIONS_OK &&
	    length(o.tui.theme) + length(o.run.export.output) + length(o.input) > size)
		abort();
	free(message);
	options_free(&o);
	free(env);
	return 0;
}
