/* Vector-unit kernels: the functional math of every VEC instruction and what it costs. The
 * table is generated from spyre-emu/ops.def (one data file for ops and kernels). A kernel reads
 * its inputs from LX in the instruction's dtype (DL16 values are exact in fp32), computes in
 * fp32 (reductions accumulate in fp32), and writes its output rounded to out_dtype. */
#ifndef SPYRE_EMU_KERNELS_H
#define SPYRE_EMU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/program.h"

/* What a kernel's output looks like relative to its rows x cols input. */
enum spyre_kernel_shape {
	SPYRE_KSHAPE_ELEMENTWISE, /* rows x cols */
	SPYRE_KSHAPE_ROW_REDUCE,  /* rows x 1: one value per row (a "sparse" result on a stick) */
	SPYRE_KSHAPE_COL_REDUCE,  /* 1 x cols: across rows */
	SPYRE_KSHAPE_ROWWISE,     /* rows x cols, each row from the whole row (softmax, norms) */
	SPYRE_KSHAPE_TRANSPOSE,   /* cols x rows: out[c][r] = in[r][c] (re-sticking a tile) */
};

typedef void (*spyre_kernel_fn)(const struct spyre_vec *v, uint8_t *lx);

struct spyre_kernel {
	const char *name;
	spyre_kernel_fn fn;
	uint8_t nin;
	enum spyre_kernel_shape shape;
	uint8_t passes;         /* passes over the data on the vector unit */
	uint8_t transcendental; /* 1: pays hw->transcendental_factor per element */
};

extern const struct spyre_kernel spyre_kernels[];
extern const size_t spyre_kernels_count;

/* Conventions the planner relies on (see spyre-emu/ops.def for the list):
 *  - every input is read in v->dtype, except input 0 of "where": BOOL bytes (nonzero = true);
 *  - integer dtypes compute in int64 where the op is exact on integers (add, sub, mul, neg,
 *    abs, relu, clamp, comparisons, where, copy, sum/max/min), otherwise in fp32;
 *  - reductions accumulate in a fixed order (left to right in a row, top to bottom in a
 *    column); the *_acc variants start from the value already in the output, so a reduction
 *    split into chunks and run in order gives the same bits as one pass when the output is
 *    FLOAT32 (or an integer type);
 *  - "attn_scale_mask": out = x * scalar[0]; with scalar[2] = 1 (causal), element (r, c) is
 *    masked to SPYRE_KERNEL_MASKED when c + scalar[3] > r + scalar[1] (scalar[1] = row offset
 *    of this tile, scalar[3] = column offset of this tile);
 *  - "layer_norm" / "rms_norm": scalar[0] = eps; weight and bias are rows (stride 0).
 */
#define SPYRE_KERNEL_MASKED (-8573157376.0f) /* -(DL16 max): exp() of it is 0, finite in DL16 */

/* Fixed cycles to issue one VEC instruction (estimate: pipeline fill and drain). */
#define SPYRE_KERNEL_ISSUE_CYCLES 16

/* Index of a kernel by name, or -1. */
int spyre_kernel_find(const char *name);

/* Vector-unit cycles of one VEC instruction on `hw`:
 *   ceil(rows * cols / vec_elems_per_cycle) * passes * (transcendental ? factor : 1)
 *   + SPYRE_KERNEL_ISSUE_CYCLES.
 * An unknown kernel index costs the issue latency only. */
uint64_t spyre_kernel_cycles(const struct spyre_vec *v, const struct spyre_hw *hw);

#endif
