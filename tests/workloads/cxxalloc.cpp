/* cxxalloc.cpp — `cxxalloc REPORT_FD WAIT_FD`: C++ allocations for the allocation library:
 * new/delete of objects and new[]/delete[] of arrays (through libstdc++'s operator new, which
 * calls malloc), 400 MiB of them freed, and 2000 arrays of 100,000 bytes (200 MB) leaked, from
 * three functions of their own. Then it writes a byte to REPORT_FD and waits for WAIT_FD to
 * close (its mappings stay for whoever names its stacks). Exit status 0. */
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#define HOT __attribute__((noipa)) /* a real frame of its own, never a tail call */

struct Obj {
	char payload[256];
};

static char *leaks[2000];

extern "C" HOT void cxx_objects(void)
{
	Obj *o = new Obj;

	o->payload[0] = 1;
	__asm__ volatile("" : : "r"(o) : "memory"); /* C++ may elide a new/delete pair otherwise */
	delete o;
}

extern "C" HOT void cxx_arrays(void)
{
	int *a = new int[1024];

	a[0] = 1;
	__asm__ volatile("" : : "r"(a) : "memory");
	delete[] a;
}

extern "C" HOT char *cxx_leak(void)
{
	char *p = new char[100000];

	p[0] = 1;
	return p;
}

int main(int argc, char **argv)
{
	char done = 'd';

	if (argc != 3)
		return 2;
	for (uint64_t bytes = 0; bytes < (400ull << 20); bytes += sizeof(Obj) + 4096) {
		cxx_objects();
		cxx_arrays();
	}
	for (int i = 0; i < 2000; i++)
		leaks[i] = cxx_leak();
	if (write(atoi(argv[1]), &done, 1) != 1 || read(atoi(argv[2]), &done, 1) < 0)
		return 1;
	return leaks[0][0] == 1 ? 0 : 1;
}
