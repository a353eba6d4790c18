/* Unit tests of the debuginfod fetcher's thread handoffs, against real sockets (run under
 * ThreadSanitizer by make tsan): nothing without DEBUGINFOD_URLS; a build-id asked once; a server
 * that refuses connections gives one result per id, which wakes the owner; one that accepts and
 * never answers shows in the status and does not hold fetcher_free(), which leaves no "no server
 * has it" entry in the cache for the fetch it cancelled. tests/integration/debuginfod.sh runs a
 * real debuginfod. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/fetch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char cache[] = "/tmp/proftop-test-fetch.XXXXXX";

/* A socket listening on a free port of 127.0.0.1 that nobody accepts from: connections complete
 * (the kernel's backlog) and no answer ever comes. Closing it leaves a port nobody listens on. */
static int listener(int *port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	*port = ntohs(addr.sin_port);
	return fd;
}

static void use_server(int port)
{
	char urls[64];

	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	unsetenv("DEBUGINFOD_PROGRESS");
	unsetenv("DEBUGINFOD_VERBOSE");
}

/* Wait (bounded) until the eventfd is written; then empty it. */
static void wait_woken(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t n;

	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_int_equal(read(fd, &n, sizeof(n)), (ssize_t)sizeof(n));
}

static void nothing_without_urls(void **state)
{
	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	errno = EINVAL;
	assert_null(fetcher_new(-1));
	assert_int_equal(errno, 0);
	setenv("DEBUGINFOD_URLS", " \t", 1);
	assert_null(fetcher_new(-1));
	assert_int_equal(errno, 0);
	fetcher_free(NULL);
}

static void refused_each_id_once(void **state)
{
	static const unsigned char a[20] = { 0xaa, 1 }, b[20] = { 0xbb, 2 };
	int port, wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct fetched got[2];
	struct fetcher *f;
	char status[64];

	(void)state;
	close(listener(&port));
	use_server(port);
	f = fetcher_new(wake);
	assert_non_null(f);
	assert_non_null(strstr(fetcher_urls(f), "127.0.0.1"));
	fetcher_want(f, a, sizeof(a), "liba.so");
	fetcher_want(f, b, sizeof(b), "libb.so");
	fetcher_want(f, a, sizeof(a), "liba.so");
	fetcher_want(f, a, 0, "nothing");
	for (int n = 0; n < 2;) {
		wait_woken(wake);
		while (n < 2 && fetcher_take(f, &got[n]))
			n++;
	}
	assert_string_equal(got[0].name, "liba.so");
	assert_memory_equal(got[0].build_id, a, sizeof(a));
	assert_string_equal(got[1].name, "libb.so");
	for (int i = 0; i < 2; i++) {
		assert_null(got[i].path);
		assert_true(got[i].err < 0);
		assert_int_not_equal(got[i].err, -ENOENT);
		fetched_clear(&got[i]);
	}
	assert_false(fetcher_take(f, &got[0]));
	assert_int_equal(fetcher_status(f, status, sizeof(status)), 0);
	assert_string_equal(status, "");
	fetcher_free(f);
	close(wake);
}

static void silent_server_cancelled(void **state)
{
	static const unsigned char id[20] = { 0xcc, 3, 4 }, other[20] = { 0xdd };
	int port, server, wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	char status[64], entry[256];
	size_t waiting = 0;
	struct fetcher *f;
	struct stat st;

	(void)state;
	server = listener(&port);
	use_server(port);
	f = fetcher_new(wake);
	assert_non_null(f);
	fetcher_want(f, id, sizeof(id), "libslow.so");
	fetcher_want(f, other, sizeof(other), "libnext.so");
	for (int i = 0; i < 3000; i++) {
		waiting = fetcher_status(f, status, sizeof(status));
		if (status[0])
			break;
		usleep(10000);
	}
	assert_string_equal(status, "libslow.so");
	assert_int_equal(waiting, 1);
	fetcher_free(f);
	snprintf(entry, sizeof(entry), "%s/cc0304%034d/debuginfo", cache, 0);
	assert_int_equal(stat(entry, &st), -1);
	close(server);
	close(wake);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_without_urls),
		cmocka_unit_test(refused_each_id_once),
		cmocka_unit_test(silent_server_cancelled),
	};
	char rm[sizeof(cache) + 16];
	int failed;

	if (!mkdtemp(cache))
		return 1;
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", cache);
	if (system(rm) != 0)
		failed = failed ? failed : 1;
	return failed;
}
