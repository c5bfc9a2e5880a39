/* Tests of spyre-emu/ops: the op table, host tensors, inputs, output shapes and the float64
 * reference (hand-computed values for every op). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/ops.h"

/* Parses "67x256,256" into shapes; returns the number of shapes. */
static int parse_shapes(const char *s, int64_t shapes[][SPYRE_DIMS_MAX], int *ndims)
{
	int n = 0;
	ndims[0] = 0;
	for (const char *p = s; *p && *p != ';';) {
		char *end;
		shapes[n][ndims[n]++] = strtoll(p, &end, 10);
		p = end;
		if (*p == 'x') {
			p++;
		} else if (*p == ',') {
			p++;
			ndims[++n] = 0;
		}
	}
	return n + 1;
}

/* Default params a sample runs with. */
static struct spyre_op_params default_params(const struct spyre_op_info *op, int ndim)
{
	struct spyre_op_params p = {
		.dim = -1, .scalar = 2.0, .scalar2 = 0.1, .has_min = 1, .has_max = 1
	};
	p.scalar = strcmp(op->name, "clamp") == 0 ? -0.1 : 2.0;
	p.perm[0] = 0;
	p.perm[1] = 1;
	if (strcmp(op->name, "permute") == 0)
		for (int i = 0; i < ndim; i++)
			p.perm[i] = ndim - 1 - i;
	return p;
}

Test(ops, table_sanity)
{
	cr_assert_gt(spyre_ops_count, 40);
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spyre_op_info *op = &spyre_ops[i];
		cr_expect(op->samples && (op->samples[0] || op->nin == 0), "%s has no samples",
			  op->name);
		cr_expect(op->dtypes && op->dtypes[0], "%s has no dtypes", op->name);
		cr_expect(op->nin >= 0 && op->nin <= SPYRE_OP_INPUTS_MAX, "%s nin", op->name);
		cr_expect_eq(spyre_op_find(op->name), op);
		int commas = 0;
		for (const char *p = op->inputs; *p; p++)
			commas += *p == ',';
		cr_expect_eq(op->inputs[0] ? commas + 1 : 0, op->nin, "%s: inputs '%s'", op->name,
			     op->inputs);
		for (size_t j = i + 1; j < spyre_ops_count; j++)
			cr_expect_neq(strcmp(op->name, spyre_ops[j].name), 0, "dup %s", op->name);
		cr_expect(spyre_op_supports(op, SPYRE_DTYPE_FLOAT32), "%s float32", op->name);
		cr_expect(spyre_op_supports(op, SPYRE_DTYPE_FLOAT16), "%s float16", op->name);
		cr_expect(!spyre_op_supports(op, SPYRE_DTYPE_INT8), "%s int8", op->name);
	}
	cr_expect_null(spyre_op_find("nope"));
	cr_expect(spyre_op_supports(spyre_op_find("add"), SPYRE_DTYPE_INT64));
	cr_expect(!spyre_op_supports(spyre_op_find("exp"), SPYRE_DTYPE_INT64));
}

/* Every default sample of every op: inputs are made, the shape resolves, the reference runs
 * and gives finite values. */
Test(ops, every_sample_runs, .timeout = 60)
{
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spyre_op_info *op = &spyre_ops[i];
		if (op->nin == 0) /* zeros: no inputs, no samples (reference_values covers it) */
			continue;
		for (const char *s = op->samples; s;
		     s = strchr(s, ';') ? strchr(s, ';') + 1 : NULL) {
			int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
			int ndims[SPYRE_OP_INPUTS_MAX];
			cr_assert_eq(parse_shapes(s, shapes, ndims), op->nin, "%s: %s", op->name,
				     s);
			struct spyre_tensor in[SPYRE_OP_INPUTS_MAX];
			cr_assert_eq(spyre_op_make_inputs(op, in, op->nin, shapes, ndims,
							  SPYRE_DTYPE_FLOAT32, 7),
				     0, "%s: %s", op->name, err_last());
			struct spyre_op_params p = default_params(op, ndims[0]);
			double *out;
			uint64_t n;
			cr_assert_eq(spyre_op_reference(op, in, op->nin, &p, &out, &n), 0, "%s: %s",
				     op->name, err_last());
			cr_expect_gt(n, 0);
			for (uint64_t k = 0; k < n; k++)
				if (!isfinite(out[k])) {
					cr_expect_fail("%s sample %.20s: out[%llu] = %g", op->name,
						       s, (unsigned long long)k, out[k]);
					break;
				}
			free(out);
			for (int k = 0; k < op->nin; k++)
				spyre_tensor_finish(&in[k]);
		}
	}
}

Test(ops, tensors_and_inputs)
{
	struct spyre_tensor t;
	int64_t shape[] = { 3, 5 };
	cr_assert_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_FLOAT16, shape, 2), 0);
	cr_expect_eq(spyre_tensor_numel(&t), 15);
	spyre_tensor_set(&t, 4, 1.0 / 3.0);
	cr_expect_float_eq(spyre_tensor_get(&t, 4), 0.333251953125, 1e-12); /* nearest half */
	spyre_tensor_finish(&t);
	cr_assert_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_INT32, shape, 2), 0);
	spyre_tensor_set(&t, 0, -7.9);
	cr_expect_eq(spyre_tensor_get(&t, 0), -7.0);
	spyre_tensor_finish(&t);
	int64_t bad[] = { -1 };
	cr_expect_eq(spyre_tensor_alloc(&t, SPYRE_DTYPE_FLOAT32, bad, 1), ERR_INVAL);

	/* deterministic, positive for log, bool cond, indices in range */
	const struct spyre_op_info *op = spyre_op_find("log");
	int64_t s1[1][SPYRE_DIMS_MAX] = { { 1000 } };
	int nd1[] = { 1 };
	struct spyre_tensor a, b;
	cr_assert_eq(spyre_op_make_inputs(op, &a, 1, s1, nd1, SPYRE_DTYPE_FLOAT16, 42), 0);
	cr_assert_eq(spyre_op_make_inputs(op, &b, 1, s1, nd1, SPYRE_DTYPE_FLOAT16, 42), 0);
	cr_expect_eq(memcmp(a.data, b.data, 2000), 0);
	for (int i = 0; i < 1000; i++)
		cr_expect_gt(spyre_tensor_get(&a, (uint64_t)i), 0.0);
	spyre_tensor_finish(&a);
	spyre_tensor_finish(&b);

	op = spyre_op_find("embedding");
	int64_t s2[2][SPYRE_DIMS_MAX] = { { 500 }, { 13, 8 } };
	int nd2[] = { 1, 2 };
	struct spyre_tensor e[2];
	cr_assert_eq(spyre_op_make_inputs(op, e, 2, s2, nd2, SPYRE_DTYPE_FLOAT32, 1), 0);
	cr_expect_eq(e[0].dtype, SPYRE_DTYPE_INT64);
	int seen_hi = 0;
	for (int i = 0; i < 500; i++) {
		double v = spyre_tensor_get(&e[0], (uint64_t)i);
		cr_expect(v >= 0 && v < 13 && v == floor(v));
		seen_hi |= v == 12;
	}
	cr_expect(seen_hi);
	spyre_tensor_finish(&e[0]);
	spyre_tensor_finish(&e[1]);

	/* randn x 0.1: standard deviation near 0.1 */
	op = spyre_op_find("exp");
	int64_t s3[1][SPYRE_DIMS_MAX] = { { 4000 } };
	cr_assert_eq(spyre_op_make_inputs(op, &a, 1, s3, nd1, SPYRE_DTYPE_FLOAT32, 3), 0);
	double ss = 0;
	for (int i = 0; i < 4000; i++)
		ss += spyre_tensor_get(&a, (uint64_t)i) * spyre_tensor_get(&a, (uint64_t)i);
	cr_expect(fabs(sqrt(ss / 4000) - 0.1) < 0.01, "std %g", sqrt(ss / 4000));
	spyre_tensor_finish(&a);
}

/* Output shape of `op` on inputs of these shapes ("67x256,256"); 0 or the error code. */
static int shape_of(const char *name, const char *shapes, const struct spyre_op_params *p,
		    int64_t *out, int *ndim)
{
	const struct spyre_op_info *op = spyre_op_find(name);
	int64_t s[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int nd[SPYRE_OP_INPUTS_MAX];
	int n = parse_shapes(shapes, s, nd);
	struct spyre_tensor in[SPYRE_OP_INPUTS_MAX] = { 0 };
	for (int i = 0; i < n; i++) {
		in[i].ndim = nd[i];
		in[i].dtype = strcmp(name, "embedding") == 0 && i == 0 ? SPYRE_DTYPE_INT64
								       : SPYRE_DTYPE_FLOAT32;
		memcpy(in[i].shape, s[i], sizeof(s[i]));
	}
	return spyre_op_output_shape(op, in, n, p, out, ndim);
}

#define EXPECT_SHAPE(name, shapes, p, ...)                                                         \
	do {                                                                                       \
		int64_t want[] = { __VA_ARGS__ }, got[SPYRE_DIMS_MAX];                             \
		int nd;                                                                            \
		cr_assert_eq(shape_of(name, shapes, p, got, &nd), 0, "%s %s: %s", name, shapes,    \
			     err_last());                                                          \
		cr_expect_eq(nd, (int)(sizeof(want) / sizeof(want[0])), "%s %s", name, shapes);    \
		for (int i_ = 0; i_ < nd && i_ < (int)(sizeof(want) / sizeof(want[0])); i_++)      \
			cr_expect_eq(got[i_], want[i_], "%s %s dim %d", name, shapes, i_);         \
	} while (0)

#define EXPECT_SHAPE_ERR(name, shapes, p, text)                                                    \
	do {                                                                                       \
		int64_t got[SPYRE_DIMS_MAX];                                                       \
		int nd;                                                                            \
		cr_expect_eq(shape_of(name, shapes, p, got, &nd), ERR_INVAL, "%s %s", name,        \
			     shapes);                                                              \
		cr_expect(strstr(err_last(), text) != NULL, "%s: '%s' lacks '%s'", name,           \
			  err_last(), text);                                                       \
	} while (0)

Test(ops, output_shapes)
{
	struct spyre_op_params p = { .dim = -1 };
	EXPECT_SHAPE("add", "67x256,256", &p, 67, 256);
	EXPECT_SHAPE("add", "4x1x3,5x1", &p, 4, 5, 3);
	EXPECT_SHAPE("where", "150,3x1,1", &p, 3, 150);
	EXPECT_SHAPE("sum", "4x5x6", &p, 4, 5);
	p.keepdim = 1;
	p.dim = 1;
	EXPECT_SHAPE("max", "4x5x6", &p, 4, 1, 6);
	EXPECT_SHAPE("softmax", "4x5x6", &p, 4, 5, 6);
	EXPECT_SHAPE("mm", "67x129,129x150", &p, 67, 150);
	EXPECT_SHAPE("bmm", "4x67x129,4x129x150", &p, 4, 67, 150);
	EXPECT_SHAPE("matmul", "2x1x67x256,3x256x64", &p, 2, 3, 67, 64);
	EXPECT_SHAPE("matmul", "256,256x64", &p, 64);
	EXPECT_SHAPE("linear", "5x67x256,150x256,150", &p, 5, 67, 150);
	EXPECT_SHAPE("addmm", "150,67x129,129x150", &p, 67, 150);
	EXPECT_SHAPE("layer_norm", "67x256,256,256", &p, 67, 256);
	EXPECT_SHAPE("embedding", "4x63,512x150", &p, 4, 63, 150);
	EXPECT_SHAPE("swiglu_mlp", "64x256,256x1024,256x1024,1024x256", &p, 64, 256);
	EXPECT_SHAPE("scaled_dot_product_attention", "4x256x128,4x200x128,4x200x64", &p, 4, 256,
		     64);
	p.perm[0] = 0;
	p.perm[1] = -1;
	EXPECT_SHAPE("transpose", "4x150x67", &p, 67, 150, 4);
	p.perm[0] = 2;
	p.perm[1] = 0;
	p.perm[2] = 1;
	EXPECT_SHAPE("permute", "4x67x129", &p, 129, 4, 67);

	EXPECT_SHAPE_ERR("add", "3x4,5", &p, "broadcast");
	EXPECT_SHAPE_ERR("mm", "67x129,128x150", &p, "K=129");
	EXPECT_SHAPE_ERR("bmm", "4x6x7,3x7x8", &p, "batch");
	p.dim = 3;
	EXPECT_SHAPE_ERR("sum", "4x5x6", &p, "dim 3 out of range");
	EXPECT_SHAPE_ERR("layer_norm", "67x256,255,256", &p, "last dim");
	EXPECT_SHAPE_ERR("linear", "67x256,150x255,150", &p, "in features");
	EXPECT_SHAPE_ERR("scaled_dot_product_attention", "4x256x128,4x200x64,4x200x64", &p,
			 "head dim");
	p.perm[2] = 2;
	EXPECT_SHAPE_ERR("permute", "4x67x129", &p, "twice");
	EXPECT_SHAPE_ERR("add", "3x4", &p, "takes 2");
}

/* ---- reference values, hand-computed ---- */

struct rcase {
	const char *op;
	const char *shapes;
	double in[SPYRE_OP_INPUTS_MAX][8];
	struct spyre_op_params p;
	int nout;
	double out[8];
};

static void run_rcase(const struct rcase *c)
{
	const struct spyre_op_info *op = spyre_op_find(c->op);
	cr_assert_not_null(op, "%s", c->op);
	int64_t s[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int nd[SPYRE_OP_INPUTS_MAX];
	int n = op->nin ? parse_shapes(c->shapes, s, nd) : 0;
	struct spyre_tensor in[SPYRE_OP_INPUTS_MAX];
	for (int i = 0; i < n; i++) {
		enum spyre_dtype t = SPYRE_DTYPE_FLOAT32;
		if (strcmp(c->op, "index_copy_") == 0 && i == 1)
			t = SPYRE_DTYPE_INT64;
		if (strcmp(c->op, "where") == 0 && i == 0)
			t = SPYRE_DTYPE_BOOL;
		if (strcmp(c->op, "embedding") == 0 && i == 0)
			t = SPYRE_DTYPE_INT64;
		cr_assert_eq(spyre_tensor_alloc(&in[i], t, s[i], nd[i]), 0);
		for (uint64_t k = 0; k < spyre_tensor_numel(&in[i]); k++)
			spyre_tensor_set(&in[i], k, c->in[i][k]);
	}
	double *out;
	uint64_t nout;
	cr_assert_eq(spyre_op_reference(op, in, n, &c->p, &out, &nout), 0, "%s: %s", c->op,
		     err_last());
	cr_expect_eq(nout, (uint64_t)c->nout, "%s", c->op);
	for (int k = 0; k < c->nout && k < (int)nout; k++)
		cr_expect(fabs(out[k] - c->out[k]) <= 1e-12 * (1 + fabs(c->out[k])),
			  "%s out[%d] = %.17g, expected %.17g", c->op, k, out[k], c->out[k]);
	free(out);
	for (int i = 0; i < n; i++)
		spyre_tensor_finish(&in[i]);
}

static const double e1 = 2.718281828459045;

static const struct rcase rcases[] = {
	/* what real models add */
	{ "cos", "2", { { 0, 1 } }, { 0 }, 2, { 1, 0.5403023058681398 } },
	{ "sin", "2", { { 0, 1 } }, { 0 }, 2, { 0, 0.8414709848078965 } },
	{ "mul_scalar", "2", { { 1.5, -2 } }, { .scalar = 12 }, 2, { 18, -24 } },
	{ "add_scalar", "2", { { 1, -2 } }, { .scalar = 1e-5 }, 2, { 1.00001, -1.99999 } },
	{ "div_scalar", "2", { { 1, -3 } }, { .scalar = 16 }, 2, { 0.0625, -0.1875 } },
	{ "to", "2", { { 1.5, -2 } }, { 0 }, 2, { 1.5, -2 } },
	{ "linear_nobias", "1x2,3x2", { { 1, 2 }, { 1, 0, 0, 1, 1, 1 } }, { 0 }, 3, { 1, 2, 3 } },
	{ "view",
	  "2x3",
	  { { 1, 2, 3, 4, 5, 6 } },
	  { .shape = { 3, -1 }, .shape_ndim = 2 },
	  6,
	  { 1, 2, 3, 4, 5, 6 } },
	{ "reshape", "2x3", { { 1, 2, 3, 4, 5, 6 } }, { 0 }, 6, { 1, 2, 3, 4, 5, 6 } },
	{ "unsqueeze", "2x2", { { 1, 2, 3, 4 } }, { .dim = 1 }, 4, { 1, 2, 3, 4 } },
	{ "expand",
	  "2x1",
	  { { 1, 2 } },
	  { .shape = { 2, 3 }, .shape_ndim = 2 },
	  6,
	  { 1, 1, 1, 2, 2, 2 } },
	{ "expand", "2", { { 1, 2 } }, { .shape = { 2, -1 }, .shape_ndim = 2 }, 4, { 1, 2, 1, 2 } },
	/* x[..., 1:] */
	{ "getitem",
	  "2x3",
	  { { 1, 2, 3, 4, 5, 6 } },
	  { .index = { { .kind = SPYRE_INDEX_ELLIPSIS },
		       { .kind = SPYRE_INDEX_SLICE, .has_start = 1, .start = 1 } },
	    .n_index = 2 },
	  4,
	  { 2, 3, 5, 6 } },
	/* x[1, None, ::2] */
	{ "getitem",
	  "2x3",
	  { { 1, 2, 3, 4, 5, 6 } },
	  { .index = { { .kind = SPYRE_INDEX_INT, .start = 1 },
		       { .kind = SPYRE_INDEX_NONE },
		       { .kind = SPYRE_INDEX_SLICE, .step = 2 } },
	    .n_index = 3 },
	  2,
	  { 4, 6 } },
	/* x[-1:] and x[None, :, None] */
	{ "getitem",
	  "2x3",
	  { { 1, 2, 3, 4, 5, 6 } },
	  { .index = { { .kind = SPYRE_INDEX_SLICE, .has_start = 1, .start = -1 } }, .n_index = 1 },
	  3,
	  { 4, 5, 6 } },
	{ "getitem",
	  "3",
	  { { 7, 8, 9 } },
	  { .index = { { .kind = SPYRE_INDEX_NONE },
		       { .kind = SPYRE_INDEX_SLICE },
		       { .kind = SPYRE_INDEX_NONE } },
	    .n_index = 3 },
	  3,
	  { 7, 8, 9 } },
	{ "cat", "2x1,2x2", { { 1, 2 }, { 3, 4, 5, 6 } }, { .dim = 1 }, 6, { 1, 3, 4, 2, 5, 6 } },
	{ "cat", "1x2,2x2", { { 1, 2 }, { 3, 4, 5, 6 } }, { .dim = 0 }, 6, { 1, 2, 3, 4, 5, 6 } },
	{ "index_copy_",
	  "3x2,2,2x2",
	  { { 1, 2, 3, 4, 5, 6 }, { 2, 0 }, { 7, 8, 9, 10 } },
	  { .dim = 0 },
	  6,
	  { 9, 10, 3, 4, 7, 8 } },
	{ "index_copy_",
	  "2x3,1,2x1",
	  { { 1, 2, 3, 4, 5, 6 }, { 1 }, { 7, 8 } },
	  { .dim = -1 },
	  6,
	  { 1, 7, 3, 4, 8, 6 } },
	{ "zeros", "", { { 0 } }, { .shape = { 2, 2 }, .shape_ndim = 2 }, 4, { 0, 0, 0, 0 } },
	{ "arange",
	  "",
	  { { 0 } },
	  { .shape = { 4 }, .shape_ndim = 1, .scalar = 1, .scalar2 = 0.5 },
	  4,
	  { 1, 1.5, 2, 2.5 } },
	{ "add", "2x2,2", { { 1, 2, 3, 4 }, { 10, 20 } }, { 0 }, 4, { 11, 22, 13, 24 } },
	{ "sub", "2,1", { { 1, 2 }, { 0.5 } }, { 0 }, 2, { 0.5, 1.5 } },
	{ "mul", "2,2", { { 1.5, -2 }, { 2, 3 } }, { 0 }, 2, { 3, -6 } },
	{ "div", "2,2", { { 1, -3 }, { 4, 2 } }, { 0 }, 2, { 0.25, -1.5 } },
	{ "neg", "2", { { 1, -2 } }, { 0 }, 2, { -1, 2 } },
	{ "abs", "2", { { 1, -2 } }, { 0 }, 2, { 1, 2 } },
	{ "exp", "2", { { 0, 1 } }, { 0 }, 2, { 1, e1 } },
	{ "log", "2", { { 1, 0.5 } }, { 0 }, 2, { 0, -0.6931471805599453 } },
	{ "sqrt", "2", { { 4, 2 } }, { 0 }, 2, { 2, 1.4142135623730951 } },
	{ "rsqrt", "2", { { 4, 0.25 } }, { 0 }, 2, { 0.5, 2 } },
	{ "reciprocal", "2", { { 4, -0.5 } }, { 0 }, 2, { 0.25, -2 } },
	{ "relu", "3", { { -1, 0, 2 } }, { 0 }, 3, { 0, 0, 2 } },
	{ "sigmoid", "2", { { 0, 1 } }, { 0 }, 2, { 0.5, 0.7310585786300049 } },
	{ "tanh", "2", { { 0, 0.5 } }, { 0 }, 2, { 0, 0.46211715726000974 } },
	{ "silu", "2", { { 0, 1 } }, { 0 }, 2, { 0, 0.7310585786300049 } },
	{ "gelu", "2", { { 1, 0 } }, { 0 }, 2, { 0.8413447460685429, 0 } },
	{ "gelu", "1", { { 1 } }, { .approximate_tanh = 1 }, 1, { 0.8411919906082768 } },
	{ "softplus",
	  "3",
	  { { 0, 0.5, 30 } },
	  { 0 },
	  3,
	  { 0.6931471805599453, 0.9740769841801067, 30 } },
	{ "pow", "2", { { 2, 0.5 } }, { .scalar = 3 }, 2, { 8, 0.125 } },
	{ "clamp",
	  "3",
	  { { -1, 0.25, 2 } },
	  { .scalar = 0, .scalar2 = 1, .has_min = 1, .has_max = 1 },
	  3,
	  { 0, 0.25, 1 } },
	{ "clamp", "2", { { -1, 2 } }, { .scalar2 = 1, .has_max = 1 }, 2, { -1, 1 } },
	{ "where", "3,3,1", { { 1, 0, 1 }, { 1, 2, 3 }, { -9 } }, { 0 }, 3, { 1, -9, 3 } },
	{ "eq", "3,3", { { 1, 2, 3 }, { 1, 0, 4 } }, { 0 }, 3, { 1, 0, 0 } },
	{ "ne", "3,3", { { 1, 2, 3 }, { 1, 0, 4 } }, { 0 }, 3, { 0, 1, 1 } },
	{ "lt", "3,3", { { 1, 2, 3 }, { 1, 0, 4 } }, { 0 }, 3, { 0, 0, 1 } },
	{ "le", "3,3", { { 1, 2, 3 }, { 1, 0, 4 } }, { 0 }, 3, { 1, 0, 1 } },
	{ "gt", "3,3", { { 1, 2, 3 }, { 1, 0, 4 } }, { 0 }, 3, { 0, 1, 0 } },
	{ "ge", "3,3", { { 1, 2, 3 }, { 1, 0, 4 } }, { 0 }, 3, { 1, 1, 0 } },
	{ "sum", "2x3", { { 1, 2, 3, 4, 5, 6 } }, { .dim = 0 }, 3, { 5, 7, 9 } },
	{ "sum", "2x3", { { 1, 2, 3, 4, 5, 6 } }, { .dim = -1 }, 2, { 6, 15 } },
	{ "mean", "2x3", { { 1, 2, 3, 4, 5, 6 } }, { .dim = 1, .keepdim = 1 }, 2, { 2, 5 } },
	{ "max", "2x3", { { 1, 7, 3, 4, 5, 6 } }, { .dim = 1 }, 2, { 7, 6 } },
	{ "min", "2x3", { { 1, 7, 3, 4, 0, 6 } }, { .dim = 0 }, 3, { 1, 0, 3 } },
	{ "softmax",
	  "3",
	  { { 1, 2, 3 } },
	  { .dim = 0 },
	  3,
	  { 0.09003057317038046, 0.24472847105479767, 0.6652409557748219 } },
	{ "softmax", "2x1", { { 5, 6 } }, { .dim = 1 }, 2, { 1, 1 } },
	{ "log_softmax",
	  "3",
	  { { 1, 2, 3 } },
	  { .dim = -1 },
	  3,
	  { -2.4076059644443806, -1.4076059644443806, -0.4076059644443806 } },
	{ "layer_norm",
	  "1x4,4,4",
	  { { 1, 2, 3, 4 }, { 1, 1, 1, 1 }, { 0, 0, 0, 0 } },
	  { .eps = 1e-5 },
	  4,
	  { -1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269 } },
	{ "layer_norm",
	  "1x2,2,2",
	  { { 1, 3 }, { 2, 1 }, { 0.5, -1 } },
	  { .eps = 1e-5 },
	  2,
	  { 2 * -0.99999500003749968 + 0.5, 0.99999500003749968 - 1 } },
	{ "rms_norm",
	  "1x4,4",
	  { { 1, 2, 3, 4 }, { 1, 1, 1, 2 } },
	  { .eps = 1e-6 },
	  4,
	  { 0.3651483473268884, 0.7302966946537768, 1.0954450419806652, 2.921186778615107 } },
	{ "mm", "2x2,2x1", { { 1, 2, 3, 4 }, { 5, 6 } }, { 0 }, 2, { 17, 39 } },
	{ "bmm", "2x1x2,2x2x1", { { 1, 2, 3, 4 }, { 1, 1, 2, -1 } }, { 0 }, 2, { 3, 2 } },
	{ "matmul", "2x1x2,2x1", { { 1, 2, 3, 4 }, { 1, -1 } }, { 0 }, 2, { -1, -1 } },
	{ "matmul", "2,2x2x1", { { 1, 2 }, { 1, 1, 2, 3 } }, { 0 }, 2, { 3, 8 } },
	{ "linear",
	  "1x2,3x2,3",
	  { { 1, 2 }, { 1, 0, 0, 1, 1, 1 }, { 0.5, 0, -3 } },
	  { 0 },
	  3,
	  { 1.5, 2, 0 } },
	{ "addmm", "2,1x1,1x2", { { 1, 2 }, { 3 }, { 4, 5 } }, { 0 }, 2, { 13, 17 } },
	{ "transpose",
	  "2x3",
	  { { 1, 2, 3, 4, 5, 6 } },
	  { .perm = { 0, 1 } },
	  6,
	  { 1, 4, 2, 5, 3, 6 } },
	{ "permute",
	  "2x1x3",
	  { { 1, 2, 3, 4, 5, 6 } },
	  { .perm = { 2, 0, 1 } },
	  6,
	  { 1, 4, 2, 5, 3, 6 } },
	{ "contiguous", "3", { { 1, 2, 3 } }, { 0 }, 3, { 1, 2, 3 } },
	{ "embedding", "3,2x2", { { 1, 0, 1 }, { 1, 2, 3, 4 } }, { 0 }, 6, { 3, 4, 1, 2, 3, 4 } },
	{ "swiglu_mlp",
	  "1x2,2x1,2x1,1x2",
	  { { 1, 2 }, { 1, 0 }, { 0, 1 }, { 1, -1 } },
	  { 0 },
	  2,
	  { 1.4621171572600098, -1.4621171572600098 } },
	{ "scaled_dot_product_attention",
	  "1x2x1,1x2x1,1x2x1",
	  { { 1, 2 }, { 1, 3 }, { 10, 20 } },
	  { .causal = 1 },
	  2,
	  { 10, 19.820137900379084 } },
	{ "scaled_dot_product_attention",
	  "1x2x1,1x2x1,1x2x1",
	  { { 1, 2 }, { 1, 3 }, { 10, 20 } },
	  { .causal = 0 },
	  2,
	  { 18.807970779778824, 19.820137900379084 } },
};

Test(ops, reference_values)
{
	int covered[256] = { 0 };
	for (size_t i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++) {
		run_rcase(&rcases[i]);
		covered[spyre_op_find(rcases[i].op) - spyre_ops] = 1;
	}
	for (size_t i = 0; i < spyre_ops_count; i++)
		cr_expect(covered[i], "no hand-computed case for %s", spyre_ops[i].name);
}

Test(ops, reference_errors)
{
	const struct spyre_op_info *op = spyre_op_find("embedding");
	struct spyre_tensor in[2];
	int64_t si[] = { 1 }, sw[] = { 2, 2 };
	cr_assert_eq(spyre_tensor_alloc(&in[0], SPYRE_DTYPE_INT64, si, 1), 0);
	cr_assert_eq(spyre_tensor_alloc(&in[1], SPYRE_DTYPE_FLOAT32, sw, 2), 0);
	spyre_tensor_set(&in[0], 0, 2);
	double *out = (double *)1;
	uint64_t n;
	struct spyre_op_params p = { 0 };
	cr_expect_eq(spyre_op_reference(op, in, 2, &p, &out, &n), ERR_INVAL);
	cr_expect_null(out);
	cr_expect(strstr(err_last(), "outside [0, 2)") != NULL, "%s", err_last());
	spyre_tensor_finish(&in[0]);
	spyre_tensor_finish(&in[1]);
}
