/* scaled_dot_product_attention over more keys than LX holds (`flash_q*_k*`): per (batch, tile
 * of query rows) on one core, the keys in chunks of whole sticks, with an online softmax (as
 * FlashAttention does). Per chunk j of keys [k0, k0 + w):
 *    S   = q @ k_j^T * scale, causal-masked at column offset k0        (fp32)
 *    m_j = max(m_{j-1}, row max of S);  a = exp(m_{j-1} - m_j)
 *    P   = exp(S - m_j);  l_j = l_{j-1} * a + row sum of P            (fp32)
 *    O   = O * a + P @ v_j                                             (fp32 accumulators)
 * and at the end out = O / l, rounded once. LX holds the query tile, O, and two sets of a key
 * chunk, a value chunk and its scores, so the next chunk's loads overlap this one's work.
 * Offered only where the whole-key tiles (plan_fused.c) do not fit LX. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

struct fgeom {
	int64_t B, L, S, D, Dv, Dp, Dvp, tq, sk;
	uint32_t q, o, o16, m, mold, al, l, k[2], v[2], s[2], p[2], end;
};

static int64_t pad_to(int64_t x, int64_t a)
{
	return (x + a - 1) / a * a;
}

static int fgeom_of(const struct plan_ctx *c, int64_t tq, int64_t sk, struct fgeom *g)
{
	const struct plan_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
	uint64_t es = q->esize, at = 0;
	g->L = q->shape[q->ndim - 2];
	g->S = k->shape[k->ndim - 2];
	g->B = q->rows / g->L;
	g->D = q->cols;
	g->Dv = v->cols;
	g->Dp = pad_to(g->D, q->eps);
	g->Dvp = pad_to(g->Dv, q->eps);
	g->tq = tq < g->L ? tq : g->L;
	g->sk = sk < pad_to(g->S, q->eps) ? sk : pad_to(g->S, q->eps);
	uint64_t t = (uint64_t)g->tq, s = (uint64_t)g->sk;
#define TAKE(field, bytes) (g->field = (uint32_t)at, at += plan__align((bytes), STICK))
	TAKE(q, t * g->Dp * es);
	TAKE(o, t * g->Dvp * 4);
	TAKE(o16, t * g->Dvp * es);
	TAKE(m, t * STICK);
	TAKE(mold, t * STICK);
	TAKE(al, t * STICK);
	TAKE(l, t * STICK);
	for (int p = 0; p < 2; p++) {
		TAKE(k[p], s * g->Dp * es);
		TAKE(v[p], s * g->Dvp * es);
		TAKE(s[p], t * s * 4);
		TAKE(p[p], t * s * es);
	}
#undef TAKE
	if (at > c->hw->lx_bytes)
		return err_set(
		    ERR_LIMIT,
		    "attention tile of %lld query rows and %lld keys needs %llu LX bytes",
		    (long long)g->tq, (long long)g->sk, (unsigned long long)at);
	g->end = (uint32_t)at;
	return 0;
}

/* A vector kernel over rows x cols of fp32 (or `odt` out): in1, when given, is one value per
 * row (a stick per row). */
static int fv(struct plan_ctx *c, int core, const char *kname, uint32_t in0, uint32_t s0,
	      int64_t in1, uint32_t out, uint32_t so, enum spyre_dtype odt, int64_t rows,
	      int64_t cols)
{
	struct spyre_vec v = { 0 };
	v.in[0] = in0;
	v.in_stride[0] = s0;
	if (in1 >= 0) {
		v.in[1] = (uint32_t)in1;
		v.in_stride[1] = STICK / 4;
		v.bcast_col = 2;
	}
	v.dtype = SPYRE_DTYPE_FLOAT32;
	v.out = out;
	v.out_stride = so;
	v.out_dtype = odt;
	v.rows = (uint32_t)rows;
	v.cols = (uint32_t)cols;
	return plan__vec(c, core, kname, &v);
}

static int scores(struct plan_ctx *c, const struct fgeom *g, int core, int p, int64_t tq,
		  int64_t q0, int64_t k0, int64_t w)
{
	const struct plan_tensor *q = &c->in[0];
	uint32_t qs = (uint32_t)g->Dp, ss = (uint32_t)g->sk;
	struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
	mm.u.mm = (struct spyre_matmul){ .a = g->q,
					 .b = g->k[p],
					 .c = g->s[p],
					 .m = (uint32_t)tq,
					 .k = (uint32_t)g->D,
					 .n = (uint32_t)w,
					 .a_stride = qs,
					 .b_stride = qs,
					 .c_stride = ss,
					 .in_dtype = q->ddt,
					 .out_dtype = SPYRE_DTYPE_FLOAT32,
					 .b_trans = 1 };
	int rc = spyre_program_push(c->launch, core, &mm);
	struct spyre_vec sm = { 0 };
	sm.in[0] = sm.out = g->s[p];
	sm.in_stride[0] = sm.out_stride = ss;
	sm.dtype = sm.out_dtype = SPYRE_DTYPE_FLOAT32;
	sm.rows = (uint32_t)tq;
	sm.cols = (uint32_t)w;
	sm.scalar[0] = (float)(c->p.has_scale ? c->p.scale : 1.0 / sqrt((double)g->D));
	sm.scalar[1] = (float)q0;
	sm.scalar[2] = c->p.causal ? 1.0f : 0.0f;
	sm.scalar[3] = (float)k0;
	return rc ? rc : plan__vec(c, core, "attn_scale_mask", &sm);
}

/* The online softmax step and O's update for chunk j (scores in set p). */
static int update(struct plan_ctx *c, const struct fgeom *g, int core, int p, int64_t j, int64_t tq,
		  int64_t w)
{
	enum spyre_dtype f32 = SPYRE_DTYPE_FLOAT32, dt = c->in[0].ddt;
	uint32_t fs = STICK / 4, ss = (uint32_t)g->sk, os = (uint32_t)g->Dvp;
	int rc = 0;
	if (j > 0)
		rc = fv(c, core, "copy", g->m, fs, -1, g->mold, fs, f32, tq, 1);
	if (!rc)
		rc = fv(c, core, j ? "row_max_acc" : "row_max", g->s[p], ss, -1, g->m, fs, f32, tq,
			w);
	if (!rc && j > 0)
		rc = fv(c, core, "exp_sub", g->mold, fs, g->m, g->al, fs, f32, tq, 1);
	if (!rc)
		rc = fv(c, core, "exp_sub", g->s[p], ss, g->m, g->s[p], ss, f32, tq, w);
	if (!rc && j > 0)
		rc = fv(c, core, "mul", g->l, fs, g->al, g->l, fs, f32, tq, 1);
	if (!rc)
		rc = fv(c, core, j ? "row_sum_acc" : "row_sum", g->s[p], ss, -1, g->l, fs, f32, tq,
			w);
	if (!rc)
		rc = fv(c, core, "copy", g->s[p], ss, -1, g->p[p], ss, dt, tq, w);
	if (!rc && j > 0)
		rc = fv(c, core, "mul", g->o, os, g->al, g->o, os, f32, tq, g->Dvp);
	struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
	mm.u.mm = (struct spyre_matmul){ .a = g->p[p],
					 .b = g->v[p],
					 .c = g->o,
					 .m = (uint32_t)tq,
					 .k = (uint32_t)w,
					 .n = (uint32_t)g->Dvp,
					 .a_stride = ss,
					 .b_stride = os,
					 .c_stride = os,
					 .in_dtype = dt,
					 .out_dtype = f32,
					 .accumulate = j > 0 };
	return rc ? rc : spyre_program_push(c->launch, core, &mm);
}

static int flash_item(struct plan_ctx *c, const struct fgeom *g, int core, int64_t b, int64_t q0)
{
	const struct plan_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2], *o = &c->out;
	int64_t tq = g->L - q0 < g->tq ? g->L - q0 : g->tq;
	int64_t ds = g->Dp / q->eps, dvs = g->Dvp / q->eps;
	uint32_t qrow = (uint32_t)(g->Dp * q->esize), vrow = (uint32_t)(g->Dvp * q->esize);
	int64_t kb = k->rows / g->S > 1 ? b : 0, vb = v->rows / g->S > 1 ? b : 0;
	int rc = plan__dma_block(c, core, 1, q, b * g->L + q0, tq, 0, ds, g->q, qrow);
	for (int64_t j = 0, k0 = 0; k0 < g->S && !rc; j++, k0 += g->sk) {
		if (c->p.causal && k0 > q0 + tq - 1)
			break; /* every later key is masked for every row of the tile */
		int64_t w = g->S - k0 < g->sk ? g->S - k0 : g->sk;
		int p = (int)(j % 2);
		rc = plan__dma_block(c, core, 1, k, kb * g->S + k0, w, 0, ds, g->k[p], qrow);
		if (!rc)
			rc = plan__dma_block(c, core, 1, v, vb * g->S + k0, w, 0, dvs, g->v[p],
					     vrow);
		if (!rc)
			rc = scores(c, g, core, p, tq, q0, k0, w);
		if (!rc)
			rc = update(c, g, core, p, j, tq, w);
	}
	if (!rc)
		rc = fv(c, core, "mul_recip", g->o, (uint32_t)g->Dvp, g->l, g->o16,
			(uint32_t)g->Dvp, o->ddt, tq, g->Dvp);
	return rc ? rc : plan__dma_block(c, core, 0, o, b * g->L + q0, tq, 0, dvs, g->o16, vrow);
}

static int build_flash(struct plan_ctx *c, const struct plan_variant *pv)
{
	struct fgeom g = { 0 };
	int rc = fgeom_of(c, pv->a, pv->b, &g);
	int64_t per = (g.L + g.tq - 1) / g.tq, items = g.B * per;
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi;
		plan__split(items, c->launch->ncores, k, &lo, &hi);
		for (int64_t i = lo; i < hi && !rc; i++)
			rc = flash_item(c, &g, k, i / per, i % per * g.tq);
	}
	return rc;
}

/* LX bytes of a whole-key tile of `tq` query rows (plan_fused.c's q_tiles*), twice. */
static uint64_t whole_key_bytes(const struct plan_ctx *c, int64_t tq)
{
	const struct plan_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
	uint64_t es = q->esize, S = (uint64_t)k->shape[k->ndim - 2];
	uint64_t L = (uint64_t)q->shape[q->ndim - 2], t = (uint64_t)tq < L ? (uint64_t)tq : L;
	uint64_t Dp = (uint64_t)pad_to(q->cols, q->eps), Dvp = (uint64_t)pad_to(v->cols, q->eps);
	uint64_t Sp = (uint64_t)pad_to((int64_t)S, q->eps);
	return 2 * (t * Dp * es + S * Dp * es + S * Dvp * es + t * Sp * 4 + t * Sp * es +
		    t * Dvp * 4 + t * Dvp * es);
}

int plan__variants_flash(const struct plan_ctx *c, struct plan_variant *out)
{
	static const int64_t shapes[][2] = { { 64, 512 }, { 16, 512 }, { 64, 256 } };
	if (whole_key_bytes(c, 16) <= c->hw->lx_bytes)
		return 0;
	int n = 0;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "flash_q%lld_k%lld",
			 (long long)shapes[i][0], (long long)shapes[i][1]);
		out[n].build = build_flash;
		out[n].a = shapes[i][0];
		out[n].b = shapes[i][1];
	}
	return n;
}
