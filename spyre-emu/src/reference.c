/* The float64 host reference of every op: the inputs are read as stored (float16 as its exact
 * value), every step runs in double, and the result is the array the device's output is
 * compared against. One function per op, dispatched through a table generated from ops.def. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "moves.h"
#include "ops_impl.h"

/* What every reference function gets: the op, its inputs as tensors (shapes) and as doubles,
 * the params and the output shape. */
struct ref {
	const struct spyre_op_info *op;
	const struct spyre_tensor *in;
	const double *x[SPYRE_OP_INPUTS_MAX];
	const struct spyre_op_params *p;
	int64_t oshape[SPYRE_DIMS_MAX];
	int ondim;
	uint64_t n;
	double *out;
};

typedef int (*ref_fn)(struct ref *r);

static uint64_t prod(const int64_t *s, int from, int to)
{
	uint64_t n = 1;
	for (int i = from; i < to; i++)
		n *= (uint64_t)s[i];
	return n;
}

static void unravel(int64_t *idx, uint64_t k, const int64_t *shape, int ndim)
{
	for (int d = ndim - 1; d >= 0; d--) {
		idx[d] = shape[d] ? (int64_t)(k % (uint64_t)shape[d]) : 0;
		k = shape[d] ? k / (uint64_t)shape[d] : 0;
	}
}

/* ---- pointwise ---- */

typedef double (*pw_fn)(const double *x, const struct spyre_op_params *p);

static int ref_pointwise(struct ref *r, pw_fn f)
{
	int64_t idx[SPYRE_DIMS_MAX];
	double x[SPYRE_OP_INPUTS_MAX];
	for (uint64_t k = 0; k < r->n; k++) {
		unravel(idx, k, r->oshape, r->ondim);
		for (int i = 0; i < r->op->nin; i++)
			x[i] = r->x[i][ops__bcast_index(&r->in[i], idx, r->ondim)];
		r->out[k] = f(x, r->p);
	}
	return 0;
}

static double sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

#define PW(name, expr)                                                                             \
	static double pw_##name(const double *x, const struct spyre_op_params *p)                  \
	{                                                                                          \
		(void)p;                                                                           \
		return (expr);                                                                     \
	}                                                                                          \
	static int ref_##name(struct ref *r)                                                       \
	{                                                                                          \
		return ref_pointwise(r, pw_##name);                                                \
	}

PW(add, x[0] + x[1])
PW(sub, x[0] - x[1])
PW(mul, x[0] * x[1])
PW(div, x[0] / x[1])
PW(neg, -x[0])
PW(abs, fabs(x[0]))
PW(exp, exp(x[0]))
PW(log, log(x[0]))
PW(sqrt, sqrt(x[0]))
PW(rsqrt, 1.0 / sqrt(x[0]))
PW(reciprocal, 1.0 / x[0])
PW(relu, x[0] > 0 ? x[0] : (isnan(x[0]) ? x[0] : 0.0))
PW(sigmoid, sigmoid(x[0]))
PW(tanh, tanh(x[0]))
PW(silu, x[0] * sigmoid(x[0]))
PW(gelu, p->approximate_tanh
	     ? 0.5 * x[0] * (1.0 + tanh(sqrt(2.0 / M_PI) * (x[0] + 0.044715 * x[0] * x[0] * x[0])))
	     : 0.5 * x[0] * (1.0 + erf(x[0] / sqrt(2.0))))
PW(softplus, x[0] > 20.0 ? x[0] : log1p(exp(x[0])))
PW(pow, pow(x[0], p->scalar))
PW(clamp, p->has_max &&x[0] > p->scalar2   ? p->scalar2
	  : p->has_min && x[0] < p->scalar ? p->scalar
					   : x[0])
PW(where, x[0] != 0.0 ? x[1] : x[2])
PW(eq, x[0] == x[1])
PW(ne, x[0] != x[1])
PW(lt, x[0] < x[1])
PW(le, x[0] <= x[1])
PW(gt, x[0] > x[1])
PW(ge, x[0] >= x[1])

/* ---- along one dimension: reductions and softmax ---- */

/* outer x len x inner view of input 0 around dim. */
struct line {
	uint64_t outer, len, inner;
};

static int line_view(struct ref *r, struct line *l)
{
	int d, rc = ops__norm_dim(r->op, r->p->dim, r->in[0].ndim, &d);
	if (rc)
		return rc;
	const struct spyre_tensor *t = &r->in[0];
	l->outer = prod(t->shape, 0, d);
	l->len = t->ndim ? (uint64_t)t->shape[d] : 1;
	l->inner = prod(t->shape, d + 1, t->ndim);
	return 0;
}

enum red { RED_SUM, RED_MEAN, RED_MAX, RED_MIN };

static int ref_reduce(struct ref *r, enum red op)
{
	struct line l;
	int rc = line_view(r, &l);
	if (rc)
		return rc;
	for (uint64_t o = 0; o < l.outer; o++)
		for (uint64_t i = 0; i < l.inner; i++) {
			double a = op == RED_MAX ? -INFINITY : op == RED_MIN ? INFINITY : 0.0;
			for (uint64_t k = 0; k < l.len; k++) {
				double x = r->x[0][(o * l.len + k) * l.inner + i];
				if (op == RED_MAX)
					a = isnan(x) || x > a ? x : a;
				else if (op == RED_MIN)
					a = isnan(x) || x < a ? x : a;
				else
					a += x;
			}
			r->out[o * l.inner + i] = op == RED_MEAN ? a / (double)l.len : a;
		}
	return 0;
}

static int ref_sum(struct ref *r)
{
	return ref_reduce(r, RED_SUM);
}
static int ref_mean(struct ref *r)
{
	return ref_reduce(r, RED_MEAN);
}
static int ref_max(struct ref *r)
{
	return ref_reduce(r, RED_MAX);
}
static int ref_min(struct ref *r)
{
	return ref_reduce(r, RED_MIN);
}

static int ref_softmax_any(struct ref *r, int log_out)
{
	struct line l;
	int rc = line_view(r, &l);
	if (rc)
		return rc;
	for (uint64_t o = 0; o < l.outer; o++)
		for (uint64_t i = 0; i < l.inner; i++) {
			const double *x = r->x[0] + o * l.len * l.inner + i;
			double *y = r->out + o * l.len * l.inner + i;
			double m = -INFINITY, s = 0.0;
			for (uint64_t k = 0; k < l.len; k++)
				m = isnan(x[k * l.inner]) || x[k * l.inner] > m ? x[k * l.inner]
										: m;
			for (uint64_t k = 0; k < l.len; k++)
				s += exp(x[k * l.inner] - m);
			for (uint64_t k = 0; k < l.len; k++)
				y[k * l.inner] = log_out ? x[k * l.inner] - m - log(s)
							 : exp(x[k * l.inner] - m) / s;
		}
	return 0;
}

static int ref_softmax(struct ref *r)
{
	return ref_softmax_any(r, 0);
}
static int ref_log_softmax(struct ref *r)
{
	return ref_softmax_any(r, 1);
}

/* Norms over the last dim; eps <= 0 means the op's default. */
static int ref_norm_any(struct ref *r, int layer)
{
	const struct spyre_tensor *t = &r->in[0];
	uint64_t d = (uint64_t)t->shape[t->ndim - 1], rows = d ? r->n / d : 0;
	double eps = r->p->eps > 0 ? r->p->eps : layer ? 1e-5 : 1e-6;
	for (uint64_t i = 0; i < rows; i++) {
		const double *x = r->x[0] + i * d;
		double mean = 0.0, var = 0.0;
		for (uint64_t c = 0; c < d; c++)
			mean += x[c];
		mean = layer ? mean / (double)d : 0.0;
		for (uint64_t c = 0; c < d; c++)
			var += (x[c] - mean) * (x[c] - mean);
		double rstd = 1.0 / sqrt(var / (double)d + eps);
		for (uint64_t c = 0; c < d; c++)
			r->out[i * d + c] =
			    (x[c] - mean) * rstd * r->x[1][c] + (layer ? r->x[2][c] : 0.0);
	}
	return 0;
}

static int ref_layer_norm(struct ref *r)
{
	return ref_norm_any(r, 1);
}
static int ref_rms_norm(struct ref *r)
{
	return ref_norm_any(r, 0);
}

/* ---- matmul family ---- */

/* c[m,n] = a[m,k] @ b[k,n] (row-major, double). */
static void gemm(double *c, const double *a, const double *b, uint64_t m, uint64_t k, uint64_t n)
{
	/* float64 throughout (OpenBLAS dgemm): the reference's own rounding stays ~1e-16
	 * relative, far below any tolerance it is compared with */
	if (m == 0 || n == 0)
		return;
	if (k == 0) {
		memset(c, 0, (size_t)(m * n) * sizeof(double));
		return;
	}
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a,
		    (int)k, b, (int)n, 0.0, c, (int)n);
}

static int ref_matmul_any(struct ref *r)
{
	struct ops_mm v;
	int rc = ops__mm_view(r->op, &r->in[0], &r->in[1], &v);
	if (rc)
		return rc;
	struct spyre_tensor ba = { .ndim = r->in[0].ndim > 2 ? r->in[0].ndim - 2 : 0 };
	struct spyre_tensor bb = { .ndim = r->in[1].ndim > 2 ? r->in[1].ndim - 2 : 0 };
	memcpy(ba.shape, r->in[0].shape, sizeof(int64_t) * (size_t)ba.ndim);
	memcpy(bb.shape, r->in[1].shape, sizeof(int64_t) * (size_t)bb.ndim);
	uint64_t nb = prod(v.batch, 0, v.bndim), mk = (uint64_t)(v.m * v.k),
		 kn = (uint64_t)(v.k * v.n), mn = (uint64_t)(v.m * v.n);
	int64_t idx[SPYRE_DIMS_MAX];
	for (uint64_t b = 0; b < nb; b++) {
		unravel(idx, b, v.batch, v.bndim);
		gemm(r->out + b * mn, r->x[0] + ops__bcast_index(&ba, idx, v.bndim) * mk,
		     r->x[1] + ops__bcast_index(&bb, idx, v.bndim) * kn, (uint64_t)v.m,
		     (uint64_t)v.k, (uint64_t)v.n);
	}
	return 0;
}

static int ref_mm(struct ref *r)
{
	return ref_matmul_any(r);
}
static int ref_bmm(struct ref *r)
{
	return ref_matmul_any(r);
}
static int ref_matmul(struct ref *r)
{
	return ref_matmul_any(r);
}

static int ref_linear(struct ref *r)
{
	const struct spyre_tensor *w = &r->in[1];
	uint64_t out = (uint64_t)w->shape[0], k = (uint64_t)w->shape[1];
	uint64_t rows = out ? r->n / out : 0;
	for (uint64_t i = 0; i < rows; i++)
		for (uint64_t o = 0; o < out; o++) {
			double s = 0.0;
			for (uint64_t q = 0; q < k; q++)
				s += r->x[0][i * k + q] * r->x[1][o * k + q];
			r->out[i * out + o] = s + r->x[2][o];
		}
	return 0;
}

static int ref_addmm(struct ref *r)
{
	uint64_t m = (uint64_t)r->in[1].shape[0], k = (uint64_t)r->in[1].shape[1],
		 n = (uint64_t)r->in[2].shape[1];
	gemm(r->out, r->x[1], r->x[2], m, k, n);
	int64_t idx[2];
	for (uint64_t e = 0; e < r->n; e++) {
		unravel(idx, e, r->oshape, 2);
		r->out[e] += r->x[0][ops__bcast_index(&r->in[0], idx, 2)];
	}
	return 0;
}

/* ---- layout and gather ---- */

static int ref_layout(struct ref *r)
{
	int perm[SPYRE_DIMS_MAX];
	int rc = ops__perm(r->op, r->p, r->in[0].ndim, perm);
	if (rc)
		return rc;
	int64_t idx[SPYRE_DIMS_MAX], src[SPYRE_DIMS_MAX];
	for (uint64_t k = 0; k < r->n; k++) {
		unravel(idx, k, r->oshape, r->ondim);
		for (int i = 0; i < r->ondim; i++)
			src[perm[i]] = idx[i];
		uint64_t off = 0;
		for (int i = 0; i < r->ondim; i++)
			off = off * (uint64_t)r->in[0].shape[i] + (uint64_t)src[i];
		r->out[k] = r->x[0][off];
	}
	return 0;
}

static int ref_transpose(struct ref *r)
{
	return ref_layout(r);
}
static int ref_permute(struct ref *r)
{
	return ref_layout(r);
}
static int ref_contiguous(struct ref *r)
{
	return ref_layout(r);
}

static int ref_embedding(struct ref *r)
{
	uint64_t nidx = spyre_tensor_numel(&r->in[0]);
	int64_t vocab = r->in[1].shape[0];
	uint64_t d = (uint64_t)r->in[1].shape[1];
	for (uint64_t t = 0; t < nidx; t++) {
		double ix = r->x[0][t];
		if (!(ix >= 0 && ix < (double)vocab))
			return err_set(ERR_INVAL,
				       "embedding: index %g at position %llu is outside "
				       "[0, %lld)",
				       ix, (unsigned long long)t, (long long)vocab);
		memcpy(r->out + t * d, r->x[1] + (uint64_t)ix * d, d * sizeof(double));
	}
	return 0;
}

#include "reference_fused.h"
#include "reference_moves.h"

static const ref_fn ref_fns[] = {
#define KERNEL(name, nin, shape, passes, transcendental)
#define OP(name, cls, nin, inputs, dtypes, samples, init, doc) ref_##name,
#include "../ops.def"
#undef OP
#undef KERNEL
};

static double *to_doubles(const struct spyre_tensor *t)
{
	uint64_t n = spyre_tensor_numel(t);
	double *x = malloc((n ? n : 1) * sizeof(double));
	if (x)
		spyre_tensor_get_all(t, x);
	return x;
}

int spyre_op_reference(const struct spyre_op_info *op, const struct spyre_tensor *in, int nin,
		       const struct spyre_op_params *p, double **out, uint64_t *n)
{
	struct ref r = { .op = op, .in = in, .p = p };
	*out = NULL;
	*n = 0;
	int rc = spyre_op_output_shape(op, in, nin, p, r.oshape, &r.ondim);
	if (rc)
		return rc;
	r.n = prod(r.oshape, 0, r.ondim);
	r.out = calloc(r.n ? r.n : 1, sizeof(double));
	for (int i = 0; r.out && i < nin; i++)
		if (!(r.x[i] = to_doubles(&in[i])))
			rc = err_set(ERR_NOMEM, "%s reference: input %d", op->name, i);
	if (!r.out)
		rc = err_set(ERR_NOMEM, "%s reference: %llu outputs", op->name,
			     (unsigned long long)r.n);
	if (!rc)
		rc = ref_fns[op - spyre_ops](&r);
	for (int i = 0; i < nin; i++)
		free((void *)r.x[i]);
	if (rc) {
		free(r.out);
		return rc;
	}
	*out = r.out;
	*n = r.n;
	return 0;
}
