/* libFuzzer target: the /proc/PID/status reader the perf map's owner check uses
 * (perfmap_status_line(), which perfmap_refresh() feeds the file's lines) on arbitrary bytes cut
 * into lines as getline() cuts them. After each line the owner must be what the lines so far say,
 * as this file reads them on its own: the uids those of the last "Uid:" line whose first two
 * fields are decimal numbers below (uid_t)-1, the namespace pid the last field of the last
 * "NSpid:" line made of decimal numbers only when that one is a pid (1..INT32_MAX). A number with
 * a sign, an overflow, or a line cut short must leave the owner as it was.
 *
 * Seeds in corpus/fuzz_status: this machine's /proc/self/status, and one of a process in a pid
 * namespace of its own (NSpid with two pids). */
#include "proftop/perfmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Decimal digits after blanks at *p, at most max: the value, and *p past them. */
static bool number(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v) ||
		    v > max)
			return false;
	*p = s;
	*out = v;
	return true;
}

/* What the line says, by this file's reading, into *want. */
static void expect(const char *line, struct perfmap_owner *want)
{
	uint64_t a, b, pid = 0;
	const char *p;
	bool any = false;

	if (!strncmp(line, "Uid:", 4)) {
		p = line + 4;
		if (number(&p, UINT32_MAX - 1, &a) && (*p == ' ' || *p == '\t') &&
		    number(&p, UINT32_MAX - 1, &b) && (!*p || strchr(" \t\n", *p))) {
			want->uid[0] = (uid_t)a;
			want->uid[1] = (uid_t)b;
			want->has_uid = true;
		}
	} else if (!strncmp(line, "NSpid:", 6)) {
		p = line + 6;
		while (number(&p, UINT64_MAX, &pid) && (!*p || strchr(" \t\n", *p)))
			any = true;
		while (*p == ' ' || *p == '\t')
			p++;
		if (any && (!*p || *p == '\n') && pid >= 1 && pid <= INT32_MAX)
			want->nspid = (pid_t)pid;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_owner got = { .uid = { (uid_t)-1, (uid_t)-1 }, .nspid = 4242 }, want = got;
	char *line = malloc(size + 1);

	for (size_t start = 0, i = 0; i < size; i++) {
		if (data[i] != '\n' && i + 1 < size)
			continue;
		memcpy(line, data + start, i + 1 - start);
		line[i + 1 - start] = '\0';
		start = i + 1;
		perfmap_status_line(line, &got);
		expect(line, &want);
		if (got.has_uid != want.has_uid || got.uid[0] != want.uid[0] ||
		    got.uid[1] != want.uid[1] || got.nspid != want.nspid)
			abort();
	}
	free(line);
	return 0;
}
