/* Device layouts (torch-spyre's SpyreTensorLayout): a tensor on the device is row-major over
 * `device_size`; `stride_map[i]` is the host stride (in elements) that device dimension i
 * walks, -1 for a padded or synthetic dimension. The last device dimension is the stick: 128
 * bytes, padded. Default rule for host shape (5, 100, 150) float16:
 * device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]. */
#ifndef SPYRE_EMU_LAYOUT_H
#define SPYRE_EMU_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/dtype.h"

#define SPYRE_DIMS_MAX 8

struct spyre_layout {
	int host_ndim;
	int64_t host_size[SPYRE_DIMS_MAX];
	enum spyre_dtype host_dtype;
	enum spyre_dtype device_dtype;
	int elems_per_stick; /* 128 bytes / device element size */
	int ndim;            /* device dimensions, the last one the stick */
	int64_t device_size[SPYRE_DIMS_MAX + 2];
	int64_t stride_map[SPYRE_DIMS_MAX + 2];
	int dim_order[SPYRE_DIMS_MAX]; /* host dimensions in the order the layout takes them */
};

/* The default layout of a host tensor. 0-d tensors are treated as shape [1]. */
int spyre_layout_default(struct spyre_layout *out, const int64_t *shape, int ndim,
			 enum spyre_dtype host_dtype);
/* The layout with the host dimensions taken in `dim_order` (a permutation of 0..ndim-1; the
 * last of it becomes the stick dimension). */
int spyre_layout_with_order(struct spyre_layout *out, const int64_t *shape, int ndim,
			    enum spyre_dtype host_dtype, const int *dim_order);

uint64_t spyre_layout_elems(const struct spyre_layout *l); /* device elements, padding included */
uint64_t spyre_layout_bytes(const struct spyre_layout *l); /* always a whole number of sticks */
uint64_t spyre_layout_sticks(const struct spyre_layout *l);

/* Host tensor (any strides, in elements, host dtype) -> device bytes in `l`'s layout and
 * device dtype; padding is written as zero. */
int spyre_layout_stickify(const struct spyre_layout *l, const void *host,
			  const int64_t *host_strides, void *device);
/* Device bytes -> host tensor with the given strides (padding is ignored). */
int spyre_layout_unstickify(const struct spyre_layout *l, const void *device, void *host,
			    const int64_t *host_strides);
/* Re-layout ("restickify") between two layouts of the same host tensor (same host shape and
 * device dtype); padding of `to` is zeroed. */
int spyre_layout_relayout(const struct spyre_layout *from, const void *src,
			  const struct spyre_layout *to, void *dst);

/* Contiguous row-major host strides for a shape. */
void spyre_layout_contiguous_strides(int64_t *strides, const int64_t *shape, int ndim);

#endif
