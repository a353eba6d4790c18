/* libFuzzer target: an HTTP request's method, path and query as --serve receives them from any
 * client. The input is METHOD, a newline, then the request target (path?query); the query is
 * split as libmicrohttpd does and %-decoded by serve_unescape(), the decoder the server gives
 * the library, then checked by serve_parse_request(). Also addresses for --serve, the part
 * after the first newline. */
#include "proftop/serve.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_answer(unsigned status, const struct serve_request *r, const char *err)
{
	if (status == 200) {
		if (r->page == SERVE_PROFILE && (r->seconds < 1 || r->seconds > 600))
			__builtin_trap();
		if (r->format != EXPORT_PPROF && r->format != EXPORT_FOLDED &&
		    r->format != EXPORT_CALLGRIND && r->format != EXPORT_TMON)
			__builtin_trap();
		return;
	}
	if (status != 400 && status != 404 && status != 405)
		__builtin_trap();
	/* The reason goes back to the client: whole, and with no control character. */
	if (!memchr(err, '\0', 256) || !*err)
		__builtin_trap();
	for (const char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			__builtin_trap();
}

/* serve_unescape(), whose result holds no NUL (what it decodes is what the parser sees) and is
 * no longer than its input. */
static void decode(char *text)
{
	size_t before = strlen(text), after = serve_unescape(text);

	if (after != strlen(text) || after > before)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *nl, *query, *save = NULL, err[256];
	struct serve_arg args[SERVE_MAX_ARGS + 2];
	struct serve_request r;
	struct serve_address a;
	size_t n = 0;
	unsigned status;

	memcpy(text, data, size);
	text[size] = '\0';
	nl = strchr(text, '\n');
	if (!nl) {
		free(text);
		return 0;
	}
	*nl = '\0';
	{
		char *message = NULL;
		char *copy = strdup(nl + 1);

		if (serve_parse_address(copy, &a, &message) == 0) {
			char shown[80];

			serve_address_text(&a, shown, sizeof(shown));
			serve_address_local(&a);
		} else if (!message) {
			__builtin_trap();
		}
		free(message);
		free(copy);
	}
	query = strchr(nl + 1, '?');
	if (query)
		*query++ = '\0';
	decode(nl + 1);
	for (char *kv = query ? strtok_r(query, "&", &save) : NULL; kv && n < SERVE_MAX_ARGS + 2;
	     kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');

		if (eq) {
			*eq = '\0';
			decode(eq + 1);
		}
		decode(kv);
		args[n++] = (struct serve_arg){ kv, eq ? eq + 1 : NULL };
	}
	memset(err, 0x55, sizeof(err));
	status = serve_parse_request(text, nl + 1, args, n, 600, &r, err, sizeof(err));
	check_answer(status, &r, err);
	free(text);
	return 0;
}
