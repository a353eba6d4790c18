/* view_name.c — shortened function names (see view_name.h).
 *
 * Names reach the views already demangled: module.c and lines.c demangle each once with libiberty
 * and keep no mangled name, and a saved profile holds only demangled ones. So the short forms are
 * read back from the demangler's output, whose shape is fixed (cp-demangle.c's printer):
 *
 *     [return type " "] name [template args] "(" params ")" [" const" " &&"...]
 *         [" [clone .cold]"...]                 and the profile's " (inlined)" last
 *
 * where the name is scopes joined by "::", a scope may be a function (its parameters printed:
 * "foo(int)::Local::run()"), a lambda ("{lambda(int)#1}"), "(anonymous namespace)" or an operator
 * ("operator< <int>": the printer puts a space between an operator ending in '<' and its template
 * arguments), and special names ("non-virtual thunk to ...") lead the rest. Rust's
 * ("<T as core::ops::Drop>::drop", "core::slice::<impl [T]>::sort", "alloc::vec::Vec<T,A>::push")
 * and v0's "::<u8>" arguments follow the same brackets.
 *
 * Brackets are matched whole before anything is cut: inside () [] {} angle brackets are text
 * ("(a<b)"), inside <> every bracket counts, "->" closes nothing, and operator names are tokens
 * ("operator<<", "operator()"). Anything unbalanced, or nested past GROUP_DEPTH_MAX, is shown as
 * it is. What `short` keeps is checked against libiberty's own output without DMGL_PARAMS over
 * every C++ symbol of libstdc++ (tests/unit/test_view_name.c). */
#include "proftop/view_name.h"

#include <stdbool.h>
#include <string.h>

#define GROUP_DEPTH_MAX 128
#define RUST_HASH_LEN 19       /* "::h" and 16 hex digits */

static const char *const labels[VIEW_NAMES_COUNT] = { "full", "short", "bare" };

const char *view_names_label(enum view_names names)
{
	return (unsigned)names < VIEW_NAMES_COUNT ? labels[names] : "full";
}

int view_names_parse(const char *label)
{
	for (int i = 0; i < VIEW_NAMES_COUNT; i++)
		if (!strcmp(label, labels[i]))
			return i;
	return -1;
}

/* --- reading the demangler's output ----------------------------------------------------------- */

/* Letters, digits, '_' and '$', and every byte of a UTF-8 sequence (Rust names may have them). */
static bool ident_char(char c)
{
	unsigned char u = (unsigned char)c;

	return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
	       u == '_' || u == '$' || u >= 0x80;
}

static bool starts(const char *s, size_t i, size_t end, const char *word)
{
	size_t n = strlen(word);

	return end - i >= n && !memcmp(s + i, word, n);
}

/* The operator symbols, longest first so that the first match is the longest. */
static const char *const operator_symbols[] = {
	"->*", "<=>", "<<=", ">>=", "()", "[]", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
	"&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/", "%", "^", "&",
	"|", "~", "!", "=", "<", ">", ",",
};

enum operator_kind {
	OPERATOR_NONE,
	OPERATOR_SYMBOL,       /* "operator<<": a name that ends where its symbol does */
	OPERATOR_WORDS,        /* "operator new", "operator char const*", "operator\"\" _km": the
				* name goes on, spaces and all, to its parameter list */
};

/* Whether an operator name starts at s[i] (from is where the text starts), and where its
 * "operator" and symbol end (*after). */
static enum operator_kind operator_at(const char *s, size_t i, size_t from, size_t end,
				      size_t *after)
{
	size_t j = i + 8;

	if (!starts(s, i, end, "operator") || (i > from && ident_char(s[i - 1])) ||
	    (j < end && ident_char(s[j])))
		return OPERATOR_NONE;
	if (j < end && (s[j] == ' ' || s[j] == '"')) {
		*after = j;
		return OPERATOR_WORDS;
	}
	for (size_t k = 0; k < sizeof(operator_symbols) / sizeof(*operator_symbols); k++)
		if (starts(s, j, end, operator_symbols[k])) {
			j += strlen(operator_symbols[k]);
			/* "operator< <int>": the space belongs to the name. */
			if (s[j - 1] == '<' && starts(s, j, end, " <"))
				j++;
			*after = j;
			return OPERATOR_SYMBOL;
		}
	return OPERATOR_NONE;
}

static char closer(char open)
{
	return open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
}

/* "->" (Rust's "Fn(u32) -> u32") closes no angle bracket. */
static bool arrow_at(const char *s, size_t i, size_t from)
{
	return s[i] == '>' && i > from && s[i - 1] == '-';
}

/* The end (the index after its closer) of the group that s[i] opens, reading no further than end;
 * 0 when it does not close there, a closer of another kind comes first, or it nests too deep. */
static size_t group_end(const char *s, size_t i, size_t end, int depth)
{
	char close = closer(s[i]);
	bool angles = s[i] == '<';
	size_t from = i, after;

	if (depth >= GROUP_DEPTH_MAX)
		return 0;
	for (i++; i < end;) {
		char c = s[i];

		if (c == close && !arrow_at(s, i, from))
			return i + 1;
		if (angles && operator_at(s, i, from, end, &after) == OPERATOR_SYMBOL) {
			i = after;
		} else if (c == '(' || c == '[' || c == '{' || (angles && c == '<')) {
			i = group_end(s, i, end, depth + 1);
			if (!i)
				return 0;
		} else if (c == ')' || c == ']' || c == '}' || (angles && c == '>' && !arrow_at(s, i, from))) {
			return 0;
		} else {
			i++;
		}
	}
	return 0;
}

/* Whether s[from, end) is only a member function's qualifiers: " const", " volatile", " &&"... */
static bool qualifiers_only(const char *s, size_t from, size_t end)
{
	static const char *const words[] = { "const", "volatile", "restrict", "&", "&&",
					     "transaction_safe", "noexcept" };
	size_t i = from;

	while (i < end) {
		size_t n = 0;
		bool known = false;

		if (s[i++] != ' ')
			return false;
		while (i + n < end && s[i + n] != ' ')
			n++;
		for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++)
			known |= strlen(words[w]) == n && !memcmp(s + i, words[w], n);
		if (!known)
			return false;
		i += n;
	}
	return true;
}

/* Where the function's own name and parameter list are in s[from, end). */
struct signature {
	size_t name;           /* where the name starts: after the return type, if any */
	size_t params, params_end; /* its last parameter list, [params, params_end) */
	bool function;         /* it has one, followed only by qualifiers */
};

/* Read s[from, end) at the top level; false when its brackets do not match. */
static bool read_signature(const char *s, size_t from, size_t end, struct signature *sig)
{
	bool after_name = false, words = false, seen_params = false;
	size_t i = from, after;

	memset(sig, 0, sizeof(*sig));
	sig->name = from;
	while (i < end) {
		char c = s[i];
		enum operator_kind op = operator_at(s, i, from, end, &after);

		if (op != OPERATOR_NONE) {
			words = op == OPERATOR_WORDS;
			after_name = !words;
			i = after;
			continue;
		}
		if (c == '(' || c == '[' || c == '{' || c == '<') {
			size_t e = group_end(s, i, end, 0);

			if (!e)
				return false;
			if (c == '(' && (after_name || words)) { /* (words go on: "operator
								     * void (X::*)()()" */
				sig->params = i;
				sig->params_end = e;
				sig->function = seen_params = true;
				after_name = false;
			} else {
				after_name = (c == '<' && after_name) || c == '[';
			}
			i = e;
			continue;
		}
		if (c == ')' || c == ']' || c == '}' || (c == '>' && !arrow_at(s, i, from)))
			return false;
		/* A space before the first parameter list ends the return type; after it, spaces
		 * are qualifiers' ("X::f() const::Local::g()"). */
		if (c == ' ' && !words && !seen_params)
			sig->name = i + 1;
		after_name = ident_char(c);
		i++;
	}
	sig->function = sig->function && qualifiers_only(s, sig->params_end, end);
	return true;
}

/* --- writing the shortened name ---------------------------------------------------------------- */

struct out {
	char *buf;
	size_t size, len;      /* len: bytes written, up to size - 1 */
};

static void emit(struct out *o, const char *s, size_t n)
{
	size_t room = o->size - 1 - o->len;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* Rust's "::<u8>" is a list of generic arguments; its "::<impl [T]>" a path. */
static bool arguments_at(const char *s, size_t i, size_t from, size_t end, bool after_name)
{
	if (after_name)
		return true;
	return i >= from + 2 && s[i - 1] == ':' && s[i - 2] == ':' && !starts(s, i, end, "<impl ");
}

/* s[from, end) with each list of template arguments written "<>"; the angle brackets of a path
 * ("<T as Trait>") are kept, the arguments inside them go too. */
static void emit_bare(struct out *o, const char *s, size_t from, size_t end)
{
	bool after_name = false;
	size_t i = from, after;

	while (i < end) {
		char c = s[i];
		size_t e;

		if (operator_at(s, i, from, end, &after) != OPERATOR_NONE) {
			emit(o, s + i, after - i);
			after_name = true;
			i = after;
			continue;
		}
		if (c != '<' || arrow_at(s, i, from) || !(e = group_end(s, i, end, 0))) {
			emit(o, s + i, 1);
			after_name = ident_char(c) || c == ']';
			i++;
			continue;
		}
		if (arguments_at(s, i, from, end, after_name)) {
			emit(o, "<>", 2);
		} else {
			emit(o, "<", 1);
			emit_bare(o, s, i + 1, e - 1);
			emit(o, ">", 1);
		}
		after_name = true;
		i = e;
	}
}

/* The part of s[from, end) before the clone suffixes (" [clone .cold]") and " (inlined)". */
static size_t suffixes_start(const char *s, size_t from, size_t end)
{
	static const char inlined[] = " (inlined)", clone[] = " [clone ";

	if (end - from >= sizeof(inlined) - 1 &&
	    !memcmp(s + end - (sizeof(inlined) - 1), inlined, sizeof(inlined) - 1))
		end -= sizeof(inlined) - 1;
	while (end > from && s[end - 1] == ']') {
		size_t open = end - 1; /* back to its '[' */

		while (open > from && s[open] != '[' && (open == end - 1 || s[open] != ']'))
			open--;
		if (s[open] != '[' || open == from || !starts(s, open - 1, end, clone))
			break;
		end = open - 1;
	}
	return end;
}

/* The special names libiberty puts before a function's: kept, and the function after them
 * shortened. */
static size_t special_prefix(const char *s, size_t from, size_t end)
{
	static const char *const prefixes[] = {
		"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
		"transaction clone for ", "non-transaction clone for ", "TLS init function for ",
		"TLS wrapper function for ", "hidden alias for ", "guard variable for ",
	};

	for (bool more = true; more;) {
		more = false;
		for (size_t p = 0; p < sizeof(prefixes) / sizeof(*prefixes); p++)
			if (starts(s, from, end, prefixes[p])) {
				from += strlen(prefixes[p]);
				more = true;
			}
	}
	return from;
}

static bool rust_hash_at(const char *s, size_t from, size_t end)
{
	if (end - from <= RUST_HASH_LEN || !starts(s, end - RUST_HASH_LEN, end, "::h"))
		return false;
	for (size_t i = end - 16; i < end; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

const char *view_name(const char *name, enum view_names names, char *buf, size_t size)
{
	size_t len = strlen(name), core, tail = suffixes_start(name, 0, len), kept_end;
	struct signature sig;
	struct out o = { buf, size, 0 };

	if (names == VIEW_NAMES_FULL || !size)
		return name;
	core = special_prefix(name, 0, tail);
	if (!read_signature(name, core, tail, &sig))
		return name;
	kept_end = sig.function ? sig.params : tail;
	if (!sig.function)
		sig.name = core;
	if (rust_hash_at(name, sig.name, kept_end))
		kept_end -= RUST_HASH_LEN;
	emit(&o, name, core);
	if (names == VIEW_NAMES_BARE)
		emit_bare(&o, name, sig.name, kept_end);
	else
		emit(&o, name + sig.name, kept_end - sig.name);
	emit(&o, name + tail, len - tail);
	buf[o.len] = 0;
	return o.len == len && !memcmp(buf, name, len) ? name : buf;
}
