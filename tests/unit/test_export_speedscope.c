/* Unit tests of the speedscope writer: JSON strings from any bytes (random ones checked by a
 * validator written here, not by json.c's rules), which files are speedscope's, and a file
 * written from two stretches of synthetic profiles, whose samples must come in their order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/export.h"
#include "proftop/export_writers.h"
#include "proftop/json.h"
#include "proftop/profile.h"
#include "unit_profiles.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HZ 100

/* text through json_write_string(), in a malloc'd string. */
static char *json_of(const char *text)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	json_write_string(out, text);
	fclose(out);
	return buf;
}

/* The length of the UTF-8 sequence at p as RFC 3629 allows it (no overlong forms, surrogates
 * or code points past U+10FFFF); 0 when it is not one. */
static size_t utf8_ok(const unsigned char *p)
{
	uint32_t cp;
	size_t n;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0)
		n = 2, cp = *p & 0x1f;
	else if ((*p & 0xf0) == 0xe0)
		n = 3, cp = *p & 0x0f;
	else if ((*p & 0xf8) == 0xf0)
		n = 4, cp = *p & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* Whether s is one JSON string (RFC 8259 section 7) and nothing else. */
static bool json_string_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (*p++ != '"')
		return false;
	while (*p && *p != '"') {
		size_t n;

		if (*p < 0x20)
			return false;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return false;
				p += 5;
				continue;
			}
			if (!*p || !strchr("\"\\/bfnrt", *p))
				return false;
			p++;
			continue;
		}
		n = utf8_ok(p);
		if (!n)
			return false;
		p += n;
	}
	return *p == '"' && p[1] == '\0';
}

static void json_strings_escaped(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "main", "\"main\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "line\nbreak\t\x1b[31m", "\"line^Jbreak^I^[[31m\"" },
		{ "bad\xff\xc0 byte", "\"bad\\\\xff\\\\xc0 byte\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"" },
		{ "", "\"\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *got = json_of(cases[i].in);

		assert_string_equal(got, cases[i].out);
		assert_true(json_string_valid(got));
		free(got);
	}
}

/* Random bytes, weighted towards the ones that need care, always give a valid JSON string. */
static void json_strings_fuzzed(void **state)
{
	static const unsigned char tricky[] = { '"', '\\', '\n', 0x1b, 0x7f, 0x80, 0x9f, 0xc2,
						0xe0, 0xed, 0xf0, 0xf4, 0xff, 'u', '/' };
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	char text[64];

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(round % 48);
		char *got;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			text[i] = (char)(seed >> 62 ? (seed >> 40) % 255 + 1
						    : tricky[(seed >> 40) % sizeof(tricky)]);
		}
		text[len] = '\0';
		got = json_of(text);
		if (!json_string_valid(got))
			fail_msg("round %d: not a JSON string: %s", round, got);
		free(got);
	}
}

static void format_from_names(void **state)
{
	enum export_format f;

	(void)state;
	assert_int_equal(export_format_of_path("run.speedscope.json"), EXPORT_SPEEDSCOPE);
	assert_int_equal(export_format_of_path("d/run.speedscope.json.3"), EXPORT_SPEEDSCOPE);
	assert_int_equal(export_format_of_path("run.json"), EXPORT_TMON);
	assert_int_equal(export_format_parse("speedscope", &f), 0);
	assert_int_equal(f, EXPORT_SPEEDSCOPE);
	assert_string_equal(export_format_name(EXPORT_SPEEDSCOPE), "speedscope");
	assert_string_equal(export_default_path(EXPORT_SPEEDSCOPE), "proftop.speedscope.json");
	assert_true(export_keeps_time_order("x.speedscope.json", EXPORT_AUTO));
	assert_true(export_keeps_time_order("x.folded", EXPORT_SPEEDSCOPE));
	assert_false(export_keeps_time_order("x.speedscope.json", EXPORT_FOLDED));
}

/* A profile whose functions are numbered alike in every call: main, phase_one, phase_two. */
static struct snapshot *phases(int one, int two, int other_thread)
{
	struct profile *p = profile_new(NULL);
	uint32_t main_ = profile_func(p, "prog", "main", 0);
	uint32_t phase_one = profile_func(p, "prog", "phase_one", 0);
	uint32_t phase_two = profile_func(p, "prog", "phase_two", 0);
	struct snapshot *s;

	if (one)
		unit_add(p, 7, one, 2, main_, phase_one);
	if (two)
		unit_add(p, 7, two, 2, main_, phase_two);
	if (other_thread)
		unit_add(p, 8, other_thread, 2, main_, phase_two);
	profile_set_comm(p, 7, 7, "pro\"g");
	profile_set_comm(p, 7, 8, "worker");
	s = profile_snapshot(p);
	s->freq = HZ;
	profile_free(p);
	return s;
}

static char *speedscope_of(const struct snapshot *s, const struct export_timeline *timeline)
{
	struct export_scope scope;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	export_scope_merged(&scope, s);
	assert_int_equal(export_speedscope(out, s, &scope, timeline), 0);
	fclose(out);
	return buf;
}

/* The frame index of name in the file's frames (they are listed one a line). */
static int frame_index(const char *file, const char *name)
{
	const char *frames = strstr(file, "\"frames\":[");
	char *key = NULL;
	int index = 0;

	assert_non_null(frames);
	assert_true(asprintf(&key, "{\"name\":\"%s\"", name) > 0);
	for (const char *p = strchr(frames, '{'); p; p = strchr(p + 1, '{'), index++) {
		if (!strncmp(p, key, strlen(key))) {
			free(key);
			return index;
		}
	}
	free(key);
	return -1;
}

/* The timeline's i-th stretch: a new reference to stretches[i], counted in taken. */
struct stretch_list {
	struct snapshot *stretches[2];
	int taken;
};

static struct snapshot *take_stretch(void *arg, size_t i)
{
	struct stretch_list *list = arg;

	list->taken++;
	return snapshot_ref(list->stretches[i]);
}

static void stretches_in_time_order(void **state)
{
	/* phase_two is the hotter one over the run: a sum would list it first. */
	struct snapshot *first = phases(30, 0, 0), *second = phases(0, 50, 20);
	struct snapshot *whole = phases(30, 50, 20);
	struct stretch_list list = { { first, second }, 0 };
	struct export_timeline timeline = { 2, take_stretch, &list };
	char *file = speedscope_of(whole, &timeline), *sum = speedscope_of(whole, NULL);
	int main_ = frame_index(file, "main"), one = frame_index(file, "phase_one");
	int two = frame_index(file, "phase_two");
	char want[256];

	(void)state;
	assert_non_null(strstr(file, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	assert_true(main_ >= 0 && one >= 0 && two >= 0);
	/* Thread 7 (its name escaped): phase_one's stretch, then phase_two's, in nanoseconds. */
	snprintf(want, sizeof(want), "\"name\":\"pro\\\"g (tid 7)\",\"unit\":\"nanoseconds\","
		 "\"startValue\":0,\n\"samples\":[[%d,%d],[%d,%d]],\n\"weights\":[300000000,"
		 "500000000],\"endValue\":800000000}", main_, one, main_, two);
	assert_non_null(strstr(file, want));
	snprintf(want, sizeof(want), "\"name\":\"worker (tid 8)\",\"unit\":\"nanoseconds\","
		 "\"startValue\":0,\n\"samples\":[[%d,%d]],\n\"weights\":[200000000]", main_, two);
	assert_non_null(strstr(file, want));
	assert_non_null(strstr(file, "\"activeProfileIndex\":0"));
	assert_int_equal(list.taken, 2);
	/* Without stretches: one, the tree walk's order, hottest first. */
	main_ = frame_index(sum, "main");
	one = frame_index(sum, "phase_one");
	two = frame_index(sum, "phase_two");
	snprintf(want, sizeof(want), "\"samples\":[[%d,%d],[%d,%d]],\n\"weights\":[500000000,"
		 "300000000]", main_, two, main_, one);
	assert_non_null(strstr(sum, want));
	free(file);
	free(sum);
	/* -a's threads are processes, named by their pid. */
	whole->by_process = true;
	sum = speedscope_of(whole, NULL);
	assert_non_null(strstr(sum, "\"name\":\"worker (pid 7)\""));
	assert_non_null(strstr(sum, "\"name\":\"proftop cpu profile\""));
	free(sum);
	snapshot_unref(first);
	snapshot_unref(second);
	snapshot_unref(whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_strings_escaped),
		cmocka_unit_test(json_strings_fuzzed),
		cmocka_unit_test(format_from_names),
		cmocka_unit_test(stretches_in_time_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
