/* kallsyms.c — the kernel's function names from /proc/kallsyms (kallsyms.h). */
#include "proftop/kallsyms.h"

#include "proftop/strpool.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kallsyms_func {
	uint64_t start;
	const char *name;
	const char *module;
};

struct kallsyms {
	struct strpool *strings;
	const char *core;          /* "[kernel.kallsyms]" */
	struct kallsyms_func *funcs; /* sorted by start once parsing is done */
	size_t n, cap;
	const struct kallsyms_func **by_name; /* kallsyms_find()'s index, made at its first call */
};

static bool printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

int kallsyms_parse_line(const char *line, size_t len, struct kallsyms_line *out)
{
	const char *p = line, *end = line + len, *at;
	uint64_t addr = 0;
	int digits = 0;

	memset(out, 0, sizeof(*out));
	for (; p < end && *p != ' '; p++, digits++) {
		int v = *p >= '0' && *p <= '9' ? *p - '0'
			: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
			: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;

		if (v < 0 || digits == 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)v;
	}
	/* " T " */
	if (!digits || end - p < 4 || p[0] != ' ' || p[2] != ' ' || (unsigned char)p[1] <= ' ')
		return -EINVAL;
	out->addr = addr;
	out->type = p[1];
	p += 3;
	for (at = p; p < end && *p != '\t'; p++)
		;
	out->name = at;
	out->name_len = (size_t)(p - at);
	if (!out->name_len || out->name_len > KALLSYMS_NAME_MAX || !printable(at, out->name_len) ||
	    memchr(at, ' ', out->name_len))
		return -EINVAL;
	if (p == end)
		return 0;
	/* "\t[module]" and nothing after */
	p++;
	if (end - p < 3 || *p != '[' || end[-1] != ']')
		return -EINVAL;
	out->module = p + 1;
	out->module_len = (size_t)(end - p - 2);
	if (out->module_len > KALLSYMS_NAME_MAX || !printable(out->module, out->module_len) ||
	    memchr(out->module, ']', out->module_len) || memchr(out->module, '[', out->module_len))
		return -EINVAL;
	return 0;
}

static struct kallsyms *kallsyms_new(void)
{
	struct kallsyms *k = xcalloc(1, sizeof(*k));

	k->strings = strpool_new();
	k->core = strpool_intern(k->strings, "[kernel.kallsyms]", 17);
	return k;
}

/* A code symbol at an address names a function; the rest (data, absolute, undefined) does not. */
static void add_line(struct kallsyms *k, const char *line, size_t len)
{
	struct kallsyms_line l;
	char module[KALLSYMS_NAME_MAX + 3];

	if (len && line[len - 1] == '\r')
		len--;
	if (kallsyms_parse_line(line, len, &l) || !l.addr ||
	    !strchr("tTwW", l.type))
		return;
	xgrow((void **)&k->funcs, &k->cap, k->n + 1, sizeof(*k->funcs));
	k->funcs[k->n].start = l.addr;
	k->funcs[k->n].name = strpool_intern(k->strings, l.name, l.name_len);
	if (l.module) {
		snprintf(module, sizeof(module), "[%.*s]", (int)l.module_len, l.module);
		k->funcs[k->n].module = strpool_intern(k->strings, module, l.module_len + 2);
	} else {
		k->funcs[k->n].module = k->core;
	}
	k->n++;
}

/* By start; of two at one address (aliases such as _text and _stext), the first in name order. */
static int by_start(const void *a, const void *b)
{
	const struct kallsyms_func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void finish(struct kallsyms *k)
{
	size_t kept = 0;

	if (k->n) /* (no array to sort: qsort's is never NULL) */
		qsort(k->funcs, k->n, sizeof(*k->funcs), by_start);
	for (size_t i = 0; i < k->n; i++)
		if (!kept || k->funcs[kept - 1].start != k->funcs[i].start)
			k->funcs[kept++] = k->funcs[i];
	k->n = kept;
}

struct kallsyms *kallsyms_parse(const char *text, size_t len)
{
	struct kallsyms *k = kallsyms_new();
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		add_line(k, p, (size_t)(line_end - p));
		p = nl ? nl + 1 : end;
	}
	finish(k);
	return k;
}

struct kallsyms *kallsyms_load(const char *path, char **why)
{
	FILE *f;
	struct kallsyms *k;
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;

	*why = NULL;
	if (!path)
		path = "/proc/kallsyms";
	f = fopen(path, "re");
	if (!f) {
		*why = xasprintf("%s: %s: kernel frames stay unnamed", path, strerror(errno));
		return NULL;
	}
	k = kallsyms_new();
	while ((got = getline(&line, &cap, f)) > 0)
		add_line(k, line, (size_t)got - (line[got - 1] == '\n'));
	free(line);
	fclose(f);
	finish(k);
	if (!k->n) {
		*why = xasprintf("%s shows no function at an address (kernel.kptr_restrict, or not "
				 "root): kernel frames stay unnamed", path);
		kallsyms_free(k);
		return NULL;
	}
	return k;
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->funcs);
	free(k->by_name);
	strpool_free(k->strings);
	free(k);
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k->n;
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr, uint64_t *start,
			    const char **module)
{
	size_t lo = 0, hi = k->n;

	/* The last function starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->funcs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - k->funcs[lo - 1].start >= KALLSYMS_FUNC_MAX)
		return NULL;
	*start = k->funcs[lo - 1].start;
	*module = k->funcs[lo - 1].module;
	return k->funcs[lo - 1].name;
}

/* By name; of one name, the core kernel's first, then by start. */
static int by_name(const void *a, const void *b)
{
	const struct kallsyms_func *x = *(const struct kallsyms_func *const *)a;
	const struct kallsyms_func *y = *(const struct kallsyms_func *const *)b;
	int c = strcmp(x->name, y->name);
	bool x_core = !strcmp(x->module, "[kernel.kallsyms]"), y_core = !strcmp(y->module, "[kernel.kallsyms]");

	if (c)
		return c;
	if (x_core != y_core)
		return x_core ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

const char *kallsyms_find(struct kallsyms *k, const char *name, const char *module,
			  uint64_t *start, const char **module_out)
{
	size_t lo = 0, hi = k->n;

	if (!k->by_name && k->n) {
		k->by_name = xmalloc(k->n * sizeof(*k->by_name));
		for (size_t i = 0; i < k->n; i++)
			k->by_name[i] = &k->funcs[i];
		qsort(k->by_name, k->n, sizeof(*k->by_name), by_name);
	}
	while (lo < hi) { /* the first of the name */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(k->by_name[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < k->n && !strcmp(k->by_name[lo]->name, name); lo++) {
		const struct kallsyms_func *f = k->by_name[lo];

		if (module && strcmp(f->module, module))
			continue;
		*start = f->start;
		*module_out = f->module;
		return f->name;
	}
	return NULL;
}
