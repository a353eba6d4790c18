/* idmap.h — an open-addressing hash map from 64-bit keys to 32-bit ids, the index behind the
 * profile's tries and tables. Linear probing, kept under 50% full; no deletion (profiles only grow). */
#ifndef PROFTOP_IDMAP_H
#define PROFTOP_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *keys;
	uint32_t *values;
	size_t count, capacity; /* capacity is 0 or a power of two */
};

#define IDMAP_MISSING UINT32_MAX

void idmap_init(struct idmap *map);
void idmap_free(struct idmap *map);
/* The value for key, or IDMAP_MISSING. */
uint32_t idmap_get(const struct idmap *map, uint64_t key);
/* Set key to value (value != IDMAP_MISSING). */
void idmap_put(struct idmap *map, uint64_t key, uint32_t value);

#endif
