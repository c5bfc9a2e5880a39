/* DLFloat16 and IEEE binary16 <-> fp32 conversions (see dl16.h and docs/emu.md, DLFloat16).
 *
 * Everything works on the fp32 bit pattern with 32-bit integer arithmetic and selects, no
 * branches, so that the bulk loops vectorise. The bulk functions run the scalar functions (all
 * static inline here) over fixed-size blocks: a loop with a constant trip count is vectorised
 * even by gcc's cheap -O2 cost model, and the bulk results equal the scalar ones by
 * construction. The pointers are restrict (the header forbids overlap): without it, and with
 * the project's -fno-strict-aliasing, gcc cannot tell out from in and the loops ran ~10x
 * slower. */
#include "spyre-emu/dl16.h"

#include <float.h>
#include <string.h>

/* half_from_bits rounds subnormals with one fp32 addition; excess precision (x87) would round
 * twice. */
#if FLT_EVAL_METHOD != 0
#error "dl16.c needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0)"
#endif

/* DL16 exponent e (bias 31) is fp32 exponent e + 96 (bias 127). In units of the 9-bit DL16
 * fraction, i.e. (fp32 bits >> 14), that offset is 96 << 9. */
#define DL16_EXP_OFFSET (96u << 9)
#define F32_INF_BITS    0x7F800000u
#define F32_QNAN_BITS   0x7FC00000u
#define F32_ABS_MASK    0x7FFFFFFFu
#define HALF_INF        0x7C00u
#define BLOCK           16
#define CHUNK           512 /* fp32 elements on the stack in the two-pass conversions */

/* The bulk loops also get an AVX2 clone, chosen at load time when the CPU has it: on the
 * machines measured it converts several times faster than the baseline SSE2 build, which has
 * no unsigned 32-bit min or 32->16 pack. Same integer and IEEE float operations, same results. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BULK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define BULK_CLONES
#endif

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

/* cond ? a : b without a branch. The half conversions select a floating-point result this
 * way: with ?:, gcc sinks the float operation into a branch and, as float operations may trap,
 * will not vectorise the loop. */
static inline uint32_t blend(int cond, uint32_t a, uint32_t b)
{
	uint32_t mask = 0u - (uint32_t)(cond != 0);
	return (a & mask) | (b & ~mask);
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
	bits = blend(mag == 0, 0, bits);
	bits = blend(mag == SPYRE_DL16_NINF, F32_QNAN_BITS, bits);
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
	bits = blend(exp == HALF_INF, special, bits);
	return sign | blend(exp == 0, sub, bits);
}

/* fp32 bits -> IEEE half, round to nearest even. From 2^-14 up, rounding the 23-bit fraction
 * to 10 bits (a carry lands in the exponent and may reach Inf). Below, the half is a subnormal
 * k * 2^-24: adding 0.5f, whose ulp is 2^-24, makes the FPU round |f| to that grid (the default
 * rounding mode is to nearest even) and leaves k in the low bits; k = 1024 is 2^-14, the
 * smallest normal, which has the pattern 0x400 too. */
static inline uint16_t half_from_bits(uint32_t u)
{
	uint32_t sign = (u >> 16) & 0x8000u;
	uint32_t abs = u & F32_ABS_MASK;
	uint32_t t = abs - (112u << 23);
	uint32_t normal = (t + 0xFFFu + ((t >> 13) & 1)) >> 13;
	normal = normal > HALF_INF ? HALF_INF : normal;
	uint32_t sub = f32_bits(f32_from_bits(abs) + 0.5f) - 0x3F000000u;
	uint32_t nan = HALF_INF | 0x200u | ((abs >> 13) & 0x3FFu);
	uint32_t r = blend(abs < (113u << 23), sub, normal);
	r = blend(abs > F32_INF_BITS, nan, r);
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

BULK_CLONES void spyre_dl16_from_f32_n(uint16_t *restrict out, const float *restrict in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = dl16_from_bits(f32_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = dl16_from_bits(f32_bits(in[i]));
}

BULK_CLONES void spyre_dl16_to_f32_n(float *restrict out, const uint16_t *restrict in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = f32_from_bits(dl16_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = f32_from_bits(dl16_to_bits(in[i]));
}

BULK_CLONES void spyre_half_to_f32_n(float *restrict out, const uint16_t *restrict in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = f32_from_bits(half_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = f32_from_bits(half_to_bits(in[i]));
}

BULK_CLONES void spyre_half_from_f32_n(uint16_t *restrict out, const float *restrict in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = half_from_bits(f32_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = half_from_bits(f32_bits(in[i]));
}

/* bfloat16 is the top half of an fp32: widening is exact; narrowing rounds to nearest, ties to
 * even, on the 16 dropped bits (a carry into the exponent gives the next binade or Inf), NaN
 * kept quiet with its sign. */
static inline uint32_t bf16_to_bits(uint16_t h)
{
	return (uint32_t)h << 16;
}

static inline uint16_t bf16_from_bits(uint32_t u)
{
	uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
	uint32_t nan = (u >> 16) | 0x0040u;
	return (uint16_t)blend((u & F32_ABS_MASK) > F32_INF_BITS, nan, rounded);
}

float spyre_bf16_to_f32(uint16_t h)
{
	return f32_from_bits(bf16_to_bits(h));
}

uint16_t spyre_bf16_from_f32(float f)
{
	return bf16_from_bits(f32_bits(f));
}

BULK_CLONES void spyre_bf16_to_f32_n(float *restrict out, const uint16_t *restrict in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = f32_from_bits(bf16_to_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = f32_from_bits(bf16_to_bits(in[i]));
}

BULK_CLONES void spyre_bf16_from_f32_n(uint16_t *restrict out, const float *restrict in, size_t n)
{
	size_t i = 0;
	for (; i + BLOCK <= n; i += BLOCK)
		for (size_t j = 0; j < BLOCK; j++)
			out[i + j] = bf16_from_bits(f32_bits(in[i + j]));
	for (; i < n; i++)
		out[i] = bf16_from_bits(f32_bits(in[i]));
}

/* The host float16 <-> DL16 copies go through fp32 a chunk at a time: two vectorised passes
 * over a small stack buffer (gcc does not vectorise the fused 16-bit -> 16-bit loop). */
void spyre_dl16_from_half_n(uint16_t *restrict out, const uint16_t *restrict in, size_t n)
{
	float tmp[CHUNK];
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;
		spyre_half_to_f32_n(tmp, in + i, k);
		spyre_dl16_from_f32_n(out + i, tmp, k);
	}
}

void spyre_dl16_to_half_n(uint16_t *restrict out, const uint16_t *restrict in, size_t n)
{
	float tmp[CHUNK];
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;
		spyre_dl16_to_f32_n(tmp, in + i, k);
		spyre_half_from_f32_n(out + i, tmp, k);
	}
}

/* bfloat16 widens to fp32 exactly, so bfloat16 -> DL16 is fp32 -> DL16 (one rounding, the
 * fp32 rule); DL16 -> bfloat16 is exact to fp32, then one round to nearest even. */
void spyre_dl16_from_bf16_n(uint16_t *restrict out, const uint16_t *restrict in, size_t n)
{
	float tmp[CHUNK];
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;
		spyre_bf16_to_f32_n(tmp, in + i, k);
		spyre_dl16_from_f32_n(out + i, tmp, k);
	}
}

void spyre_dl16_to_bf16_n(uint16_t *restrict out, const uint16_t *restrict in, size_t n)
{
	float tmp[CHUNK];
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;
		spyre_dl16_to_f32_n(tmp, in + i, k);
		spyre_bf16_from_f32_n(out + i, tmp, k);
	}
}
