/* Kernel-case expansion's private parts, shared by cases.c (the rules) and cases_opinfo.c (rule
 * 3's cases from the op database). */
#ifndef TESTSPECS_CASES_INT_H
#define TESTSPECS_CASES_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "testspecs/cases.h"
#include "testspecs/resolve.h"

struct shapes {
	int nin;
	int64_t v[SPEC_CASE_INPUTS_MAX][SPEC_CASE_DIMS_MAX];
	int ndims[SPEC_CASE_INPUTS_MAX];
	bool too_big; /* more inputs or dims than a case holds */
};

/* What the resolver says about one op of the test: its row (NULL when the specs do not let
 * the op run for this test: not supported, not included, or excluded). */
struct op_view {
	const struct spec_decision_op *row;
	const char *spec_name; /* the name the specs know the op by */
};

struct ctx {
	struct spec_case_list *list;
	const struct spec_set *set;
	const struct spec_resolver *r;
	const struct spec_case_test *t;
	const char *resolve_id; /* the id the resolver is asked about */
	const char *case_id;    /* the id the cases carry (and hash) */
	const struct spec_test *entry;
	enum spec_mode base;           /* the test's mode */
	const char *variant_op;        /* a device-generic id's op, else NONE */
	enum spec_dtype variant_dtype; /* a device-generic id's dtype, else NONE */
	/* An @ops test eligible only through variant entries of its own (the test itself
	 * unlisted): each op runs when its variant is eligible; the deciding variant's op. */
	const char *by_variants;
	struct spec_decision *scratch;         /* per-op decisions */
	struct spec_decision *variant_scratch; /* an op variant's own decision */
	struct spec_expand_result *res;
	const struct spec_sample_inputs *sample; /* rule 2: the call being expanded */
	struct spec_set view; /* the set as the deciding entry's config sees it (scope.h) */
	/* Rule 3, while one op's cases are added: where they come from, the OpInfo's dtypes
	 * (has_opinfo_dtypes: they bound the effective ones) and why a shape does not fit. */
	enum spec_case_source source;
	bool has_opinfo_dtypes;
	spec_dtype_mask opinfo_dtypes;
	const char *shape_why;
	/* ... and what the test does with the op (struct spec_opinfo): NULL outside rule 3 */
	const struct spec_opinfo *oi;
};

void testspecs__put_shape(struct shapes *s, const int64_t *v, size_t n);
/* Crosses shapes with the op's effective dtypes (cases.c). */
int testspecs__add_crossed(struct ctx *c, const char *op, const struct op_view *v,
			   const struct shapes *s, enum spec_dtype only, enum spec_case_rule rule,
			   const struct spec_kernel *k, struct spec_loc loc);
/* The emulator's default samples of `op` crossed with its effective dtypes (cases.c). */
int testspecs__add_default_samples(struct ctx *c, const char *op, const struct op_view *v,
				   enum spec_case_rule rule, struct spec_loc loc);
/* Rule 3's cases of one op: from its OpInfo entry when the caller knows it, else the default
 * samples (cases_opinfo.c). */
int testspecs__add_opinfo_cases(struct ctx *c, const char *op, const struct op_view *v,
				struct spec_loc loc);

/* A case's identity: FNV-1a over the test id, op, shapes and dtype name; a model-op call's
 * arguments beyond its shapes (strides, values, py literals, kwargs) are hashed in too, so two
 * calls of one op on the same shapes with other arguments (to float32 and to bfloat16; a
 * strided view and a dense one) are two cases, and a call with none keeps the id its op,
 * shapes and dtype give. The seed is mixed from it (splitmix64's finalizer). */
uint64_t testspecs__fnv(uint64_t h, const void *p, size_t n);
uint64_t testspecs__mix(uint64_t x);
uint64_t testspecs__case_hash(const char *test_id, const char *op, const struct shapes *s,
			      const char *dtype_name);
uint64_t testspecs__call_hash(uint64_t h, const struct spec_sample_inputs *si);

/* Derived seeds keep 53 bits: every JSON reader holds them exactly (`specs list --json`). */
#define CASE_SEED_MASK ((UINT64_C(1) << 53) - 1)

#endif
