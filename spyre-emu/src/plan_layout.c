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

/* ---- re-sticking: a transpose of the last two dimensions ----
 * The stick dimension changes, so elements move inside sticks: the vector unit transposes
 * tiles in LX. Three plans:
 *  - `tiles_direct`: each core transposes tiles straight from the input to the output;
 *  - `restick_ring`: core k loads a block of input rows, transposes it into one piece per core,
 *    and sends piece j over the ring to core j, which assembles whole output rows and stores
 *    them: the re-layout happens core to core;
 *  - `restick_devmem`: the same, but the pieces go through device memory (store, barrier,
 *    load), as a re-layout between two ops without the ring would. */

struct tgeom {
	int64_t B, M, N, Mp, Np; /* batches; input rows, cols; padded to whole sticks */
	int P;                   /* cores taking part */
	int64_t mb[SPYRE_CORES_MAX + 1], nb[SPYRE_CORES_MAX + 1]; /* block bounds */
	uint32_t in, piece, asm_, recv, end;                      /* LX regions */
	uint32_t slot;                                            /* bytes of one received piece */
	int in_lx; /* a relayout between two ops: rows come from and go to LX */
};

static int tgeom_of(const struct plan_ctx *c, int ncores, struct tgeom *g)
{
	const struct plan_tensor *in = &c->in[0];
	int eps = in->eps;
	g->M = in->shape[in->ndim - 2];
	g->N = in->cols;
	g->B = in->rows / g->M;
	g->Mp = (g->M + eps - 1) / eps * eps;
	g->Np = (g->N + eps - 1) / eps * eps;
	int64_t ms = g->Mp / eps, ns = g->Np / eps;
	int64_t p = ncores;
	if (p > ms)
		p = ms;
	if (p > ns)
		p = ns;
	g->P = (int)p;
	for (int k = 0; k <= g->P; k++) {
		int64_t lo, hi;
		plan__split(ms, g->P, k < g->P ? k : g->P - 1, &lo, &hi);
		g->mb[k] = k < g->P ? lo * eps : g->M;
		plan__split(ns, g->P, k < g->P ? k : g->P - 1, &lo, &hi);
		g->nb[k] = k < g->P ? lo * eps : g->N;
	}
	int64_t bm = (ms + g->P - 1) / g->P * eps, bn = (ns + g->P - 1) / g->P * eps;
	uint64_t es = in->esize;
	g->in = 0;
	g->piece = (uint32_t)(bm * g->Np * es);
	g->asm_ = g->piece + (uint32_t)(g->Np * bm * es);
	g->recv = g->asm_ + (uint32_t)((uint64_t)bn * g->Mp * es);
	g->slot = plan__align((uint64_t)bn * bm * es, STICK);
	uint64_t end = g->recv + (uint64_t)g->P * g->slot;
	if ((g->B > 1 ? 2 : 1) * end > c->hw->lx_bytes) /* double-buffered over batches */
		return err_set(ERR_LIMIT, "re-sticking %lldx%lld needs %llu LX bytes twice",
			       (long long)g->M, (long long)g->N, (unsigned long long)end);
	g->end = (uint32_t)end;
	return 0;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Core k: load input rows [mb[k], mb[k+1]) of batch b, transpose them into the piece buffer
 * as N rows of bm (padded) elements: piece j is the rows [nb[j], nb[j+1]). */
static int restick_load_transpose(struct plan_ctx *c, const struct tgeom *g, int k, int64_t b,
				  uint32_t base, int64_t *bm_pad)
{
	const struct plan_tensor *in = &c->in[0];
	int64_t m0 = g->mb[k], bm = min64(g->mb[k + 1], g->M) - m0;
	int64_t bmp = (bm + in->eps - 1) / in->eps * in->eps;
	uint32_t row = (uint32_t)(g->Np * in->esize);
	int rc = 0;
	for (int64_t j = 0; j < bm && !rc && !g->in_lx; j++)
		rc = plan__dma_row(c, k, 1, in, b * g->M + m0 + j, 0, g->Np / in->eps,
				   base + g->in + (uint32_t)j * row);
	if (!rc && bmp > bm) /* the pad lanes of the output sticks are zero */
		rc = plan__zero_fill(c, k, base + g->piece + (uint32_t)bm * in->esize,
				     (uint32_t)g->Np, (uint32_t)(bmp - bm), (uint32_t)bmp, in->ddt);
	struct spyre_vec v = { 0 };
	v.in[0] = base + g->in;
	v.in_stride[0] = (uint32_t)g->Np;
	v.dtype = v.out_dtype = in->ddt;
	v.out = base + g->piece;
	v.out_stride = (uint32_t)bmp;
	v.rows = (uint32_t)bm;
	v.cols = (uint32_t)g->Np;
	if (!rc)
		rc = plan__vec(c, k, "transpose", &v);
	*bm_pad = bmp;
	return rc;
}

/* Core j: place piece (from core k: rows [nb[j], nb[j+1]) x bm cols at `src`) into the
 * assembly buffer of whole output rows, at column mb[k]. */
static int restick_place(struct plan_ctx *c, const struct tgeom *g, int j, int k, uint32_t src,
			 int64_t bmp, uint32_t base)
{
	const struct plan_tensor *in = &c->in[0];
	int64_t bn = min64(g->nb[j + 1], g->N) - g->nb[j];
	struct spyre_vec v = { 0 };
	v.in[0] = src;
	v.in_stride[0] = (uint32_t)bmp;
	v.dtype = v.out_dtype = in->ddt;
	v.out = base + g->asm_ + (uint32_t)(g->mb[k] * in->esize);
	v.out_stride = (uint32_t)g->Mp;
	v.rows = (uint32_t)bn;
	v.cols = (uint32_t)bmp;
	return plan__vec(c, j, "copy", &v);
}

static int restick_store(struct plan_ctx *c, const struct tgeom *g, int j, int64_t b, uint32_t base)
{
	const struct plan_tensor *o = &c->out;
	int64_t n0 = g->nb[j], bn = min64(g->nb[j + 1], g->N) - n0;
	uint32_t row = (uint32_t)(g->Mp * o->esize);
	int rc = 0;
	for (int64_t r = 0; r < bn && !rc && !g->in_lx; r++)
		rc = plan__dma_row(c, j, 0, o, b * g->N + n0 + r, 0, o->sticks,
				   base + g->asm_ + (uint32_t)r * row);
	return rc;
}

static int build_restick(struct plan_ctx *c, const struct plan_variant *pv)
{
	struct tgeom g = { 0 };
	int rc = tgeom_of(c, c->launch->ncores, &g);
	const struct plan_tensor *in = &c->in[0];
	int ring = pv->a == 1;
	g.in_lx = pv->b == 1;
	uint64_t es = in->esize;
	for (int64_t b = 0; b < g.B && !rc; b++) {
		uint32_t base = (uint32_t)((b % 2) * g.end);
		int64_t bmp[SPYRE_CORES_MAX];
		for (int k = 0; k < g.P && !rc; k++)
			rc = restick_load_transpose(c, &g, k, b, base, &bmp[k]);
		/* piece (k -> j) starts at row nb[j] of k's piece buffer: bn x bmp elements */
		for (int k = 0; k < g.P && !rc; k++)
			for (int j = 0; j < g.P && !rc; j++) {
				int64_t bn = min64(g.nb[j + 1], g.N) - g.nb[j];
				uint32_t src =
				    base + g.piece + (uint32_t)(g.nb[j] * bmp[k] * (int64_t)es);
				uint32_t bytes = (uint32_t)(bn * bmp[k] * (int64_t)es);
				if (j == k) {
					rc = restick_place(c, &g, j, k, src, bmp[k], base);
					continue;
				}
				if (ring) {
					struct spyre_insn s = { .op = SPYRE_OP_SEND },
							  r = { .op = SPYRE_OP_RECV };
					s.u.ring = (struct spyre_ring){ .peer = j,
									.lx_addr = src,
									.bytes = bytes };
					/* core j receives into its slot for core k */
					r.u.ring =
					    (struct spyre_ring){ .peer = k,
								 .lx_addr = base + g.recv +
									    (uint32_t)k * g.slot,
								 .bytes = bytes };
					rc = spyre_program_push(c->launch, k, &s);
					if (!rc)
						rc = spyre_program_push(c->launch, j, &r);
				} else {
					uint64_t dev = c->scratch + ((uint64_t)(b % 2) * g.P * g.P +
								     (uint64_t)(k * g.P + j)) *
									g.slot;
					struct spyre_insn st = { .op = SPYRE_OP_DMA_STORE };
					st.u.dma = (struct spyre_dma){ .dev_addr = dev,
								       .lx_addr = src,
								       .sticks = bytes / STICK,
								       .rows = 1 };
					rc = spyre_program_push(c->launch, k, &st);
				}
			}
		if (!ring && !rc)
			rc = plan__barrier_all(c);
		for (int j = 0; j < g.P && !rc; j++) {
			for (int k = 0; k < g.P && !rc; k++) {
				if (j == k)
					continue;
				int64_t bn = min64(g.nb[j + 1], g.N) - g.nb[j];
				uint32_t src = base + g.recv + (uint32_t)k * g.slot;
				uint32_t bytes = (uint32_t)(bn * bmp[k] * (int64_t)es);
				if (!ring) {
					uint64_t dev = c->scratch + ((uint64_t)(b % 2) * g.P * g.P +
								     (uint64_t)(k * g.P + j)) *
									g.slot;
					struct spyre_insn ld = { .op = SPYRE_OP_DMA_LOAD };
					ld.u.dma = (struct spyre_dma){ .dev_addr = dev,
								       .lx_addr = src,
								       .sticks = bytes / STICK,
								       .rows = 1 };
					rc = spyre_program_push(c->launch, j, &ld);
				}
				if (!rc)
					rc = restick_place(c, &g, j, k, src, bmp[k], base);
			}
			if (!rc)
				rc = restick_store(c, &g, j, b, base);
		}
	}
	return rc;
}

static int build_tiles_direct(struct plan_ctx *c, const struct plan_variant *pv)
{
	(void)pv;
	struct tgeom g = { 0 };
	int rc = tgeom_of(c, c->launch->ncores, &g);
	const struct plan_tensor *o = &c->out;
	for (int64_t b = 0; b < g.B && !rc; b++) {
		uint32_t base = (uint32_t)((b % 2) * g.end);
		for (int k = 0; k < g.P && !rc; k++) {
			int64_t bmp;
			rc = restick_load_transpose(c, &g, k, b, base, &bmp);
			/* output rows n, columns [mb[k], +bmp): one DMA each, straight from LX */
			for (int64_t n = 0; n < g.N && !rc; n++)
				rc = plan__dma_row(
				    c, k, 0, o, b * g.N + n, g.mb[k] / o->eps, bmp / o->eps,
				    base + g.piece + (uint32_t)(n * bmp * (int64_t)o->esize));
		}
	}
	return rc;
}

int plan__relayout_build(struct plan_ctx *c, int ring, int in_lx)
{
	struct plan_variant v = { .a = ring, .b = in_lx };
	snprintf(v.name, sizeof(v.name), "relayout_%s%s", ring ? "ring" : "devmem",
		 in_lx ? "_in_lx" : "");
	return build_restick(c, &v);
}

uint64_t plan__relayout_scratch(const struct plan_ctx *c)
{
	struct tgeom g = { 0 };
	if (tgeom_of(c, c->hw->cores, &g) != 0)
		return 0;
	return 2 * (uint64_t)g.P * g.P * g.slot;
}

/* `tiles_blocked`: the transpose in square blocks of pv->a elements (whole sticks), spread over
 * the cores and double-buffered, so any size plans: block (i, j) is loaded from input rows
 * [i*a, +a) and sticks of columns [j*a, +a), transposed in LX and stored as output rows
 * [j*a, +a) at the sticks of columns [i*a, +a). */
static int blocked_tile(struct plan_ctx *c, int k, int64_t b, int64_t m0, int64_t n0, int64_t a,
			uint32_t base)
{
	const struct plan_tensor *in = &c->in[0], *o = &c->out;
	int64_t M = in->shape[in->ndim - 2], N = in->cols;
	int64_t bm = min64(a, M - m0), bn = min64(a, N - n0);
	int64_t bmp = (bm + in->eps - 1) / in->eps * in->eps;
	int64_t bnp = (bn + in->eps - 1) / in->eps * in->eps;
	uint32_t es = in->esize, tin = base, tout = base + (uint32_t)(a * a * es);
	int rc = plan__dma_block(c, k, 1, in, b * M + m0, bm, n0 / in->eps, bnp / in->eps, tin,
				 (uint32_t)(bnp * es));
	if (!rc && bmp > bm) /* the pad lanes of the output sticks are zero */
		rc = plan__zero_fill(c, k, tout + (uint32_t)bm * es, (uint32_t)bnp,
				     (uint32_t)(bmp - bm), (uint32_t)bmp, in->ddt);
	struct spyre_vec v = { 0 };
	v.in[0] = tin;
	v.in_stride[0] = (uint32_t)bnp;
	v.dtype = v.out_dtype = in->ddt;
	v.out = tout;
	v.out_stride = (uint32_t)bmp;
	v.rows = (uint32_t)bm;
	v.cols = (uint32_t)bnp;
	if (!rc)
		rc = plan__vec(c, k, "transpose", &v);
	if (!rc)
		rc = plan__dma_block(c, k, 0, o, b * N + n0, bn, m0 / o->eps, bmp / o->eps, tout,
				     (uint32_t)(bmp * es));
	return rc;
}

static int build_tiles_blocked(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *in = &c->in[0];
	int64_t a = pv->a, M = in->shape[in->ndim - 2], N = in->cols, B = in->rows / M;
	int64_t mt = (M + a - 1) / a, nt = (N + a - 1) / a, items = B * mt * nt;
	uint32_t need = (uint32_t)(2 * a * a * in->esize);
	if (2 * (uint64_t)need > c->hw->lx_bytes)
		return err_set(ERR_LIMIT, "a %lldx%lld block does not fit LX twice", (long long)a,
			       (long long)a);
	int rc = 0;
	for (int k = 0; k < c->launch->ncores && !rc; k++) {
		int64_t lo, hi;
		plan__split(items, c->launch->ncores, k, &lo, &hi);
		for (int64_t i = lo; i < hi && !rc; i++) {
			int64_t b = i / (mt * nt), m0 = (i / nt) % mt * a, n0 = i % nt * a;
			rc = blocked_tile(c, k, b, m0, n0, a, (uint32_t)((i % 2) * need));
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
	if (perm[n - 1] != n - 1) {
		for (int i = 0; i < n - 2; i++)
			if (perm[i] != i)
				return err_set(ERR_INVAL,
					       "%s moves the stick dimension and others: only a "
					       "transpose of the last two dimensions is planned",
					       c->op->name);
		if (n < 2)
			return err_set(ERR_INVAL, "%s of a 1-d tensor", c->op->name);
		int k = 0;
		static const int64_t blocks[] = { 64, 256 };
		for (int i = 0; i < 2; i++) {
			snprintf(out[k].name, sizeof(out[k].name), "tiles_blocked%lld",
				 (long long)blocks[i]);
			out[k].build = build_tiles_blocked;
			out[k++].a = blocks[i];
		}
		snprintf(out[k].name, sizeof(out[k].name), "tiles_direct");
		out[k++].build = build_tiles_direct;
		snprintf(out[k].name, sizeof(out[k].name), "restick_ring");
		out[k].build = build_restick;
		out[k++].a = 1;
		snprintf(out[k].name, sizeof(out[k].name), "restick_devmem");
		out[k].build = build_restick;
		out[k].a = 0;
		struct tgeom g = { 0 };
		if (tgeom_of(c, c->hw->cores, &g) == 0)
			out[k].scratch_bytes =
			    2 * (uint64_t)g.P * g.P * g.slot; /* a slot per pair, two batches */
		return k + 1;
	}
	static const int64_t tiles[] = { 16, 256 };
	for (int i = 0; i < 2; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "row_moves_rows%lld",
			 (long long)tiles[i]);
		out[i].build = build_rows;
		out[i].a = tiles[i];
	}
	return 2;
}
