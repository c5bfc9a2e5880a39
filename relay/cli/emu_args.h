/* Options of `spyre-ci emu`, parsed strictly (every number through common/num.h). */
#ifndef RELAY_EMU_ARGS_H
#define RELAY_EMU_ARGS_H

#include <stdint.h>

#include "spyre-emu/graph.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"

/* The actions of `spyre-ci emu`, as bits so that each option can name the actions it fits. */
enum emu_action {
	EMU_LAYOUT = 1 << 0,
	EMU_RUN = 1 << 1,
	EMU_PLANS = 1 << 2,
	EMU_OPS = 1 << 3,
	EMU_HW = 1 << 4,
	EMU_GRAPH = 1 << 5,
};

struct emu_args {
	enum emu_action action;
	const char *op;
	int nshapes;
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int ndims[SPYRE_OP_INPUTS_MAX];
	enum spyre_dtype dtype;
	int has_dtype;
	int dim_order[SPYRE_DIMS_MAX];
	int ndim_order; /* 0: no --dim-order */
	int nperm;      /* 0: no --perm */
	int cores;      /* 0: the description's */
	uint64_t seed;
	const char *plan;
	const char *hw_path;
	const char *trace;
	const char *graph_path; /* emu graph FILE */
	const char *plan_cache; /* --plan-cache DIR */
	enum spyre_relayout_mode relayout;
	int json;
	double atol, rtol;
	struct spyre_op_params params;
	struct spyre_hw hw; /* loaded by emu_args_to_opts */
};

/* argv[0] is the action (layout, run, plans, ops, hw); the options must fit it. 0 or ERR_INVAL
 * with the problem in err_last(). */
int emu_args_parse(struct emu_args *a, int argc, char **argv);
void emu_args_finish(struct emu_args *a);
/* Loads the hardware description, applies --cores, fills *o (which points into a). */
int emu_args_to_opts(struct emu_args *a, struct spyre_run_opts *o);

/* "5x100x150" -> dims; ERR_INVAL naming the bad part. */
int emu_parse_shape(int64_t *dims, int *ndim, const char *text);
/* "1,0,2" -> ints in [0, max); returns the count or ERR_INVAL. */
int emu_parse_int_list(int *out, int cap, const char *text, int max);

#endif
