/* export_otlp.c — a snapshot as an OTLP ExportProfilesServiceRequest (export_otlp.h), over the
 * model pprof's writer describes too (export_model.h).
 *
 * Layout: a ResourceProfiles per process (its attributes process.pid, process.executable.name
 * (the name the process goes by, its leader's comm), service.name, host.name), one ScopeProfiles
 * (proftop and its version), and in it a Profile per sample type: samples/count and
 * cpu/nanoseconds (count x the period) in cpu mode; microseconds/count and MODE/nanoseconds in
 * the timed modes; alloc_objects/count, alloc_space/bytes, inuse_objects/count and
 * inuse_space/bytes in an allocation run (Go's heap profile's names); executions/count in
 * coverage. Each Profile says when its samples were taken (time_unix_nano, duration_nano: the
 * run, or the stretch a ranged snapshot is of) and its period. Samples carry the thread's
 * thread.id and thread.name attributes. proftop keeps no time of each sample, only of each second
 * (history.h): a Sample has no timestamps_unix_nano; the push (otlp_push.c) sends a Profile per
 * interval, whose time range says when.
 *
 * The dictionary the profiles share holds what they use: index 0 of each table is its zero
 * value, as the schema asks; stacks are interned; mappings carry their file's GNU build ID as
 * the process.executable.build_id.gnu attribute. Everything is encoded in memory: the request is
 * one message whose dictionary comes last (its strings are those the profiles used). */
#include "proftop/export_otlp.h"

#include "proftop/export_model.h"
#include "proftop/export_writers.h"
#include "proftop/idmap.h"
#include "proftop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Field numbers of the schema's messages (../shared/otlp, v1development). */
enum {
	REQUEST_RESOURCE_PROFILES = 1, REQUEST_DICTIONARY = 2,
	RESOURCE_PROFILES_RESOURCE = 1, RESOURCE_PROFILES_SCOPE_PROFILES = 2,
	RESOURCE_ATTRIBUTES = 1,
	SCOPE_PROFILES_SCOPE = 1, SCOPE_PROFILES_PROFILES = 2,
	SCOPE_NAME = 1, SCOPE_VERSION = 2,
	KEY_VALUE_KEY = 1, KEY_VALUE_VALUE = 2,
	ANY_STRING = 1, ANY_INT = 3,
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLES = 2, PROFILE_TIME = 3, PROFILE_DURATION = 4,
	PROFILE_PERIOD_TYPE = 5, PROFILE_PERIOD = 6, PROFILE_ID = 7,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_STACK = 1, SAMPLE_ATTRIBUTES = 2, SAMPLE_VALUES = 4,
	DICT_MAPPINGS = 1, DICT_LOCATIONS = 2, DICT_FUNCTIONS = 3, DICT_LINKS = 4, DICT_STRINGS = 5,
	DICT_ATTRIBUTES = 6, DICT_STACKS = 7,
	MAPPING_START = 1, MAPPING_LIMIT = 2, MAPPING_OFFSET = 3, MAPPING_FILENAME = 4,
	MAPPING_ATTRIBUTES = 5,
	LOCATION_MAPPING = 1, LOCATION_ADDRESS = 2, LOCATION_LINES = 3,
	LINE_FUNCTION = 1, LINE_LINE = 2,
	FUNCTION_NAME = 1, FUNCTION_SYSTEM_NAME = 2, FUNCTION_FILENAME = 3,
	ATTRIBUTE_KEY = 1, ATTRIBUTE_VALUE = 2,
	STACK_LOCATIONS = 1,
	LINK_TRACE_ID = 1, LINK_SPAN_ID = 2,
};

struct otlp {
	struct export_model m;
	/* Locations, by the model's id → index (1 on) in the order samples meet them. */
	struct idmap location_index;
	struct pb locations;        /* each index's Location message, at location_at[index] */
	size_t *location_at, *location_len, nlocations, locations_cap;
	uint32_t *function_index;   /* proftop's function id → function_table index (0: none) */
	uint32_t *functions;        /* function_table index - 1 → proftop's function id */
	size_t nfunctions;
	uint32_t *mapping_index;    /* the model's mapping id → mapping_table index (0: none) */
	uint32_t *mappings;         /* mapping_table index - 1 → the model's mapping id */
	size_t nmappings;
	/* Stacks: stack_locations[stack_at[i]..+stack_len[i]] is stack i + 1's, leaf first. */
	struct idmap stack_index;   /* hash of a stack → its index (verified on lookup) */
	uint32_t *stack_locations, *stack_at, *stack_len;
	size_t nstack_locations, stack_locations_cap, nstacks, stacks_cap;
	struct pb attributes;       /* the KeyValueAndUnit entries from index 1, each a field */
	size_t nattributes;
	struct idmap thread_attributes; /* tid → the index of its thread.id (thread.name next) */
	/* The Profile being made: its message, which value its samples carry, their attributes. */
	struct pb profile, sample, tmp, tmp2;
	uint32_t *sample_stack;     /* a sample's stack as location_table indices */
	size_t sample_stack_cap;
	uint64_t *stack;            /* a stack's locations, as pb_packed() takes them */
	size_t stack_cap;
	char *visible;              /* a string's visible form (util_visible_str()) */
	size_t visible_cap;
	bool scaled;                /* count x period (else the count) */
	uint64_t period;
	uint64_t sample_attributes[2];
	size_t nsample_attributes;
};

/* --- the dictionary ----------------------------------------------------------------------------- */

/* A string field: in visible form (util.h), which is well-formed UTF-8, as the schema's strings
 * must be; names from the target may be anything. */
static void text(struct otlp *o, struct pb *b, unsigned field, const char *str)
{
	pb_string(b, field, util_visible_str(str, &o->visible, &o->visible_cap));
}

static uint64_t location_of(struct otlp *o, uint64_t model_id)
{
	uint32_t i = idmap_get(&o->location_index, model_id);

	if (i == IDMAP_MISSING) {
		size_t cap = o->locations_cap;

		i = (uint32_t)++o->nlocations;
		idmap_put(&o->location_index, model_id, i);
		xgrow((void **)&o->location_at, &o->locations_cap, o->nlocations + 1,
		      sizeof(*o->location_at));
		if (o->locations_cap != cap) /* (the lengths grow with the offsets) */
			o->location_len = xrealloc(o->location_len,
						   o->locations_cap * sizeof(*o->location_len));
		o->location_at[i] = 0;
		o->location_len[i] = 0;
	}
	return i;
}

static uint64_t stack_of(struct otlp *o, const uint32_t *locations, size_t n)
{
	for (uint64_t seed = 0;; seed++) {
		uint64_t h = util_hash_bytes(locations, n * sizeof(*locations), seed);
		uint32_t i = idmap_get(&o->stack_index, h);

		if (i == IDMAP_MISSING) {
			size_t cap = o->stacks_cap;

			xgrow((void **)&o->stack_locations, &o->stack_locations_cap,
			      o->nstack_locations + n + 1, sizeof(*o->stack_locations));
			memcpy(o->stack_locations + o->nstack_locations, locations,
			       n * sizeof(*locations));
			xgrow((void **)&o->stack_at, &o->stacks_cap, o->nstacks + 1, sizeof(*o->stack_at));
			if (o->stacks_cap != cap) /* (the lengths grow with the offsets) */
				o->stack_len = xrealloc(o->stack_len,
							o->stacks_cap * sizeof(*o->stack_len));
			o->stack_at[o->nstacks] = (uint32_t)o->nstack_locations;
			o->stack_len[o->nstacks] = (uint32_t)n;
			o->nstack_locations += n;
			idmap_put(&o->stack_index, h, (uint32_t)++o->nstacks);
			return o->nstacks;
		}
		if (o->stack_len[i - 1] == n &&
		    !memcmp(o->stack_locations + o->stack_at[i - 1], locations, n * sizeof(*locations)))
			return i;
	}
}

/* A KeyValueAndUnit (a string value when str, else num); returns its index. */
static uint64_t attribute(struct otlp *o, const char *key, const char *str, int64_t num)
{
	o->tmp2.len = 0;
	if (str)
		text(o, &o->tmp2, ANY_STRING, str);
	else
		pb_uint(&o->tmp2, ANY_INT, (uint64_t)num);
	pb_uint(&o->tmp, ATTRIBUTE_KEY, model_string(&o->m, key));
	pb_message(&o->tmp, ATTRIBUTE_VALUE, &o->tmp2);
	pb_message(&o->attributes, DICT_ATTRIBUTES, &o->tmp);
	return ++o->nattributes;
}

/* A thread's attributes, made once: thread.id, and thread.name when it has one. */
static void thread_attributes(struct otlp *o, const struct snapshot_thread *thread)
{
	uint32_t first;

	o->nsample_attributes = 0;
	if (!thread || !thread->tid)
		return;
	first = idmap_get(&o->thread_attributes, (uint64_t)(uint32_t)thread->tid);
	if (first == IDMAP_MISSING) {
		first = (uint32_t)attribute(o, "thread.id", NULL, thread->tid);
		if (thread->comm && *thread->comm)
			attribute(o, "thread.name", thread->comm, 0);
		idmap_put(&o->thread_attributes, (uint64_t)(uint32_t)thread->tid, first);
	}
	o->sample_attributes[o->nsample_attributes++] = first;
	if (thread->comm && *thread->comm)
		o->sample_attributes[o->nsample_attributes++] = first + 1;
}

/* --- samples ------------------------------------------------------------------------------------ */

static void sample(void *arg, const struct model_tree *t, const uint64_t *stack, size_t depth,
		   uint64_t count)
{
	struct otlp *o = arg;
	uint64_t value = o->scaled ? count * o->period : count;

	(void)t;
	xgrow((void **)&o->sample_stack, &o->sample_stack_cap, depth + 1, sizeof(*o->sample_stack));
	for (size_t i = 0; i < depth; i++)
		o->sample_stack[i] = (uint32_t)location_of(o, stack[i]);
	pb_uint(&o->sample, SAMPLE_STACK, stack_of(o, o->sample_stack, depth));
	pb_packed(&o->sample, SAMPLE_ATTRIBUTES, o->sample_attributes, o->nsample_attributes);
	pb_packed(&o->sample, SAMPLE_VALUES, &value, 1);
	pb_message(&o->profile, PROFILE_SAMPLES, &o->sample);
}

static void value_type(struct otlp *o, unsigned field, const char *type, const char *unit)
{
	pb_uint(&o->tmp, VALUE_TYPE_TYPE, model_string(&o->m, type));
	pb_uint(&o->tmp, VALUE_TYPE_UNIT, model_string(&o->m, unit));
	pb_message(&o->profile, field, &o->tmp);
}

/* When the snapshot's samples were taken: from (CLOCK_REALTIME ns) for duration ns. */
static void sampled_when(const struct otlp *o, uint64_t *from, uint64_t *duration)
{
	const struct snapshot *s = o->m.s;
	uint64_t user, system;

	snapshot_times(s, duration, &user, &system);
	*from = o->m.profiled_since + (s->ranged ? s->range_start_s * 1000000000ull : 0);
}

/* One Profile of the process pid: the samples of its trees of part (of what type, and whether
 * they carry count x period). */
static void profile(struct otlp *o, struct pb *scope, pid_t pid, const struct snapshot *part,
		    const struct model_tree *trees, size_t ntrees, const char *type, const char *unit,
		    bool scaled)
{
	const struct snapshot *s = o->m.s;
	bool heap = snapshot_allocations(s);
	uint64_t from, duration;
	uint8_t id[16];

	o->scaled = scaled;
	value_type(o, PROFILE_SAMPLE_TYPE, type, unit);
	for (size_t i = 0; i < ntrees; i++) {
		if ((trees[i].thread ? trees[i].thread->pid : 0) != pid)
			continue;
		thread_attributes(o, trees[i].thread);
		model_samples(&o->m, part, &trees[i], sample, NULL, o);
	}
	sampled_when(o, &from, &duration);
	pb_fixed64(&o->profile, PROFILE_TIME, from);
	pb_uint(&o->profile, PROFILE_DURATION, duration);
	if (!snapshot_coverage(s)) {
		/* A heap profile's period is the mean bytes between samples, as Go's says. */
		value_type(o, PROFILE_PERIOD_TYPE, heap ? "space" : snapshot_kind(s),
			   heap ? "bytes" : "nanoseconds");
		pb_uint(&o->profile, PROFILE_PERIOD, o->period);
	}
	if (getrandom(id, sizeof(id), GRND_NONBLOCK) == (ssize_t)sizeof(id))
		pb_bytes(&o->profile, PROFILE_ID, id, sizeof(id));
	pb_message(scope, SCOPE_PROFILES_PROFILES, &o->profile);
}

/* The Profiles of process pid, one per sample type. */
static void profiles_of(struct otlp *o, struct pb *scope, pid_t pid)
{
	struct export_model *m = &o->m;
	const struct snapshot *s = m->s;

	if (snapshot_allocations(s)) {
		o->period = s->freq;
		for (size_t k = 0; k < SNAPSHOT_NCOMPANIONS; k++)
			if (m->parts[k])
				profile(o, scope, pid, m->parts[k], m->part_trees[k], m->part_ntrees[k],
					model_heap_types[k].type, model_heap_types[k].unit, false);
		return;
	}
	o->period = s->freq ? (1000000000ull + s->freq / 2) / s->freq : 0;
	if (snapshot_coverage(s)) {
		profile(o, scope, pid, s, m->trees, m->ntrees, "executions", "count", false);
		return;
	}
	profile(o, scope, pid, s, m->trees, m->ntrees, snapshot_timed(s) ? "microseconds" : "samples",
		"count", false);
	profile(o, scope, pid, s, m->trees, m->ntrees, snapshot_kind(s), "nanoseconds", true);
}

/* --- resources ---------------------------------------------------------------------------------- */

static void resource_attribute(struct otlp *o, struct pb *resource, struct pb *kv,
			       struct pb *value, const char *key, const char *str, int64_t num)
{
	if (str)
		text(o, value, ANY_STRING, str);
	else
		pb_uint(value, ANY_INT, (uint64_t)num);
	pb_string(kv, KEY_VALUE_KEY, key);
	pb_message(kv, KEY_VALUE_VALUE, value);
	pb_message(resource, RESOURCE_ATTRIBUTES, kv);
}

/* The name process pid goes by: its leader's comm, else any of its threads'; NULL: none. */
static const char *process_name(const struct snapshot *s, pid_t pid)
{
	const char *any = NULL;

	for (size_t i = 0; i < s->nthreads; i++) {
		const struct snapshot_thread *t = &s->threads[i];

		if (t->pid != pid || !t->comm || !*t->comm)
			continue;
		if (t->tid == pid)
			return t->comm;
		any = any ? any : t->comm;
	}
	return any;
}

/* The processes of the trees written, in the order their first thread comes (0: no thread). */
static size_t processes(const struct export_model *m, pid_t **out)
{
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;

	for (size_t k = 0; k <= SNAPSHOT_NCOMPANIONS; k++) {
		const struct model_tree *trees = k < SNAPSHOT_NCOMPANIONS ? m->part_trees[k] : m->trees;
		size_t ntrees = k < SNAPSHOT_NCOMPANIONS ? m->part_ntrees[k] : m->ntrees;

		for (size_t i = 0; i < ntrees; i++) {
			pid_t pid = trees[i].thread ? trees[i].thread->pid : 0;
			size_t j = 0;

			while (j < n && pids[j] != pid)
				j++;
			if (j == n) {
				xgrow((void **)&pids, &cap, n + 1, sizeof(*pids));
				pids[n++] = pid;
			}
		}
	}
	*out = pids;
	return n;
}

static void resource_profiles(struct otlp *o, struct pb *out, const struct otlp_origin *origin)
{
	const struct snapshot *s = o->m.s;
	struct pb resource = { 0 }, scope = { 0 }, msg = { 0 }, kv = { 0 }, value = { 0 };
	char host[256] = "";
	pid_t *pids;
	size_t n = processes(&o->m, &pids);
	const char *service = origin && origin->service ? origin->service : NULL;

	if (origin && origin->host)
		snprintf(host, sizeof(host), "%s", origin->host);
	else if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	for (size_t i = 0; i < n && !service; i++)
		service = process_name(s, pids[i]);
	for (size_t i = 0; i < n; i++) {
		const char *name = process_name(s, pids[i]);

		if (pids[i])
			resource_attribute(o, &resource, &kv, &value, "process.pid", NULL, pids[i]);
		if (name)
			resource_attribute(o, &resource, &kv, &value, "process.executable.name", name, 0);
		resource_attribute(o, &resource, &kv, &value, "service.name",
				   service ? service : "proftop", 0);
		if (host[0])
			resource_attribute(o, &resource, &kv, &value, "host.name", host, 0);
		pb_message(&msg, RESOURCE_PROFILES_RESOURCE, &resource);
		pb_string(&kv, SCOPE_NAME, "proftop");
		pb_string(&kv, SCOPE_VERSION, PROFTOP_VERSION);
		pb_message(&scope, SCOPE_PROFILES_SCOPE, &kv);
		profiles_of(o, &scope, pids[i]);
		pb_message(&msg, RESOURCE_PROFILES_SCOPE_PROFILES, &scope);
		pb_message(out, REQUEST_RESOURCE_PROFILES, &msg);
	}
	free(pids);
	pb_free(&resource);
	pb_free(&scope);
	pb_free(&msg);
	pb_free(&kv);
	pb_free(&value);
}

/* --- the dictionary's tables -------------------------------------------------------------------- */

static uint64_t function_of(struct otlp *o, uint32_t func)
{
	if (!o->function_index[func]) {
		o->functions = xrealloc(o->functions, (o->nfunctions + 1) * sizeof(*o->functions));
		o->functions[o->nfunctions++] = func;
		o->function_index[func] = (uint32_t)o->nfunctions;
	}
	return o->function_index[func];
}

static uint64_t mapping_of(struct otlp *o, uint32_t mapping)
{
	if (!mapping)
		return 0;
	if (!o->mapping_index[mapping]) {
		o->mappings = xrealloc(o->mappings, (o->nmappings + 1) * sizeof(*o->mappings));
		o->mappings[o->nmappings++] = mapping;
		o->mapping_index[mapping] = (uint32_t)o->nmappings;
	}
	return o->mapping_index[mapping];
}

/* A Location the samples use, encoded into its place. */
static void location(void *arg, uint64_t id, uint32_t mapping, uint64_t addr,
		     const struct model_line *lines, size_t nlines)
{
	struct otlp *o = arg;
	uint32_t i = idmap_get(&o->location_index, id);
	size_t at = o->locations.len;

	if (i == IDMAP_MISSING)
		return; /* no sample has it */
	pb_uint(&o->locations, LOCATION_MAPPING, mapping_of(o, mapping));
	pb_uint(&o->locations, LOCATION_ADDRESS, addr);
	for (size_t k = 0; k < nlines; k++) {
		pb_uint(&o->tmp, LINE_FUNCTION, function_of(o, lines[k].func));
		pb_uint(&o->tmp, LINE_LINE, lines[k].line);
		pb_message(&o->locations, LOCATION_LINES, &o->tmp);
	}
	o->location_at[i] = at;
	o->location_len[i] = o->locations.len - at;
}

static void dictionary(struct otlp *o, struct pb *out)
{
	struct export_model *m = &o->m;
	const struct snapshot *s = m->s;
	struct pb dict = { 0 }, msg = { 0 };
	static const uint8_t zeros[16];
	uint64_t *build_id_attribute;

	model_mappings_finish(m);
	model_locations(m, location, o);
	/* Strings and attributes first: the tables below index them. */
	build_id_attribute = xcalloc(o->nmappings + 1, sizeof(*build_id_attribute));
	for (size_t i = 0; i < o->nmappings; i++) {
		const struct model_mapping *mp = &m->mappings[o->mappings[i] - 1];
		char hex[2 * DEBUGFILE_BUILD_ID_MAX + 1];

		model_string(m, mp->key);
		model_build_id_hex(mp, hex);
		if (hex[0])
			build_id_attribute[i] = attribute(o, "process.executable.build_id.gnu", hex, 0);
	}
	for (size_t i = 0; i < o->nfunctions; i++) {
		uint32_t first = model_first_site(m, o->functions[i]);

		model_string(m, s->funcs[o->functions[i]].name);
		if (first != MODEL_NO_SITE && s->sites[first].file)
			model_string(m, s->sites[first].file);
	}

	pb_message(&dict, DICT_MAPPINGS, &msg);
	for (size_t i = 0; i < o->nmappings; i++) {
		const struct model_mapping *mp = &m->mappings[o->mappings[i] - 1];

		pb_uint(&msg, MAPPING_START, mp->start);
		pb_uint(&msg, MAPPING_LIMIT, mp->limit);
		pb_uint(&msg, MAPPING_OFFSET, mp->offset);
		pb_uint(&msg, MAPPING_FILENAME, model_string(m, mp->key));
		pb_packed(&msg, MAPPING_ATTRIBUTES, &build_id_attribute[i], build_id_attribute[i] ? 1 : 0);
		pb_message(&dict, DICT_MAPPINGS, &msg);
	}
	for (size_t i = 0; i <= o->nlocations; i++)
		pb_bytes(&dict, DICT_LOCATIONS, i ? o->locations.buf + o->location_at[i] : NULL,
			 i ? o->location_len[i] : 0);
	pb_message(&dict, DICT_FUNCTIONS, &msg);
	for (size_t i = 0; i < o->nfunctions; i++) {
		uint32_t f = o->functions[i], first = model_first_site(m, f);

		pb_uint(&msg, FUNCTION_NAME, model_string(m, s->funcs[f].name));
		pb_uint(&msg, FUNCTION_SYSTEM_NAME, model_string(m, s->funcs[f].name));
		if (first != MODEL_NO_SITE && s->sites[first].file)
			pb_uint(&msg, FUNCTION_FILENAME, model_string(m, s->sites[first].file));
		pb_message(&dict, DICT_FUNCTIONS, &msg);
	}
	/* The zero link as the schema prefers it: ids of their full lengths, all zero. */
	pb_bytes(&msg, LINK_TRACE_ID, zeros, 16);
	pb_bytes(&msg, LINK_SPAN_ID, zeros, 8);
	pb_message(&dict, DICT_LINKS, &msg);
	for (size_t i = 0; i < m->nstrings; i++)
		text(o, &dict, DICT_STRINGS, m->strings[i]);
	pb_message(&dict, DICT_ATTRIBUTES, &msg);
	pb_raw(&dict, o->attributes.buf, o->attributes.len);
	pb_message(&dict, DICT_STACKS, &msg);
	for (size_t i = 0; i < o->nstacks; i++) {
		xgrow((void **)&o->stack, &o->stack_cap, o->stack_len[i] + 1, sizeof(*o->stack));
		for (uint32_t k = 0; k < o->stack_len[i]; k++)
			o->stack[k] = o->stack_locations[o->stack_at[i] + k];
		pb_packed(&msg, STACK_LOCATIONS, o->stack, o->stack_len[i]);
		pb_message(&dict, DICT_STACKS, &msg);
	}
	pb_message(out, REQUEST_DICTIONARY, &dict);
	free(build_id_attribute);
	pb_free(&dict);
	pb_free(&msg);
}

void otlp_encode(struct pb *out, const struct snapshot *s, const struct export_scope *scope,
		 const struct otlp_origin *origin)
{
	struct otlp o = { 0 };

	model_init(&o.m, s, scope);
	idmap_init(&o.location_index);
	idmap_init(&o.stack_index);
	idmap_init(&o.thread_attributes);
	o.function_index = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*o.function_index));
	o.mapping_index = xcalloc(o.m.nmappings + 1, sizeof(*o.mapping_index));
	resource_profiles(&o, out, origin);
	dictionary(&o, out);

	idmap_free(&o.location_index);
	idmap_free(&o.stack_index);
	idmap_free(&o.thread_attributes);
	free(o.location_at);
	free(o.location_len);
	free(o.function_index);
	free(o.functions);
	free(o.mapping_index);
	free(o.mappings);
	free(o.stack_locations);
	free(o.stack_at);
	free(o.stack_len);
	free(o.sample_stack);
	free(o.stack);
	free(o.visible);
	pb_free(&o.locations);
	pb_free(&o.attributes);
	pb_free(&o.profile);
	pb_free(&o.sample);
	pb_free(&o.tmp);
	pb_free(&o.tmp2);
	model_free(&o.m);
}

/* --- -f otlp ------------------------------------------------------------------------------------ */

static char *file_service;

void export_otlp_set_service(const char *service)
{
	free(file_service);
	file_service = service ? xstrdup(service) : NULL;
}

int export_otlp(FILE *out, const struct snapshot *s, const struct export_scope *scope)
{
	struct otlp_origin origin = { file_service, NULL };
	struct pb request = { 0 };
	int err = 0;

	otlp_encode(&request, s, scope, &origin);
	if (fwrite(request.buf, 1, request.len, out) != request.len || fflush(out))
		err = -(errno ? errno : EIO);
	pb_free(&request);
	return err;
}
