/* Plans of reductions (sum, mean, max, min along one dimension). Along the stick dimension a
 * row reduces to one value (a "sparse" result), which the kernel writes re-sticked: the values
 * of consecutive rows side by side. Along any other dimension whole rows are combined column
 * by column, in chunks that fit LX, accumulating in fp32 (int64 for integers) in a fixed order.
 * Never split along the reduced dimension across cores, so the bits do not depend on the core
 * count. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "plan.h"

#define STICK 128u

/* Along the stick dimension with results packed side by side (the output keeps more than one
 * value per row): a work item is one output stick, the results of up to one stick of input
 * rows, reduced in batches of as many rows as fit half of LX into a stick that is stored once. */
static int reduce_last_packed(struct plan_ctx *c, const char *kname)
{
	const struct plan_tensor *in = &c->in[0], *o = &c->out;
	uint32_t rowb = (uint32_t)in->sticks * STICK;
	uint64_t half = (c->hw->lx_bytes - 2 * STICK) / 2 / STICK * STICK;
	uint32_t outs = (uint32_t)(2 * half); /* two result sticks after the two buffers */
	int64_t tr_max = (int64_t)(half / rowb);
	if (tr_max < 1)
		return err_set(ERR_LIMIT, "a row of %lld elements does not fit LX twice",
			       (long long)in->cols);
	int64_t per_row = (o->cols + o->eps - 1) / o->eps, items = o->rows * per_row;
	for (int k = 0; k < c->launch->ncores; k++) {
		int64_t lo, hi, batch = 0;
		plan__split(items, c->launch->ncores, k, &lo, &hi);
		for (int64_t it = lo; it < hi; it++) {
			int64_t orow = it / per_row, first = it % per_row * o->eps;
			int64_t n = o->cols - first < o->eps ? o->cols - first : o->eps;
			uint32_t out = outs + (uint32_t)(it % 2) * STICK;
			int rc = plan__zero_fill(c, k, out, 1, (uint32_t)o->eps, (uint32_t)o->eps,
						 o->ddt);
			for (int64_t j0 = 0; j0 < n && !rc; j0 += tr_max, batch++) {
				int64_t tr = n - j0 < tr_max ? n - j0 : tr_max;
				uint32_t buf = (uint32_t)((batch % 2) * half);
				int64_t r0 = orow * o->cols + first + j0;
				for (int64_t j = 0; j < tr && !rc; j++)
					rc = plan__dma_row(c, k, 1, in, r0 + j, 0, in->sticks,
							   buf + (uint32_t)j * rowb);
				struct spyre_vec v = { 0 };
				v.in[0] = buf;
				v.in_stride[0] = rowb / in->esize;
				v.dtype = in->ddt;
				v.out = out + (uint32_t)j0 * o->esize;
				v.out_stride = 1;
				v.out_dtype = o->ddt;
				v.rows = (uint32_t)tr;
				v.cols = (uint32_t)in->cols;
				if (!rc)
					rc = plan__vec(c, k, kname, &v);
			}
			if (!rc)
				rc = plan__dma_row(c, k, 0, o, orow, first / o->eps, 1, out);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int build_reduce_last(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *in = &c->in[0], *o = &c->out;
	char kname[32];
	snprintf(kname, sizeof(kname), "row_%s", c->op->name);
	uint64_t half = c->hw->lx_bytes / 2;
	uint32_t rowb = (uint32_t)in->sticks * STICK;
	int packed = o->cols > 1;
	/* rows too wide for a whole output stick of them in half of LX */
	if (packed && (uint64_t)o->eps * (rowb + STICK) > half)
		return reduce_last_packed(c, kname);
	int64_t tr_max = (int64_t)(half / (rowb + STICK)); /* input rows + their results */
	if (tr_max < 1)
		return err_set(ERR_LIMIT, "a row of %lld elements does not fit LX twice",
			       (long long)in->cols);
	if (tr_max > pv->a)
		tr_max = pv->a;
	if (packed && tr_max >= o->eps)
		tr_max -= tr_max % o->eps; /* tiles start on output sticks */
	/* Work items: tiles of input rows that stay inside one output row. */
	int64_t per_out_row = packed ? o->cols : in->rows;
	int64_t tiles_per = (per_out_row + tr_max - 1) / tr_max;
	int64_t ntiles = (packed ? o->rows : 1) * tiles_per;
	int cores = c->launch->ncores;
	for (int k = 0; k < cores; k++) {
		int64_t lo, hi;
		plan__split(ntiles, cores, k, &lo, &hi);
		for (int64_t t = lo; t < hi; t++) {
			uint32_t buf = (uint32_t)((t % 2) * half);
			int64_t orow = t / tiles_per, first = (t % tiles_per) * tr_max;
			int64_t tr = per_out_row - first < tr_max ? per_out_row - first : tr_max;
			int64_t r0 = (packed ? orow * o->cols : 0) + first;
			int rc = 0;
			for (int64_t j = 0; j < tr && !rc; j++)
				rc = plan__dma_row(c, k, 1, in, r0 + j, 0, in->sticks,
						   buf + (uint32_t)j * rowb);
			uint32_t out = buf + (uint32_t)tr * rowb;
			uint32_t ost = packed ? 1 : (uint32_t)o->eps;
			uint32_t osticks = packed ? (uint32_t)((tr + o->eps - 1) / o->eps) : 1;
			if (!rc)
				rc = plan__zero_fill(c, k, out, packed ? 1 : (uint32_t)tr,
						     packed ? osticks * (uint32_t)o->eps
							    : (uint32_t)o->eps,
						     (uint32_t)o->eps * osticks, o->ddt);
			struct spyre_vec v = { 0 };
			v.in[0] = buf;
			v.in_stride[0] = rowb / in->esize;
			v.dtype = in->ddt;
			v.out = out;
			v.out_stride = ost;
			v.out_dtype = o->ddt;
			v.rows = (uint32_t)tr;
			v.cols = (uint32_t)in->cols;
			if (!rc)
				rc = plan__vec(c, k, kname, &v);
			if (packed && !rc)
				rc = plan__dma_row(c, k, 0, o, orow, first / o->eps, osticks, out);
			for (int64_t j = 0; !packed && j < tr && !rc; j++)
				rc = plan__dma_row(c, k, 0, o, r0 + j, 0, 1,
						   out + (uint32_t)j * STICK);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Input row of output row `orow` at index `i` of the reduced dimension d (< ndim - 1). */
static int64_t col_input_row(const struct plan_tensor *in, int d, int64_t orow, int64_t i)
{
	int n = in->ndim;
	int64_t idx[SPYRE_DIMS_MAX];
	for (int j = n - 2; j >= 0; j--) {
		if (j == d) {
			idx[j] = i;
			continue;
		}
		idx[j] = orow % in->shape[j];
		orow /= in->shape[j];
	}
	int64_t r = 0;
	for (int j = 0; j < n - 1; j++)
		r = r * in->shape[j] + idx[j];
	return r;
}

static int build_reduce_cols(struct plan_ctx *c, const struct plan_variant *pv)
{
	const struct plan_tensor *in = &c->in[0], *o = &c->out;
	int d = c->p.dim;
	int64_t hd = in->shape[d];
	int isf = spyre_dtype_is_float(in->ddt);
	enum spyre_dtype acc = isf ? SPYRE_DTYPE_FLOAT32 : SPYRE_DTYPE_INT64;
	const char *base = strcmp(c->op->name, "mean") == 0 ? "sum" : c->op->name;
	char k_first[32], k_acc[32];
	snprintf(k_first, sizeof(k_first), "col_%s", base);
	snprintf(k_acc, sizeof(k_acc), "col_%s_acc", base);
	int cores = c->launch->ncores;
	int64_t chunks = 1, w = in->cols;
	if (o->rows < cores) {
		chunks = (cores + o->rows - 1) / o->rows;
		w = (int64_t)plan__align((uint64_t)((in->cols + chunks - 1) / chunks), 128);
		chunks = (in->cols + w - 1) / w;
	}
	int64_t ns = (w + in->eps - 1) / in->eps;
	uint32_t rowb = (uint32_t)ns * STICK;
	uint64_t half = c->hw->lx_bytes / 2;
	uint32_t accb = plan__align((uint64_t)ns * in->eps * 8, STICK);
	uint32_t outb = plan__align((uint64_t)ns * in->eps * o->esize, STICK);
	if (half < (uint64_t)accb + outb + rowb)
		return err_set(ERR_LIMIT, "a row of %lld elements does not fit LX", (long long)w);
	int64_t gd = (int64_t)((half - accb - outb) / rowb);
	if (gd > pv->a)
		gd = pv->a;
	int64_t items = o->rows * chunks;
	for (int k = 0; k < cores; k++) {
		int64_t lo, hi;
		plan__split(items, cores, k, &lo, &hi);
		for (int64_t it = lo; it < hi; it++) {
			int64_t orow = it / chunks, c0 = (it % chunks) * w;
			int64_t wc = in->cols - c0 < w ? in->cols - c0 : w;
			int64_t nsc = (wc + in->eps - 1) / in->eps;
			uint32_t buf = (uint32_t)((it % 2) * half);
			uint32_t accl = buf, outl = buf + accb, rows_l = buf + accb + outb;
			int rc = 0;
			for (int64_t i0 = 0; i0 < hd && !rc; i0 += gd) {
				int64_t g = hd - i0 < gd ? hd - i0 : gd;
				for (int64_t j = 0; j < g && !rc; j++)
					rc = plan__dma_row(
					    c, k, 1, in, col_input_row(in, d, orow, i0 + j),
					    c0 / in->eps, nsc, rows_l + (uint32_t)j * rowb);
				struct spyre_vec v = { 0 };
				v.in[0] = rows_l;
				v.in_stride[0] = rowb / in->esize;
				v.dtype = in->ddt;
				v.out = accl;
				v.out_stride = (uint32_t)(nsc * in->eps);
				v.out_dtype = acc;
				v.rows = (uint32_t)g;
				v.cols = (uint32_t)(nsc * in->eps);
				if (!rc)
					rc = plan__vec(c, k, i0 ? k_acc : k_first, &v);
			}
			struct spyre_vec f = { 0 };
			f.in[0] = accl;
			f.dtype = acc;
			f.out = outl;
			f.out_dtype = o->ddt;
			f.rows = 1;
			f.cols = (uint32_t)(nsc * in->eps);
			f.scalar[0] =
			    strcmp(c->op->name, "mean") == 0 ? (float)(1.0 / (double)hd) : 1;
			if (!rc)
				rc = plan__vec(c, k, isf ? "scale" : "copy", &f);
			int64_t ons = (wc + o->eps - 1) / o->eps;
			if (!rc)
				rc = plan__dma_row(c, k, 0, o, orow, c0 / o->eps, ons, outl);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int plan__variants_reduction(const struct plan_ctx *c, struct plan_variant *out)
{
	int last = c->p.dim == c->in[0].ndim - 1;
	static const int64_t tiles[] = { 64, 512 };
	int n = 0;
	for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
		snprintf(out[n].name, sizeof(out[n].name), "%s_rows%lld",
			 last ? "stick_dim" : "across_rows", (long long)tiles[i]);
		out[n].build = last ? build_reduce_last : build_reduce_cols;
		out[n].a = tiles[i];
		n++;
	}
	return n;
}
