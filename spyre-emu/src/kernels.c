/* The kernel table (generated from spyre-emu/ops.def), lookup by name, and the vector unit's
 * cost model. The kernel functions live in kernels_pointwise.c and kernels_rows.c. */
#include "spyre-emu/kernels.h"

#include <string.h>

#include "kernels_impl.h"

const struct spyre_kernel spyre_kernels[] = {
#define OP(name, cls, nin, inputs, dtypes, samples, init, doc)
#define KERNEL(name, nin, shape, passes, transcendental)                                           \
	{ #name, spyre_kernel__##name, nin, SPYRE_KSHAPE_##shape, passes, transcendental },
#include "../ops.def"
#undef OP
#undef KERNEL
};

const size_t spyre_kernels_count = sizeof(spyre_kernels) / sizeof(spyre_kernels[0]);

int spyre_kernel_find(const char *name)
{
	for (size_t i = 0; i < spyre_kernels_count; i++)
		if (strcmp(spyre_kernels[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The vector unit streams vec_elems_per_cycle elements per cycle per pass; a transcendental
 * kernel pays transcendental_factor on every pass (an upper-side estimate: only some of its
 * passes evaluate the function). Plus a fixed issue latency. */
uint64_t spyre_kernel_cycles(const struct spyre_vec *v, const struct spyre_hw *hw)
{
	if (v->kernel >= spyre_kernels_count)
		return SPYRE_KERNEL_ISSUE_CYCLES;
	const struct spyre_kernel *k = &spyre_kernels[v->kernel];
	uint64_t per = hw->vec_elems_per_cycle ? hw->vec_elems_per_cycle : 1;
	uint64_t elems = (uint64_t)v->rows * v->cols;
	uint64_t cycles = (elems + per - 1) / per * k->passes;
	if (k->transcendental && hw->transcendental_factor > 1)
		cycles *= hw->transcendental_factor;
	return cycles + SPYRE_KERNEL_ISSUE_CYCLES;
}
