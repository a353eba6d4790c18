/* Unit tests of the shortened function names (view_name.c): C++ and Rust names as the demangler
 * prints them, each level; names that are not functions, and text that does not parse, come back
 * as they are; a small buffer cuts the name. Then the reference: every C++ symbol of libstdc++,
 * demangled with parameters and shortened, must read as libiberty prints it without DMGL_PARAMS;
 * and bare as libiberty's tree printed with each template's arguments left out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "proftop/view_name.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct example {
	const char *full, *shortened, *bare;
};

static const struct example examples[] = {
	{ "void std::vector<int, std::allocator<int> >::push_back(int const&)",
	  "std::vector<int, std::allocator<int> >::push_back", "std::vector<>::push_back" },
	{ "std::vector<int, std::allocator<int> > foo<int>(int)", "foo<int>", "foo<>" },
	{ "bool X::operator< <int>(X const&, X const&)", "X::operator< <int>", "X::operator< <>" },
	{ "X& X::operator<< <int>(int)", "X::operator<< <int>", "X::operator<< <>" },
	{ "void X::operator-<int>(int)", "X::operator-<int>", "X::operator-<>" },
	{ "X::operator->()", "X::operator->", "X::operator->" },
	{ "X::operator()() const", "X::operator()", "X::operator()" },
	{ "X::operator char const*()", "X::operator char const*", "X::operator char const*" },
	{ "X::operator std::vector<int, std::allocator<int> >() const",
	  "X::operator std::vector<int, std::allocator<int> >", "X::operator std::vector<>" },
	{ "operator new(unsigned long, std::nothrow_t const&)", "operator new", "operator new" },
	{ "X::operator delete[](void*)", "X::operator delete[]", "X::operator delete[]" },
	{ "operator\"\" _km(unsigned long long)", "operator\"\" _km", "operator\"\" _km" },
	{ "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()",
	  "main::{lambda(int)#1}::operator()" },
	{ "(anonymous namespace)::foo()", "(anonymous namespace)::foo",
	  "(anonymous namespace)::foo" },
	{ "X::foo() const::L::run()", "X::foo() const::L::run", "X::foo() const::L::run" },
	{ "foo(int)::x", "foo(int)::x", "foo(int)::x" },
	{ "ns::f[abi:cxx11]()", "ns::f[abi:cxx11]", "ns::f[abi:cxx11]" },
	{ "X::get() &&", "X::get", "X::get" },
	{ "foo(int) [clone .isra.0] [clone .cold]", "foo [clone .isra.0] [clone .cold]",
	  "foo [clone .isra.0] [clone .cold]" },
	{ "std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > >::find(int "
	  "const&) (inlined)",
	  "std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > >::find "
	  "(inlined)",
	  "std::map<>::find (inlined)" },
	{ "non-virtual thunk to X::f(int)", "non-virtual thunk to X::f",
	  "non-virtual thunk to X::f" },
	{ "decltype ((({parm#1}+{parm#2}))) add<int, int>(int, int)", "add<int, int>", "add<>" },
	{ "std::function<void (int)>::operator()(int) const", "std::function<void (int)>::operator()",
	  "std::function<>::operator()" },
	/* Rust: no parameters; the legacy hash is gone already (libiberty drops it). */
	{ "<alloc::vec::Vec<T,A> as core::cmp::Ord>::cmp (inlined)",
	  "<alloc::vec::Vec<T,A> as core::cmp::Ord>::cmp (inlined)",
	  "<alloc::vec::Vec<> as core::cmp::Ord>::cmp (inlined)" },
	{ "core::slice::<impl [T]>::sort_unstable_by::{{closure}}",
	  "core::slice::<impl [T]>::sort_unstable_by::{{closure}}",
	  "core::slice::<impl [T]>::sort_unstable_by::{{closure}}" },
	{ "core::ptr::drop_in_place<std::collections::hash::map::HashMap<alloc::string::String,u64>>",
	  "core::ptr::drop_in_place<std::collections::hash::map::HashMap<alloc::string::String,u64>>",
	  "core::ptr::drop_in_place<>" },
	{ "<F as core::ops::function::FnOnce<A>>::call_once", "<F as core::ops::function::FnOnce<A>>::call_once",
	  "<F as core::ops::function::FnOnce<>>::call_once" },
	{ "core::ptr::drop_in_place::<alloc::string::String>",
	  "core::ptr::drop_in_place::<alloc::string::String>", "core::ptr::drop_in_place::<>" },
	{ "<alloc::boxed::Box<dyn core::ops::function::Fn(u32) -> u32> as Drop>::drop",
	  "<alloc::boxed::Box<dyn core::ops::function::Fn(u32) -> u32> as Drop>::drop",
	  "<alloc::boxed::Box<> as Drop>::drop" },
	{ "rsdeep::hash_phase::h4eb6d46fd62d1194", "rsdeep::hash_phase", "rsdeep::hash_phase" },
	/* fuzz_view_name: "::<" at the end of a name was read past it. */
	{ "a::<:s>", "a::<:s>", "a::<>" },
	/* Not demangled functions: as they are. */
	{ "main", "main", "main" },
	{ "libc.so.6+0x1f0", "libc.so.6+0x1f0", "libc.so.6+0x1f0" },
	{ "[inlined] (inlined)", "[inlined] (inlined)", "[inlined] (inlined)" },
	{ "main.(*T).Method", "main.(*T).Method", "main.(*T).Method" },
	{ "LazyCompile:~<anonymous> /srv/app.js:12", "LazyCompile:~<anonymous> /srv/app.js:12",
	  "LazyCompile:~<anonymous> /srv/app.js:12" },
	{ "vtable for X", "vtable for X", "vtable for X" },
	{ "void (*foo(int))(char)", "void (*foo(int))(char)", "void (*foo(int))(char)" },
	/* Unbalanced: as it is. */
	{ "foo<int(bar)", "foo<int(bar)", "foo<int(bar)" },
	{ "a>b(int)", "a>b(int)", "a>b(int)" },
	{ "f(int))", "f(int))", "f(int))" },
	{ "", "", "" },
};

static void examples_at_each_level(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(examples) / sizeof(*examples); i++) {
		const struct example *e = &examples[i];
		char buf[512];

		assert_string_equal(view_name(e->full, VIEW_NAMES_FULL, buf, sizeof(buf)), e->full);
		assert_string_equal(view_name(e->full, VIEW_NAMES_SHORT, buf, sizeof(buf)),
				    e->shortened);
		assert_string_equal(view_name(e->full, VIEW_NAMES_BARE, buf, sizeof(buf)), e->bare);
	}
}

/* Unchanged names come back as the same pointer: nothing copied. */
static void unchanged_is_the_name_itself(void **state)
{
	const char *c = "burn_a", *f = "foo(int)";
	char buf[64];

	(void)state;
	assert_ptr_equal(view_name(c, VIEW_NAMES_BARE, buf, sizeof(buf)), c);
	assert_ptr_equal(view_name(f, VIEW_NAMES_FULL, buf, sizeof(buf)), f);
	assert_ptr_equal(view_name(f, VIEW_NAMES_SHORT, buf, sizeof(buf)), buf);
}

static void small_buffer_cuts(void **state)
{
	char buf[8];

	(void)state;
	assert_string_equal(view_name("ns::function_name(int)", VIEW_NAMES_SHORT, buf, sizeof(buf)),
			    "ns::fun");
	assert_string_equal(view_name("ns::f(int)", VIEW_NAMES_SHORT, buf, 1), "");
}

/* Deep nesting is read up to a bound; past it the name is shown as it is. */
static void deep_nesting_is_bounded(void **state)
{
	size_t depth = 100000;
	char *name = malloc(2 * depth + 16), *buf = malloc(2 * depth + 16);

	(void)state;
	strcpy(name, "f");
	memset(name + 1, '<', depth);
	memset(name + 1 + depth, '>', depth);
	strcpy(name + 1 + 2 * depth, "(int)");
	assert_ptr_equal(view_name(name, VIEW_NAMES_BARE, buf, 2 * depth + 16), name);
	free(name);
	free(buf);
}

static void labels_and_parsing(void **state)
{
	(void)state;
	assert_string_equal(view_names_label(VIEW_NAMES_SHORT), "short");
	assert_int_equal(view_names_parse("full"), VIEW_NAMES_FULL);
	assert_int_equal(view_names_parse("short"), VIEW_NAMES_SHORT);
	assert_int_equal(view_names_parse("Short"), -1);
	assert_int_equal(view_names_parse("bare"), VIEW_NAMES_BARE);
	assert_int_equal(view_names_parse("long"), -1);
}

/* --- the reference: libiberty over libstdc++'s symbols --------------------------------------- */

static const char *const libstdcxx[] = {
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib64/libstdc++.so.6",
	"/usr/lib/libstdc++.so.6",
};

/* Every "_Z" function name of the file's .dynsym (code: what samples name), malloc'd, into *names; returns how many. */
static size_t cxx_symbols(const char *path, char ***names)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	*names = NULL;
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || strncmp(name, "_Z", 2))
				continue;
			if (n == cap)
				*names = realloc(*names, (cap = cap ? 2 * cap : 1024) * sizeof(**names));
			(*names)[n++] = strdup(name);
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

static size_t load_reference(char ***names)
{
	for (size_t i = 0; i < sizeof(libstdcxx) / sizeof(*libstdcxx); i++)
		if (!access(libstdcxx[i], R_OK))
			return cxx_symbols(libstdcxx[i], names);
	fail_msg("no libstdc++.so.6 in %s or the other usual places (install libstdc++6)",
		 libstdcxx[0]);
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool special(const char *demangled)
{
	return strstr(demangled, "thunk to ") || strstr(demangled, "clone for ") ||
	       strstr(demangled, "function for ") || strstr(demangled, "alias for ");
}

/* Clone suffixes are kept here and dropped by libiberty: compare without them. */
static void drop_clones(char *s)
{
	char *c;

	while ((c = strstr(s, " [clone ")))
		memmove(c, strchr(c, ']') + 1, strlen(strchr(c, ']') + 1) + 1);
}

static void short_is_libiberty_without_params(void **state)
{
	char **names, buf[8192];
	size_t n = load_reference(&names), compared = 0, shortened = 0;

	(void)state;
	assert_true(n > 1000);
	for (size_t i = 0; i < n; i++) {
		char *full = cplus_demangle(names[i], DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
		char *want = cplus_demangle(names[i], DMGL_ANSI | DMGL_AUTO);

		if (full && want && !special(full)) {
			const char *got = view_name(full, VIEW_NAMES_SHORT, buf, sizeof(buf));

			if (got != full)
				shortened++;
			if (got != buf) /* the name itself, unshortened */
				strcpy(buf, got);
			drop_clones(buf);
			if (strcmp(buf, want))
				fail_msg("%s: shortened \"%s\" to \"%s\", libiberty prints \"%s\"",
					 names[i], full, buf, want);
			compared++;
		}
		free(full);
		free(want);
	}
	print_message("%zu of %zu names compared, %zu of them shortened\n", compared, n, shortened);
	assert_true(shortened > compared / 2);
	free_names(names, n);
}

/* Each template in the name's scopes replaced by its name: the arguments left out (a standard
 * substitution's text too). The function types of local names' scopes are printed with their
 * parameters, which bare leaves alone. */
static struct demangle_component *without_templates(struct demangle_component *dc, int depth)
{
	if (!dc || depth > 256)
		return dc;
	switch (dc->type) {
	case DEMANGLE_COMPONENT_TEMPLATE:
		return without_templates(dc->u.s_binary.left, depth + 1);
	case DEMANGLE_COMPONENT_SUB_STD: /* "std::basic_string<char, ...>" printed whole */
		if (memchr(dc->u.s_string.string, '<', (size_t)dc->u.s_string.len))
			dc->u.s_string.len = (int)((const char *)memchr(dc->u.s_string.string, '<',
							   (size_t)dc->u.s_string.len) -
						   dc->u.s_string.string);
		return dc;
	case DEMANGLE_COMPONENT_QUAL_NAME:
	case DEMANGLE_COMPONENT_LOCAL_NAME:
	case DEMANGLE_COMPONENT_TYPED_NAME:
	case DEMANGLE_COMPONENT_CONVERSION: /* "operator std::basic_string_view<...>" */
		dc->u.s_binary.left = without_templates(dc->u.s_binary.left, depth + 1);
		dc->u.s_binary.right = without_templates(dc->u.s_binary.right, depth + 1);
		return dc;
	default:
		return dc;
	}
}

/* bare's "<>" dropped, and the space the printer puts after "operator<" before them. */
static void drop_empty_arguments(char *s)
{
	char *c;

	while ((c = strstr(s, "<>"))) {
		bool space = c > s && c[-1] == ' ' && c - s >= 2 && c[-2] == '<';

		memmove(c - space, c + 2, strlen(c + 2) + 1);
	}
}

static void bare_is_libiberty_without_templates(void **state)
{
	char **names, buf[8192];
	size_t n = load_reference(&names), compared = 0, changed = 0;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		char *full = cplus_demangle(names[i], DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO), *want = NULL;
		void *mem = NULL;
		struct demangle_component *dc = cplus_demangle_v3_components(names[i], DMGL_ANSI, &mem);
		size_t size;

		if (dc)
			want = cplus_demangle_print(DMGL_ANSI | DMGL_PARAMS, without_templates(dc, 0), 64,
						    &size);
		if (full && want && !special(full)) {
			const char *got = view_name(full, VIEW_NAMES_BARE, buf, sizeof(buf));

			changed += got != full && strstr(got, "<>");
			if (got != buf) /* the name itself, unshortened */
				strcpy(buf, got);
			drop_clones(buf);
			drop_empty_arguments(buf);
			if (strcmp(buf, want))
				fail_msg("%s: bare \"%s\" from \"%s\", libiberty prints \"%s\"",
					 names[i], buf, full, want);
			compared++;
		}
		free(full);
		free(want);
		free(mem);
	}
	print_message("%zu of %zu names compared, %zu had template arguments\n", compared, n,
		      changed);
	assert_true(changed > compared / 4);
	free_names(names, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(examples_at_each_level),
		cmocka_unit_test(unchanged_is_the_name_itself),
		cmocka_unit_test(small_buffer_cuts),
		cmocka_unit_test(deep_nesting_is_bounded),
		cmocka_unit_test(labels_and_parsing),
		cmocka_unit_test(short_is_libiberty_without_params),
		cmocka_unit_test(bare_is_libiberty_without_templates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
