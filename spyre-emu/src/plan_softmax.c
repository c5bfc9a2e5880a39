/* softmax over rows of any width: `online_cols*` walks each row in column chunks of whole sticks,
 * so only a chunk of the row is ever in LX.
 *  Pass 1 (online softmax), per chunk j of rows [r0, r0 + tr):
 *    M_j = max(M_{j-1}, row max of the chunk)          (row_max_acc: DL16 maxima are exact)
 *    S_j = S_{j-1} * exp(M_{j-1} - M_j) + sum exp(x - M_j)   (fp32)
 *  Pass 2, per chunk: out = exp(x - M) / S, rounded once, stored.
 * The input is read twice, against once for `fused_lx_rows*` (which needs the whole row in LX)
 * and the fp32 intermediate written and read by `spill_devmem_rows16`; it is offered only for
 * rows the fused plan cannot hold. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

struct sgeom {
	int64_t tr, cw; /* rows per tile, columns per chunk (whole sticks) */
	uint32_t x[2], e, o[2], m, mold, s, f, end;
};

static int sgeom_of(const struct plan_ctx *c, const struct plan_variant *pv, struct sgeom *g)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	int64_t cols = x->sticks * x->eps;
	g->cw = pv->a < cols ? pv->a : cols;
	g->tr = 16;
	uint64_t tr = (uint64_t)g->tr, cw = (uint64_t)g->cw, at = 0;
#define TAKE(field, bytes) (g->field = (uint32_t)at, at += plan__align((bytes), STICK))
	TAKE(x[0], tr * cw * x->esize);
	TAKE(x[1], tr * cw * x->esize);
	TAKE(e, tr * cw * 4);
	TAKE(o[0], tr * cw * o->esize);
	TAKE(o[1], tr * cw * o->esize);
	TAKE(m, tr * STICK);
	TAKE(mold, tr * STICK);
	TAKE(s, tr * STICK);
	TAKE(f, tr * STICK);
#undef TAKE
	if (at > c->hw->lx_bytes)
		return err_set(ERR_LIMIT, "a %lldx%lld softmax chunk does not fit LX",
			       (long long)g->tr, (long long)g->cw);
	g->end = (uint32_t)at;
	return 0;
}

/* One vector kernel over rows x cols: in0 (stride s0, dtype dt), in1 one value per row (a
 * stick per row) or none, out (stride so, dtype odt). */
static int kv(struct plan_ctx *c, int core, const char *k, uint32_t in0, uint32_t s0,
	      enum spyre_dtype dt, int64_t in1, uint32_t out, uint32_t so, enum spyre_dtype odt,
	      int64_t rows, int64_t cols)
{
	struct spyre_vec v = { 0 };
	v.in[0] = in0;
	v.in_stride[0] = s0;
	if (in1 >= 0) {
		v.in[1] = (uint32_t)in1;
		v.in_stride[1] = STICK / spyre_dtype_size(dt);
		v.bcast_col = 2;
	}
	v.dtype = dt;
	v.out = out;
	v.out_stride = so;
	v.out_dtype = odt;
	v.rows = (uint32_t)rows;
	v.cols = (uint32_t)cols;
	return plan__vec(c, core, k, &v);
}

/* Pass 1 for chunk j (columns [c0, c0 + w)) already in x buffer `xb`. */
static int online_step(struct plan_ctx *c, const struct sgeom *g, int core, int64_t j, uint32_t xb,
		       int64_t tr, int64_t w, uint32_t xs)
{
	enum spyre_dtype dt = c->in[0].ddt, f32 = SPYRE_DTYPE_FLOAT32;
	uint32_t ms = STICK / spyre_dtype_size(dt), fs = STICK / 4;
	int rc = 0;
	if (j > 0)
		rc = kv(c, core, "copy", g->m, ms, dt, -1, g->mold, ms, dt, tr, 1);
	if (!rc)
		rc =
		    kv(c, core, j ? "row_max_acc" : "row_max", xb, xs, dt, -1, g->m, ms, dt, tr, w);
	if (!rc && j > 0) /* rescale the sum so far to the new maximum */
		rc = kv(c, core, "exp_sub", g->mold, ms, dt, g->m, g->f, fs, f32, tr, 1);
	if (!rc && j > 0) {
		struct spyre_vec v = { 0 };
		v.in[0] = g->s;
		v.in[1] = g->f;
		v.in_stride[0] = v.in_stride[1] = fs;
		v.dtype = v.out_dtype = f32;
		v.out = g->s;
		v.out_stride = fs;
		v.rows = (uint32_t)tr;
		v.cols = 1;
		rc = plan__vec(c, core, "mul", &v);
	}
	if (!rc)
		rc = kv(c, core, "exp_sub", xb, xs, dt, g->m, g->e, (uint32_t)g->cw, f32, tr, w);
	if (!rc)
		rc = kv(c, core, j ? "row_sum_acc" : "row_sum", g->e, (uint32_t)g->cw, f32, -1,
			g->s, fs, f32, tr, w);
	return rc;
}

/* log_softmax's pass 2 for chunk j: out = x - (M + log S), the row constant made at the
 * first chunk (in g->f, fp32), the chunk converted to fp32 in g->e first. */
static int log_chunk(struct plan_ctx *c, const struct sgeom *g, int core, int64_t j, uint32_t xb,
		     uint32_t ob, int64_t tr, int64_t w, int64_t ns)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	enum spyre_dtype dt = x->ddt, f32 = SPYRE_DTYPE_FLOAT32;
	uint32_t ms = STICK / spyre_dtype_size(dt), fs = STICK / 4, cw = (uint32_t)g->cw;
	int rc = 0;
	if (j == 0) {
		rc = kv(c, core, "copy", g->m, ms, dt, -1, g->mold, fs, f32, tr, 1);
		if (!rc)
			rc = kv(c, core, "log", g->s, fs, f32, -1, g->f, fs, f32, tr, 1);
		if (!rc)
			rc = kv(c, core, "add", g->mold, fs, f32, g->f, g->f, fs, f32, tr, 1);
	}
	if (!rc)
		rc = kv(c, core, "copy", xb, cw, dt, -1, g->e, cw, f32, tr, w);
	if (!rc && w < ns * o->eps) /* the pad lanes of the output stay zero */
		rc =
		    plan__zero_fill(c, core, ob, (uint32_t)tr, (uint32_t)(ns * o->eps), cw, o->ddt);
	return rc ? rc : kv(c, core, "sub", g->e, cw, f32, g->f, ob, cw, o->ddt, tr, w);
}

static int online_tile(struct plan_ctx *c, const struct sgeom *g, int core, int64_t r0, int64_t tr,
		       int64_t *seq)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	uint32_t xs = (uint32_t)g->cw, fs = STICK / 4;
	int64_t nch = (x->cols + g->cw - 1) / g->cw;
	int rc = 0;
	for (int pass = 0; pass < 2 && !rc; pass++)
		for (int64_t j = 0; j < nch && !rc; j++, (*seq)++) {
			int64_t c0 = j * g->cw, w = x->cols - c0 < g->cw ? x->cols - c0 : g->cw;
			int64_t ns = (w + x->eps - 1) / x->eps;
			uint32_t xb = g->x[*seq % 2], ob = g->o[*seq % 2];
			rc = plan__dma_block(c, core, 1, x, r0, tr, c0 / x->eps, ns, xb,
					     xs * x->esize);
			if (!rc && pass == 0)
				rc = online_step(c, g, core, j, xb, tr, w, xs);
			if (rc || pass == 0)
				continue;
			if (c->op->name[0] == 'l') { /* log_softmax */
				rc = log_chunk(c, g, core, j, xb, ob, tr, w, ns);
				if (!rc)
					rc = plan__dma_block(c, core, 0, o, r0, tr, c0 / o->eps, ns,
							     ob, (uint32_t)g->cw * o->esize);
				continue;
			}
			rc = kv(c, core, "exp_sub", xb, xs, x->ddt, g->m, g->e, (uint32_t)g->cw,
				SPYRE_DTYPE_FLOAT32, tr, w);
			if (!rc && w < ns * o->eps) /* the pad lanes of the output stay zero */
				rc = plan__zero_fill(c, core, ob, (uint32_t)tr,
						     (uint32_t)(ns * o->eps), (uint32_t)g->cw,
						     o->ddt);
			struct spyre_vec v = { 0 };
			v.in[0] = g->e;
			v.in[1] = g->s;
			v.in_stride[0] = (uint32_t)g->cw;
			v.in_stride[1] = fs;
			v.bcast_col = 2;
			v.dtype = SPYRE_DTYPE_FLOAT32;
			v.out = ob;
			v.out_stride = (uint32_t)g->cw;
			v.out_dtype = o->ddt;
			v.rows = (uint32_t)tr;
			v.cols = (uint32_t)w;
			if (!rc)
				rc = plan__vec(c, core, "mul_recip", &v);
			if (!rc)
				rc = plan__dma_block(c, core, 0, o, r0, tr, c0 / o->eps, ns, ob,
						     (uint32_t)g->cw * o->esize);
		}
	return rc;
}

static int build_online(struct plan_ctx *c, const struct plan_variant *pv)
{
	struct sgeom g;
	int rc = sgeom_of(c, pv, &g);
	const struct plan_tensor *x = &c->in[0];
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi, seq = 0;
		plan__split(x->rows, c->launch->ncores, k, &lo, &hi);
		for (int64_t r0 = lo; r0 < hi && !rc; r0 += g.tr) {
			int64_t tr = hi - r0 < g.tr ? hi - r0 : g.tr;
			rc = online_tile(c, &g, k, r0, tr, &seq);
		}
	}
	return rc;
}

/* Only for rows that `fused_lx_rows*` cannot hold (a row and its output in half of LX): where
 * both plan, which one is fastest could depend on the core count, and so would the bits. */
int plan__variants_softmax_cols(const struct plan_ctx *c, struct plan_variant *out)
{
	uint64_t row = (uint64_t)(c->in[0].sticks + c->out.sticks) * STICK;
	if (row <= c->hw->lx_bytes / 2 / STICK * STICK)
		return 0;
	snprintf(out->name, sizeof(out->name), "online_cols4096");
	out->build = build_online;
	out->a = 4096;
	return 1;
}
