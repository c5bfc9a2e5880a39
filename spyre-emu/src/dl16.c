/* DLFloat16 and IEEE binary16 <-> fp32 conversions (see dl16.h and SPYRE.md section 3).
 *
 * Everything works on the fp32 bit pattern with 32-bit integer arithmetic and selects, no
 * branches, so that the bulk loops vectorise. The bulk functions run the scalar functions (all
 * static inline here) over fixed-size blocks: a loop with a constant trip count is vectorised
 * even by gcc's cheap -O2 cost model, and the bulk results equal the scalar ones by
 * construction. */
#include "spyre-emu/dl16.h"

#include <string.h>

/* DL16 exponent e (bias 31) is fp32 exponent e + 96 (bias 127). In units of the 9-bit DL16
 * fraction, i.e. (fp32 bits >> 14), that offset is 96 << 9. */
#define DL16_EXP_OFFSET (96u << 9)
#define F32_INF_BITS    0x7F800000u
#define F32_QNAN_BITS   0x7FC00000u
#define F32_ABS_MASK    0x7FFFFFFFu
#define HALF_INF        0x7C00u
#define BLOCK           16

static inline uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* The rounded magnitude in DL16 pattern units before range checks: adding 2^13 to the 23-bit
 * fraction rounds to nearest, ties away from zero, and a carry lands in the exponent. The
 * result is (fp32 exponent << 9 | 9-bit fraction); Inf and NaN give 0x1FE00 or more. */
static inline uint32_t dl16_rounded(uint32_t abs)
{
	return (abs + 0x2000u) >> 14;
}

/* Rounded magnitude -> 15-bit DL16 magnitude: below exponent 0 is zero (that includes the
 * pattern E=0, M=0, which is zero anyway); the NINF pattern 0x7FFF and anything above it is
 * out of range, so it stays NINF. */
static inline uint32_t dl16_magnitude(uint32_t q)
{
	uint32_t p = q - DL16_EXP_OFFSET;
	p = q < DL16_EXP_OFFSET ? 0 : p;
	return p > SPYRE_DL16_NINF ? SPYRE_DL16_NINF : p;
}

static inline uint16_t dl16_from_bits(uint32_t u)
{
	uint32_t m = dl16_magnitude(dl16_rounded(u & F32_ABS_MASK));
	return (uint16_t)(((u >> 16) & 0x8000u) | m);
}

static inline uint16_t dl16_from_bits_sat(uint32_t u)
{
	uint32_t abs = u & F32_ABS_MASK;
	uint32_t m = dl16_magnitude(dl16_rounded(abs));
	m = m == SPYRE_DL16_NINF ? SPYRE_DL16_MAX : m;
	m = abs >= F32_INF_BITS ? SPYRE_DL16_NINF : m;
	return (uint16_t)(((u >> 16) & 0x8000u) | m);
}

static inline uint32_t dl16_to_bits(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t mag = h & 0x7FFFu;
	uint32_t bits = (mag + DL16_EXP_OFFSET) << 14;
	bits = mag == 0 ? 0 : bits;
	bits = mag == SPYRE_DL16_NINF ? F32_QNAN_BITS : bits;
	return sign | bits;
}

uint16_t spyre_dl16_from_f32(float f)
{
	return dl16_from_bits(f32_bits(f));
}

uint16_t spyre_dl16_from_f32_sat(float f)
{
	return dl16_from_bits_sat(f32_bits(f));
}

float spyre_dl16_to_f32(uint16_t h)
{
	return f32_from_bits(dl16_to_bits(h));
}

/* IEEE half -> fp32 bits. Normals and Inf/NaN are a shift and a rebias; a subnormal m * 2^-24
 * is converted exactly through an integer-to-float conversion. NaN comes out quiet. */
static inline uint32_t half_to_bits(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = h & HALF_INF;
	uint32_t mant = h & 0x3FFu;
	uint32_t bits = ((uint32_t)(h & 0x7FFFu) << 13) + (112u << 23);
	uint32_t special = F32_INF_BITS | (mant << 13) | (mant ? 0x400000u : 0);
	uint32_t sub = f32_bits((float)(int32_t)mant * 0x1p-24f);
	bits = exp == HALF_INF ? special : bits;
	bits = exp == 0 ? sub : bits;
	return sign | bits;
}

/* Shift right by s (1..31), rounding to nearest, ties to even. */
static inline uint32_t shift_rne(uint32_t v, uint32_t s)
{
	uint32_t q = v >> s;
	uint32_t rem = v & ((1u << s) - 1);
	uint32_t half = 1u << (s - 1);
	return q + (rem > half || (rem == half && (q & 1)));
}

/* fp32 bits -> IEEE half, round to nearest even. Magnitudes from 2^-14 up round the 23-bit
 * fraction to 10 bits (a carry lands in the exponent and may reach Inf); smaller ones become
 * subnormals (or zero) by shifting the full significand. */
static inline uint16_t half_from_bits(uint32_t u)
{
	uint32_t sign = (u >> 16) & 0x8000u;
	uint32_t abs = u & F32_ABS_MASK;
	uint32_t e = abs >> 23;
	uint32_t normal = shift_rne(abs - (112u << 23), 13);
	normal = normal > HALF_INF ? HALF_INF : normal;
	uint32_t s = 126 - e; /* wraps for e > 126, but then the normal result is used */
	s = s > 25 ? 25 : s;
	uint32_t sub = shift_rne((abs & 0x7FFFFFu) | 0x800000u, s);
	uint32_t nan = HALF_INF | 0x200u | ((abs >> 13) & 0x3FFu);
	uint32_t r = e < 113 ? sub : normal;
	r = abs > F32_INF_BITS ? nan : r;
	return (uint16_t)(sign | r);
}

float spyre_half_to_f32(uint16_t h)
{
	return f32_from_bits(half_to_bits(h));
}

uint16_t spyre_half_from_f32(float f)
{
	return half_from_bits(f32_bits(f));
}

void spyre_dl16_from_f32_n(uint16_t *out, const float *in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = dl16_from_bits(f32_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = dl16_from_bits(f32_bits(in[i]));
}

void spyre_dl16_to_f32_n(float *out, const uint16_t *in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = f32_from_bits(dl16_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = f32_from_bits(dl16_to_bits(in[i]));
}

void spyre_half_to_f32_n(float *out, const uint16_t *in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = f32_from_bits(half_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = f32_from_bits(half_to_bits(in[i]));
}

void spyre_half_from_f32_n(uint16_t *out, const float *in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = half_from_bits(f32_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = half_from_bits(f32_bits(in[i]));
}

void spyre_dl16_from_half_n(uint16_t *out, const uint16_t *in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = dl16_from_bits(half_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = dl16_from_bits(half_to_bits(in[i]));
}

void spyre_dl16_to_half_n(uint16_t *out, const uint16_t *in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = half_from_bits(dl16_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = half_from_bits(dl16_to_bits(in[i]));
}
