/* cxxnames.cpp — `cxxnames [SECONDS]`: C++ names as long as real code has them. One thread burns
 * SECONDS (default 3) of CPU time, 60% in a member of a class template over the standard library's
 * types and 40% in a function template that returns one:
 *
 *     main → shop::Ledger<std::__cxx11::basic_string<char, std::char_traits<char>,
 *                std::allocator<char> >, long>::tally(std::__cxx11::basic_string<...> const&,
 *                unsigned long) const                                                       60%
 *     main → std::vector<double, std::allocator<double> > shop::gather<double>(std::map<...>
 *                const&, unsigned long)                                                     40%
 *
 * As demangled they fill a terminal's line before their names end; shortened (proftop --names)
 * they are shop::Ledger<...>::tally and shop::gather<double>, or shop::Ledger<>::tally and
 * shop::gather<>. The timing is cxxns.cpp's: cycles of thread CPU time, 5 to 15 ms long, split by
 * absolute CPU-time deadlines, so the split is exact whatever the CPU speed or the load. */
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#ifdef __clang__
#define HOT __attribute__((noinline))
#else
#define HOT __attribute__((noipa)) /* no inlining, cloning or folding: real frames, real names */
#endif

namespace {

constexpr uint64_t cycle_min_ns = 5000000;
constexpr uint64_t cycle_spread_ns = 10000000;
constexpr int chunk = 50000; // iterations between clock reads: the syscall costs under 2%

uint64_t thread_cpu_ns()
{
	timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

} // namespace

volatile uint64_t sink;
volatile double dsink;

namespace shop {

template <typename Key, typename Value> struct Ledger {
	std::map<Key, Value> entries;

	HOT Value tally(Key const &key, uint64_t until_ns) const;
};

template <typename Key, typename Value>
HOT Value Ledger<Key, Value>::tally(Key const &key, uint64_t until_ns) const
{
	Value x = Value(key.size()) + Value(entries.size());

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < chunk; i++) {
			x = x * Value(1103515245) + Value(12345);
			__asm__ volatile("" : "+r"(x));
		}
	return x;
}

template <typename T>
HOT std::vector<T> gather(std::map<std::string, T> const &from, uint64_t until_ns)
{
	T x = T(from.size());

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < chunk; i++) {
			x = x * T(0.999999) + T(0.5);
			__asm__ volatile("" : "+x"(x));
		}
	return std::vector<T>(1, x);
}

template struct Ledger<std::string, long>;
template std::vector<double> gather<double>(std::map<std::string, double> const &, uint64_t);

} // namespace shop

int main(int argc, char **argv)
{
	double secs = 3.0, d = 1.0;
	uint64_t start, total, t = 0, rng = 88172645463325252ull;
	shop::Ledger<std::string, long> ledger;
	std::map<std::string, double> prices{ { "tea", 2.5 } };
	std::string key = "tea";
	long sum = 0;

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = std::strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !std::isfinite(secs) || secs <= 0 || secs > 86400) {
			std::fprintf(stderr, "usage: cxxnames [SECONDS]\n");
			return 2;
		}
	}
	total = uint64_t(secs * 1e9);
	start = thread_cpu_ns();
	while (t < total) {
		uint64_t cycle;

		rng ^= rng << 13; // xorshift64: the same cycle lengths on every run
		rng ^= rng >> 7;
		rng ^= rng << 17;
		cycle = cycle_min_ns + rng % cycle_spread_ns;
		sum += ledger.tally(key, start + t + cycle * 6 / 10);
		d += shop::gather<double>(prices, start + t + cycle)[0];
		t += cycle;
	}
	sink = uint64_t(sum);
	dsink = d;
	return 0;
}
