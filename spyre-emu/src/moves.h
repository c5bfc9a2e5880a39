/* Private to the MOVE ops (view, reshape, unsqueeze, expand, getitem, cat, index_copy_,
 * zeros): what element of which input every output element is. One map, read by the float64
 * reference (reference_moves.h) and by the planner (plan_moves.c), so both agree on the
 * semantics; the semantics themselves are checked by unit tests against outputs written out by
 * hand (tests/unit/spyre-emu/moves.c). */
#ifndef SPYRE_EMU_MOVES_H
#define SPYRE_EMU_MOVES_H

#include <stdint.h>

#include "spyre-emu/ops.h"

enum moves_kind {
	MOVES_FLAT,
	MOVES_EXPAND,
	MOVES_GETITEM,
	MOVES_CAT,
	MOVES_INDEX_COPY,
	MOVES_ZERO
};

struct moves_map {
	enum moves_kind kind;
	int nin;
	int64_t in_shape[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int in_ndim[SPYRE_OP_INPUTS_MAX];
	int64_t out_shape[SPYRE_DIMS_MAX];
	int out_ndim;
	int dim; /* cat, index_copy_: in output dims */
	/* getitem: per output dim, the input dim it walks (-1: a new dim) with start and step;
	 * `base` adds the integer items' fixed positions */
	int src_dim[SPYRE_DIMS_MAX];
	int64_t start[SPYRE_DIMS_MAX], step[SPYRE_DIMS_MAX];
	int64_t base;
	const int64_t *slot_of; /* index_copy_: per position along dim, the source row or -1 */
};

/* The output shape of a MOVE op; ERR_INVAL naming what does not fit. */
int moves__shape(const struct spyre_op_info *op, const int64_t shapes[][SPYRE_DIMS_MAX],
		 const int *ndims, int nin, const struct spyre_op_params *p, int64_t *shape,
		 int *ndim);

/* Fills *m for op on these input shapes. `slot_of` (index_copy_ only) has out_shape[dim]
 * entries and stays the caller's. */
int moves__map_init(struct moves_map *m, const struct spyre_op_info *op,
		    const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims, int nin,
		    const struct spyre_op_params *p, const int64_t *slot_of);

/* The input that output element `o` (row-major flat index) comes from, -1 for a zero; its
 * row-major flat index in *src. */
int moves__source(const struct moves_map *m, uint64_t o, uint64_t *src);

/* index_copy_: slot_of[i] = j where index[j] == i, else -1; ERR_INVAL for an index out of
 * range or repeated (torch leaves a repeated index undefined). */
int moves__slots(int64_t *slot_of, int64_t size, const int64_t *index, int64_t n);

#endif
