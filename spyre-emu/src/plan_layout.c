/* Plans of the layout ops: transpose, permute, contiguous. A permutation that keeps the last
 * dimension in place moves whole rows: each output row is one input row, so the plan is DMA
 * only (rows gathered into LX and stored in their new order). A permutation that moves the
 * stick dimension needs the data itself re-sticked, which the vector unit cannot do yet: it is
 * refused with that reason. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

/* The input row that output row r comes from, when the last dim stays last. */
static int64_t source_row(const struct plan_ctx *c, const int *perm, int64_t r)
{
	const struct plan_tensor *in = &c->in[0], *o = &c->out;
	int n = o->ndim;
	int64_t oidx[SPYRE_DIMS_MAX], iidx[SPYRE_DIMS_MAX];
	for (int j = n - 2; j >= 0; j--) {
		oidx[j] = r % o->shape[j];
		r /= o->shape[j];
	}
	for (int j = 0; j < n - 1; j++)
		iidx[perm[j]] = oidx[j];
	int64_t ri = 0;
	for (int j = 0; j < n - 1; j++)
		ri = ri * in->shape[j] + iidx[j];
	return ri;
}

static int perm_of(const struct plan_ctx *c, int *perm)
{
	int n = c->in[0].ndim;
	const char *name = c->op->name;
	for (int i = 0; i < n; i++)
		perm[i] = i;
	if (strcmp(name, "transpose") == 0) {
		int a = c->p.perm[0], b = c->p.perm[1];
		if (a < 0)
			a += n;
		if (b < 0)
			b += n;
		if (a < 0 || a >= n || b < 0 || b >= n)
			return err_set(ERR_INVAL, "transpose dims %d, %d out of range",
				       c->p.perm[0], c->p.perm[1]);
		perm[a] = b;
		perm[b] = a;
	} else if (strcmp(name, "permute") == 0) {
		for (int i = 0; i < n; i++)
			perm[i] = c->p.perm[i];
	}
	return 0;
}

static int build_rows(struct plan_ctx *c, const struct plan_variant *pv)
{
	int perm[SPYRE_DIMS_MAX];
	int rc = perm_of(c, perm);
	if (rc)
		return rc;
	const struct plan_tensor *in = &c->in[0], *o = &c->out;
	uint32_t rowb = (uint32_t)in->sticks * STICK;
	uint64_t half = c->hw->lx_bytes / 2;
	int64_t tr = (int64_t)(half / rowb) < pv->a ? (int64_t)(half / rowb) : pv->a;
	if (tr < 1)
		return err_set(ERR_LIMIT, "a row does not fit LX");
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi;
		plan__split(o->rows, c->launch->ncores, k, &lo, &hi);
		for (int64_t r0 = lo, t = 0; r0 < hi && !rc; r0 += tr, t++) {
			int64_t cnt = hi - r0 < tr ? hi - r0 : tr;
			uint32_t buf = (uint32_t)((t % 2) * half);
			for (int64_t j = 0; j < cnt && !rc; j++)
				rc = plan__dma_row(c, k, 1, in, source_row(c, perm, r0 + j), 0,
						   in->sticks, buf + (uint32_t)j * rowb);
			for (int64_t j = 0; j < cnt && !rc; j++)
				rc = plan__dma_row(c, k, 0, o, r0 + j, 0, o->sticks,
						   buf + (uint32_t)j * rowb);
		}
	}
	return rc;
}

int plan__variants_layout(const struct plan_ctx *c, struct plan_variant *out)
{
	if (c->op->cls != SPYRE_OPC_LAYOUT)
		return err_set(ERR_INVAL, "the planner has no plans for op %s", c->op->name);
	int perm[SPYRE_DIMS_MAX];
	int rc = perm_of(c, perm);
	if (rc)
		return rc;
	int n = c->in[0].ndim;
	if (perm[n - 1] != n - 1)
		return err_set(ERR_INVAL,
			       "%s moves the stick dimension (dim %d goes to %d): re-sticking the "
			       "data is not planned yet",
			       c->op->name, n - 1, perm[n - 1]);
	static const int64_t tiles[] = { 16, 256 };
	for (int i = 0; i < 2; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "row_moves_rows%lld",
			 (long long)tiles[i]);
		out[i].build = build_rows;
		out[i].a = tiles[i];
	}
	return 2;
}
