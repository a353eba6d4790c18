/* json.h — text from a target as a JSON string (RFC 8259), for the exporters that write JSON.
 *
 * The string holds the text's visible form (util.h: control characters in caret notation, a
 * byte that is not well-formed UTF-8 as \xNN), so a name reads in a JSON viewer as it does on
 * proftop's screen and in its folded files; then '"' and '\' are escaped. So any bytes give a
 * valid JSON string: well-formed UTF-8 with no control character. */
#ifndef PROFTOP_JSON_H
#define PROFTOP_JSON_H

#include <stdio.h>

/* text between double quotes onto out; a write error shows in ferror(out). */
void json_write_string(FILE *out, const char *text);

#endif
