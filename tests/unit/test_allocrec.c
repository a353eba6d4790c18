/* The byte sampling: gaps have the mean asked for, and the estimates made from the samples come
 * back to the bytes and the allocations of a known mix (a fixed seed: the same draws each run). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/allocrec.h"

#include <math.h>

static void gaps_have_the_mean(void **state)
{
	uint64_t rng = 42, sum = 0, n = 200000, under_mean = 0;

	(void)state;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t g = allocrec_next_gap(&rng, 1000);

		assert_true(g >= 1);
		sum += g;
		under_mean += g < 1000;
	}
	/* Exponential: mean 1000, and P(gap < mean) = 1 - 1/e = 63.2%. */
	assert_true(fabs((double)sum / (double)n - 1000) < 10);
	assert_true(fabs((double)under_mean / (double)n - 0.632) < 0.005);
	assert_true(allocrec_next_gap(&rng, 0) >= 1);
}

/* The logarithm the library computes without libm is libm's, to double precision. */
static void log_without_libm(void **state)
{
	uint64_t rng = 99;

	(void)state;
	for (uint64_t k = 1; k < 5000; k++) {
		double want = -log((double)k / 9007199254740992.0);

		assert_true(fabs(allocrec_neg_log_unit(k) - want) <= 1e-14 * want);
	}
	for (int i = 0; i < 100000; i++) {
		uint64_t k;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		k = (rng >> 11) + 1;
		assert_true(fabs(allocrec_neg_log_unit(k) + log((double)k / 9007199254740992.0)) <
			    1e-15 + 1e-13 * -log((double)k / 9007199254740992.0));
	}
	assert_true(allocrec_neg_log_unit(1ull << 53) == 0);
}

static void scale(void **state)
{
	(void)state;
	assert_true(fabs(allocrec_scale(1, 512 * 1024) - 512 * 1024) < 1);
	assert_true(fabs(allocrec_scale(512 * 1024, 512 * 1024) - 1 / (1 - exp(-1))) < 1e-9);
	assert_true(allocrec_scale(100ull << 20, 512 * 1024) == 1);
	assert_true(allocrec_scale(0, 512 * 1024) == 1);
	assert_true(allocrec_scale(10, 0) == 1);
}

/* Two sites, 70% and 30% of the bytes in allocations of 48 and 20000 bytes, sampled as the
 * library samples them (a gap, and a new gap after each sample): the estimates per site. */
static void estimates_come_back(void **state)
{
	const uint64_t mean = 512 * 1024, small = 48, big = 20000;
	const uint64_t total = 3ull << 30; /* 3 GiB allocated */
	uint64_t rng = 7, until = allocrec_next_gap(&rng, mean);
	double est_bytes[2] = { 0 }, est_objects[2] = { 0 };
	uint64_t true_objects[2] = { 0 }, true_bytes[2] = { 0 }, samples = 0;

	(void)state;
	while (true_bytes[0] + true_bytes[1] < total) {
		/* site 0 until it has 70% of the bytes so far, then site 1 */
		int site = true_bytes[0] * 10 < (true_bytes[0] + true_bytes[1]) * 7 ? 0 : 1;
		uint64_t size = site ? big : small;

		true_bytes[site] += size;
		true_objects[site]++;
		if (size >= until) {
			double s = allocrec_scale(size, mean);

			est_bytes[site] += s * (double)size;
			est_objects[site] += s;
			samples++;
			until = allocrec_next_gap(&rng, mean);
		} else {
			until -= size;
		}
	}
	/* About total / mean samples: 6144; a relative error of about 1/sqrt(n) per site. */
	assert_true(samples > 5500 && samples < 6800);
	for (int i = 0; i < 2; i++) {
		assert_true(fabs(est_bytes[i] / (double)true_bytes[i] - 1) < 0.05);
		assert_true(fabs(est_objects[i] / (double)true_objects[i] - 1) < 0.05);
	}
	/* The shares within 3 points, as --mode alloc promises. */
	assert_true(fabs(100 * est_bytes[0] / (est_bytes[0] + est_bytes[1]) - 70) < 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gaps_have_the_mean),
		cmocka_unit_test(log_without_libm),
		cmocka_unit_test(scale),
		cmocka_unit_test(estimates_come_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
