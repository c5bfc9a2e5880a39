/* Device layouts: torch-spyre's SpyreTensorLayout rule, and the copies between a host tensor and
 * its device bytes ("stickify"), back ("unstickify"), and between two layouts ("relayout").
 *
 * The rule, as torch-spyre's SpyreTensorLayout::init (torch_spyre/csrc/spyre_tensor_impl.cpp)
 * computes it, restated in our words: take the host dimensions in `dim_order` (identity by
 * default); the last of them, S, is the stick dimension. The device has host_ndim + 1
 * dimensions: first dim_order[1], ..., dim_order[n-1] (S's extent there being its number of
 * sticks, ceil(size / elems_per_stick)), then dim_order[0], then the stick itself
 * (elems_per_stick). stride_map walks the contiguous host strides: the within-stick dimension
 * gets S's host stride, and each further device dimension of host dimension h gets h's host
 * stride times what the earlier device dimensions of h already covered (so the stick count of
 * S walks 64 for fp16); host dimensions of size 1 get -1. Check against docs/emu.md: (5, 100, 150)
 * fp16 -> device_size [100, 3, 5, 64], stride_map [150, 64, 15000, 1] (tests/unit/spyre-emu/
 * layout.c). Only the stick dimension is ever padded: every other device extent equals its host
 * size. torch-spyre's "sparse" variant (dim_order ending in -1) is not modelled. */
#include "spyre-emu/layout.h"

#include <string.h>

#include "common/err.h"
#include "spyre-emu/dl16.h"

/* The largest tensor a layout may describe: the card's 128 GB of device memory (2^37 bytes). */
#define LAYOUT_BYTES_MAX ((uint64_t)1 << 37)
#define STICK_BYTES      128

/* Where device dimension k (not the last) takes its host coordinate from: host dimension
 * `host_dim`, coordinate = index * `mult` (elems_per_stick for the stick count, else 1). */
struct dev_map {
	int host_dim[SPYRE_DIMS_MAX + 1];
	int64_t mult[SPYRE_DIMS_MAX + 1];
	int stick_dim;
};

void spyre_layout_contiguous_strides(int64_t *strides, const int64_t *shape, int ndim)
{
	int64_t s = 1;
	for (int i = ndim - 1; i >= 0; i--) {
		strides[i] = s;
		s *= shape[i] > 0 ? shape[i] : 1;
	}
}

static int check_order(const int *dim_order, int ndim)
{
	int seen[SPYRE_DIMS_MAX] = { 0 };
	for (int i = 0; i < ndim; i++) {
		int d = dim_order[i];
		if (d < 0 || d >= ndim)
			return err_set(ERR_INVAL, "layout: dim_order[%d] = %d is not in 0..%d", i,
				       d, ndim - 1);
		if (seen[d]++)
			return err_set(ERR_INVAL, "layout: dim_order names dimension %d twice", d);
	}
	return 0;
}

static int check_shape(const int64_t *shape, int ndim, enum spyre_dtype host_dtype)
{
	if (ndim < 0 || ndim > SPYRE_DIMS_MAX)
		return err_set(ERR_INVAL, "layout: %d dimensions (expected 0..%d)", ndim,
			       SPYRE_DIMS_MAX);
	if ((unsigned)host_dtype >= SPYRE_DTYPE_COUNT || host_dtype == SPYRE_DTYPE_DL16)
		return err_set(ERR_INVAL, "layout: host dtype %d is not a host dtype",
			       (int)host_dtype);
	if (ndim > 0 && shape == NULL)
		return err_set(ERR_INVAL, "layout: no shape");
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return err_set(ERR_INVAL, "layout: size %lld of dimension %d is negative",
				       (long long)shape[i], i);
	return 0;
}

/* The device position of the i-th host dimension in dim_order (see the file comment). */
static int dev_pos(int i, int host_rank)
{
	return i == 0 ? host_rank - 1 : i - 1;
}

static int fill_strides(struct spyre_layout *l)
{
	int n = l->host_ndim, sd = l->dim_order[n - 1];
	int64_t hs[SPYRE_DIMS_MAX], covered[SPYRE_DIMS_MAX];
	spyre_layout_contiguous_strides(hs, l->host_size, n);
	for (int i = 0; i < n; i++)
		covered[i] = -1;
	for (int k = 0; k <= n; k++)
		l->stride_map[k] = -1;
	/* The within-stick dimension first, then the others from the back (finest first). */
	for (int j = n; j >= 0; j--) {
		int h = j == n ? sd : l->dim_order[j];
		int k = j == n ? n : dev_pos(j, n);
		if (l->host_size[h] == 1)
			continue;
		l->stride_map[k] = covered[h] == -1 ? hs[h] : covered[h];
		int64_t next = l->stride_map[k] * l->device_size[k];
		int64_t whole = hs[h] * l->host_size[h];
		covered[h] = next < whole ? next : whole;
	}
	return 0;
}

static int check_bytes(const struct spyre_layout *l)
{
	uint64_t bytes = spyre_dtype_size(l->device_dtype);
	for (int k = 0; k < l->ndim; k++) {
		uint64_t d = (uint64_t)l->device_size[k];
		if (d != 0 && bytes > LAYOUT_BYTES_MAX / d)
			return err_set(ERR_LIMIT,
				       "layout: the device tensor is larger than the card's "
				       "memory (%llu bytes)",
				       (unsigned long long)LAYOUT_BYTES_MAX);
		bytes *= d;
	}
	return 0;
}

int spyre_layout_with_order(struct spyre_layout *out, const int64_t *shape, int ndim,
			    enum spyre_dtype host_dtype, const int *dim_order)
{
	static const int64_t scalar_shape[1] = { 1 };
	static const int scalar_order[1] = { 0 };
	int rc = check_shape(shape, ndim, host_dtype);
	if (rc != 0)
		return rc;
	if (ndim == 0) { /* a scalar: shape [1] */
		shape = scalar_shape;
		dim_order = scalar_order;
		ndim = 1;
	}
	if (dim_order == NULL)
		return err_set(ERR_INVAL, "layout: no dim_order");
	if ((rc = check_order(dim_order, ndim)) != 0)
		return rc;

	struct spyre_layout l;
	memset(&l, 0, sizeof(l));
	l.host_ndim = ndim;
	memcpy(l.host_size, shape, (size_t)ndim * sizeof(*shape));
	memcpy(l.dim_order, dim_order, (size_t)ndim * sizeof(*dim_order));
	l.host_dtype = host_dtype;
	l.device_dtype = spyre_dtype_device(host_dtype);
	l.elems_per_stick = STICK_BYTES / (int)spyre_dtype_size(l.device_dtype);
	l.ndim = ndim + 1;
	int sd = dim_order[ndim - 1];
	for (int i = 0; i < ndim; i++) {
		int h = dim_order[i];
		int64_t ext = shape[h];
		if (h == sd)
			ext = (ext + l.elems_per_stick - 1) / l.elems_per_stick;
		l.device_size[dev_pos(i, ndim)] = ext;
	}
	l.device_size[ndim] = l.elems_per_stick;
	if ((rc = check_bytes(&l)) != 0)
		return rc;
	fill_strides(&l);
	*out = l;
	return 0;
}

int spyre_layout_default(struct spyre_layout *out, const int64_t *shape, int ndim,
			 enum spyre_dtype host_dtype)
{
	int order[SPYRE_DIMS_MAX];
	for (int i = 0; i < SPYRE_DIMS_MAX; i++)
		order[i] = i;
	return spyre_layout_with_order(out, shape, ndim, host_dtype, order);
}

uint64_t spyre_layout_elems(const struct spyre_layout *l)
{
	uint64_t n = 1;
	for (int k = 0; k < l->ndim; k++)
		n *= (uint64_t)l->device_size[k];
	return n;
}

uint64_t spyre_layout_bytes(const struct spyre_layout *l)
{
	return spyre_layout_elems(l) * spyre_dtype_size(l->device_dtype);
}

uint64_t spyre_layout_sticks(const struct spyre_layout *l)
{
	return l->elems_per_stick > 0 ? spyre_layout_elems(l) / (uint64_t)l->elems_per_stick : 0;
}

/* A layout handed to the copy functions must be one the rule makes: recomputing it from its
 * host shape and dim_order gives the same device_size and stride_map. */
static int check_layout(const struct spyre_layout *l, struct dev_map *m)
{
	struct spyre_layout want;
	if (l == NULL)
		return err_set(ERR_INVAL, "layout: no layout");
	int rc =
	    spyre_layout_with_order(&want, l->host_size, l->host_ndim, l->host_dtype, l->dim_order);
	if (rc != 0)
		return err_prefix("layout: not a valid layout");
	if (want.ndim != l->ndim || want.device_dtype != l->device_dtype ||
	    want.elems_per_stick != l->elems_per_stick ||
	    memcmp(want.device_size, l->device_size, sizeof(want.device_size)) != 0 ||
	    memcmp(want.stride_map, l->stride_map, sizeof(want.stride_map)) != 0)
		return err_set(ERR_INVAL, "layout: device_size/stride_map do not follow from the "
					  "host shape and dim_order");
	int n = l->host_ndim;
	m->stick_dim = l->dim_order[n - 1];
	for (int i = 0; i < n; i++) {
		int h = l->dim_order[i];
		int k = dev_pos(i, n);
		m->host_dim[k] = h;
		m->mult[k] = h == m->stick_dim ? l->elems_per_stick : 1;
	}
	return 0;
}

/* Which way a stick moves, and how its elements change format on the way. */
enum dir { TO_DEVICE, TO_HOST };

static void convert(const struct spyre_layout *l, enum dir dir, void *dst, const void *src,
		    size_t n)
{
	if (l->host_dtype == SPYRE_DTYPE_FLOAT16 && dir == TO_DEVICE)
		spyre_dl16_from_half_n(dst, src, n);
	else if (l->host_dtype == SPYRE_DTYPE_FLOAT16)
		spyre_dl16_to_half_n(dst, src, n);
	else if (l->host_dtype == SPYRE_DTYPE_BFLOAT16 && dir == TO_DEVICE)
		spyre_dl16_from_bf16_n(dst, src, n);
	else if (l->host_dtype == SPYRE_DTYPE_BFLOAT16)
		spyre_dl16_to_bf16_n(dst, src, n);
	else
		memcpy(dst, src, n * spyre_dtype_size(l->host_dtype));
}

/* Moves one stick between the host tensor and the device bytes: `valid` elements, the host
 * ones `hstride` elements apart from `host`; device padding (when going there) is zeroed. */
static void move_stick(const struct spyre_layout *l, enum dir dir, char *host, int64_t hstride,
		       char *dev, int valid)
{
	size_t es = spyre_dtype_size(l->host_dtype);
	unsigned char tmp[STICK_BYTES];
	if (hstride == 1 && dir == TO_DEVICE) { /* contiguous on the host: no gather */
		convert(l, dir, dev, host, (size_t)valid);
		memset(dev + (size_t)valid * es, 0, (size_t)(l->elems_per_stick - valid) * es);
	} else if (hstride == 1) {
		convert(l, dir, host, dev, (size_t)valid);
	} else if (dir == TO_DEVICE) {
		for (int e = 0; e < valid; e++)
			memcpy(tmp + (size_t)e * es, host + e * hstride * (int64_t)es, es);
		convert(l, dir, dev, tmp, (size_t)valid);
		memset(dev + (size_t)valid * es, 0, (size_t)(l->elems_per_stick - valid) * es);
	} else {
		convert(l, dir, tmp, dev, (size_t)valid);
		for (int e = 0; e < valid; e++)
			memcpy(host + e * hstride * (int64_t)es, tmp + (size_t)e * es, es);
	}
}

/* Walks every stick of the device tensor in device order (an odometer over all device
 * dimensions but the last) and moves it. */
static int walk(const struct spyre_layout *l, enum dir dir, char *host, const int64_t *host_strides,
		char *dev)
{
	struct dev_map m;
	int rc = check_layout(l, &m);
	if (rc != 0)
		return rc;
	if (host == NULL || dev == NULL)
		return err_set(ERR_INVAL, "layout: NULL host or device buffer");
	int64_t cs[SPYRE_DIMS_MAX];
	if (host_strides == NULL) {
		spyre_layout_contiguous_strides(cs, l->host_size, l->host_ndim);
		host_strides = cs;
	}
	uint64_t nsticks = spyre_layout_sticks(l);
	int nd = l->ndim - 1, eps = l->elems_per_stick;
	size_t es = spyre_dtype_size(l->host_dtype), stick = (size_t)STICK_BYTES;
	int64_t idx[SPYRE_DIMS_MAX + 1] = { 0 };
	int64_t ssize = l->host_size[m.stick_dim], sstride = host_strides[m.stick_dim];
	for (uint64_t s = 0; s < nsticks; s++) {
		int64_t off = 0, start = 0;
		for (int k = 0; k < nd; k++) {
			off += idx[k] * m.mult[k] * host_strides[m.host_dim[k]];
			if (m.host_dim[k] == m.stick_dim)
				start += idx[k] * m.mult[k];
		}
		int64_t left = ssize - start;
		int valid = left <= 0 ? 0 : left < eps ? (int)left : eps;
		move_stick(l, dir, host + off * (int64_t)es, sstride, dev + s * stick, valid);
		for (int k = nd - 1; k >= 0; k--) {
			if (++idx[k] < l->device_size[k])
				break;
			idx[k] = 0;
		}
	}
	return 0;
}

int spyre_layout_stickify(const struct spyre_layout *l, const void *host,
			  const int64_t *host_strides, void *device)
{
	/* walk() only reads the host side when moving TO_DEVICE. */
	return walk(l, TO_DEVICE, (char *)(uintptr_t)host, host_strides, device);
}

int spyre_layout_unstickify(const struct spyre_layout *l, const void *device, void *host,
			    const int64_t *host_strides)
{
	/* walk() only reads the device side when moving TO_HOST. */
	return walk(l, TO_HOST, host, host_strides, (char *)(uintptr_t)device);
}

/* The element offset in `l`'s device bytes of host coordinates `c`. */
static uint64_t dev_offset(const struct spyre_layout *l, const struct dev_map *m, const int64_t *c)
{
	uint64_t off = 0;
	int nd = l->ndim - 1;
	for (int k = 0; k < nd; k++)
		off =
		    off * (uint64_t)l->device_size[k] + (uint64_t)(c[m->host_dim[k]] / m->mult[k]);
	return off * (uint64_t)l->elems_per_stick +
	       (uint64_t)(c[m->stick_dim] % l->elems_per_stick);
}

/* Fills `valid` elements of one stick of the target from `from`'s bytes: host coordinates `c`
 * (the stick's first element), the stick running along host dimension `sd`. When `from` sticks
 * the same dimension, the elements are one run there too (both sticks start at a multiple of
 * elems_per_stick); otherwise each element is looked up. */
static void copy_stick(const struct spyre_layout *from, const struct dev_map *mf, const void *src,
		       int sd, int64_t *c, char *d, int valid, size_t es)
{
	const char *s = src;
	if (mf->stick_dim == sd) {
		memcpy(d, s + dev_offset(from, mf, c) * es, (size_t)valid * es);
		return;
	}
	int64_t c0 = c[sd];
	for (int e = 0; e < valid; e++) {
		c[sd] = c0 + e;
		memcpy(d + (size_t)e * es, s + dev_offset(from, mf, c) * es, es);
	}
	c[sd] = c0;
}

static int same_tensor(const struct spyre_layout *a, const struct spyre_layout *b)
{
	if (a->host_ndim != b->host_ndim || a->device_dtype != b->device_dtype)
		return 0;
	for (int i = 0; i < a->host_ndim; i++)
		if (a->host_size[i] != b->host_size[i])
			return 0;
	return 1;
}

int spyre_layout_relayout(const struct spyre_layout *from, const void *src,
			  const struct spyre_layout *to, void *dst)
{
	struct dev_map mf, mt;
	int rc = check_layout(from, &mf);
	if (rc == 0)
		rc = check_layout(to, &mt);
	if (rc != 0)
		return rc;
	if (!same_tensor(from, to))
		return err_set(ERR_INVAL, "relayout: the two layouts describe different tensors "
					  "(host shape or device dtype differ)");
	if (src == NULL || dst == NULL)
		return err_set(ERR_INVAL, "relayout: NULL buffer");
	size_t es = spyre_dtype_size(to->device_dtype);
	uint64_t nsticks = spyre_layout_sticks(to);
	int nd = to->ndim - 1, eps = to->elems_per_stick;
	int64_t ssize = to->host_size[mt.stick_dim];
	int64_t idx[SPYRE_DIMS_MAX + 1] = { 0 };
	for (uint64_t s = 0; s < nsticks; s++) {
		int64_t c[SPYRE_DIMS_MAX] = { 0 };
		for (int k = 0; k < nd; k++)
			c[mt.host_dim[k]] += idx[k] * mt.mult[k];
		char *d = (char *)dst + s * (uint64_t)eps * es;
		int64_t left = ssize - c[mt.stick_dim];
		int valid = left <= 0 ? 0 : left < eps ? (int)left : eps;
		copy_stick(from, &mf, src, mt.stick_dim, c, d, valid, es);
		memset(d + (size_t)valid * es, 0, (size_t)(eps - valid) * es);
		for (int k = nd - 1; k >= 0; k--) {
			if (++idx[k] < to->device_size[k])
				break;
			idx[k] = 0;
		}
	}
	return 0;
}
