/* staticalloc.c — a statically linked program that allocates: --mode alloc cannot preload its
 * library into it, and must say so. Prints the bytes it allocated. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	size_t total = 0;

	for (int i = 0; i < 1000; i++) {
		char *p = malloc(1000);

		p[0] = 1;
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
		total += 1000;
	}
	printf("allocated %zu\n", total);
	return 0;
}
