/* layer_norm and rms_norm over rows wider than LX holds (`chunked_cols4096`): each tile of rows
 * walks its row in column chunks of whole sticks, in passes over the input, everything in fp32
 * and the output rounded once:
 *  rms_norm:   pass 1  s = sum x^2;                 r = rsqrt(s / n + eps)
 *              pass 2  out = x * r * w
 *  layer_norm: pass 1  mean = sum x / n
 *              pass 2  v = sum (x - mean)^2;        r = rsqrt(v / n + eps)   (two-pass variance)
 *              pass 3  out = (x - mean) * r * w + b
 * The input is read two or three times, against once for `fused_lx_rows*`; it is offered only
 * for rows that plan cannot hold. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u
#define F32   SPYRE_DTYPE_FLOAT32

struct ngeom {
	int64_t tr, cw;
	uint32_t x[2], o[2], p[2], e, pf, s, mean, r, end;
};

static int ngeom_of(const struct plan_ctx *c, const struct plan_variant *pv, struct ngeom *g)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	int64_t cols = x->sticks * x->eps;
	g->cw = pv->a < cols ? pv->a : cols;
	g->tr = 16;
	uint64_t tr = (uint64_t)g->tr, cw = (uint64_t)g->cw, at = 0;
#define TAKE(field, bytes) (g->field = (uint32_t)at, at += plan__align((bytes), STICK))
	TAKE(x[0], tr * cw * x->esize);
	TAKE(x[1], tr * cw * x->esize);
	TAKE(o[0], tr * cw * o->esize);
	TAKE(o[1], tr * cw * o->esize);
	TAKE(p[0], 2 * cw * x->esize); /* weight and bias chunks */
	TAKE(p[1], 2 * cw * x->esize);
	TAKE(e, tr * cw * 4);
	TAKE(pf, cw * 4);
	TAKE(s, tr * STICK);
	TAKE(mean, tr * STICK);
	TAKE(r, tr * STICK);
#undef TAKE
	if (at > c->hw->lx_bytes)
		return err_set(ERR_LIMIT, "a %lldx%lld %s chunk does not fit LX", (long long)g->tr,
			       (long long)g->cw, c->op->name);
	g->end = (uint32_t)at;
	return 0;
}

/* One kernel over rows x cols: in0 (stride s0, dtype dt); in1 at `in1` with stride s1 (0: a
 * row for every row), or one value per row when s1 is STICK / 4 and col1, or none (< 0). */
static int nv(struct plan_ctx *c, int core, const char *k, uint32_t in0, uint32_t s0,
	      enum spyre_dtype dt, int64_t in1, uint32_t s1, int col1, uint32_t out, uint32_t so,
	      enum spyre_dtype odt, int64_t rows, int64_t cols, float sc0, float sc1)
{
	struct spyre_vec v = { 0 };
	v.in[0] = in0;
	v.in_stride[0] = s0;
	if (in1 >= 0) {
		v.in[1] = (uint32_t)in1;
		v.in_stride[1] = s1;
		v.bcast_col = col1 ? 2 : 0;
	}
	v.dtype = dt;
	v.out = out;
	v.out_stride = so;
	v.out_dtype = odt;
	v.rows = (uint32_t)rows;
	v.cols = (uint32_t)cols;
	v.scalar[0] = sc0;
	v.scalar[1] = sc1;
	return plan__vec(c, core, k, &v);
}

#define PER_ROW (STICK / 4)

/* Pass `pass` over a chunk of tr rows x w columns already converted to fp32 in g->e. */
static int accumulate(struct plan_ctx *c, const struct ngeom *g, int core, int pass, int64_t j,
		      int64_t tr, int64_t w)
{
	uint32_t es = (uint32_t)g->cw;
	int ln = strcmp(c->op->name, "layer_norm") == 0, rc = 0;
	if (ln && pass == 0)
		return nv(c, core, j ? "row_sum_acc" : "row_sum", g->e, es, F32, -1, 0, 0, g->s,
			  PER_ROW, F32, tr, w, 0, 0);
	if (ln) /* pass 1: (x - mean)^2 */
		rc = nv(c, core, "sub", g->e, es, F32, g->mean, PER_ROW, 1, g->e, es, F32, tr, w, 0,
			0);
	if (!rc)
		rc = nv(c, core, "mul", g->e, es, F32, g->e, es, 0, g->e, es, F32, tr, w, 0, 0);
	return rc ? rc
		  : nv(c, core, j ? "row_sum_acc" : "row_sum", g->e, es, F32, -1, 0, 0, g->s,
		       PER_ROW, F32, tr, w, 0, 0);
}

/* Between passes: the mean (after layer_norm's first) or r = rsqrt(s / n + eps). */
static int between(struct plan_ctx *c, const struct ngeom *g, int core, int pass, int64_t tr)
{
	float inv = (float)(1.0 / (double)c->in[0].cols), eps = (float)c->p.eps;
	if (strcmp(c->op->name, "layer_norm") == 0 && pass == 0)
		return nv(c, core, "scale", g->s, PER_ROW, F32, -1, 0, 0, g->mean, PER_ROW, F32, tr,
			  1, inv, 0);
	int rc =
	    nv(c, core, "scale", g->s, PER_ROW, F32, -1, 0, 0, g->r, PER_ROW, F32, tr, 1, inv, eps);
	return rc ? rc
		  : nv(c, core, "rsqrt", g->r, PER_ROW, F32, -1, 0, 0, g->r, PER_ROW, F32, tr, 1, 0,
		       0);
}

/* The last pass over one chunk: out = ((x - mean)) * r * w (+ b), into `ob`. */
static int output(struct plan_ctx *c, const struct ngeom *g, int core, uint32_t pb, uint32_t ob,
		  int64_t tr, int64_t w)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	uint32_t es = (uint32_t)g->cw;
	int ln = strcmp(c->op->name, "layer_norm") == 0, rc = 0;
	if (ln)
		rc = nv(c, core, "sub", g->e, es, F32, g->mean, PER_ROW, 1, g->e, es, F32, tr, w, 0,
			0);
	if (!rc)
		rc =
		    nv(c, core, "mul", g->e, es, F32, g->r, PER_ROW, 1, g->e, es, F32, tr, w, 0, 0);
	if (!rc)
		rc = nv(c, core, "copy", pb, 0, x->ddt, -1, 0, 0, g->pf, 0, F32, 1, w, 0, 0);
	if (!rc)
		rc = nv(c, core, "mul", g->e, es, F32, g->pf, 0, 0, ln ? g->e : ob, es,
			ln ? F32 : o->ddt, tr, w, 0, 0);
	if (!rc && ln)
		rc = nv(c, core, "copy", pb + (uint32_t)g->cw * x->esize, 0, x->ddt, -1, 0, 0,
			g->pf, 0, F32, 1, w, 0, 0);
	if (!rc && ln)
		rc = nv(c, core, "add", g->e, es, F32, g->pf, 0, 0, ob, es, o->ddt, tr, w, 0, 0);
	return rc;
}

static int chunk(struct plan_ctx *c, const struct ngeom *g, int core, int pass, int last,
		 int64_t r0, int64_t tr, int64_t j, int64_t seq)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	int64_t c0 = j * g->cw, w = x->cols - c0 < g->cw ? x->cols - c0 : g->cw;
	int64_t ns = (w + x->eps - 1) / x->eps;
	uint32_t xb = g->x[seq % 2], ob = g->o[seq % 2], pb = g->p[seq % 2];
	int rc =
	    plan__dma_block(c, core, 1, x, r0, tr, c0 / x->eps, ns, xb, (uint32_t)g->cw * x->esize);
	for (int t = 1; t < c->nin && !rc && pass == last; t++)
		rc = plan__dma_row(c, core, 1, &c->in[t], 0, c0 / x->eps, ns,
				   pb + (uint32_t)((t - 1) * g->cw) * x->esize);
	if (!rc)
		rc = nv(c, core, "copy", xb, (uint32_t)g->cw, x->ddt, -1, 0, 0, g->e,
			(uint32_t)g->cw, F32, tr, w, 0, 0);
	if (rc || pass < last)
		return rc ? rc : accumulate(c, g, core, pass, j, tr, w);
	if (w < ns * o->eps) /* the pad lanes of the output stay zero */
		rc = plan__zero_fill(c, core, ob, (uint32_t)tr, (uint32_t)(ns * o->eps),
				     (uint32_t)g->cw, o->ddt);
	if (!rc)
		rc = output(c, g, core, pb, ob, tr, w);
	return rc ? rc
		  : plan__dma_block(c, core, 0, o, r0, tr, c0 / o->eps, ns, ob,
				    (uint32_t)g->cw * o->esize);
}

static int build_chunked(struct plan_ctx *c, const struct plan_variant *pv)
{
	struct ngeom g;
	int rc = ngeom_of(c, pv, &g);
	const struct plan_tensor *x = &c->in[0];
	int last = strcmp(c->op->name, "layer_norm") == 0 ? 2 : 1;
	int64_t nch = (x->cols + g.cw - 1) / g.cw;
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi, seq = 0;
		plan__split(x->rows, c->launch->ncores, k, &lo, &hi);
		for (int64_t r0 = lo; r0 < hi && !rc; r0 += g.tr) {
			int64_t tr = hi - r0 < g.tr ? hi - r0 : g.tr;
			for (int pass = 0; pass <= last && !rc; pass++) {
				for (int64_t j = 0; j < nch && !rc; j++, seq++)
					rc = chunk(c, &g, k, pass, last, r0, tr, j, seq);
				if (!rc && pass < last)
					rc = between(c, &g, k, pass, tr);
			}
		}
	}
	return rc;
}

int plan__variants_norm_cols(const struct plan_ctx *c, struct plan_variant *out)
{
	snprintf(out->name, sizeof(out->name), "chunked_cols4096");
	out->build = build_chunked;
	out->a = 4096;
	return 1;
}
