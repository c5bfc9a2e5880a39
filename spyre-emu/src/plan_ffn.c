/* The plans of swiglu_mlp, (silu(x @ w1) * (x @ w3)) @ w2, x [T, H], w1 and w3 [H, F], w2 [F, H].
 *
 * `unfused` runs it as a graph of separate ops: two matmuls, a pointwise silu_mul and a third
 * matmul, each intermediate written to device memory and read back, with a barrier between
 * phases; each matmul takes the largest tiling that still gives every core a tile.
 *
 * `fused_ffn_split` never lets an intermediate leave LX, at any size. The cores form groups of
 * nF; a group takes a share of x's rows, and each core of it a slice of the FFN dimension F. A
 * core walks its rows in blocks of tb (as many as fit LX):
 *  1. g = silu(x_blk @ w1[:, slice]) * (x_blk @ w3[:, slice]), K walked in chunks of x's and
 *     the weights' rows, fp32 accumulation; g (DL16, tb x slice) stays in LX;
 *  2. for each chunk of nh output columns: the partial sum g @ w2[slice, chunk] (fp32), added
 *     over the ring with the group's other cores (a tree of adjacent partners, as a K split
 *     does), the first core of the group rounding and storing the chunk.
 * So each weight element is read once per row block, g never travels, and the partial sums
 * need only a chunk of the output in LX. */
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

/* ---- unfused ---- */

/* The plain tiling (no K split) with the most tiles up to one per core, then the largest. */
static int pick_tiling(const struct plan_ctx *sub, const struct plan_variant *v, int n)
{
	int64_t m = sub->out.rows, nn = sub->out.cols;
	int pick = -1, cores = sub->launch->ncores;
	int64_t best_use = -1, best_area = -1;
	for (int i = 0; i < n; i++) {
		if (v[i].d > 1)
			continue;
		int64_t tiles = ((m + v[i].a - 1) / v[i].a) * ((nn + v[i].b - 1) / v[i].b);
		int64_t use = tiles < cores ? tiles : cores, area = v[i].a * v[i].b;
		if (use > best_use || (use == best_use && area > best_area))
			pick = i, best_use = use, best_area = area;
	}
	return pick;
}

/* A matmul phase of the unfused plan: out = a @ b. */
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
	int pick = pick_tiling(&sub, v, n);
	if (pick < 0)
		return err_set(ERR_LIMIT, "no matmul tiling for an unfused phase");
	return plan__build_mm(&sub, &v[pick]);
}

static int build_unfused(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *x = &c->in[0];
	int64_t shape[2] = { x->rows, c->in[1].cols };
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

/* ---- fused ---- */

struct ffn {
	int64_t T, H, F, Hp, eps, es;
	int64_t nF, nT, fsl; /* cores per group, groups, a core's slice of F (whole sticks) */
	int64_t fsub;        /* the slice is walked in sub-slices of fsub columns */
	int64_t tb, kh, nh;  /* row block, K chunk of phase 1, output chunk of phase 2 */
	/* LX: g of the whole slice, then phase 1 (h1, h3, x and weight chunks, two of each) or,
	 * over the same bytes, phase 2 (two partial sums, the received one, two w2 tiles, the
	 * rounded chunk) */
	uint32_t g, h1, h3, xb[2], w1[2], w3[2];
	uint32_t p[2], r, w2[2], o;
};

/* Lays out LX for the current tb, fsub, nh; 0 when it fits. */
static int ffn_layout(struct ffn *f, uint64_t lx)
{
	uint64_t es = (uint64_t)f->es, tb = (uint64_t)f->tb, fs = (uint64_t)f->fsub;
	uint64_t kh = (uint64_t)f->kh, nh = (uint64_t)f->nh;
	uint64_t at = 0;
#define TAKE(field, bytes) (f->field = (uint32_t)at, at += plan__align((bytes), STICK))
	TAKE(g, tb * (uint64_t)f->fsl * es);
	uint64_t shared = at;
	TAKE(h1, tb * fs * 4);
	TAKE(h3, tb * fs * 4);
	for (int i = 0; i < 2; i++) {
		TAKE(xb[i], tb * kh * es);
		TAKE(w1[i], kh * fs * es);
		TAKE(w3[i], kh * fs * es);
	}
	uint64_t end1 = at;
	at = shared;
	for (int i = 0; i < 2; i++) {
		TAKE(p[i], tb * nh * 4);
		TAKE(w2[i], fs * nh * es);
	}
	TAKE(r, tb * nh * 4);
	TAKE(o, tb * nh * es);
#undef TAKE
	return (end1 > at ? end1 : at) <= lx ? 0 : ERR_LIMIT;
}

/* Device bytes a core moves for its rows: the slice's weights once per row block, x once per
 * row block and sub-slice. The cheapest fitting (tb, fsub, nh) wins. */
static double ffn_traffic(const struct ffn *f, int64_t rows)
{
	double blocks = (double)((rows + f->tb - 1) / f->tb);
	double nsub = (double)((f->fsl + f->fsub - 1) / f->fsub);
	double w = 3.0 * (double)f->Hp * (double)f->fsl * (double)f->es;
	return blocks * (w + nsub * (double)f->tb * (double)f->Hp * (double)f->es) +
	       blocks * (double)(f->Hp / f->nh) * 1e3; /* fewer, larger chunks */
}

static int ffn_plan(const struct plan_ctx *c, const struct plan_variant *pv, struct ffn *f)
{
	const struct plan_tensor *x = &c->in[0];
	int cores = c->launch->ncores;
	memset(f, 0, sizeof(*f));
	f->eps = x->eps, f->es = x->esize;
	f->T = x->rows, f->H = x->cols, f->F = c->in[1].cols;
	f->Hp = pad_to(f->H, f->eps);
	int64_t fsticks = (f->F + f->eps - 1) / f->eps;
	f->nF = fsticks < cores ? fsticks : cores;
	f->fsl = (fsticks + f->nF - 1) / f->nF * f->eps;
	f->nF = (f->F + f->fsl - 1) / f->fsl;
	f->nT = pv->a ? cores / f->nF : 1; /* a: as many row groups as the cores allow */
	if (f->nT > f->T)
		f->nT = f->T;
	int64_t rows = (f->T + f->nT - 1) / f->nT;
	static const int64_t tbs[] = { 256, 128, 64, 32, 16, 8, 4, 2, 1 };
	static const int64_t subs[] = { 0, 2048, 1024, 512, 256, 128, 64 };
	static const int64_t nhs[] = { 512, 256, 128, 64 };
	struct ffn best = { 0 };
	double best_cost = 0;
	for (size_t i = 0; i < sizeof(tbs) / sizeof(tbs[0]); i++)
		for (size_t u = 0; u < sizeof(subs) / sizeof(subs[0]); u++)
			for (size_t j = 0; j < sizeof(nhs) / sizeof(nhs[0]); j++) {
				f->tb = tbs[i] < rows ? tbs[i] : rows;
				f->fsub = subs[u] && subs[u] < f->fsl ? subs[u] : f->fsl;
				f->kh = 128;
				f->nh = nhs[j] < f->Hp ? nhs[j] : f->Hp;
				if (ffn_layout(f, c->hw->lx_bytes) != 0)
					continue;
				double cost = ffn_traffic(f, rows);
				if (!best.tb || cost < best_cost)
					best = *f, best_cost = cost;
			}
	if (!best.tb)
		return err_set(ERR_LIMIT, "fused MLP: no row block fits LX");
	*f = best;
	return ffn_layout(f, c->hw->lx_bytes);
}

static int ffn_vec(struct plan_ctx *c, int core, const char *k, uint32_t in0, uint32_t in1,
		   uint32_t stride, enum spyre_dtype dt, uint32_t out, enum spyre_dtype odt,
		   uint32_t rows, uint32_t cols)
{
	struct spyre_vec v = { 0 };
	v.in[0] = in0;
	v.in[1] = in1;
	v.in_stride[0] = v.in_stride[1] = stride;
	v.dtype = dt;
	v.out = out;
	v.out_stride = stride;
	v.out_dtype = odt;
	v.rows = rows;
	v.cols = cols;
	return plan__vec(c, core, k, &v);
}

static int ffn_mm(struct plan_ctx *c, int core, uint32_t a, uint32_t as, uint32_t b, uint32_t bs,
		  uint32_t cc, uint32_t cs, uint32_t m, uint32_t k, uint32_t n, int acc)
{
	struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
	mm.u.mm = (struct spyre_matmul){ .a = a,
					 .b = b,
					 .c = cc,
					 .m = m,
					 .k = k,
					 .n = n,
					 .a_stride = as,
					 .b_stride = bs,
					 .c_stride = cs,
					 .in_dtype = c->in[0].ddt,
					 .out_dtype = SPYRE_DTYPE_FLOAT32,
					 .accumulate = (uint8_t)acc };
	return spyre_program_push(c->launch, core, &mm);
}

/* Phase 1 on one core: g for rows [r0, r0 + tb) and F columns [f0, f0 + fs), sub-slice by
 * sub-slice; g's row pitch is the whole slice. */
static int ffn_gate_up(struct plan_ctx *c, const struct ffn *f, int core, int64_t r0, int64_t tb,
		       int64_t f0, int64_t fs)
{
	const struct plan_tensor *x = &c->in[0], *w1 = &c->in[1], *w3 = &c->in[2];
	int rc = 0;
	for (int64_t u0 = 0, i = 0; u0 < fs && !rc; u0 += f->fsub) {
		int64_t us = fs - u0 < f->fsub ? fs - u0 : f->fsub;
		int64_t usp = pad_to(us, f->eps), ust = usp / f->eps;
		uint32_t wrow = (uint32_t)(usp * f->es);
		for (int64_t k0 = 0; k0 < f->H && !rc; k0 += f->kh, i++) {
			int64_t kc = f->H - k0 < f->kh ? f->H - k0 : f->kh;
			int64_t ks = (kc + f->eps - 1) / f->eps;
			uint32_t xrow = (uint32_t)(ks * STICK);
			int b = (int)(i % 2);
			int64_t fc = (f0 + u0) / f->eps;
			rc =
			    plan__dma_block(c, core, 1, x, r0, tb, k0 / f->eps, ks, f->xb[b], xrow);
			if (!rc)
				rc = plan__dma_block(c, core, 1, w1, k0, kc, fc, ust, f->w1[b],
						     wrow);
			if (!rc)
				rc = plan__dma_block(c, core, 1, w3, k0, kc, fc, ust, f->w3[b],
						     wrow);
			uint32_t as = xrow / (uint32_t)f->es, bs = (uint32_t)usp;
			if (!rc)
				rc = ffn_mm(c, core, f->xb[b], as, f->w1[b], bs, f->h1,
					    (uint32_t)usp, (uint32_t)tb, (uint32_t)kc,
					    (uint32_t)usp, k0 > 0);
			if (!rc)
				rc = ffn_mm(c, core, f->xb[b], as, f->w3[b], bs, f->h3,
					    (uint32_t)usp, (uint32_t)tb, (uint32_t)kc,
					    (uint32_t)usp, k0 > 0);
		}
		struct spyre_vec v = { 0 };
		v.in[0] = f->h1;
		v.in[1] = f->h3;
		v.in_stride[0] = v.in_stride[1] = (uint32_t)usp;
		v.dtype = SPYRE_DTYPE_FLOAT32;
		v.out = f->g + (uint32_t)(u0 * f->es);
		v.out_stride = (uint32_t)f->fsl;
		v.out_dtype = x->ddt;
		v.rows = (uint32_t)tb;
		v.cols = (uint32_t)usp;
		if (!rc)
			rc = plan__vec(c, core, "silu_mul", &v);
	}
	return rc;
}

/* Adds the partial sums of the group's cores (first, first + 1, ...) into the first's `p`. */
static int ffn_reduce(struct plan_ctx *c, const struct ffn *f, int first, int n, uint32_t p,
		      int64_t tb, int64_t nhp)
{
	uint32_t bytes = (uint32_t)(tb * nhp * 4);
	for (int step = 1; step < n; step *= 2)
		for (int j = 0; j + step < n; j += 2 * step) {
			int dst = first + j, src = first + j + step;
			struct spyre_insn s = { .op = SPYRE_OP_SEND }, r = { .op = SPYRE_OP_RECV };
			s.u.ring = (struct spyre_ring){ .peer = dst, .lx_addr = p, .bytes = bytes };
			r.u.ring =
			    (struct spyre_ring){ .peer = src, .lx_addr = f->r, .bytes = bytes };
			int rc = spyre_program_push(c->launch, src, &s);
			if (!rc)
				rc = spyre_program_push(c->launch, dst, &r);
			if (!rc)
				rc = ffn_vec(c, dst, "add", p, f->r, (uint32_t)nhp,
					     SPYRE_DTYPE_FLOAT32, p, SPYRE_DTYPE_FLOAT32,
					     (uint32_t)tb, (uint32_t)nhp);
			if (rc)
				return rc;
		}
	return 0;
}

/* One row block of one group: phase 1 on every core of the group, then phase 2 chunk by
 * chunk with the reduction. `seq` counts the chunks the group has done (buffer parity). */
static int ffn_block(struct plan_ctx *c, const struct ffn *f, int first, int n, int64_t r0,
		     int64_t tb, int64_t *seq)
{
	const struct plan_tensor *w2 = &c->in[3], *o = &c->out;
	int rc = 0;
	for (int j = 0; j < n && !rc; j++) {
		int64_t f0 = j * f->fsl, fs = f->F - f0 < f->fsl ? f->F - f0 : f->fsl;
		rc = ffn_gate_up(c, f, first + j, r0, tb, f0, fs);
	}
	for (int64_t n0 = 0; n0 < f->H && !rc; n0 += f->nh, (*seq)++) {
		int64_t nhc = f->H - n0 < f->nh ? f->H - n0 : f->nh;
		int64_t nhp = pad_to(nhc, f->eps), nst = nhp / f->eps;
		int b = (int)(*seq % 2);
		for (int j = 0; j < n && !rc; j++) {
			int64_t f0 = j * f->fsl, fs = f->F - f0 < f->fsl ? f->F - f0 : f->fsl;
			for (int64_t u0 = 0, i = 0; u0 < fs && !rc; u0 += f->fsub, i++) {
				int64_t us = fs - u0 < f->fsub ? fs - u0 : f->fsub;
				uint32_t wt = f->w2[(b + i) % 2];
				rc = plan__dma_block(c, first + j, 1, w2, f0 + u0, us, n0 / f->eps,
						     nst, wt, (uint32_t)(nhp * f->es));
				if (!rc)
					rc = ffn_mm(c, first + j, f->g + (uint32_t)(u0 * f->es),
						    (uint32_t)f->fsl, wt, (uint32_t)nhp, f->p[b],
						    (uint32_t)nhp, (uint32_t)tb, (uint32_t)us,
						    (uint32_t)nhp, u0 > 0);
			}
		}
		if (!rc)
			rc = ffn_reduce(c, f, first, n, f->p[b], tb, nhp);
		if (!rc)
			rc =
			    ffn_vec(c, first, "copy", f->p[b], 0, (uint32_t)nhp,
				    SPYRE_DTYPE_FLOAT32, f->o, o->ddt, (uint32_t)tb, (uint32_t)nhp);
		if (!rc)
			rc = plan__dma_block(c, first, 0, o, r0, tb, n0 / f->eps, nst, f->o,
					     (uint32_t)(nhp * o->esize));
	}
	return rc;
}

static int build_fused(struct plan_ctx *c, const struct plan_variant *pv)
{
	(void)pv;
	struct ffn f;
	int rc = ffn_plan(c, pv, &f);
	for (int64_t t = 0; t < f.nT && !rc; t++) {
		int64_t lo, hi, seq = 0;
		plan__split(f.T, (int)f.nT, (int)t, &lo, &hi);
		for (int64_t r0 = lo; r0 < hi && !rc; r0 += f.tb) {
			int64_t tb = hi - r0 < f.tb ? hi - r0 : f.tb;
			rc = ffn_block(c, &f, (int)(t * f.nF), (int)f.nF, r0, tb, &seq);
		}
	}
	return rc;
}

int plan__variants_ffn(const struct plan_ctx *c, struct plan_variant *out)
{
	const struct plan_tensor *x = &c->in[0];
	int n = 0;
	/* one row group: the weights are read once per row block; or as many groups as the
	 * cores allow, which pays when compute, not memory, is the limit */
	snprintf(out[n].name, sizeof(out[n].name), "fused_ffn_split");
	out[n++].build = build_fused;
	if (c->in[0].rows > 1 &&
	    c->hw->cores / ((c->in[1].cols + 63) / 64 < c->hw->cores ? (c->in[1].cols + 63) / 64
								     : c->hw->cores) >
		1) {
		snprintf(out[n].name, sizeof(out[n].name), "fused_ffn_split_row_groups");
		out[n].a = 1;
		out[n++].build = build_fused;
	}
	snprintf(out[n].name, sizeof(out[n].name), "unfused");
	out[n].build = build_unfused;
	out[n].scratch_bytes =
	    3 * plan__align((uint64_t)x->rows * pad_to(c->in[1].cols, 64) * 4, STICK);
	n++;
	return n;
}
