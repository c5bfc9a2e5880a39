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

/* Index of a kernel by name, or -1. */
int spyre_kernel_find(const char *name);

/* Vector-unit cycles of one VEC instruction on `hw` (elements / throughput x passes x cost). */
uint64_t spyre_kernel_cycles(const struct spyre_vec *v, const struct spyre_hw *hw);

#endif
