/* outstream.c — writes that wait for room in poll(), next to a signalfd of the signals that end
 * the session (see outstream.h). */
#include "proftop/outstream.h"

#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct outstream {
	FILE *fp;
	int fd;
	bool own_fd;
	int signal_fd;       /* readable when one of ENDING_SIGNALS is pending; -1: none could be
			      * made, and a wait ends only when there is room (or on a stall) */
	int signo;           /* the signal a write gave up on; 0: none */
	bool stalled;        /* a write gave up on a stall */
	uint64_t written;
};

/* The signals that end a session (session.c blocks them and reads them from its signalfd). */
static const int ENDING_SIGNALS[] = { SIGINT, SIGTERM, SIGQUIT, SIGHUP };
#define NENDING (sizeof(ENDING_SIGNALS) / sizeof(ENDING_SIGNALS[0]))

static atomic_bool hurried;

void outstream_hurry(void)
{
	atomic_store(&hurried, true);
}

/* Which of ENDING_SIGNALS is pending. */
static int pending_signal(void)
{
	sigset_t set;

	if (sigpending(&set) == 0)
		for (size_t i = 0; i < NENDING; i++)
			if (sigismember(&set, ENDING_SIGNALS[i]))
				return ENDING_SIGNALS[i];
	return SIGTERM;
}

/* How long poll() may wait: for ever, or what is left of the stall allowed since last. */
static int wait_ms(uint64_t last_progress_ns)
{
	uint64_t limit = (uint64_t)OUTSTREAM_STALL_S * 1000000000u, waited;

	if (!atomic_load(&hurried))
		return -1;
	waited = util_now_ns() - last_progress_ns;
	return waited >= limit ? 0 : (int)((limit - waited + 999999) / 1000000);
}

/* The stream's write: all of buf, at most PIPE_BUF bytes at a time once poll() says there is
 * room, so that no write() blocks even on a descriptor that is not non-blocking (a pipe with
 * room takes PIPE_BUF bytes at once). Returns size, or what went in with errno set (fopencookie
 * wants no negative count): EINTR for a signal, ETIMEDOUT for a stall; every later write then
 * fails at once. */
static ssize_t wait_write(void *cookie, const char *buf, size_t size)
{
	struct outstream *out = cookie;
	uint64_t last_progress = util_now_ns();
	size_t done = 0;

	/* Once given up, for good: the writer goes on calling until it checks for errors. */
	if (out->signo || out->stalled) {
		errno = out->signo ? EINTR : ETIMEDOUT;
		return 0;
	}
	while (done < size) {
		struct pollfd p[2] = { { out->fd, POLLOUT, 0 }, { out->signal_fd, POLLIN, 0 } };
		int ready = poll(p, 2, wait_ms(last_progress));
		ssize_t n;

		if (ready < 0 && errno != EINTR)
			return (ssize_t)done;
		if (ready == 0) {
			out->stalled = true;
			errno = ETIMEDOUT;
			return (ssize_t)done;
		}
		if (ready < 0 || !p[0].revents) {
			if (ready > 0 && p[1].revents) {
				out->signo = pending_signal();
				errno = EINTR;
				return (ssize_t)done;
			}
			continue;
		}
		n = write(out->fd, buf + done, size - done < PIPE_BUF ? size - done : PIPE_BUF);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return (ssize_t)done;
		if (n > 0) {
			done += (size_t)n;
			out->written += (uint64_t)n;
			last_progress = util_now_ns();
		}
	}
	return (ssize_t)size;
}

struct outstream *outstream_open(int fd, bool own_fd)
{
	static const cookie_io_functions_t io = { .write = wait_write };
	struct outstream *out = xcalloc(1, sizeof(*out));
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NENDING; i++)
		sigaddset(&set, ENDING_SIGNALS[i]);
	out->fd = fd;
	out->own_fd = own_fd;
	out->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	out->fp = fopencookie(out, "w", io);
	if (!out->fp)
		fatal("out of memory (fopencookie)");
	return out;
}

struct outstream *outstream_reopen(int fd)
{
	char path[32];
	int own;

	/* A terminal's poll() says there is room for any room at all, so a blocking write() of
	 * PIPE_BUF bytes into a terminal whose reader stalled (a remote connection) would wait in
	 * the kernel; non-blocking, it returns what fit. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	own = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return own >= 0 ? outstream_open(own, true) : outstream_open(fd, false);
}

FILE *outstream_file(struct outstream *out)
{
	return out->fp;
}

int outstream_signal(const struct outstream *out)
{
	return out->signo;
}

bool outstream_stalled(const struct outstream *out)
{
	return out->stalled;
}

uint64_t outstream_written(const struct outstream *out)
{
	return out->written;
}

char *outstream_gave_up(const struct outstream *out)
{
	if (out->signo)
		return xasprintf("interrupted by SIG%s while waiting to write",
				 sigabbrev_np(out->signo));
	if (out->stalled)
		return xasprintf("its reader took nothing for %d s after profiling ended",
				 OUTSTREAM_STALL_S);
	return NULL;
}

int outstream_close(struct outstream *out, char **why)
{
	int err = 0;

	if (why)
		*why = NULL;
	if (!out)
		return 0;
	/* What a write gave up on is not tried again: that would wait once more. */
	if (out->signo || out->stalled)
		__fpurge(out->fp);
	if (fclose(out->fp) != 0)
		err = errno ? errno : EIO;
	if (out->own_fd && close(out->fd) < 0 && !err)
		err = errno;
	if (why)
		*why = outstream_gave_up(out);
	if (out->signal_fd >= 0)
		close(out->signal_fd);
	free(out);
	return err;
}
