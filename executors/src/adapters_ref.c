/* The float64 references of the ops adapters stand in for: what torch computes for the original
 * op, with numpy broadcasting over the inputs. A case through an adapter is compared with these,
 * never with the rewritten expression's own reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "executors/adapters.h"

typedef double (*ref_fn)(const double *v, double exponent);

static double r_square(const double *v, double k)
{
	(void)k;
	return v[0] * v[0];
}
static double r_pow(const double *v, double k)
{
	return pow(v[0], k);
}
static double r_logaddexp(const double *v, double k)
{
	(void)k;
	double m = fmax(v[0], v[1]);
	if (isinf(m))
		return m; /* log(e^inf + x) = inf; both -inf: -inf */
	return m + log1p(exp(-fabs(v[0] - v[1])));
}
static double r_hypot(const double *v, double k)
{
	(void)k;
	return hypot(v[0], v[1]);
}
static double r_addcmul(const double *v, double k)
{
	(void)k;
	return v[0] + v[1] * v[2];
}
static double r_lerp(const double *v, double k)
{
	(void)k;
	return v[0] + v[2] * (v[1] - v[0]);
}
static double r_hardswish(const double *v, double k)
{
	(void)k;
	return v[0] * fmin(fmax(v[0] + 3, 0), 6) / 6;
}
static double r_softsign(const double *v, double k)
{
	(void)k;
	return v[0] / (1 + fabs(v[0]));
}

static const struct {
	const char *name;
	int nin;
	ref_fn fn;
} refs[] = {
	{ "square", 1, r_square },       { "pow", 1, r_pow },
	{ "logaddexp", 2, r_logaddexp }, { "hypot", 2, r_hypot },
	{ "addcmul", 3, r_addcmul },     { "lerp", 3, r_lerp },
	{ "hardswish", 1, r_hardswish }, { "softsign", 1, r_softsign },
};

static ref_fn ref_find(const char *name, int *nin)
{
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		if (strcmp(refs[i].name, name) == 0) {
			*nin = refs[i].nin;
			return refs[i].fn;
		}
	return NULL;
}

int exec_reference_nin(const char *name)
{
	int nin = 0;
	return ref_find(name, &nin) ? nin : 0;
}

/* The broadcast shape of the inputs (numpy rules), right-aligned into out[SPYRE_DIMS_MAX]. */
static int broadcast(const struct spyre_tensor *in, int nin, int64_t *out, int *ndim)
{
	*ndim = 0;
	for (int i = 0; i < nin; i++)
		if (in[i].ndim > *ndim)
			*ndim = in[i].ndim;
	for (int d = 0; d < *ndim; d++) {
		out[d] = 1;
		for (int i = 0; i < nin; i++) {
			int k = d - (*ndim - in[i].ndim);
			int64_t s = k >= 0 ? in[i].shape[k] : 1;
			if (s != 1 && out[d] != 1 && s != out[d])
				return err_set(
				    ERR_INVAL,
				    "shapes do not broadcast: input %d has %lld at dim %d", i,
				    (long long)s, d);
			if (s != 1)
				out[d] = s;
		}
	}
	return 0;
}

/* The flat index into input `t` of the output element with multi-index `idx`. */
static uint64_t offset_of(const struct spyre_tensor *t, const int64_t *idx, int ndim)
{
	uint64_t off = 0;
	for (int k = 0; k < t->ndim; k++) {
		int64_t s = t->shape[k];
		int64_t i = s == 1 ? 0 : idx[k + ndim - t->ndim];
		off = off * (uint64_t)s + (uint64_t)i;
	}
	return off;
}

int exec_reference(const char *name, const struct spyre_tensor *in, int nin, double exponent,
		   double **out, uint64_t *n)
{
	int want = 0;
	ref_fn fn = ref_find(name, &want);
	if (!fn)
		return err_set(ERR_NOTFOUND, "no reference for op '%s'", name);
	if (nin != want)
		return err_set(ERR_INVAL, "%s takes %d inputs, got %d", name, want, nin);
	int64_t shape[SPYRE_DIMS_MAX], idx[SPYRE_DIMS_MAX] = { 0 };
	int ndim;
	int rc = broadcast(in, nin, shape, &ndim);
	if (rc)
		return rc;
	uint64_t total = 1;
	for (int d = 0; d < ndim; d++)
		total *= (uint64_t)shape[d];
	double *o = malloc((size_t)total * sizeof(double));
	if (!o)
		return err_set(ERR_NOMEM, "out of memory for a %llu-element reference",
			       (unsigned long long)total);
	for (uint64_t e = 0; e < total; e++) {
		double v[SPYRE_OP_INPUTS_MAX];
		for (int i = 0; i < nin; i++)
			v[i] = spyre_tensor_get(&in[i], offset_of(&in[i], idx, ndim));
		o[e] = fn(v, exponent);
		for (int d = ndim - 1; d >= 0 && ++idx[d] == shape[d]; d--)
			idx[d] = 0;
	}
	*out = o;
	*n = total;
	return 0;
}
