/* libFuzzer target: a source file's text as annotate reads it (annotate_source_lines(), which
 * annotate_source_line() reads every file through) and shows it, on arbitrary bytes: long lines,
 * NULs, CR, invalid UTF-8, escape sequences. The lines must be the bytes between the newlines
 * (NULs as spaces), none holding a NUL or a newline, and rejoined give the file back. Each is
 * shown as the frontends show it: tabs expanded (util_expand_tabs()), then in visible form as
 * batch prints it (util_print_safe()) and as the screen draws it (util_visible() into a row's
 * buffer): what comes out is well-formed UTF-8 with no control character, C0 or C1. Then the same
 * bytes are read as a file (a memfd) through annotate_source_line(), which must give the same
 * lines, and no line past the last.
 *
 * Seeds in corpus/fuzz_annotate: a C source file of this repository, and files with tabs, CRLF,
 * NULs, invalid UTF-8, ESC and C1 sequences, a line of 6000 bytes, no newline at the end. */
#include "proftop/annotate.h"
#include "proftop/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A row of the screen holds this much (tui_draw.c's PUT_MAX). */
#define ROW_BYTES 4096

/* Well-formed UTF-8 (no overlong form, no surrogate, at most U+10FFFF), no C0, DEL or C1. */
static void check_shown(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned c = p[i], n, cp;

		if (c < 0x20 || c == 0x7f)
			abort();
		if (c < 0x80) {
			i++;
			continue;
		}
		n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
		if (!n || c > 0xf4 || i + n > len)
			abort();
		cp = c & (0x7f >> n);
		for (unsigned k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				abort();
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
			abort();
		i += n;
	}
}

static void show(const char *line)
{
	char *expanded = util_expand_tabs(line), row[ROW_BYTES], *out = NULL;
	size_t len = 0, tabs = 0;
	FILE *f = open_memstream(&out, &len);

	for (const char *p = line; *p; p++)
		tabs += *p == '\t';
	if (strchr(expanded, '\t') || strlen(expanded) > strlen(line) + 7 * tabs ||
	    strlen(expanded) < strlen(line))
		abort();
	util_print_safe(f, expanded);
	fclose(f);
	check_shown((const unsigned char *)out, len);
	len = util_visible(row, sizeof(row), expanded);
	if (len >= sizeof(row) || len != strlen(row))
		abort();
	check_shown((const unsigned char *)row, len);
	free(out);
	free(expanded);
}

/* The same bytes read as a file give the same lines. */
static void check_file(const uint8_t *data, size_t size, const char *text, const size_t *starts,
		       size_t n)
{
	int fd = memfd_create("fuzz_annotate", MFD_CLOEXEC);
	struct annotate_sources *sources = annotate_sources_new();
	char path[64];
	const char *why;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < n; i++) {
		const char *line = annotate_source_line(sources, path, (unsigned)i + 1, NULL, NULL, &why);

		if (!line || strcmp(line, text + starts[i]))
			abort();
	}
	if (annotate_source_line(sources, path, (unsigned)n + 1, NULL, NULL, &why) || !why ||
	    annotate_source_line(sources, path, 0, NULL, NULL, &why) || !why)
		abort();
	annotate_sources_free(sources);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	size_t *starts, n, at = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	n = annotate_source_lines(text, size, &starts);
	/* Rejoined with newlines, the lines are the file with its NULs as spaces. */
	for (size_t i = 0; i < n; i++) {
		const char *line = text + starts[i];
		size_t len = strlen(line);

		if (starts[i] != at || memchr(line, '\n', len))
			abort();
		for (size_t k = 0; k < len; k++)
			if (line[k] != (data[at + k] ? (char)data[at + k] : ' '))
				abort();
		at += len;
		if (at < size && data[at++] != '\n')
			abort();
		show(line);
	}
	if (at != size)
		abort();
	check_file(data, size, text, starts, n);
	free(starts);
	free(text);
	return 0;
}
