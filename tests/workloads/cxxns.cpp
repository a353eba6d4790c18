/* cxxns.cpp — `cxxns [SECONDS]`: C++ names. One thread burns SECONDS (default 3) of CPU time, 60%
 * in a member of a class template and 40% in a function template, both inside a namespace:
 *
 *     main → ns::Worker<int>::run(unsigned long)                      60%
 *     main → ns::crunch<double>(double, unsigned long)                40%
 *
 * Their symbols are mangled (_ZN2ns6WorkerIiE3runEm, _ZN2ns6crunchIdEET_S1_m); a profiler must
 * show them demangled. The timing is split.c's: cycles of thread CPU time, 5 to 15 ms long, split
 * by absolute CPU-time deadlines, so the split is exact whatever the CPU speed or the load. */
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

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

namespace ns {

template <typename T> struct Worker {
	T state;

	HOT void run(uint64_t until_ns);
};

template <typename T> HOT void Worker<T>::run(uint64_t until_ns)
{
	T x = state;

	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < chunk; i++) {
			x = x * T(1103515245) + T(12345);
			__asm__ volatile("" : "+r"(x));
		}
	state = x;
}

template <typename T> HOT T crunch(T x, uint64_t until_ns)
{
	while (thread_cpu_ns() < until_ns)
		for (int i = 0; i < chunk; i++) {
			x = x * T(0.999999) + T(0.5);
			__asm__ volatile("" : "+x"(x));
		}
	return x;
}

template struct Worker<int>;
template double crunch<double>(double, uint64_t);

} // namespace ns

int main(int argc, char **argv)
{
	double secs = 3.0, d = 1.0;
	uint64_t start, total, t = 0, rng = 88172645463325252ull;
	ns::Worker<int> worker{1};

	if (argc > 1) {
		char *end;

		errno = 0;
		secs = std::strtod(argv[1], &end);
		if (errno || end == argv[1] || *end || !std::isfinite(secs) || secs <= 0 || secs > 86400) {
			std::fprintf(stderr, "usage: cxxns [SECONDS]\n");
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
		worker.run(start + t + cycle * 6 / 10);
		d = ns::crunch<double>(d, start + t + cycle);
		t += cycle;
	}
	sink = uint64_t(worker.state);
	dsink = d;
	return 0;
}
