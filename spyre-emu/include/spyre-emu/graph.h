/* Op graphs: a small dataflow graph of ops, read from YAML, run on one emulated card with the
 * intermediates kept on the device. Each op picks its plan; where a consumer needs the stick
 * dimension its producer did not write (a transpose of the last two dimensions of an op's
 * result), a relayout is planned over the ring or through device memory. What
 * `spyre-ci emu graph` runs. The document:
 *
 *   inputs: {x: [256, 1024], w1: [1024, 4096]}
 *   ops:
 *     - {name: h, op: mm, in: [x, w1]}
 *     - {name: t, op: transpose, in: [h], perm: [0, 1]}
 *     - {name: s, op: softmax, in: [t], dim: -1}
 *   outputs: [s]
 *
 * Op keys besides name, op and in: dim, keepdim, perm, eps, exponent, min, max, causal. */
#ifndef SPYRE_EMU_GRAPH_H
#define SPYRE_EMU_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"

#define SPYRE_GRAPH_INPUTS_MAX  16
#define SPYRE_GRAPH_OPS_MAX     32
#define SPYRE_GRAPH_OUTPUTS_MAX 8
#define SPYRE_GRAPH_NAME_MAX    32 /* bytes with the NUL: names of 1..31 of [A-Za-z0-9_] */
#define SPYRE_GRAPH_TENSORS_MAX (SPYRE_GRAPH_INPUTS_MAX + SPYRE_GRAPH_OPS_MAX)

struct spyre_graph_op {
	char name[SPYRE_GRAPH_NAME_MAX];
	const struct spyre_op_info *op;
	int in[SPYRE_OP_INPUTS_MAX]; /* tensor indices: inputs first, then op results */
	int nin;
	struct spyre_op_params p;
	int line;
};

struct spyre_graph {
	char input_name[SPYRE_GRAPH_INPUTS_MAX][SPYRE_GRAPH_NAME_MAX];
	int64_t input_shape[SPYRE_GRAPH_INPUTS_MAX][SPYRE_DIMS_MAX];
	int input_ndim[SPYRE_GRAPH_INPUTS_MAX];
	int ninputs;
	struct spyre_graph_op ops[SPYRE_GRAPH_OPS_MAX];
	int nops;
	int outputs[SPYRE_GRAPH_OUTPUTS_MAX]; /* tensor indices */
	int noutputs;
};

/* Parses a graph; errors read "origin:line:col: ..." (ERR_INVAL, ERR_LIMIT). Names must be
 * defined before they are used, once each. */
int spyre_graph_parse(struct spyre_graph *g, const char *text, size_t len, const char *origin);
int spyre_graph_load_file(struct spyre_graph *g, const char *path);
/* The name of tensor index t. */
const char *spyre_graph_tensor_name(const struct spyre_graph *g, int t);

enum spyre_relayout_mode { SPYRE_RELAYOUT_BEST, SPYRE_RELAYOUT_RING, SPYRE_RELAYOUT_DEVMEM };

struct spyre_graph_opts {
	enum spyre_dtype dtype; /* float16 or float32 */
	const struct spyre_hw *hw;
	enum spyre_relayout_mode relayout;
	uint64_t seed;
	const char *trace_path; /* NULL: no trace */
	int has_tol;            /* 0: the emulator's tolerance for the dtype; 1: atol, rtol */
	double atol, rtol;
};

/* One kernel or relayout, in the order they ran. */
struct spyre_graph_step {
	char name[SPYRE_GRAPH_NAME_MAX]; /* the op, or the tensor relaid out */
	char op[32];
	char plan[64];
	int relayout;
	char via[8]; /* relayouts: "ring" or "devmem" */
	uint64_t bytes;
	double modeled_us;
	double ring_us, devmem_us; /* relayouts: both paths (0: not possible) */
};

struct spyre_graph_result {
	int passed;
	double modeled_us;
	double max_abs_err, atol, rtol;
	uint64_t mismatches;
	struct spyre_graph_step steps[SPYRE_GRAPH_OPS_MAX];
	int nsteps;
};

/* Runs the graph: inputs from the seed, each op planned and executed on the device, relayouts
 * timed both ways, the outputs compared with a reference of the whole graph (each op's float64
 * reference, intermediates held in float32). 0 when it ran (passed says whether the numbers
 * agree), else an error naming the op. */
int spyre_graph_run(const struct spyre_graph *g, const struct spyre_graph_opts *o,
		    struct spyre_graph_result *r);

#endif
