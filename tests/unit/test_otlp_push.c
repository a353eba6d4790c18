/* The OTLP pusher's threads (otlp_push.c) against a receiver of the test's own on a loopback
 * port, over a running collector fed records on another thread: every interval's profile is
 * POSTed gzipped to /v1development/profiles, 503s are retried (Retry-After: 0) and counted, the
 * counts reach the snapshots' counters, and the end pushes the last stretch. make tsan runs this
 * under ThreadSanitizer (otlp.sh decodes what is sent with the official schema). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/collector.h"
#include "proftop/otlp_push.h"
#include "proftop/ring.h"
#include "proftop/util.h"
#include "unit_records.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <zlib.h>

static const struct sample_config config = { 999, false, CALLGRAPH_NONE, 0 };

__attribute__((noinline)) static void pushed_hot(void) { __asm__ volatile(""); }

struct receiver {
	int listen_fd;
	unsigned busy;              /* answer 503 to this many requests first */
	atomic_uint requests, good; /* requests read; bodies that were gzipped requests */
	atomic_bool done;
};

struct live {
	struct ring *ring;
	struct collector *collector;
	atomic_bool done;
};

static void *producer(void *arg)
{
	struct live *l = arg;

	while (!atomic_load(&l->done)) {
		push_sample(l->ring, (uint64_t)(uintptr_t)pushed_hot, (uint32_t)getpid(), util_now_ns());
		usleep(1000);
	}
	return NULL;
}

/* Whether body (len bytes) is a gzipped ExportProfilesServiceRequest: it inflates, and its first
 * field is resource_profiles (1, length-delimited). */
static bool gzipped_request(const unsigned char *body, size_t len)
{
	unsigned char out[1 << 16];
	z_stream z = { 0 };
	bool ok;

	if (len < 2 || body[0] != 0x1f || body[1] != 0x8b || inflateInit2(&z, 15 + 16) != Z_OK)
		return false;
	z.next_in = (unsigned char *)(uintptr_t)body;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	ok = inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out > 2 && out[0] == 0x0a;
	inflateEnd(&z);
	return ok;
}

/* One connection: requests until the client closes it, each read whole (headers, then
 * Content-Length bytes) and answered. */
static void serve_connection(struct receiver *r, int fd)
{
	static char buf[1 << 20];
	size_t len = 0;

	for (;;) {
		char *end = memmem(buf, len, "\r\n\r\n", 4), *cl;
		size_t head, body;
		ssize_t n;

		if (!end) {
			if (len == sizeof(buf) || (n = read(fd, buf + len, sizeof(buf) - len)) <= 0)
				return;
			len += (size_t)n;
			continue;
		}
		head = (size_t)(end + 4 - buf);
		buf[head - 1] = '\0';
		cl = strcasestr(buf, "Content-Length:");
		body = cl ? strtoul(cl + 15, NULL, 10) : 0;
		while (len < head + body && len < sizeof(buf) &&
		       (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
			len += (size_t)n;
		if (len < head + body)
			return;
		{
			unsigned k = atomic_fetch_add(&r->requests, 1) + 1;
			bool busy = k <= r->busy;
			const char *answer = busy ? "HTTP/1.1 503 Busy\r\nRetry-After: 0\r\n"
						    "Content-Length: 0\r\n\r\n"
						  : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

			if (!strncmp(buf, "POST /v1development/profiles ", 29) &&
			    strcasestr(buf, "Content-Type: application/x-protobuf") &&
			    strcasestr(buf, "Content-Encoding: gzip") &&
			    gzipped_request((unsigned char *)buf + head, body) && !busy)
				atomic_fetch_add(&r->good, 1);
			if (write(fd, answer, strlen(answer)) < 0)
				return;
		}
		memmove(buf, buf + head + body, len - head - body);
		len -= head + body;
	}
}

static void *receive(void *arg)
{
	struct receiver *r = arg;

	while (!atomic_load(&r->done)) {
		int fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			continue;
		serve_connection(r, fd);
		close(fd);
	}
	return NULL;
}

static int listen_loopback(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void count_pushes(void *arg, struct counters *counters)
{
	otlp_push_counts(arg, counters);
}

/* A second's profile a push, two 503s retried on the way, the last stretch at the end: what the
 * receiver took is what the pusher counted, and the snapshots say so. */
static void pushes_every_interval(void **state)
{
	struct live l = { .ring = ring_create(1 << 20) };
	struct receiver r = { .busy = 2 };
	struct otlp_push *push;
	struct otlp_push_options o = { NULL, 1, "unit" };
	struct counters c = { 0 };
	struct snapshot *s, *range;
	pthread_t prod, recv;
	char url[64], *message = NULL;
	uint16_t port;

	(void)state;
	r.listen_fd = listen_loopback(&port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", port);
	o.endpoint = url;
	assert_int_equal(pthread_create(&recv, NULL, receive, &r), 0);
	assert_int_equal(collector_new(&l.collector, l.ring, NULL, &config, NULL), 0);
	collector_set_history(l.collector, 60);
	assert_int_equal(otlp_push_new(&push, &o, &message), 0);
	collector_count_also(l.collector, count_pushes, push);
	assert_int_equal(collector_start(l.collector, NULL, 0), 0);
	assert_int_equal(otlp_push_start(push, l.collector), 0);
	assert_int_equal(pthread_create(&prod, NULL, producer, &l), 0);
	usleep(2600 * 1000);
	atomic_store(&l.done, true);
	pthread_join(prod, NULL);
	collector_finish(l.collector);
	otlp_push_finish(push);
	collector_finish(l.collector); /* published again: the counters of the last push */
	s = collector_newest(l.collector, &range);
	snapshot_unref(range);
	otlp_push_counts(push, &c);
	/* Two whole seconds, then the end's stretch; each sent once. */
	assert_true(c.pushed >= 3);
	assert_int_equal(c.push_retried, 2);
	assert_int_equal(c.push_dropped, 0);
	assert_int_equal(atomic_load(&r.good), c.pushed);
	assert_int_equal(atomic_load(&r.requests), c.pushed + c.push_retried);
	assert_non_null(s);
	assert_int_equal(s->counters.pushing, 1);
	assert_int_equal(s->counters.pushed, c.pushed);
	snapshot_unref(s);
	collector_free(l.collector);
	otlp_push_free(push);
	atomic_store(&r.done, true);
	shutdown(r.listen_fd, SHUT_RDWR);
	close(r.listen_fd);
	pthread_join(recv, NULL);
	ring_destroy(l.ring);
}

/* Endpoints: http or https, a host, no space or control character. */
static void endpoints(void **state)
{
	static const char *const good[] = { "http://127.0.0.1:4318", "https://otel.example:443/x/" };
	static const char *const bad[] = { "", "ftp://h", "http://", "https://", "http://h /",
					   "http://h\n", "127.0.0.1:4318" };
	struct otlp_push_options o = { NULL, 0, NULL };
	struct otlp_push *push;
	char *message = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		assert_null(otlp_push_check_endpoint(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_non_null(otlp_push_check_endpoint(bad[i]));
		o.endpoint = bad[i];
		assert_int_equal(otlp_push_new(&push, &o, &message), -EINVAL);
		assert_null(push);
		assert_non_null(message);
		free(message);
	}
	/* Made and freed without ever starting: nothing pushed, nothing left. */
	o.endpoint = good[0];
	assert_int_equal(otlp_push_new(&push, &o, &message), 0);
	otlp_push_finish(push);
	otlp_push_free(push);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(endpoints),
		cmocka_unit_test(pushes_every_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
