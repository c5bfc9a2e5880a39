/* The MOVE ops' shapes and element maps (moves.h): PyTorch's semantics of view, reshape,
 * unsqueeze, expand, getitem (None, slices, Ellipsis, integers), cat, index_copy_ and zeros,
 * on dense row-major inputs. */
#include "moves.h"

#include <string.h>

#include "common/err.h"

static uint64_t numel(const int64_t *s, int n)
{
	uint64_t k = 1;
	for (int i = 0; i < n; i++)
		k *= (uint64_t)s[i];
	return k;
}

/* view / reshape: the target with at most one -1 inferred; no target flattens. */
static int shape_view(const struct spyre_op_info *op, const int64_t *in, int in_nd,
		      const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	uint64_t n = numel(in, in_nd), known = 1;
	if (p->shape_ndim == 0) {
		shape[0] = (int64_t)n;
		*ndim = 1;
		return 0;
	}
	int infer = -1;
	for (int i = 0; i < p->shape_ndim; i++) {
		if (p->shape[i] == -1 && infer < 0)
			infer = i;
		else if (p->shape[i] < 0)
			return err_set(ERR_INVAL, "%s: size %lld at dim %d", op->name,
				       (long long)p->shape[i], i);
		else
			known *= (uint64_t)p->shape[i];
		shape[i] = p->shape[i];
	}
	if (infer >= 0) {
		if (known == 0 || n % known)
			return err_set(ERR_INVAL, "%s: cannot infer -1 from %llu elements",
				       op->name, (unsigned long long)n);
		shape[infer] = (int64_t)(n / known);
		known = n;
	}
	if (known != n)
		return err_set(ERR_INVAL, "%s: %llu elements do not fit the target shape (%llu)",
			       op->name, (unsigned long long)n, (unsigned long long)known);
	*ndim = p->shape_ndim;
	return 0;
}

static int shape_expand(const struct spyre_op_info *op, const int64_t *in, int in_nd,
			const struct spyre_op_params *p, int64_t *shape, int *ndim)
{
	int n = p->shape_ndim ? p->shape_ndim : in_nd;
	if (n < in_nd)
		return err_set(ERR_INVAL, "expand: %d sizes for a %d-d tensor", n, in_nd);
	for (int i = 0; i < n; i++) {
		int j = i - (n - in_nd); /* the input dim, aligned on the right */
		int64_t want = p->shape_ndim ? p->shape[i] : in[j];
		int64_t have = j >= 0 ? in[j] : 1;
		if (want == -1 && j >= 0)
			want = have;
		if (want < 0 || (have != 1 && have != want))
			return err_set(ERR_INVAL, "%s: size %lld of dim %d cannot become %lld",
				       op->name, (long long)have, i, (long long)want);
		shape[i] = want;
	}
	*ndim = n;
	return 0;
}

/* Python's slice.indices(): start, stop and step clamped to a dim of `size`. */
static void slice_range(const struct spyre_index_item *it, int64_t size, int64_t *start,
			int64_t *len, int64_t *step)
{
	int64_t st = it->step ? it->step : 1;
	int64_t a = it->has_start ? it->start : (st > 0 ? 0 : size - 1);
	int64_t b = it->has_stop ? it->stop : (st > 0 ? size : -size - 1);
	if (it->has_start && a < 0)
		a += size;
	if (it->has_stop && b < 0)
		b += size;
	int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? size : size - 1;
	a = a < lo ? lo : a > hi ? hi : a;
	b = b < lo ? lo : b > hi ? hi : b;
	int64_t n = st > 0 ? (b - a + st - 1) / st : (a - b - st - 1) / -st;
	*start = a;
	*len = n > 0 ? n : 0;
	*step = st;
}

/* getitem: fills the map's per-dim walk and the output shape. */
static int getitem_walk(struct moves_map *m, const struct spyre_op_info *op, const int64_t *in,
			int in_nd, const struct spyre_op_params *p)
{
	int used = 0, ellipsis = 0;
	for (int i = 0; i < p->n_index; i++) {
		enum spyre_index_kind k = p->index[i].kind;
		used += k == SPYRE_INDEX_SLICE || k == SPYRE_INDEX_INT;
		ellipsis += k == SPYRE_INDEX_ELLIPSIS;
	}
	if (used > in_nd || ellipsis > 1)
		return err_set(ERR_INVAL, "%s: %d indices for a %d-d tensor", op->name, used,
			       in_nd);
	int64_t stride[SPYRE_DIMS_MAX];
	for (int d = in_nd - 1, s = 1; d >= 0; d--) {
		stride[d] = s;
		s *= (int)in[d];
	}
	int d = 0, o = 0;
	m->base = 0;
	for (int i = 0; i <= p->n_index; i++) {
		const struct spyre_index_item *it = i < p->n_index ? &p->index[i] : NULL;
		int full = !it ? in_nd - d : it->kind == SPYRE_INDEX_ELLIPSIS ? in_nd - used : 0;
		if (it && it->kind == SPYRE_INDEX_ELLIPSIS)
			used = in_nd; /* the dims it stands for are taken now */
		for (int k = 0; k < full; k++, d++, o++) {
			if (o >= SPYRE_DIMS_MAX)
				return err_set(ERR_INVAL, "%s: too many dims", op->name);
			m->src_dim[o] = d, m->start[o] = 0, m->step[o] = stride[d];
			m->out_shape[o] = in[d];
		}
		if (!it || it->kind == SPYRE_INDEX_ELLIPSIS)
			continue;
		if (o >= SPYRE_DIMS_MAX)
			return err_set(ERR_INVAL, "%s: too many dims", op->name);
		if (it->kind == SPYRE_INDEX_NONE) {
			m->src_dim[o] = -1, m->start[o] = 0, m->step[o] = 0, m->out_shape[o++] = 1;
		} else if (it->kind == SPYRE_INDEX_INT) {
			int64_t v = it->start < 0 ? it->start + in[d] : it->start;
			if (v < 0 || v >= in[d])
				return err_set(ERR_INVAL,
					       "%s: index %lld out of range for size %lld",
					       op->name, (long long)it->start, (long long)in[d]);
			m->base += v * stride[d++];
		} else {
			int64_t a, n, st;
			slice_range(it, in[d], &a, &n, &st);
			m->src_dim[o] = d, m->start[o] = a * stride[d], m->step[o] = st * stride[d];
			m->out_shape[o++] = n;
			d++;
		}
	}
	m->out_ndim = o;
	return 0;
}

static int shape_cat(const struct spyre_op_info *op, const int64_t shapes[][SPYRE_DIMS_MAX],
		     const int *ndims, int nin, int dim, int64_t *shape, int *ndim)
{
	memcpy(shape, shapes[0], sizeof(int64_t) * (size_t)ndims[0]);
	for (int t = 1; t < nin; t++) {
		if (ndims[t] != ndims[0])
			return err_set(ERR_INVAL, "%s: inputs have %d and %d dims", op->name,
				       ndims[0], ndims[t]);
		for (int d = 0; d < ndims[0]; d++)
			if (d != dim && shapes[t][d] != shapes[0][d])
				return err_set(ERR_INVAL,
					       "%s: input %d has size %lld at dim %d, "
					       "not %lld",
					       op->name, t, (long long)shapes[t][d], d,
					       (long long)shapes[0][d]);
		shape[dim] += shapes[t][dim];
	}
	*ndim = ndims[0];
	return 0;
}

static int shape_index_copy(const struct spyre_op_info *op, const int64_t shapes[][SPYRE_DIMS_MAX],
			    const int *ndims, int dim, int64_t *shape, int *ndim)
{
	if (ndims[1] != 1 || ndims[2] != ndims[0])
		return err_set(ERR_INVAL, "%s: self, a 1-d index and a source of self's rank",
			       op->name);
	for (int d = 0; d < ndims[0]; d++) {
		int64_t want = d == dim ? shapes[1][0] : shapes[0][d];
		if (shapes[2][d] != want)
			return err_set(ERR_INVAL, "%s: source size %lld at dim %d, want %lld",
				       op->name, (long long)shapes[2][d], d, (long long)want);
	}
	memcpy(shape, shapes[0], sizeof(int64_t) * (size_t)ndims[0]);
	*ndim = ndims[0];
	return 0;
}

static enum moves_kind kind_of(const char *name)
{
	if (strcmp(name, "expand") == 0)
		return MOVES_EXPAND;
	if (strcmp(name, "getitem") == 0)
		return MOVES_GETITEM;
	if (strcmp(name, "cat") == 0)
		return MOVES_CAT;
	if (strcmp(name, "index_copy_") == 0)
		return MOVES_INDEX_COPY;
	if (strcmp(name, "zeros") == 0 || strcmp(name, "arange") == 0)
		return MOVES_ZERO; /* no input: every element is made (zeros, arange's values) */
	return MOVES_FLAT;         /* view, reshape, unsqueeze */
}

int moves__shape(const struct spyre_op_info *op, const int64_t shapes[][SPYRE_DIMS_MAX],
		 const int *ndims, int nin, const struct spyre_op_params *p, int64_t *shape,
		 int *ndim)
{
	struct moves_map m;
	int rc = moves__map_init(&m, op, shapes, ndims, nin, p, NULL);
	if (rc)
		return rc;
	memcpy(shape, m.out_shape, sizeof(int64_t) * (size_t)m.out_ndim);
	*ndim = m.out_ndim;
	return 0;
}

static int out_shape(struct moves_map *m, const struct spyre_op_info *op,
		     const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims, int nin,
		     const struct spyre_op_params *p)
{
	const int64_t *in = shapes[0];
	int nd = nin ? ndims[0] : 0;
	switch (m->kind) {
	case MOVES_EXPAND:
		return shape_expand(op, in, nd, p, m->out_shape, &m->out_ndim);
	case MOVES_GETITEM:
		return getitem_walk(m, op, in, nd, p);
	case MOVES_CAT:
		return shape_cat(op, shapes, ndims, nin, m->dim, m->out_shape, &m->out_ndim);
	case MOVES_INDEX_COPY:
		return shape_index_copy(op, shapes, ndims, m->dim, m->out_shape, &m->out_ndim);
	case MOVES_ZERO:
		memcpy(m->out_shape, p->shape, sizeof(int64_t) * (size_t)p->shape_ndim);
		m->out_ndim = p->shape_ndim;
		for (int i = 0; i < p->shape_ndim; i++)
			if (p->shape[i] < 0)
				return err_set(ERR_INVAL, "%s: size %lld", op->name,
					       (long long)p->shape[i]);
		return 0;
	default:
		break;
	}
	if (strcmp(op->name, "unsqueeze") == 0) {
		if (nd + 1 > SPYRE_DIMS_MAX)
			return err_set(ERR_INVAL, "%s: too many dims", op->name);
		for (int i = 0, j = 0; i <= nd; i++)
			m->out_shape[i] = i == m->dim ? 1 : in[j++];
		m->out_ndim = nd + 1;
		return 0;
	}
	return shape_view(op, in, nd, p, m->out_shape, &m->out_ndim);
}

int moves__map_init(struct moves_map *m, const struct spyre_op_info *op,
		    const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims, int nin,
		    const struct spyre_op_params *p, const int64_t *slot_of)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind_of(op->name);
	m->nin = nin;
	for (int t = 0; t < nin; t++) {
		memcpy(m->in_shape[t], shapes[t], sizeof(int64_t) * (size_t)ndims[t]);
		m->in_ndim[t] = ndims[t];
	}
	/* dim as given (negative from the end); unsqueeze counts the new dim too */
	int nd = nin ? ndims[0] : 0, top = nd + (strcmp(op->name, "unsqueeze") == 0);
	m->dim = p->dim < 0 ? p->dim + top : p->dim;
	if (nin && m->kind != MOVES_EXPAND && m->kind != MOVES_GETITEM &&
	    (m->dim < 0 || m->dim >= (top ? top : 1)))
		return err_set(ERR_INVAL, "%s: dim %d out of range for %d dims", op->name, p->dim,
			       nd);
	m->slot_of = slot_of;
	return out_shape(m, op, shapes, ndims, nin, p);
}

/* Row-major flat index of idx in a tensor of `shape`, dims aligned on the right and size-1
 * dims broadcast (expand). */
static uint64_t flat_bcast(const int64_t *shape, int nd, const int64_t *idx, int ond)
{
	uint64_t f = 0;
	for (int d = 0; d < nd; d++) {
		int64_t v = shape[d] == 1 ? 0 : idx[d + ond - nd];
		f = f * (uint64_t)shape[d] + (uint64_t)v;
	}
	return f;
}

int moves__source(const struct moves_map *m, uint64_t o, uint64_t *src)
{
	int64_t idx[SPYRE_DIMS_MAX];
	int nd = m->out_ndim;
	uint64_t k = o;
	for (int d = nd - 1; d >= 0; d--) {
		idx[d] = m->out_shape[d] ? (int64_t)(k % (uint64_t)m->out_shape[d]) : 0;
		k = m->out_shape[d] ? k / (uint64_t)m->out_shape[d] : 0;
	}
	switch (m->kind) {
	case MOVES_ZERO:
		return -1;
	case MOVES_FLAT:
		*src = o;
		return 0;
	case MOVES_EXPAND:
		*src = flat_bcast(m->in_shape[0], m->in_ndim[0], idx, nd);
		return 0;
	case MOVES_GETITEM: {
		int64_t f = m->base;
		for (int d = 0; d < nd; d++)
			if (m->src_dim[d] >= 0)
				f += m->start[d] + idx[d] * m->step[d];
		*src = (uint64_t)f;
		return 0;
	}
	case MOVES_CAT: {
		int t = 0;
		while (t + 1 < m->nin && idx[m->dim] >= m->in_shape[t][m->dim])
			idx[m->dim] -= m->in_shape[t++][m->dim];
		*src = flat_bcast(m->in_shape[t], m->in_ndim[t], idx, nd);
		return t;
	}
	case MOVES_INDEX_COPY: {
		int64_t j = m->slot_of ? m->slot_of[idx[m->dim]] : -1;
		if (j < 0) {
			*src = o;
			return 0;
		}
		idx[m->dim] = j;
		*src = flat_bcast(m->in_shape[2], m->in_ndim[2], idx, nd);
		return 2;
	}
	}
	return -1;
}

int moves__slots(int64_t *slot_of, int64_t size, const int64_t *index, int64_t n)
{
	for (int64_t i = 0; i < size; i++)
		slot_of[i] = -1;
	for (int64_t j = 0; j < n; j++) {
		int64_t v = index[j];
		if (v < 0 || v >= size)
			return err_set(ERR_INVAL,
				       "index_copy_: index %lld at position %lld is out "
				       "of range [0, %lld)",
				       (long long)v, (long long)j, (long long)size);
		if (slot_of[v] >= 0)
			return err_set(ERR_INVAL, "index_copy_: index %lld repeats", (long long)v);
		slot_of[v] = j;
	}
	return 0;
}
