/* target.c — launch a command behind a start barrier, or check PIDs to attach to; reap and report
 * the exit status. */
#include "proftop/target.h"

#include "proftop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child_run(char **argv, int barrier_fd, int status_fd)
{
	sigset_t none;
	char byte;
	int err;

	/* Block until the parent armed the events (or closed the barrier after a failure). */
	while (read(barrier_fd, &byte, 1) < 0 && errno == EINTR)
		;
	close(barrier_fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	err = errno;
	if (write(status_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

int target_launch(struct target *target, char **argv)
{
	int barrier[2], status[2];
	pid_t pid;

	memset(target, 0, sizeof(*target));
	if (pipe2(barrier, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(status, O_CLOEXEC) < 0) {
		int err = -errno;

		close(barrier[0]);
		close(barrier[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(barrier[0]);
		close(barrier[1]);
		close(status[0]);
		close(status[1]);
		return err;
	}
	if (pid == 0) {
		close(barrier[1]);
		close(status[0]);
		child_run(argv, barrier[0], status[1]);
	}
	close(barrier[0]);
	close(status[1]);
	target->launched = true;
	target->child = pid;
	target->argv = argv;
	target->barrier_fd = barrier[1];
	target->exec_status_fd = status[0];
	return 0;
}

int target_start(struct target *target)
{
	ssize_t n;
	int err = 0;

	/* The child waits for a byte (EOF would release it just the same). */
	if (write(target->barrier_fd, "g", 1) < 0)
		err = 0;
	close(target->barrier_fd);
	target->barrier_fd = -1;
	do
		n = read(target->exec_status_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(target->exec_status_fd);
	target->exec_status_fd = -1;
	if (n == (ssize_t)sizeof(err) && err) {
		while (waitpid(target->child, &target->wait_status, 0) < 0 && errno == EINTR)
			;
		target->exited = true;
		return err;
	}
	return 0;
}

void target_abandon(struct target *target)
{
	if (!target->launched || target->exited)
		return;
	kill(target->child, SIGKILL);
	if (target->barrier_fd >= 0)
		close(target->barrier_fd);
	if (target->exec_status_fd >= 0)
		close(target->exec_status_fd);
	target->barrier_fd = target->exec_status_fd = -1;
	while (waitpid(target->child, &target->wait_status, 0) < 0 && errno == EINTR)
		;
	target->exited = true;
}

int target_attach(struct target *target, const pid_t *pids, size_t npids, pid_t *missing)
{
	memset(target, 0, sizeof(*target));
	target->barrier_fd = target->exec_status_fd = -1;
	for (size_t i = 0; i < npids; i++) {
		if (kill(pids[i], 0) < 0 && errno == ESRCH) {
			*missing = pids[i];
			return -ESRCH;
		}
	}
	target->pids = xmalloc(npids * sizeof(*pids));
	memcpy(target->pids, pids, npids * sizeof(*pids));
	target->npids = npids;
	return 0;
}

bool target_poll(struct target *target)
{
	pid_t r;

	if (!target->launched || target->exited)
		return target->exited;
	r = waitpid(target->child, &target->wait_status, WNOHANG);
	if (r == target->child)
		target->exited = true;
	return target->exited;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void target_terminate(struct target *target, unsigned grace_ms)
{
	if (!target->launched || target_poll(target))
		return;
	kill(target->child, SIGTERM);
	for (unsigned waited = 0; waited < grace_ms; waited += 10) {
		if (target_poll(target))
			return;
		sleep_ms(10);
	}
	kill(target->child, SIGKILL);
	while (waitpid(target->child, &target->wait_status, 0) < 0 && errno == EINTR)
		;
	target->exited = true;
}

int target_exit_code(const struct target *target)
{
	if (!target->launched)
		return 0;
	if (WIFEXITED(target->wait_status))
		return WEXITSTATUS(target->wait_status);
	if (WIFSIGNALED(target->wait_status))
		return 128 + WTERMSIG(target->wait_status);
	return 1;
}

bool target_any_alive(const struct target *target)
{
	for (size_t i = 0; i < target->npids; i++)
		if (kill(target->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

void target_free(struct target *target)
{
	free(target->pids);
	target->pids = NULL;
}
