/* idmap.c — open addressing with linear probing. A slot is empty when its value is IDMAP_MISSING,
 * so every 64-bit key is usable. */
#include "proftop/idmap.h"

#include "proftop/util.h"

#include <stdlib.h>
#include <string.h>

void idmap_init(struct idmap *map)
{
	memset(map, 0, sizeof(*map));
}

void idmap_free(struct idmap *map)
{
	free(map->keys);
	free(map->values);
	idmap_init(map);
}

static size_t slot_of(const struct idmap *map, uint64_t key)
{
	size_t mask = map->capacity - 1;
	size_t i = (size_t)util_hash_u64(key) & mask;

	while (map->values[i] != IDMAP_MISSING && map->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

uint32_t idmap_get(const struct idmap *map, uint64_t key)
{
	if (!map->capacity)
		return IDMAP_MISSING;
	return map->values[slot_of(map, key)];
}

static void rehash(struct idmap *map, size_t capacity)
{
	struct idmap bigger = { xmalloc(capacity * sizeof(uint64_t)),
				xmalloc(capacity * sizeof(uint32_t)), 0, capacity };

	memset(bigger.values, 0xff, capacity * sizeof(uint32_t));
	for (size_t i = 0; i < map->capacity; i++) {
		if (map->values[i] != IDMAP_MISSING) {
			size_t slot = slot_of(&bigger, map->keys[i]);

			bigger.keys[slot] = map->keys[i];
			bigger.values[slot] = map->values[i];
			bigger.count++;
		}
	}
	free(map->keys);
	free(map->values);
	*map = bigger;
}

void idmap_put(struct idmap *map, uint64_t key, uint32_t value)
{
	size_t slot;

	if ((map->count + 1) * 2 > map->capacity)
		rehash(map, map->capacity ? map->capacity * 2 : 64);
	slot = slot_of(map, key);
	if (map->values[slot] == IDMAP_MISSING)
		map->count++;
	map->keys[slot] = key;
	map->values[slot] = value;
}
