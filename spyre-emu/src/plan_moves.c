/* The plan of the MOVE ops (view, reshape, unsqueeze, expand, getitem, cat, index_copy_,
 * zeros): no arithmetic, only sticks moved, and lanes moved within sticks where they must.
 *
 * Each output row (all dims but the last) is assembled in LX and stored with one DMA. moves.c
 * says where each of its elements comes from; consecutive elements that come from consecutive
 * elements of one input row form a run. A run that starts on a stick boundary in both tensors
 * and covers whole sticks (or ends both rows) is DMAed straight into place; any other run is
 * DMAed into a staging area and moved into its lanes by the vector unit (lane_copy). Rows with
 * such runs, gaps or no input at all (zeros) are zero-filled first, so padding lanes are
 * written. Rows are split over the cores; the two LX halves alternate so that the DMA of one
 * row overlaps the assembly of the next. index_copy_'s indices are DMAed into LX on every core
 * first (they decide which row each output row reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "moves.h"
#include "plan.h"

#define STICK 128u

struct run {
	int t;
	int64_t srow, scol, dcol, len;
};

struct row_ctx {
	struct plan_ctx *c;
	const struct moves_map *m;
	int core;
	uint32_t buf, stage; /* LX: the output row, the staging sticks */
	struct run *runs;
	int64_t n_runs;
	int zero; /* some lane comes from no run, or a run needs the vector unit */
};

static int direct(const struct row_ctx *x, const struct run *u)
{
	const struct plan_tensor *in = &x->c->in[u->t], *o = &x->c->out;
	int64_t eps = o->eps;
	if (u->scol % eps || u->dcol % eps)
		return 0;
	return u->len % eps == 0 || (u->scol + u->len == in->cols && u->dcol + u->len == o->cols);
}

/* The runs of output row r (and whether the row needs zeroing first). */
static void row_runs(struct row_ctx *x, int64_t r)
{
	const struct plan_tensor *o = &x->c->out;
	x->n_runs = 0;
	x->zero = x->c->nin == 0;
	struct run *cur = NULL;
	for (int64_t col = 0; col < o->cols; col++) {
		uint64_t src;
		int t = moves__source(x->m, (uint64_t)(r * o->cols + col), &src);
		if (t < 0) {
			x->zero = 1;
			cur = NULL;
			continue;
		}
		int64_t ic = x->c->in[t].cols;
		int64_t sr = (int64_t)src / ic, sc = (int64_t)src % ic;
		if (cur && cur->t == t && cur->srow == sr && cur->scol + cur->len == sc) {
			cur->len++;
			continue;
		}
		cur = &x->runs[x->n_runs++];
		*cur = (struct run){ .t = t, .srow = sr, .scol = sc, .dcol = col, .len = 1 };
	}
	for (int64_t i = 0; i < x->n_runs; i++)
		if (!direct(x, &x->runs[i]))
			x->zero = 1;
}

static int lane_run(struct row_ctx *x, const struct run *u)
{
	const struct plan_tensor *in = &x->c->in[u->t], *o = &x->c->out;
	int64_t eps = in->eps, s0 = u->scol / eps;
	int64_t ns = (u->scol % eps + u->len + eps - 1) / eps;
	int rc = plan__dma_row(x->c, x->core, 1, in, u->srow, s0, ns, x->stage);
	if (rc)
		return rc;
	struct spyre_vec v = { 0 };
	v.dtype = v.out_dtype = o->ddt;
	v.in[0] = x->stage;
	v.out = x->buf;
	v.in_stride[0] = v.out_stride = (uint32_t)(ns * eps);
	v.rows = 1;
	int64_t out_lanes = o->sticks * o->eps, staged = ns * eps;
	v.cols = (uint32_t)(staged < out_lanes ? staged : out_lanes);
	v.scalar[0] = (float)(u->scol % eps);
	v.scalar[1] = (float)u->dcol;
	v.scalar[2] = (float)u->len;
	return plan__vec(x->c, x->core, "lane_copy", &v);
}

/* arange: the row's values made by the vector unit (padding lanes zeroed first). */
static int arange_row(struct row_ctx *x, int64_t r)
{
	const struct plan_tensor *o = &x->c->out;
	uint32_t lanes = (uint32_t)(o->sticks * o->eps);
	int rc =
	    lanes > o->cols ? plan__zero_fill(x->c, x->core, x->buf, 1, lanes, lanes, o->ddt) : 0;
	struct spyre_vec v = { 0 };
	v.dtype = v.out_dtype = o->ddt;
	v.out = x->buf;
	v.out_stride = lanes;
	v.rows = 1;
	v.cols = (uint32_t)o->cols;
	v.scalar[0] = (float)(x->c->p.scalar + (double)(r * o->cols) * x->c->p.scalar2);
	v.scalar[1] = (float)x->c->p.scalar2;
	return rc ? rc : plan__vec(x->c, x->core, "iota", &v);
}

static int row_build(struct row_ctx *x, int64_t r)
{
	const struct plan_tensor *o = &x->c->out;
	int rc = 0;
	row_runs(x, r);
	if (strcmp(x->c->op->name, "arange") == 0)
		rc = arange_row(x, r);
	else if (x->zero)
		rc = plan__zero_fill(x->c, x->core, x->buf, 1, (uint32_t)(o->sticks * o->eps),
				     (uint32_t)(o->sticks * o->eps), o->ddt);
	for (int64_t i = 0; !rc && i < x->n_runs; i++) {
		const struct run *u = &x->runs[i];
		const struct plan_tensor *in = &x->c->in[u->t];
		if (direct(x, u))
			rc = plan__dma_row(x->c, x->core, 1, in, u->srow, u->scol / in->eps,
					   (u->len + in->eps - 1) / in->eps,
					   x->buf + (uint32_t)(u->dcol / o->eps) * STICK);
		else
			rc = lane_run(x, u);
	}
	return rc ? rc : plan__dma_row(x->c, x->core, 0, o, r, 0, o->sticks, x->buf);
}

/* index_copy_: the positions' source rows, from the indices in device memory. */
static int read_slots(struct plan_ctx *c, int64_t **slot_of)
{
	const struct plan_tensor *ix = &c->in[1];
	if (ix->ddt != SPYRE_DTYPE_INT64)
		return err_set(ERR_INVAL, "index_copy_: the index must be int64");
	int64_t n = ix->cols, size = c->in[0].shape[c->p.dim];
	int64_t *vals = malloc((size_t)(n ? n : 1) * sizeof(*vals));
	*slot_of = malloc((size_t)(size ? size : 1) * sizeof(**slot_of));
	int rc = vals && *slot_of ? 0 : err_set(ERR_NOMEM, "index_copy_: out of memory");
	for (int64_t j = 0; !rc && j < n; j++) {
		uint64_t a = plan_stick_addr(ix, 0, j / ix->eps) + (uint64_t)(j % ix->eps) * 8;
		const int64_t *p = spyre_device_ptr(c->dev, a, 8);
		if (!p)
			rc = err_set(ERR_INVAL, "index_copy_: index %lld is not readable",
				     (long long)j);
		else
			vals[j] = *p;
	}
	if (!rc)
		rc = moves__slots(*slot_of, size, vals, n);
	free(vals);
	return rc;
}

static int map_of(struct plan_ctx *c, struct moves_map *m, const int64_t *slot_of)
{
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX] = { { 0 } };
	int ndims[SPYRE_OP_INPUTS_MAX] = { 0 };
	for (int t = 0; t < c->nin; t++) {
		memcpy(shapes[t], c->in[t].shape, sizeof(shapes[t]));
		ndims[t] = c->in[t].ndim;
	}
	return moves__map_init(m, c->op, (const int64_t(*)[SPYRE_DIMS_MAX])shapes, ndims, c->nin,
			       &c->p, slot_of);
}

static int build_moves(struct plan_ctx *c, const struct plan_variant *pv)
{
	(void)pv;
	const struct plan_tensor *o = &c->out;
	int is_ic = strcmp(c->op->name, "index_copy_") == 0;
	int64_t *slot_of = NULL;
	struct moves_map m;
	int rc = is_ic ? read_slots(c, &slot_of) : 0;
	if (!rc)
		rc = map_of(c, &m, slot_of);
	uint32_t ixb = is_ic ? (uint32_t)c->in[1].sticks * STICK : 0;
	uint64_t slot = (uint64_t)(2 * o->sticks + 2) * STICK;
	if (!rc && ixb + 2 * slot > c->hw->lx_bytes)
		rc = err_set(ERR_LIMIT, "%s: an output row of %lld elements does not fit LX twice",
			     c->op->name, (long long)o->cols);
	struct row_ctx x = { .c = c, .m = &m };
	x.runs = rc ? NULL : malloc((size_t)(o->cols ? o->cols : 1) * sizeof(*x.runs));
	if (!rc && !x.runs)
		rc = err_set(ERR_NOMEM, "%s plan: out of memory", c->op->name);
	for (int k = 0; !rc && k < c->launch->ncores; k++) {
		int64_t lo, hi;
		plan__split(o->rows, c->launch->ncores, k, &lo, &hi);
		x.core = k;
		if (is_ic && hi > lo)
			rc = plan__dma_row(c, k, 1, &c->in[1], 0, 0, c->in[1].sticks, 0);
		for (int64_t r = lo; !rc && r < hi; r++) {
			x.buf = ixb + (uint32_t)((r - lo) % 2 * slot);
			x.stage = x.buf + (uint32_t)o->sticks * STICK;
			rc = row_build(&x, r);
		}
	}
	free(x.runs);
	free(slot_of);
	return rc;
}

int plan__variants_moves(const struct plan_ctx *c, struct plan_variant *out)
{
	(void)c;
	snprintf(out[0].name, sizeof(out[0].name), "row_moves_sticks_and_lanes");
	out[0].build = build_moves;
	return 1;
}
