/* Output shapes of every op, with errors that name the op and the mismatch, and the
 * broadcasting helpers the reference shares. */
#include <string.h>

#include "common/err.h"
#include "moves.h"
#include "ops_impl.h"

int ops__norm_dim(const struct spyre_op_info *op, int dim, int ndim, int *out)
{
	int n = ndim > 0 ? ndim : 1;
	if (dim < -n || dim >= n)
		return err_set(ERR_INVAL, "%s: dim %d out of range for a %d-d tensor", op->name,
			       dim, ndim);
	*out = dim < 0 ? dim + n : dim;
	return 0;
}

int ops__broadcast(const struct spyre_op_info *op, const struct spyre_tensor *in, int n,
		   int64_t *shape, int *ndim)
{
	int nd = 0;
	for (int i = 0; i < n; i++)
		nd = in[i].ndim > nd ? in[i].ndim : nd;
	for (int d = 0; d < nd; d++) {
		int64_t s = 1;
		for (int i = 0; i < n; i++) {
			int k = d - (nd - in[i].ndim);
			int64_t si = k >= 0 ? in[i].shape[k] : 1;
			if (si != 1 && s != 1 && si != s)
				return err_set(ERR_INVAL,
					       "%s: shapes do not broadcast: input %d has size "
					       "%lld at dim %d where another has %lld",
					       op->name, i, (long long)si, k, (long long)s);
			if (si != 1)
				s = si;
		}
		shape[d] = s;
	}
	*ndim = nd;
	return 0;
}

uint64_t ops__bcast_index(const struct spyre_tensor *t, const int64_t *idx, int ondim)
{
	uint64_t off = 0;
	for (int d = 0; d < t->ndim; d++) {
		int64_t i = idx[ondim - t->ndim + d];
		off = off * (uint64_t)t->shape[d] + (uint64_t)(t->shape[d] == 1 ? 0 : i);
	}
	return off;
}

static int want_ndim(const struct spyre_op_info *op, const struct spyre_tensor *t, int i, int lo,
		     int hi)
{
	if (t->ndim < lo || t->ndim > hi)
		return err_set(ERR_INVAL, "%s: input %d has %d dims, expected %d..%d", op->name, i,
			       t->ndim, lo, hi);
	return 0;
}

static int size_eq(const struct spyre_op_info *op, const char *what, int64_t a, int64_t b)
{
	if (a != b)
		return err_set(ERR_INVAL, "%s: %s mismatch: %lld vs %lld", op->name, what,
			       (long long)a, (long long)b);
	return 0;
}

int ops__mm_view(const struct spyre_op_info *op, const struct spyre_tensor *a,
		 const struct spyre_tensor *b, struct ops_mm *out)
{
	memset(out, 0, sizeof(*out));
	if (a->ndim < 1 || b->ndim < 1)
		return err_set(ERR_INVAL, "%s: operands must have at least 1 dim", op->name);
	out->a_vec = a->ndim == 1;
	out->b_vec = b->ndim == 1;
	out->m = out->a_vec ? 1 : a->shape[a->ndim - 2];
	out->k = a->shape[a->ndim - 1];
	int64_t bk = out->b_vec ? b->shape[0] : b->shape[b->ndim - 2];
	out->n = out->b_vec ? 1 : b->shape[b->ndim - 1];
	if (out->k != bk)
		return err_set(ERR_INVAL, "%s: inner dims differ: a has K=%lld, b has K=%lld",
			       op->name, (long long)out->k, (long long)bk);
	struct spyre_tensor ba = { .ndim = a->ndim > 2 ? a->ndim - 2 : 0 };
	struct spyre_tensor bb = { .ndim = b->ndim > 2 ? b->ndim - 2 : 0 };
	memcpy(ba.shape, a->shape, sizeof(int64_t) * (size_t)ba.ndim);
	memcpy(bb.shape, b->shape, sizeof(int64_t) * (size_t)bb.ndim);
	struct spyre_tensor two[2] = { ba, bb };
	return ops__broadcast(op, two, 2, out->batch, &out->bndim);
}

static int shape_matmul(const struct spyre_op_info *op, const struct spyre_tensor *in,
			int64_t *shape, int *ndim)
{
	const struct spyre_tensor *a = &in[0], *b = &in[1];
	int rc = 0;
	if (strcmp(op->name, "mm") == 0)
		rc = want_ndim(op, a, 0, 2, 2) ?: want_ndim(op, b, 1, 2, 2);
	else if (strcmp(op->name, "bmm") == 0)
		rc = want_ndim(op, a, 0, 3, 3) ?: want_ndim(op, b, 1, 3, 3) ?:
		     size_eq(op, "batch", a->shape[0], b->shape[0]);
	if (rc)
		return rc;
	struct ops_mm v;
	if ((rc = ops__mm_view(op, a, b, &v)))
		return rc;
	int nd = v.bndim;
	memcpy(shape, v.batch, sizeof(int64_t) * (size_t)nd);
	if (!v.a_vec)
		shape[nd++] = v.m;
	if (!v.b_vec)
		shape[nd++] = v.n;
	*ndim = nd;
	return 0;
}

static int shape_linear(const struct spyre_op_info *op, const struct spyre_tensor *in,
			int64_t *shape, int *ndim)
{
	const struct spyre_tensor *x = &in[0], *w = &in[1], *bias = &in[2];
	int rc = want_ndim(op, x, 0, 1, SPYRE_DIMS_MAX) ?: want_ndim(op, w, 1, 2, 2) ?:
		 want_ndim(op, bias, 2, 1, 1) ?:
		 size_eq(op, "in features (x last dim vs weight dim 1)", x->shape[x->ndim - 1],
			 w->shape[1]) ?:
		 size_eq(op, "out features (bias vs weight dim 0)", bias->shape[0], w->shape[0]);
	if (rc)
		return rc;
	memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
	shape[x->ndim - 1] = w->shape[0];
	*ndim = x->ndim;
	return 0;
}

static int shape_linear_nobias(const struct spyre_op_info *op, const struct spyre_tensor *in,
			       int64_t *shape, int *ndim)
{
	const struct spyre_tensor *x = &in[0], *w = &in[1];
	int rc = want_ndim(op, x, 0, 1, SPYRE_DIMS_MAX) ?: want_ndim(op, w, 1, 2, 2) ?:
		 size_eq(op, "in features (x last dim vs weight dim 1)", x->shape[x->ndim - 1],
			 w->shape[1]);
	if (rc)
		return rc;
	memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
	shape[x->ndim - 1] = w->shape[0];
	*ndim = x->ndim;
	return 0;
}

static int shape_moves(const struct spyre_op_info *op, const struct spyre_tensor *in, int nin,
		       const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX] = { { 0 } };
	int ndims[SPYRE_OP_INPUTS_MAX] = { 0 };
	for (int t = 0; t < nin; t++) {
		memcpy(shapes[t], in[t].shape, sizeof(shapes[t]));
		ndims[t] = in[t].ndim;
	}
	return moves__shape(op, (const int64_t(*)[SPYRE_DIMS_MAX])shapes, ndims, nin, p, shape,
			    ndim);
}

static int shape_addmm(const struct spyre_op_info *op, const struct spyre_tensor *in,
		       int64_t *shape, int *ndim)
{
	int rc = want_ndim(op, &in[1], 1, 2, 2) ?: want_ndim(op, &in[2], 2, 2, 2) ?:
		 want_ndim(op, &in[0], 0, 0, 2) ?:
		 size_eq(op, "inner dim K", in[1].shape[1], in[2].shape[0]);
	if (rc)
		return rc;
	struct spyre_tensor t[2] = { in[0], { .ndim = 2 } };
	t[1].shape[0] = in[1].shape[0];
	t[1].shape[1] = in[2].shape[1];
	rc = ops__broadcast(op, t, 2, shape, ndim);
	if (!rc && (shape[0] != t[1].shape[0] || shape[1] != t[1].shape[1]))
		return err_set(ERR_INVAL, "%s: bias does not broadcast to [%lld, %lld]", op->name,
			       (long long)t[1].shape[0], (long long)t[1].shape[1]);
	return rc;
}

static int shape_norm(const struct spyre_op_info *op, const struct spyre_tensor *in,
		      const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	const struct spyre_tensor *x = &in[0];
	int d, rc = want_ndim(op, x, 0, 1, SPYRE_DIMS_MAX);
	if (!rc && op->nin == 1)
		rc = ops__norm_dim(op, p->dim, x->ndim, &d);
	for (int i = 1; !rc && i < op->nin; i++)
		rc = want_ndim(op, &in[i], i, 1, 1)
			 ?: size_eq(op, "last dim vs weight/bias", x->shape[x->ndim - 1],
				    in[i].shape[0]);
	if (rc)
		return rc;
	memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
	*ndim = x->ndim;
	return 0;
}

static int shape_reduction(const struct spyre_op_info *op, const struct spyre_tensor *x,
			   const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	int d, rc = ops__norm_dim(op, p->dim, x->ndim, &d);
	if (rc)
		return rc;
	int nd = 0;
	for (int i = 0; i < x->ndim; i++) {
		if (i != d)
			shape[nd++] = x->shape[i];
		else if (p->keepdim)
			shape[nd++] = 1;
	}
	*ndim = nd;
	return 0;
}

static int shape_layout(const struct spyre_op_info *op, const struct spyre_tensor *x,
			const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	int perm[SPYRE_DIMS_MAX];
	int rc = ops__perm(op, p, x->ndim, perm);
	if (rc)
		return rc;
	for (int i = 0; i < x->ndim; i++)
		shape[i] = x->shape[perm[i]];
	*ndim = x->ndim;
	return 0;
}

int ops__perm(const struct spyre_op_info *op, const struct spyre_op_params *p, int ndim, int *perm)
{
	for (int i = 0; i < ndim; i++)
		perm[i] = i;
	if (strcmp(op->name, "transpose") == 0) {
		int a, b;
		int rc = ops__norm_dim(op, p->perm[0], ndim, &a)
			     ?: ops__norm_dim(op, p->perm[1], ndim, &b);
		if (rc)
			return rc;
		if (ndim > 0) {
			perm[a] = b;
			perm[b] = a;
		}
	} else if (strcmp(op->name, "permute") == 0) {
		int seen = 0;
		for (int i = 0; i < ndim; i++) {
			int d, rc = ops__norm_dim(op, p->perm[i], ndim, &d);
			if (rc)
				return rc;
			if (seen & (1 << d))
				return err_set(ERR_INVAL, "%s: dim %d appears twice in perm",
					       op->name, d);
			seen |= 1 << d;
			perm[i] = d;
		}
	}
	return 0;
}

static int shape_embedding(const struct spyre_op_info *op, const struct spyre_tensor *in,
			   int64_t *shape, int *ndim)
{
	const struct spyre_tensor *idx = &in[0], *w = &in[1];
	if (spyre_dtype_is_float(idx->dtype))
		return err_set(ERR_INVAL, "%s: indices must be an integer tensor, not %s", op->name,
			       spyre_dtype_name(idx->dtype));
	int rc = want_ndim(op, idx, 0, 0, SPYRE_DIMS_MAX - 1) ?: want_ndim(op, w, 1, 2, 2);
	if (rc)
		return rc;
	memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
	shape[idx->ndim] = w->shape[1];
	*ndim = idx->ndim + 1;
	return 0;
}

static int shape_fused(const struct spyre_op_info *op, const struct spyre_tensor *in,
		       int64_t *shape, int *ndim)
{
	const struct spyre_tensor *x = &in[0];
	int rc = want_ndim(op, x, 0, 2, SPYRE_DIMS_MAX);
	if (rc)
		return rc;
	int64_t last = x->shape[x->ndim - 1];
	if (strcmp(op->name, "swiglu_mlp") == 0) {
		const struct spyre_tensor *w1 = &in[1], *w3 = &in[2], *w2 = &in[3];
		rc = want_ndim(op, w1, 1, 2, 2) ?: want_ndim(op, w3, 2, 2, 2) ?:
		     want_ndim(op, w2, 3, 2, 2) ?:
		     size_eq(op, "hidden (x last dim vs w1 dim 0)", last, w1->shape[0]) ?:
		     size_eq(op, "w1 vs w3 shape", w1->shape[1], w3->shape[1]) ?:
		     size_eq(op, "hidden (w3 dim 0)", last, w3->shape[0]) ?:
		     size_eq(op, "ffn (w2 dim 0 vs w1 dim 1)", w2->shape[0], w1->shape[1]);
		last = rc ? 0 : w2->shape[1];
	} else {
		const struct spyre_tensor *k = &in[1], *v = &in[2];
		rc = size_eq(op, "q/k/v dims", x->ndim, k->ndim)
			 ?: size_eq(op, "q/k/v dims", x->ndim, v->ndim);
		for (int d = 0; !rc && d < x->ndim - 2; d++)
			rc = size_eq(op, "batch dim of q vs k", x->shape[d], k->shape[d])
				 ?: size_eq(op, "batch dim of q vs v", x->shape[d], v->shape[d]);
		if (!rc)
			rc = size_eq(op, "head dim (q vs k)", last, k->shape[k->ndim - 1])
				 ?: size_eq(op, "kv length (k vs v)", k->shape[k->ndim - 2],
					    v->shape[v->ndim - 2]);
		last = rc ? 0 : v->shape[v->ndim - 1];
	}
	if (rc)
		return rc;
	memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
	shape[x->ndim - 1] = last;
	*ndim = x->ndim;
	return 0;
}

int spyre_op_output_shape(const struct spyre_op_info *op, const struct spyre_tensor *in, int nin,
			  const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	if (nin != op->nin)
		return err_set(ERR_INVAL, "%s: %d inputs given, it takes %d (%s)", op->name, nin,
			       op->nin, op->inputs);
	switch (op->cls) {
	case SPYRE_OPC_POINTWISE:
		return ops__broadcast(op, in, nin, shape, ndim);
	case SPYRE_OPC_REDUCTION:
		return shape_reduction(op, &in[0], p, shape, ndim);
	case SPYRE_OPC_NORM:
		return shape_norm(op, in, p, shape, ndim);
	case SPYRE_OPC_MATMUL:
		if (strcmp(op->name, "linear") == 0)
			return shape_linear(op, in, shape, ndim);
		if (strcmp(op->name, "linear_nobias") == 0)
			return shape_linear_nobias(op, in, shape, ndim);
		if (strcmp(op->name, "addmm") == 0)
			return shape_addmm(op, in, shape, ndim);
		return shape_matmul(op, in, shape, ndim);
	case SPYRE_OPC_LAYOUT:
		return shape_layout(op, &in[0], p, shape, ndim);
	case SPYRE_OPC_GATHER:
		return shape_embedding(op, in, shape, ndim);
	case SPYRE_OPC_FUSED:
		return shape_fused(op, in, shape, ndim);
	case SPYRE_OPC_MOVE:
		return shape_moves(op, in, nin, p, shape, ndim);
	}
	return err_set(ERR_INVAL, "%s: unknown op class", op->name);
}
