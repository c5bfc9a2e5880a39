/* Inputs by `init` kind and the assert_close comparison (inputs.h). The generator is splitmix64
 * seeded from the case seed and the input's index: the same case gives the same bits on every
 * host. */
#include "executors/inputs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
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
		       double bound, const struct exec_init_args *a)
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
	if (strcmp(init, "randint") == 0 && a && a->has_range)
		return a->low + floor(uniform(s) * (a->high - a->low));
	if (strcmp(init, "randint") == 0)
		return (double)(int)(splitmix(s) % 17) - 8;
	if (strcmp(init, "randn") == 0)
		return normal(s);
	return uniform(s); /* rand */
}

static int check_kind(const char *init)
{
	if (exec_init_known(init))
		return 0;
	return err_set(ERR_INVAL,
		       "init '%s' is not one a kernel case can build (rand, randn, zeros, "
		       "ones, randint, arange, eye, full, xavier)",
		       init);
}

/* The storage a strided input reads: offset + the farthest element + 1, or 0 on overflow. */
static uint64_t storage_len(const struct spyre_tensor *t, const struct exec_init_args *a)
{
	uint64_t end = (uint64_t)a->offset;
	for (int d = 0; d < t->ndim; d++) {
		if (t->shape[d] == 0)
			return 1;
		uint64_t reach = (uint64_t)(t->shape[d] - 1) * (uint64_t)a->stride[d];
		if (a->stride[d] && reach / (uint64_t)a->stride[d] != (uint64_t)(t->shape[d] - 1))
			return 0;
		end += reach;
		if (end > EXEC_INIT_STORAGE_MAX)
			return 0;
	}
	return end + 1;
}

static int fill_strided(struct spyre_tensor *t, const char *init, const struct exec_init_args *a,
			uint64_t s, double bound)
{
	uint64_t len = storage_len(t, a);
	if (len == 0 || len > EXEC_INIT_STORAGE_MAX)
		return err_set(ERR_LIMIT, "a strided input's storage passes %llu elements",
			       (unsigned long long)EXEC_INIT_STORAGE_MAX);
	double *st = malloc(len * sizeof(*st));
	if (!st)
		return err_set(ERR_NOMEM, "out of memory for a storage of %llu elements",
			       (unsigned long long)len);
	for (uint64_t k = 0; k < len; k++)
		st[k] = value_at(init, t, k, &s, bound, a);
	uint64_t n = spyre_tensor_numel(t);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t rest = i, at = (uint64_t)a->offset;
		for (int d = t->ndim - 1; d >= 0; d--) {
			at += (rest % (uint64_t)t->shape[d]) * (uint64_t)a->stride[d];
			rest /= (uint64_t)t->shape[d];
		}
		spyre_tensor_set(t, i, st[at]);
	}
	free(st);
	return 0;
}

int exec_inputs_fill_args(struct spyre_tensor *t, const char *init, const struct exec_init_args *a,
			  uint64_t seed, int index)
{
	int rc = check_kind(init);
	if (rc)
		return rc;
	uint64_t s = seed ^ (0xA5A5A5A5ull * (uint64_t)(index + 1));
	int64_t rows, cols;
	last_two(t, &rows, &cols);
	double bound = sqrt(6.0 / (double)(rows + cols));
	if (a && a->strided)
		return fill_strided(t, init, a, s, bound);
	uint64_t n = spyre_tensor_numel(t);
	for (uint64_t i = 0; i < n; i++)
		spyre_tensor_set(t, i, value_at(init, t, i, &s, bound, a));
	return 0;
}

int exec_inputs_fill(struct spyre_tensor *t, const char *init, uint64_t seed, int index)
{
	return exec_inputs_fill_args(t, init, NULL, seed, index);
}

static bool seen_before(const struct spyre_tensor *t, uint64_t upto, double v)
{
	for (uint64_t j = 0; j < upto; j++)
		if (spyre_tensor_get(t, j) == v)
			return true;
	return false;
}

int exec_inputs_make_distinct(struct spyre_tensor *t, const struct exec_init_args *a)
{
	uint64_t n = spyre_tensor_numel(t);
	if (n > EXEC_DISTINCT_MAX)
		return err_set(ERR_LIMIT, "distinct indices: %llu elements, more than %d",
			       (unsigned long long)n, EXEC_DISTINCT_MAX);
	double lo = 0, hi = 0;
	for (uint64_t i = 0; i < n; i++)
		hi = fmax(hi, spyre_tensor_get(t, i) + 1);
	if (a && a->has_range)
		lo = a->low, hi = a->high;
	else
		hi += (double)n;
	if (hi - lo < (double)n)
		return err_set(ERR_INVAL, "%llu distinct indices do not fit in [%g, %g)",
			       (unsigned long long)n, lo, hi);
	for (uint64_t i = 0; i < n; i++) {
		double v = spyre_tensor_get(t, i);
		while (seen_before(t, i, v))
			v = v + 1 >= hi ? lo : v + 1;
		spyre_tensor_set(t, i, v);
	}
	return 0;
}

/* One `key: number` of a flow mapping; *found 0 when the key is absent. */
static int arg_number(const char *text, const char *key, double *out, bool *found)
{
	size_t kl = strlen(key);
	*found = false;
	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		bool starts = p == text || p[-1] == '{' || p[-1] == ' ' || p[-1] == ',';
		const char *q = p + kl;
		while (*q == ' ')
			q++;
		if (!starts || *q != ':')
			continue;
		char *end = NULL;
		errno = 0;
		*out = strtod(q + 1, &end);
		while (end && *end == ' ')
			end++;
		if (errno || end == q + 1 || !isfinite(*out) ||
		    (*end != ',' && *end != '}' && *end))
			return err_set(ERR_INVAL, "init_args %s: not a number in '%s'", key, text);
		*found = true;
		return 0;
	}
	return 0;
}

int exec_init_args_parse(struct exec_init_args *a, const char *text)
{
	bool has_low = false, has_high = false;
	a->low = 0;
	int rc = arg_number(text, "low", &a->low, &has_low);
	if (!rc)
		rc = arg_number(text, "high", &a->high, &has_high);
	if (rc)
		return rc;
	if (has_low && !has_high)
		return err_set(ERR_INVAL, "init_args '%s': low without high", text);
	if (fabs(a->low) > 0x1p53 || fabs(a->high) > 0x1p53)
		return err_set(ERR_INVAL, "init_args '%s': low and high must lie within 2^53",
			       text);
	if (has_high && !(a->low < a->high))
		return err_set(ERR_INVAL, "init_args '%s': low must be below high", text);
	a->has_range = has_high;
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
