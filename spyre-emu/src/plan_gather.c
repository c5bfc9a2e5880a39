/* The plan of embedding: out[i, :] = weight[indices[i], :]. The indices are read from device
 * memory (their sticks are DMAed into LX first, as the DMA engine would need them), and each
 * output row is one DMA of the weight row it names, straight through LX (a row wider than half
 * of LX in chunks of whole sticks). An index out of range
 * refuses the plan with the position and value. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

static int read_index(struct plan_ctx *c, const struct plan_tensor *idx, int64_t pos, int64_t *out)
{
	int64_t r = pos / idx->cols, col = pos % idx->cols;
	uint64_t addr = plan_stick_addr(idx, r, col / idx->eps) + (uint64_t)(col % idx->eps) * 8;
	const int64_t *p = spyre_device_ptr(c->dev, addr, 8);
	if (!p)
		return ERR_INVAL;
	*out = *p;
	return 0;
}

/* Rows of the weight wider than half of LX move in chunks of whole sticks. */
static int gather_row(struct plan_ctx *c, int k, int64_t v, int64_t r, int64_t cs, uint32_t buf)
{
	const struct plan_tensor *w = &c->in[1], *o = &c->out;
	int rc = 0;
	for (int64_t s0 = 0; s0 < w->sticks && !rc; s0 += cs) {
		int64_t ns = w->sticks - s0 < cs ? w->sticks - s0 : cs;
		rc = plan__dma_row(c, k, 1, w, v, s0, ns, buf);
		if (!rc)
			rc = plan__dma_row(c, k, 0, o, r, s0, ns, buf);
	}
	return rc;
}

static int build_gather(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *idx = &c->in[0], *w = &c->in[1], *o = &c->out;
	if (idx->ddt != SPYRE_DTYPE_INT64)
		return err_set(ERR_INVAL, "embedding indices must be int64");
	int64_t n = o->rows, V = w->rows;
	uint64_t half = c->hw->lx_bytes / 2 / STICK * STICK;
	int64_t cs = (int64_t)((half - STICK) / STICK); /* sticks of a row per chunk */
	if (cs > w->sticks)
		cs = w->sticks;
	if (cs < 1)
		return err_set(ERR_LIMIT, "LX has no room for one stick of an embedding row");
	uint32_t rowb = (uint32_t)cs * STICK;
	int64_t tr = pv->a;
	if ((uint64_t)tr * rowb + STICK > half)
		tr = (int64_t)((half - STICK) / rowb);
	int rc = 0;
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi;
		plan__split(n, c->launch->ncores, k, &lo, &hi);
		for (int64_t r0 = lo, t = 0; r0 < hi && !rc; r0 += tr, t++) {
			int64_t cnt = hi - r0 < tr ? hi - r0 : tr;
			uint32_t buf = (uint32_t)((t % 2) * half);
			/* the index sticks this tile reads */
			int64_t first = r0 / idx->eps, last = (r0 + cnt - 1) / idx->eps;
			for (int64_t s = first; s <= last && !rc; s++) {
				int64_t pos = s * idx->eps;
				rc = plan__dma_row(c, k, 1, idx, pos / idx->cols,
						   (pos % idx->cols) / idx->eps, 1,
						   buf + (uint32_t)(half - STICK));
			}
			for (int64_t j = 0; j < cnt && !rc; j++) {
				int64_t v;
				rc = read_index(c, idx, r0 + j, &v);
				if (!rc && (v < 0 || v >= V))
					rc = err_set(ERR_INVAL,
						     "embedding index %lld at position %lld is out "
						     "of range for %lld rows",
						     (long long)v, (long long)(r0 + j),
						     (long long)V);
				if (!rc)
					rc = gather_row(c, k, v, r0 + j, cs,
							buf + (uint32_t)j * rowb);
			}
		}
	}
	return rc;
}

int plan__variants_gather(const struct plan_ctx *c, struct plan_variant *out)
{
	(void)c;
	static const int64_t tiles[] = { 16, 256 };
	for (int i = 0; i < 2; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "row_dma_rows%lld", (long long)tiles[i]);
		out[i].build = build_gather;
		out[i].a = tiles[i];
	}
	return 2;
}
