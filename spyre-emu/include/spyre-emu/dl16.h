/* DLFloat16, Spyre's 16-bit float, exactly as docs/emu.md (DLFloat16) states it: 1 sign bit, 6
 * exponent bits (bias 31), 9 fraction bits, no subnormals, one NaN/infinity pattern per sign
 * ("NINF": 0x7FFF and 0xFFFF), round to nearest with ties away from zero, flush to zero below
 * the smallest normal. Also IEEE binary16 and bfloat16 <-> fp32 (host tensors) and bulk forms. */
#ifndef SPYRE_EMU_DL16_H
#define SPYRE_EMU_DL16_H

#include <stddef.h>
#include <stdint.h>

#define SPYRE_DL16_NINF    0x7FFFu /* +NINF; 0xFFFF is -NINF */
#define SPYRE_DL16_MAX     0x7FFEu /* (2 - 2^-8) * 2^32 */
#define SPYRE_DL16_MIN_POS 0x0001u /* 2^-31 * (1 + 2^-9) */

/* fp32 -> DL16: round to nearest, ties away from zero; out of range, Inf and NaN -> NINF with
 * the sign kept; magnitudes below the smallest normal (fp32 subnormals too) -> signed zero. */
uint16_t spyre_dl16_from_f32(float f);
/* The same, but finite values out of range clamp to +-MAX (Inf and NaN still give NINF). */
uint16_t spyre_dl16_from_f32_sat(float f);
/* DL16 -> fp32, exact; NINF becomes a quiet NaN with the sign kept. */
float spyre_dl16_to_f32(uint16_t h);

/* IEEE binary16 <-> fp32: to_f32 exact (subnormals, Inf, NaN kept); from_f32 round to nearest
 * even, overflow to Inf, NaN kept quiet. */
float spyre_half_to_f32(uint16_t h);
uint16_t spyre_half_from_f32(float f);

/* Bulk conversions of n elements (vectorisable loops; out and in must not overlap). */
void spyre_dl16_from_f32_n(uint16_t *out, const float *in, size_t n);
void spyre_dl16_to_f32_n(float *out, const uint16_t *in, size_t n);
void spyre_half_to_f32_n(float *out, const uint16_t *in, size_t n);
void spyre_half_from_f32_n(uint16_t *out, const float *in, size_t n);
/* Host float16 -> device DL16 and back, through fp32 (what a host<->device copy does). */
void spyre_dl16_from_half_n(uint16_t *out, const uint16_t *in, size_t n);
void spyre_dl16_to_half_n(uint16_t *out, const uint16_t *in, size_t n);
/* bfloat16 (the top 16 bits of an fp32) <-> fp32: to_f32 exact; from_f32 round to nearest
 * even, overflow to Inf, NaN kept quiet with its sign. Host bfloat16 -> device DL16 is the
 * fp32 rule on the exact widening; DL16 -> bfloat16 rounds to nearest even once. */
float spyre_bf16_to_f32(uint16_t h);
uint16_t spyre_bf16_from_f32(float f);
void spyre_bf16_to_f32_n(float *out, const uint16_t *in, size_t n);
void spyre_bf16_from_f32_n(uint16_t *out, const float *in, size_t n);
void spyre_dl16_from_bf16_n(uint16_t *out, const uint16_t *in, size_t n);
void spyre_dl16_to_bf16_n(uint16_t *out, const uint16_t *in, size_t n);

#endif
