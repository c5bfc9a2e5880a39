/* The Python scanner (selector stage 2's eyes): a hand-written tokenizer and parser of the subset
 * of Python that matters for test selection. One call reads one file's bytes and returns plain
 * structs with counts: classes, functions and methods with line ranges and decorators, the
 * instantiate_*_tests calls, imports with the local names they bind, the dotted names each
 * function body uses (resolved through the file's import aliases), normalized body hashes,
 * op database entries (OpInfo(...) and kin) and the aten ops registered by decorators.
 *
 * It never fails on bad Python: what it cannot parse becomes a warning with the line, and it
 * picks up at the next line whose indentation closes the current block. A file that is not
 * UTF-8 is skipped (result->skipped) with a warning naming the byte offset. Time is linear in
 * the size of the file. Lines are numbered from 1; a "line range" is first..last inclusive. */
#ifndef SELECTOR_SCAN_H
#define SELECTOR_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One argument of a call (a decorator's, a class's bases, an instantiate call's). */
enum scan_arg_kind {
	SCAN_ARG_OTHER = 0,  /* anything else: kept as text only (lists, comprehensions, calls) */
	SCAN_ARG_NAME = 1,   /* a dotted name: value is the name without spaces ("torch.float16") */
	SCAN_ARG_STRING = 2, /* one plain string literal: value is its content, quotes removed */
	SCAN_ARG_NUMBER = 3, /* a number: value is its text */
};

struct scan_arg {
	const char *keyword; /* "name" for name=..., NULL for a positional argument */
	const char *text;    /* the argument's source text from its first to its last token */
	enum scan_arg_kind kind;
	const char *value; /* see scan_arg_kind; NULL for SCAN_ARG_OTHER */
};

struct scan_decorator {
	const char *name; /* the dotted name as written, without spaces: "ops", "unittest.skipIf";
			   * when the expression is more than that name followed by calls,
			   * subscripts and attributes ("x if c else y", "(lambda f: f)"): text */
	const char *text; /* the whole decorator expression after '@', as written */
	bool called;      /* has an argument list: @ops(...) vs @onlyCUDA */
	const char *args; /* the text between the parentheses; NULL when not called */
	struct scan_arg *argv;
	size_t argc;
	uint32_t line; /* the line of the '@' */
};

struct scan_class {
	const char *name;
	const char *qualname;   /* "Outer.Inner" for nested classes, "f.Local" inside a function */
	int parent_class;       /* index in classes of the enclosing class, -1 if none */
	int parent_function;    /* index in functions of the enclosing function, -1 if none */
	uint32_t first_line;    /* the `class` line */
	uint32_t last_line;     /* the last line of the body */
	uint32_t deco_line;     /* the first decorator's line, first_line when undecorated */
	struct scan_arg *bases; /* positional and keyword arguments of the class line, as written */
	size_t n_bases;
	struct scan_decorator *decorators;
	size_t n_decorators;
	/* The hash of its decorators, its `class` line and its own statements (methods and nested
	 * classes left out, they have their own), as a function's body hash is made. */
	uint64_t body_hash;
};

struct scan_function {
	const char *name;
	const char *qualname; /* "Class.method", "outer.inner" */
	int class_index;      /* the class whose body holds this def directly (a method), else -1 */
	int parent_function;  /* the enclosing function for a nested def, else -1 */
	bool is_async;
	uint32_t first_line; /* the `def` line */
	uint32_t last_line;  /* the last line of the body */
	uint32_t deco_line;  /* the first decorator's line, first_line when undecorated */
	struct scan_decorator *decorators;
	size_t n_decorators;
	/* Dotted names the body uses, sorted and deduplicated. Chains rooted at an imported name
	 * are resolved through the import ("F.gelu" -> "torch.nn.functional.gelu"); chains rooted
	 * at a name defined at module level in this file are kept as written ("helper",
	 * "MyClass.method"); attributes of anything else keep only their last name with a leading
	 * dot ("x.add(...)" -> ".add", "self.assertEqual" -> ".assertEqual"). The dotted names of
	 * the decorators count as uses (`@_deco` -> "_deco"). A name reached through a computed
	 * name is "!" and the root it is computed under: `getattr(torch.special, name)` ->
	 * "!torch.special" (with a plain string, `getattr(m, "f")` is the use "m.f"),
	 * `importlib.import_module("torch.a")` / `__import__("torch.a")` -> "!torch.a", and
	 * `exec(...)`, `eval(...)` or an import of a computed module -> "!*" (anything). */
	const char **uses;
	size_t n_uses;
	/* The hash of the decorators, the def line and the body, token by token, each line at its
	 * block depth: comments, blank lines, spacing, line breaks inside brackets, line endings
	 * (CRLF/CR/LF), the indentation's width and the docstring do not change it; any other
	 * edit does. */
	uint64_t body_hash;
	/* Aten ops registered by @register_decomposition(aten.x), @register_lowering(...),
	 * @register_meta(...) and friends (any decorator whose last name contains "register"):
	 * "x", or "x.overload" when the overload is named. */
	const char **registers;
	size_t n_registers;
	/* Its parameters, in order: each one's name as `keyword` ("*args", "**kwargs" with their
	 * stars) and its default's canonical text (struct scan_binding) in `text`, NULL when it has
	 * none. What an op database class's constructor defaults are read from. */
	struct scan_arg *params;
	size_t n_params;
	/* An __init__'s `super().__init__(...)` arguments as written (scan_arg), NULL when it has
	 * none: what an op database class passes its base for the attributes it computes from
	 * its own parameters (`error_inputs_func=make_error_inputs_elementwise_binary(...)`). */
	struct scan_arg *super_args;
	size_t n_super_args;
	/* Its body returns one of its own nested functions (`return wrapper`): what a call of it
	 * gives is a function, never None. */
	bool returns_function;
	/* The statements of its body (nested functions' included) that run `op`, the parameter
	 * an @ops test receives its entry by (a call of it or of its variants, or op handed on
	 * whole; not a look at its data such as op.sample_inputs(...)): all of them, and those
	 * that only expect an error (inside `with self.assertRaises...(...):`, or a
	 * `self.assertRaises...(...)` call). */
	uint32_t op_statements, op_raising;
};

struct scan_import {
	const char *module; /* absolute module: "a.b.c"; relative imports resolved when the file's
			       module path is known, else kept with their leading dots ("..x") */
	const char *name;   /* `from M import name`: the name; NULL for `import M` */
	const char *local;  /* the local name bound: "a" for `import a.b.c`, "c" for `import a.b as
			       c`, "d" for `from a.b import c as d`; "*" for a star import */
	const char *target; /* what the local name stands for: "a", "a.b", "a.b.c" (module.name) */
	int level;          /* leading dots of a relative import, 0 for absolute */
	int function;       /* the function the import is in, -1 at module or class level */
	uint32_t line;
};

enum scan_instantiate_kind {
	SCAN_INSTANTIATE_DEVICE_TYPE = 0, /* instantiate_device_type_tests(Class, globals(), ...) */
	SCAN_INSTANTIATE_PARAMETRIZED = 1, /* instantiate_parametrized_tests(Class) */
};

struct scan_instantiate {
	enum scan_instantiate_kind kind;
	const char *class_name; /* the class argument as written ("TestFoo"), "" when none */
	struct scan_arg *argv;  /* every argument */
	size_t argc;
	uint32_t line;
};

/* An op database entry: OpInfo("add", ...), UnaryUfuncInfo(...), any *Info("name", ...). */
struct scan_opinfo {
	const char *kind;              /* the callee's last name: "OpInfo", "BinaryUfuncInfo" */
	const char *name;              /* the first positional plain string literal, or name=
					* (an f-string or bytes names no entry) */
	const char *aten_name;         /* aten_name= when present, else NULL */
	const char *variant_test_name; /* variant_test_name= when present, else NULL */
	/* dtypes= evaluated statically (a tuple of torch.X, floating_types(), all_types_and(
	 * torch.half, ...)): canonical names in a fixed order, "float32,float64"; NULL when
	 * absent or not evaluable. */
	const char *dtypes;
	const char *sample_func; /* sample_inputs_func= when a plain name, else NULL */
	/* The literal shapes the sample function builds when it is defined in this file (tuples
	 * of integers and the size constants S, M, L, XS): "(5, 10);(5,);()"; NULL when none. */
	const char *samples;
	uint32_t first_line; /* the callee's line */
	uint32_t last_line;  /* the closing parenthesis's line */
	uint64_t hash;       /* its tokens, from the callee's name to the closing parenthesis */
	/* The call's arguments as written (scan_arg: keyword, text, kind, value): what the op
	 * lists' conditions ask of an entry (`op.supports_sparse`, `op.ref is not None`). */
	struct scan_arg *args;
	size_t n_args;
	/* The dotted names its arguments use, resolved as a function's are (`op=lambda x:
	 * torch.a.f(x)`, `ref=np.add`): what running the entry's op may call. */
	const char **uses;
	size_t n_uses;
};

/* A module-level or class-level name bound by an assignment (`NAME = expr`, `NAME: T = expr`,
 * `NAME += expr`), with the dotted names its value uses, resolved as a function's are: the
 * callables a table holds (`_FNS = [torch.a.f]`, `OPS = {"x": lambda x: torch.b.g(x)}`,
 * `_F = partial(torch.c.h, 1)`). A later statement that extends it (`NAME[k] = v`,
 * `NAME.append(v)`) adds its names. In source order of the first binding. */
struct scan_global {
	const char *name;
	int class_index; /* the class whose body binds it, -1 at module level */
	uint32_t line;   /* the first binding */
	const char **uses;
	size_t n_uses;
};

/* A binding statement at module or class level, in source order: `NAME = value`, `NAME: T =
 * value`, `NAME += value`. Its value is canonical text: the tokens one after the other, a space
 * only between two names, numbers or strings (no comment, no line break), and each op database
 * entry that the statement itself holds replaced by `@N`, N its index in opinfos. What the op
 * lists of the op database and of the test files are made of (selector/src/catalog_oplists.c). */
struct scan_binding {
	const char *name;
	int class_index; /* the class whose body binds it, -1 at module level */
	bool augmented;  /* `+=` */
	const char *value;
	uint32_t line;
};

/* A test method a module-level call adds at import time: `F(Class)` whose body does
 * `setattr(cls, name, fn)` in a loop over a list of string literals (selector/src/
 * scan_generated.c). `name` is NULL when the names are not static: generated at run time. */
struct scan_generated {
	const char *class_name; /* the call's argument */
	const char *name;       /* "test___add___not_implemented", or NULL */
	const char *generator;  /* F */
	uint32_t line;          /* the call's line */
};

struct scan_warning {
	uint32_t line;       /* 0 for a whole-file warning */
	const char *message; /* "unterminated triple-quoted string", "not UTF-8 at byte 1234" */
};

struct scan_file {
	const char *path;
	const char *module_path; /* as given, may be NULL */
	bool skipped; /* not UTF-8 or a NUL byte: nothing else is filled in; see warnings */
	uint32_t n_lines;
	/* Every statement outside a def (decorators, def lines and bodies), made as a function's
	 * body hash is, without the module's docstring and without the op database entries (each
	 * has its own hash): an edit inside an entry leaves it as it was. */
	uint64_t module_hash;
	struct scan_class *classes; /* in source order */
	size_t n_classes;
	struct scan_function *functions; /* in source order (of their def lines) */
	size_t n_functions;
	struct scan_import *imports;
	size_t n_imports;
	struct scan_instantiate *instantiates;
	size_t n_instantiates;
	struct scan_opinfo *opinfos;
	size_t n_opinfos;
	struct scan_global *globals;
	size_t n_globals;
	struct scan_binding *bindings; /* in source order */
	size_t n_bindings;
	struct scan_warning *warnings;
	size_t n_warnings;
	struct scan_generated *generated; /* in the memory behind arena_ */
	size_t n_generated;
	void *arena_; /* private: the memory behind every pointer above */
};

/* Scans `len` bytes of `data` (need not be NUL-terminated), the file at `path` (used in
 * messages and kept in the result). `module_path` ("torch.nn.functional"; for a package's
 * __init__.py the package, "torch.nn") resolves relative imports; NULL keeps them relative.
 * Returns 0 and a result to free with scan_file_destroy(), ERR_LIMIT when len exceeds
 * PYTHON_FILE_MAX, ERR_NOMEM, or ERR_INVAL for NULL arguments. A file that is not UTF-8 is
 * success with skipped set. */
int selector_scan(struct scan_file **out, const char *path, const char *module_path,
		  const char *data, size_t len);

/* Frees a result; NULL is a no-op. */
void scan_file_destroy(struct scan_file *file);

/* Index in file->functions of the innermost function whose range (from its first decorator to
 * its last line) holds `line`, or -1. Same for classes. For mapping a diff hunk. */
int selector_scan_function_at(const struct scan_file *file, uint32_t line);
int selector_scan_class_at(const struct scan_file *file, uint32_t line);
/* Index in file->opinfos of the innermost entry whose range holds `line`, or -1. */
int selector_scan_opinfo_at(const struct scan_file *file, uint32_t line);

#endif
