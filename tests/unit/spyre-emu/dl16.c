/* Tests of spyre-emu/dl16: DLFloat16 and IEEE half conversions against the slow references in
 * dl16_ref.c, hand-computed cases, and bulk == scalar. The exhaustive check of all 2^32 fp32
 * inputs is long-dl16 (dl16_long.c, suite long). */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dl16_ref.h"
#include "spyre-emu/dl16.h"

#define RANDOM_SAMPLES 3000000
#define BULK_N         ((1u << 20) + 7u) /* not a multiple of the block size */

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint32_t to_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

/* Both DL16 variants of one fp32 pattern against the reference. */
static void check_dl16_input(uint32_t bits)
{
	float f = from_bits(bits);
	uint16_t got = spyre_dl16_from_f32(f), want = ref_dl16_from_f32(f, false);
	if (got != want)
		cr_assert_fail("dl16_from_f32(0x%08x = %a) = 0x%04x, reference 0x%04x", bits,
			       (double)f, got, want);
	got = spyre_dl16_from_f32_sat(f);
	want = ref_dl16_from_f32(f, true);
	if (got != want)
		cr_assert_fail("dl16_from_f32_sat(0x%08x = %a) = 0x%04x, reference 0x%04x", bits,
			       (double)f, got, want);
}

static void check_half_input(uint32_t bits)
{
	float f = from_bits(bits);
	uint16_t got = spyre_half_from_f32(f), want = ref_half_from_f32(f);
	if (isnan(f)) {
		if ((got & 0x7E00) != 0x7E00 || (got & 0x8000) != (want & 0x8000))
			cr_assert_fail(
			    "half_from_f32(0x%08x, NaN) = 0x%04x, not a quiet NaN of that sign",
			    bits, got);
		return;
	}
	if (got != want)
		cr_assert_fail("half_from_f32(0x%08x = %a) = 0x%04x, reference 0x%04x", bits,
			       (double)f, got, want);
#ifdef __FLT16_MAX__
	_Float16 h = (_Float16)f;
	uint16_t hb;
	memcpy(&hb, &h, sizeof(hb));
	if (got != hb)
		cr_assert_fail("half_from_f32(0x%08x) = 0x%04x, compiler's _Float16 0x%04x", bits,
			       got, hb);
#endif
}

static const uint32_t low_patterns[] = { 0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF,
					 0x2000, 0x2001, 0x3FFF, 0x8000, 0xC000, 0xFFFF };

Test(dl16, to_f32_all_patterns)
{
	for (uint32_t h = 0; h <= 0xFFFF; h++) {
		float f = spyre_dl16_to_f32((uint16_t)h);
		double want = ref_dl16_value((uint16_t)h);
		if ((h & 0x7FFF) == 0x7FFF) {
			cr_assert(isnan(f), "0x%04x should be NaN", h);
			cr_assert_eq(!!signbit(f), !!(h & 0x8000), "NINF 0x%04x sign", h);
			continue;
		}
		if ((double)f != want || !!signbit(f) != !!signbit(want))
			cr_assert_fail("dl16_to_f32(0x%04x) = %a, reference %a", h, (double)f,
				       want);
	}
}

Test(dl16, round_trip_all_patterns)
{
	for (uint32_t h = 0; h <= 0xFFFF; h++) {
		float f = spyre_dl16_to_f32((uint16_t)h);
		cr_assert_eq(spyre_dl16_from_f32(f), h, "round trip of 0x%04x", h);
		cr_assert_eq(spyre_dl16_from_f32_sat(f), h, "saturating round trip of 0x%04x", h);
	}
}

Test(dl16, from_f32_top16_bits)
{
	for (uint32_t hi = 0; hi <= 0xFFFF; hi++)
		for (size_t i = 0; i < sizeof(low_patterns) / sizeof(low_patterns[0]); i++)
			check_dl16_input(hi << 16 | low_patterns[i]);
}

/* Every midpoint between adjacent patterns (and the lowest one, between the formula value
 * 2^-31 of pattern 0 and 0x0001) goes away from zero; one ulp either side goes to the nearer. */
Test(dl16, from_f32_midpoints)
{
	for (uint32_t p = 0; p < 0x7FFF; p++) {
		for (uint32_t sign = 0; sign <= 0x8000; sign += 0x8000) {
			float lo = (float)ldexp(1.0 + (p & 0x1FF) / 512.0, (int)(p >> 9) - 31);
			float hi =
			    (float)ldexp(1.0 + ((p + 1) & 0x1FF) / 512.0, (int)((p + 1) >> 9) - 31);
			float mid = (lo + hi) / 2; /* exact: 11 significant bits */
			cr_assert_eq((double)mid * 2, (double)lo + (double)hi);
			float s = sign ? -1.0f : 1.0f;
			uint16_t up = (uint16_t)(sign | (p + 1));
			uint16_t up_sat = p + 1 == 0x7FFF ? (uint16_t)(sign | 0x7FFE) : up;
			cr_assert_eq(spyre_dl16_from_f32(s * mid), up, "midpoint above 0x%04x", p);
			cr_assert_eq(spyre_dl16_from_f32_sat(s * mid), up_sat);
			cr_assert_eq(spyre_dl16_from_f32(s * nextafterf(mid, INFINITY)), up);
			cr_assert_eq(spyre_dl16_from_f32(s * nextafterf(mid, 0)), sign | p,
				     "below the midpoint above 0x%04x", p);
			check_dl16_input(to_bits(s * mid));
			check_dl16_input(to_bits(s * nextafterf(mid, INFINITY)));
			check_dl16_input(to_bits(s * nextafterf(mid, 0)));
		}
	}
}

Test(dl16, from_f32_random)
{
	uint64_t state = 0x5350595245ULL; /* fixed seed */
	for (int i = 0; i < RANDOM_SAMPLES; i++)
		check_dl16_input(ref_rand32(&state));
}

Test(dl16, documented_constants)
{
	cr_assert_eq(spyre_dl16_to_f32(SPYRE_DL16_MAX), 8573157376.0f);
	cr_assert_eq((double)spyre_dl16_to_f32(SPYRE_DL16_MAX), ldexp(2.0 - ldexp(1, -8), 32));
	float min = spyre_dl16_to_f32(SPYRE_DL16_MIN_POS);
	cr_assert_eq((double)min, ldexp(1.0 + ldexp(1, -9), -31));
	cr_assert(fabs(min - 4.6657e-10) < 1e-14, "smallest positive %g", (double)min);
	/* Unit roundoff 2^-10: the relative error of rounding is at most that, and reached. */
	uint64_t state = 42;
	for (int i = 0; i < 100000; i++) {
		float x = ldexpf(1.0f + (float)(ref_rand32(&state) >> 9) * 0x1p-23f,
				 (int)(ref_rand32(&state) % 60) - 29);
		double r = spyre_dl16_to_f32(spyre_dl16_from_f32(x));
		cr_assert_leq(fabs(r - x) / x, ldexp(1, -10), "roundoff of %a", (double)x);
	}
	cr_assert_eq(spyre_dl16_to_f32(spyre_dl16_from_f32(1.0f + 0x1p-10f)) - 1.0f, 0x1p-9f);
}

Test(dl16, hand_computed)
{
	/* 1.0 = 2^0 * (1 + 0): E = 31, M = 0 -> 31 << 9 = 0x3E00. */
	cr_assert_eq(spyre_dl16_from_f32(1.0f), 0x3E00);
	cr_assert_eq(spyre_dl16_from_f32(-1.0f), 0xBE00);
	cr_assert_eq(spyre_dl16_from_f32(2.0f), 0x4000);
	cr_assert_eq(spyre_dl16_from_f32(0.5f), 0x3C00);
	cr_assert_eq(spyre_dl16_from_f32(3.0f), 0x4100);
	/* 0.1f = 2^-4 * 1.60000002384: E = 27, M = round(307.2) = 307 = 0x133. */
	cr_assert_eq(spyre_dl16_from_f32(0.1f), 0x3733);
	/* Half's max 65504 = 2^15 * (1 + 1023/1024): M = 511.5 ties away, carries to 2^16. */
	cr_assert_eq(spyre_dl16_from_f32(65504.0f), 0x5E00);
	cr_assert_eq(spyre_dl16_to_f32(0x5E00), 65536.0f);
	/* Exponent 63 with fraction < 511 is finite. */
	cr_assert_eq(spyre_dl16_from_f32(0x1p32f * (1.0f + 509.0f / 512)), 0x7FFD);
	cr_assert_eq(spyre_dl16_from_f32(8573157376.0f), 0x7FFE);
	cr_assert_eq(spyre_dl16_from_f32(-8573157376.0f), 0xFFFE);
	/* The midpoint between MAX and the next step rounds onto 0x7FFF: out of range. */
	float edge = 0x1p32f * (1.0f + 510.5f / 512);
	cr_assert_eq(edge, 8577351680.0f);
	cr_assert_eq(spyre_dl16_from_f32(edge), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32(-edge), 0xFFFF);
	cr_assert_eq(spyre_dl16_from_f32(nextafterf(edge, 0)), 0x7FFE);
	cr_assert_eq(spyre_dl16_from_f32(0x1p33f), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32(FLT_MAX), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32(INFINITY), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32(-INFINITY), 0xFFFF);
	cr_assert_eq(spyre_dl16_from_f32(NAN), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32(-NAN), 0xFFFF);
	/* Zeros and the bottom: 2^-31 is the zero pattern; its midpoint with 0x0001 ties away. */
	cr_assert_eq(spyre_dl16_from_f32(0.0f), 0x0000);
	cr_assert_eq(spyre_dl16_from_f32(-0.0f), 0x8000);
	cr_assert_eq(spyre_dl16_from_f32(0x1p-31f), 0x0000);
	cr_assert_eq(spyre_dl16_from_f32(-0x1p-31f), 0x8000);
	cr_assert_eq(spyre_dl16_from_f32(0x1p-31f * (1.0f + 0x1p-10f)), 0x0001);
	cr_assert_eq(spyre_dl16_from_f32(-0x1p-31f * (1.0f + 0x1p-10f)), 0x8001);
	cr_assert_eq(spyre_dl16_from_f32(nextafterf(0x1p-31f, 0)), 0x0000);
	cr_assert_eq(spyre_dl16_from_f32(FLT_TRUE_MIN), 0x0000);
	cr_assert_eq(spyre_dl16_from_f32(-FLT_MIN), 0x8000);
	cr_assert(isnan(spyre_dl16_to_f32(0x7FFF)) && !signbit(spyre_dl16_to_f32(0x7FFF)));
	cr_assert(isnan(spyre_dl16_to_f32(0xFFFF)) && signbit(spyre_dl16_to_f32(0xFFFF)));
	cr_assert(signbit(spyre_dl16_to_f32(0x8000)) && spyre_dl16_to_f32(0x8000) == 0);
}

Test(dl16, ties_away_from_zero)
{
	/* 1 + 5 * 2^-10 lies halfway between M = 2 and M = 3: away gives 3 (even would give 2). */
	cr_assert_eq(spyre_dl16_from_f32(1.0f + 5 * 0x1p-10f), 0x3E03);
	cr_assert_eq(spyre_dl16_from_f32(-(1.0f + 5 * 0x1p-10f)), 0xBE03);
	cr_assert_eq(spyre_dl16_from_f32(1.0f + 0x1p-10f), 0x3E01);
	cr_assert_eq(spyre_dl16_from_f32(-(1.0f + 0x1p-10f)), 0xBE01);
	/* Halfway between 2 - 2^-9 (M = 511) and 2: carries into the exponent. */
	cr_assert_eq(spyre_dl16_from_f32(2.0f - 0x1p-10f), 0x4000);
	cr_assert_eq(spyre_dl16_from_f32(-(2.0f - 0x1p-10f)), 0xC000);
	cr_assert_eq(spyre_dl16_from_f32(nextafterf(2.0f - 0x1p-10f, 0)), 0x3FFF);
}

Test(dl16, saturating)
{
	float edge = 0x1p32f * (1.0f + 510.5f / 512);
	cr_assert_eq(spyre_dl16_from_f32_sat(edge), 0x7FFE);
	cr_assert_eq(spyre_dl16_from_f32_sat(-edge), 0xFFFE);
	cr_assert_eq(spyre_dl16_from_f32_sat(FLT_MAX), 0x7FFE);
	cr_assert_eq(spyre_dl16_from_f32_sat(-FLT_MAX), 0xFFFE);
	cr_assert_eq(spyre_dl16_from_f32_sat(INFINITY), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32_sat(-INFINITY), 0xFFFF);
	cr_assert_eq(spyre_dl16_from_f32_sat(NAN), 0x7FFF);
	cr_assert_eq(spyre_dl16_from_f32_sat(-NAN), 0xFFFF);
	cr_assert_eq(spyre_dl16_from_f32_sat(1.0f), 0x3E00);
	cr_assert_eq(spyre_dl16_from_f32_sat(-0x1p-40f), 0x8000);
}

Test(half, to_f32_all_patterns)
{
	for (uint32_t h = 0; h <= 0xFFFF; h++) {
		float f = spyre_half_to_f32((uint16_t)h);
		double want = ref_half_value((uint16_t)h);
		if (isnan(want)) {
			uint32_t b = to_bits(f);
			cr_assert(isnan(f), "0x%04x should be NaN", h);
			cr_assert_eq(b >> 31, h >> 15, "NaN 0x%04x sign", h);
			cr_assert(b & 0x400000, "NaN 0x%04x not quiet", h);
			cr_assert_eq((b >> 13) & 0x1FF, h & 0x1FF, "NaN 0x%04x payload", h);
			continue;
		}
		if ((double)f != want || !!signbit(f) != !!signbit(want))
			cr_assert_fail("half_to_f32(0x%04x) = %a, reference %a", h, (double)f,
				       want);
		if (!isnan(f))
			cr_assert_eq(spyre_half_from_f32(f), h, "half round trip of 0x%04x", h);
	}
}

Test(half, from_f32_cases)
{
	cr_assert_eq(spyre_half_from_f32(1.0f), 0x3C00);
	cr_assert_eq(spyre_half_from_f32(-2.0f), 0xC000);
	cr_assert_eq(spyre_half_from_f32(0.1f), 0x2E66); /* 1.6 * 1024 = 1638.4 -> 0x266 */
	cr_assert_eq(spyre_half_from_f32(65504.0f), 0x7BFF);
	cr_assert_eq(spyre_half_from_f32(nextafterf(65520.0f, 0)), 0x7BFF);
	cr_assert_eq(spyre_half_from_f32(65520.0f), 0x7C00); /* tie to even: overflow */
	cr_assert_eq(spyre_half_from_f32(-1e6f), 0xFC00);
	cr_assert_eq(spyre_half_from_f32(FLT_MAX), 0x7C00);
	cr_assert_eq(spyre_half_from_f32(INFINITY), 0x7C00);
	cr_assert_eq(spyre_half_from_f32(-INFINITY), 0xFC00);
	cr_assert_eq(spyre_half_from_f32(NAN) & 0x7E00, 0x7E00);
	cr_assert_eq(spyre_half_from_f32(-NAN) & 0xFE00, 0xFE00);
	/* Ties to even in the normal range. */
	cr_assert_eq(spyre_half_from_f32(1.0f + 0x1p-11f), 0x3C00);
	cr_assert_eq(spyre_half_from_f32(1.0f + 3 * 0x1p-11f), 0x3C02);
	cr_assert_eq(spyre_half_from_f32(nextafterf(1.0f + 0x1p-11f, 2)), 0x3C01);
	cr_assert_eq(spyre_half_from_f32(2.0f - 0x1p-11f), 0x4000);
	/* Subnormals: 2^-24 is the smallest; 2^-25 ties to 0, 3 * 2^-25 ties to 2. */
	cr_assert_eq(spyre_half_from_f32(0x1p-24f), 0x0001);
	cr_assert_eq(spyre_half_from_f32(0x1p-25f), 0x0000);
	cr_assert_eq(spyre_half_from_f32(nextafterf(0x1p-25f, 1)), 0x0001);
	cr_assert_eq(spyre_half_from_f32(3 * 0x1p-25f), 0x0002);
	cr_assert_eq(spyre_half_from_f32(-5 * 0x1p-25f), 0x8002);
	cr_assert_eq(spyre_half_from_f32(0x1p-14f - 0x1p-24f), 0x03FF);
	cr_assert_eq(spyre_half_from_f32(0x1p-14f - 0x1p-25f), 0x0400); /* tie: up to even */
	cr_assert_eq(spyre_half_from_f32(0x1p-14f), 0x0400);
	cr_assert_eq(spyre_half_from_f32(FLT_TRUE_MIN), 0x0000);
	cr_assert_eq(spyre_half_from_f32(-0.0f), 0x8000);
	cr_assert_eq(spyre_half_to_f32(0x0001), 0x1p-24f);
	cr_assert_eq(spyre_half_to_f32(0x03FF), 0x1p-14f - 0x1p-24f);
}

Test(half, from_f32_sampled)
{
	for (uint32_t hi = 0; hi <= 0xFFFF; hi++)
		for (size_t i = 0; i < sizeof(low_patterns) / sizeof(low_patterns[0]); i++)
			check_half_input(hi << 16 | low_patterns[i]);
	uint64_t state = 0x48414C46ULL;
	for (int i = 0; i < RANDOM_SAMPLES / 3; i++)
		check_half_input(ref_rand32(&state));
}

/* Every normal half is in DL16 range; DL16 has one fraction bit fewer, so a half with an even
 * fraction survives half -> DL16 -> half and an odd one is a DL16 tie that goes away from zero,
 * to the next half up in magnitude (for 0x7BFF that is 2^16, which is Inf as a half). */
Test(half, dl16_round_trip)
{
	for (uint32_t h = 0; h <= 0xFFFF; h++) {
		uint32_t e = (h >> 10) & 0x1F;
		if (e == 0 || e == 31)
			continue;
		uint16_t d = spyre_dl16_from_f32(spyre_half_to_f32((uint16_t)h));
		uint16_t back = spyre_half_from_f32(spyre_dl16_to_f32(d));
		uint32_t want = (h & 1) ? h + 1 : h;
		cr_assert_eq(back, want, "half 0x%04x -> dl16 0x%04x -> half 0x%04x", h, d, back);
		uint16_t d2, back2, h16 = (uint16_t)h;
		spyre_dl16_from_half_n(&d2, &h16, 1);
		spyre_dl16_to_half_n(&back2, &d2, 1);
		cr_assert_eq(d2, d);
		cr_assert_eq(back2, back);
	}
	/* A DL16 value in the half normal range survives DL16 -> half -> DL16. */
	for (uint32_t d = 0; d <= 0xFFFF; d++) {
		float f = spyre_dl16_to_f32((uint16_t)d);
		if (!(fabsf(f) >= 0x1p-14f && fabsf(f) <= 65504.0f))
			continue;
		float back = spyre_half_to_f32(spyre_half_from_f32(f));
		cr_assert_eq(spyre_dl16_from_f32(back), d, "dl16 0x%04x via half", d);
	}
}

static uint32_t *random_bits(size_t n, uint64_t seed)
{
	uint32_t *v = malloc(n * sizeof(*v));
	cr_assert_not_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = ref_rand32(&seed);
	/* Specials near the start, inside the vectorised blocks. */
	static const uint32_t special[] = { 0x7F800000, 0xFF800000, 0x7FC00001, 0xFFFFFFFF,
					    0x00000000, 0x80000000, 0x4FFF7FFF, 0x30000000,
					    0x2FFFFFFF, 0x477FF000, 0x38800000, 0x387FFFFF };
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		v[i * 3] = special[i];
	return v;
}

Test(bulk, equals_scalar)
{
	size_t n = BULK_N;
	uint32_t *bits = random_bits(n, 7);
	uint16_t *h = malloc(n * sizeof(*h));
	uint16_t *h2 = malloc(n * sizeof(*h2));
	float *f = malloc(n * sizeof(*f));
	cr_assert(h && h2 && f);
	for (size_t i = 0; i < n; i++)
		h[i] = (uint16_t)bits[i];

	spyre_dl16_from_f32_n(h2, (const float *)bits, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(h2[i], spyre_dl16_from_f32(from_bits(bits[i])), "dl16_from_f32_n[%zu]",
			     i);
	spyre_half_from_f32_n(h2, (const float *)bits, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(h2[i], spyre_half_from_f32(from_bits(bits[i])), "half_from_f32_n[%zu]",
			     i);
	spyre_dl16_to_f32_n(f, h, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(to_bits(f[i]), to_bits(spyre_dl16_to_f32(h[i])), "dl16_to_f32_n[%zu]",
			     i);
	spyre_half_to_f32_n(f, h, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(to_bits(f[i]), to_bits(spyre_half_to_f32(h[i])), "half_to_f32_n[%zu]",
			     i);
	spyre_dl16_from_half_n(h2, h, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(h2[i], spyre_dl16_from_f32(spyre_half_to_f32(h[i])),
			     "dl16_from_half_n[%zu]", i);
	spyre_dl16_to_half_n(h2, h, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(h2[i], spyre_half_from_f32(spyre_dl16_to_f32(h[i])),
			     "dl16_to_half_n[%zu]", i);
	free(bits);
	free(h);
	free(h2);
	free(f);
}
