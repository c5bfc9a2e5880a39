/* The planner's common part: the row/stick view of device tensors, instruction helpers, work
 * division, and the plans of pointwise ops and reductions. Norms are in plan_norm.c, the matmul
 * family in plan_matmul.c. Rules from docs/emu.md: work is divided on whole sticks,
 * output dimensions first, and a reduction is never split along its reduced dimension (so its
 * result does not depend on the core count). */
#include "plan.h"

#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/kernels.h"

#define STICK 128u

uint32_t plan__align(uint64_t x, uint32_t a)
{
	return (uint32_t)((x + a - 1) / a * a);
}

void plan__split(int64_t n, int cores, int k, int64_t *lo, int64_t *hi)
{
	int64_t base = n / cores, extra = n % cores;
	*lo = k * base + (k < extra ? k : extra);
	*hi = *lo + base + (k < extra ? 1 : 0);
}

int plan_tensor_init(struct plan_tensor *t, const struct spyre_layout *l, uint64_t addr)
{
	memset(t, 0, sizeof(*t));
	t->l = *l;
	t->addr = addr;
	t->ndim = l->host_ndim ? l->host_ndim : 1;
	for (int i = 0; i < l->host_ndim; i++) {
		if (l->dim_order[i] != i)
			return err_set(ERR_INVAL, "planner: only default layouts are planned");
		t->shape[i] = l->host_size[i];
	}
	if (l->host_ndim == 0)
		t->shape[0] = 1;
	int n = t->ndim;
	t->cols = t->shape[n - 1];
	t->rows = 1;
	for (int i = 0; i < n - 1; i++)
		t->rows *= t->shape[i];
	t->ddt = l->device_dtype;
	t->esize = (uint32_t)spyre_dtype_size(t->ddt);
	t->eps = l->elems_per_stick;
	t->sticks = (t->cols + t->eps - 1) / t->eps;
	/* Device dims are [h1 .. h(n-2), sticks, h0, stick] (layout.c); for 1-d, [sticks, stick].
	 */
	if (n == 1) {
		t->s_step = 1;
		return 0;
	}
	t->s_step = t->shape[0];
	t->lead_step[0] = 1;
	for (int j = n - 2; j >= 1; j--) {
		int64_t step = t->sticks * t->shape[0];
		for (int q = j + 1; q <= n - 2; q++)
			step *= t->shape[q];
		t->lead_step[j] = step;
	}
	return 0;
}

uint64_t plan_stick_addr(const struct plan_tensor *t, int64_t r, int64_t s)
{
	int64_t idx = s * t->s_step;
	for (int j = t->ndim - 2; j >= 0; j--) {
		idx += (r % t->shape[j]) * t->lead_step[j];
		r /= t->shape[j];
	}
	return t->addr + (uint64_t)idx * STICK;
}

int plan__dma_row(struct plan_ctx *c, int core, int load, const struct plan_tensor *t, int64_t r,
		  int64_t s0, int64_t ns, uint32_t lx)
{
	struct spyre_insn in = { .op = load ? SPYRE_OP_DMA_LOAD : SPYRE_OP_DMA_STORE };
	struct spyre_dma *d = &in.u.dma;
	if (t->s_step == 1 || ns == 1) {
		d->dev_addr = plan_stick_addr(t, r, s0);
		d->lx_addr = lx;
		d->sticks = (uint32_t)ns;
		d->rows = 1;
		return spyre_program_push(c->launch, core, &in);
	}
	/* The sticks of one row are s_step apart: a row of a large tensor can span more than the
	 * addressing window, so it moves in pieces that each fit one. */
	uint64_t stride = (uint64_t)t->s_step * STICK;
	int64_t per = (int64_t)((c->hw->window_bytes - STICK) / stride) + 1;
	for (int64_t j = 0; j < ns; j += per) {
		int64_t n = ns - j < per ? ns - j : per;
		d->dev_addr = plan_stick_addr(t, r, s0 + j);
		d->lx_addr = lx + (uint32_t)j * STICK;
		d->sticks = 1;
		d->rows = (uint32_t)n;
		d->dev_stride = stride;
		d->lx_stride = STICK;
		int rc = spyre_program_push(c->launch, core, &in);
		if (rc)
			return rc;
	}
	return 0;
}

int plan__dma_block(struct plan_ctx *c, int core, int load, const struct plan_tensor *t, int64_t r0,
		    int64_t nr, int64_t s0, int64_t ns, uint32_t lx, uint32_t lx_row)
{
	/* Consecutive rows inside one run of the second-to-last host dimension are `lead`
	 * sticks apart; a stick column of such rows is one strided DMA. */
	int64_t run = t->ndim >= 2 ? t->shape[t->ndim - 2] : 1;
	int64_t lead = t->ndim >= 2 ? t->lead_step[t->ndim - 2] : 1;
	int rc = 0;
	for (int64_t r = r0; r < r0 + nr && !rc;) {
		int64_t n = run - r % run;
		if (n > r0 + nr - r)
			n = r0 + nr - r;
		uint32_t at = lx + (uint32_t)(r - r0) * lx_row;
		if (n <= ns || t->ndim < 2) {
			for (int64_t j = 0; j < n && !rc; j++)
				rc = plan__dma_row(c, core, load, t, r + j, s0, ns,
						   at + (uint32_t)j * lx_row);
		} else {
			struct spyre_insn in = { .op = load ? SPYRE_OP_DMA_LOAD
							    : SPYRE_OP_DMA_STORE };
			for (int64_t j = 0; j < ns && !rc; j++) {
				in.u.dma =
				    (struct spyre_dma){ .dev_addr = plan_stick_addr(t, r, s0 + j),
							.lx_addr = at + (uint32_t)j * STICK,
							.sticks = 1,
							.rows = (uint32_t)n,
							.dev_stride = (uint64_t)lead * STICK,
							.lx_stride = lx_row };
				rc = spyre_program_push(c->launch, core, &in);
			}
		}
		r += n;
	}
	return rc;
}

int plan__kernel(const char *name)
{
	int k = spyre_kernel_find(name);
	if (k < 0)
		err_set(ERR_INVAL, "planner: the vector unit has no kernel '%s'", name);
	return k;
}

int plan__vec(struct plan_ctx *c, int core, const char *kernel, const struct spyre_vec *proto)
{
	int k = plan__kernel(kernel);
	if (k < 0)
		return ERR_INVAL;
	struct spyre_insn in = { .op = SPYRE_OP_VEC };
	in.u.vec = *proto;
	in.u.vec.kernel = (uint16_t)k;
	in.u.vec.nin = spyre_kernels[k].nin;
	return spyre_program_push(c->launch, core, &in);
}

/* Zeroes `rows` rows of `cols` elements at `dst` (row stride `stride`, dtype `dt`). */
int plan__zero_fill(struct plan_ctx *c, int core, uint32_t dst, uint32_t rows, uint32_t cols,
		    uint32_t stride, enum spyre_dtype dt)
{
	struct spyre_vec v = { 0 };
	v.dtype = dt;
	v.out = dst;
	v.out_stride = stride;
	v.out_dtype = dt;
	v.rows = rows;
	v.cols = cols;
	v.scalar[0] = 0.0f;
	return plan__vec(c, core, "fill", &v);
}

int plan_variants(const struct plan_ctx *c, struct plan_variant *out)
{
	memset(out, 0, PLAN_VARIANTS_MAX * sizeof(*out)); /* unset parameters read as 0 */
	switch (c->op->cls) {
	case SPYRE_OPC_POINTWISE:
		return plan__variants_pointwise(c, out);
	case SPYRE_OPC_REDUCTION:
		return plan__variants_reduction(c, out);
	case SPYRE_OPC_NORM:
		return plan__variants_norm(c, out);
	case SPYRE_OPC_MATMUL:
		return plan__variants_matmul(c, out);
	case SPYRE_OPC_GATHER:
		return plan__variants_gather(c, out);
	case SPYRE_OPC_FUSED:
		return plan__variants_fused(c, out);
	case SPYRE_OPC_MOVE:
		return plan__variants_moves(c, out);
	default:
		return plan__variants_layout(c, out);
	}
}

int plan__barrier_all(struct plan_ctx *c)
{
	struct spyre_insn in = { .op = SPYRE_OP_BARRIER };
	for (int k = 0; k < c->launch->ncores; k++) {
		int rc = spyre_program_push(c->launch, k, &in);
		if (rc)
			return rc;
	}
	return 0;
}

int plan__scratch_tensor(struct plan_tensor *t, const int64_t *shape, int ndim,
			 enum spyre_dtype host_dtype, uint64_t addr)
{
	struct spyre_layout l;
	int rc = spyre_layout_default(&l, shape, ndim, host_dtype);
	return rc ? rc : plan_tensor_init(t, &l, addr);
}

/* ---- pointwise ---- */

/* The input row that output row r reads under broadcasting (shapes aligned on the right). */
static int64_t bcast_row(const struct plan_tensor *in, const struct plan_tensor *out, int64_t r)
{
	int64_t idx[SPYRE_DIMS_MAX];
	int on = out->ndim;
	for (int j = on - 2; j >= 0; j--) {
		idx[j] = r % out->shape[j];
		r /= out->shape[j];
	}
	int64_t ri = 0;
	int off = on - in->ndim;
	for (int j = 0; j < in->ndim - 1; j++) {
		int64_t v = in->shape[j] == 1 ? 0 : idx[j + off];
		ri = ri * in->shape[j] + v;
	}
	return ri;
}

static const char *pointwise_kernel(const struct plan_ctx *c)
{
	const char *n = c->op->name;
	if (strcmp(n, "gelu") == 0 && c->p.approximate_tanh)
		return "gelu_tanh";
	return n;
}

static void pointwise_scalars(const struct plan_ctx *c, struct spyre_vec *v)
{
	if (strcmp(c->op->name, "pow") == 0 || strstr(c->op->name, "_scalar"))
		v->scalar[0] = (float)c->p.scalar;
	if (strcmp(c->op->name, "clamp") == 0) {
		v->scalar[0] = c->p.has_min ? (float)c->p.scalar : -__builtin_inff();
		v->scalar[1] = c->p.has_max ? (float)c->p.scalar2 : __builtin_inff();
	}
}

/* One tile: rows [r0, r0 + tr) and columns [c0, c0 + w) of the output, in LX buffer `buf`. */
static int pointwise_tile(struct plan_ctx *c, int core, int64_t r0, int64_t tr, int64_t c0,
			  int64_t w, uint32_t buf)
{
	const struct plan_tensor *o = &c->out;
	struct spyre_vec v = { 0 };
	uint32_t lx = buf;
	int rc;
	for (int t = 0; t < c->nin; t++) {
		const struct plan_tensor *in = &c->in[t];
		int col_b = in->cols == 1 && o->cols > 1;
		int64_t s0 = col_b ? 0 : c0 / in->eps;
		int64_t ns = col_b ? 1 : (w + in->eps - 1) / in->eps;
		uint32_t rowb = (uint32_t)ns * STICK;
		int64_t first = bcast_row(in, o, r0);
		int same = 1;
		for (int64_t r = r0 + 1; r < r0 + tr && same; r++)
			same = bcast_row(in, o, r) == first;
		int64_t nrows = same ? 1 : tr;
		for (int64_t j = 0; j < nrows; j++)
			if ((rc = plan__dma_row(c, core, 1, in, bcast_row(in, o, r0 + j), s0, ns,
						lx + (uint32_t)j * rowb)))
				return rc;
		v.in[t] = lx;
		v.in_stride[t] = same ? 0 : rowb / in->esize;
		if (col_b)
			v.bcast_col |= (uint8_t)(1u << t);
		v.dtype = in->ddt;
		lx += (uint32_t)nrows * rowb;
	}
	int64_t ns_out = (w + o->eps - 1) / o->eps;
	uint32_t orow = (uint32_t)ns_out * STICK;
	v.out = lx;
	v.out_stride = orow / o->esize;
	v.out_dtype = o->ddt;
	v.rows = (uint32_t)tr;
	/* Whole sticks, so the padding lanes are written too; but no wider than what every
	 * input has. Lanes of the output beyond that are zeroed first (bool outputs). */
	int64_t cols = ns_out * o->eps;
	for (int t = 0; t < c->nin; t++)
		if (!(v.bcast_col & (1u << t))) {
			int64_t have = (w + c->in[t].eps - 1) / c->in[t].eps * c->in[t].eps;
			cols = have < cols ? have : cols;
		}
	if (cols < ns_out * o->eps) {
		rc = plan__zero_fill(c, core, v.out, (uint32_t)tr, (uint32_t)(ns_out * o->eps),
				     v.out_stride, o->ddt);
		if (rc)
			return rc;
	}
	v.cols = (uint32_t)cols;
	pointwise_scalars(c, &v);
	if (c->nin == 3) /* where: the condition is bool, the values decide the dtype */
		v.dtype = c->in[1].ddt;
	if ((rc = plan__vec(c, core, pointwise_kernel(c), &v)))
		return rc;
	for (int64_t j = 0; j < tr; j++)
		if ((rc = plan__dma_row(c, core, 0, o, r0 + j, c0 / o->eps, ns_out,
					lx + (uint32_t)j * orow)))
			return rc;
	return 0;
}

/* LX bytes one output row of `w` columns needs across all tensors of the tile. */
static uint64_t pointwise_row_bytes(const struct plan_ctx *c, int64_t w)
{
	uint64_t b = (uint64_t)((w + c->out.eps - 1) / c->out.eps) * STICK;
	for (int t = 0; t < c->nin; t++) {
		const struct plan_tensor *in = &c->in[t];
		b += in->cols == 1 ? STICK : (uint64_t)((w + in->eps - 1) / in->eps) * STICK;
	}
	return b;
}

int plan__build_pointwise(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *o = &c->out;
	int cores = c->launch->ncores;
	/* Output rows first; split the row into chunks of whole sticks of every tensor
	 * (128 elements) only when there are fewer rows than cores. */
	int64_t chunks = 1, w = o->cols;
	if (o->rows < cores) {
		chunks = (cores + o->rows - 1) / o->rows;
		w = (int64_t)plan__align((uint64_t)((o->cols + chunks - 1) / chunks), 128);
		chunks = (o->cols + w - 1) / w;
	}
	uint64_t rowb = pointwise_row_bytes(c, w);
	uint64_t half = c->hw->lx_bytes / 2;
	if (rowb > half)
		return err_set(ERR_LIMIT, "a row of %lld elements does not fit LX twice",
			       (long long)w);
	int64_t tr_max = (int64_t)(half / rowb);
	if (tr_max > pv->a)
		tr_max = pv->a;
	int64_t items = o->rows * chunks;
	for (int k = 0; k < cores; k++) {
		int64_t lo, hi;
		plan__split(items, cores, k, &lo, &hi);
		int tile = 0;
		for (int64_t it = lo; it < hi; tile++) {
			int64_t r0 = it / chunks, ch = it % chunks;
			int64_t tr = chunks == 1 ? (hi - it < tr_max ? hi - it : tr_max) : 1;
			int64_t c0 = ch * w;
			int64_t wc = o->cols - c0 < w ? o->cols - c0 : w;
			int rc =
			    pointwise_tile(c, k, r0, tr, c0, wc, (uint32_t)((tile % 2) * half));
			if (rc)
				return rc;
			it += tr;
		}
	}
	return 0;
}

int plan__variants_pointwise(const struct plan_ctx *c, struct plan_variant *out)
{
	static const int64_t tiles[] = { 8, 64, 1024 };
	int n = 0;
	for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
		snprintf(out[n].name, sizeof(out[n].name), "rows%lld_double_buffered",
			 (long long)tiles[i]);
		out[n].build = plan__build_pointwise;
		out[n].a = tiles[i];
		n++;
	}
	return n;
}
