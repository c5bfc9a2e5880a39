/* Reading one element of any device or host format from memory, shared by the vector kernels
 * (kernels_impl.h) and host tensors (ops.c) so that both read every format the same way.
 * Private to spyre-emu. Loads go through memcpy: no address has to be aligned. */
#ifndef SPYRE_EMU_ELEM_H
#define SPYRE_EMU_ELEM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "spyre-emu/dl16.h"
#include "spyre-emu/dtype.h"

static inline int kx_is_int(enum spyre_dtype t)
{
	return t == SPYRE_DTYPE_INT64 || t == SPYRE_DTYPE_INT32 || t == SPYRE_DTYPE_INT8 ||
	       t == SPYRE_DTYPE_BOOL;
}

static inline float kx_load_f(const uint8_t *p, enum spyre_dtype t)
{
	uint16_t h;
	float f;
	int32_t i32;
	int64_t i64;
	switch (t) {
	case SPYRE_DTYPE_DL16:
		memcpy(&h, p, 2);
		return spyre_dl16_to_f32(h);
	case SPYRE_DTYPE_FLOAT16:
		memcpy(&h, p, 2);
		return spyre_half_to_f32(h);
	case SPYRE_DTYPE_BFLOAT16:
		memcpy(&h, p, 2);
		return spyre_bf16_to_f32(h);
	case SPYRE_DTYPE_FLOAT32:
		memcpy(&f, p, 4);
		return f;
	case SPYRE_DTYPE_INT32:
		memcpy(&i32, p, 4);
		return (float)i32;
	case SPYRE_DTYPE_INT64:
		memcpy(&i64, p, 8);
		return (float)i64;
	case SPYRE_DTYPE_INT8:
		return (float)(int8_t)p[0];
	case SPYRE_DTYPE_BOOL:
		return p[0] ? 1.0f : 0.0f;
	default:
		return NAN;
	}
}

/* fp32 -> int64 as a cast does (toward zero), saturating, NaN -> 0. */
static inline int64_t kx_f2i(float f)
{
	if (isnan(f))
		return 0;
	if (f >= 9.2233720368547758e18f)
		return INT64_MAX;
	if (f <= -9.2233720368547758e18f)
		return INT64_MIN;
	return (int64_t)f;
}

static inline int64_t kx_load_i(const uint8_t *p, enum spyre_dtype t)
{
	int32_t i32;
	int64_t i64;
	switch (t) {
	case SPYRE_DTYPE_INT64:
		memcpy(&i64, p, 8);
		return i64;
	case SPYRE_DTYPE_INT32:
		memcpy(&i32, p, 4);
		return i32;
	case SPYRE_DTYPE_INT8:
		return (int8_t)p[0];
	case SPYRE_DTYPE_BOOL:
		return p[0] != 0;
	default:
		return kx_f2i(kx_load_f(p, t));
	}
}

#endif
