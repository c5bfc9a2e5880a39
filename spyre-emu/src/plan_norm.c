/* Plans of row-wise ops along the last dimension: softmax, log_softmax, layer_norm, rms_norm.
 * Rows are split across cores; each row stays whole in LX. softmax has two plans that differ
 * in where the intermediate exp(x - max) lives: `fused_lx` keeps everything in LX (one
 * kernel), `spill_devmem` runs the steps as separate kernels and round-trips the fp32
 * intermediate through device memory, as an unfused graph would. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

/* Loads the weight/bias rows (inputs 1..) once per core at `lx`; returns the LX used. */
static int load_params(struct plan_ctx *c, int core, uint32_t lx, uint32_t *used,
		       struct spyre_vec *v)
{
	*used = 0;
	for (int t = 1; t < c->nin; t++) {
		const struct plan_tensor *p = &c->in[t];
		int rc = plan__dma_row(c, core, 1, p, 0, 0, p->sticks, lx + *used);
		if (rc)
			return rc;
		v->in[t] = lx + *used;
		v->in_stride[t] = 0;
		*used += (uint32_t)p->sticks * STICK;
	}
	return 0;
}

static int build_fused(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	uint32_t rowb = (uint32_t)x->sticks * STICK;
	uint32_t orowb = (uint32_t)o->sticks * STICK;
	uint32_t params = 0;
	for (int t = 1; t < c->nin; t++)
		params += (uint32_t)c->in[t].sticks * STICK;
	if (params >= c->hw->lx_bytes)
		return err_set(ERR_LIMIT, "%s: its weight rows of %lld elements do not fit LX",
			       c->op->name, (long long)x->cols);
	uint64_t half = (c->hw->lx_bytes - params) / 2 / STICK * STICK;
	if ((uint64_t)rowb + orowb > half)
		return err_set(ERR_LIMIT, "a row of %lld elements does not fit LX twice",
			       (long long)x->cols);
	int64_t tr_max = (int64_t)(half / (rowb + orowb));
	if (tr_max > pv->a)
		tr_max = pv->a;
	int cores = c->launch->ncores;
	for (int k = 0; k < cores; k++) {
		int64_t lo, hi;
		plan__split(x->rows, cores, k, &lo, &hi);
		struct spyre_vec v = { 0 };
		uint32_t used = 0;
		int rc = lo < hi ? load_params(c, k, 0, &used, &v) : 0;
		for (int64_t r0 = lo, t = 0; r0 < hi && !rc; r0 += tr_max, t++) {
			int64_t tr = hi - r0 < tr_max ? hi - r0 : tr_max;
			uint32_t buf = used + (uint32_t)((t % 2) * half);
			uint32_t out = buf + (uint32_t)tr * rowb;
			for (int64_t j = 0; j < tr && !rc; j++)
				rc = plan__dma_row(c, k, 1, x, r0 + j, 0, x->sticks,
						   buf + (uint32_t)j * rowb);
			v.in[0] = buf;
			v.in_stride[0] = rowb / x->esize;
			v.dtype = x->ddt;
			v.out = out;
			v.out_stride = orowb / o->esize;
			v.out_dtype = o->ddt;
			v.rows = (uint32_t)tr;
			v.cols = (uint32_t)x->cols;
			v.scalar[0] = (float)c->p.eps;
			if (!rc &&
			    x->cols % o->eps) /* the kernel writes cols; pad lanes are zero */
				rc = plan__zero_fill(c, k, out, (uint32_t)tr,
						     (uint32_t)(o->sticks * o->eps), v.out_stride,
						     o->ddt);
			if (!rc)
				rc = plan__vec(c, k, c->op->name, &v);
			for (int64_t j = 0; j < tr && !rc; j++)
				rc = plan__dma_row(c, k, 0, o, r0 + j, 0, o->sticks,
						   out + (uint32_t)j * orowb);
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* softmax as four kernels with the fp32 exp(x - max) spilled to device memory and back. */
static int build_spill(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *x = &c->in[0], *o = &c->out;
	uint32_t rowb = (uint32_t)x->sticks * STICK;
	uint32_t orowb = (uint32_t)o->sticks * STICK;
	uint32_t frowb = (uint32_t)(x->sticks * x->eps * 4); /* fp32 intermediate, x's padding */
	uint64_t half = c->hw->lx_bytes / 2;
	uint64_t per_row = rowb + orowb + frowb + 2 * STICK;
	if (per_row > half)
		return err_set(ERR_LIMIT, "a row does not fit LX twice");
	int64_t tr_max = (int64_t)(half / per_row);
	if (tr_max > pv->a)
		tr_max = pv->a;
	int cores = c->launch->ncores;
	for (int k = 0; k < cores; k++) {
		int64_t lo, hi;
		plan__split(x->rows, cores, k, &lo, &hi);
		int rc = 0;
		for (int64_t r0 = lo, t = 0; r0 < hi && !rc; r0 += tr_max, t++) {
			int64_t tr = hi - r0 < tr_max ? hi - r0 : tr_max;
			uint32_t xb = (uint32_t)((t % 2) * half);
			uint32_t eb = xb + (uint32_t)tr * rowb;
			uint32_t mb = eb + (uint32_t)tr * frowb; /* row max, one stick per row */
			uint32_t sb = mb + (uint32_t)tr * STICK; /* row sum, one stick per row */
			uint32_t ob = sb + (uint32_t)tr * STICK;
			for (int64_t j = 0; j < tr && !rc; j++)
				rc = plan__dma_row(c, k, 1, x, r0 + j, 0, x->sticks,
						   xb + (uint32_t)j * rowb);
			struct spyre_vec v = { 0 };
			v.in[0] = xb;
			v.in_stride[0] = rowb / x->esize;
			v.dtype = x->ddt;
			v.out = mb;
			v.out_stride = STICK / x->esize;
			v.out_dtype = x->ddt;
			v.rows = (uint32_t)tr;
			v.cols = (uint32_t)x->cols;
			if (!rc)
				rc = plan__vec(c, k, "row_max", &v);
			v.in[1] = mb;
			v.in_stride[1] = STICK / x->esize;
			v.bcast_col = 2;
			v.out = eb;
			v.out_stride = frowb / 4;
			v.out_dtype = SPYRE_DTYPE_FLOAT32;
			v.cols = frowb / 4; /* whole sticks, so the spill moves written bytes */
			if (!rc)
				rc = plan__vec(c, k, "exp_sub", &v);
			/* Spill to device memory and read back, as separate kernels would. */
			uint64_t dev = c->scratch + (uint64_t)r0 * frowb;
			struct spyre_insn st = { .op = SPYRE_OP_DMA_STORE };
			st.u.dma = (struct spyre_dma){ .dev_addr = dev,
						       .lx_addr = eb,
						       .sticks = (uint32_t)(tr * frowb / STICK),
						       .rows = 1 };
			if (!rc)
				rc = spyre_program_push(c->launch, k, &st);
			st.op = SPYRE_OP_DMA_LOAD;
			if (!rc)
				rc = spyre_program_push(c->launch, k, &st);
			struct spyre_vec s = { 0 };
			s.in[0] = eb;
			s.in_stride[0] = frowb / 4;
			s.dtype = SPYRE_DTYPE_FLOAT32;
			s.out = sb;
			s.out_stride = STICK / 4;
			s.out_dtype = SPYRE_DTYPE_FLOAT32;
			s.rows = (uint32_t)tr;
			s.cols = (uint32_t)x->cols;
			if (!rc)
				rc = plan__vec(c, k, "row_sum", &s);
			s.in[1] = sb;
			s.in_stride[1] = STICK / 4;
			s.bcast_col = 2;
			s.out = ob;
			s.out_stride = orowb / o->esize;
			s.out_dtype = o->ddt;
			s.cols = (uint32_t)(o->sticks * o->eps);
			if (!rc)
				rc = plan__vec(c, k, "mul_recip", &s);
			for (int64_t j = 0; j < tr && !rc; j++)
				rc = plan__dma_row(c, k, 0, o, r0 + j, 0, o->sticks,
						   ob + (uint32_t)j * orowb);
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* 1 when `fused_lx_rows*` can hold a row, its output row and the weight rows (build_fused). */
static int fused_fits(const struct plan_ctx *c)
{
	uint64_t params = 0, row = (uint64_t)(c->in[0].sticks + c->out.sticks) * STICK;
	for (int t = 1; t < c->nin; t++)
		params += (uint64_t)c->in[t].sticks * STICK;
	return params < c->hw->lx_bytes && row <= (c->hw->lx_bytes - params) / 2 / STICK * STICK;
}

int plan__variants_norm(const struct plan_ctx *c, struct plan_variant *out)
{
	if (c->p.dim != c->in[0].ndim - 1)
		return err_set(ERR_INVAL, "%s is planned along the last dimension only (dim %d)",
			       c->op->name, c->p.dim);
	int n = 0;
	static const int64_t tiles[] = { 16, 256 };
	for (size_t i = 0; i < 2; i++) {
		snprintf(out[n].name, sizeof(out[n].name), "fused_lx_rows%lld",
			 (long long)tiles[i]);
		out[n].build = build_fused;
		out[n].a = tiles[i];
		n++;
	}
	if (strcmp(c->op->name, "softmax") == 0) {
		snprintf(out[n].name, sizeof(out[n].name), "spill_devmem_rows16");
		out[n].build = build_spill;
		out[n].a = 16;
		out[n].scratch_bytes =
		    (uint64_t)c->in[0].rows * (uint64_t)(c->in[0].sticks * c->in[0].eps * 4);
		n++;
		n += plan__variants_softmax_cols(c, &out[n]);
	} else if (!fused_fits(c)) { /* rows too wide for LX: in column chunks */
		n += strcmp(c->op->name, "log_softmax") == 0
			 ? plan__variants_softmax_cols(c, &out[n])
			 : plan__variants_norm_cols(c, &out[n]);
	}
	return n;
}
