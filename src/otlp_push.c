/* otlp_push.c — the profile of every interval, pushed to an OpenTelemetry collector
 * (otlp_push.h), with libcurl. */
#include "proftop/otlp_push.h"

#include "proftop/collector.h"
#include "proftop/export_otlp.h"
#include "proftop/kinds.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

#define NS 1000000000ull
#define MS 1000000ull
/* A stretch is pushed this long after its last second ended: the collector's publication of
 * that second has come by then. */
#define PUSH_LAG_NS (300 * MS)
#define CONNECT_TIMEOUT_MS 3000L
#define REQUEST_TIMEOUT_MS 10000L
#define BACKOFF_FIRST_NS NS
#define BACKOFF_MAX_NS (32 * NS)
#define RETRY_AFTER_MAX_S 60
#define URL_MAX 2048

/* A request waiting to be sent: the encoded request, and its gzip form once made. */
struct request {
	struct pb body;
	struct pb gzipped;
	unsigned tries;
	uint64_t not_before_ns;     /* a retry waits until then (CLOCK_MONOTONIC) */
};

struct otlp_push {
	struct collector *collector;
	char *url;
	unsigned interval;
	char *service;
	const char *kind;           /* the kind pushed: the one shown when pushing started */
	CURL *curl;
	struct curl_slist *headers[2]; /* with gzip, and without */
	bool identity;              /* the receiver refused gzip: send the rest uncompressed */
	long retry_after_s;         /* the last answer's Retry-After (-1: none) */
	bool unreachable;           /* the last try could not connect */
	uint64_t from_s;            /* the next stretch starts at this second */

	pthread_t thread;
	bool started, finished;
	pthread_mutex_t lock;
	pthread_cond_t wake;        /* on CLOCK_MONOTONIC */
	bool finishing;             /* under lock */
	/* When profiling ended: a try in flight then ends at the final deadline at the latest (a
	 * receiver that hangs holds up nobody; one that answers slowly is not cut off early: a
	 * request it took would be sent again). 0: none. */
	_Atomic uint64_t abort_at_ns;

	struct request queue[OTLP_PUSH_QUEUE_MAX]; /* a ring: head, count (the thread's own) */
	size_t head, count;
	atomic_uint_fast64_t pushed, retried, dropped;
};

const char *otlp_push_check_endpoint(const char *endpoint)
{
	size_t len = strlen(endpoint);

	if (strncmp(endpoint, "http://", 7) && strncmp(endpoint, "https://", 8))
		return "a URL that starts with http:// or https://";
	if (len > URL_MAX - 32)
		return "longer than 2,000 bytes";
	if (len == strlen(endpoint[4] == 's' ? "https://" : "http://"))
		return "it names no host";
	for (const char *p = endpoint; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return "it holds a space or a control character";
	return NULL;
}

/* --- sending ------------------------------------------------------------------------------------ */

static size_t discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

/* Retry-After in seconds (an HTTP date is turned into the seconds until it). */
static size_t header(char *line, size_t size, size_t n, void *arg)
{
	struct otlp_push *p = arg;
	size_t len = size * n;
	char value[128];

	if (len > 12 && !strncasecmp(line, "Retry-After:", 12)) {
		size_t v = len - 12 < sizeof(value) - 1 ? len - 12 : sizeof(value) - 1;
		char *end;
		long s;

		memcpy(value, line + 12, v);
		value[v] = '\0';
		s = strtol(value, &end, 10);
		if (end == value) {
			time_t when = curl_getdate(value, NULL);

			s = when > 0 ? (long)(when - time(NULL)) : -1;
		}
		p->retry_after_s = s < 0 ? 0 : s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S : s;
	}
	return len;
}

/* libcurl asks often while a try is in flight: a non-zero answer ends it. */
static int progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		    curl_off_t ulnow)
{
	struct otlp_push *p = arg;
	uint64_t at = atomic_load(&p->abort_at_ns);

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return at && util_now_ns() >= at;
}

static void gzip(const struct pb *in, struct pb *out)
{
	z_stream z = { 0 };
	uLong bound;

	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		fatal("out of memory (zlib)");
	bound = deflateBound(&z, (uLong)in->len) + 32;
	xgrow((void **)&out->buf, &out->cap, bound, 1);
	z.next_in = in->buf;
	z.avail_in = (uInt)in->len;
	z.next_out = out->buf;
	z.avail_out = (uInt)bound;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		fatal("zlib: the compressed request did not fit its bound");
	out->len = z.total_out;
	deflateEnd(&z);
}

enum outcome { SENT, RETRY, DROP };

/* One try of request r, within timeout_ms. */
static enum outcome post(struct otlp_push *p, struct request *r, long timeout_ms)
{
	struct pb *body = &r->body;
	long code = 0;
	CURLcode rc;

	if (!p->identity) {
		if (!r->gzipped.len)
			gzip(&r->body, &r->gzipped);
		body = &r->gzipped;
	}
	p->retry_after_s = -1;
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, p->headers[p->identity]);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, (const char *)body->buf);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout_ms < CONNECT_TIMEOUT_MS ? timeout_ms : CONNECT_TIMEOUT_MS);
	rc = curl_easy_perform(p->curl);
	p->unreachable = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
	if (rc != CURLE_OK)
		return RETRY; /* refused, unreachable, no answer in time */
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return SENT;
	if (code == 415 && !p->identity) {
		p->identity = true;
		return RETRY;
	}
	if (code == 429 || code == 502 || code == 503 || code == 504)
		return RETRY;
	return DROP;
}

static void request_free(struct request *r)
{
	pb_free(&r->body);
	pb_free(&r->gzipped);
}

static void drop_head(struct otlp_push *p)
{
	request_free(&p->queue[p->head]);
	p->head = (p->head + 1) % OTLP_PUSH_QUEUE_MAX;
	p->count--;
}

/* Send the queue in order until it is empty, its head waits for a retry, or deadline_ns
 * (CLOCK_MONOTONIC; 0: none) passes. */
static void send_queue(struct otlp_push *p, uint64_t deadline_ns)
{
	while (p->count) {
		struct request *r = &p->queue[p->head];
		uint64_t now = util_now_ns();
		long timeout_ms = REQUEST_TIMEOUT_MS;
		enum outcome o;

		if (deadline_ns) {
			if (now >= deadline_ns)
				return;
			if ((deadline_ns - now) / MS < (uint64_t)timeout_ms)
				timeout_ms = (long)((deadline_ns - now) / MS) + 1;
		}
		if (r->not_before_ns > now)
			return;
		o = post(p, r, timeout_ms);
		/* At the end nobody waits seconds for a receiver that is not there. */
		if (o == RETRY && deadline_ns && p->unreachable)
			o = DROP;
		if (o == SENT) {
			atomic_fetch_add(&p->pushed, 1);
			drop_head(p);
		} else if (o == DROP || r->tries >= OTLP_PUSH_RETRIES) {
			atomic_fetch_add(&p->dropped, 1);
			drop_head(p);
		} else {
			uint64_t backoff = BACKOFF_FIRST_NS << r->tries;

			atomic_fetch_add(&p->retried, 1);
			r->tries++;
			if (backoff > BACKOFF_MAX_NS)
				backoff = BACKOFF_MAX_NS;
			if (p->retry_after_s >= 0)
				backoff = (uint64_t)p->retry_after_s * NS;
			r->not_before_ns = util_now_ns() + backoff;
		}
	}
}

/* --- making the profiles ------------------------------------------------------------------------ */

/* The profile of the seconds [from_s, to_s) (or of now, for a kind without stretches) into the
 * queue; the oldest queued is dropped when it is full. */
static void enqueue(struct otlp_push *p, uint64_t from_s, uint64_t to_s)
{
	struct otlp_origin origin = { p->service, NULL };
	struct export_scope scope;
	struct snapshot *s, *range = NULL;
	struct request *r;

	if (kinds_keeps_stretches(p->collector, p->kind))
		s = kinds_stretch(p->collector, p->kind, from_s, to_s);
	else
		s = collector_newest(p->collector, &range);
	snapshot_unref(range);
	if (!s)
		return;
	if (p->count == OTLP_PUSH_QUEUE_MAX) {
		atomic_fetch_add(&p->dropped, 1);
		drop_head(p);
	}
	r = &p->queue[(p->head + p->count++) % OTLP_PUSH_QUEUE_MAX];
	*r = (struct request){ 0 };
	export_scope_merged(&scope, s);
	otlp_encode(&r->body, s, &scope, &origin);
	snapshot_unref(s);
}

/* Wait until deadline_ns (CLOCK_MONOTONIC) or until finishing; true when finishing. */
static bool wait_until(struct otlp_push *p, uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / NS), (long)(deadline_ns % NS) };
	bool finishing;

	pthread_mutex_lock(&p->lock);
	while (!p->finishing && util_now_ns() < deadline_ns)
		pthread_cond_timedwait(&p->wake, &p->lock, &ts);
	finishing = p->finishing;
	pthread_mutex_unlock(&p->lock);
	return finishing;
}

static void *pusher(void *arg)
{
	struct otlp_push *p = arg;

	for (;;) {
		bool ended;
		uint64_t elapsed = collector_elapsed(p->collector, &ended), now = util_now_ns();
		uint64_t to_s = p->from_s + p->interval, due = to_s * NS + PUSH_LAG_NS;
		uint64_t wake = now + (due > elapsed ? due - elapsed : 0);

		if (ended)
			break;
		if (p->count && p->queue[p->head].not_before_ns < wake)
			wake = p->queue[p->head].not_before_ns;
		if (wait_until(p, wake))
			break;
		elapsed = collector_elapsed(p->collector, &ended);
		if (!ended && elapsed >= due) {
			enqueue(p, p->from_s, to_s);
			p->from_s = to_s;
		}
		send_queue(p, 0);
	}
	return NULL;
}

/* --- the pusher --------------------------------------------------------------------------------- */

int otlp_push_new(struct otlp_push **out, const struct otlp_push_options *o, char **message)
{
	const char *why = otlp_push_check_endpoint(o->endpoint);
	struct otlp_push *p;
	size_t len;

	*out = NULL;
	if (why) {
		*message = xstrdup(why);
		return -EINVAL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		*message = xstrdup("libcurl could not be set up");
		return -EINVAL;
	}
	p = xcalloc(1, sizeof(*p));
	len = strlen(o->endpoint);
	while (len && o->endpoint[len - 1] == '/')
		len--;
	p->url = xasprintf("%.*s/v1development/profiles", (int)len, o->endpoint);
	p->interval = o->interval ? o->interval : OTLP_PUSH_DEFAULT_INTERVAL;
	p->service = o->service ? xstrdup(o->service) : NULL;
	p->curl = curl_easy_init();
	if (!p->curl)
		fatal("out of memory (libcurl)");
	p->headers[0] = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	p->headers[0] = curl_slist_append(p->headers[0], "Content-Encoding: gzip");
	p->headers[1] = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	if (!p->headers[0] || !p->headers[1])
		fatal("out of memory (libcurl)");
	curl_easy_setopt(p->curl, CURLOPT_URL, p->url);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L); /* a thread of its own: no SIGALRM */
	curl_easy_setopt(p->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "proftop/" PROFTOP_VERSION);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, header);
	curl_easy_setopt(p->curl, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	/* Only the endpoint given: no redirect elsewhere, no other protocol. */
	curl_easy_setopt(p->curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	pthread_mutex_init(&p->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&p->wake, &attr);
		pthread_condattr_destroy(&attr);
	}
	*out = p;
	return 0;
}

int otlp_push_start(struct otlp_push *p, struct collector *collector)
{
	int err;

	p->collector = collector;
	p->kind = kinds_shown(collector);
	err = pthread_create(&p->thread, NULL, pusher, p);
	p->started = !err;
	return -err;
}

void otlp_push_counts(const struct otlp_push *p, struct counters *c)
{
	c->pushing = 1;
	c->pushed = atomic_load_explicit(&p->pushed, memory_order_relaxed);
	c->push_retried = atomic_load_explicit(&p->retried, memory_order_relaxed);
	c->push_dropped = atomic_load_explicit(&p->dropped, memory_order_relaxed);
}

void otlp_push_finish(struct otlp_push *p)
{
	uint64_t deadline = util_now_ns() + OTLP_PUSH_FINAL_MS * MS, elapsed;
	bool ended;

	if (!p || !p->started || p->finished)
		return;
	p->finished = true;
	pthread_mutex_lock(&p->lock);
	p->finishing = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	atomic_store(&p->abort_at_ns, deadline);
	pthread_join(p->thread, NULL);
	/* The run's last stretch, to its last second begun. */
	elapsed = collector_elapsed(p->collector, &ended);
	if ((elapsed + NS - 1) / NS > p->from_s || !kinds_keeps_stretches(p->collector, p->kind))
		enqueue(p, p->from_s, (elapsed + NS - 1) / NS);
	while (p->count && util_now_ns() < deadline) {
		uint64_t next = p->queue[p->head].not_before_ns;

		if (next >= deadline)
			break;
		if (next > util_now_ns()) { /* a retry's backoff, within the time left */
			struct timespec at = { (time_t)(next / NS), (long)(next % NS) };

			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
				;
		}
		send_queue(p, deadline);
	}
	while (p->count) {
		atomic_fetch_add(&p->dropped, 1);
		drop_head(p);
	}
}

void otlp_push_free(struct otlp_push *p)
{
	if (!p)
		return;
	otlp_push_finish(p);
	curl_slist_free_all(p->headers[0]);
	curl_slist_free_all(p->headers[1]);
	curl_easy_cleanup(p->curl);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	free(p->url);
	free(p->service);
	free(p);
}
