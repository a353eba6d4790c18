/* Unit tests of pyframes.c on real interpreters: each CPython on this machine (Debian's python3,
 * pyenv's 3.8 to 3.13) runs a program whose main thread sleeps in leaf() called by middle()
 * called by Outer.run(), and a second thread that sleeps in worker(); its frames are read from
 * its memory with process_vm_readv and must be those, innermost first, with their file and
 * first lines. A pyenv version this machine lacks is skipped, saying so; Debian's python3 is
 * installed by make deps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/pyframes.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char program[] =
	"import sys, threading, time\n"
	"def worker():\n"
	"    time.sleep(60)\n"
	"def leaf():\n"
	"    t = threading.Thread(target=worker, daemon=True)\n"
	"    t.start()\n"
	"    time.sleep(0.2)\n"
	"    sys.stdout.write('%d\\n' % t.native_id if hasattr(t, 'native_id') else 'none\\n')\n"
	"    sys.stdout.flush()\n"
	"    time.sleep(60)\n"
	"def middle():\n"
	"    leaf()\n"
	"class Outer:\n"
	"    def run(self):\n"
	"        middle()\n"
	"Outer().run()\n";

struct child {
	pid_t pid;
	pid_t worker; /* 0: unknown (3.7 and older have no native_id) */
};

static int read_mem(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct child *c = arg;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(c->pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EIO;
}

static bool start(const char *python, struct child *c)
{
	int fds[2];
	char line[32] = "";
	FILE *in;

	assert_int_equal(pipe(fds), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(python, python, "-c", program, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	if (!fgets(line, sizeof(line), in)) {
		fclose(in);
		return false;
	}
	fclose(in);
	c->worker = (pid_t)atoi(line);
	usleep(100 * 1000); /* the main thread is in time.sleep by now */
	return true;
}

static void stop(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
}

/* The interpreter's file in the child's maps and its load bias. */
static bool find_interpreter(const struct child *c, struct pyframes_symbols *sym, uint64_t *bias)
{
	char path[64], line[4096];
	FILE *maps;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->pid);
	maps = fopen(path, "r");
	assert_non_null(maps);
	while (!found && fgets(line, sizeof(line), maps)) {
		unsigned long long lo, hi, off;
		char file[4096] = "";

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &lo, &hi, &off, file) < 4 ||
		    off || file[0] != '/' || pyframes_symbols_of(file, sym))
			continue;
		int fd = open(file, O_RDONLY);
		Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
		size_t n = 0;
		uint64_t first = UINT64_MAX;

		elf_getphdrnum(elf, &n);
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first)
				first = ph.p_vaddr & ~0xfffull;
		}
		elf_end(elf);
		close(fd);
		*bias = lo - first;
		found = true;
	}
	fclose(maps);
	return found;
}

static void check_interpreter(const char *python, unsigned minor)
{
	struct child c;
	struct pyframes_symbols sym;
	struct pyframes py;
	struct pyframe frames[16];
	uint64_t bias = 0;
	int n;
	bool qualified = minor >= 11;

	if (access(python, X_OK)) {
		print_message("%s: not on this machine (pyenv's), not tested\n", python);
		return;
	}
	assert_true(start(python, &c));
	assert_true(find_interpreter(&c, &sym, &bias));
	assert_int_equal(pyframes_open(&py, &sym, bias, read_mem, &c), 0);
	assert_int_equal(py.major, 3);
	assert_int_equal(py.minor, minor);

	n = pyframes_stack(&py, c.pid, frames, 16);
	for (int i = 0; i < n; i++)
		print_message("%s: %s:%u\n", python, frames[i].name, frames[i].line);
	assert_int_equal(n, 4);
	assert_string_equal(frames[0].name, "leaf");
	assert_string_equal(frames[1].name, "middle");
	assert_string_equal(frames[2].name, qualified ? "Outer.run" : "run");
	assert_string_equal(frames[3].name, "<module>");
	for (int i = 0; i < n; i++)
		assert_string_equal(frames[i].file, "<string>");
	assert_int_equal(frames[0].first_line, 4);
	assert_int_equal(frames[1].first_line, 11);
	assert_int_equal(frames[3].first_line, 1);
	/* Each at its line: the sleep, the calls. */
	assert_int_equal(frames[0].line, 10);
	assert_int_equal(frames[1].line, 12);
	assert_int_equal(frames[2].line, 15);
	assert_int_equal(frames[3].line, 16);
	/* The outermost frame ends its evaluation's run; before 3.11 every frame does. */
	assert_true(frames[3].run_end);
	if (minor < 11)
		assert_true(frames[0].run_end && frames[1].run_end);
	/* Again, the code objects from the cache now: the same frames. */
	{
		struct pyframe again[16];

		assert_int_equal(pyframes_stack(&py, c.pid, again, 16), 4);
		for (int i = 0; i < 4; i++) {
			assert_string_equal(again[i].name, frames[i].name);
			assert_int_equal(again[i].line, frames[i].line);
			assert_int_equal(again[i].first_line, frames[i].first_line);
		}
	}

	if (c.worker) {
		n = pyframes_stack(&py, c.worker, frames, 16);
		assert_true(n >= 1);
		assert_string_equal(frames[0].name, "worker");
		assert_true(frames[n - 1].run_end);
	}
	assert_int_equal(pyframes_stack(&py, 1, frames, 16), -ESRCH);
	pyframes_close(&py);
	stop(&c);
}

static void debian_python3(void **state)
{
	(void)state;
	check_interpreter("/usr/bin/python3.11", 11);
}

#define PYENV(v, minor)                                                  \
	static void pyenv_##minor(void **state)                          \
	{                                                                \
		(void)state;                                             \
		check_interpreter("/root/.pyenv/versions/" v "/bin/python3." #minor, minor); \
	}
PYENV("3.8.18", 8)
PYENV("3.9.18", 9)
PYENV("3.10.13", 10)
PYENV("3.11.7", 11)
PYENV("3.12.1", 12)
PYENV("3.13.0", 13)

/* A process that is no interpreter has no _PyRuntime; an unknown version is refused. */
static void not_an_interpreter(void **state)
{
	struct pyframes_symbols sym;
	struct pyframes py;

	(void)state;
	assert_int_equal(pyframes_symbols_of("/bin/true", &sym), -ENOENT);
	assert_int_equal(pyframes_symbols_of("/nonexistent/python3.12", &sym), -ENOENT);
	memset(&sym, 0, sizeof(sym));
	sym.runtime = 0x1000;
	sym.code_type = 0x2000;
	sym.name_major = 3;
	sym.name_minor = 7;
	assert_int_equal(pyframes_open(&py, &sym, 0, read_mem, NULL), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debian_python3), cmocka_unit_test(pyenv_8),
		cmocka_unit_test(pyenv_9),        cmocka_unit_test(pyenv_10),
		cmocka_unit_test(pyenv_11),       cmocka_unit_test(pyenv_12),
		cmocka_unit_test(pyenv_13),       cmocka_unit_test(not_an_interpreter),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
