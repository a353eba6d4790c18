/* test_blocked.c — the threads found waiting at an attach (blocked.h): the /proc parsers on this
 * machine's own files and on malformed text, then scans of real child processes: one asleep is
 * found with the registers and stack it sleeps with and the kernel's frames (or the function it
 * waits in, for a user /proc/PID/stack refuses), its record as the collector parses it; one
 * spinning is not found; one stopped is; one woken between the scan and the confirmation is
 * dropped; a thread that does not exist is not found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/blocked.h"
#include "proftop/sample.h"
#include "proftop/util.h"

#include <asm/perf_regs.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t spin_sink;

/* A child that sleeps (how 's'), spins ('r'), or reads a pipe and answers each byte ('p'). */
static pid_t child(char how, int *to_child, int *from_child)
{
	int down[2], up[2];
	pid_t pid;

	assert_int_equal(pipe(down), 0);
	assert_int_equal(pipe(up), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char byte;

		if (write(up[1], "!", 1) != 1)
			_exit(1);
		if (how == 's') {
			struct timespec ts = { 30, 0 };

			nanosleep(&ts, NULL);
		} else if (how == 'r') {
			for (;;)
				spin_sink++;
		} else {
			while (read(down[0], &byte, 1) == 1)
				if (write(up[1], &byte, 1) != 1)
					break;
		}
		_exit(0);
	}
	*to_child = down[1];
	*from_child = up[0];
	close(down[0]);
	close(up[1]);
	return pid;
}

/* Until the child's state is want (it started, then went to sleep or ran). */
static void wait_state(pid_t pid, char want)
{
	char path[64], text[4096], state = 0;
	uint64_t switches;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)pid);
	for (int i = 0; i < 500 && state != want; i++) {
		if (util_read_small(path, text, sizeof(text)))
			assert_int_equal(blocked_parse_status(text, &state, &switches), 0);
		if (state != want)
			usleep(10000);
	}
	assert_int_equal(state, want);
}

static void end_child(pid_t pid, int to_child, int from_child)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(to_child);
	close(from_child);
}

static void test_parse_status(void **state)
{
	char text[4096], st;
	uint64_t switches;

	(void)state;
	assert_true(util_read_small("/proc/self/status", text, sizeof(text)) > 0);
	assert_int_equal(blocked_parse_status(text, &st, &switches), 0);
	assert_int_equal(st, 'R'); /* this thread, reading it */
	assert_int_equal(blocked_parse_status("State:\tS (sleeping)\nvoluntary_ctxt_switches:\t7\n"
					      "nonvoluntary_ctxt_switches:\t5\n", &st, &switches), 0);
	assert_int_equal(st, 'S');
	assert_int_equal(switches, 12);
	assert_int_equal(blocked_parse_status("State:\tS (sleeping)\nvoluntary_ctxt_switches:\t7\n",
					      &st, &switches), -EINVAL);
	assert_int_equal(blocked_parse_status("", &st, &switches), -EINVAL);
	assert_int_equal(blocked_parse_status("State:\nvoluntary_ctxt_switches:\tx\n"
					      "nonvoluntary_ctxt_switches:\t5\n", &st, &switches), -EINVAL);
	assert_true(blocked_state_waits('S') && blocked_state_waits('D') && blocked_state_waits('T') &&
		    blocked_state_waits('t'));
	assert_false(blocked_state_waits('R') || blocked_state_waits('Z') || blocked_state_waits('X'));
}

static void test_parse_syscall(void **state)
{
	uint64_t sp = 0, ip = 0;

	(void)state;
	assert_int_equal(blocked_parse_syscall("230 0x0 0x0 0x7ffd5a3c8e10 0x7ffd5a3c8e20 0x0 0x0 "
					       "0x7ffd5a3c8df8 0x7f1333b85503\n", &sp, &ip), 0);
	assert_int_equal(sp, 0x7ffd5a3c8df8ull);
	assert_int_equal(ip, 0x7f1333b85503ull);
	assert_int_equal(blocked_parse_syscall("-1 0x7ffd00 0x401000\n", &sp, &ip), 0);
	assert_int_equal(sp, 0x7ffd00);
	assert_int_equal(ip, 0x401000);
	assert_int_equal(blocked_parse_syscall("running\n", &sp, &ip), -EAGAIN);
	assert_int_equal(blocked_parse_syscall("", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("230 0x0\n", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("-1 0x7ffd00\n", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("-1 0x7ffd00 0x401000 0x1\n", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("-1 7ffd00 0x401000\n", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("-1 0x7ffd00 0x4010zz\n", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("-2 0x7ffd00 0x401000\n", &sp, &ip), -EINVAL);
	assert_int_equal(blocked_parse_syscall("-1 0x1ffffffffffffffff 0x401000\n", &sp, &ip),
			 -EINVAL);
}

/* The frames in out[0, len) as "name/module name/module ...". */
static void frames_text(const char *out, size_t len, char *text, size_t size)
{
	const char *at = out, *name, *module;
	size_t used = 0;

	text[0] = '\0';
	while (blocked_next_kframe(&at, out + len, &name, &module))
		used += (size_t)snprintf(text + used, size - used, "%s%s/%s", used ? " " : "", name,
					 module ? module : "");
	assert_ptr_equal(at, out + len);
}

static void test_parse_kstack(void **state)
{
	char out[BLOCKED_KERNEL_MAX], text[1024], big[8192], name[600];
	size_t len, at = 0;

	(void)state;
	len = blocked_parse_kstack("[<0>] hrtimer_nanosleep+0xb5/0x130\n"
				   "[<0>] nfs_wait_bit_killable+0x1d/0x80 [nfs]\n"
				   "[<0>] do_syscall_64+0x71/0x290\n", out, sizeof(out));
	frames_text(out, len, text, sizeof(text));
	assert_string_equal(text, "hrtimer_nanosleep/ nfs_wait_bit_killable/nfs do_syscall_64/");
	/* A line that does not parse ends the frames. */
	len = blocked_parse_kstack("[<0>] one+0x1/0x2\n[<0>] two\n[<0>] three+0x1/0x2\n", out,
				   sizeof(out));
	frames_text(out, len, text, sizeof(text));
	assert_string_equal(text, "one/");
	assert_int_equal(blocked_parse_kstack("", out, sizeof(out)), 0);
	assert_int_equal(blocked_parse_kstack("[<0>] +0x1/0x2\n", out, sizeof(out)), 0);
	assert_int_equal(blocked_parse_kstack("[<0>] a b+0x1/0x2\n", out, sizeof(out)), 0);
	assert_int_equal(blocked_parse_kstack("[<0>] f+0x1/0x2 [mod\n", out, sizeof(out)), 0);
	assert_int_equal(blocked_parse_kstack("[<0>] f\x01+0x1/0x2\n", out, sizeof(out)), 0);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(big, sizeof(big), "[<0>] %s+0x1/0x2\n", name);
	assert_int_equal(blocked_parse_kstack(big, out, sizeof(out)), 0);
	/* At most BLOCKED_KFRAMES_MAX frames, and never past the buffer. */
	for (int i = 0; i < 100; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, "[<0>] f%d+0x1/0x2\n", i);
	len = blocked_parse_kstack(big, out, sizeof(out));
	frames_text(out, len, text, sizeof(text));
	assert_non_null(strstr(text, "f63/"));
	assert_null(strstr(text, "f64/"));
	len = blocked_parse_kstack(big, out, 20);
	assert_true(len <= 20);
	frames_text(out, len, text, sizeof(text));
	assert_string_equal(text, "f0/ f1/ f2/ f3/ f4/"); /* 4 bytes each */
	/* This machine's own stack file, where it can be read (root). */
	if (util_read_small("/proc/self/stack", big, sizeof(big))) {
		len = blocked_parse_kstack(big, out, sizeof(out));
		assert_true(len > 0);
	}
}

static void test_next_kframe_bounds(void **state)
{
	const char good[] = "a\0m\0b\0\0", *at = good, *name, *module;

	(void)state;
	assert_true(blocked_next_kframe(&at, good + sizeof(good) - 1, &name, &module));
	assert_string_equal(name, "a");
	assert_string_equal(module, "m");
	assert_true(blocked_next_kframe(&at, good + sizeof(good) - 1, &name, &module));
	assert_string_equal(name, "b");
	assert_null(module);
	assert_false(blocked_next_kframe(&at, good + sizeof(good) - 1, &name, &module));
	at = good;
	assert_false(blocked_next_kframe(&at, good + 3, &name, &module)); /* module cut */
	at = good + 6;
	assert_false(blocked_next_kframe(&at, good + 8, &name, &module)); /* empty name */
}

/* A sleeping child: found, kept, with the registers it sleeps with (in its C library's
 * nanosleep), its stack and kernel frames; its record parses back. */
static void test_scan_sleeping(void **state)
{
	int to, from;
	char byte;
	pid_t pid = child('s', &to, &from);
	struct blocked_thread t = { pid, pid };
	struct blocked *b;
	struct blockedrec rec;
	struct sample_record r;
	const char *kernel, *name, *module;
	size_t len, kernel_len;
	pid_t tid;
	const void *data;
	Dl_info info;
	bool nanosleep_frame = false;

	(void)state;
	assert_int_equal(read(from, &byte, 1), 1);
	wait_state(pid, 'S');
	b = blocked_scan(&t, 1, 16384);
	assert_non_null(b);
	assert_int_equal(blocked_confirm(b, 12345), 1);
	data = blocked_record(b, 0, &tid, &len);
	assert_int_equal(tid, pid);
	assert_int_equal(len % 8, 0);
	assert_int_equal(blocked_parse(data, len, &rec, &r, &kernel, &kernel_len), 0);
	assert_int_equal(rec.pid, (uint32_t)pid);
	assert_int_equal(rec.since_ns, 12345);
	/* The child is a fork of this process: its C library is where ours is. */
	assert_true(rec.ip != 0);
	assert_true(dladdr((void *)(uintptr_t)rec.ip, &info) && info.dli_fname);
	assert_non_null(strstr(info.dli_fname, "libc"));
	assert_true(rec.stack_size > 0 && rec.stack_size <= 16384);
	assert_ptr_equal(r.sample.stack, (const unsigned char *)data + sizeof(struct perf_event_header) +
					 sizeof(rec));
	assert_int_equal(r.sample.ip, rec.ip);
	assert_true(r.sample.regs_abi != 0);
	assert_true(kernel_len > 0);
	while (blocked_next_kframe(&kernel, kernel + kernel_len, &name, &module))
		if (strstr(name, "nanosleep") || strstr(name, "nsleep"))
			nanosleep_frame = true;
	assert_true(nanosleep_frame);
	blocked_free(b);
	end_child(pid, to, from);
}

/* A spinning child is running, not waiting; a thread that is not there is not found either. */
static void test_scan_running_and_missing(void **state)
{
	int to, from;
	char byte;
	pid_t pid = child('r', &to, &from);
	struct blocked_thread t[2] = { { pid, pid }, { pid, 0x3ffffff0 } };

	(void)state;
	assert_int_equal(read(from, &byte, 1), 1);
	wait_state(pid, 'R');
	assert_null(blocked_scan(t, 2, 16384));
	end_child(pid, to, from);
}

/* A stopped child waits (T); once it is woken and asleep again between the scan and the
 * confirmation it is dropped: its wait at the scan is over. */
static void test_scan_stopped_then_woken(void **state)
{
	int to, from;
	char byte;
	pid_t pid = child('p', &to, &from);
	struct blocked_thread t = { pid, pid };
	struct blocked *b;

	(void)state;
	assert_int_equal(read(from, &byte, 1), 1);
	wait_state(pid, 'S');
	kill(pid, SIGSTOP);
	wait_state(pid, 'T');
	b = blocked_scan(&t, 1, 0);
	assert_non_null(b);
	assert_int_equal(blocked_confirm(b, 1), 1);
	blocked_free(b);
	kill(pid, SIGCONT);
	wait_state(pid, 'S');
	b = blocked_scan(&t, 1, 0);
	assert_non_null(b);
	assert_int_equal(write(to, "x", 1), 1); /* it wakes, answers and sleeps again */
	assert_int_equal(read(from, &byte, 1), 1);
	wait_state(pid, 'S');
	assert_int_equal(blocked_confirm(b, 1), 0);
	assert_int_equal(blocked_count(b), 0);
	blocked_free(b);
	end_child(pid, to, from);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_parse_syscall),
		cmocka_unit_test(test_parse_kstack),
		cmocka_unit_test(test_next_kframe_bounds),
		cmocka_unit_test(test_scan_sleeping),
		cmocka_unit_test(test_scan_running_and_missing),
		cmocka_unit_test(test_scan_stopped_then_woken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
