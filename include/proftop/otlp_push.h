/* otlp_push.h — --otlp-endpoint: the profile of every interval sent to an OpenTelemetry
 * collector as OTLP/HTTP does (POST URL/v1development/profiles, application/x-protobuf, gzip),
 * from a thread of its own: the sampler and the screen never wait for it.
 *
 * Each interval's profile (a stretch of the run: collector_stretch(); an in-use profile, which
 * is of now, whole) is encoded (export_otlp.h) into a bounded queue; the thread sends the queue
 * in order. A 429, 502, 503 or 504 answer, or no answer, is retried after a backoff that doubles
 * from a second (to 32), or after the time the answer's Retry-After asks (to a minute); a
 * request retried 5 times, or answered with another error, is dropped, as is the oldest
 * queued one when the queue is full. A receiver that refuses gzip (415) gets the rest
 * uncompressed. When profiling ends, the last stretch is pushed and the queue sent for at most
 * OTLP_PUSH_FINAL_MS; what is left then is dropped. What was sent, retried and dropped is
 * counted (struct counters). */
#ifndef PROFTOP_OTLP_PUSH_H
#define PROFTOP_OTLP_PUSH_H

#include "proftop/counters.h"

#include <stdbool.h>

#define OTLP_PUSH_DEFAULT_INTERVAL 10
#define OTLP_PUSH_QUEUE_MAX 16
#define OTLP_PUSH_RETRIES 5
#define OTLP_PUSH_FINAL_MS 5000

struct collector;
struct otlp_push;

struct otlp_push_options {
	const char *endpoint;   /* http:// or https://HOST[:PORT][/PATH]: the path is appended to */
	unsigned interval;      /* seconds between pushes */
	const char *service;    /* service.name; NULL: the command's name */
};

/* Whether endpoint is a URL proftop can push to (NULL) or why not (a static message). */
const char *otlp_push_check_endpoint(const char *endpoint);

/* A pusher to options->endpoint, not yet pushing. Returns 0, or -EINVAL with a malloc'd
 * *message. */
int otlp_push_new(struct otlp_push **push, const struct otlp_push_options *options,
		  char **message);
/* Start pushing what collector profiles (once it started). Returns 0 or -errno. */
int otlp_push_start(struct otlp_push *push, struct collector *collector);
/* What it did so far, into counters (pushing, pushed, push_retried, push_dropped). Any thread. */
void otlp_push_counts(const struct otlp_push *push, struct counters *counters);
/* Profiling ended: push the last stretch and send what is queued for at most OTLP_PUSH_FINAL_MS
 * (a receiver that cannot be reached then is not waited for); the thread stops. Once; NULL or a
 * pusher never started: nothing. */
void otlp_push_finish(struct otlp_push *push);
/* After the collector that counts it (collector_count_also()) is freed. NULL: nothing. */
void otlp_push_free(struct otlp_push *push);

#endif
