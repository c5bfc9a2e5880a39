/* The resolver: for one upstream test id, the decision torch-spyre's loader would make (eligible
 * or not, mode, effective dtypes, ops, precision, tags, labels) and the spec entries that made
 * it. The semantics, restated from torch-spyre's tests/spyre_test_base_common.py (_should_run,
 * instantiate_test), tests/spyre_test_config_models.py (defaults) and
 * tests/spyre_test_matching.py (MatchSet); docs/specs.md states them for spec authors:
 *
 *  1. File: the id's path (relative to TORCH_ROOT) selects the file entries whose path, after
 *     `${TORCH_ROOT}/`, equals it or glob-matches it (`${TORCH_DEVICE_ROOT}/...` entries match
 *     ids whose path is written with that token; absolute ids match resolved paths). A test in
 *     no listed file is not eligible. An id without a path is looked up in every file, and is
 *     not eligible when no entry lists it.
 *  2. Entry: a name `Class::method`, or `method` alone (any class). Each part is a plain
 *     identifier (re.match(r"\w+$") in torch-spyre: compared exactly) or a regular expression
 *     matched against the whole part (testspecs/regex.h). The class part is matched against
 *     the class without its PRIVATEUSE1 suffix (torch-spyre passes the generic class) or as
 *     written; the method part against the method's base name, that is without the
 *     `_<device>[_<dtype>]` suffix and, for ops-parametrised tests, without the `_<op>` that
 *     follows the base (torch-spyre looks entries up by the base test name and takes the op
 *     as what lies between base and device). The first entry in document order that matches
 *     decides; later matches are listed as shadowed. (torch-spyre's own map keeps the last
 *     plain duplicate, with a warning; first-match is what the real LX-planning config needs,
 *     whose xfail lists come before a broad mandatory_success regex over the same tests.)
 *  3. Labels: an entry with `labels` applies only when the requested tier is one of them (no
 *     tier requested: every entry applies). A test whose only matching entries were dropped
 *     for their labels is not eligible in that tier. A file whose document has suite labels
 *     applies only to those tiers.
 *  4. Mode: the entry's `mode`, default mandatory_success; unlisted: the file's
 *     unlisted_test_mode, default xfail (torch-spyre's FileEntry default and the schema's;
 *     torch-spyre's RFC says skip, the loader wins). skip means not eligible.
 *  5. Dtypes: (global supported_dtypes, or every dtype when absent) ∩ (the op's dtypes when
 *     the op lists some) ∩ (the test's own dtypes when known) + edits.dtypes.include −
 *     edits.dtypes.exclude. A variant id whose dtype falls outside is not eligible.
 *  6. Ops: global supported_ops (when present) + edits.ops.include − edits.ops.exclude, where an
 *     exclude name `sub` removes op `sub` and any op starting `sub_`. A variant id whose op is
 *     not in that set is not eligible.
 *  7. force_xfail (on a global dtype or on a supported op) only turns mandatory_success into
 *     xfail; xfail_strict and skip are left alone.
 *  8. Precision per (op, dtype): edits.dtypes.include's, else the op's dtype entry's, else the
 *     global dtype's.
 *  9. Global: the deciding entry's own config's global section (for an unlisted test, the
 *     global of the first config that lists the file): torch-spyre runs one config at a time.
 * 10. Variants: an entry naming `<test>_<suffix>` (an @ops op, a @parametrize value, as
 *     torch-spyre's config checker counts it: a collectable base name plus `_`) decides that
 *     variant. A test the entries naming it (or its file's unlisted mode) leave not eligible
 *     is eligible when one of its variants is: the decision is then that variant's (the
 *     strongest mode among the eligible variants), `variant` names it. */
#ifndef TESTSPECS_RESOLVE_H
#define TESTSPECS_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "testspecs/spec.h"
#include "testspecs/testid.h"

#define SPEC_DECISION_OPS_MAX     64
#define SPEC_DECISION_ENTRIES_MAX 16
#define SPEC_REASON_MAX           256
#define SPEC_MATCH_CANDIDATES_MAX 256 /* name rules that match one id, before ordering */

typedef uint32_t spec_dtype_mask; /* bit (1u << enum spec_dtype) */
#define SPEC_DTYPE_MASK_ALL (((spec_dtype_mask)1 << SPEC_DTYPE_COUNT) - 2u)

struct spec_resolve_opts {
	const char *tier;       /* requested label (smoke, regression, ...); NULL: any */
	spec_dtype_mask dtypes; /* the test's own dtypes (@ops allowed_dtypes); 0: unknown */
	const char *const *ops; /* the test's ops (its @ops list) when known; NULL: unknown */
	size_t n_ops;
	const char *device; /* backend name in method suffixes; NULL: "spyre" */
	/* Whether `id` (the resolved id with its method replaced by a longer name) is itself a
	 * collectable test, so that `test_a_b` is not taken for a variant of `test_a` when both
	 * are tests; NULL: every longer name that starts with the test's name plus `_` may be a
	 * variant. */
	int (*is_test)(void *ctx, const char *id);
	void *is_test_ctx;
	bool exact; /* decide the id as written: no look at its variants' entries */
};

/* Why an entry is listed in a decision. */
enum spec_role {
	SPEC_ROLE_FILE = 1,      /* the file entry (path, unlisted_test_mode) */
	SPEC_ROLE_ENTRY,         /* the test entry that decided */
	SPEC_ROLE_SHADOWED,      /* a later entry that matches too, overruled by the first */
	SPEC_ROLE_LABEL_DROPPED, /* an entry that matches but not in the requested tier */
	SPEC_ROLE_DTYPE,         /* a dtype item that changed the dtypes or the mode */
	SPEC_ROLE_OP,            /* an op item that changed the ops or the mode */
};

struct spec_decision_entry {
	struct spec_loc loc;
	enum spec_role role;
	const char *what; /* the name, path or item (owned by the set) */
};

struct spec_decision_op {
	const char *name;       /* owned by the set, the opts or the decision */
	spec_dtype_mask dtypes; /* this op's effective dtypes */
	enum spec_mode
	    mode[SPEC_DTYPE_COUNT]; /* per dtype in `dtypes`, after force_xfail; else UNSET */
	struct spec_precision precision[SPEC_DTYPE_COUNT];
};

struct spec_decision {
	bool eligible;
	enum spec_mode mode;    /* of this variant (op and dtype of the id applied when known) */
	bool listed;            /* an entry decided (false: unlisted_test_mode or no file) */
	spec_dtype_mask dtypes; /* effective dtypes (union over the ops when several) */
	bool dtypes_unbounded;  /* no list constrained them: every dtype the test has */
	size_t n_ops;
	bool ops_unbounded;             /* no supported_ops and no op known: any op */
	const struct spec_test *entry;  /* the deciding entry or NULL */
	const struct spec_file *file;   /* the file entry or NULL */
	const struct spec_strs *tags;   /* the entry's (NULL when none) */
	const struct spec_strs *labels; /* the entry's labels, else its document's */
	size_t n_entries;
	/* Below: filled as far as the counts above say (not cleared between calls). */
	struct spec_decision_entry entries[SPEC_DECISION_ENTRIES_MAX];
	struct spec_decision_op ops[SPEC_DECISION_OPS_MAX];
	struct spec_test_id id;       /* the parsed id */
	char op_buf[SPEC_TESTID_MAX]; /* the op split off the method name, when any */
	char reason[SPEC_REASON_MAX];
	/* Variants (point 10): the variant entries seen for a generic id, how many of them are
	 * eligible, and the one whose decision this is (its method name, owned by the resolver;
	 * NULL when the test's own entries decided). `variant_suffix` is what follows the test's
	 * name and `_` in it: the op of an @ops test, a parameter's value. */
	size_t n_variants, n_variants_eligible;
	const char *variant;
	const char *variant_suffix;
};

struct spec_resolver;

/* Compiles every name of `set` once (plain names sorted for binary search per file, regular
 * expressions with their literal prefixes). `set` must outlive the resolver. ERR_INVAL names
 * the first name that does not compile (file:line:col and PCRE2's message). */
int testspecs_resolver_create(struct spec_resolver **out, const struct spec_set *set);
void testspecs_resolver_destroy(struct spec_resolver *r);

/* The decision for `test_id`. `opts` may be NULL. Returns 0 (the decision is in *out, eligible
 * or not), ERR_INVAL for an id that does not parse, ERR_LIMIT when a regex hit its match limit.
 * Not thread-safe per resolver (PCRE2 match data is shared). */
int testspecs_resolver_resolve(const struct spec_resolver *r, const char *test_id,
			       const struct spec_resolve_opts *opts, struct spec_decision *out);

/* One-shot form: builds a resolver, resolves, destroys it. For many ids, keep a resolver. */
int testspecs_resolve(const struct spec_set *set, const char *test_id,
		      const struct spec_resolve_opts *opts, struct spec_decision *out);

/* The lint hook: reports a name whose regular expression does not compile. Pass
 * {testspecs_resolve_lint_name, NULL} to testspecs_lint_hooks(). */
void testspecs_resolve_lint_name(void *ctx, const struct spec_str *name, const char *doc_path,
				 struct spec_diag_list *diags);

const char *testspecs_role_name(enum spec_role role);

/* Calls `fn` for every plain entry name of the id's files that names a variant of the id's
 * test (`<method>_...`, class matching): torch-spyre's config checker counts such a name as
 * live. Returns the number of names, or ERR_INVAL for an id that does not parse. */
typedef void (*spec_name_fn)(void *ctx, const struct spec_str *name);
int testspecs_resolver_variant_names(const struct spec_resolver *r, const char *test_id,
				     const char *device, spec_name_fn fn, void *ctx);

#endif
