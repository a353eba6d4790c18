/* allocrec.c — the byte sampling the allocation library and proftop agree on (allocrec.h).
 * Compiled into that library too: nothing here allocates, and what the library calls needs no
 * libm (which it would load into every program it goes into). */
#include "proftop/allocrec.h"

#include <math.h>

/* xorshift64*: fast, and enough for drawing gaps. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* k = m * 2^top with m in [1, 2), and ln m = 2 atanh(s), s =
 * (m - 1) / (m + 1) <= 1/3, whose series has converged to double precision by its 20th term. */
double allocrec_neg_log_unit(uint64_t k)
{
	int top = 63 - __builtin_clzll(k);
	double m = (double)k / (double)(1ull << top), s = (m - 1) / (m + 1), s2 = s * s;
	double term = s, sum = 0;

	for (int i = 1; i < 40; i += 2) {
		sum += term / i;
		term *= s2;
	}
	return (double)(53 - top) * 0.69314718055994530942 - 2 * sum;
}

uint64_t allocrec_next_gap(uint64_t *rng, uint64_t mean)
{
	/* u in (0, 1]: 53 random bits, never 0 (log(0) is -inf). */
	double gap = allocrec_neg_log_unit((next_random(rng) >> 11) + 1) * (double)(mean ? mean : 1);

	return gap < 1 ? 1 : gap > 1e18 ? (uint64_t)1e18 : (uint64_t)gap;
}

double allocrec_scale(uint64_t size, uint64_t mean)
{
	double p;

	if (!mean || !size)
		return 1;
	p = -expm1(-(double)size / (double)mean); /* 1 - e^(-size/mean), exact for small ones */
	return p > 0 ? 1 / p : 1;
}
