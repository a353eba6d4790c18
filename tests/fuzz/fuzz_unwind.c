/* libFuzzer target: DWARF unwinding (unwind_dwarf.c, unwind_rules.c) of a sample whose registers
 * and copied stack are arbitrary bytes, over real modules' CFI. The input is the sample: a byte of
 * options, the user registers in sample_regs_mask() order (8 bytes each, as many as the input
 * holds), then the stack copy, which starts at the sampled sp. The copy is put in a buffer of its
 * exact size, so AddressSanitizer sees any read outside it; libFuzzer's -timeout sees a loop.
 *
 * The modules, mapped at fixed addresses in the sample's process (pid 0: nothing is read from
 * /proc): a shared object assembled at start-up from the CFI directives below (every kind of row:
 * saved registers, a frame pointer, a CFA from another register, remembered state, a CFA or
 * register expression, a signal frame, a register kept in another, a value rule, a lost return
 * address or rbp, a frame too big for a compact row, code without CFI, a CFA expression that
 * loops) at 0x10000000; the same
 * source with its CFI in .debug_frame alone (converted by debug_frame.c) at 0x20000000; and this
 * machine's libc.so.6 at 0x7f0000000000.
 *
 * Each sample is unwound twice, by cached rows where they can (the default) and by libunwind alone,
 * which must give the same frames and the same truncation (unwind_dwarf_set_fast()'s promise), in
 * a fresh libunwind address space each (its cache is keyed by the instruction pointer alone), and
 * with the same converted .debug_frame (made for both at start-up). The first frame is the
 * sampled ip, and there are never more than asked for. (One thing libunwind gets wrong is let
 * through: past a return address equal to the sampled ip, its cache gives it the wrong row.)
 *
 * Seeds in corpus/fuzz_unwind: samples taken at each p_* label with stacks of return addresses of
 * the object, pointers into the copy, zero and junk, made by this target:
 *   FUZZ_UNWIND_SEEDS=DIR build-fuzz/fuzz_unwind  (writes them to DIR and exits). */
#include "proftop/sample.h"
#include "proftop/symbols.h"
#include "proftop/unwind_dwarf.h"
#include "../unit/unit_frames.h"

#include <asm/perf_regs.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FRAMES_BASE 0x10000000ull
#define FRAMES_DF_BASE 0x20000000ull
#define LIBC_BASE 0x7f0000000000ull
#define MAX_FRAMES 64


static const char *const sample_labels[] = {
	"p_plain", "p_framed", "p_rbx", "p_r15", "p_rsi", "p_remember", "p_big", "p_expr",
	"p_regexpr", "p_valoff", "p_signal", "p_inreg", "p_outer", "p_norbp", "p_nocfi", "f_plain",
	"p_loop",
};
static const char *const return_labels[] = {
	"r_plain", "r_framed", "r_rbx", "r_r15", "r_rsi", "r_remember", "r_big", "r_expr",
	"r_regexpr", "r_valoff", "r_signal", "r_inreg", "r_outer", "r_norbp", "r_nocfi",
};
#define NSAMPLE_LABELS (sizeof(sample_labels) / sizeof(sample_labels[0]))
#define NRETURN_LABELS (sizeof(return_labels) / sizeof(return_labels[0]))

static struct symbolizer *symbolizer;
static struct unwind_dwarf *by_rows, *by_libunwind;
static unsigned nregs_max; /* registers a full sample has */
static unsigned ip_index, sp_index; /* where ip and sp are among them */
static uint64_t mapped[16][2]; /* the modules' segments: [start, end) */
static size_t nmapped;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_unwind: %s\n", what);
	exit(1);
}

/* Map each PT_LOAD segment of the ELF file at path at base + its p_vaddr, as ld.so would.
 * Returns where its first executable segment starts. */
static uint64_t map_file(const char *path, uint64_t base)
{
	uint64_t code = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t n = 0;

	if (!elf || elf_getphdrnum(elf, &n))
		die("cannot read a module's program headers");
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		symbolizer_mmap(symbolizer, 0, base + (ph.p_vaddr & ~0xfffull),
				(ph.p_vaddr & 0xfff) + ph.p_memsz, ph.p_offset & ~0xfffull, 0, 0, 0,
				(ph.p_flags & PF_X ? 4 : 0) | 1, path);
		if (!code && (ph.p_flags & PF_X))
			code = base + ph.p_vaddr;
		if (nmapped < 16) {
			mapped[nmapped][0] = base + (ph.p_vaddr & ~0xfffull);
			mapped[nmapped++][1] = base + ph.p_vaddr + ph.p_memsz;
		}
	}
	elf_end(elf);
	close(fd);
	return code;
}

/* The link-time address of a symbol of the ELF file at path (0: none). */
static uint64_t symbol(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	uint64_t value = 0;

	while (elf && !value && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (gelf_getsym(data, (int)i, &sym) &&
			    (s = elf_strptr(elf, sh.sh_link, sym.st_name)) && !strcmp(s, name))
				value = sym.st_value;
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return value;
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so.6")) {
		snprintf(arg, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Load every module now, so the files can go: the modules keep them mapped. */
static void touch(uint64_t addr)
{
	struct unwind_info info;

	if (symbolizer_unwind_info(symbolizer, 0, addr, &info))
		die("a module could not be loaded");
}

/* Made-up samples at each p_* label, written to dir (see the header). */
static void write_seeds(const char *dir, const char *so)
{
	uint64_t mask = sample_regs_mask(), sp = 0x7ffc00001000ull, state = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < NSAMPLE_LABELS * 2; i++) {
		unsigned char buf[1 + SAMPLE_MAX_REGS * 8 + 48 * 8];
		size_t len = 1;
		char path[PATH_MAX];
		FILE *f;

		buf[0] = (unsigned char)(i % 2 ? 16 : 63);
		for (int reg = 0; reg < PERF_REG_X86_64_MAX; reg++) {
			uint64_t v = sp + 8 * (state % 40);

			state = state * 6364136223846793005ull + 1442695040888963407ull;
			if (!(mask & (1ull << reg)))
				continue;
			if (reg == PERF_REG_X86_IP)
				v = FRAMES_BASE + symbol(so, sample_labels[i % NSAMPLE_LABELS]);
			else if (reg == PERF_REG_X86_SP)
				v = sp;
			memcpy(buf + len, &v, 8);
			len += 8;
		}
		for (int w = 0; w < 48; w++) {
			uint64_t v;

			state = state * 6364136223846793005ull + 1442695040888963407ull;
			switch ((state >> 33) % 6) {
			case 0: case 1: case 2:
				v = FRAMES_BASE + symbol(so, return_labels[(state >> 40) % NRETURN_LABELS]);
				break;
			case 3:
				v = sp + 8 * ((state >> 40) % 48);
				break;
			case 4:
				v = 0;
				break;
			default:
				v = state >> 48;
			}
			memcpy(buf + len, &v, 8);
			len += 8;
		}
		snprintf(path, sizeof(path), "%s/%s-%zu", dir, sample_labels[i % NSAMPLE_LABELS], i);
		f = fopen(path, "w");
		if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
			die("cannot write a seed");
	}
}

/* Each unwinder converts a module's .debug_frame the first time libunwind needs it, and serves it
 * at a made-up address by the order of conversion (unwind_dwarf.c): convert the one such module
 * in both now, so that the two see the same memory there. */
static void warm_up(uint64_t ip)
{
	static const uint64_t stack[8];
	struct sample_record r = { .kind = SAMPLE_KIND_SAMPLE };
	uint64_t ips[4];
	bool truncated;

	r.sample.user = true;
	r.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r.sample.nregs = nregs_max;
	r.sample.regs[ip_index] = ip;
	r.sample.regs[sp_index] = (uint64_t)(uintptr_t)stack;
	r.sample.stack = (const unsigned char *)stack;
	r.sample.stack_size = sizeof(stack);
	unwind_dwarf(by_rows, &r, ips, 4, &truncated);
	unwind_dwarf(by_libunwind, &r, ips, 4, &truncated);
}

/* Assemble the object twice (CFI in .eh_frame, then in .debug_frame alone) in a scratch
 * directory, map both and libc, load them, and remove the directory. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/fuzz_unwind-XXXXXX", src[64], so[64], so_df[64], cmd[512];
	char libc[PATH_MAX] = "";
	FILE *f;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir) || elf_version(EV_CURRENT) == EV_NONE)
		die("cannot make a scratch directory");
	snprintf(src, sizeof(src), "%s/frames.s", dir);
	snprintf(so, sizeof(so), "%s/frames.so", dir);
	snprintf(so_df, sizeof(so_df), "%s/frames-debug_frame.so", dir);
	f = fopen(src, "w");
	if (!f || fputs(asm_source, f) < 0 || fclose(f))
		die("cannot write the assembly source");
	snprintf(cmd, sizeof(cmd),
		 "cc -shared -nostdlib -Wl,--eh-frame-hdr -o %s %s && "
		 "{ echo '	.cfi_sections .debug_frame'; cat %s; } > %s.df.s && "
		 "cc -shared -nostdlib -o %s %s.df.s", so, src, src, src, so_df, src);
	if (system(cmd) != 0)
		die("cannot assemble the object (cc)");
	if (getenv("FUZZ_UNWIND_SEEDS")) {
		write_seeds(getenv("FUZZ_UNWIND_SEEDS"), so);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		exit(system(cmd) != 0);
	}
	dl_iterate_phdr(find_libc, libc);
	if (!libc[0])
		die("libc.so.6 is not loaded");
	symbolizer = symbolizer_new(NULL);
	touch(map_file(so, FRAMES_BASE));
	touch(map_file(so_df, FRAMES_DF_BASE));
	touch(map_file(libc, LIBC_BASE));
	by_rows = unwind_dwarf_new(symbolizer, NULL);
	by_libunwind = unwind_dwarf_new(symbolizer, NULL);
	unwind_dwarf_set_fast(by_libunwind, false);
	nregs_max = (unsigned)__builtin_popcountll(sample_regs_mask());
	ip_index = (unsigned)__builtin_popcountll(sample_regs_mask() & ((1ull << PERF_REG_X86_IP) - 1));
	sp_index = (unsigned)__builtin_popcountll(sample_regs_mask() & ((1ull << PERF_REG_X86_SP) - 1));
	warm_up(FRAMES_DF_BASE + symbol(so_df, "p_plain"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		die("cannot remove the scratch directory");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_record r = { .kind = SAMPLE_KIND_SAMPLE };
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES], ip = 0, sp, end;
	size_t max, na, nb, regs_len;
	unsigned char *stack;
	bool ta, tb;

	if (size < 1)
		return 0;
	max = 1 + data[0] % MAX_FRAMES;
	data++;
	size--;
	r.sample.user = true;
	r.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r.sample.nregs = (unsigned)(size / 8 < nregs_max ? size / 8 : nregs_max);
	regs_len = r.sample.nregs * 8;
	memcpy(r.sample.regs, data, regs_len);
	r.sample.stack_size = size - regs_len;
	stack = malloc(r.sample.stack_size ? r.sample.stack_size : 1);
	memcpy(stack, data + regs_len, r.sample.stack_size);
	r.sample.stack = stack;
	if (r.sample.nregs > ip_index)
		ip = r.sample.regs[ip_index];

	sp = r.sample.nregs > sp_index ? r.sample.regs[sp_index] : 0;
	end = sp + r.sample.stack_size < sp ? UINT64_MAX : sp + r.sample.stack_size;
	unwind_dwarf_forget(by_rows, 0);
	unwind_dwarf_forget(by_libunwind, 0);
	na = unwind_dwarf(by_rows, &r, a, max, &ta);
	nb = unwind_dwarf(by_libunwind, &r, b, max, &tb);
	if (na > max || nb > max || (na && a[0] != ip))
		abort();
	/* A copy over a module's segments (a program that points its stack there) holds what the
	 * program has there, the unwind tables libunwind reads included, where the rows read them
	 * from the file: both must stay within bounds, but need not agree. */
	for (size_t k = 0; k < nmapped; k++)
		if (sp < mapped[k][1] && end > mapped[k][0])
			goto out;
	/* libunwind's frame cache is keyed by the instruction pointer alone: a return address equal
	 * to the sampled ip gets the sampled instruction's row, not its call's, and the frames past
	 * it are libunwind's mistake. Up to that frame the two must agree. */
	for (size_t k = 1; k < nb; k++) {
		if (b[k] == b[0]) {
			nb = k + 1;
			na = na < nb ? na : nb;
			ta = tb;
			break;
		}
	}
	if (na != nb || ta != tb || memcmp(a, b, na * sizeof(a[0]))) {
		fprintf(stderr, "rows: %zu frames%s, libunwind: %zu%s\n", na, ta ? " truncated" : "",
			nb, tb ? " truncated" : "");
		for (size_t k = 0; k < na || k < nb; k++)
			fprintf(stderr, "  %#llx %#llx\n", k < na ? (unsigned long long)a[k] : 0ull,
				k < nb ? (unsigned long long)b[k] : 0ull);
		abort();
	}
out:
	free(stack);
	return 0;
}
