/* libFuzzer target: /proc/PID/status as asuser_parse_status() reads it for a thread's owner, on
 * arbitrary bytes (not NUL-terminated: ASan catches a read past them). A success found both lines
 * it needs, and ids that are ids ((uid_t)-1 is none). */
#include "proftop/asuser.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	struct asuser a;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!asuser_parse_status(copy, size, &a) &&
	    (!memmem(copy, size, "Uid:", 4) || !memmem(copy, size, "Gid:", 4) ||
	     a.uid == (uid_t)-1 || a.gid == (gid_t)-1))
		abort();
	free(copy);
	return 0;
}
