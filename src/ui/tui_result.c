/* tui_result.c — results of the sub-views' handlers (tui_result.h). */
#include "proftop/ui/tui_result.h"

#include <stdarg.h>
#include <stdio.h>

struct tui_result tui_result_say(bool error, const char *fmt, ...)
{
	struct tui_result r = { .message = true, .error = error };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r.text, sizeof(r.text), fmt, ap);
	va_end(ap);
	return r;
}
