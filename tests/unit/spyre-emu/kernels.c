/* Tests of spyre-emu/kernels: the kernel table, the cost model, and every kernel against a
 * float64 computation on the values as stored in LX (FLOAT32 tight, DL16 within 8 DL16 ulps),
 * with strides, row and column broadcasting, integer paths, and reductions that give the same
 * bits however they are chunked. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spyre-emu/dl16.h"
#include "spyre-emu/kernels.h"
#include "spyre-emu/ops.h"

#define LX_SIZE (1u << 20)
#define IN0     0u
#define IN1     (64u * 1024)
#define IN2     (128u * 1024)
#define OUT     (256u * 1024)

static uint8_t *lx;

static void setup(void)
{
	lx = calloc(1, LX_SIZE);
	cr_assert_not_null(lx);
}

static void teardown(void)
{
	free(lx);
}

static void put(uint32_t base, enum spyre_dtype t, uint64_t i, double x)
{
	uint8_t *p = lx + base + i * spyre_dtype_size(t);
	float f = (float)x;
	uint16_t h;
	int64_t i64 = (int64_t)x;
	int32_t i32 = (int32_t)x;
	switch (t) {
	case SPYRE_DTYPE_DL16:
		h = spyre_dl16_from_f32(f);
		memcpy(p, &h, 2);
		break;
	case SPYRE_DTYPE_FLOAT32:
		memcpy(p, &f, 4);
		break;
	case SPYRE_DTYPE_INT64:
		memcpy(p, &i64, 8);
		break;
	case SPYRE_DTYPE_INT32:
		memcpy(p, &i32, 4);
		break;
	default:
		p[0] = x != 0;
	}
}

static double get(uint32_t base, enum spyre_dtype t, uint64_t i)
{
	const uint8_t *p = lx + base + i * spyre_dtype_size(t);
	float f;
	uint16_t h;
	int64_t i64;
	int32_t i32;
	switch (t) {
	case SPYRE_DTYPE_DL16:
		memcpy(&h, p, 2);
		return spyre_dl16_to_f32(h);
	case SPYRE_DTYPE_FLOAT32:
		memcpy(&f, p, 4);
		return f;
	case SPYRE_DTYPE_INT64:
		memcpy(&i64, p, 8);
		return (double)i64;
	case SPYRE_DTYPE_INT32:
		memcpy(&i32, p, 4);
		return i32;
	default:
		return p[0];
	}
}

static uint64_t rng = 12345;
static double urand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) * 0x1.0p-53;
}

/* A VEC instruction over rows x cols with padded strides. */
static struct spyre_vec vec(const char *kernel, enum spyre_dtype t, enum spyre_dtype out,
			    uint32_t rows, uint32_t cols)
{
	int k = spyre_kernel_find(kernel);
	cr_assert_geq(k, 0, "kernel %s", kernel);
	struct spyre_vec v = { .kernel = (uint16_t)k,
			       .nin = spyre_kernels[k].nin,
			       .dtype = t,
			       .out_dtype = out,
			       .rows = rows,
			       .cols = cols,
			       .in = { IN0, IN1, IN2 },
			       .out = OUT,
			       .out_stride = cols + 5 };
	for (int i = 0; i < 3; i++)
		v.in_stride[i] = cols + 3;
	return v;
}

static void run(const struct spyre_vec *v)
{
	spyre_kernels[v->kernel].fn(v, lx);
}

/* Fills input i of v with values: kind 0 randn-ish in [-2, 2), 1 positive, 2 quarters. */
static void fill(const struct spyre_vec *v, int i, int kind)
{
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			double x = 4 * urand() - 2;
			if (kind == 1)
				x = 0.1 + 2 * urand();
			if (kind == 2)
				x = floor(x * 2) / 4;
			put(v->in[i], v->dtype, (uint64_t)r * v->in_stride[i] + c, x);
		}
}

static double in_at(const struct spyre_vec *v, int i, uint32_t r, uint32_t c)
{
	uint32_t col = (v->bcast_col >> i) & 1 ? 0 : c;
	return get(v->in[i], v->dtype, (uint64_t)r * v->in_stride[i] + col);
}

static double out_at(const struct spyre_vec *v, uint32_t r, uint32_t c)
{
	return get(v->out, v->out_dtype, (uint64_t)r * v->out_stride + c);
}

static double tol(enum spyre_dtype t, double want, double rel32)
{
	return t == SPYRE_DTYPE_DL16 ? 8 * 0x1.0p-9 * fabs(want) + 1e-6 : rel32 * fabs(want) + 1e-6;
}

static double sig(double x)
{
	return 1 / (1 + exp(-x));
}

typedef double (*dfn)(const double *x, const float *s);
#define D(name, expr)                                                                              \
	static double d_##name(const double *x, const float *s)                                    \
	{                                                                                          \
		(void)s;                                                                           \
		return (expr);                                                                     \
	}
D(copy, x[0])
D(neg, -x[0])
D(abs, fabs(x[0]))
D(exp, exp(x[0]))
D(log, log(x[0]))
D(sqrt, sqrt(x[0]))
D(rsqrt, 1 / sqrt(x[0]))
D(reciprocal, 1 / x[0])
D(relu, x[0] > 0 ? x[0] : 0)
D(sigmoid, sig(x[0]))
D(tanh, tanh(x[0]))
D(silu, x[0] * sig(x[0]))
D(gelu, 0.5 * x[0] * (1 + erf(x[0] / sqrt(2))))
D(gelu_tanh, 0.5 * x[0] * (1 + tanh(sqrt(2 / M_PI) * (x[0] + 0.044715 * pow(x[0], 3)))))
D(softplus, log1p(exp(x[0])))
D(pow, pow(x[0], s[0]))
D(clamp, fmin(fmax(x[0], s[0]), s[1]))
D(scale, x[0] * s[0] + s[1])
D(add, x[0] + x[1])
D(sub, x[0] - x[1])
D(mul, x[0] * x[1])
D(div, x[0] / x[1])
D(mul_recip, x[0] / x[1])
D(exp_sub, exp(x[0] - x[1]))
D(silu_mul, x[0] * sig(x[0]) * x[1])
D(eq, x[0] == x[1])
D(ne, x[0] != x[1])
D(lt, x[0] < x[1])
D(le, x[0] <= x[1])
D(gt, x[0] > x[1])
D(ge, x[0] >= x[1])

static const struct ecase {
	const char *kernel;
	dfn f;
	int kind[3];
	float s[2];
	int is_bool; /* output BOOL, exact */
} ecases[] = {
#define U(n)                                                                                       \
	{                                                                                          \
#n, d_##n, { 0 }, { 0 }, 0                                                         \
	}
#define P(n)                                                                                       \
	{                                                                                          \
#n, d_##n, { 1 }, { 0 }, 0                                                         \
	}
#define B(n)                                                                                       \
	{                                                                                          \
#n, d_##n, { 2, 2 }, { 0 }, 1                                                      \
	}
	U(copy),
	U(neg),
	U(abs),
	U(exp),
	P(log),
	P(sqrt),
	P(rsqrt),
	P(reciprocal),
	U(relu),
	U(sigmoid),
	U(tanh),
	U(silu),
	U(gelu),
	U(gelu_tanh),
	U(softplus),
	{ "pow", d_pow, { 1 }, { 2.5f }, 0 },
	{ "clamp", d_clamp, { 0 }, { -0.5f, 0.75f }, 0 },
	{ "scale", d_scale, { 0 }, { 3.0f, 0.25f }, 0 },
	U(add),
	U(sub),
	U(mul),
	{ "div", d_div, { 0, 1 }, { 0 }, 0 },
	{ "mul_recip", d_mul_recip, { 0, 1 }, { 0 }, 0 },
	U(exp_sub),
	U(silu_mul),
	B(eq),
	B(ne),
	B(lt),
	B(le),
	B(gt),
	B(ge),
#undef U
#undef P
#undef B
};

static void check_ecase(const struct ecase *e, enum spyre_dtype t, uint32_t rows, uint32_t cols,
			uint8_t bcast_col, int row_bcast1)
{
	struct spyre_vec v = vec(e->kernel, t, e->is_bool ? SPYRE_DTYPE_BOOL : t, rows, cols);
	v.bcast_col = bcast_col;
	if (row_bcast1)
		v.in_stride[1] = 0;
	memcpy(v.scalar, e->s, sizeof(e->s));
	for (int i = 0; i < v.nin; i++)
		fill(&v, i, e->kind[i]);
	if (v.nin == 2 && e->is_bool) /* make some pairs equal */
		for (uint32_t c = 0; c < cols; c += 3)
			put(IN1, t, c, in_at(&v, 0, 0, c));
	run(&v);
	for (uint32_t r = 0; r < rows; r++)
		for (uint32_t c = 0; c < cols; c++) {
			double x[3] = { in_at(&v, 0, r, c), v.nin > 1 ? in_at(&v, 1, r, c) : 0 };
			double want = e->f(x, v.scalar), got = out_at(&v, r, c);
			double eps = e->is_bool ? 0 : tol(t, want, 1e-5);
			if (!(fabs(got - want) <= eps)) {
				cr_expect_fail("%s %s (%u,%u) x=%g,%g: got %.9g want %.9g",
					       e->kernel, spyre_dtype_name(t), r, c, x[0], x[1],
					       got, want);
				return;
			}
		}
}

Test(kernels, table, .init = setup, .fini = teardown)
{
	cr_assert_gt(spyre_kernels_count, 50);
	for (size_t i = 0; i < spyre_kernels_count; i++) {
		const struct spyre_kernel *k = &spyre_kernels[i];
		cr_expect_eq(spyre_kernel_find(k->name), (int)i, "%s", k->name);
		cr_expect_not_null(k->fn);
		/* fill and iota (arange) are the kernels that read nothing */
		cr_expect(
		    (k->nin >= 1 || strcmp(k->name, "fill") == 0 || strcmp(k->name, "iota") == 0) &&
			k->nin <= SPYRE_VEC_IN_MAX,
		    "%s nin", k->name);
		cr_expect(k->passes >= 1, "%s passes", k->name);
	}
	cr_expect_eq(spyre_kernel_find("nope"), -1);
	/* every pointwise op lowers to a kernel of its own name */
	for (size_t i = 0; i < spyre_ops_count; i++)
		if (spyre_ops[i].cls == SPYRE_OPC_POINTWISE)
			cr_expect_geq(spyre_kernel_find(spyre_ops[i].name), 0, "%s",
				      spyre_ops[i].name);
	cr_expect(spyre_kernels[spyre_kernel_find("exp")].transcendental);
	cr_expect(!spyre_kernels[spyre_kernel_find("add")].transcendental);
}

Test(kernels, cycles)
{
	struct spyre_hw hw = { .vec_elems_per_cycle = 64, .transcendental_factor = 4 };
	struct spyre_vec v = { .kernel = (uint16_t)spyre_kernel_find("add"),
			       .rows = 67,
			       .cols = 256 };
	cr_expect_eq(spyre_kernel_cycles(&v, &hw), 268 + SPYRE_KERNEL_ISSUE_CYCLES);
	v.kernel = (uint16_t)spyre_kernel_find("exp");
	cr_expect_eq(spyre_kernel_cycles(&v, &hw), 268 * 4 + SPYRE_KERNEL_ISSUE_CYCLES);
	v.kernel = (uint16_t)spyre_kernel_find("softmax");
	cr_expect_eq(spyre_kernel_cycles(&v, &hw), 268 * 3 * 4 + SPYRE_KERNEL_ISSUE_CYCLES);
	v.rows = 1;
	v.cols = 65;
	v.kernel = (uint16_t)spyre_kernel_find("mul");
	cr_expect_eq(spyre_kernel_cycles(&v, &hw), 2 + SPYRE_KERNEL_ISSUE_CYCLES);
}

Test(kernels, elementwise_vs_float64, .init = setup, .fini = teardown)
{
	for (size_t i = 0; i < sizeof(ecases) / sizeof(ecases[0]); i++) {
		check_ecase(&ecases[i], SPYRE_DTYPE_FLOAT32, 5, 37, 0, 0);
		check_ecase(&ecases[i], SPYRE_DTYPE_DL16, 5, 70, 0, 0);
	}
}

Test(kernels, broadcast_flags, .init = setup, .fini = teardown)
{
	for (size_t i = 0; i < sizeof(ecases) / sizeof(ecases[0]); i++) {
		int k = spyre_kernel_find(ecases[i].kernel);
		if (spyre_kernels[k].nin != 2)
			continue;
		check_ecase(&ecases[i], SPYRE_DTYPE_FLOAT32, 4, 33, 0, 1); /* b: one row */
		check_ecase(&ecases[i], SPYRE_DTYPE_DL16, 4, 33, 2, 0);    /* b: one per row */
		check_ecase(&ecases[i], SPYRE_DTYPE_FLOAT32, 4, 33, 1, 0); /* a: one per row */
	}
	/* a concrete case: x + per-row value */
	struct spyre_vec v = vec("add", SPYRE_DTYPE_FLOAT32, SPYRE_DTYPE_FLOAT32, 2, 3);
	v.bcast_col = 2;
	v.in_stride[1] = 1;
	for (int i = 0; i < 6; i++)
		put(IN0, SPYRE_DTYPE_FLOAT32, (uint64_t)(i / 3 * 6 + i % 3), i);
	put(IN1, SPYRE_DTYPE_FLOAT32, 0, 100);
	put(IN1, SPYRE_DTYPE_FLOAT32, 1, 200);
	run(&v);
	cr_expect_eq(out_at(&v, 0, 2), 102);
	cr_expect_eq(out_at(&v, 1, 0), 203);
}

/* ---- reductions ---- */

static void check_reduce(const char *kernel, enum spyre_dtype t, int col, int op)
{
	uint32_t rows = 6, cols = 75;
	struct spyre_vec v = vec(kernel, t, t, rows, cols);
	fill(&v, 0, 0);
	run(&v);
	uint32_t nl = col ? cols : rows, len = col ? rows : cols;
	for (uint32_t l = 0; l < nl; l++) {
		double a = op == 2 ? -INFINITY : op == 3 ? INFINITY : 0, mag = 0;
		for (uint32_t k = 0; k < len; k++) {
			double x = col ? in_at(&v, 0, k, l) : in_at(&v, 0, l, k);
			a = op == 2 ? fmax(a, x) : op == 3 ? fmin(a, x) : a + x;
			mag += fabs(x);
		}
		if (op == 1)
			a /= len, mag /= len;
		double got = col ? out_at(&v, 0, l) : out_at(&v, l, 0);
		double eps = op >= 2 ? 0 : tol(t, mag, 1e-5);
		cr_expect(fabs(got - a) <= eps, "%s %s line %u: got %.9g want %.9g", kernel,
			  spyre_dtype_name(t), l, got, a);
	}
}

Test(kernels, reductions_vs_float64, .init = setup, .fini = teardown)
{
	static const char *names[2][4] = { { "row_sum", "row_mean", "row_max", "row_min" },
					   { "col_sum", "col_mean", "col_max", "col_min" } };
	for (int col = 0; col < 2; col++)
		for (int op = 0; op < 4; op++) {
			check_reduce(names[col][op], SPYRE_DTYPE_FLOAT32, col, op);
			check_reduce(names[col][op], SPYRE_DTYPE_DL16, col, op);
		}
}

/* Splitting a reduction into chunks run in order (the *_acc kernels) gives the same bits as
 * one pass, and rows spread over cores give the same bits as one call. */
Test(kernels, reductions_chunk_invariant, .init = setup, .fini = teardown)
{
	static const char *pairs[][2] = { { "col_sum", "col_sum_acc" },
					  { "col_max", "col_max_acc" },
					  { "col_min", "col_min_acc" } };
	for (int p = 0; p < 3; p++) {
		struct spyre_vec v =
		    vec(pairs[p][0], SPYRE_DTYPE_DL16, SPYRE_DTYPE_FLOAT32, 97, 40);
		fill(&v, 0, 0);
		run(&v);
		float whole[40];
		memcpy(whole, lx + OUT, sizeof(whole));
		memset(lx + OUT, 0xAB, sizeof(whole));
		uint32_t cuts[] = { 0, 13, 14, 64, 97 };
		for (int c = 0; c < 4; c++) {
			struct spyre_vec w = vec(pairs[p][c ? 1 : 0], SPYRE_DTYPE_DL16,
						 SPYRE_DTYPE_FLOAT32, cuts[c + 1] - cuts[c], 40);
			w.in[0] = IN0 + cuts[c] * v.in_stride[0] * 2;
			run(&w);
		}
		cr_expect_eq(memcmp(whole, lx + OUT, sizeof(whole)), 0, "%s chunked differs",
			     pairs[p][0]);
	}
	/* row_sum over cols split in two with row_sum_acc */
	struct spyre_vec v = vec("row_sum", SPYRE_DTYPE_FLOAT32, SPYRE_DTYPE_FLOAT32, 9, 200);
	fill(&v, 0, 0);
	run(&v);
	float whole[9 * 205];
	memcpy(whole, lx + OUT, sizeof(whole));
	v.cols = 77;
	run(&v);
	struct spyre_vec w = vec("row_sum_acc", SPYRE_DTYPE_FLOAT32, SPYRE_DTYPE_FLOAT32, 9, 123);
	w.in_stride[0] = v.in_stride[0];
	w.out_stride = v.out_stride;
	w.in[0] = IN0 + 77 * 4;
	run(&w);
	cr_expect_eq(memcmp(whole, lx + OUT, sizeof(whole)), 0, "row_sum_acc differs");
	/* rows in chunks (as cores would take them) */
	v = vec("softmax", SPYRE_DTYPE_DL16, SPYRE_DTYPE_DL16, 10, 150);
	fill(&v, 0, 0);
	run(&v);
	uint16_t sm[10 * 155];
	memcpy(sm, lx + OUT, sizeof(sm));
	memset(lx + OUT, 0, sizeof(sm));
	for (uint32_t r = 0; r < 10; r += 3) {
		w = v;
		w.rows = r + 3 <= 10 ? 3 : 10 - r;
		w.in[0] = IN0 + r * v.in_stride[0] * 2;
		w.out = OUT + r * v.out_stride * 2;
		run(&w);
	}
	cr_expect_eq(memcmp(sm, lx + OUT, sizeof(sm)), 0, "softmax by row chunks differs");
}

/* ---- row-wise kernels against the ops' float64 reference ---- */

static void check_rowwise(const char *kernel, enum spyre_dtype t, uint32_t rows, uint32_t cols)
{
	const struct spyre_op_info *op = spyre_op_find(kernel);
	struct spyre_vec v = vec(kernel, t, t, rows, cols);
	v.scalar[0] = 1e-5f;
	fill(&v, 0, 0);
	for (int i = 1; i < v.nin; i++) {
		v.in_stride[i] = 0;
		fill(&v, i, 0);
	}
	run(&v);
	struct spyre_tensor in[3];
	int64_t s0[] = { rows, cols }, s1[] = { cols };
	for (int i = 0; i < v.nin; i++) {
		cr_assert_eq(spyre_tensor_alloc(&in[i], t, i ? s1 : s0, i ? 1 : 2), 0);
		for (uint32_t r = 0; r < (i ? 1u : rows); r++)
			for (uint32_t c = 0; c < cols; c++)
				spyre_tensor_set(&in[i], (uint64_t)r * cols + c,
						 in_at(&v, i, r, c));
	}
	struct spyre_op_params p = { .dim = -1, .eps = 1e-5 };
	double *want;
	uint64_t n;
	cr_assert_eq(spyre_op_reference(op, in, v.nin, &p, &want, &n), 0);
	int bad = 0;
	for (uint32_t r = 0; r < rows && !bad; r++)
		for (uint32_t c = 0; c < cols && !bad; c++) {
			double w = want[r * cols + c], got = out_at(&v, r, c);
			/* norms amplify input rounding by rstd: allow more */
			if (!(fabs(got - w) <=
			      tol(t, w, 1e-5) + (t == SPYRE_DTYPE_DL16 ? 4e-3 : 1e-5))) {
				cr_expect_fail("%s %s (%u,%u): got %.9g want %.9g", kernel,
					       spyre_dtype_name(t), r, c, got, w);
				bad = 1;
			}
		}
	free(want);
	for (int i = 0; i < v.nin; i++)
		spyre_tensor_finish(&in[i]);
}

Test(kernels, rowwise_vs_reference, .init = setup, .fini = teardown)
{
	const char *names[] = { "softmax", "log_softmax", "layer_norm", "rms_norm" };
	for (int i = 0; i < 4; i++) {
		check_rowwise(names[i], SPYRE_DTYPE_FLOAT32, 7, 129);
		check_rowwise(names[i], SPYRE_DTYPE_DL16, 7, 256);
	}
}

/* ---- integers, casts, where, attention mask ---- */

Test(kernels, integer_paths, .init = setup, .fini = teardown)
{
	int64_t big = ((int64_t)1 << 40) + 1; /* not exact in fp32 */
	struct spyre_vec v = vec("add", SPYRE_DTYPE_INT64, SPYRE_DTYPE_INT64, 1, 2);
	put(IN0, SPYRE_DTYPE_INT64, 0, (double)big);
	put(IN0, SPYRE_DTYPE_INT64, 1, -5);
	put(IN1, SPYRE_DTYPE_INT64, 0, 1);
	put(IN1, SPYRE_DTYPE_INT64, 1, 2);
	run(&v);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_INT64, 0), (double)(big + 1));
	cr_expect_eq(get(OUT, SPYRE_DTYPE_INT64, 1), -3);
	v = vec("row_sum", SPYRE_DTYPE_INT64, SPYRE_DTYPE_INT64, 1, 2);
	run(&v);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_INT64, 0), (double)(big - 5));
	v = vec("lt", SPYRE_DTYPE_INT64, SPYRE_DTYPE_BOOL, 1, 2);
	run(&v);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_BOOL, 0), 0);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_BOOL, 1), 1);
	v = vec("clamp", SPYRE_DTYPE_INT64, SPYRE_DTYPE_INT64, 1, 2);
	v.scalar[0] = -2.5f;
	v.scalar[1] = INFINITY;
	run(&v);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_INT64, 0), (double)big);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_INT64, 1), -2);

	/* casts: DL16 -> FLOAT32 exact, FLOAT32 -> INT32 toward zero, INT32 -> DL16 rounded */
	v = vec("copy", SPYRE_DTYPE_DL16, SPYRE_DTYPE_FLOAT32, 1, 3);
	put(IN0, SPYRE_DTYPE_DL16, 0, -2.75);
	put(IN0, SPYRE_DTYPE_DL16, 1, 1.0 / 3);
	put(IN0, SPYRE_DTYPE_DL16, 2, 7.5);
	run(&v);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_FLOAT32, 1),
		     spyre_dl16_to_f32(spyre_dl16_from_f32(1.0f / 3)));
	v = vec("copy", SPYRE_DTYPE_FLOAT32, SPYRE_DTYPE_INT32, 1, 3);
	v.in[0] = OUT;
	v.in_stride[0] = 8;
	v.out = IN2;
	run(&v);
	cr_expect_eq(get(IN2, SPYRE_DTYPE_INT32, 0), -2);
	cr_expect_eq(get(IN2, SPYRE_DTYPE_INT32, 2), 7);
	v = vec("copy", SPYRE_DTYPE_INT32, SPYRE_DTYPE_DL16, 1, 1);
	put(IN0, SPYRE_DTYPE_INT32, 0, 1025); /* 1025 = 1024 * (1 + 2^-10): a tie, away */
	run(&v);
	cr_expect_eq(get(OUT, SPYRE_DTYPE_DL16, 0), 1026);
}

Test(kernels, where_bool_condition, .init = setup, .fini = teardown)
{
	for (int t = 0; t < 2; t++) {
		enum spyre_dtype dt = t ? SPYRE_DTYPE_INT32 : SPYRE_DTYPE_DL16;
		struct spyre_vec v = vec("where", dt, dt, 3, 5);
		v.in_stride[2] = 0; /* b: one row for all */
		for (int i = 0; i < 3 * 8; i++)
			put(IN0, SPYRE_DTYPE_BOOL, (uint64_t)i, i % 3 == 0);
		fill(&v, 1, 2);
		fill(&v, 2, 2);
		run(&v);
		for (uint32_t r = 0; r < 3; r++)
			for (uint32_t c = 0; c < 5; c++) {
				int cond = lx[IN0 + r * 8 + c] != 0;
				double want = cond ? in_at(&v, 1, r, c) : in_at(&v, 2, 0, c);
				if (t)
					want = trunc(want);
				cr_expect_eq(out_at(&v, r, c), want, "%u,%u", r, c);
			}
	}
}

Test(kernels, attn_scale_mask, .init = setup, .fini = teardown)
{
	struct spyre_vec v = vec("attn_scale_mask", SPYRE_DTYPE_DL16, SPYRE_DTYPE_DL16, 4, 8);
	fill(&v, 0, 2);
	v.scalar[0] = 0.5f;
	v.scalar[1] = 4; /* rows 4..7 of the scores */
	v.scalar[2] = 1;
	v.scalar[3] = 2; /* columns 2..9 */
	run(&v);
	for (uint32_t r = 0; r < 4; r++)
		for (uint32_t c = 0; c < 8; c++) {
			int masked = c + 2 > r + 4;
			double want = masked ? SPYRE_KERNEL_MASKED : in_at(&v, 0, r, c) * 0.5;
			cr_expect_eq(out_at(&v, r, c), want, "(%u,%u)", r, c);
		}
	/* masked scores vanish in softmax */
	struct spyre_vec s = vec("softmax", SPYRE_DTYPE_DL16, SPYRE_DTYPE_FLOAT32, 4, 8);
	s.in[0] = OUT;
	s.in_stride[0] = v.out_stride;
	s.out = IN2;
	run(&s);
	cr_expect_eq(get(IN2, SPYRE_DTYPE_FLOAT32, 7), 0.0);
	cr_expect_gt(get(IN2, SPYRE_DTYPE_FLOAT32, 2), 0.0);
	v.scalar[2] = 0;
	run(&v);
	cr_expect_eq(out_at(&v, 0, 7), in_at(&v, 0, 0, 7) * 0.5);
}

Test(kernels, fill_writes_the_scalar_in_the_out_dtype)
{
	uint8_t mem[256];
	memset(mem, 0xff, sizeof(mem)); /* 0xffff is DL16's NaN pattern: garbage to overwrite */
	struct spyre_vec v = { 0 };
	v.kernel = (uint16_t)spyre_kernel_find("fill");
	v.dtype = v.out_dtype = SPYRE_DTYPE_DL16;
	v.out = 0;
	v.out_stride = 8;
	v.rows = 3;
	v.cols = 5;
	spyre_kernels[v.kernel].fn(&v, mem);
	for (uint32_t r = 0; r < 3; r++)
		for (uint32_t c = 0; c < 8; c++) {
			uint16_t h;
			memcpy(&h, mem + (r * 8 + c) * 2, 2);
			cr_expect_eq(h, c < 5 ? 0 : 0xffff, "(%u, %u)", r, c);
		}
}
