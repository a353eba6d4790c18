/* source.c — the table of sources of profile data (source.h). Order matters: a record goes to
 * the first source that says it is of its kind (the switches' samples before the CPU's). */
#include "proftop/source.h"

#include <stddef.h>

const struct source *const source_table[] = {
	&source_switches,
	&source_cpu,
	&source_alloc,
	&source_coverage,
	NULL,
};

const struct source *source_set_owner(const struct source_set *set, enum sample_mode mode,
				      size_t *at)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->sources[i]->owns & (1u << (unsigned)mode)) {
			*at = i;
			return set->sources[i];
		}
	return NULL;
}
