/* The planner's private interface: how an op with concrete shapes becomes per-core programs.
 * Tensors live in device memory in torch-spyre's default layout (layout.h); the planner views
 * every tensor as rows (all host dimensions but the last) of sticks (the last dimension). Each
 * op class offers one or more candidate plans (plan variants); run.c validates and times each,
 * and runs the fastest unless one is asked for by name. */
#ifndef SPYRE_EMU_PLAN_H
#define SPYRE_EMU_PLAN_H

#include <stdint.h>

#include "spyre-emu/device.h"
#include "spyre-emu/layout.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/program.h"

/* A tensor on the device, seen as rows x cols. */
struct plan_tensor {
	struct spyre_layout l;
	uint64_t addr;
	int ndim;                          /* host dims (0-d counts as 1-d of size 1) */
	int64_t shape[SPYRE_DIMS_MAX];     /* host shape */
	int64_t rows, cols;                /* product of all but the last dim; the last dim */
	int64_t sticks;                    /* sticks per row */
	int eps;                           /* elements per stick */
	uint32_t esize;                    /* device element bytes */
	enum spyre_dtype ddt;              /* device dtype */
	int64_t s_step;                    /* stick-index step between sticks of one row */
	int64_t lead_step[SPYRE_DIMS_MAX]; /* stick-index step of each leading host dim */
};

struct plan_ctx {
	const struct spyre_hw *hw;
	struct spyre_device *dev;
	const struct spyre_op_info *op;
	struct spyre_op_params p; /* dim normalised to 0..ndim-1 */
	struct plan_tensor in[SPYRE_OP_INPUTS_MAX];
	int nin;
	struct plan_tensor out;
	struct spyre_launch *launch;
	uint64_t scratch; /* device scratch for spilling plans (0 if none) */
	uint64_t scratch_bytes;
};

struct plan_variant {
	char name[64];
	int (*build)(struct plan_ctx *c, const struct plan_variant *v);
	int64_t a, b, c, d;     /* variant parameters (tile sizes, K split, flags) */
	uint64_t scratch_bytes; /* device scratch it needs */
};

#define PLAN_VARIANTS_MAX 16

/* Fills in `t`'s row view from its layout. 0 or ERR_INVAL (a layout the planner cannot address). */
int plan_tensor_init(struct plan_tensor *t, const struct spyre_layout *l, uint64_t addr);
/* Device byte address of stick `s` of row `r`. */
uint64_t plan_stick_addr(const struct plan_tensor *t, int64_t r, int64_t s);
/* Candidate plans of the op in `c`; returns how many, or a negative error. */
int plan_variants(const struct plan_ctx *c, struct plan_variant *out);

/* ---- building blocks shared by the plan files ---- */
int plan__dma_row(struct plan_ctx *c, int core, int load, const struct plan_tensor *t, int64_t r,
		  int64_t s0, int64_t ns, uint32_t lx);
/* Rows [r0, r0 + nr), sticks [s0, s0 + ns) of `t` to or from LX at `lx`, row pitch `lx_row`
 * bytes: one DMA per stick column where that takes fewer than one per row. */
int plan__dma_block(struct plan_ctx *c, int core, int load, const struct plan_tensor *t, int64_t r0,
		    int64_t nr, int64_t s0, int64_t ns, uint32_t lx, uint32_t lx_row);
int plan__vec(struct plan_ctx *c, int core, const char *kernel, const struct spyre_vec *proto);
int plan__kernel(const char *name);
/* Zeroes `rows` x `cols` elements at `dst` (row stride `stride`, dtype `dt`) with the fill
 * kernel: padding lanes a kernel does not write must still be written before a DMA stores them. */
int plan__zero_fill(struct plan_ctx *c, int core, uint32_t dst, uint32_t rows, uint32_t cols,
		    uint32_t stride, enum spyre_dtype dt);
/* Splits n items over `cores` as evenly as possible: core k gets [*lo, *hi). */
void plan__split(int64_t n, int cores, int k, int64_t *lo, int64_t *hi);
uint32_t plan__align(uint64_t x, uint32_t a);

int plan__variants_pointwise(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_reduction(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_norm(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_matmul(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_gather(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_fused(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_flash(const struct plan_ctx *c, struct plan_variant *out); /* plan_flash.c */
int plan__variants_softmax_cols(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_norm_cols(const struct plan_ctx *c,
			     struct plan_variant *out); /* plan_norm_cols.c */
int plan__variants_ffn(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_layout(const struct plan_ctx *c, struct plan_variant *out);
int plan__variants_moves(const struct plan_ctx *c, struct plan_variant *out); /* plan_moves.c */

/* Builders other plans compose (with a plan_ctx of their own making). */
int plan__build_pointwise(struct plan_ctx *c, const struct plan_variant *pv);
int plan__build_mm(struct plan_ctx *c, const struct plan_variant *pv);
/* The re-stick of a transpose of the last two dimensions as a relayout between two ops: over the
 * ring (`ring`) or through device memory with a barrier; `in_lx`: the producer left its rows in
 * LX and the consumer takes the assembled rows from LX, so the rows are neither loaded nor
 * stored (that launch is for the timing model only: it reads LX it did not write). */
int plan__relayout_build(struct plan_ctx *c, int ring, int in_lx);
/* Device scratch the device-memory relayout needs (0: the re-stick does not fit LX). */
uint64_t plan__relayout_scratch(const struct plan_ctx *c);
/* Every core waits at a barrier (between phases that hand data through device memory). */
int plan__barrier_all(struct plan_ctx *c);
/* A device tensor of `shape` at `addr` in the default layout. */
int plan__scratch_tensor(struct plan_tensor *t, const int64_t *shape, int ndim,
			 enum spyre_dtype host_dtype, uint64_t addr);

#endif
