/* Private to the kernel files: element access on LX and the declarations of every kernel
 * function (generated from ops.def). Loads and stores go through memcpy so that no LX offset
 * has to be aligned. */
#ifndef SPYRE_EMU_KERNELS_IMPL_H
#define SPYRE_EMU_KERNELS_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "elem.h"
#include "spyre-emu/dl16.h"
#include "spyre-emu/dtype.h"
#include "spyre-emu/kernels.h"
#include "spyre-emu/program.h"

#define OP(name, cls, nin, inputs, dtypes, samples, init, doc)
#define KERNEL(name, nin, shape, passes, transcendental)                                           \
	void spyre_kernel__##name(const struct spyre_vec *v, uint8_t *lx);
#include "../ops.def"
#undef OP
#undef KERNEL

/* Address of element (r, c) of input i, read as dtype t (honours stride 0 and bcast_col). */
static inline const uint8_t *kx_in(const struct spyre_vec *v, const uint8_t *lx, int i,
				   enum spyre_dtype t, uint32_t r, uint32_t c)
{
	uint64_t col = (v->bcast_col >> i) & 1 ? 0 : c;
	return lx + v->in[i] + ((uint64_t)r * v->in_stride[i] + col) * spyre_dtype_size(t);
}

static inline uint8_t *kx_out(const struct spyre_vec *v, uint8_t *lx, uint32_t r, uint32_t c)
{
	return lx + v->out + ((uint64_t)r * v->out_stride + c) * spyre_dtype_size(v->out_dtype);
}

static inline void kx_store_i(uint8_t *p, enum spyre_dtype t, int64_t x);

/* Stores f rounded once to t (DL16: nearest, ties away; ints: toward zero). */
static inline void kx_store_f(uint8_t *p, enum spyre_dtype t, float f)
{
	uint16_t h;
	switch (t) {
	case SPYRE_DTYPE_DL16:
		h = spyre_dl16_from_f32(f);
		memcpy(p, &h, 2);
		return;
	case SPYRE_DTYPE_FLOAT16:
		h = spyre_half_from_f32(f);
		memcpy(p, &h, 2);
		return;
	case SPYRE_DTYPE_BFLOAT16:
		h = spyre_bf16_from_f32(f);
		memcpy(p, &h, 2);
		return;
	case SPYRE_DTYPE_FLOAT32:
		memcpy(p, &f, 4);
		return;
	case SPYRE_DTYPE_BOOL:
		p[0] = f != 0.0f;
		return;
	default:
		kx_store_i(p, t, kx_f2i(f));
	}
}

static inline void kx_store_i(uint8_t *p, enum spyre_dtype t, int64_t x)
{
	int32_t i32;
	switch (t) {
	case SPYRE_DTYPE_INT64:
		memcpy(p, &x, 8);
		return;
	case SPYRE_DTYPE_INT32:
		i32 = (int32_t)(uint32_t)(uint64_t)x; /* wraps, as a narrowing cast does */
		memcpy(p, &i32, 4);
		return;
	case SPYRE_DTYPE_INT8:
		p[0] = (uint8_t)(uint64_t)x;
		return;
	case SPYRE_DTYPE_BOOL:
		p[0] = x != 0;
		return;
	default:
		kx_store_f(p, t, (float)x);
	}
}

#endif
