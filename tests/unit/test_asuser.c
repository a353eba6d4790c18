/* test_asuser.c — who a process runs as (/proc/PID/status's filesystem ids, good and hostile
 * text), and opening files as another user could: as root, a file only root may read (mode 600,
 * or 640 with root's own group) stays closed to nobody, one anyone may read opens, only the
 * calling thread changes identity, and it gets its own back, groups included. Without root, the
 * switch is refused and nothing runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proftop/asuser.h"

#define NOBODY 65534

static int parse(const char *text, struct asuser *out)
{
	return asuser_parse_status(text, strlen(text), out);
}

static void test_parse_status(void **state)
{
	struct asuser a;

	(void)state;
	assert_int_equal(parse("Name:\tx\nUid:\t1000\t1001\t1002\t1003\nGid:\t20\t21\t22\t23\n", &a), 0);
	assert_int_equal(a.uid, 1003);
	assert_int_equal(a.gid, 23);
	assert_int_equal(parse("Gid: 5 5 5 7\nUid: 0 0 0 0", &a), 0);
	assert_int_equal(a.uid, 0);
	assert_int_equal(a.gid, 7);
	/* Missing, short, not numbers, past 32 bits, -1 (no id at all). */
	assert_int_equal(parse("Uid:\t1\t1\t1\t1\n", &a), -EINVAL);
	assert_int_equal(parse("Uid:\t1\t1\t1\nGid:\t1\t1\t1\t1\n", &a), -EINVAL);
	assert_int_equal(parse("Uid:\t1\t1\t1\tx\nGid:\t1\t1\t1\t1\n", &a), -EINVAL);
	assert_int_equal(parse("Uid:\t1\t1\t1\t12x\nGid:\t1\t1\t1\t1\n", &a), -EINVAL);
	assert_int_equal(parse("Uid:\t1\t1\t1\t99999999999\nGid:\t1\t1\t1\t1\n", &a), -EINVAL);
	assert_int_equal(parse("Uid:\t1\t1\t1\t4294967295\nGid:\t1\t1\t1\t1\n", &a), -EINVAL);
	assert_int_equal(parse("", &a), -EINVAL);
	/* The length bounds it, not a NUL: the fourth uid is cut to "1". */
	assert_int_equal(asuser_parse_status("Gid:\t2\t2\t2\t2\nUid:\t3\t3\t3\t15", 25, &a), 0);
	assert_int_equal(a.uid, 1);
}

static void test_of_thread(void **state)
{
	struct asuser a;

	(void)state;
	assert_int_equal(asuser_of_thread(getpid(), (pid_t)syscall(SYS_gettid), &a), 0);
	assert_int_equal(a.uid, (uid_t)setfsuid((uid_t)-1));
	assert_int_equal(a.gid, (gid_t)setfsgid((gid_t)-1));
	assert_true(asuser_is_self(&a));
	assert_int_equal(asuser_of_thread(getpid(), 0x7ffffff0, &a), -ENOENT);
}

struct opening {
	const char *path;
	int err;             /* open()'s errno, 0 when it opened */
	uid_t fsuid;         /* the calling thread's, during the call */
	uid_t other_fsuid;   /* another thread's, during the call */
	char other_groups[256]; /* ... and its Groups: line */
	pid_t other;
};

/* The Groups: line of a thread's status. */
static void groups_of(pid_t tid, char *out, size_t size)
{
	char path[64], buf[4096], *line;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)getpid(), (int)tid);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	line = strstr(buf, "\nGroups:");
	assert_non_null(line);
	snprintf(out, size, "%.*s", (int)strcspn(line + 1, "\n"), line + 1);
}

/* The fourth Uid: field of a thread's status. */
static uid_t fsuid_of(pid_t tid)
{
	struct asuser a = { (uid_t)-1, (gid_t)-1 };

	asuser_of_thread(getpid(), tid, &a);
	return a.uid;
}

static int try_open(void *arg)
{
	struct opening *o = arg;
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);

	o->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	o->fsuid = fsuid_of((pid_t)syscall(SYS_gettid));
	o->other_fsuid = o->other ? fsuid_of(o->other) : 0;
	if (o->other)
		groups_of(o->other, o->other_groups, sizeof(o->other_groups));
	return 7;
}

static pthread_mutex_t parked = PTHREAD_MUTEX_INITIALIZER;
static pid_t parked_tid;

static void *park(void *arg)
{
	(void)arg;
	__atomic_store_n(&parked_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&parked);
	pthread_mutex_unlock(&parked);
	return NULL;
}

static void make_file(char *path, mode_t mode)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(fchown(fd, 0, 0), 0);
	close(fd);
}

static void test_run_as_nobody(void **state)
{
	char secret[] = "/tmp/proftop-asuser-XXXXXX", group[] = "/tmp/proftop-asuser-XXXXXX",
	     open_to_all[] = "/tmp/proftop-asuser-XXXXXX";
	struct asuser nobody = { NOBODY, NOBODY }, self = { 0, 0 };
	struct opening o = { 0 };
	char groups[256];
	gid_t before[64], after[64], orig[64];
	int nbefore, nafter, norig = getgroups(64, orig);
	pthread_t thread;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_true(norig >= 0);
	make_file(secret, 0600);
	make_file(group, 0640);
	make_file(open_to_all, 0644);
	/* Root's own groups: 0 among them (on this thread), which the 640 file's group is: nobody
	 * must not keep them. */
	assert_int_equal(syscall(SYS_setgroups, 1, (gid_t[]){ 0 }), 0);
	nbefore = getgroups(64, before);
	assert_true(nbefore >= 0);
	pthread_mutex_lock(&parked);
	assert_int_equal(pthread_create(&thread, NULL, park, NULL), 0);
	while (!__atomic_load_n(&parked_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	o.other = __atomic_load_n(&parked_tid, __ATOMIC_SEQ_CST);
	groups_of(o.other, groups, sizeof(groups));

	o.path = secret;
	assert_int_equal(asuser_run(&nobody, try_open, &o), 7);
	assert_int_equal(o.err, EACCES);
	assert_int_equal(o.fsuid, NOBODY);
	/* The other thread stayed root, with its groups (glibc's setgroups() would change them). */
	assert_int_equal(o.other_fsuid, 0);
	assert_string_equal(o.other_groups, groups);
	o.path = group;
	assert_int_equal(asuser_run(&nobody, try_open, &o), 7);
	assert_int_equal(o.err, EACCES);
	o.path = open_to_all;
	assert_int_equal(asuser_run(&nobody, try_open, &o), 7);
	assert_int_equal(o.err, 0);
	/* As proftop itself: no switch, root opens anything. */
	o.path = secret;
	assert_int_equal(asuser_run(&self, try_open, &o), 7);
	assert_int_equal(o.err, 0);
	assert_int_equal(o.fsuid, 0);

	/* Root again, with its groups. */
	assert_int_equal((uid_t)setfsuid((uid_t)-1), 0);
	assert_int_equal((gid_t)setfsgid((gid_t)-1), getegid());
	nafter = getgroups(64, after);
	assert_int_equal(nafter, nbefore);
	assert_memory_equal(after, before, (size_t)nbefore * sizeof(*before));
	pthread_mutex_unlock(&parked);
	pthread_join(thread, NULL);
	assert_int_equal(syscall(SYS_setgroups, norig, orig), 0);
	unlink(secret);
	unlink(group);
	unlink(open_to_all);
}

/* Not root (a child that gave root up, when the test runs as root): another user's identity is
 * refused, and fn does not run. */
static void test_run_refused(void **state)
{
	struct asuser other = { 12345, 12345 };
	struct opening o = { .path = "/", .err = -1 };
	pid_t child;
	int status;

	(void)state;
	if (geteuid() != 0) {
		assert_int_equal(asuser_run(&other, try_open, &o), -EPERM);
		assert_int_equal(o.err, -1);
		return;
	}
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		if (syscall(SYS_setgroups, 0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		_exit(asuser_run(&other, try_open, &o) == -EPERM && o.err == -1 ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_of_thread),
		cmocka_unit_test(test_run_as_nobody),
		cmocka_unit_test(test_run_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
