/* The HTTP endpoint: its addresses and requests, and the real server (libmicrohttpd on a
 * loopback port) over a running collector fed records on another thread, asked by several
 * clients at once — the profile of the next second, everything so far, bad requests — and
 * stopped while a request still waits; clients that go while their profile waits, and clients
 * trickling a request that never ends. make tsan runs this under ThreadSanitizer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/collector.h"
#include "proftop/ring.h"
#include "proftop/serve.h"
#include "proftop/util.h"
#include "unit_records.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>

static const struct sample_config config = { 999, false, CALLGRAPH_NONE, 0 };

__attribute__((noinline)) static void served_hot(void) { __asm__ volatile(""); }
__attribute__((noinline)) static void served_cold(void) { __asm__ volatile(""); }

/* --- addresses -------------------------------------------------------------------------------- */

static void check_address(const char *text, const char *want, bool local)
{
	struct serve_address a;
	char *message, shown[80];

	assert_int_equal(serve_parse_address(text, &a, &message), 0);
	serve_address_text(&a, shown, sizeof(shown));
	assert_string_equal(shown, want);
	assert_int_equal(serve_address_local(&a), local);
}

static void addresses(void **state)
{
	static const char *const bad[] = {
		"", "abc", "70000", "-1", ":6060", "1.2.3:80", "[::1", "[::1]", "::1:80",
		"localhost:80", "127.0.0.1:", "127.0.0.1:6060x", "0x10", " 80", "[zz]:80",
	};

	(void)state;
	check_address("6060", "127.0.0.1:6060", true);
	check_address("0", "127.0.0.1:0", true);
	check_address("0.0.0.0:80", "0.0.0.0:80", false);
	check_address("127.0.0.2:1", "127.0.0.2:1", true);
	check_address("[::1]:6060", "[::1]:6060", true);
	check_address("[::]:6060", "[::]:6060", false);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct serve_address a;
		char *message;

		assert_int_equal(serve_parse_address(bad[i], &a, &message), -EINVAL);
		assert_non_null(strstr(message, "--serve"));
		free(message);
	}
}

/* --- requests --------------------------------------------------------------------------------- */

/* The request as the server parses it: path, keys and values decoded by serve_unescape(). */
static unsigned parse(const char *method, const char *path, const char *query,
		      struct serve_request *r, char *err)
{
	struct serve_arg args[16];
	char buf[256], where[256], *save = NULL;
	size_t n = 0;

	snprintf(where, sizeof(where), "%s", path);
	serve_unescape(where);
	snprintf(buf, sizeof(buf), "%s", query ? query : "");
	for (char *kv = strtok_r(buf, "&", &save); kv && n < 16; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');

		if (eq) {
			*eq = '\0';
			serve_unescape(eq + 1);
		}
		serve_unescape(kv);
		args[n++] = (struct serve_arg){ kv, eq ? eq + 1 : NULL };
	}
	return serve_parse_request(method, where, args, n, 600, r, err, 256);
}

static void check_unescape(const char *text, const char *want)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s", text);
	assert_int_equal(serve_unescape(buf), strlen(want));
	assert_string_equal(buf, want);
}

/* %XX decodes, but for %00: a NUL would hide the bytes after it. */
static void unescape(void **state)
{
	(void)state;
	check_unescape("", "");
	check_unescape("fold%65d", "folded");
	check_unescape("%2F%2fa%41%7e", "//aA~");
	check_unescape("5%00", "5%00");
	check_unescape("%00%000", "%00%000");
	check_unescape("%0", "%0");
	check_unescape("%", "%");
	check_unescape("a%zz%4", "a%zz%4");
	check_unescape("%01%ff", "\x01\xff");
	check_unescape("%2500", "%00"); /* decoded once, as every server does */
}

static void requests(void **state)
{
	struct serve_request r;
	char err[256];

	(void)state;
	assert_int_equal(parse("GET", "/debug/pprof/profile", NULL, &r, err), 200);
	assert_int_equal(r.page, SERVE_PROFILE);
	assert_int_equal(r.seconds, SERVE_DEFAULT_SECONDS);
	assert_int_equal(r.format, EXPORT_PPROF);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=2&format=folded", &r, err), 200);
	assert_int_equal(r.seconds, 2);
	assert_int_equal(r.format, EXPORT_FOLDED);
	assert_int_equal(parse("HEAD", "/snapshot", "format=callgrind", &r, err), 200);
	assert_int_equal(r.page, SERVE_SNAPSHOT);
	assert_int_equal(r.format, EXPORT_CALLGRIND);
	assert_int_equal(parse("GET", "/debug/pprof/", NULL, &r, err), 200);
	assert_int_equal(r.page, SERVE_INDEX);
	assert_int_equal(parse("GET", "/", NULL, &r, err), 200);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=600", &r, err), 200);

	/* Errors say what was wrong. */
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=601", &r, err), 400);
	assert_non_null(strstr(err, "--history"));
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=0", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=-1", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=1.5", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=99999999999999999999", &r,
			       err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=1&seconds=2", &r, err), 400);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(parse("GET", "/debug/pprof/profile", "format=svg", &r, err), 400);
	assert_non_null(strstr(err, "svg"));
	assert_int_equal(parse("GET", "/debug/pprof/profile", "debug=1", &r, err), 400);
	assert_non_null(strstr(err, "debug"));
	assert_int_equal(parse("GET", "/snapshot", "seconds=1", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/", "format=folded", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "a&b&c&d&e&f&g&h&i", &r, err), 400);
	assert_int_equal(parse("POST", "/debug/pprof/profile", NULL, &r, err), 405);
	assert_int_equal(parse("GET", "/etc/passwd", NULL, &r, err), 404);
	assert_int_equal(parse("GET", "/debug/pprof/heap", NULL, &r, err), 404);
	/* A NUL (%00) hides no bytes: the parameter, or the page, is refused as sent. */
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=5%00", &r, err), 400);
	assert_non_null(strstr(err, "'5%00'"));
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=5%00junk", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "format=pprof%00", &r, err), 400);
	assert_non_null(strstr(err, "'pprof%00'"));
	assert_int_equal(parse("GET", "/snapshot", "format=folded%00x", &r, err), 400);
	assert_int_equal(parse("GET", "/snapshot", "format%00=folded", &r, err), 400);
	assert_int_equal(parse("GET", "/snapshot%00.html", NULL, &r, err), 404);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=5%20", &r, err), 400);
	assert_int_equal(parse("GET", "/debug/pprof/profile", "seconds=%35", &r, err), 200);
	assert_int_equal(r.seconds, 5);
	assert_int_equal(parse("GET", "/snapshot", "format=fold%65d", &r, err), 200);
	assert_int_equal(r.format, EXPORT_FOLDED);
	/* A client's bytes come back visible. */
	assert_int_equal(parse("GET", "/\x1b[2J", NULL, &r, err), 404);
	assert_null(strchr(err, '\x1b'));
	/* No history: no profile of the next seconds, the snapshot still. */
	assert_int_equal(serve_parse_request("GET", "/debug/pprof/profile", NULL, 0, 0, &r, err,
					     sizeof(err)), 400);
	assert_non_null(strstr(err, "/snapshot"));
	assert_int_equal(serve_parse_request("GET", "/snapshot", NULL, 0, 0, &r, err, sizeof(err)),
			 200);
}

/* --- the server ------------------------------------------------------------------------------- */

struct live {
	struct ring *ring;
	struct collector *collector;
	struct server *server;
	atomic_bool done;
	struct sockaddr_in where;
};

/* Samples as they happen, timed now: three in served_hot to one in served_cold. */
static void *producer(void *arg)
{
	struct live *l = arg;
	uint32_t tid = (uint32_t)getpid();

	for (uint64_t i = 0; !atomic_load(&l->done); i++) {
		uint64_t ip = (uint64_t)(uintptr_t)(i % 4 ? served_hot : served_cold);

		push_sample(l->ring, ip, tid, util_now_ns());
		usleep(1000);
	}
	return NULL;
}

/* A collector keeping 60 s of history, fed by producer on *prod, and a server over it on a
 * loopback port of its own. */
static void live_start(struct live *l, pthread_t *prod)
{
	struct serve_address a;
	char *message;

	assert_int_equal(collector_new(&l->collector, l->ring, NULL, &config, NULL), 0);
	collector_set_history(l->collector, 60);
	assert_int_equal(collector_start(l->collector, NULL, 0), 0);
	assert_int_equal(serve_parse_address("0", &a, &message), 0);
	assert_int_equal(serve_start(&l->server, &a, l->collector, 60, &message), 0);
	l->where = (struct sockaddr_in){ .sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
					.sin_port = htons((uint16_t)atoi(strchr(serve_where(l->server),
										':') + 1)) };
	assert_int_equal(pthread_create(prod, NULL, producer, l), 0);
}

struct reply {
	unsigned status;
	char *headers;         /* the head, through the blank line */
	char *body;
	size_t body_len;
};

/* A connection to the server with text sent on it. */
static int send_to(const struct live *l, const char *text)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)&l->where, sizeof(l->where)), 0);
	assert_int_equal(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
	return fd;
}

/* The answer on fd, read to its end; fd is closed. Returns false when it is no HTTP answer
 * (the server closed the connection without one). */
static bool receive(int fd, struct reply *r)
{
	char *all = NULL, *end;
	size_t len = 0, cap = 0;
	ssize_t n;

	do {
		xgrow((void **)&all, &cap, len + 4097, 1);
		n = read(fd, all + len, 4096);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	close(fd);
	all[len] = '\0';
	end = strstr(all, "\r\n\r\n");
	if (sscanf(all, "HTTP/1.%*d %u", &r->status) != 1 || !end) {
		free(all);
		return false;
	}
	r->body_len = len - (size_t)(end + 4 - all);
	r->body = xmalloc(r->body_len + 1);
	memcpy(r->body, end + 4, r->body_len + 1);
	end[2] = '\0';
	r->headers = all;
	return true;
}

/* request is the whole request line and headers; HTTP/1.0 closes after the answer. */
static void get(const struct live *l, const char *request, struct reply *r)
{
	assert_true(receive(send_to(l, request), r));
}

static void reply_free(struct reply *r)
{
	free(r->headers);
	free(r->body);
}

/* The samples a folded profile holds in functions named like name. */
static uint64_t folded_count(const char *body, const char *name)
{
	uint64_t sum = 0;

	for (const char *line = body; line && *line; line = strchr(line, '\n'), line += !!line) {
		const char *eol = strchr(line, '\n'), *sp = eol ? eol : line + strlen(line);

		while (sp > line && sp[-1] != ' ')
			sp--;
		if (memmem(line, (size_t)(sp - line), name, strlen(name)))
			sum += strtoull(sp, NULL, 10);
	}
	return sum;
}

static void *next_second(void *arg)
{
	struct live *l = arg;
	struct reply r;
	uint64_t hot, cold;

	get(l, "GET /debug/pprof/profile?seconds=1&format=folded HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "text/plain"));
	hot = folded_count(r.body, "served_hot");
	cold = folded_count(r.body, "served_cold");
	/* A second of samples at most 1 ms apart, three to one. */
	assert_true(hot + cold > 0 && hot + cold < 1200);
	assert_true(hot > cold);
	reply_free(&r);
	return NULL;
}

static void live_server(void **state)
{
	struct live l = { .ring = ring_create(1 << 20) };
	pthread_t prod, clients[2];
	struct reply r;

	(void)state;
	live_start(&l, &prod);

	/* Two scrapes at once, and everything else meanwhile. */
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&clients[i], NULL, next_second, &l), 0);
	get(&l, "GET /snapshot?format=folded HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	get(&l, "GET /snapshot HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "application/octet-stream"));
	assert_true(r.body_len > 2 && (unsigned char)r.body[0] == 0x1f &&
		    (unsigned char)r.body[1] == 0x8b); /* gzip */
	reply_free(&r);
	get(&l, "GET /debug/pprof/profile?seconds=zero HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.headers, "X-Go-Pprof: 1"));
	assert_non_null(strstr(r.body, "zero"));
	reply_free(&r);
	get(&l, "GET /debug/pprof/profile?seconds=61 HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 400);
	reply_free(&r);
	get(&l, "DELETE /snapshot HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 405);
	reply_free(&r);
	get(&l, "GET /../../etc/passwd HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 404);
	reply_free(&r);
	get(&l, "GET /debug/pprof/ HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "/debug/pprof/profile"));
	reply_free(&r);
	/* A NUL hides no bytes after it (the library would decode %00 and cut the text there). */
	get(&l, "GET /debug/pprof/profile?seconds=1%00&format=folded HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "'1%00'"));
	reply_free(&r);
	get(&l, "GET /snapshot?format=folded%00junk HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "'folded%00junk'"));
	reply_free(&r);
	get(&l, "GET /snapshot%00x HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 404);
	reply_free(&r);
	get(&l, "GET /snapshot?fo%72mat=fold%65d HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "text/plain")); /* folded, not pprof */
	reply_free(&r);
	for (int i = 0; i < 2; i++)
		pthread_join(clients[i], NULL);

	atomic_store(&l.done, true);
	pthread_join(prod, NULL);
	collector_finish(l.collector);
	/* After the end: no next seconds, the whole run still. */
	get(&l, "GET /debug/pprof/profile?seconds=1 HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 500);
	assert_non_null(strstr(r.body, "/snapshot"));
	reply_free(&r);
	get(&l, "GET /snapshot?format=tmon HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "#fOrTyTwO"));
	reply_free(&r);
	serve_stop(l.server);
	collector_free(l.collector);
	ring_destroy(l.ring);
}

/* A request still waiting out its seconds when the server stops gets what was profiled. */
static void *long_wait(void *arg)
{
	struct live *l = arg;
	struct reply r;

	get(l, "GET /debug/pprof/profile?seconds=50&format=folded HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	return NULL;
}

static void stop_answers_waiting(void **state)
{
	struct live l = { .ring = ring_create(1 << 20) };
	pthread_t prod, client;

	(void)state;
	live_start(&l, &prod);
	assert_int_equal(pthread_create(&client, NULL, long_wait, &l), 0);
	usleep(300000);
	serve_stop(l.server); /* as the session does, before the collector ends */
	pthread_join(client, NULL);
	atomic_store(&l.done, true);
	pthread_join(prod, NULL);
	collector_finish(l.collector);
	collector_free(l.collector);
	ring_destroy(l.ring);
}

static void live_end(struct live *l, pthread_t prod)
{
	serve_stop(l->server);
	atomic_store(&l->done, true);
	pthread_join(prod, NULL);
	collector_finish(l->collector);
	collector_free(l->collector);
	ring_destroy(l->ring);
}

/* request on a new connection until the server answers it other than 500 (every profile slot
 * taken) or refused (every connection taken), at most give_up_s seconds (a bound for a failing
 * server, never reached by a working one). Returns whether it answered. */
static bool get_when_free(const struct live *l, const char *request, unsigned give_up_s,
			  struct reply *r)
{
	uint64_t end = util_now_ns() + give_up_s * 1000000000ull;

	while (util_now_ns() < end) {
		if (receive(send_to(l, request), r)) {
			if (r->status != 500)
				return true;
			reply_free(r);
		}
		usleep(50000);
	}
	return false;
}

/* Clients that ask for a profile of many seconds and go while it waits give its slot back at
 * once, however they go: more of them than there are slots, and then a profile is made. */
static void gone_clients_free_slots(void **state)
{
	struct live l = { .ring = ring_create(1 << 20) };
	enum { CLIENTS = SERVE_MAX_WAITING + 2 };
	struct pollfd p[CLIENTS];
	pthread_t prod;
	struct reply r;
	int refused = 0;

	(void)state;
	live_start(&l, &prod);
	for (int i = 0; i < CLIENTS; i++) {
		p[i] = (struct pollfd){ send_to(&l, "GET /debug/pprof/profile?seconds=50 "
					      "HTTP/1.0\r\n\r\n"), POLLIN, 0 };
	}
	/* The slots are all taken once as many clients as are left over were refused (500). */
	while (refused < CLIENTS - SERVE_MAX_WAITING) {
		assert_true(poll(p, CLIENTS, -1) > 0);
		for (int i = 0; i < CLIENTS; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			assert_true(receive(p[i].fd, &r));
			assert_int_equal(r.status, 500);
			reply_free(&r);
			p[i].fd = -1;
			refused++;
		}
	}
	/* The waiting ones go: two close, two reset the connection (a client killed, a proxy). */
	for (int i = 0, n = 0; i < CLIENTS; i++) {
		if (p[i].fd < 0)
			continue;
		if (n++ % 2) {
			struct linger reset = { 1, 0 };

			setsockopt(p[i].fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
		}
		close(p[i].fd);
	}
	/* Each held its slot for 50 s before. */
	assert_true(get_when_free(&l, "GET /debug/pprof/profile?seconds=1&format=folded "
				  "HTTP/1.0\r\n\r\n", 20, &r));
	assert_int_equal(r.status, 200);
	assert_true(folded_count(r.body, "served_hot") > 0);
	reply_free(&r);
	live_end(&l, prod);
}

/* Connections that trickle a request header that never ends, a byte every 0.2 s, until the
 * server closed them all or 30 s passed (a bound for a failing server). */
struct trickle {
	int fd[SERVE_MAX_CONNECTIONS];
	int n;
	bool closed[SERVE_MAX_CONNECTIONS]; /* by the server */
};

static void *trickle(void *arg)
{
	struct trickle *t = arg;
	uint64_t end = util_now_ns() + 30000000000ull;
	int open = t->n;

	while (open && util_now_ns() < end) {
		usleep(200000);
		for (int i = 0; i < t->n; i++) {
			struct pollfd p = { t->fd[i], POLLIN | POLLRDHUP, 0 };
			char c;

			if (t->closed[i])
				continue;
			if ((poll(&p, 1, 0) > 0 && recv(t->fd[i], &c, 1, MSG_DONTWAIT) <= 0) ||
			    send(t->fd[i], "a", 1, MSG_NOSIGNAL) < 0) {
				t->closed[i] = true;
				open--;
			}
		}
	}
	return NULL;
}

struct waited {
	int fd;
	struct reply reply;
	bool answered;
};

static void *wait_answer(void *arg)
{
	struct waited *w = arg;

	w->answered = receive(w->fd, &w->reply);
	return NULL;
}

/* Slowloris: connections trickling their request fill every connection but one, where a profile
 * waits longer than a request may take. They are closed SERVE_REQUEST_SECONDS after they
 * opened (before, they were held as long as they trickled), and a new client is served; the
 * profile is not closed, and is answered in full. */
static void late_requests_closed(void **state)
{
	struct live l = { .ring = ring_create(1 << 20) };
	struct trickle t = { .n = SERVE_MAX_CONNECTIONS - 1 };
	struct waited profile;
	pthread_t prod, trickler, waiter;
	char request[128];
	struct reply r;

	(void)state;
	live_start(&l, &prod);
	snprintf(request, sizeof(request), "GET /debug/pprof/profile?seconds=%d&format=folded "
		 "HTTP/1.0\r\n\r\n", SERVE_REQUEST_SECONDS + 1);
	profile.fd = send_to(&l, request);
	assert_int_equal(pthread_create(&waiter, NULL, wait_answer, &profile), 0);
	for (int i = 0; i < t.n; i++)
		t.fd[i] = send_to(&l, "GET /debug/pprof/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
	assert_int_equal(pthread_create(&trickler, NULL, trickle, &t), 0);
	pthread_join(trickler, NULL);
	for (int i = 0; i < t.n; i++) {
		assert_true(t.closed[i]);
		close(t.fd[i]);
	}
	assert_true(get_when_free(&l, "GET /debug/pprof/ HTTP/1.0\r\n\r\n", 20, &r));
	assert_int_equal(r.status, 200);
	reply_free(&r);
	pthread_join(waiter, NULL);
	assert_true(profile.answered);
	assert_int_equal(profile.reply.status, 200);
	assert_true(folded_count(profile.reply.body, "served_hot") > 0);
	reply_free(&profile.reply);
	live_end(&l, prod);
}

static void busy_port(void **state)
{
	struct serve_address a;
	struct server *first, *second;
	char *message, where[80];

	(void)state;
	assert_int_equal(serve_parse_address("0", &a, &message), 0);
	assert_int_equal(serve_start(&first, &a, NULL, 0, &message), 0);
	snprintf(where, sizeof(where), "%s", serve_where(first));
	assert_int_equal(serve_parse_address(strchr(where, ':') + 1, &a, &message), 0);
	assert_true(serve_start(&second, &a, NULL, 0, &message) < 0);
	assert_non_null(strstr(message, where));
	assert_non_null(strstr(message, "in use"));
	free(message);
	serve_stop(first);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(addresses),
		cmocka_unit_test(requests),
		cmocka_unit_test(unescape),
		cmocka_unit_test(live_server),
		cmocka_unit_test(stop_answers_waiting),
		cmocka_unit_test(gone_clients_free_slots),
		cmocka_unit_test(late_requests_closed),
		cmocka_unit_test(busy_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
