/* Slow reference conversions for the DL16 and IEEE half tests, written from the definitions in
 * docs/emu.md (DLFloat16) and IEEE 754 (values by ldexp in double, rounding by searching a table of
 * every pattern's value for the two neighbours), independent of the bit tricks in
 * spyre-emu/src/dl16.c. */
#ifndef TESTS_UNIT_SPYRE_EMU_DL16_REF_H
#define TESTS_UNIT_SPYRE_EMU_DL16_REF_H

#include <stdbool.h>
#include <stdint.h>

/* The value of a DL16 pattern by the formula; NAN (with the sign) for NINF. */
double ref_dl16_value(uint16_t h);
/* fp32 -> DL16 from the definition; sat clamps finite overflow to +-MAX. */
uint16_t ref_dl16_from_f32(float f, bool sat);
/* The value of an IEEE binary16 pattern; NAN or +-INFINITY for the specials. */
double ref_half_value(uint16_t h);
/* fp32 -> IEEE half, round to nearest even; NaN -> 0x7E00 with the sign (callers check NaN
 * results by class, not by payload). */
uint16_t ref_half_from_f32(float f);

/* A deterministic pseudo-random generator for sampled tests (xorshift64*). */
static inline uint32_t ref_rand32(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

#endif
