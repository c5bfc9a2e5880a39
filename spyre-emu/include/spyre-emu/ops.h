/* The op table (generated from spyre-emu/ops.def, the one data file), host tensors, and the
 * float64 host reference every device result is checked against. */
#ifndef SPYRE_EMU_OPS_H
#define SPYRE_EMU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/dtype.h"
#include "spyre-emu/layout.h"

#define SPYRE_OP_INPUTS_MAX    4
#define SPYRE_TENSOR_ELEMS_MAX ((uint64_t)1 << 31) /* elements of one host tensor */

enum spyre_op_class {
	SPYRE_OPC_POINTWISE, /* elementwise with broadcasting */
	SPYRE_OPC_REDUCTION, /* along one dimension */
	SPYRE_OPC_NORM,      /* row-wise along the last dimension: softmax, norms */
	SPYRE_OPC_MATMUL,    /* mm, bmm, matmul, linear, addmm */
	SPYRE_OPC_LAYOUT,    /* transpose, permute, contiguous */
	SPYRE_OPC_GATHER,    /* embedding */
	SPYRE_OPC_FUSED,     /* swiglu_mlp, scaled_dot_product_attention */
	SPYRE_OPC_MOVE,      /* view, reshape, expand, getitem, cat, index_copy_, zeros: sticks
				moved (and re-laned) without arithmetic; see moves.c */
};

#define SPYRE_INDEX_MAX 12 /* items of a getitem index tuple */

/* One item of a getitem index tuple (Python's x[...]). */
enum spyre_index_kind {
	SPYRE_INDEX_SLICE = 0, /* start:stop:step (has_start/has_stop: else the ends) */
	SPYRE_INDEX_NONE,      /* None: a new dimension of size 1 */
	SPYRE_INDEX_ELLIPSIS,  /* ...: as many full slices as dimensions are left */
	SPYRE_INDEX_INT,       /* an integer: the dimension is dropped */
};

struct spyre_index_item {
	enum spyre_index_kind kind;
	int has_start, has_stop;
	int64_t start, stop, step; /* step 0 reads as 1 */
};

/* Parameters of an op call, beyond its tensors; each op reads the ones it needs. */
struct spyre_op_params {
	double scalar;        /* pow exponent; clamp min; ... */
	double scalar2;       /* clamp max */
	int has_min, has_max; /* clamp */
	int dim;              /* reductions, softmax: may be negative (from the end) */
	int keepdim;
	int perm[SPYRE_DIMS_MAX]; /* permute; transpose uses dim0 = perm[0], dim1 = perm[1] */
	int approximate_tanh;     /* gelu */
	int causal;               /* attention */
	double eps;               /* norms: default 1e-5 (layer_norm), 1e-6 (rms_norm) */
	/* view, reshape, expand (-1 keeps a size; view and reshape infer one -1), zeros */
	int64_t shape[SPYRE_DIMS_MAX];
	int shape_ndim;
	struct spyre_index_item index[SPYRE_INDEX_MAX]; /* getitem */
	int n_index;
	int has_out_dtype; /* to: the dtype of the result (else the input's) */
	enum spyre_dtype out_dtype;
	int has_scale; /* attention: the score scale (else 1 / sqrt(D)) */
	double scale;
};

struct spyre_op_info {
	const char *name;
	enum spyre_op_class cls;
	int nin;             /* tensor inputs */
	const char *inputs;  /* "x, w1, w3, w2": names in input order */
	const char *dtypes;  /* supported host dtypes: "float16,float32,int64" */
	const char *samples; /* default sample shapes: "67x256,67x256;63x129,63x129;..." */
	const char *doc;     /* one line */
};

extern const struct spyre_op_info spyre_ops[];
extern const size_t spyre_ops_count;
const struct spyre_op_info *spyre_op_find(const char *name);
int spyre_op_supports(const struct spyre_op_info *op, enum spyre_dtype t);

/* A dense, contiguous host tensor. */
struct spyre_tensor {
	enum spyre_dtype dtype;
	int ndim;
	int64_t shape[SPYRE_DIMS_MAX];
	void *data; /* owned */
};

int spyre_tensor_alloc(struct spyre_tensor *t, enum spyre_dtype dtype, const int64_t *shape,
		       int ndim);
void spyre_tensor_finish(struct spyre_tensor *t);
uint64_t spyre_tensor_numel(const struct spyre_tensor *t);
/* Element i as a double (any dtype), and the store back (rounded to the dtype). */
double spyre_tensor_get(const struct spyre_tensor *t, uint64_t i);
void spyre_tensor_set(struct spyre_tensor *t, uint64_t i, double v);
/* The same for every element at once (bulk conversions for 16-bit floats): out holds numel
 * doubles. */
void spyre_tensor_get_all(const struct spyre_tensor *t, double *out);
void spyre_tensor_set_all(struct spyre_tensor *t, const double *v);
/* Deterministic inputs for an op (scaled as torch-spyre's tests scale them, indices in range
 * for embedding), from `seed`. */
int spyre_op_make_inputs(const struct spyre_op_info *op, struct spyre_tensor *in, int nin,
			 const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims,
			 enum spyre_dtype dtype, uint64_t seed);
/* The same, with the op's parameters: index_copy_'s indices are distinct positions along
 * params.dim of input 0 (spyre_op_make_inputs knows no dim and uses the last, the runner's
 * default). */
int spyre_op_make_inputs_p(const struct spyre_op_info *op, struct spyre_tensor *in, int nin,
			   const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims,
			   enum spyre_dtype dtype, uint64_t seed, const struct spyre_op_params *p);
/* The host dtype of op's result for inputs of `dtype`: bool for comparisons, the target of a
 * cast (`to`, `float`), else `dtype`. */
enum spyre_dtype spyre_op_output_dtype(const struct spyre_op_info *op,
				       const struct spyre_op_params *p, enum spyre_dtype dtype);
/* The output shape of op on these inputs; ERR_INVAL naming the mismatch. */
int spyre_op_output_shape(const struct spyre_op_info *op, const struct spyre_tensor *in, int nin,
			  const struct spyre_op_params *p, int64_t *shape, int *ndim);
/* The float64 host reference, computed from the input values as stored: *out is a malloc()ed
 * row-major array of the output's *n elements (caller frees). */
int spyre_op_reference(const struct spyre_op_info *op, const struct spyre_tensor *in, int nin,
		       const struct spyre_op_params *p, double **out, uint64_t *n);

#endif
