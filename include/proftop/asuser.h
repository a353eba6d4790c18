/* asuser.h — who a process runs as, and opening files as that user could.
 *
 * proftop may run as root and profile every user's processes (-a, -p). What it reads on a
 * process's behalf that the process names itself, a source file its debug information points
 * at, must be read only as the process's owner could: else `#line 1 "/etc/shadow"` in any user's
 * program would show root's files on root's screen. An owner is the process's filesystem uid and
 * gid (what the kernel checks a file's permissions against), with the supplementary groups the
 * user database gives that user.
 *
 * asuser_run() takes the owner's filesystem identity on the calling thread only, around one
 * call: setfsuid(), setfsgid() and setgroups() are per thread in the kernel, and are called
 * here as raw system calls (glibc's setgroups() would change every thread of proftop). Leaving
 * fsuid 0 also drops the capabilities that bypass file permissions (capabilities(7)); taking it
 * back restores them. */
#ifndef PROFTOP_ASUSER_H
#define PROFTOP_ASUSER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct asuser {
	uid_t uid;
	gid_t gid;
};

/* The filesystem uid and gid (the fourth of the "Uid:" and "Gid:" lines) from the text of a
 * /proc/PID/status file (len bytes, not NUL-terminated). Returns 0 or -EINVAL. Pure. */
int asuser_parse_status(const char *text, size_t len, struct asuser *out);
/* Thread tid of process pid's owner, from /proc/PID/task/TID/status. Returns 0 or -errno
 * (-ENOENT: it ended). */
int asuser_of_thread(pid_t pid, pid_t tid, struct asuser *out);

/* Is user who proftop's calling thread is, as far as files go (its filesystem uid)? */
bool asuser_is_self(const struct asuser *user);

/* fn(arg) with the calling thread's filesystem uid, gid and supplementary groups those of user,
 * and proftop's own again after it. Returns fn's result, or -EPERM without calling it when
 * proftop may not take user's identity (it lacks CAP_SETUID or CAP_SETGID), or another -errno
 * when the switch failed. When user is proftop itself, fn just runs. */
int asuser_run(const struct asuser *user, int (*fn)(void *arg), void *arg);

#endif
