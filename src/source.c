/* source.c — the table of sources of profile data (source.h). Order matters: a record goes to
 * the first source that says it is of its kind (the switches' samples before the CPU's). */
#include "proftop/source.h"

#include "proftop/diag.h"

#include <stddef.h>
#include <stdlib.h>

const struct source *const source_table[] = {
	&source_switches,
	&source_cpu,
	&source_alloc,
	&source_coverage,
	NULL,
};

bool source_workers_allowed(const struct sample_config *config, unsigned nworkers)
{
	for (const struct source *const *s = source_table; *s; s++)
		if ((*s)->in_run(config) && (*s)->one_worker && nworkers > 1)
			return false;
	return true;
}

unsigned source_default_workers(long cpus)
{
	long n = cpus / SOURCE_CPUS_PER_WORKER;

	return n < 1 ? 1 : n > SOURCE_DEFAULT_MAX_WORKERS ? SOURCE_DEFAULT_MAX_WORKERS : (unsigned)n;
}

int source_set_watch(const struct source_set *set, pid_t pid, const char *exe, struct diag *diag,
		     char **message)
{
	*message = NULL;
	for (size_t i = 0; i < set->n; i++) {
		int err;

		if (!set->sources[i]->watch)
			continue;
		err = set->sources[i]->watch(set->states[i], pid, exe, message);
		if (err)
			return err;
		if (*message) /* (a warning: the watch went on) */
			diag_report(diag, DIAG_WARNING, "%s", *message);
		free(*message);
		*message = NULL;
	}
	return 0;
}

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
