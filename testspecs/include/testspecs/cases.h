/* Kernel cases: how one eligible upstream test becomes the emulator runs that stand for it
 * (op, input shapes, dtype, tolerance, expected mode, seed). The bridge is docs/specs.md's
 * "From an upstream test to kernel cases"; the first rule that yields cases wins:
 *   1. the test entry's `kernels:` extension: exactly those cases;
 *   2. `edits.ops.include[]` entries with `sample_inputs_func`: those ops with those shapes;
 *   3. an @ops-parametrised test: every op of the specs' `global.supported_ops` that the test's
 *      op family admits and the emulator implements (plus the entry's edits.ops.include, less
 *      its edits.ops.exclude), each with what the op database says about it when the caller
 *      knows its OpInfo entry (spec_opinfo): the shapes its sample_inputs_func builds, at its
 *      dtypes; else the op's default samples (spyre_ops[].samples: stick-aligned and
 *      unaligned shapes) at its dtypes when known; each case says which (spec_case_source);
 *   4. the ops the test body calls (the caller scans them) that the specs support and the
 *      emulator implements, with default samples;
 *   5. none: "not mappable", with the reason.
 * Every case is crossed with the effective dtypes of its op and carries the mode and the
 * precision the resolver (resolve.h) gives for that op and dtype; what the specs refuse (an op
 * they do not let run for the test, a dtype outside its effective dtypes) and what the emulator
 * lacks (an op, a dtype) make the case UNSUPPORTED: listed with the reason and counted, never
 * dropped. Ids are a hash of test id, op, shapes and dtype; seeds mix that hash with
 * global.input_config.seed and keep 53 bits, so the same specs give the same cases on every
 * host and every JSON reader holds the seed exactly.
 *
 * Upstream op names (OpInfo names such as `nn.functional.gelu`, and body calls such as
 * `torch.add` or `F.gelu`) meet the emulator's op names through one explicit table,
 * testspecs_opmap[]: see opmap.c and docs/specs.md. */
#ifndef TESTSPECS_CASES_H
#define TESTSPECS_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "testspecs/spec.h"

#define SPEC_CASE_INPUTS_MAX   4       /* = SPYRE_OP_INPUTS_MAX */
#define SPEC_CASE_DIMS_MAX     8       /* dims of one case input */
#define SPEC_CASES_MAX         1000000 /* cases in one list */
#define SPEC_CASE_OP_MAX       64      /* bytes of an op name, with its NUL */
#define SPEC_PRECISION_DEFAULT 1e-3    /* torch-spyre's framework default atol = rtol */
#define SPEC_GRAPH_PATH_MAX    480     /* bytes of a graph case's resolved path, with its NUL */

/* The slice of the op database an @ops decorator iterates over, as far as the file tells it. */
enum spec_op_family {
	SPEC_FAMILY_ANY = 0,     /* @ops(op_db) and friends: every op */
	SPEC_FAMILY_UNARY_UFUNC, /* @ops(unary_ufuncs): test_unary_ufuncs.py */
	SPEC_FAMILY_BINARY_UFUNC,
	SPEC_FAMILY_REDUCTION, /* @ops(reduction_ops): test_reductions.py */
	SPEC_FAMILY_OTHER,     /* an op in no ufunc or reduction list */
};

/* One row of the upstream -> emulator table. */
struct spec_op_map {
	const char *upstream; /* OpInfo name: "nn.functional.gelu", "div.no_rounding_mode" */
	const char *emu;      /* the emulator op: "gelu" */
	enum spec_op_family family;
};

extern const struct spec_op_map testspecs_opmap[];
extern const size_t testspecs_opmap_count;

/* The emulator op for a call of `emu` with `nin` tensors when that count differs from the op's
 * own: the tensor-scalar forms (mul, add, sub and div with one tensor: mul_scalar, ...) and
 * linear without bias (linear_nobias). `emu` itself otherwise. */
const char *testspecs_opmap_form(const char *emu, int nin);

/* The row for an upstream name. Tries the name as written, then with the call prefixes
 * "torch.nn.functional." and "F." rewritten to "nn.functional.", then without "torch." or
 * "Tensor.". The emulator's own op names are rows too. NULL when none. */
const struct spec_op_map *testspecs_opmap_find(const char *name);

/* The family of the @ops tests of an upstream file, by its basename (test_binary_ufuncs.py ->
 * BINARY_UFUNC, test_unary_ufuncs.py -> UNARY_UFUNC, test_reductions.py -> REDUCTION, else ANY). */
enum spec_op_family testspecs_family_for_path(const char *path);

enum spec_case_rule {
	SPEC_RULE_NONE = 0,      /* not mappable */
	SPEC_RULE_KERNELS,       /* 1 */
	SPEC_RULE_SAMPLE_INPUTS, /* 2 */
	SPEC_RULE_OPINFO,        /* 3 */
	SPEC_RULE_BODY_OPS,      /* 4 */
};
const char *testspecs_rule_name(enum spec_case_rule rule); /* "kernels", ..., "not_mappable" */

/* What a case runs: one op, or a whole op graph (a `kernels:` entry's `graph:`; its first
 * inputs' shapes are the case's, its op is "graph", spec_case.kernel->g the graph). */
enum spec_case_kind { SPEC_CASE_OP = 0, SPEC_CASE_GRAPH };
/* A graph case's relayout mode (spec_kernel.relayout): "best", "ring", "devmem"; "?" else. */
const char *testspecs_relayout_name(int relayout);
/* Where a rule-3 case's shapes and dtypes came from: the best the caller knew for its op. */
enum spec_case_source {
	SPEC_SOURCE_NONE = 0,       /* not rule 3: its own rule says it all */
	SPEC_SOURCE_OPINFO_SAMPLES, /* the OpInfo's sample_inputs_func shapes (at its dtypes) */
	SPEC_SOURCE_OPINFO_DTYPES,  /* the op's default samples at the OpInfo's dtypes */
	SPEC_SOURCE_DEFAULT,        /* the op's default samples: nothing better is known */
	SPEC_SOURCE_COUNT
};
/* "OpInfo sample_inputs_func shapes", "OpInfo dtypes", "the op's default samples", "-". */
const char *testspecs_source_name(enum spec_case_source source);

#define SPEC_OPINFO_SHAPES_MAX 16 /* sample shapes used per op */

/* What the op database says about one op, as far as a static read of it can tell. */
struct spec_opinfo {
	const char *kind;        /* "BinaryUfuncInfo", "ReductionOpInfo", ... */
	const char *dtypes;      /* its dtypes=: "float16,float32" (torch names); NULL: not known */
	const char *shapes;      /* its sample_inputs_func's literal shapes: "(5, 10);(5,);()";
				  * NULL: none known */
	const char *sample_func; /* the function's name; NULL when not a plain name */
	const char *where;       /* "path:line" of the entry, for explanations; may be NULL */
	/* What PyTorch's test itself does with this op, from the entry's DecorateInfos for the
	 * test and the test's own decorators (bits 1u << enum spec_dtype): the dtypes it skips
	 * (skip_why: the decorator), the dtypes it expects to fail, and the tolerance it gives a
	 * dtype (toleranceOverride, precisionOverride; 0: none given). */
	uint32_t skip, xfail;
	const char *skip_why;
	double atol[SPEC_DTYPE_COUNT], rtol[SPEC_DTYPE_COUNT];
};

/* torch.testing.assert_close's default tolerance for a dtype (0 for integers and bool): what
 * a test that gives none compares at. */
void testspecs_pytorch_tolerance(enum spec_dtype d, double *atol, double *rtol);

struct spec_case {
	char id[17]; /* 16 hex digits */
	enum spec_case_kind kind;
	char *test_id;             /* owned */
	char op[SPEC_CASE_OP_MAX]; /* as the spec or the scan named it */
	const char *emu_op;        /* spyre_ops[].name; NULL when the emulator lacks it */
	int nin;
	int64_t shapes[SPEC_CASE_INPUTS_MAX][SPEC_CASE_DIMS_MAX];
	int ndims[SPEC_CASE_INPUTS_MAX];
	enum spec_dtype dtype;
	double atol, rtol;
	enum spec_mode mode; /* after force_xfail */
	uint64_t seed;
	enum spec_case_rule rule;
	enum spec_case_source source; /* rule 3: where its shapes and dtypes came from */
	bool unsupported;
	char why[128];                    /* why unsupported; "" otherwise */
	const struct spec_kernel *kernel; /* rule 1: its params; else NULL (points into the set) */
	/* rule 2: the call's arguments (values, index tuples, kwargs) testspecs_case_params()
	 * reads; else NULL (points into the set) */
	const struct spec_sample_inputs *sample;
	struct spec_loc loc; /* the spec node that produced the case */
};

struct spec_case_list {
	struct spec_case *v;
	size_t n, cap;
	size_t n_unsupported;
};

void testspecs_cases_init(struct spec_case_list *list);
void testspecs_cases_finish(struct spec_case_list *list);

/* What the caller knows about one upstream test besides its id: the requested tier, and the
 * scanner's facts (parametrised over the op database, the ops its body calls). Eligibility,
 * mode, effective dtypes, force_xfail and precision are the resolver's (resolve.h): the one
 * source of truth; expansion asks it for the test and for each op it expands. */
struct spec_case_test {
	const char *test_id;         /* "test/test_binary_ufuncs.py::TestBinaryUfuncs::test_add" */
	const char *tier;            /* the requested label; NULL: any */
	const char *device;          /* backend name in method suffixes; NULL: "spyre" */
	bool opinfo;                 /* the test is @ops-parametrised */
	enum spec_op_family family;  /* its op family (testspecs_family_for_path) */
	bool source_unread;          /* the test's file was not read (no upstream given): rules 3
					and 4 know nothing of it, and the reason says so */
	const char *const *body_ops; /* rule 4: calls the scanner found ("torch.add", "F.gelu") */
	size_t n_body_ops;
	int (*is_test)(void *ctx, const char *id); /* spec_resolve_opts.is_test; may be NULL */
	void *is_test_ctx;
	/* Rule 3: the op database's entry for an op as the specs name it ("add",
	 * "div.no_rounding_mode"): 1 and *out filled (pointers valid while the caller's data
	 * lives), or 0 when none is known. NULL: no op database (default samples). */
	int (*opinfo_of)(void *ctx, const char *op, struct spec_opinfo *out);
	/* Rule 3: whether the test's @ops list runs the supported op `op` (1), does not (0), or
	 * is not known (-1: the family decides), asked with opinfo_ctx. NULL: the family. */
	int (*runs_op)(void *ctx, const char *op);
	void *opinfo_ctx;
	/* An @ops test that maps to no kernel case whatever its list: why (its body runs no op of
	 * the list, only expects errors from it, or runs it at unsupported dtypes); NULL: none. */
	const char *no_case_why;
	/* The entries of the test's @ops list as the upstream evaluates it ("name",
	 * "name.variant"), NULL when not known: the ops rule 3 expands when the specs bound no
	 * ops, since PyTorch then runs every op of the list on the device. */
	const char *const *list_ops;
	size_t n_list_ops;
	/* The test's own toleranceOverride / precisionOverride per dtype (0: none), for the cases
	 * of rules without an op database entry. */
	double atol[SPEC_DTYPE_COUNT], rtol[SPEC_DTYPE_COUNT];
};

struct spec_decision;

/* What the specs alone tell of a test whose source the caller has not read: @ops-parametrised
 * when the deciding entry carries an `ops__...` tag or its file is test_ops.py (every test of
 * TestCommon iterates the op database), and the op family by the file's name
 * (testspecs_family_for_path). Sets t->opinfo and t->family from `d`, the test's decision; a
 * NULL `d` (the id did not resolve) knows nothing. */
void testspecs_case_test_from_specs(struct spec_case_test *t, const struct spec_decision *d);

struct spec_expand_result {
	bool eligible;                 /* the resolver's decision */
	enum spec_mode mode;           /* the test's mode (before per-op force_xfail) */
	const struct spec_test *entry; /* the deciding entry; NULL when unlisted */
	const struct spec_file *file;  /* its file entry; NULL when no file covers the test */
	enum spec_case_rule rule;      /* the rule that yielded the cases; NONE: none did */
	const char *why;               /* NONE: the reason (static text or `reason`) */
	char reason[256];              /* the resolver's reason when it refused the test */
	size_t n_cases;                /* appended, unsupported ones included */
	size_t n_unsupported;
	size_t n_by_source[SPEC_SOURCE_COUNT]; /* cases by spec_case_source */
};

struct spec_resolver;

/* Appends the kernel cases of one test to `list`. `r` is a resolver built on `set`. A test the
 * resolver finds not eligible (skip, no file, other tier, dtype or op refused) appends nothing
 * and says why in `res`. A device-generic variant id (`..._add_spyre_float16`) expands only its
 * op and dtype. Returns 0, ERR_INVAL for an id that does not parse, ERR_NOMEM, or ERR_LIMIT
 * past SPEC_CASES_MAX. */
int testspecs_cases_expand(struct spec_case_list *list, const struct spec_resolver *r,
			   const struct spec_set *set, const struct spec_case_test *test,
			   struct spec_expand_result *res);

/* The cases of one test entry of `file` by itself (rules 1 and 2 only), for entries whose names
 * are regular expressions or whose file is a glob (no concrete test id without an upstream
 * checkout). The resolver decides as for a test that this entry alone lists; the cases carry
 * `label` (the pattern, with its path) as their test id. `file` and `entry` point into `set`. */
int testspecs_cases_expand_entry(struct spec_case_list *list, const struct spec_set *set,
				 const struct spec_file *file, const struct spec_test *entry,
				 const char *label, const char *tier,
				 struct spec_expand_result *res);

struct spyre_op_params;

/* The emulator parameters of a case: a `kernels:` entry's params, or a sample_inputs_func
 * call's non-tensor arguments and kwargs read by what the op is (dims, sizes, getitem's index
 * tuple, a scalar operand, a cast's dtype, attention's scale). Starts from the emulator's
 * defaults (spyre_run_opts_init). 0, or ERR_INVAL with the reason in err_last() when an
 * argument cannot be read or asks for what the emulator does not do (the case is then
 * unsupported). */
int testspecs_case_params(const struct spec_case *c, struct spyre_op_params *p);

#endif
