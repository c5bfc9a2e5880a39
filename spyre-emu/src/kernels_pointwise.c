/* Elementwise vector-unit kernels: one function per pointwise op, casts, the scaled causal
 * mask of attention, and where. Each reads rows x cols elements through the instruction's
 * strides and broadcast bits, computes in fp32 (or exactly in int64 for integer dtypes where
 * the op allows it) and rounds once to out_dtype. */
#include <math.h>

#include "kernels_impl.h"

typedef float (*fn1f)(float x, const float *s);
typedef int64_t (*fn1i)(int64_t x, const float *s);
typedef float (*fn2f)(float a, float b);
typedef int64_t (*fn2i)(int64_t a, int64_t b);

static void run_unary(const struct spyre_vec *v, uint8_t *lx, fn1f ff, fn1i fi)
{
	int ip = fi != NULL && kx_is_int(v->dtype);
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			const uint8_t *p = kx_in(v, lx, 0, v->dtype, r, c);
			uint8_t *o = kx_out(v, lx, r, c);
			if (ip)
				kx_store_i(o, v->out_dtype, fi(kx_load_i(p, v->dtype), v->scalar));
			else
				kx_store_f(o, v->out_dtype, ff(kx_load_f(p, v->dtype), v->scalar));
		}
}

static void run_binary(const struct spyre_vec *v, uint8_t *lx, fn2f ff, fn2i fi)
{
	int ip = fi != NULL && kx_is_int(v->dtype);
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			const uint8_t *a = kx_in(v, lx, 0, v->dtype, r, c);
			const uint8_t *b = kx_in(v, lx, 1, v->dtype, r, c);
			uint8_t *o = kx_out(v, lx, r, c);
			if (ip)
				kx_store_i(o, v->out_dtype,
					   fi(kx_load_i(a, v->dtype), kx_load_i(b, v->dtype)));
			else
				kx_store_f(o, v->out_dtype,
					   ff(kx_load_f(a, v->dtype), kx_load_f(b, v->dtype)));
		}
}

#define UNARY_KERNEL(name, fi)                                                                     \
	void spyre_kernel__##name(const struct spyre_vec *v, uint8_t *lx)                          \
	{                                                                                          \
		run_unary(v, lx, f_##name, fi);                                                    \
	}
#define BINARY_KERNEL(name, fi)                                                                    \
	void spyre_kernel__##name(const struct spyre_vec *v, uint8_t *lx)                          \
	{                                                                                          \
		run_binary(v, lx, f_##name, fi);                                                   \
	}

/* ---- one input ---- */

static float f_copy(float x, const float *s)
{
	return x;
}
static int64_t i_copy(int64_t x, const float *s)
{
	return x;
}
static float f_neg(float x, const float *s)
{
	return -x;
}
static int64_t i_neg(int64_t x, const float *s)
{
	return (int64_t)(0 - (uint64_t)x); /* wraps like two's complement */
}
static float f_abs(float x, const float *s)
{
	return fabsf(x);
}
static int64_t i_abs(int64_t x, const float *s)
{
	return x < 0 ? i_neg(x, s) : x;
}
static float f_exp(float x, const float *s)
{
	return expf(x);
}
static float f_log(float x, const float *s)
{
	return logf(x);
}
static float f_sqrt(float x, const float *s)
{
	return sqrtf(x);
}
static float f_rsqrt(float x, const float *s)
{
	return 1.0f / sqrtf(x);
}
static float f_reciprocal(float x, const float *s)
{
	return 1.0f / x;
}
static float f_relu(float x, const float *s)
{
	return x > 0.0f ? x : (isnan(x) ? x : 0.0f);
}
static int64_t i_relu(int64_t x, const float *s)
{
	return x > 0 ? x : 0;
}
static float f_sigmoid(float x, const float *s)
{
	return 1.0f / (1.0f + expf(-x));
}
static float f_tanh(float x, const float *s)
{
	return tanhf(x);
}
static float f_silu(float x, const float *s)
{
	return x / (1.0f + expf(-x));
}
static float f_gelu(float x, const float *s)
{
	return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
static float f_gelu_tanh(float x, const float *s)
{
	const float k = 0.79788456080286536f; /* sqrt(2 / pi) */
	return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}
static float f_softplus(float x, const float *s)
{
	return x > 20.0f ? x : log1pf(expf(x));
}
static float f_pow(float x, const float *s)
{
	return powf(x, s[0]);
}
static float f_clamp(float x, const float *s)
{
	if (x < s[0])
		x = s[0];
	if (x > s[1])
		x = s[1];
	return x;
}
static int64_t i_clamp(int64_t x, const float *s)
{
	int64_t lo = kx_f2i(ceilf(s[0])), hi = kx_f2i(floorf(s[1]));
	if (isinf(s[0]))
		lo = s[0] < 0 ? INT64_MIN : INT64_MAX;
	if (isinf(s[1]))
		hi = s[1] < 0 ? INT64_MIN : INT64_MAX;
	if (x < lo)
		x = lo;
	if (x > hi)
		x = hi;
	return x;
}
static float f_scale(float x, const float *s)
{
	return x * s[0] + s[1];
}

/* copy converts between formats; the common cases (a whole fp32 tile rounded to DL16 at the
 * end of a matmul, DL16 widened to fp32, a plain move) take the bulk conversions row by row. */
void spyre_kernel__copy(const struct spyre_vec *v, uint8_t *lx)
{
	int plain = v->in_stride[0] != 0 && !(v->bcast_col & 1);
	enum spyre_dtype i = v->dtype, o = v->out_dtype;
	if (!plain || !((i == SPYRE_DTYPE_FLOAT32 && o == SPYRE_DTYPE_DL16) ||
			(i == SPYRE_DTYPE_DL16 && o == SPYRE_DTYPE_FLOAT32) || i == o)) {
		run_unary(v, lx, f_copy, i_copy);
		return;
	}
	size_t isz = spyre_dtype_size(i), osz = spyre_dtype_size(o);
	for (uint32_t r = 0; r < v->rows; r++) {
		const uint8_t *src = lx + v->in[0] + (uint64_t)r * v->in_stride[0] * isz;
		uint8_t *dst = lx + v->out + (uint64_t)r * v->out_stride * osz;
		if (i == o)
			memmove(dst, src, (size_t)v->cols * isz);
		else if (o == SPYRE_DTYPE_DL16)
			spyre_dl16_from_f32_n((uint16_t *)(void *)dst,
					      (const float *)(const void *)src, v->cols);
		else
			spyre_dl16_to_f32_n((float *)(void *)dst,
					    (const uint16_t *)(const void *)src, v->cols);
	}
}
UNARY_KERNEL(neg, i_neg)
UNARY_KERNEL(abs, i_abs)
UNARY_KERNEL(exp, NULL)
UNARY_KERNEL(log, NULL)
UNARY_KERNEL(sqrt, NULL)
UNARY_KERNEL(rsqrt, NULL)
UNARY_KERNEL(reciprocal, NULL)
UNARY_KERNEL(relu, i_relu)
UNARY_KERNEL(sigmoid, NULL)
UNARY_KERNEL(tanh, NULL)
UNARY_KERNEL(silu, NULL)
UNARY_KERNEL(gelu, NULL)
UNARY_KERNEL(gelu_tanh, NULL)
UNARY_KERNEL(softplus, NULL)
UNARY_KERNEL(pow, NULL)
UNARY_KERNEL(clamp, i_clamp)
UNARY_KERNEL(scale, NULL)

/* Attention scores of one tile: scaled, and above the (offset) diagonal masked when causal. */
void spyre_kernel__attn_scale_mask(const struct spyre_vec *v, uint8_t *lx)
{
	int causal = v->scalar[2] != 0.0f;
	double row0 = v->scalar[1], col0 = v->scalar[3];
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			float x = kx_load_f(kx_in(v, lx, 0, v->dtype, r, c), v->dtype);
			int masked = causal && col0 + c > row0 + r;
			kx_store_f(kx_out(v, lx, r, c), v->out_dtype,
				   masked ? SPYRE_KERNEL_MASKED : x * v->scalar[0]);
		}
}

/* ---- two inputs ---- */

static float f_add(float a, float b)
{
	return a + b;
}
static int64_t i_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static float f_sub(float a, float b)
{
	return a - b;
}
static int64_t i_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}
static float f_mul(float a, float b)
{
	return a * b;
}
static int64_t i_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}
static float f_div(float a, float b)
{
	return a / b;
}
static float f_mul_recip(float a, float b)
{
	return a * (1.0f / b);
}
static float f_exp_sub(float a, float b)
{
	return expf(a - b);
}
static float f_silu_mul(float a, float b)
{
	return a / (1.0f + expf(-a)) * b;
}
#define COMPARE(name, expr)                                                                        \
	static float f_##name(float a, float b)                                                    \
	{                                                                                          \
		return (expr) ? 1.0f : 0.0f;                                                       \
	}                                                                                          \
	static int64_t i_##name(int64_t a, int64_t b)                                              \
	{                                                                                          \
		return (expr) ? 1 : 0;                                                             \
	}
COMPARE(eq, a == b)
COMPARE(ne, a != b)
COMPARE(lt, a < b)
COMPARE(le, a <= b)
COMPARE(gt, a > b)
COMPARE(ge, a >= b)

BINARY_KERNEL(add, i_add)
BINARY_KERNEL(sub, i_sub)
BINARY_KERNEL(mul, i_mul)
BINARY_KERNEL(div, NULL)
BINARY_KERNEL(mul_recip, NULL)
BINARY_KERNEL(exp_sub, NULL)
BINARY_KERNEL(silu_mul, NULL)
BINARY_KERNEL(eq, i_eq)
BINARY_KERNEL(ne, i_ne)
BINARY_KERNEL(lt, i_lt)
BINARY_KERNEL(le, i_le)
BINARY_KERNEL(gt, i_gt)
BINARY_KERNEL(ge, i_ge)

/* ---- three inputs ---- */

/* cond ? a : b; cond (input 0) is BOOL bytes, a and b are in v->dtype. */
void spyre_kernel__where(const struct spyre_vec *v, uint8_t *lx)
{
	int ip = kx_is_int(v->dtype);
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			int pick = kx_in(v, lx, 0, SPYRE_DTYPE_BOOL, r, c)[0] ? 1 : 2;
			const uint8_t *p = kx_in(v, lx, pick, v->dtype, r, c);
			uint8_t *o = kx_out(v, lx, r, c);
			if (ip)
				kx_store_i(o, v->out_dtype, kx_load_i(p, v->dtype));
			else
				kx_store_f(o, v->out_dtype, kx_load_f(p, v->dtype));
		}
}
