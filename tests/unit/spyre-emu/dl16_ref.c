/* Slow reference conversions for the DL16 and IEEE half tests; see dl16_ref.h. */
#include "dl16_ref.h"

#include <math.h>

#define DL16_PATTERNS 0x8000 /* positive patterns 0x0000..0x7FFF, by the formula */
#define HALF_PATTERNS 0x7C01 /* positive patterns 0x0000..0x7C00 (0x7C00 taken as 2^16) */

static double dl16_grid[DL16_PATTERNS];
static double half_grid[HALF_PATTERNS];
static bool grids_ready;

/* (-1)^S * 2^(E-31) * (1 + M/512), for any pattern, zero and NINF included. */
static double dl16_formula(uint16_t h)
{
	int e = (h >> 9) & 0x3F;
	int m = h & 0x1FF;
	double v = ldexp(1.0 + m / 512.0, e - 31);
	return (h & 0x8000) ? -v : v;
}

static double half_formula(uint16_t h)
{
	int e = (h >> 10) & 0x1F;
	int m = h & 0x3FF;
	double v = e == 0 ? ldexp(m, -24) : ldexp(1.0 + m / 1024.0, e - 15);
	return (h & 0x8000) ? -v : v;
}

static void grids_init(void)
{
	if (grids_ready)
		return;
	for (int p = 0; p < DL16_PATTERNS; p++)
		dl16_grid[p] = dl16_formula((uint16_t)p);
	for (int p = 0; p < HALF_PATTERNS; p++)
		half_grid[p] = half_formula((uint16_t)p);
	grids_ready = true;
}

/* The largest index p < n - 1 with grid[p] <= a, for grid[0] <= a < grid[n - 1]. */
static int grid_floor(const double *grid, int n, double a)
{
	int lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		if (grid[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double ref_dl16_value(uint16_t h)
{
	if ((h & 0x7FFF) == 0x7FFF)
		return (h & 0x8000) ? -NAN : NAN;
	if ((h & 0x7FFF) == 0)
		return (h & 0x8000) ? -0.0 : 0.0;
	return dl16_formula(h);
}

uint16_t ref_dl16_from_f32(float f, bool sat)
{
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	double a = fabs((double)f);
	grids_init();
	if (isnan(f) || isinf(f))
		return sign | 0x7FFF;
	if (a < ldexp(1.0, -31)) /* below exponent 0: flush to zero */
		return sign;
	int p;
	if (a >= dl16_grid[DL16_PATTERNS - 1]) {
		p = 0x7FFF; /* at or beyond the NINF pattern's own value */
	} else {
		p = grid_floor(dl16_grid, DL16_PATTERNS, a);
		double below = a - dl16_grid[p], above = dl16_grid[p + 1] - a;
		if (above <= below) /* nearer, or a tie: away from zero */
			p++;
	}
	if (p >= 0x7FFF)
		return sign | (sat ? 0x7FFE : 0x7FFF);
	return sign | (uint16_t)p;
}

double ref_half_value(uint16_t h)
{
	if ((h & 0x7C00) == 0x7C00) {
		if (h & 0x3FF)
			return (h & 0x8000) ? -NAN : NAN;
		return (h & 0x8000) ? -INFINITY : INFINITY;
	}
	if ((h & 0x7FFF) == 0)
		return (h & 0x8000) ? -0.0 : 0.0;
	return half_formula(h);
}

uint16_t ref_half_from_f32(float f)
{
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	double a = fabs((double)f);
	grids_init();
	if (isnan(f))
		return sign | 0x7E00;
	if (a >= half_grid[HALF_PATTERNS - 1]) /* 2^16 and Inf */
		return sign | 0x7C00;
	int p = grid_floor(half_grid, HALF_PATTERNS, a);
	double below = a - half_grid[p], above = half_grid[p + 1] - a;
	if (above < below || (above == below && (p & 1)))
		p++;
	return sign | (uint16_t)p;
}
