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
	struct spyre_vec v = { .kernel = (uint16_t)k, .nin = spyre_kernels[k].nin, .dtype = t,
			       .out_dtype = out, .rows = rows, .cols = cols,
			       .in = { IN0, IN1, IN2 }, .out = OUT, .out_stride = cols + 5 };
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
	return t == SPYRE_DTYPE_DL16 ? 8 * 0x1.0p-9 * fabs(want) + 1e-6
				     : rel32 * fabs(want) + 1e-6;
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
#define U(n) { #n, d_##n, { 0 }, { 0 }, 0 }
#define P(n) { #n, d_##n, { 1 }, { 0 }, 0 }
#define B(n) { #n, d_##n, { 2, 2 }, { 0 }, 1 }
	U(copy), U(neg), U(abs), U(exp), P(log), P(sqrt), P(rsqrt), P(reciprocal), U(relu),
	U(sigmoid), U(tanh), U(silu), U(gelu), U(gelu_tanh), U(softplus),
	{ "pow", d_pow, { 1 }, { 2.5f }, 0 }, { "clamp", d_clamp, { 0 }, { -0.5f, 0.75f }, 0 },
	{ "scale", d_scale, { 0 }, { 3.0f, 0.25f }, 0 }, U(add), U(sub), U(mul),
	{ "div", d_div, { 0, 1 }, { 0 }, 0 }, { "mul_recip", d_mul_recip, { 0, 1 }, { 0 }, 0 },
	U(exp_sub), U(silu_mul), B(eq), B(ne), B(lt), B(le), B(gt), B(ge),
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
				cr_expect_fail("%s %s (%u,%u) x=%g,%g: got %.9g want %.9g", e->kernel,
					       spyre_dtype_name(t), r, c, x[0], x[1], got, want);
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
		cr_expect(k->nin >= 1 && k->nin <= SPYRE_VEC_IN_MAX, "%s nin", k->name);
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
	struct spyre_vec v = { .kernel = (uint16_t)spyre_kernel_find("add"), .rows = 67,
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
