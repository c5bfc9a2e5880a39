/* Inputs by `init` kind and the assert_close comparison (inputs.h). The generator is splitmix64
 * seeded from the case seed and the input's index: the same case gives the same bits on every
 * host. */
#include "executors/inputs.h"

#include <math.h>
#include <string.h>

#include "common/err.h"

static const char *const known[] = { "rand",   "randn", "zeros", "ones",  "randint",
				     "arange", "eye",   "full",  "xavier" };

bool exec_init_known(const char *init)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(init, known[i]) == 0)
			return true;
	return false;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
	return (double)(splitmix(s) >> 11) * 0x1.0p-53;
}

static double normal(uint64_t *s)
{
	double u = uniform(s), v = uniform(s);
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* rows and columns of the last two dimensions (a vector: 1 x n) */
static void last_two(const struct spyre_tensor *t, int64_t *rows, int64_t *cols)
{
	*cols = t->ndim ? t->shape[t->ndim - 1] : 1;
	*rows = t->ndim > 1 ? t->shape[t->ndim - 2] : 1;
}

static double value_at(const char *init, const struct spyre_tensor *t, uint64_t i, uint64_t *s,
		       double bound)
{
	int64_t rows, cols;
	switch (init[0]) {
	case 'z':
		return 0;
	case 'o':
	case 'f':
		return 1;
	case 'a':
		return (double)i;
	case 'e':
		last_two(t, &rows, &cols);
		return (int64_t)(i % (uint64_t)(rows * cols)) / cols ==
			       (int64_t)(i % (uint64_t)(rows * cols)) % cols
			   ? 1
			   : 0;
	case 'x':
		return (2 * uniform(s) - 1) * bound;
	default:
		break;
	}
	if (strcmp(init, "randint") == 0)
		return (double)(int)(splitmix(s) % 17) - 8;
	if (strcmp(init, "randn") == 0)
		return normal(s);
	return uniform(s); /* rand */
}

int exec_inputs_fill(struct spyre_tensor *t, const char *init, uint64_t seed, int index)
{
	if (!exec_init_known(init))
		return err_set(ERR_INVAL,
			       "init '%s' is not one a kernel case can build (rand, randn, zeros, "
			       "ones, randint, arange, eye, full, xavier)",
			       init);
	uint64_t s = seed ^ (0xA5A5A5A5ull * (uint64_t)(index + 1));
	int64_t rows, cols;
	last_two(t, &rows, &cols);
	double bound = sqrt(6.0 / (double)(rows + cols));
	uint64_t n = spyre_tensor_numel(t);
	for (uint64_t i = 0; i < n; i++)
		spyre_tensor_set(t, i, value_at(init, t, i, &s, bound));
	return 0;
}

void exec_compare_values(struct exec_compare *out, const double *got, const double *want,
			 uint64_t n, double atol, double rtol, bool equal_nan)
{
	memset(out, 0, sizeof(*out));
	for (uint64_t i = 0; i < n; i++) {
		double g = got[i], w = want[i], abs_err, rel_err;
		bool ok;
		if (isnan(g) || isnan(w)) {
			ok = isnan(g) && isnan(w) && equal_nan;
			abs_err = rel_err = ok ? 0 : INFINITY;
		} else if (isinf(g) || isinf(w)) {
			ok = g == w;
			abs_err = rel_err = ok ? 0 : INFINITY;
		} else {
			abs_err = fabs(g - w);
			rel_err = w != 0 ? abs_err / fabs(w) : (abs_err ? INFINITY : 0);
			ok = abs_err <= atol + rtol * fabs(w);
		}
		if (abs_err > out->max_abs_err)
			out->max_abs_err = abs_err;
		if (rel_err > out->max_rel_err)
			out->max_rel_err = rel_err;
		if (!ok && out->mismatches++ == 0)
			out->first_bad = i;
	}
}
