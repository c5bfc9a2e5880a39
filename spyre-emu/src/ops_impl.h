/* Private to ops.c and reference.c: dimension and broadcasting helpers shared by the output
 * shapes and the reference. */
#ifndef SPYRE_EMU_OPS_IMPL_H
#define SPYRE_EMU_OPS_IMPL_H

#include <stdint.h>

#include "spyre-emu/ops.h"

/* dim in [-ndim, ndim) -> [0, ndim); ERR_INVAL naming the op otherwise. */
int ops__norm_dim(const struct spyre_op_info *op, int dim, int ndim, int *out);

/* PyTorch broadcasting of n shapes; ERR_INVAL naming the mismatching dimension. */
int ops__broadcast(const struct spyre_op_info *op, const struct spyre_tensor *in, int n,
		   int64_t *shape, int *ndim);

/* Flat index into t of the element that broadcasts to output multi-index idx (ondim dims). */
uint64_t ops__bcast_index(const struct spyre_tensor *t, const int64_t *idx, int ondim);

/* The matmul view of two tensors (torch.matmul rules): batch shape, M, K, N. */
struct ops_mm {
	int bndim;
	int64_t batch[SPYRE_DIMS_MAX];
	int64_t m, k, n;
	int a_vec, b_vec; /* a (b) was 1-D: M (N) is dropped from the output */
};
int ops__mm_view(const struct spyre_op_info *op, const struct spyre_tensor *a,
		 const struct spyre_tensor *b, struct ops_mm *out);

/* The axis order of transpose (perm[0] <-> perm[1]) / permute (perm) / contiguous. */
int ops__perm(const struct spyre_op_info *op, const struct spyre_op_params *p, int ndim, int *perm);

#endif
