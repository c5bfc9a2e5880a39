/* Plans of the matmul family: mm, bmm, matmul (batch broadcast), linear, addmm. A is sticked
 * on K, B and C on N (docs/emu.md). Output tiles of tm x tn are divided across cores
 * (output dimensions first); K is walked in chunks of tk with fp32 accumulation in LX. Per
 * tile: A's rows are gathered row by row, B arrives as stick columns (one DMA each: K rows of
 * one stick), one MATMUL per stick column; linear's weight [N, K] is gathered by rows and
 * multiplied transposed. Bias is added in fp32, then the tile is rounded once to the output
 * dtype and stored. Tilings are the plan variants; the timing model picks. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

struct mm_shape {
	int64_t batch, m, k, n;
	int64_t out_batch_shape[SPYRE_DIMS_MAX];
	int nbatch;
	int a_idx, b_idx, bias_idx; /* inputs; bias_idx -1 if none */
	int b_trans;                /* linear: B is weight[N, K] */
};

static int mm_shape_of(const struct plan_ctx *c, struct mm_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->bias_idx = -1;
	const char *n = c->op->name;
	if (strncmp(n, "linear", 6) == 0) { /* linear_nobias: no input 2 */
		s->a_idx = 0, s->b_idx = 1, s->bias_idx = c->nin == 3 ? 2 : -1, s->b_trans = 1;
	} else if (strcmp(n, "addmm") == 0) {
		s->a_idx = 1, s->b_idx = 2, s->bias_idx = 0;
	} else {
		s->a_idx = 0, s->b_idx = 1;
	}
	const struct plan_tensor *a = &c->in[s->a_idx], *b = &c->in[s->b_idx], *o = &c->out;
	if (a->ndim < 2 && !s->b_trans)
		return err_set(ERR_INVAL, "%s: 1-d operands are not planned", n);
	s->k = a->cols;
	s->n = s->b_trans ? b->shape[0] : b->cols;
	s->m = o->ndim >= 2 ? o->shape[o->ndim - 2] : 1;
	s->batch = o->rows / s->m;
	s->nbatch = o->ndim - 2 > 0 ? o->ndim - 2 : 0;
	for (int i = 0; i < s->nbatch; i++)
		s->out_batch_shape[i] = o->shape[i];
	return 0;
}

/* Row index of the first row of batch `ob` of operand t (rows per batch `per`), broadcasting
 * the operand's batch dims against the output's. */
static int64_t batch_row(const struct plan_tensor *t, const struct mm_shape *s, int64_t ob,
			 int64_t per)
{
	int tb = t->ndim - 2;
	if (tb <= 0)
		return 0;
	int64_t idx[SPYRE_DIMS_MAX];
	for (int j = s->nbatch - 1; j >= 0; j--) {
		idx[j] = ob % s->out_batch_shape[j];
		ob /= s->out_batch_shape[j];
	}
	int64_t r = 0;
	int off = s->nbatch - tb;
	for (int j = 0; j < tb; j++)
		r = r * t->shape[j] + (t->shape[j] == 1 ? 0 : idx[j + off]);
	return r * per;
}

struct mm_tile {
	int64_t ob, m0, tm, n0, tn;
	int64_t kb, ke; /* the K range this core multiplies: all of K, or its K-split share */
	int64_t tnp;    /* tn rounded up to whole sticks: C and the output tile are that wide */
};

struct mm_lx {
	uint32_t a, b, cacc, o, bias;
};

static uint64_t mm_lx_need(const struct plan_ctx *c, const struct plan_variant *v, struct mm_lx *L)
{
	const struct plan_tensor *a = &c->in[0], *o = &c->out;
	uint64_t esz = a->esize;
	uint64_t ab = (uint64_t)v->a * (uint64_t)v->c * esz;
	uint64_t bb = (uint64_t)v->c * (uint64_t)v->b * esz;
	uint64_t cb = (uint64_t)v->a * (uint64_t)v->b * 4;
	uint64_t ob = (uint64_t)v->a * (uint64_t)v->b * o->esize;
	uint64_t biasb = (uint64_t)v->a * (uint64_t)v->b * 4; /* fp32 bias, a row or a tile */
	L->a = 0;
	L->b = (uint32_t)ab;
	L->cacc = (uint32_t)(ab + bb);
	L->o = (uint32_t)(ab + bb + cb);
	L->bias = (uint32_t)(ab + bb + cb + ob);
	return ab + bb + cb + ob + biasb;
}

static int mm_bias(struct plan_ctx *c, int core, const struct mm_shape *s, const struct mm_tile *t,
		   uint32_t base, const struct mm_lx *L)
{
	const struct plan_tensor *bias = &c->in[s->bias_idx];
	int per_row = bias->ndim >= 2; /* addmm's [M, N] bias */
	int64_t s0 = t->n0 / bias->eps, ns = (t->tn + bias->eps - 1) / bias->eps;
	int64_t nrows = per_row ? t->tm : 1;
	uint32_t rowb = (uint32_t)ns * STICK;
	uint32_t raw = base + L->o; /* staged in the output buffer, before it is written */
	int rc = 0;
	for (int64_t j = 0; j < nrows && !rc; j++)
		rc = plan__dma_row(c, core, 1, bias, per_row ? t->m0 + j : 0, s0, ns,
				   raw + (uint32_t)j * rowb);
	struct spyre_vec v = { 0 };
	v.in[0] = raw;
	v.in_stride[0] = rowb / bias->esize;
	v.dtype = bias->ddt;
	v.out = base + L->bias;
	v.out_stride = (uint32_t)t->tnp;
	v.out_dtype = SPYRE_DTYPE_FLOAT32;
	v.rows = (uint32_t)nrows;
	v.cols = (uint32_t)t->tnp;
	if (!rc)
		rc = plan__vec(c, core, "copy", &v);
	struct spyre_vec add = { 0 };
	add.in[0] = base + L->cacc;
	add.in_stride[0] = (uint32_t)t->tnp;
	add.in[1] = base + L->bias;
	add.in_stride[1] = nrows == 1 ? 0 : (uint32_t)t->tnp;
	add.dtype = SPYRE_DTYPE_FLOAT32;
	add.out = base + L->cacc;
	add.out_stride = (uint32_t)t->tnp;
	add.out_dtype = SPYRE_DTYPE_FLOAT32;
	add.rows = (uint32_t)t->tm;
	add.cols = (uint32_t)t->tnp;
	return rc ? rc : plan__vec(c, core, "add", &add);
}

static int mm_tile_emit(struct plan_ctx *c, int core, const struct mm_shape *s,
			const struct mm_tile *t, const struct plan_variant *pv, uint32_t base,
			const struct mm_lx *L)
{
	const struct plan_tensor *A = &c->in[s->a_idx], *B = &c->in[s->b_idx];
	int64_t tk = pv->c;
	int64_t arow0 = batch_row(A, s, t->ob, s->m) + t->m0;
	int64_t brow0 = s->b_trans ? 0 : batch_row(B, s, t->ob, s->k);
	int rc = 0;
	for (int64_t k0 = t->kb; k0 < t->ke && !rc; k0 += tk) {
		int64_t kc = t->ke - k0 < tk ? t->ke - k0 : tk;
		int64_t ks = (kc + A->eps - 1) / A->eps;
		uint32_t arow = (uint32_t)(ks * STICK);
		rc = plan__dma_block(c, core, 1, A, arow0, t->tm, k0 / A->eps, ks, base + L->a,
				     arow);
		struct spyre_insn mm = { .op = SPYRE_OP_MATMUL };
		struct spyre_matmul *x = &mm.u.mm;
		x->a = base + L->a;
		x->a_stride = arow / A->esize;
		x->in_dtype = A->ddt;
		x->out_dtype = SPYRE_DTYPE_FLOAT32;
		x->accumulate = k0 > t->kb;
		x->m = (uint32_t)t->tm;
		x->k = (uint32_t)kc;
		x->c_stride = (uint32_t)t->tnp;
		if (s->b_trans) {
			/* weight rows n0.., their K chunk: [tn][ks sticks] */
			if (!rc)
				rc = plan__dma_block(c, core, 1, B, t->n0, t->tn, k0 / B->eps, ks,
						     base + L->b, arow);
			x->b = base + L->b;
			x->b_stride = arow / B->esize;
			x->b_trans = 1;
			x->c = base + L->cacc;
			x->n = (uint32_t)t->tn;
			if (!rc)
				rc = spyre_program_push(c->launch, core, &mm);
			/* the weight has no rows past N: zero C's padding columns once */
			if (!rc && k0 == t->kb && t->tnp > t->tn)
				rc = plan__zero_fill(c, core, x->c + (uint32_t)t->tn * 4,
						     (uint32_t)t->tm, (uint32_t)(t->tnp - t->tn),
						     (uint32_t)t->tnp, SPYRE_DTYPE_FLOAT32);
			continue;
		}
		for (int64_t j = 0; j * B->eps < t->tn && !rc; j++) {
			/* stick column (n0 / eps + j): kc rows of one stick */
			uint32_t bl = base + L->b + (uint32_t)(j * kc) * STICK;
			struct spyre_insn d = { .op = SPYRE_OP_DMA_LOAD };
			d.u.dma.dev_addr = plan_stick_addr(B, brow0 + k0, t->n0 / B->eps + j);
			d.u.dma.lx_addr = bl;
			d.u.dma.sticks = 1;
			d.u.dma.rows = (uint32_t)kc;
			d.u.dma.dev_stride =
			    (B->ndim >= 2 ? (uint64_t)B->lead_step[B->ndim - 2] : 1) * STICK;
			d.u.dma.lx_stride = STICK;
			rc = spyre_program_push(c->launch, core, &d);
			x->b = bl;
			x->b_stride = (uint32_t)B->eps;
			x->c = base + L->cacc + (uint32_t)(j * B->eps) * 4;
			x->n = (uint32_t)B->eps; /* padding lanes of B are zero */
			if (!rc)
				rc = spyre_program_push(c->launch, core, &mm);
		}
	}
	return rc;
}

/* Bias, one rounding to the output dtype, and the store of a finished C tile. */
static int mm_tile_finish(struct plan_ctx *c, int core, const struct mm_shape *s,
			  const struct mm_tile *t, uint32_t base, const struct mm_lx *L)
{
	const struct plan_tensor *O = &c->out;
	int rc = 0;
	if (s->bias_idx >= 0)
		rc = mm_bias(c, core, s, t, base, L);
	int64_t ons = (t->tn + O->eps - 1) / O->eps;
	struct spyre_vec v = { 0 };
	v.in[0] = base + L->cacc;
	v.in_stride[0] = (uint32_t)t->tnp;
	v.dtype = SPYRE_DTYPE_FLOAT32;
	v.out = base + L->o;
	v.out_stride = (uint32_t)(ons * O->eps);
	v.out_dtype = O->ddt;
	v.rows = (uint32_t)t->tm;
	v.cols = (uint32_t)t->tnp;
	if (!rc)
		rc = plan__vec(c, core, "copy", &v);
	uint32_t orow = (uint32_t)(ons * STICK);
	if (!rc)
		rc = plan__dma_block(c, core, 0, O, t->ob * s->m + t->m0, t->tm, t->n0 / O->eps,
				     ons, base + L->o, orow);
	return rc;
}

static void tile_of(const struct plan_ctx *c, const struct mm_shape *s,
		    const struct plan_variant *pv, int64_t i, int64_t mt, int64_t nt,
		    struct mm_tile *t)
{
	t->ob = i / (mt * nt);
	t->m0 = (i / nt) % mt * pv->a;
	t->n0 = i % nt * pv->b;
	t->tm = s->m - t->m0 < pv->a ? s->m - t->m0 : pv->a;
	t->tn = s->n - t->n0 < pv->b ? s->n - t->n0 : pv->b;
	t->tnp = (t->tn + c->out.eps - 1) / c->out.eps * c->out.eps;
	t->kb = 0;
	t->ke = s->k;
}

/* Adds the partial C tiles of the `ks` adjacent cores from `first` over the ring into the
 * first one's (a tree: at each step a core sends to the partner `step` places back). */
static int ksplit_reduce(struct plan_ctx *c, int first, int ks, const struct mm_tile *t,
			 uint32_t base, const struct mm_lx *L)
{
	uint32_t bytes = (uint32_t)(t->tm * t->tnp * 4);
	for (int step = 1; step < ks; step *= 2)
		for (int j = 0; j + step < ks; j += 2 * step) {
			int dst = first + j, src = first + j + step;
			struct spyre_insn snd = { .op = SPYRE_OP_SEND },
					  rcv = { .op = SPYRE_OP_RECV };
			snd.u.ring = (struct spyre_ring){ .peer = dst,
							  .lx_addr = base + L->cacc,
							  .bytes = bytes };
			rcv.u.ring = (struct spyre_ring){ .peer = src,
							  .lx_addr = base + L->bias,
							  .bytes = bytes };
			struct spyre_vec add = { 0 };
			add.in[0] = base + L->cacc;
			add.in[1] = base + L->bias;
			add.in_stride[0] = add.in_stride[1] = (uint32_t)t->tnp;
			add.dtype = add.out_dtype = SPYRE_DTYPE_FLOAT32;
			add.out = base + L->cacc;
			add.out_stride = (uint32_t)t->tnp;
			add.rows = (uint32_t)t->tm;
			add.cols = (uint32_t)t->tnp;
			int rc = spyre_program_push(c->launch, src, &snd);
			if (!rc)
				rc = spyre_program_push(c->launch, dst, &rcv);
			if (!rc)
				rc = plan__vec(c, dst, "add", &add);
			if (rc)
				return rc;
		}
	return 0;
}

/* v->d > 1: each output tile is computed by d adjacent cores, each over its share of K (whole
 * sticks), and reduced over the ring. Only for few, deep tiles: it pays when cores would idle. */
int plan__build_mm(struct plan_ctx *c, const struct plan_variant *pv)
{
	struct mm_shape s;
	int rc = mm_shape_of(c, &s);
	if (rc)
		return rc;
	struct mm_lx L;
	uint64_t need = mm_lx_need(c, pv, &L);
	if (2 * need > c->hw->lx_bytes)
		return err_set(ERR_LIMIT, "tile %lldx%lldx%lld needs %llu LX bytes twice",
			       (long long)pv->a, (long long)pv->b, (long long)pv->c,
			       (unsigned long long)need);
	int64_t mt = (s.m + pv->a - 1) / pv->a, nt = (s.n + pv->b - 1) / pv->b;
	int64_t ntiles = s.batch * mt * nt;
	int cores = c->launch->ncores, ks = pv->d > 1 ? (int)pv->d : 1;
	if (ks > 1) {
		int eps = c->in[s.a_idx].eps;
		int64_t ksticks = (s.k + eps - 1) / eps;
		if (ntiles * ks > cores || ks > ksticks)
			return err_set(ERR_INVAL,
				       "K split %d: %lld tiles x %d cores exceed %d cores "
				       "or K's %lld sticks",
				       ks, (long long)ntiles, ks, cores, (long long)ksticks);
		for (int64_t i = 0; i < ntiles && !rc; i++) {
			struct mm_tile t;
			tile_of(c, &s, pv, i, mt, nt, &t);
			int first = (int)(i * ks);
			for (int j = 0; j < ks && !rc; j++) {
				int64_t lo, hi;
				plan__split(ksticks, ks, j, &lo, &hi);
				t.kb = lo * eps;
				t.ke = hi * eps < s.k ? hi * eps : s.k;
				rc = mm_tile_emit(c, first + j, &s, &t, pv, 0, &L);
			}
			t.kb = 0, t.ke = s.k;
			if (!rc)
				rc = ksplit_reduce(c, first, ks, &t, 0, &L);
			if (!rc)
				rc = mm_tile_finish(c, first, &s, &t, 0, &L);
		}
		return rc;
	}
	for (int k = 0; k < cores && !rc; k++) {
		int64_t lo, hi;
		plan__split(ntiles, cores, k, &lo, &hi);
		for (int64_t i = lo; i < hi && !rc; i++) {
			struct mm_tile t;
			tile_of(c, &s, pv, i, mt, nt, &t);
			uint32_t base = (uint32_t)((i % 2) * need);
			rc = mm_tile_emit(c, k, &s, &t, pv, base, &L);
			if (!rc)
				rc = mm_tile_finish(c, k, &s, &t, base, &L);
		}
	}
	return rc;
}

int plan__variants_matmul(const struct plan_ctx *c, struct plan_variant *out)
{
	static const int64_t tiles[][3] = {
		{ 64, 64, 256 },    { 128, 128, 512 }, { 256, 256, 256 },
		{ 128, 256, 1024 }, { 256, 512, 512 },
	};
	int64_t k = c->in[strcmp(c->op->name, "addmm") == 0 ? 1 : 0].cols;
	int n = 0;
	for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
		struct plan_variant *v = &out[n];
		v->a = tiles[i][0];
		v->b = tiles[i][1];
		v->c = tiles[i][2] < k ? tiles[i][2] : (k + 63) / 64 * 64;
		snprintf(v->name, sizeof(v->name), "tile_m%lld_n%lld_k%lld", (long long)v->a,
			 (long long)v->b, (long long)v->c);
		v->build = plan__build_mm;
		struct mm_lx L;
		if (2 * mm_lx_need(c, v, &L) <= c->hw->lx_bytes)
			n++;
	}
	if (n == 0)
		return err_set(ERR_LIMIT, "no matmul tiling fits LX");
	/* K split, for the smallest tiling, when its tiles leave at least half the cores idle. */
	struct mm_shape s;
	if (mm_shape_of(c, &s) == 0) {
		const struct plan_variant *v0 = &out[0];
		int64_t ntiles =
		    s.batch * ((s.m + v0->a - 1) / v0->a) * ((s.n + v0->b - 1) / v0->b);
		int eps = c->in[s.a_idx].eps, cores = c->hw->cores;
		int64_t ksticks = (s.k + eps - 1) / eps;
		int ks = 1;
		while (ntiles * ks * 2 <= cores && ks * 2 <= ksticks)
			ks *= 2;
		if (ks > 1 && n < PLAN_VARIANTS_MAX) {
			out[n] = *v0;
			out[n].d = ks;
			snprintf(out[n].name, sizeof(out[n].name), "ksplit%d_m%lld_n%lld_k%lld", ks,
				 (long long)v0->a, (long long)v0->b, (long long)v0->c);
			n++;
		}
	}
	return n;
}
