/* kinds.c — the collector's kinds of profile by name (kinds.h): the mode a name stands for is
 * asked of sample.c's table here, so that its callers need not name one. */
#include "proftop/kinds.h"

#include "proftop/collector.h"
#include "proftop/sample.h"

const char *kinds_shown(struct collector *collector)
{
	return sample_mode_name(collector_shown(collector));
}

bool kinds_keeps_stretches(const struct collector *collector, const char *kind)
{
	enum sample_mode mode;

	return sample_mode_parse(kind, &mode) && collector_keeps_stretches(collector, mode);
}

struct snapshot *kinds_stretch(struct collector *collector, const char *kind, uint64_t from_s,
			       uint64_t to_s)
{
	enum sample_mode mode;

	if (!sample_mode_parse(kind, &mode))
		return NULL;
	return collector_stretch(collector, mode, from_s, to_s);
}
