/* The in-memory model of torch-spyre's test-suite YAML (the "spec" format, docs/specs.md),
 * as the loader builds it: every node carries where it was written (file, line, column, all
 * 1-based), so that lint, the resolver and `specs explain` can point at the entry that decided
 * something. A spec_set holds one or more files merged the way torch-spyre merges them; it owns
 * every string and array below (an arena inside the set), and testspecs_set_destroy() frees all
 * of it at once. Pointers into a set stay valid until the set is destroyed.
 *
 * Optional scalars carry a `has_` flag (or SPEC_MODE_UNSET / SPEC_TRI_UNSET) so that "absent" and
 * "the default" stay distinguishable: the defaults are applied by the resolver, not here.
 *
 * Our extension key `kernels:` (under a test entry; torch-spyre ignores nothing, so files that
 * use it are spyre-ci-only) lists explicit kernel cases:
 *
 *   kernels:
 *     - op: softmax                      # required: an op of the emulator's table
 *       inputs: ["67x256", {shape: [3, 64], dtype: float16, init: randn}]
 *       dtype: float16                   # optional: default the test's effective dtypes
 *       atol: 1e-3                       # optional: default the precision the resolver finds
 *       rtol: 1e-3
 *       mode: xfail                      # optional: default the test's mode
 *       seed: 7                          # optional: default global.input_config.seed
 *       params: {dim: -1}                # optional: op parameters, scalars kept as text
 *
 * An input is either a shape string ("67x256", "[67, 256]" or "4" for 1-D; "" or "[]" is a
 * scalar) or a tensor spec as in sample_inputs_func.
 *
 * A case may name an op graph (spyre-emu/graph.h) instead of an op; the loader reads and checks
 * the file, and the case runs the whole graph against its float64 reference:
 *
 *     - graph: graphs/relayout.yaml      # relative to this spec file's directory
 *       dtype: float16                   # optional: float16 (default) or float32
 *       cores: 8                         # optional: default all cores of the description
 *       relayout: best                   # optional: best (default), ring or devmem
 *       atol: 0.05                       # optional: default the emulator's for the dtype
 *       rtol: 0.05                       # (mode and seed as for an op case)
 */
#ifndef TESTSPECS_SPEC_H
#define TESTSPECS_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- locations and small located values ---- */

struct spec_loc {
	const char *file; /* as given to the loader (owned by the set); "<text>" for load_text */
	uint32_t line;    /* 1-based; 0 = unknown */
	uint32_t col;     /* 1-based */
};

struct spec_str {
	const char *s; /* NUL-terminated, owned by the set; never NULL when present */
	size_t len;
	struct spec_loc loc;
};

struct spec_strs {
	struct spec_str *v;
	size_t n;
	struct spec_loc loc; /* of the sequence itself */
};

struct spec_ints {
	int64_t *v;
	size_t n;
	bool present;
	struct spec_loc loc;
};

enum spec_tri { SPEC_TRI_UNSET = 0, SPEC_TRI_FALSE, SPEC_TRI_TRUE };

/* ---- enumerations of the format ---- */

enum spec_mode {
	SPEC_MODE_UNSET = 0,
	SPEC_MODE_MANDATORY_SUCCESS,
	SPEC_MODE_XFAIL,
	SPEC_MODE_XFAIL_STRICT,
	SPEC_MODE_SKIP,
};

/* The defaults torch-spyre's loader applies (its pydantic models: TestEntry.mode =
 * mandatory_success, FileEntry.unlisted_test_mode = xfail; tests/spyre_test_config_models.py
 * and oot_test_config_models.py / oot_test_constants.py UNLISTED_TEST_MODE_DEFAULT in
 * torch-spyre/torch-spyre). The JSON schema's description ("or listed without an explicit
 * mode") and the RFC's "skip" default disagree with that code; the code is followed. A listed
 * test without `mode` is mandatory_success, never the file's unlisted mode. */
#define SPEC_DEFAULT_LISTED_MODE   SPEC_MODE_MANDATORY_SUCCESS
#define SPEC_DEFAULT_UNLISTED_MODE SPEC_MODE_XFAIL

/* The dtype names of torch-spyre's schema (DtypeString). */
enum spec_dtype {
	SPEC_DTYPE_NONE = 0,
	SPEC_DTYPE_FLOAT16,
	SPEC_DTYPE_FLOAT32,
	SPEC_DTYPE_FLOAT64,
	SPEC_DTYPE_BFLOAT16,
	SPEC_DTYPE_INT8,
	SPEC_DTYPE_INT16,
	SPEC_DTYPE_INT32,
	SPEC_DTYPE_INT64,
	SPEC_DTYPE_UINT8,
	SPEC_DTYPE_UINT16,
	SPEC_DTYPE_UINT32,
	SPEC_DTYPE_UINT64,
	SPEC_DTYPE_COMPLEX32,
	SPEC_DTYPE_COMPLEX64,
	SPEC_DTYPE_COMPLEX128,
	SPEC_DTYPE_BOOL,
	SPEC_DTYPE_COUNT,
};

/* ---- precision, dtypes, named items ---- */

struct spec_precision {
	bool present;
	bool has_atol, has_rtol;
	double atol, rtol;
	struct spec_loc loc;
};

/* A dtype item: global.supported_dtypes[], supported_ops[].dtypes[], edits.dtypes.include[]
 * and exclude[] (the last ignores precision and force_xfail). */
struct spec_dtype_item {
	enum spec_dtype dtype;
	struct spec_str name;
	struct spec_str description; /* .s NULL when absent */
	struct spec_precision precision;
	enum spec_tri force_xfail;
	struct spec_loc loc;
};

struct spec_dtype_items {
	struct spec_dtype_item *v;
	size_t n;
	struct spec_loc loc;
};

/* A {name, description} item: edits.ops.exclude, edits.modules.*, edits.functions.cpu_move.
 * Module includes may also carry module_path and inputs (sample_inputs_func,
 * constructor_inputs, forward_inputs): the inputs are checked but not kept. */
struct spec_named {
	struct spec_str name;
	struct spec_str description; /* .s NULL when absent */
	struct spec_str module_path; /* edits.modules.include only; .s NULL when absent */
	struct spec_loc loc;
};

struct spec_nameds {
	struct spec_named *v;
	size_t n;
	struct spec_loc loc;
};

/* ---- tensor specs (sample_inputs_func) ---- */

struct spec_device_layout {
	bool present;
	struct spec_ints device_size;
	struct spec_ints stride_map;
	struct spec_str device_dtype; /* text; .s NULL when absent */
	struct spec_loc loc;
};

struct spec_tensor {
	struct spec_ints shape;
	struct spec_str dtype_text; /* as written ("float16", "torch.float16", "half") */
	enum spec_dtype dtype;      /* SPEC_DTYPE_NONE when absent */
	struct spec_str device;     /* .s NULL when absent (torch-spyre: "privateuse1") */
	struct spec_str init; /* rand, randn, zeros, ones, randint, arange, eye, full, file; .s NULL
				 when absent (torch-spyre: rand) */
	struct spec_str init_args; /* the node re-serialised as flow YAML text; .s NULL if absent */
	struct spec_ints stride;
	bool has_storage_offset;
	int64_t storage_offset;
	struct spec_device_layout device_layout;
	struct spec_loc loc;
};

enum spec_arg_kind {
	SPEC_ARG_TENSOR = 1,
	SPEC_ARG_TENSOR_LIST,
	SPEC_ARG_VALUE, /* any YAML node, kept as flow text */
	SPEC_ARG_PY,    /* a Python expression, kept as text */
};

struct spec_arg {
	enum spec_arg_kind kind;
	struct spec_tensor tensor; /* SPEC_ARG_TENSOR */
	struct spec_tensor *list;  /* SPEC_ARG_TENSOR_LIST */
	size_t n_list;
	struct spec_str text; /* SPEC_ARG_VALUE, SPEC_ARG_PY */
	struct spec_loc loc;
};

struct spec_kwarg {
	struct spec_str key;
	struct spec_arg arg;
};

struct spec_sample_inputs {
	bool present;
	struct spec_arg *args;
	size_t n_args;
	struct spec_kwarg *kwargs;
	size_t n_kwargs;
	struct spec_loc loc;
};

/* edits.ops.include[]: a name, and optionally the inputs to use for it. */
struct spec_op_include {
	struct spec_str name;
	struct spec_str description;
	struct spec_strs tags;
	struct spec_sample_inputs sample_inputs;
	struct spec_loc loc;
};

/* ---- our extension: explicit kernel cases ---- */

struct spyre_graph;

struct spec_kernel_input {
	bool is_tensor;
	struct spec_str shape_text; /* !is_tensor: "67x256" */
	struct spec_ints shape;     /* !is_tensor: the parsed shape */
	struct spec_tensor tensor;  /* is_tensor */
	struct spec_loc loc;
};

struct spec_param {
	struct spec_str key;
	struct spec_str value; /* flow text */
};

struct spec_kernel {
	struct spec_str op;
	struct spec_kernel_input *inputs;
	size_t n_inputs;
	enum spec_dtype dtype; /* NONE: the test's effective dtypes */
	bool has_atol, has_rtol;
	double atol, rtol;
	enum spec_mode mode; /* UNSET: the test's mode */
	bool has_seed;
	uint64_t seed;
	struct spec_param *params;
	size_t n_params;
	struct spec_str graph;       /* as written; .s NULL for an op case */
	const char *graph_path;      /* the file read: graph resolved against the spec's dir */
	const struct spyre_graph *g; /* the parsed graph (arena-owned); NULL for an op case */
	int cores;                   /* 0: all cores of the hardware description */
	int relayout;                /* enum spyre_relayout_mode: 0 best, 1 ring, 2 devmem */
	struct spec_loc loc;
};

/* ---- test entries, files ---- */

struct spec_edits {
	bool present;
	struct spec_op_include *ops_include;
	size_t n_ops_include;
	struct spec_nameds ops_exclude;
	struct spec_dtype_items dtypes_include;
	struct spec_dtype_items dtypes_exclude;
	struct spec_nameds modules_include;
	struct spec_nameds modules_exclude;
	struct spec_nameds cpu_move; /* edits.functions.cpu_move */
	struct spec_loc loc;
};

struct spec_test {
	struct spec_strs names; /* "Class::method", "method" or a regex; each located */
	enum spec_mode mode;    /* UNSET when absent (see the resolver for the default) */
	struct spec_loc mode_loc;
	struct spec_strs tags;
	struct spec_strs labels;
	enum spec_tri no_grad;
	struct spec_edits edits;
	struct spec_kernel *kernels;
	size_t n_kernels;
	struct spec_strs suite_labels; /* test_suite_config.labels of the document it came from */
	uint32_t doc_file;             /* its index in that document's files[] ... */
	uint32_t doc_test;             /* ... and in that entry's tests[] (for document paths) */
	/* The global section of the document the entry came from: torch-spyre runs one config at
	 * a time, so an entry is decided by its own config's global only. NULL: the set's. */
	const struct spec_global *doc_global;
	struct spec_loc loc;
};

struct spec_file {
	struct spec_str path; /* as written: "${TORCH_ROOT}/test/test_torch.py" */
	const char *resolved; /* after ${...} substitution and normalisation; NULL if unresolved */
	bool is_glob;         /* the path has *, ? or ** after substitution */
	enum spec_mode unlisted; /* unlisted_test_mode; UNSET when absent */
	struct spec_loc unlisted_loc;
	struct spec_test *tests;
	size_t n_tests;
	struct spec_strs labels; /* the suite labels of the document this entry came from */
	const struct spec_global
	    *doc_global; /* the first document's global for this path (the
			  * one that decides its unlisted tests); NULL: set's */
	struct spec_loc loc;
};

/* ---- global ---- */

struct spec_op {
	struct spec_str name;
	bool structured; /* written as {name: ...} rather than a plain string */
	enum spec_tri force_xfail;
	struct spec_dtype_items dtypes; /* .n == 0 and !dtypes_present: the global dtypes */
	bool dtypes_present;
	struct spec_loc loc;
};

struct spec_global {
	bool present;
	struct spec_dtype_items supported_dtypes;
	bool has_supported_dtypes; /* absent: no dtype filtering */
	struct spec_op *supported_ops;
	size_t n_supported_ops;
	bool has_supported_ops;
	struct spec_op *supported_modules; /* same shape as ops: name, force_xfail, dtypes */
	size_t n_supported_modules;
	bool has_supported_modules;
	bool has_seed; /* input_config.seed */
	uint64_t seed;
	struct spec_loc seed_loc;
	struct spec_loc loc;
};

/* ---- the set ---- */

struct spec_arena; /* private */

/* Roots for ${TORCH_ROOT} and ${TORCH_DEVICE_ROOT}; NULL means unset (the token is then an
 * error). Filled by the caller from the environment or its configuration. */
struct spec_roots {
	const char *torch_root;
	const char *torch_device_root;
};

struct spec_set {
	struct spec_file *files; /* merged: one entry per distinct path, tests concatenated */
	size_t n_files;
	struct spec_strs labels;   /* union of every document's test_suite_config.labels */
	struct spec_global global; /* merged: lists are unions, first definition wins per name;
				    * for listings only: decisions use each entry's doc_global */
	const char **sources;      /* the files loaded, in order */
	size_t n_sources;
	struct spec_arena *arena;
};

/* ---- diagnostics ---- */

enum spec_severity { SPEC_WARNING = 1, SPEC_ERROR = 2 };

struct spec_diag {
	const char *file; /* owned by the list */
	uint32_t line, col;
	const char *path; /* "test_suite_config.files[2].tests[0].mode"; owned */
	enum spec_severity severity;
	const char *message; /* owned */
};

struct spec_diag_list {
	struct spec_diag *v;
	size_t n, cap;
	size_t n_errors, n_warnings;
};

void testspecs_diags_init(struct spec_diag_list *list);
void testspecs_diags_finish(struct spec_diag_list *list);
/* Adds one diagnostic (copies every string). Returns 0 or ERR_NOMEM / ERR_LIMIT. */
int testspecs_diags_add(struct spec_diag_list *list, enum spec_severity sev,
			const struct spec_loc *loc, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* "file:line:col: error: message (at path)" */
int testspecs_diag_format(const struct spec_diag *d, char *buf, size_t size);

/* ---- loading ---- */

struct spec_load_opts {
	bool strict;                    /* unknown keys are errors rather than warnings */
	const struct spec_roots *roots; /* NULL: leave paths unresolved (resolved = NULL) */
	struct spec_diag_list *diags;   /* where problems go; NULL: only the return code */
};

/* Creates an empty set. */
int testspecs_set_create(struct spec_set **out);
void testspecs_set_destroy(struct spec_set *set);

/* Loads one YAML file and merges it into `set`. Returns 0 when the file has no error (warnings
 * allowed), ERR_INVAL when it has one or more (each in opts->diags), ERR_IO, ERR_NOMEM. A file
 * with errors adds nothing to the set. */
int testspecs_load_file(struct spec_set *set, const char *path, const struct spec_load_opts *opts);
/* The same from memory; `name` is what locations call the file. */
int testspecs_load_text(struct spec_set *set, const char *name, const char *text, size_t len,
			const struct spec_load_opts *opts);
/* Loads every *.yaml and *.yml file of a directory (not recursive), sorted by name. */
int testspecs_load_dir(struct spec_set *set, const char *dir, const struct spec_load_opts *opts);
/* A file or a directory, whichever `path` is. */
int testspecs_load_path(struct spec_set *set, const char *path, const struct spec_load_opts *opts);

/* ---- names ---- */

const char *testspecs_mode_name(enum spec_mode mode); /* "mandatory_success", ...; "unset" */
int testspecs_mode_parse(const char *text, enum spec_mode *out); /* 0 or ERR_INVAL */
const char *testspecs_dtype_name(enum spec_dtype dtype);
/* Accepts the schema's names and torch-spyre's alias "half"; with `torch_prefix`, also
 * "torch.float16" (tensor specs accept it). 0 or ERR_INVAL. */
int testspecs_dtype_parse(const char *text, bool torch_prefix, enum spec_dtype *out);

/* ---- paths ---- */

/* Substitutes ${TORCH_ROOT} / ${TORCH_DEVICE_ROOT} and normalises the result ("." and ".."
 * segments, repeated slashes). A path that leaves its root (".." past it, or an absolute path
 * not under any root when roots are given) is ERR_INVAL with the detail in err_last().
 * `*out` is malloc'd. */
int testspecs_path_resolve(const struct spec_roots *roots, const char *text, char **out);
/* Glob match of a whole path: `*` and `?` never cross '/', `**` matches any number of whole
 * segments (also none). Returns true on a match. Bounded: linear in pattern x path. */
bool testspecs_glob_match(const char *pattern, const char *path);
/* Whether a path has glob characters. */
bool testspecs_path_is_glob(const char *path);

/* ---- lint ---- */

/* The hook for checks this module does not own (the resolver compiles the regular expressions
 * of test names and reports the ones that do not compile). Called once per test name with its
 * location and document path; adds diagnostics itself. */
typedef void (*spec_lint_name_fn)(void *ctx, const struct spec_str *name, const char *doc_path,
				  struct spec_diag_list *diags);

struct spec_lint_hooks {
	spec_lint_name_fn check_name;
	void *ctx;
};

/* Checks a loaded set for problems the loader cannot see alone: tests listed twice with
 * different modes, dtype names in edits that no global list has, ops excluded that are not
 * supported, empty names, and (through hooks) bad regular expressions. Adds to `diags`;
 * returns the number of errors added (>= 0) or ERR_NOMEM. */
int testspecs_lint(const struct spec_set *set, struct spec_diag_list *diags);
/* The same with hooks (the resolver passes its regex check here); `hooks` may be NULL. */
int testspecs_lint_hooks(const struct spec_set *set, const struct spec_lint_hooks *hooks,
			 struct spec_diag_list *diags);

#endif
