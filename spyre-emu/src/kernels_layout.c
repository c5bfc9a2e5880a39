/* Vector-unit kernels that move or set elements without arithmetic: the tile transpose that
 * re-sticks data (the stick dimension becomes the row dimension), and fill. */
#include "kernels_impl.h"

void spyre_kernel__transpose(const struct spyre_vec *v, uint8_t *lx)
{
	size_t sz = spyre_dtype_size(v->dtype);
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++)
			memcpy(lx + v->out + ((uint64_t)c * v->out_stride + r) * sz,
			       lx + v->in[0] + ((uint64_t)r * v->in_stride[0] + c) * sz, sz);
}

void spyre_kernel__fill(const struct spyre_vec *v, uint8_t *lx)
{
	for (uint32_t r = 0; r < v->rows; r++)
		for (uint32_t c = 0; c < v->cols; c++)
			kx_store_f(kx_out(v, lx, r, c), v->out_dtype, v->scalar[0]);
}
