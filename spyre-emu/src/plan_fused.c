/* Plans of the fused ops: swiglu_mlp, (silu(x @ w1) * (x @ w3)) @ w2, and
 * scaled_dot_product_attention.
 *
 * swiglu_mlp has two plans. `unfused` runs it as a graph of separate ops: two matmuls, a
 * pointwise silu_mul and a third matmul, each intermediate written to device memory and read
 * back, with a barrier between phases. `fused_ffn_split` never lets an intermediate leave LX:
 * each core takes a block of x's rows and a chunk of the hidden dimension F, computes its slice
 * of silu(x @ w1) * (x @ w3) and multiplies it by its rows of w2 at once; the partial sums of the
 * cores that share a row block are added over the ring (a tree of adjacent partners, as
 * SPYRE.md's K-split), and the first core of the block stores the result.
 *
 * Attention: per (batch, tile of query rows) on one core: scores = q @ k^T in fp32, scaled and
 * (causal) masked, softmax, then @ v; scores and probabilities stay in LX. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

static const struct spyre_op_info op_silu_mul = { .name = "silu_mul",
						  .cls = SPYRE_OPC_POINTWISE,
						  .nin = 2 };

static int64_t pad_to(int64_t x, int64_t a)
{
	return (x + a - 1) / a * a;
}

/* A matmul phase of the unfused plan: out = a @ b with the first tiling that fits LX. */
static int mm_phase(const struct plan_ctx *c, const struct plan_tensor *a,
		    const struct plan_tensor *b, const struct plan_tensor *out)
{
	struct plan_ctx sub = *c;
	sub.op = spyre_op_find("mm");
	sub.nin = 2;
	sub.in[0] = *a;
	sub.in[1] = *b;
	sub.out = *out;
	struct plan_variant v[PLAN_VARIANTS_MAX];
	int n = plan_variants(&sub, v);
	if (n < 0)
		return n;
	int pick = 0;
	for (int i = 0; i < n; i++)
		if (v[i].a == 128 && v[i].b == 128)
			pick = i;
	return plan__build_mm(&sub, &v[pick]);
}

static int build_swiglu_unfused(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *x = &c->in[0];
	int64_t T = x->rows, F = c->in[1].cols;
	int64_t shape[2] = { T, F };
	enum spyre_dtype hd = x->l.host_dtype;
	struct plan_tensor h1, h3, g;
	uint64_t each = pv->scratch_bytes / 3;
	int rc = plan__scratch_tensor(&h1, shape, 2, hd, c->scratch);
	if (!rc)
		rc = plan__scratch_tensor(&h3, shape, 2, hd, c->scratch + each);
	if (!rc)
		rc = plan__scratch_tensor(&g, shape, 2, hd, c->scratch + 2 * each);
	if (!rc)
		rc = mm_phase(c, x, &c->in[1], &h1);
	if (!rc)
		rc = mm_phase(c, x, &c->in[2], &h3);
	if (!rc)
		rc = plan__barrier_all(c);
	if (!rc) {
		struct plan_ctx sub = *c;
		sub.op = &op_silu_mul;
		sub.nin = 2;
		sub.in[0] = h1;
		sub.in[1] = h3;
		sub.out = g;
		struct plan_variant v = { .a = 64 };
		rc = plan__build_pointwise(&sub, &v);
	}
	if (!rc)
		rc = plan__barrier_all(c);
	if (!rc)
		rc = mm_phase(c, &g, &c->in[3], &c->out);
	return rc;
}

/* Loads `ns` stick columns [s0, s0 + ns) of a [K, N] operand (rows brow0.. of it) as blocks of
 * K rows x one stick at `lx`. */
static int load_stick_columns(struct plan_ctx *c, int core, const struct plan_tensor *b,
			      int64_t brow0, int64_t k, int64_t s0, int64_t ns, uint32_t lx)
{
	for (int64_t j = 0; j < ns; j++) {
		struct spyre_insn d = { .op = SPYRE_OP_DMA_LOAD };
		d.u.dma.dev_addr = plan_stick_addr(b, brow0, s0 + j);
		d.u.dma.lx_addr = lx + (uint32_t)(j * k) * STICK;
		d.u.dma.sticks = 1;
		d.u.dma.rows = (uint32_t)k;
		d.u.dma.dev_stride = (uint64_t)b->lead_step[b->ndim - 2] * STICK;
		d.u.dma.lx_stride = STICK;
		int rc = spyre_program_push(c->launch, core, &d);
		if (rc)
			return rc;
	}
	return 0;
}

/* C[m x (ns * eps)] = A[m x k] @ the stick-column blocks at `bl` (one MATMUL per column). */
static int matmul_columns(struct plan_ctx *c, int core, uint32_t a, uint32_t a_stride,
			  enum spyre_dtype dt, int eps, uint32_t m, uint32_t k, uint32_t bl,
			  int64_t ns, uint32_t cl, uint32_t c_stride)
{
	for (int64_t j = 0; j < ns; j++) {
		struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
		struct spyre_matmul *x = &mm.u.mm;
		x->a = a;
		x->a_stride = a_stride;
		x->b = bl + (uint32_t)(j * k) * STICK;
		x->b_stride = (uint32_t)eps;
		x->c = cl + (uint32_t)(j * eps) * 4;
		x->c_stride = c_stride;
		x->m = m;
		x->k = k;
		x->n = (uint32_t)eps;
		x->in_dtype = dt;
		x->out_dtype = SPYRE_DTYPE_FLOAT32;
		int rc = spyre_program_push(c->launch, core, &mm);
		if (rc)
			return rc;
	}
	return 0;
}

static int vec2(struct plan_ctx *c, int core, const char *k, uint32_t in0, uint32_t in1,
		uint32_t stride, enum spyre_dtype dt, uint32_t out, uint32_t ostride,
		enum spyre_dtype odt, uint32_t rows, uint32_t cols)
{
	struct spyre_vec v = { 0 };
	v.in[0] = in0;
	v.in[1] = in1;
	v.in_stride[0] = v.in_stride[1] = stride;
	v.dtype = dt;
	v.out = out;
	v.out_stride = ostride;
	v.out_dtype = odt;
	v.rows = rows;
	v.cols = cols;
	return plan__vec(c, core, k, &v);
}

struct ffn_geom {
	int64_t T, H, F, Hp, fc, nF, nT, tb;
	uint32_t xl, w1l, w3l, h1, h3, g, w2l, p, r, o, end;
};

static int ffn_geom(const struct plan_ctx *c, struct ffn_geom *g)
{
	const struct plan_tensor *x = &c->in[0];
	int eps = x->eps, cores = c->launch->ncores;
	g->T = x->rows, g->H = x->cols, g->F = c->in[1].cols;
	g->Hp = pad_to(g->H, eps);
	int64_t fsticks = (g->F + eps - 1) / eps;
	g->nF = fsticks < cores ? fsticks : cores;
	g->fc = (fsticks + g->nF - 1) / g->nF * eps;
	g->nF = (g->F + g->fc - 1) / g->fc;
	g->nT = cores / g->nF;
	if (g->nT > g->T)
		g->nT = g->T;
	g->tb = (g->T + g->nT - 1) / g->nT;
	uint64_t es = x->esize, tb = (uint64_t)g->tb, fc = (uint64_t)g->fc, Hp = (uint64_t)g->Hp;
	g->xl = 0;
	g->w1l = g->xl + (uint32_t)(tb * Hp * es);
	g->w3l = g->w1l + (uint32_t)(Hp * fc * es);
	g->h1 = g->w3l + (uint32_t)(Hp * fc * es);
	g->h3 = g->h1 + (uint32_t)(tb * fc * 4);
	g->g = g->h3 + (uint32_t)(tb * fc * 4);
	g->w2l = g->g + plan__align(tb * fc * es, STICK);
	g->p = g->w2l + (uint32_t)(fc * Hp * es);
	g->r = g->p + (uint32_t)(tb * Hp * 4);
	g->o = g->r + (uint32_t)(tb * Hp * 4);
	uint64_t end = (uint64_t)g->o + tb * Hp * es;
	if (end > c->hw->lx_bytes)
		return err_set(ERR_LIMIT, "fused MLP slice needs %llu LX bytes",
			       (unsigned long long)end);
	g->end = (uint32_t)end;
	return 0;
}

/* Adds the partial sums of the nF cores of one row block over the ring: at each step, the
 * core `step` places along sends to its partner, which adds. */
static int ffn_reduce(struct plan_ctx *c, const struct ffn_geom *g, int64_t t, int64_t tb_rows)
{
	uint32_t bytes = (uint32_t)(tb_rows * g->Hp * 4);
	for (int64_t step = 1; step < g->nF; step *= 2) {
		{
			for (int64_t j = 0; j + step < g->nF; j += 2 * step) {
				int dst = (int)(t * g->nF + j), src = (int)(t * g->nF + j + step);
				struct spyre_insn s = { .op = SPYRE_OP_SEND };
				s.u.ring = (struct spyre_ring){ .peer = dst,
								.lx_addr = g->p,
								.bytes = bytes };
				struct spyre_insn r = { .op = SPYRE_OP_RECV };
				r.u.ring = (struct spyre_ring){ .peer = src,
								.lx_addr = g->r,
								.bytes = bytes };
				int rc = spyre_program_push(c->launch, src, &s);
				if (!rc)
					rc = spyre_program_push(c->launch, dst, &r);
				if (!rc)
					rc = vec2(c, dst, "add", g->p, g->r, (uint32_t)g->Hp,
						  SPYRE_DTYPE_FLOAT32, g->p, (uint32_t)g->Hp,
						  SPYRE_DTYPE_FLOAT32, (uint32_t)tb_rows,
						  (uint32_t)g->Hp);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

static int ffn_core(struct plan_ctx *c, const struct ffn_geom *g, int core)
{
	const struct plan_tensor *x = &c->in[0], *w1 = &c->in[1], *w3 = &c->in[2], *w2 = &c->in[3];
	int64_t t = core / g->nF, f = core % g->nF;
	int64_t r0 = t * g->tb, tb = g->T - r0 < g->tb ? g->T - r0 : g->tb;
	int64_t f0 = f * g->fc, fc = g->F - f0 < g->fc ? g->F - f0 : g->fc;
	int64_t fcp = pad_to(fc, x->eps), ns = fcp / x->eps, hs = g->Hp / x->eps;
	uint32_t xrow = (uint32_t)(hs * STICK);
	int rc = 0;
	for (int64_t j = 0; j < tb && !rc; j++)
		rc = plan__dma_row(c, core, 1, x, r0 + j, 0, hs, g->xl + (uint32_t)j * xrow);
	if (!rc)
		rc = load_stick_columns(c, core, w1, 0, g->H, f0 / x->eps, ns, g->w1l);
	if (!rc)
		rc = load_stick_columns(c, core, w3, 0, g->H, f0 / x->eps, ns, g->w3l);
	if (!rc)
		rc = matmul_columns(c, core, g->xl, xrow / x->esize, x->ddt, x->eps, (uint32_t)tb,
				    (uint32_t)g->H, g->w1l, ns, g->h1, (uint32_t)fcp);
	if (!rc)
		rc = matmul_columns(c, core, g->xl, xrow / x->esize, x->ddt, x->eps, (uint32_t)tb,
				    (uint32_t)g->H, g->w3l, ns, g->h3, (uint32_t)fcp);
	if (!rc)
		rc = vec2(c, core, "silu_mul", g->h1, g->h3, (uint32_t)fcp, SPYRE_DTYPE_FLOAT32,
			  g->g, (uint32_t)fcp, x->ddt, (uint32_t)tb, (uint32_t)fcp);
	for (int64_t j = 0; j < fc && !rc; j++) /* w2's rows of this chunk, row-major */
		rc = plan__dma_row(c, core, 1, w2, f0 + j, 0, hs, g->w2l + (uint32_t)j * xrow);
	struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
	mm.u.mm = (struct spyre_matmul){ .a = g->g,
					 .b = g->w2l,
					 .c = g->p,
					 .m = (uint32_t)tb,
					 .k = (uint32_t)fc,
					 .n = (uint32_t)g->Hp,
					 .a_stride = (uint32_t)fcp,
					 .b_stride = xrow / x->esize,
					 .c_stride = (uint32_t)g->Hp,
					 .in_dtype = x->ddt,
					 .out_dtype = SPYRE_DTYPE_FLOAT32 };
	if (!rc)
		rc = spyre_program_push(c->launch, core, &mm);
	return rc;
}

static int build_swiglu_fused(struct plan_ctx *c, const struct plan_variant *pv)
{
	(void)pv;
	struct ffn_geom g = { 0 };
	int rc = ffn_geom(c, &g);
	for (int k = 0; k < g.nT * g.nF && !rc; k++)
		rc = ffn_core(c, &g, k);
	for (int64_t t = 0; t < g.nT && !rc; t++) {
		int64_t r0 = t * g.tb, tb = g.T - r0 < g.tb ? g.T - r0 : g.tb;
		rc = ffn_reduce(c, &g, t, tb);
	}
	/* the first core of each row block rounds and stores its rows */
	for (int64_t t = 0; t < g.nT && !rc; t++) {
		const struct plan_tensor *o = &c->out;
		int core = (int)(t * g.nF);
		int64_t r0 = t * g.tb, tb = g.T - r0 < g.tb ? g.T - r0 : g.tb;
		struct spyre_vec v = { 0 };
		v.in[0] = g.p;
		v.in_stride[0] = (uint32_t)g.Hp;
		v.dtype = SPYRE_DTYPE_FLOAT32;
		v.out = g.o;
		v.out_stride = (uint32_t)g.Hp;
		v.out_dtype = o->ddt;
		v.rows = (uint32_t)tb;
		v.cols = (uint32_t)g.Hp;
		rc = plan__vec(c, core, "copy", &v);
		uint32_t orow = (uint32_t)(g.Hp * o->esize);
		for (int64_t j = 0; j < tb && !rc; j++)
			rc = plan__dma_row(c, core, 0, o, r0 + j, 0, o->sticks,
					   g.o + (uint32_t)j * orow);
	}
	return rc;
}

/* ---- attention ---- */

struct sdpa_geom {
	int64_t B, L, S, D, Dv, Dp, Dvp, Sp, tq;
	uint32_t q, k, v, s, p, o, o16, end;
};

static int sdpa_geom(const struct plan_ctx *c, const struct plan_variant *pv, struct sdpa_geom *g)
{
	const struct plan_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
	int eps = q->eps;
	uint64_t es = q->esize;
	g->L = q->shape[q->ndim - 2];
	g->S = k->shape[k->ndim - 2];
	g->B = q->rows / g->L;
	g->D = q->cols;
	g->Dv = v->cols;
	g->Dp = pad_to(g->D, eps);
	g->Dvp = pad_to(g->Dv, eps);
	g->Sp = pad_to(g->S, eps);
	g->tq = pv->a < g->L ? pv->a : g->L;
	uint64_t tq = (uint64_t)g->tq;
	g->q = 0;
	g->k = g->q + (uint32_t)(tq * g->Dp * es);
	g->v = g->k + (uint32_t)((uint64_t)g->S * g->Dp * es);
	g->s = g->v + (uint32_t)((uint64_t)g->S * g->Dvp * es);
	g->p = g->s + (uint32_t)(tq * g->Sp * 4);
	g->o = g->p + (uint32_t)(tq * g->Sp * es);
	g->o16 = g->o + (uint32_t)(tq * g->Dvp * 4);
	uint64_t end = g->o16 + tq * g->Dvp * es;
	if (2 * end > c->hw->lx_bytes)
		return err_set(ERR_LIMIT,
			       "attention tile of %lld query rows needs %llu LX bytes "
			       "twice",
			       (long long)g->tq, (unsigned long long)end);
	g->end = (uint32_t)end;
	return 0;
}

static int sdpa_item(struct plan_ctx *c, const struct sdpa_geom *g, int core, int64_t b, int64_t q0,
		     uint32_t base)
{
	const struct plan_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2], *o = &c->out;
	int64_t tq = g->L - q0 < g->tq ? g->L - q0 : g->tq;
	int64_t ds = g->Dp / q->eps, dvs = g->Dvp / q->eps;
	uint32_t qrow = (uint32_t)(ds * STICK);
	int rc = 0;
	for (int64_t j = 0; j < tq && !rc; j++)
		rc = plan__dma_row(c, core, 1, q, b * g->L + q0 + j, 0, ds,
				   base + g->q + (uint32_t)j * qrow);
	int64_t kb = k->rows / g->S > 1 ? b : 0;
	for (int64_t j = 0; j < g->S && !rc; j++)
		rc = plan__dma_row(c, core, 1, k, kb * g->S + j, 0, ds,
				   base + g->k + (uint32_t)j * qrow);
	struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
	mm.u.mm = (struct spyre_matmul){ .a = base + g->q,
					 .b = base + g->k,
					 .c = base + g->s,
					 .m = (uint32_t)tq,
					 .k = (uint32_t)g->D,
					 .n = (uint32_t)g->S,
					 .a_stride = qrow / q->esize,
					 .b_stride = qrow / q->esize,
					 .c_stride = (uint32_t)g->Sp,
					 .in_dtype = q->ddt,
					 .out_dtype = SPYRE_DTYPE_FLOAT32,
					 .b_trans = 1 };
	if (!rc)
		rc = spyre_program_push(c->launch, core, &mm);
	struct spyre_vec sm = { 0 };
	sm.in[0] = base + g->s;
	sm.in_stride[0] = (uint32_t)g->Sp;
	sm.dtype = SPYRE_DTYPE_FLOAT32;
	sm.out = base + g->s;
	sm.out_stride = (uint32_t)g->Sp;
	sm.out_dtype = SPYRE_DTYPE_FLOAT32;
	sm.rows = (uint32_t)tq;
	sm.cols = (uint32_t)g->S;
	sm.scalar[0] = (float)(c->p.has_scale ? c->p.scale : 1.0 / sqrt((double)g->D));
	sm.scalar[1] = (float)q0;
	sm.scalar[2] = c->p.causal ? 1.0f : 0.0f;
	if (!rc)
		rc = plan__vec(c, core, "attn_scale_mask", &sm);
	sm.out = base + g->p;
	sm.out_stride = (uint32_t)g->Sp;
	sm.out_dtype = q->ddt;
	memset(sm.scalar, 0, sizeof(sm.scalar));
	if (!rc)
		rc = plan__vec(c, core, "softmax", &sm);
	int64_t vb = v->rows / g->S > 1 ? b : 0;
	if (!rc)
		rc = load_stick_columns(c, core, v, vb * g->S, g->S, 0, dvs, base + g->v);
	if (!rc)
		rc = matmul_columns(c, core, base + g->p, (uint32_t)g->Sp, q->ddt, q->eps,
				    (uint32_t)tq, (uint32_t)g->S, base + g->v, dvs, base + g->o,
				    (uint32_t)g->Dvp);
	struct spyre_vec cp = { 0 };
	cp.in[0] = base + g->o;
	cp.in_stride[0] = (uint32_t)g->Dvp;
	cp.dtype = SPYRE_DTYPE_FLOAT32;
	cp.out = base + g->o16;
	cp.out_stride = (uint32_t)g->Dvp;
	cp.out_dtype = o->ddt;
	cp.rows = (uint32_t)tq;
	cp.cols = (uint32_t)g->Dvp;
	if (!rc)
		rc = plan__vec(c, core, "copy", &cp);
	uint32_t orow = (uint32_t)(g->Dvp * o->esize);
	for (int64_t j = 0; j < tq && !rc; j++)
		rc = plan__dma_row(c, core, 0, o, b * g->L + q0 + j, 0, dvs,
				   base + g->o16 + (uint32_t)j * orow);
	return rc;
}

static int build_sdpa(struct plan_ctx *c, const struct plan_variant *pv)
{
	struct sdpa_geom g = { 0 };
	int rc = sdpa_geom(c, pv, &g);
	int64_t per = (g.L + g.tq - 1) / g.tq, items = g.B * per;
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi;
		plan__split(items, c->launch->ncores, k, &lo, &hi);
		for (int64_t i = lo; i < hi && !rc; i++)
			rc = sdpa_item(c, &g, k, i / per, i % per * g.tq,
				       (uint32_t)((i % 2) * g.end));
	}
	return rc;
}

int plan__variants_fused(const struct plan_ctx *c, struct plan_variant *out)
{
	int n = 0;
	if (strcmp(c->op->name, "swiglu_mlp") == 0) {
		const struct plan_tensor *x = &c->in[0];
		snprintf(out[n].name, sizeof(out[n].name), "fused_ffn_split");
		out[n++].build = build_swiglu_fused;
		snprintf(out[n].name, sizeof(out[n].name), "unfused");
		out[n].build = build_swiglu_unfused;
		out[n].scratch_bytes =
		    3 * plan__align((uint64_t)x->rows * pad_to(c->in[1].cols, 64) * 4, STICK);
		n++;
		return n;
	}
	static const int64_t tq[] = { 16, 64 };
	for (size_t i = 0; i < 2; i++) {
		snprintf(out[n].name, sizeof(out[n].name), "q_tiles%lld", (long long)tq[i]);
		out[n].build = build_sdpa;
		out[n].a = tq[i];
		n++;
	}
	return n;
}
