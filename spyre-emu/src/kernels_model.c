/* Vector-unit kernels of the ops real models add: cos and sin, tensor-scalar arithmetic,
 * casts (`to`), and lane_copy, which moves elements to other lanes of a stick (the MOVE ops'
 * plans use it where a run of elements does not start on a stick boundary). Each computes in
 * fp32 and rounds once to out_dtype, as kernels_pointwise.c does. */
#include <math.h>

#include "kernels_impl.h"

typedef float (*fn1)(float x, const float *s);

static void unary(const struct spyre_vec *v, uint8_t *lx, fn1 f)
{
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++)
			kx_store_f(
			    kx_out(v, lx, r, c), v->out_dtype,
			    f(kx_load_f(kx_in(v, lx, 0, v->dtype, r, c), v->dtype), v->scalar));
}

static float f_cos(float x, const float *s)
{
	(void)s;
	return cosf(x);
}
static float f_sin(float x, const float *s)
{
	(void)s;
	return sinf(x);
}
static float f_mul_scalar(float x, const float *s)
{
	return x * s[0];
}
static float f_add_scalar(float x, const float *s)
{
	return x + s[0];
}
static float f_div_scalar(float x, const float *s)
{
	return x / s[0];
}

#define MODEL_KERNEL(name)                                                                         \
	void spyre_kernel__##name(const struct spyre_vec *v, uint8_t *lx)                          \
	{                                                                                          \
		unary(v, lx, f_##name);                                                            \
	}
MODEL_KERNEL(cos)
MODEL_KERNEL(sin)
MODEL_KERNEL(mul_scalar)
MODEL_KERNEL(add_scalar)
MODEL_KERNEL(div_scalar)

/* A cast: integers stay exact between integer types, become the nearest float otherwise;
 * floats round once to out_dtype (to an integer: toward zero, as kx_store_f does). */
void spyre_kernel__to(const struct spyre_vec *v, uint8_t *lx)
{
	int in_int = kx_is_int(v->dtype), out_int = kx_is_int(v->out_dtype);
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			const uint8_t *p = kx_in(v, lx, 0, v->dtype, r, c);
			uint8_t *o = kx_out(v, lx, r, c);
			if (in_int && out_int)
				kx_store_i(o, v->out_dtype, kx_load_i(p, v->dtype));
			else if (in_int)
				kx_store_f(o, v->out_dtype, (float)kx_load_i(p, v->dtype));
			else
				kx_store_f(o, v->out_dtype, kx_load_f(p, v->dtype));
		}
}

/* arange on the vector unit: reads nothing; integers exact (in double, then stored), floats
 * computed in fp32 and rounded once. */
void spyre_kernel__iota(const struct spyre_vec *v, uint8_t *lx)
{
	int is_int = kx_is_int(v->out_dtype);
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++) {
			uint64_t i = (uint64_t)r * v->cols + c;
			uint8_t *o = kx_out(v, lx, r, c);
			if (is_int)
				kx_store_i(
				    o, v->out_dtype,
				    (int64_t)((double)v->scalar[0] + (double)i * v->scalar[1]));
			else
				kx_store_f(o, v->out_dtype, v->scalar[0] + (float)i * v->scalar[1]);
		}
}

/* Per row: scalar[2] elements from lane scalar[0] of the input row to lane scalar[1] of the
 * output row, bytes unchanged (dtype == out_dtype). rows x cols is the footprint the validator
 * and the timing model see: the plan sets it to cover what this reads and writes. */
void spyre_kernel__lane_copy(const struct spyre_vec *v, uint8_t *lx)
{
	size_t es = spyre_dtype_size(v->dtype);
	uint32_t from = (uint32_t)v->scalar[0], to = (uint32_t)v->scalar[1];
	uint32_t n = (uint32_t)v->scalar[2];
	for (uint32_t r = 0; r < v->rows; r++)
		memmove(lx + v->out + ((uint64_t)r * v->out_stride + to) * es,
			lx + v->in[0] + ((uint64_t)r * v->in_stride[0] + from) * es, n * es);
}
