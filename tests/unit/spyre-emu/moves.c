/* The ops real models add, run end to end (spyre_run: plan, validate, time, execute, compare
 * with the float64 reference) with the parameters their calls give: views with target shapes,
 * getitem index tuples (stick-aligned slices and lane moves), expand, cat and index_copy_
 * along a middle and the last dim, zeros and arange, casts between every float dtype and from
 * int64, attention with its own scale. Each on 1 and 8 cores in float16, bfloat16, float32
 * (and int64 where the op takes it). The hand-computed semantics are in ops.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/run.h"

struct mcase {
	const char *op;
	int nin;
	int64_t shapes[3][4];
	int ndims[3];
	struct spyre_op_params p;
};

static const struct spyre_index_item ALL = { .kind = SPYRE_INDEX_SLICE };
static const struct spyre_index_item NEW = { .kind = SPYRE_INDEX_NONE };

static void run_one(const struct mcase *m, enum spyre_dtype dt, int cores)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	cr_assert_eq(spyre_hw_set_cores(&hw, cores), 0);
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = m->op;
	o.nin = m->nin;
	for (int i = 0; i < m->nin; i++) {
		o.ndims[i] = m->ndims[i];
		memcpy(o.shapes[i], m->shapes[i], sizeof(m->shapes[i]));
	}
	o.params = m->p;
	o.dtype = dt;
	o.hw = &hw;
	o.seed = 5;
	struct spyre_run_result r;
	cr_assert_eq(spyre_run(&o, &r), 0, "%s %s: %s", m->op, spyre_dtype_name(dt), err_last());
	cr_expect(r.passed, "%s %s on %d cores (plan %s): max abs err %g, %llu mismatches", m->op,
		  spyre_dtype_name(dt), cores, r.plan, r.max_abs_err,
		  (unsigned long long)r.mismatches);
	cr_expect_gt(r.timing.cycles, 0, "%s: a timing", m->op);
	spyre_run_result_finish(&r);
}

static void run_all(const struct mcase *m, int ints)
{
	static const enum spyre_dtype dts[] = { SPYRE_DTYPE_FLOAT16, SPYRE_DTYPE_BFLOAT16,
						SPYRE_DTYPE_FLOAT32, SPYRE_DTYPE_INT64 };
	for (size_t d = 0; d < (ints ? 4u : 3u); d++) {
		run_one(m, dts[d], 1);
		run_one(m, dts[d], 8);
	}
}

Test(moves, views_and_copies, .timeout = 300)
{
	const struct mcase cases[] = {
		/* q_proj(x).view(1, 41, -1, 128): whole sticks */
		{ "view",
		  1,
		  { { 1, 41, 512 } },
		  { 3 },
		  { .shape = { 1, 41, -1, 128 }, .shape_ndim = 4 } },
		/* a view whose last dim is not a stick multiple: lanes move */
		{ "reshape", 1, { { 6, 100 } }, { 2 }, { .shape = { 20, 30 }, .shape_ndim = 2 } },
		{ "unsqueeze", 1, { { 1, 41, 128 } }, { 3 }, { .dim = 1 } },
		/* inv_freq[None, :, None]: the last dim becomes 1 */
		{ "getitem", 1, { { 64 } }, { 1 }, { .index = { NEW, ALL, NEW }, .n_index = 3 } },
		/* x[..., :64] and x[..., 64:] (rotate_half) and x[:, -1:, :] */
		{ "getitem",
		  1,
		  { { 1, 4, 41, 128 } },
		  { 4 },
		  { .index = { { .kind = SPYRE_INDEX_ELLIPSIS },
			       { .kind = SPYRE_INDEX_SLICE, .has_stop = 1, .stop = 64 } },
		    .n_index = 2 } },
		{ "getitem",
		  1,
		  { { 1, 4, 41, 128 } },
		  { 4 },
		  { .index = { { .kind = SPYRE_INDEX_ELLIPSIS },
			       { .kind = SPYRE_INDEX_SLICE, .has_start = 1, .start = 64 } },
		    .n_index = 2 } },
		{ "getitem",
		  1,
		  { { 1, 41, 300 } },
		  { 3 },
		  { .index = { ALL,
			       { .kind = SPYRE_INDEX_SLICE, .has_start = 1, .start = -1 },
			       ALL },
		    .n_index = 3 } },
		/* an unaligned slice of the last dim, and an integer index */
		{ "getitem",
		  1,
		  { { 5, 150 } },
		  { 2 },
		  { .index = { { .kind = SPYRE_INDEX_INT, .start = 2 },
			       { .kind = SPYRE_INDEX_SLICE,
				 .has_start = 1,
				 .start = 7,
				 .has_stop = 1,
				 .stop = 141 } },
		    .n_index = 2 } },
		/* repeat_kv: [1, 8, 1, S, 128] -> [1, 8, 4, S, 128] */
		{ "expand",
		  1,
		  { { 1, 8, 1, 128 } },
		  { 4 },
		  { .shape = { 1, 8, 4, 128 }, .shape_ndim = 4 } },
		{ "expand",
		  1,
		  { { 1, 64, 1 } },
		  { 3 },
		  { .shape = { 3, -1, 5 }, .shape_ndim = 3 } },
		{ "cat", 2, { { 1, 41, 64 }, { 1, 41, 64 } }, { 3, 3 }, { .dim = -1 } },
		{ "cat", 2, { { 3, 41, 100 }, { 3, 41, 30 } }, { 3, 3 }, { .dim = -1 } },
		{ "cat", 2, { { 2, 5, 130 }, { 2, 7, 130 } }, { 3, 3 }, { .dim = 1 } },
		/* the KV cache update: rows along dim 2, and lanes along the last dim */
		{ "index_copy_",
		  3,
		  { { 1, 2, 64, 128 }, { 9 }, { 1, 2, 9, 128 } },
		  { 4, 1, 4 },
		  { .dim = 2 } },
		{ "index_copy_", 3, { { 4, 150 }, { 11 }, { 4, 11 } }, { 2, 1, 2 }, { .dim = 1 } },
		{ "zeros", 0, { { 0 } }, { 0 }, { .shape = { 1, 2, 70, 128 }, .shape_ndim = 4 } },
		{ "arange",
		  0,
		  { { 0 } },
		  { 0 },
		  { .shape = { 300 }, .shape_ndim = 1, .scalar = 3, .scalar2 = 2 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_all(&cases[i], 1);
}

Test(moves, casts_between_dtypes, .timeout = 120)
{
	static const enum spyre_dtype from[] = { SPYRE_DTYPE_FLOAT16, SPYRE_DTYPE_BFLOAT16,
						 SPYRE_DTYPE_FLOAT32, SPYRE_DTYPE_INT64 };
	static const enum spyre_dtype to[] = { SPYRE_DTYPE_FLOAT16, SPYRE_DTYPE_BFLOAT16,
					       SPYRE_DTYPE_FLOAT32 };
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < 3; j++) {
			struct mcase m = { "to", 1, { { 41, 300 } }, { 2 }, { 0 } };
			m.p.has_out_dtype = 1;
			m.p.out_dtype = to[j];
			run_one(&m, from[i], 8);
		}
}

Test(moves, attention_with_its_own_scale, .timeout = 120)
{
	struct mcase m = { "scaled_dot_product_attention",
			   3,
			   { { 1, 4, 9, 128 }, { 1, 4, 64, 128 }, { 1, 4, 64, 128 } },
			   { 4, 4, 4 },
			   { .has_scale = 1, .scale = 0.0078125 } };
	run_all(&m, 0);
}
