/* asuser.c — who a process runs as, and opening files as that user could (asuser.h).
 *
 * The switch is three per-thread changes, made in the order that needs the fewest rights and
 * undone in reverse: supplementary groups (CAP_SETGID), filesystem gid, filesystem uid (last
 * in, first out: while it is not 0, root has lost CAP_DAC_OVERRIDE, not CAP_SETGID). setfsuid()
 * and setfsgid() report failure only by what they return on a second call, so each is checked
 * that way. A thread that could not take its own identity back would go on reading as someone
 * else: that is fatal. */
#include "proftop/asuser.h"

#include "proftop/util.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A user's supplementary groups, as many as getgrouplist() gives; more are not looked at. */
#define ASUSER_GROUPS_MAX 256
/* /proc/PID/status up to its Gid: line (the tenth or so; Name: is at most 64 bytes escaped). */
#define ASUSER_STATUS_MAX 4096

/* The fourth decimal number after the "KEY:" line starting at p (bounded by end). */
static int asuser_fourth(const char *p, const char *end, uint32_t *out)
{
	for (int field = 0; field < 4; field++) {
		uint64_t v = 0;
		const char *digits;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		digits = p;
		while (p < end && *p >= '0' && *p <= '9' && v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(*p++ - '0');
		if (p == digits || v >= UINT32_MAX || (p < end && *p != ' ' && *p != '\t' &&
						      *p != '\n'))
			return -EINVAL;
		*out = (uint32_t)v;
	}
	return 0;
}

int asuser_parse_status(const char *text, size_t len, struct asuser *out)
{
	const char *p = text, *end = text + len;
	bool uid = false, gid = false;
	uint32_t v;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;

		if (eol - p >= 4 && !memcmp(p, "Uid:", 4) && !asuser_fourth(p + 4, eol, &v)) {
			out->uid = (uid_t)v;
			uid = true;
		} else if (eol - p >= 4 && !memcmp(p, "Gid:", 4) && !asuser_fourth(p + 4, eol, &v)) {
			out->gid = (gid_t)v;
			gid = true;
		}
		p = nl ? nl + 1 : end;
	}
	return uid && gid ? 0 : -EINVAL;
}

int asuser_of_thread(pid_t pid, pid_t tid, struct asuser *out)
{
	char path[64], *buf = xmalloc(ASUSER_STATUS_MAX);
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	len = util_read_small(path, buf, ASUSER_STATUS_MAX);
	err = len ? asuser_parse_status(buf, len, out) : -ENOENT;
	free(buf);
	return err;
}

/* setfsuid() with an id that is not one returns the current one and changes nothing. */
static uid_t asuser_fsuid(void)
{
	return (uid_t)setfsuid((uid_t)-1);
}

static gid_t asuser_fsgid(void)
{
	return (gid_t)setfsgid((gid_t)-1);
}

static bool asuser_set_fsuid(uid_t uid)
{
	setfsuid(uid);
	return asuser_fsuid() == uid;
}

static bool asuser_set_fsgid(gid_t gid)
{
	setfsgid(gid);
	return asuser_fsgid() == gid;
}

/* The calling thread's supplementary groups; not glibc's setgroups(), which sets every
 * thread's. */
static int asuser_set_groups(size_t n, const gid_t *groups)
{
	return syscall(SYS_setgroups, n, groups) ? -errno : 0;
}

bool asuser_is_self(const struct asuser *user)
{
	return user->uid == asuser_fsuid();
}

/* user's supplementary groups from the user database, user->gid among them; just that when the
 * uid has no entry (a container's, a deleted user's). */
static size_t asuser_groups(const struct asuser *user, gid_t *groups)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int n = ASUSER_GROUPS_MAX;

	groups[0] = user->gid;
	if (getpwuid_r(user->uid, &pw, buf, sizeof(buf), &found) || !found)
		return 1;
	if (getgrouplist(found->pw_name, user->gid, groups, &n) < 0)
		n = ASUSER_GROUPS_MAX;
	return n > 0 ? (size_t)n : 1;
}

int asuser_run(const struct asuser *user, int (*fn)(void *arg), void *arg)
{
	uid_t self_uid = asuser_fsuid();
	gid_t self_gid = asuser_fsgid(), *groups, *saved;
	int nsaved = getgroups(0, NULL), ret;
	size_t ngroups;

	if (user->uid == self_uid)
		return fn(arg);
	if (nsaved < 0)
		return -errno;
	groups = xmalloc(ASUSER_GROUPS_MAX * sizeof(*groups));
	saved = xmalloc(((size_t)nsaved + 1) * sizeof(*saved));
	nsaved = getgroups(nsaved, saved);
	ngroups = asuser_groups(user, groups);
	ret = nsaved < 0 ? -errno : asuser_set_groups(ngroups, groups);
	if (ret)
		goto out;
	if (!asuser_set_fsgid(user->gid) || !asuser_set_fsuid(user->uid)) {
		ret = -EPERM;
		goto restore;
	}
	ret = fn(arg);
restore:
	if (!asuser_set_fsuid(self_uid) || !asuser_set_fsgid(self_gid) ||
	    asuser_set_groups((size_t)nsaved, saved))
		fatal("cannot take back proftop's own identity after reading as uid %u",
		      (unsigned)user->uid);
out:
	free(groups);
	free(saved);
	return ret;
}
