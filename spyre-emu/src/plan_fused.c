/* Plans of scaled_dot_product_attention (swiglu_mlp's are in plan_ffn.c): per (batch, tile of
 * query rows) on one core: scores = q @ k^T in fp32, scaled and (causal) masked, softmax, then
 * @ v; scores and probabilities stay in LX. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

static int64_t pad_to(int64_t x, int64_t a)
{
	return (x + a - 1) / a * a;
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
	if (strcmp(c->op->name, "swiglu_mlp") == 0)
		return plan__variants_ffn(c, out);
	static const int64_t tq[] = { 16, 64 };
	for (size_t i = 0; i < 2; i++) {
		snprintf(out[n].name, sizeof(out[n].name), "q_tiles%lld", (long long)tq[i]);
		out[n].build = build_sdpa;
		out[n].a = tq[i];
		n++;
	}
	return n + plan__variants_flash(c, out + n);
}
