/* symbols.h — from a sampled address in some process to "function in module".
 *
 * A symbolizer follows the address spaces of every process the session sees (from /proc/PID/maps
 * and the kernel's MMAP2/FORK/COMM-exec/EXIT records) and the ELF files mapped there. Each ELF file
 * ("module") is opened and its symbol table read once, the first time an address needs it, and is
 * then kept for the symbolizer's lifetime; every string a symbolizer returns stays valid (and at
 * the same address) until symbolizer_free(). So a (module, function) pointer pair identifies a
 * function and callers may key tables on it.
 *
 * What costs the user names (a file proftop cannot open or read, a stripped one, a JIT's perf map
 * it refuses) is reported once as a warning to the diagnostics channel given to symbolizer_new().
 *
 * Nothing here is thread-safe: a symbolizer belongs to one collector worker (collector.c), and
 * each worker has its own. */
#ifndef PROFTOP_SYMBOLS_H
#define PROFTOP_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct diag;
struct module;
struct symbolizer;

struct symbol {
	/* The function containing the address; NULL when no symbol covers it. */
	const char *function;
	/* Where that function starts, in the module's address space (0 when unknown: a JIT's). Two
	 * functions of one name (static ones of two source files) start at different addresses.
	 * Also set for a stripped function (function NULL) whose start its .eh_frame FDE gives. */
	uint64_t function_addr;
	bool bounded;          /* function_addr holds even though function is NULL */
	uint64_t function_end; /* where a named function ends (exclusive); 0: unknown */
	/* Basename of the mapped file ("libc.so.6"), or a kernel name ("[vdso]", "[heap]"); NULL when
	 * no mapping of the process holds the address. */
	const char *module;
	/* The address in the module's own ELF address space (the link-time vaddr): what
	 * "module+0xoffset" prints when function is NULL. For an unmapped address, the address. */
	uint64_t module_addr;
	/* The ELF file (for module_source()); NULL for JIT code, the unmapped, the unreadable. */
	struct module *elf;
	/* When function is NULL and the address is in no ELF file (anonymous memory, a mapping
	 * without ELF data, no mapping at all): the address itself, which the process's perf map
	 * may name later (symbolizer_jit_name()). 0 otherwise. */
	uint64_t jit_addr;
};

/* diag receives the warnings; NULL drops them. */
struct symbolizer *symbolizer_new(struct diag *diag);
void symbolizer_free(struct symbolizer *symbolizer);

/* Debug files from elsewhere (fetch.h): fn is told, once per module as it is loaded, the build-id
 * of one that lacks symbols or DWARF and has no debug file on disk (NULL: nobody is told). */
typedef void symbolizer_want_fn(void *arg, const unsigned char *build_id, size_t len,
				const char *module);
void symbolizer_want_debug_files(struct symbolizer *symbolizer, symbolizer_want_fn *fn, void *arg);
/* The debug file of build_id[0..len) is at path: every module of that build-id still lacking one
 * takes what it lacks from it (module_add_debug_file()), and named(arg, its name, it) is called
 * for each that gained functions. Returns how many took it; when one refused it, *why (malloc'd)
 * says why. Frames resolved before may now resolve differently. */
typedef void symbolizer_named_fn(void *arg, const char *module, struct module *mod);
size_t symbolizer_add_debug_file(struct symbolizer *symbolizer, const unsigned char *build_id,
				 size_t len, const char *path, char **why, symbolizer_named_fn *named,
				 void *arg);

/* JIT maps read after their addresses were sampled. A perf map is looked at again when it is due
 * (perfmap.h) as addresses come, once more when its process is gone, and at the end of the run
 * (symbolizer_jit_final()): what it names then was unnamed before. ops tell the owner of what was
 * made of the unnamed addresses (NULL: no one is told, and no map is looked at a last time).
 * Each is called on the thread that calls into the symbolizer, and may call into it only
 * symbolizer_jit_name(). */
struct symbolizer_jit_ops {
	/* pid's perf map changed, after an address of pid found no name in it: such addresses may
	 * have one now (symbolizer_jit_name()). Called from inside the symbolizer's calls; its time
	 * counts against the perf maps' share of the worker's time. */
	void (*named)(void *arg, pid_t pid);
	/* Nothing more of pid will be named: its map was looked at a last time after it ended, or
	 * is another program's now (exec). */
	void (*forget)(void *arg, pid_t pid);
	/* Does an address of pid still wait for a name? A last look at a map is taken only then. */
	bool (*waiting)(void *arg, pid_t pid);
};
void symbolizer_set_jit_ops(struct symbolizer *symbolizer, const struct symbolizer_jit_ops *ops,
			    void *arg);
/* The name pid's perf map gives addr as last read (no look at the file), or NULL; *module is
 * what symbolizer_resolve() says of its functions ("[jit]"). */
const char *symbolizer_jit_name(struct symbolizer *symbolizer, pid_t pid, uint64_t addr,
				const char **module);
/* The perf maps of processes gone with addresses waiting for names take their last look, as far
 * as the perf maps' share of time allows; the others later. For a worker's every round. */
void symbolizer_settle_jits(struct symbolizer *symbolizer);
/* The run ended: every perf map that left an address waiting for a name is looked at a last
 * time, read to its end as far as a tenth of the run allows (at least 10 ms, at most 1 s). */
void symbolizer_jit_final(struct symbolizer *symbolizer);

/* Keep the modules' source lines (module_source()) within budget bytes (0: no limit), to be
 * called at a steady pace (once a second): the DWARF of modules unread for 8 calls or more (more
 * for one closed before: symbols.c) is closed, the longest unread first, while they hold more;
 * then the answers they keep are dropped. Adds the closes to *closed. Returns the bytes still
 * held. */
size_t symbolizer_trim_sources(struct symbolizer *symbolizer, size_t budget, uint64_t *closed);

/* Read /proc/PID/maps (replacing what is known of pid). Returns 0 or -errno. */
int symbolizer_load_proc(struct symbolizer *symbolizer, pid_t pid);

/* A PERF_RECORD_MMAP2 (or MMAP): pid mapped path at [start, start+len) from file offset pgoff.
 * Replaces whatever overlapped. ino/maj/min identify the file that was mapped. */
void symbolizer_mmap(struct symbolizer *symbolizer, pid_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
		     const char *path);
/* fork(): the child starts with a copy of the parent's maps. */
void symbolizer_fork(struct symbolizer *symbolizer, pid_t parent, pid_t child);
/* execve(): pid's old maps are gone; MMAP2 records for the new image follow. */
void symbolizer_exec(struct symbolizer *symbolizer, pid_t pid);
/* The process is gone; its maps may be dropped. Its perf map is looked at a last time first,
 * when an address waits for a name (symbolizer_jit_ops). */
void symbolizer_exit(struct symbolizer *symbolizer, pid_t pid);

/* The kernel function named name in module ("[ext4]"; NULL: any), as a kernel frame of that
 * function resolves (/proc/kallsyms); false when the kernel's symbols cannot be read or name
 * none such. */
bool symbolizer_kernel_function(struct symbolizer *symbolizer, const char *name,
				const char *module, struct symbol *out);
/* Resolve addr in pid. Never fails: fills *out as far as it can. When pid is unknown or no mapping
 * holds addr, /proc/PID/maps is read again (at most once per pid per 100 ms) before giving up. */
void symbolizer_resolve(struct symbolizer *symbolizer, pid_t pid, uint64_t addr,
			struct symbol *out);

/* What DWARF unwinding needs of the module mapped at an address: where its code and its unwind
 * tables are in the process, and its bytes. The pointers stay valid until symbolizer_free(). */
struct unwind_info {
	uint64_t bias;               /* runtime address = link-time address + bias */
	uint64_t code_start;         /* runtime range of the module's executable segments */
	uint64_t code_end;
	uint64_t eh_frame_hdr;       /* runtime address of .eh_frame_hdr; 0: none */
	uint64_t eh_frame_hdr_size;
	const unsigned char *debug_frame; /* .debug_frame (the module's or its debug file's) or NULL */
	size_t debug_frame_size;
	struct module *module;       /* for symbolizer_read_module() and its CFI */
};

/* The unwind information of the module holding addr in pid. Returns 0, or -ENOENT when no ELF
 * module with a readable image maps addr. The module is loaded (its file mapped) on first use. */
int symbolizer_unwind_info(struct symbolizer *symbolizer, pid_t pid, uint64_t addr,
			   struct unwind_info *out);
/* Whether addr of pid is code without an ELF image to unwind it by: an executable mapping of
 * anonymous memory or of a file that is no ELF (a JIT's code). */
bool symbolizer_jit_code(struct symbolizer *symbolizer, pid_t pid, uint64_t addr);
/* Copy len bytes at runtime address addr of info's module from its file image (any segment, not
 * only the mapping that holds the code). Returns 0, or -EFAULT when the bytes are not in it. */
int symbolizer_read_module(const struct unwind_info *info, uint64_t addr, void *buf, size_t len);

#endif
