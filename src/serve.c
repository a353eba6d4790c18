/* serve.c — the HTTP endpoint: libmicrohttpd answers, this file decides what.
 *
 * The listening socket is made here (so a bind failure says what failed, and port 0 gets a port
 * to announce) and handed to the library, which runs a thread per connection.
 *
 * A profile of the next N seconds is the collector's stretch of whole seconds [from, from + N)
 * of the run in the kind shown when it came (kinds_stretch(), from the collector's history;
 * this file names no mode, it asks by kind name): from is the second boundary nearest the
 * request, and the answer waits until the stretch's last second ended and SERVE_LAG_NS more,
 * for the samples of that second still on their way to the profile. When profiling ends first,
 * or the server stops, it answers with what the stretch holds then; when the client goes (it
 * closed, or shut its side: Go's server cancels a request then too), at once, with nothing.
 *
 * A connection has SERVE_REQUEST_NS to send a whole request, from its start or from its last
 * answer, or the watcher closes it (so clients trickling headers hold no connection for long);
 * a request being answered, a profile waiting out its seconds included, has no such time. The
 * library's idle timeout cannot be that: a byte a few seconds keeps it from firing. It bounds
 * the idleness of an answer going out, and never fires on a profile waiting: the library checks
 * it on the connection's own thread, which waits in handle(), and MHD_queue_response() restarts
 * its clock.
 *
 * Threads: libmicrohttpd's (the listening thread, a thread per connection) and the watcher.
 * They share `lock` (`waiting`, `answering`, `peers`, `recent`) and its condition, which
 * completed() broadcasts; serve_stop() makes stop_fd readable, which wakes the waiting
 * requests and the watcher at once. Everything else in struct server is set before the daemon
 * starts and only read after. */
#include "proftop/serve.h"

#include "proftop/collector.h"
#include "proftop/kinds.h"
#include "proftop/snapshot.h"
#include "proftop/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* Samples reach the profile tens of milliseconds after the kernel took them. */
#define SERVE_LAG_NS 300000000ull
#define NS 1000000000ull
/* How long a /snapshot made for one request serves the next ones. */
#define SERVE_SNAPSHOT_REUSE_NS (NS / 2)
/* How long stopping waits for answers still going out. */
#define SERVE_STOP_WAIT_NS (2 * NS)
/* How long a connection has to send a whole request. */
#define SERVE_REQUEST_NS ((uint64_t)SERVE_REQUEST_SECONDS * NS)
/* How long a connection may stay idle while its answer goes out. */
#define SERVE_IDLE_SECONDS 30u

/* A connection, from the library's notice that it started to the one that it closed (its
 * socket context). The library closes fd only after that last notice took the peer off
 * srv->peers under srv->lock, so a shutdown() under that lock cannot reach another socket that
 * got the same number. */
struct peer {
	struct peer *next;
	int fd;
	uint64_t request_by;   /* while a request comes in: when it must have come whole; else 0 */
};

struct server {
	struct MHD_Daemon *daemon;
	struct collector *collector;
	unsigned max_seconds;
	char where[80];
	int stop_fd;           /* eventfd, readable once serve_stop() began */
	pthread_t watcher;
	bool watching;         /* watcher started */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned waiting;      /* requests waiting out their seconds */
	unsigned answering;    /* requests being answered, until their answer is sent */
	struct peer *peers;    /* the open connections */
	struct snapshot *recent; /* the last /snapshot made, at recent_ns */
	uint64_t recent_ns;
};

/* --- addresses -------------------------------------------------------------------------------- */

static int parse_port(const char *text, unsigned *port)
{
	char *end;
	unsigned long v;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || *end || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

int serve_parse_address(const char *text, struct serve_address *a, char **message)
{
	const char *colon = strrchr(text, ':');
	char host[INET6_ADDRSTRLEN + 2];
	unsigned port;
	size_t hlen;

	*message = NULL;
	memset(a, 0, sizeof(*a));
	if (!colon) {
		struct sockaddr_in *in = (struct sockaddr_in *)&a->sa;

		if (parse_port(text, &port))
			goto bad;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a->len = sizeof(*in);
		return 0;
	}
	hlen = (size_t)(colon - text);
	if (parse_port(colon + 1, &port) || hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, text, hlen);
	host[hlen] = '\0';
	if (host[0] == '[' && host[hlen - 1] == ']') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->sa;

		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			goto bad;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		a->len = sizeof(*in6);
		return 0;
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&a->sa;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			goto bad;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		a->len = sizeof(*in);
		return 0;
	}
bad:
	*message = xasprintf("--serve: '%s' is no [ADDRESS:]PORT (a port 0 to 65535, on 127.0.0.1 "
			     "unless a numeric address is given: 0.0.0.0:6060, [::1]:6060)", text);
	return -EINVAL;
}

bool serve_address_local(const struct serve_address *a)
{
	if (a->sa.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&a->sa;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)&a->sa)->sin6_addr);
}

void serve_address_text(const struct serve_address *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (a->sa.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&a->sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	}
}

/* --- requests --------------------------------------------------------------------------------- */

static unsigned refuse(char *err, size_t err_len, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static unsigned refuse(char *err, size_t err_len, unsigned status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return status;
}

/* A client's text in an answer: visible, and short. */
static const char *shown(const char *text, char *buf, size_t size)
{
	util_visible(buf, size, text ? text : "");
	return buf;
}

static unsigned parse_seconds(const char *value, unsigned max, unsigned *out, char *err,
			      size_t err_len)
{
	char v[48];
	unsigned long n = 0;
	const char *p = value ? value : "";

	if (!*p)
		return refuse(err, err_len, 400, "seconds: give a whole number of seconds, 1 to %u", max);
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > SERVE_MAX_SECONDS)
			return refuse(err, err_len, 400, "seconds: '%s' is no whole number of seconds "
				      "from 1 to %u", shown(value, v, sizeof(v)), max);
		n = n * 10 + (unsigned long)(*p - '0');
	}
	if (n < 1 || n > max)
		return refuse(err, err_len, 400, "seconds: %s is out of range: 1 to %u (%s)",
			      shown(value, v, sizeof(v)), max,
			      max < SERVE_MAX_SECONDS ? "the seconds of history this run keeps, --history"
						      : "the most one request may wait");
	*out = (unsigned)n;
	return 200;
}

static unsigned parse_format(const char *value, enum export_format *format, char *err,
			     size_t err_len)
{
	char v[48];

	if (!value || export_format_parse(value, format))
		return refuse(err, err_len, 400, "format: '%s' is none of pprof, folded, callgrind, "
			      "tmon, otlp, speedscope, lcov", shown(value, v, sizeof(v)));
	return 200;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t serve_unescape(char *text)
{
	char *out = text;
	const char *in = text;

	while (*in) {
		int hi = in[0] == '%' ? hex_value(in[1]) : -1, lo = hi >= 0 ? hex_value(in[2]) : -1;

		if (lo >= 0 && (hi | lo)) { /* hex_value('\0') is -1: never past the end */
			*out++ = (char)(hi << 4 | lo);
			in += 3;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return (size_t)(out - text);
}

unsigned serve_parse_request(const char *method, const char *path, const struct serve_arg *args,
			     size_t nargs, unsigned max_seconds, struct serve_request *r, char *err,
			     size_t err_len)
{
	char v[96];
	bool seen_seconds = false, seen_format = false;

	memset(r, 0, sizeof(*r));
	r->format = EXPORT_PPROF;
	r->seconds = SERVE_DEFAULT_SECONDS;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return refuse(err, err_len, 405, "%s: only GET and HEAD are served",
			      shown(method, v, sizeof(v)));
	if (!strcmp(path, "/") || !strcmp(path, "/debug/pprof") || !strcmp(path, "/debug/pprof/"))
		r->page = SERVE_INDEX;
	else if (!strcmp(path, "/debug/pprof/profile"))
		r->page = SERVE_PROFILE;
	else if (!strcmp(path, "/snapshot"))
		r->page = SERVE_SNAPSHOT;
	else
		return refuse(err, err_len, 404, "%s: no such page (GET /debug/pprof/ lists them)",
			      shown(path, v, sizeof(v)));
	if (nargs > SERVE_MAX_ARGS)
		return refuse(err, err_len, 400, "%zu query parameters: at most %d", nargs,
			      SERVE_MAX_ARGS);
	for (size_t i = 0; i < nargs; i++) {
		const char *key = args[i].key ? args[i].key : "";
		unsigned status = 200;

		if (!strcmp(key, "seconds") && r->page == SERVE_PROFILE) {
			if (seen_seconds)
				return refuse(err, err_len, 400, "seconds: given twice");
			seen_seconds = true;
			if (max_seconds)
				status = parse_seconds(args[i].value, max_seconds, &r->seconds, err, err_len);
		} else if (!strcmp(key, "format") && r->page != SERVE_INDEX) {
			if (seen_format)
				return refuse(err, err_len, 400, "format: given twice");
			seen_format = true;
			status = parse_format(args[i].value, &r->format, err, err_len);
		} else {
			return refuse(err, err_len, 400, "%s: no such parameter here (%s)",
				      shown(key, v, sizeof(v)),
				      r->page == SERVE_PROFILE    ? "seconds and format are"
				      : r->page == SERVE_SNAPSHOT ? "format is"
								  : "none is");
		}
		if (status != 200)
			return status;
	}
	if (r->page == SERVE_PROFILE && !max_seconds)
		return refuse(err, err_len, 400, "this run keeps no history (--history 0), so no "
			      "profile of the next seconds; GET /snapshot has the run so far");
	if (r->page == SERVE_PROFILE && r->seconds > max_seconds)
		r->seconds = max_seconds;
	return 200;
}

/* --- answers ---------------------------------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
			      const char *type, const char *filename)
{
	struct MHD_Response *res = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	if (!res) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
	if (filename) {
		char disposition[80];

		snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s\"", filename);
		MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
	}
	if (status != MHD_HTTP_OK)
		MHD_add_response_header(res, "X-Go-Pprof", "1");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(res, "Allow", "GET, HEAD");
	ok = MHD_queue_response(conn, status, res);
	MHD_destroy_response(res);
	return ok;
}

static enum MHD_Result answer_error(struct MHD_Connection *conn, unsigned status, const char *text)
{
	char *body = xasprintf("%s\n", text);

	return answer(conn, status, body, strlen(body), "text/plain; charset=utf-8", NULL);
}

static enum MHD_Result answer_index(struct server *srv, struct MHD_Connection *conn)
{
	char *body = xasprintf(
		"<html><head><title>proftop</title></head><body>\n"
		"<p>proftop: profiles of the run, as Go's net/http/pprof serves them.</p>\n"
		"<ul>\n"
		"<li><a href=\"/debug/pprof/profile?seconds=%u\">/debug/pprof/profile?seconds=N</a>: "
		"the profile of the next N seconds (default %u, at most %u), gzipped pprof</li>\n"
		"<li><a href=\"/snapshot\">/snapshot</a>: everything profiled so far, at once</li>\n"
		"</ul>\n"
		"<p>Both take format=pprof (the default), folded, callgrind, tmon, otlp or "
		"speedscope.</p>\n"
		"</body></html>\n",
		srv->max_seconds < SERVE_DEFAULT_SECONDS ? srv->max_seconds : SERVE_DEFAULT_SECONDS,
		SERVE_DEFAULT_SECONDS, srv->max_seconds);

	return answer(conn, MHD_HTTP_OK, body, strlen(body), "text/html; charset=utf-8", NULL);
}

static const char *content_type(enum export_format format)
{
	return format == EXPORT_PPROF	     ? "application/octet-stream"
	       : format == EXPORT_OTLP	     ? "application/x-protobuf"
	       : format == EXPORT_SPEEDSCOPE ? "application/json"
					     : "text/plain; charset=utf-8";
}

static const char *file_name(const struct serve_request *r)
{
	if (r->page == SERVE_PROFILE && r->format == EXPORT_PPROF)
		return "profile"; /* Go's */
	return export_default_path(r->format);
}

static enum MHD_Result answer_snapshot(struct MHD_Connection *conn, const struct snapshot *s,
				       const struct serve_request *r)
{
	char *body = NULL, *message;
	size_t len = 0;
	FILE *out = open_memstream(&body, &len);
	int err;

	if (!out)
		return answer_error(conn, 500, "out of memory");
	err = export_stream(out, s, r->format, &message);
	if (fclose(out) && !err) { /* the body's last bytes could not be kept */
		err = -ENOMEM;
		message = xstrdup("out of memory writing the profile");
	}
	if (err) {
		enum MHD_Result ok = answer_error(conn, err == -EINVAL ? 400 : 500, message);

		free(message);
		free(body);
		return ok;
	}
	return answer(conn, MHD_HTTP_OK, body, len, content_type(r->format), file_name(r));
}

/* The peer of conn, which the library's notice of its start made. */
static struct peer *peer_of(struct MHD_Connection *conn)
{
	return MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context;
}

/* Wait until the stretch ending at to_s is in the profile, profiling ended or the server stops
 * (true), or until the client is gone (false): it closed, reset, or shut its side down (poll's
 * POLLRDHUP; bytes of a next request do not count). The collector says nothing when a second
 * ends, hence the tenth of a second between looks. */
static bool wait_for(struct server *srv, int fd, uint64_t to_s)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLRDHUP },
			       { .fd = srv->stop_fd, .events = POLLIN } };
	bool ended;

	for (;;) {
		uint64_t elapsed = collector_elapsed(srv->collector, &ended);

		if (ended || elapsed >= to_s * NS + SERVE_LAG_NS)
			return true;
		if (poll(p, 2, 100) <= 0)
			continue;
		if (p[1].revents)
			return true;
		if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
			return false;
	}
}

static enum MHD_Result answer_profile(struct server *srv, struct MHD_Connection *conn,
				      const struct serve_request *r)
{
	const char *kind = kinds_shown(srv->collector);
	bool ended, busy, here;
	uint64_t elapsed = collector_elapsed(srv->collector, &ended), from_s;
	struct snapshot *s;
	enum MHD_Result ok;

	if (ended)
		return answer_error(conn, 500, "profiling has ended: GET /snapshot has the whole run");
	if (!kinds_keeps_stretches(srv->collector, kind))
		return answer_error(conn, 400, "the profile shown has no stretches of time (an in-use "
				    "profile is of now): GET /snapshot");
	pthread_mutex_lock(&srv->lock);
	busy = srv->waiting >= SERVE_MAX_WAITING;
	if (!busy)
		srv->waiting++;
	pthread_mutex_unlock(&srv->lock);
	if (busy)
		return answer_error(conn, 500, "proftop is making as many profiles as it will at "
				    "once; try again later");
	from_s = (elapsed + NS / 2) / NS;
	here = wait_for(srv, peer_of(conn)->fd, from_s + r->seconds);
	pthread_mutex_lock(&srv->lock);
	srv->waiting--;
	pthread_mutex_unlock(&srv->lock);
	if (!here)
		return MHD_NO; /* the library closes the connection: nobody to answer */
	s = kinds_stretch(srv->collector, kind, from_s, from_s + r->seconds);
	ok = answer_snapshot(conn, s, r);
	snapshot_unref(s);
	return ok;
}

/* Everything so far: a snapshot made for this request, unless one made for another is less
 * than SERVE_SNAPSHOT_REUSE_NS old, so clients asking in a loop cost the collector at most a
 * publication that often. */
static struct snapshot *recent_snapshot(struct server *srv)
{
	uint64_t now = util_now_ns();
	struct snapshot *s = NULL;

	pthread_mutex_lock(&srv->lock);
	if (srv->recent && now - srv->recent_ns < SERVE_SNAPSHOT_REUSE_NS)
		s = snapshot_ref(srv->recent);
	pthread_mutex_unlock(&srv->lock);
	if (s)
		return s;
	s = collector_snapshot(srv->collector);
	pthread_mutex_lock(&srv->lock);
	snapshot_unref(srv->recent);
	srv->recent = snapshot_ref(s);
	srv->recent_ns = now;
	pthread_mutex_unlock(&srv->lock);
	return s;
}

static size_t unescape(void *cls, struct MHD_Connection *conn, char *text)
{
	(void)cls;
	(void)conn;
	return serve_unescape(text);
}

struct arg_list {
	struct serve_arg args[SERVE_MAX_ARGS + 1];
	size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct arg_list *l = cls;

	(void)kind;
	if (l->n < SERVE_MAX_ARGS + 1)
		l->args[l->n] = (struct serve_arg){ key, value };
	l->n++; /* counted past the last kept: more than SERVE_MAX_ARGS is refused */
	return MHD_YES;
}

/* A request's state (the library's per-request pointer): its headers came; it came whole and
 * is being answered, counted in `answering` and free of the request time until completed()
 * runs, which starts the time of the connection's next request. */
static int started, counted;

static void completed(void *cls, struct MHD_Connection *conn, void **state,
		      enum MHD_RequestTerminationCode why)
{
	struct server *srv = cls;

	(void)why;
	if (*state != &counted)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->answering--;
	peer_of(conn)->request_by = util_now_ns() + SERVE_REQUEST_NS;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct server *srv = cls;
	struct arg_list args = { .n = 0 };
	struct serve_request r;
	char err[256];
	unsigned status;

	(void)version;
	(void)upload;
	if (!*state) { /* the headers: the body, if any, comes in the next calls */
		*state = &started;
		return MHD_YES;
	}
	if (*upload_len) { /* a body nobody asked for: ignored */
		*upload_len = 0;
		return MHD_YES;
	}
	if (*state != &counted) {
		*state = &counted;
		pthread_mutex_lock(&srv->lock);
		srv->answering++;
		peer_of(conn)->request_by = 0;
		pthread_mutex_unlock(&srv->lock);
	}
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	status = serve_parse_request(method, url, args.args, args.n, srv->max_seconds, &r, err,
				     sizeof(err));
	if (status != 200)
		return answer_error(conn, status, err);
	switch (r.page) {
	case SERVE_PROFILE:
		if (!strcmp(method, "HEAD")) /* the headers only: no N seconds, no profile made */
			return answer(conn, MHD_HTTP_OK, NULL, 0, content_type(r.format),
				      file_name(&r));
		return answer_profile(srv, conn, &r);
	case SERVE_SNAPSHOT: {
		struct snapshot *s = recent_snapshot(srv);
		enum MHD_Result ok = answer_snapshot(conn, s, &r);

		snapshot_unref(s);
		return ok;
	}
	default:
		return answer_index(srv, conn);
	}
}

/* --- connections ----------------------------------------------------------------------------- */

/* The library's notices of a connection's start (before its thread reads a byte) and of its
 * close (after that thread ended, before the socket is closed). */
static void connection_event(void *cls, struct MHD_Connection *conn, void **context,
			     enum MHD_ConnectionNotificationCode what)
{
	struct server *srv = cls;
	struct peer *p = *context, **link;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		p = xcalloc(1, sizeof(*p));
		p->fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
		p->request_by = util_now_ns() + SERVE_REQUEST_NS;
		pthread_mutex_lock(&srv->lock);
		p->next = srv->peers;
		srv->peers = p;
		pthread_mutex_unlock(&srv->lock);
		*context = p;
		return;
	}
	pthread_mutex_lock(&srv->lock);
	for (link = &srv->peers; *link != p; link = &(*link)->next)
		;
	*link = p->next;
	pthread_mutex_unlock(&srv->lock);
	free(p);
}

/* Close the connections whose request is late: shutdown() ends the connection's reads, and the
 * library closes it. Returns when the next request falls due, no later than SERVE_REQUEST_NS
 * from now, so the requests of connections starting meanwhile (due later) are not missed. */
static uint64_t close_late(struct server *srv)
{
	uint64_t now = util_now_ns(), next = now + SERVE_REQUEST_NS;

	pthread_mutex_lock(&srv->lock);
	for (struct peer *p = srv->peers; p; p = p->next) {
		if (!p->request_by)
			continue;
		if (p->request_by <= now) {
			shutdown(p->fd, SHUT_RDWR);
			p->request_by = 0;
		} else if (p->request_by < next) {
			next = p->request_by;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return next;
}

/* The watcher thread: close_late() at each due time, until serve_stop(). */
static void *watch(void *arg)
{
	struct server *srv = arg;
	struct pollfd stop = { .fd = srv->stop_fd, .events = POLLIN };

	for (;;) {
		uint64_t next = close_late(srv), now = util_now_ns();
		int ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;

		if (poll(&stop, 1, ms) > 0)
			return NULL;
	}
}

/* --- the server ------------------------------------------------------------------------------- */

static int listen_on(const struct serve_address *a, struct serve_address *bound, char **message)
{
	char where[80];
	int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, err;

	serve_address_text(a, where, sizeof(where));
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->sa.ss_family == AF_INET6) /* [::]:PORT is IPv6 alone, as asked */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->sa, a->len) < 0 || listen(fd, 32) < 0)
		goto fail;
	bound->len = sizeof(bound->sa);
	if (getsockname(fd, (struct sockaddr *)&bound->sa, &bound->len) < 0)
		goto fail;
	return fd;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	*message = xasprintf("--serve: cannot listen on %s: %s", where, strerror(err));
	return -err;
}

int serve_start(struct server **out, const struct serve_address *address,
		struct collector *collector, unsigned max_seconds, char **message)
{
	struct server *srv;
	struct serve_address bound;
	int fd, err;

	*out = NULL;
	*message = NULL;
	fd = listen_on(address, &bound, message);
	if (fd < 0)
		return fd;
	srv = xcalloc(1, sizeof(*srv));
	srv->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (srv->stop_fd < 0) {
		err = errno;
		close(fd);
		free(srv);
		*message = xasprintf("--serve: cannot make an event fd: %s", strerror(err));
		return -err;
	}
	srv->collector = collector;
	srv->max_seconds = max_seconds < SERVE_MAX_SECONDS ? max_seconds : SERVE_MAX_SECONDS;
	serve_address_text(&bound, srv->where, sizeof(srv->where));
	pthread_mutex_init(&srv->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&srv->cond, &attr);
		pthread_condattr_destroy(&attr);
	}
	/* poll(), not select(): proftop holds an event fd per CPU (and per thread attached), past
	 * FD_SETSIZE on a big machine. */
	srv->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD,
				       0, NULL, NULL, handle, srv,
				       MHD_OPTION_LISTEN_SOCKET, fd,
				       MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_MAX_CONNECTIONS,
				       MHD_OPTION_CONNECTION_TIMEOUT, SERVE_IDLE_SECONDS,
				       MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
				       MHD_OPTION_NOTIFY_CONNECTION, connection_event, srv,
				       MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
				       MHD_OPTION_END);
	if (!srv->daemon) { /* the library closed fd; it says no errno */
		*message = xasprintf("--serve: libmicrohttpd could not start its server on %s",
				     srv->where);
		serve_stop(srv);
		return -EINVAL;
	}
	err = pthread_create(&srv->watcher, NULL, watch, srv);
	if (err) {
		*message = xasprintf("--serve: cannot start a thread: %s", strerror(err));
		serve_stop(srv);
		return -err;
	}
	srv->watching = true;
	*out = srv;
	return 0;
}

const char *serve_where(const struct server *srv)
{
	return srv->where;
}

void serve_stop(struct server *srv)
{
	uint64_t deadline;

	if (!srv)
		return;
	eventfd_write(srv->stop_fd, 1); /* the first write to it: cannot overflow */
	if (srv->watching)
		pthread_join(srv->watcher, NULL);
	pthread_mutex_lock(&srv->lock);
	/* Waiting requests now answer with what was profiled: let their answers go out (stopping
	 * the library closes every connection at once), for a bounded time. */
	deadline = util_now_ns() + SERVE_STOP_WAIT_NS;
	while (srv->answering && util_now_ns() < deadline) {
		struct timespec ts = { (time_t)(deadline / NS), (long)(deadline % NS) };

		pthread_cond_timedwait(&srv->cond, &srv->lock, &ts);
	}
	pthread_mutex_unlock(&srv->lock);
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon); /* joins the connection threads; closes the socket */
	snapshot_unref(srv->recent);
	close(srv->stop_fd);
	pthread_cond_destroy(&srv->cond);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}
