/* Tests of bfloat16 as a host dtype: every one of the 65,536 bfloat16 patterns through the
 * conversions (bf16 -> fp32, bf16 -> DL16, and every DL16 pattern -> bf16) against a slow
 * reference written here from the format's definition (1 sign, 8 exponent bits with bias 127,
 * 7 fraction bits, subnormals; values by ldexp in double, rounding by searching a table of
 * every pattern's value), and every op of the table in bfloat16 on its default samples,
 * stick-aligned and not, against the float64 reference. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "dl16_ref.h"
#include "spyre-emu/dl16.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/run.h"

#define BF16_PATTERNS 0x10000
#define BF16_GRID     0x7F81 /* positive patterns 0x0000..0x7F80 (0x7F80 taken as 2^128) */

static double bf16_grid[BF16_GRID];

/* (-1)^S * 2^(E-127) * (1 + M/128), or 2^-126 * M/128 when E = 0; E = 255 is Inf or NaN. */
static double bf16_formula(uint16_t h)
{
	int e = (h >> 7) & 0xFF;
	int m = h & 0x7F;
	double v = e == 0 ? ldexp(m / 128.0, -126) : ldexp(1.0 + m / 128.0, e - 127);
	return (h & 0x8000) ? -v : v;
}

static void grid_init(void)
{
	for (int p = 0; p < BF16_GRID; p++)
		bf16_grid[p] = bf16_formula((uint16_t)p); /* 0x7F80 gives 2^128 by the formula */
}

static bool bf16_is_nan(uint16_t h)
{
	return ((h >> 7) & 0xFF) == 0xFF && (h & 0x7F) != 0;
}

/* A double -> bfloat16 by the definition: the nearest grid value, ties to the even pattern;
 * past the largest finite value the neighbour above is Inf, taken as 2^128. */
static uint16_t ref_bf16_from_double(double v)
{
	uint16_t sign = signbit(v) ? 0x8000 : 0;
	if (isnan(v))
		return sign | 0x7FC0;
	double a = fabs(v);
	if (a >= bf16_grid[BF16_GRID - 1])
		return sign | 0x7F80;
	int lo = 0, hi = BF16_GRID - 1;
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		if (bf16_grid[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	double dlo = a - bf16_grid[lo], dhi = bf16_grid[hi] - a;
	int p = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
	return sign | (uint16_t)p;
}

Test(bf16, every_pattern_widens_exactly)
{
	grid_init();
	for (uint32_t p = 0; p < BF16_PATTERNS; p++) {
		uint16_t h = (uint16_t)p;
		float f = spyre_bf16_to_f32(h);
		if (bf16_is_nan(h)) {
			cr_assert(isnan(f), "0x%04x is NaN", p);
			cr_assert_eq(signbit(f) != 0, (p & 0x8000) != 0);
			continue;
		}
		double want = ((p & 0x7FFF) == 0x7F80) ? ((p & 0x8000) ? -INFINITY : INFINITY)
						       : bf16_formula(h);
		cr_assert(f == want, "0x%04x: %a, want %a", p, (double)f, want);
		cr_assert_eq(signbit(f) != 0, (p & 0x8000) != 0, "0x%04x: sign", p);
		cr_assert_eq(spyre_bf16_from_f32(f), h, "0x%04x does not round-trip", p);
	}
}

/* Host bfloat16 -> device DL16 is the fp32 rule on the exact value: checked against the DL16
 * reference of dl16_ref.c for every pattern, through the bulk copy a host->device move uses. */
Test(bf16, every_pattern_to_dl16)
{
	grid_init();
	uint16_t *in = malloc(BF16_PATTERNS * sizeof(*in));
	uint16_t *out = malloc(BF16_PATTERNS * sizeof(*out));
	cr_assert(in && out);
	for (uint32_t p = 0; p < BF16_PATTERNS; p++)
		in[p] = (uint16_t)p;
	spyre_dl16_from_bf16_n(out, in, BF16_PATTERNS);
	for (uint32_t p = 0; p < BF16_PATTERNS; p++) {
		uint16_t h = (uint16_t)p;
		float v = bf16_is_nan(h)           ? ((p & 0x8000) ? -NAN : NAN)
			  : (p & 0x7FFF) == 0x7F80 ? ((p & 0x8000) ? -INFINITY : INFINITY)
						   : (float)bf16_formula(h);
		uint16_t want = ref_dl16_from_f32(v, false);
		cr_assert_eq(out[p], want, "bf16 0x%04x -> DL16 0x%04x, want 0x%04x", p, out[p],
			     want);
	}
	free(in);
	free(out);
}

/* Device DL16 -> host bfloat16: every DL16 pattern, one round to nearest even. */
Test(bf16, every_dl16_pattern_to_bf16)
{
	grid_init();
	uint16_t *in = malloc(BF16_PATTERNS * sizeof(*in));
	uint16_t *out = malloc(BF16_PATTERNS * sizeof(*out));
	cr_assert(in && out);
	for (uint32_t p = 0; p < BF16_PATTERNS; p++)
		in[p] = (uint16_t)p;
	spyre_dl16_to_bf16_n(out, in, BF16_PATTERNS);
	for (uint32_t p = 0; p < BF16_PATTERNS; p++) {
		double v = ref_dl16_value((uint16_t)p);
		if (isnan(v)) {
			cr_assert(bf16_is_nan(out[p]), "DL16 NINF 0x%04x -> 0x%04x", p, out[p]);
			cr_assert_eq((out[p] & 0x8000) != 0, (p & 0x8000) != 0);
			continue;
		}
		uint16_t want = ref_bf16_from_double(v);
		cr_assert_eq(out[p], want, "DL16 0x%04x -> bf16 0x%04x, want 0x%04x", p, out[p],
			     want);
	}
	free(in);
	free(out);
}

/* fp32 -> bfloat16 on sampled fp32 inputs (every exponent, random fractions, the ties). */
Test(bf16, fp32_rounds_to_nearest_even)
{
	grid_init();
	uint64_t st = 0x9E3779B97F4A7C15ULL;
	for (int i = 0; i < 2000000; i++) {
		uint32_t u = ref_rand32(&st);
		if (i % 4 == 0)
			u = (u & 0xFFFF0000u) | 0x8000u; /* an exact tie */
		float f;
		memcpy(&f, &u, sizeof(f));
		uint16_t got = spyre_bf16_from_f32(f), want = ref_bf16_from_double((double)f);
		if (isnan(f)) {
			cr_assert(bf16_is_nan(got), "0x%08x", u);
			continue;
		}
		cr_assert_eq(got, want, "fp32 0x%08x -> 0x%04x, want 0x%04x", u, got, want);
	}
}

static void sample_opts(struct spyre_run_opts *o, const char *sample)
{
	o->nin = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", sample);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int n = 0;
		char *s2 = NULL;
		for (char *d = strtok_r(t, "x", &s2); d; d = strtok_r(NULL, "x", &s2))
			o->shapes[o->nin][n++] = strtoll(d, NULL, 10);
		o->ndims[o->nin++] = n;
	}
}

/* Every op that takes float16 takes bfloat16, on each default sample, on 1 and 8 cores. */
Test(bf16, every_op_on_its_samples, .timeout = 600)
{
	static const int cores[] = { 1, 8 };
	int ran = 0;
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spyre_op_info *op = &spyre_ops[i];
		if (!spyre_op_supports(op, SPYRE_DTYPE_FLOAT16))
			continue;
		cr_assert(spyre_op_supports(op, SPYRE_DTYPE_BFLOAT16), "%s lacks bfloat16",
			  op->name);
		char samples[512];
		snprintf(samples, sizeof(samples), "%s", op->samples);
		char *save = NULL;
		for (char *s = strtok_r(samples, ";", &save); s; s = strtok_r(NULL, ";", &save))
			for (size_t c = 0; c < 2; c++) {
				struct spyre_hw hw;
				cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
				cr_assert_eq(spyre_hw_set_cores(&hw, cores[c]), 0);
				struct spyre_run_opts o;
				spyre_run_opts_init(&o);
				o.op = op->name;
				o.dtype = SPYRE_DTYPE_BFLOAT16;
				o.hw = &hw;
				o.seed = 11;
				o.params.scalar = strcmp(op->name, "clamp") == 0 ? -0.1 : 2.0;
				o.params.scalar2 = 0.1;
				o.params.has_min = o.params.has_max = 1;
				sample_opts(&o, s);
				if (strcmp(op->name, "permute") == 0) {
					static const int p3[] = { 0, 2, 1 }, p4[] = { 1, 0, 2, 3 };
					memcpy(o.params.perm, o.ndims[0] == 3 ? p3 : p4,
					       (size_t)o.ndims[0] * sizeof(int));
				}
				struct spyre_run_result r;
				cr_assert_eq(spyre_run(&o, &r), 0, "%s %s: %s", op->name, s,
					     err_last());
				cr_expect(r.passed, "%s %s bfloat16, %d cores: max abs err %g",
					  op->name, s, cores[c], r.max_abs_err);
				spyre_run_result_finish(&r);
				ran++;
			}
	}
	cr_expect_gt(ran, 100);
}
