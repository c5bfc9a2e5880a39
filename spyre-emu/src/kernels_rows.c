/* Reduction and row-wise vector-unit kernels. Every reduction runs in one fixed order (left to
 * right along a row, top to bottom down a column) with an fp32 accumulator (int64 for integer
 * sum/max/min), so that the result of a row does not depend on how rows are spread over cores,
 * and a reduction split into chunks with the *_acc variants gives the same bits as one pass. */
#include <math.h>

#include "kernels_impl.h"

enum red { RED_SUM, RED_MEAN, RED_MAX, RED_MIN };

static float red_init_f(enum red op)
{
	return op == RED_MAX ? -INFINITY : op == RED_MIN ? INFINITY : 0.0f;
}

static int64_t red_init_i(enum red op)
{
	return op == RED_MAX ? INT64_MIN : op == RED_MIN ? INT64_MAX : 0;
}

/* NaN propagates through max and min as it does in PyTorch. */
static float red_step_f(enum red op, float acc, float x)
{
	switch (op) {
	case RED_MAX:
		return isnan(x) || x > acc ? x : acc;
	case RED_MIN:
		return isnan(x) || x < acc ? x : acc;
	default:
		return acc + x;
	}
}

static int64_t red_step_i(enum red op, int64_t acc, int64_t x)
{
	switch (op) {
	case RED_MAX:
		return x > acc ? x : acc;
	case RED_MIN:
		return x < acc ? x : acc;
	default:
		return (int64_t)((uint64_t)acc + (uint64_t)x);
	}
}

/* Reduces n elements starting at element (r0, c0), stepping (dr, dc), into out element (ro, co);
 * `acc`: start from the value already there. */
static void reduce_line(const struct spyre_vec *v, uint8_t *lx, enum red op, int acc, uint32_t r0,
			uint32_t c0, uint32_t dr, uint32_t dc, uint32_t n, uint32_t ro, uint32_t co)
{
	uint8_t *o = kx_out(v, lx, ro, co);
	if (kx_is_int(v->dtype) && op != RED_MEAN) {
		int64_t a = acc ? kx_load_i(o, v->out_dtype) : red_init_i(op);
		for (uint32_t k = 0; k < n; k++)
			a = red_step_i(
			    op, a,
			    kx_load_i(kx_in(v, lx, 0, v->dtype, r0 + k * dr, c0 + k * dc),
				      v->dtype));
		kx_store_i(o, v->out_dtype, a);
		return;
	}
	float a = acc ? kx_load_f(o, v->out_dtype) : red_init_f(op);
	for (uint32_t k = 0; k < n; k++)
		a = red_step_f(
		    op, a,
		    kx_load_f(kx_in(v, lx, 0, v->dtype, r0 + k * dr, c0 + k * dc), v->dtype));
	if (op == RED_MEAN)
		a = a / (float)n;
	kx_store_f(o, v->out_dtype, a);
}

static void row_reduce(const struct spyre_vec *v, uint8_t *lx, enum red op, int acc)
{
	for (uint32_t r = 0; r < v->rows; r++)
		reduce_line(v, lx, op, acc, r, 0, 0, 1, v->cols, r, 0);
}

static void col_reduce(const struct spyre_vec *v, uint8_t *lx, enum red op, int acc)
{
	for (uint32_t c = 0; c < v->cols; c++)
		reduce_line(v, lx, op, acc, 0, c, 1, 0, v->rows, 0, c);
}

#define REDUCE_KERNEL(name, dir, op, acc)                                                          \
	void spyre_kernel__##name(const struct spyre_vec *v, uint8_t *lx)                          \
	{                                                                                          \
		dir##_reduce(v, lx, op, acc);                                                      \
	}

REDUCE_KERNEL(row_sum, row, RED_SUM, 0)
REDUCE_KERNEL(row_mean, row, RED_MEAN, 0)
REDUCE_KERNEL(row_max, row, RED_MAX, 0)
REDUCE_KERNEL(row_min, row, RED_MIN, 0)
REDUCE_KERNEL(row_sum_acc, row, RED_SUM, 1)
REDUCE_KERNEL(row_max_acc, row, RED_MAX, 1)
REDUCE_KERNEL(row_min_acc, row, RED_MIN, 1)
REDUCE_KERNEL(col_sum, col, RED_SUM, 0)
REDUCE_KERNEL(col_mean, col, RED_MEAN, 0)
REDUCE_KERNEL(col_max, col, RED_MAX, 0)
REDUCE_KERNEL(col_min, col, RED_MIN, 0)
REDUCE_KERNEL(col_sum_acc, col, RED_SUM, 1)
REDUCE_KERNEL(col_max_acc, col, RED_MAX, 1)
REDUCE_KERNEL(col_min_acc, col, RED_MIN, 1)

/* ---- row-wise: each output row from its whole input row ---- */

static float in_f(const struct spyre_vec *v, const uint8_t *lx, int i, uint32_t r, uint32_t c)
{
	return kx_load_f(kx_in(v, lx, i, v->dtype, r, c), v->dtype);
}

static void out_f(const struct spyre_vec *v, uint8_t *lx, uint32_t r, uint32_t c, float x)
{
	kx_store_f(kx_out(v, lx, r, c), v->out_dtype, x);
}

/* Pass 1 and 2 of softmax for row r: the max m and the sum of exp(x - m). */
static void softmax_stats(const struct spyre_vec *v, const uint8_t *lx, uint32_t r, float *m,
			  float *s)
{
	*m = -INFINITY;
	for (uint32_t c = 0; c < v->cols; c++)
		*m = red_step_f(RED_MAX, *m, in_f(v, lx, 0, r, c));
	*s = 0.0f;
	for (uint32_t c = 0; c < v->cols; c++)
		*s += expf(in_f(v, lx, 0, r, c) - *m);
}

void spyre_kernel__softmax(const struct spyre_vec *v, uint8_t *lx)
{
	for (uint32_t r = 0; r < v->rows; r++) {
		float m, s;
		softmax_stats(v, lx, r, &m, &s);
		for (uint32_t c = 0; c < v->cols; c++)
			out_f(v, lx, r, c, expf(in_f(v, lx, 0, r, c) - m) / s);
	}
}

void spyre_kernel__log_softmax(const struct spyre_vec *v, uint8_t *lx)
{
	for (uint32_t r = 0; r < v->rows; r++) {
		float m, s;
		softmax_stats(v, lx, r, &m, &s);
		float ls = logf(s);
		for (uint32_t c = 0; c < v->cols; c++)
			out_f(v, lx, r, c, (in_f(v, lx, 0, r, c) - m) - ls);
	}
}

/* (x - mean) / sqrt(var + eps) * weight + bias; biased variance, as PyTorch. */
void spyre_kernel__layer_norm(const struct spyre_vec *v, uint8_t *lx)
{
	float n = (float)v->cols, eps = v->scalar[0];
	for (uint32_t r = 0; r < v->rows; r++) {
		float sum = 0.0f, sq = 0.0f;
		for (uint32_t c = 0; c < v->cols; c++)
			sum += in_f(v, lx, 0, r, c);
		float mean = sum / n;
		for (uint32_t c = 0; c < v->cols; c++) {
			float d = in_f(v, lx, 0, r, c) - mean;
			sq += d * d;
		}
		float rstd = 1.0f / sqrtf(sq / n + eps);
		for (uint32_t c = 0; c < v->cols; c++)
			out_f(v, lx, r, c,
			      (in_f(v, lx, 0, r, c) - mean) * rstd * in_f(v, lx, 1, r, c) +
				  in_f(v, lx, 2, r, c));
	}
}

/* x / sqrt(mean(x^2) + eps) * weight. */
void spyre_kernel__rms_norm(const struct spyre_vec *v, uint8_t *lx)
{
	float n = (float)v->cols, eps = v->scalar[0];
	for (uint32_t r = 0; r < v->rows; r++) {
		float sq = 0.0f;
		for (uint32_t c = 0; c < v->cols; c++) {
			float x = in_f(v, lx, 0, r, c);
			sq += x * x;
		}
		float rstd = 1.0f / sqrtf(sq / n + eps);
		for (uint32_t c = 0; c < v->cols; c++)
			out_f(v, lx, r, c, in_f(v, lx, 0, r, c) * rstd * in_f(v, lx, 1, r, c));
	}
}
