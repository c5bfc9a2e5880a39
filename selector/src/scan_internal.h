/* Private to the Python scanner: the arena that owns every result string, growable arrays, the
 * tokenizer's logical lines, and the parser state shared by scan.c, scan_lex.c, scan_stmt.c
 * and scan_names.c. */
#ifndef SELECTOR_SCAN_INTERNAL_H
#define SELECTOR_SCAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "selector/scan.h"

#define SCAN_BRACKET_DEPTH_MAX 200 /* deeper nesting is flattened and warned about */
#define SCAN_FSTRING_DEPTH_MAX 16  /* f-strings inside f-string fields */
#define SCAN_SCOPE_DEPTH_MAX   100 /* nested def/class scopes */
#define SCAN_BLOCK_DEPTH_MAX   200 /* nested indented blocks of any statement */
#define SCAN_WARNINGS_MAX      1000

/* ---- arena: bump allocation in chunks, freed all at once ---- */
struct arena_chunk;
struct arena {
	struct arena_chunk *head;
};
void *scan__alloc(struct arena *a, size_t n); /* zeroed, NULL on failure */
char *scan__strndup(struct arena *a, const char *s, size_t n);
/* An OpInfo's dtypes= text evaluated (scan_opsamples.c): *out is the canonical list or NULL
 * when not evaluable; ERR_NOMEM only. */
int scan__dtypes_eval(struct arena *a, const char *s, size_t n, const char **out);
/* After a scan: each op entry's sample function's literal shapes (scan_opsamples.c). */
int scan__opsamples(struct scan_file *f, struct arena *a, const char *d, size_t len);
void scan__arena_free(struct arena *a);

/* Fills f->generated from the text once the rest of the scan is done (scan_generated.c). */
int scan__generated(struct scan_file *f, struct arena *a, const char *d, size_t len);

/* Grows a malloc'd array so that one more element fits; NULL on failure. */
void *scan__grow(void *arr, size_t n, size_t *cap, size_t elem);

/* ---- tokens and logical lines ---- */
enum tok_kind {
	TOK_NAME = 1,
	TOK_NUMBER,
	TOK_STRING,
	TOK_OP,
};

struct tok {
	uint32_t off; /* byte offset in the data */
	uint32_t len;
	uint32_t line; /* line of the first byte */
	uint8_t kind;
	char op;       /* the first character of an operator */
	int32_t match; /* for an opening bracket: index of its closing one in the line, else -1 */
};

struct lline {
	struct tok *toks;
	size_t n;
	size_t cap;
	uint32_t indent; /* columns, tabs to the next multiple of 8 */
	uint32_t first_line;
	uint32_t last_line;
};

struct lexer {
	const char *d;
	size_t len;
	size_t pos;
	uint32_t line;
	struct scan_state *st; /* for warnings */
	char stack[SCAN_BRACKET_DEPTH_MAX];
	uint32_t stack_line[SCAN_BRACKET_DEPTH_MAX];
	size_t depth;
	int32_t open_idx[SCAN_BRACKET_DEPTH_MAX]; /* token index of each open bracket */
	int err;                                  /* ERR_NOMEM once allocation failed */
};

/* Reads the next logical line into `ll`; returns 1 when a line was read, 0 at the end of the
 * data, or a negative error (ERR_NOMEM). */
int scan__lex_next(struct lexer *lx, struct lline *ll);

/* ---- parser state ---- */
struct scope {
	int is_class;
	int index;       /* in classes or functions */
	uint32_t indent; /* the header's indentation */
	uint32_t depth;  /* the header's block depth (hashes use depths, not columns) */
	uint64_t hash;   /* running hash: a function's body; a class's own statements */
	bool first;      /* no statement of its body seen yet: a string there is its docstring */
};

struct rawuse {           /* a name a function or a global uses, before resolution */
	int function;     /* >= 0: a function; < 0: the global -1 - function, or at or below
			   * SCAN_USE_OPINFO the op database entry SCAN_USE_OPINFO - 1 - function */
	const char *name; /* arena; chain as written without spaces, or ".attr" */
};

#define SCAN_USE_OPINFO (-(1 << 28)) /* rawuse.function at or below: an op database entry */

struct scan_state {
	struct scan_file *f;
	struct arena *arena;
	const char *d;
	size_t len;
	const char *module_path;
	bool is_package; /* the file is an __init__.py */
	int err;

	size_t cap_classes, cap_functions, cap_imports, cap_inst, cap_opinfo, cap_warn, cap_globals,
	    cap_bindings;
	struct scope scopes[SCAN_SCOPE_DEPTH_MAX];
	size_t n_scopes;
	uint32_t prev_last_line; /* the last line of the previous logical line */
	size_t dropped_warnings;

	struct scan_decorator *pending; /* decorators waiting for their def or class */
	size_t n_pending, cap_pending;
	uint32_t pending_line;
	uint64_t pending_hash;

	const char **regs; /* aten ops of the pending register_* decorators */
	size_t n_regs, cap_regs;

	struct rawuse *uses;
	size_t n_uses, cap_uses;
	uint64_t module_hash;
	uint32_t module_lines; /* logical lines hashed into the module hash */
	bool module_first;     /* no module-level statement seen yet: a string is the docstring */
	uint32_t line_depth;   /* the block depth of the logical line being read */
	uint32_t blocks[SCAN_BLOCK_DEPTH_MAX]; /* indentation of each open block, outermost first */
	size_t n_blocks;

	struct alias *assigns; /* module-level `NAME = dotted.name` and `NAME = ...` */
	size_t n_assigns, cap_assigns;

	uint32_t raises[SCAN_BLOCK_DEPTH_MAX]; /* indentation of each open `with
						* self.assertRaises...:` block */
	size_t n_raises;

	struct scan_template *templates;
	size_t n_templates, cap_templates;
	struct scan_site *sites; /* of the current logical line */
	size_t n_sites, cap_sites;
};

/* An entry call in the body of a module-level function: what each call of the function makes
 * an entry of (scan_entries.c). */
struct scan_template {
	int function;
	const char *text; /* the call's source, from the callee to its closing parenthesis */
};

/* Tokens [from, to] of the current logical line made entries [first, first + count). */
struct scan_site {
	size_t from, to;
	size_t first, count;
};

struct alias {
	const char *local;
	const char *target; /* NULL: a module-level name that is no alias */
};

void scan__warn(struct scan_state *st, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The hash of tokens [from, to) of a logical line: the tokens alone, one after the other, so
 * that comments, spacing and line breaks inside brackets change nothing (scan_stmt.c). */
uint64_t scan__tokens_hash(const struct scan_state *st, const struct lline *ll, size_t from,
			   size_t to);
/* The innermost open function, or -1 at module or class level (scan_stmt.c). */
int scan__in_function(const struct scan_state *st);
/* The site of the current logical line that starts at token i and made op database entries
 * (scan__opinfos), or NULL (scan_entries.c). */
const struct scan_site *scan__site(const struct scan_state *st, size_t i);

/* Tokens [a, b) as canonical text (struct scan_binding); with first_entry >= 0, each op
 * database entry in it as `@N`, numbered from first_entry (scan_names.c). NULL: ERR_NOMEM. */
const char *scan__canon(struct scan_state *st, const struct lline *ll, size_t a, size_t b,
			long first_entry);
/* A module- or class-level binding statement to f->bindings; its entries were recorded from
 * index first_entry on (scan_names.c). */
int scan__binding(struct scan_state *st, const struct lline *ll, size_t first_entry);

/* One logical line: structure, imports, decorators, defs, calls, uses, hashes (scan_stmt.c). */
int scan__statement(struct scan_state *st, struct lline *ll);
/* Closes every open scope (end of file). */
void scan__close_all(struct scan_state *st);

/* Imports, module-level assignments and instantiate_*_tests calls of a plain logical line;
 * `function` is the innermost open function or -1 (scan_imports.c). */
int scan__simple(struct scan_state *st, const struct lline *ll, int function);
/* Aten op names in the arguments (open, close) of a register_* decorator, to st->regs. */
int scan__registers(struct scan_state *st, const struct lline *ll, size_t open, size_t close);

/* The arguments of the call whose parentheses are tokens open and close: the token range
 * [starts[k], ends[k]) of each (at most max kept); their count. A lambda's parameters stay
 * in its argument (scan_names.c). */
size_t scan__split_args(const struct scan_state *st, const struct lline *ll, size_t open,
			size_t close, size_t *starts, size_t *ends, size_t max);
/* Op database entries anywhere in a logical line, and the line's sites (scan_entries.c). */
int scan__opinfos(struct scan_state *st, const struct lline *ll);
/* Dotted-name chains of tokens [from, to) as uses of every open function (scan_names.c). */
int scan__collect_uses(struct scan_state *st, const struct lline *ll, size_t from, size_t to);
/* Dotted-name chains of tokens [from, to) as uses of one function (function >= 0) or global
 * (-1 - index). */
int scan__collect_uses_of(struct scan_state *st, const struct lline *ll, size_t from, size_t to,
			  int function);
/* A module-level or class-level plain statement that binds or extends a global: its uses
 * (scan_names.c). */
int scan__global_line(struct scan_state *st, const struct lline *ll);
/* Resolves every raw use through the imports and builds each function's sorted list. */
int scan__resolve_uses(struct scan_state *st);

/* Arguments of a call: tokens strictly between brackets open and close (scan_names.c). */
int scan__args(struct scan_state *st, const struct lline *ll, size_t open, size_t close,
	       struct scan_arg **out, size_t *n);
/* "a.b.c" from tokens [i, *end) when they are NAME (. NAME)*; NULL when not a name there. */
const char *scan__dotted(struct scan_state *st, const struct lline *ll, size_t i, size_t *end);
/* The value of a single plain string literal token (simple escapes), arena; NULL if f-string
 * or bytes. */
const char *scan__string_value(struct scan_state *st, const struct tok *t);

static inline bool tok_is(const struct scan_state *st, const struct tok *t, const char *s, size_t n)
{
	return t->len == n && __builtin_memcmp(st->d + t->off, s, n) == 0;
}
#define TOK_IS(st, t, lit) tok_is((st), (t), (lit), sizeof(lit) - 1)

static inline bool tok_op(const struct tok *t, char c)
{
	return t->kind == TOK_OP && t->len == 1 && t->op == c;
}

bool scan__is_keyword(const char *s, size_t n);

/* 64-bit hashing (FNV-1a with a final mix). */
#define SCAN_HASH_INIT 0xcbf29ce484222325ull
static inline uint64_t scan__hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
static inline uint64_t scan__mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

#endif
