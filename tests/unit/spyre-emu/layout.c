/* Tests of spyre-emu/layout: the SpyreTensorLayout rule (docs/emu.md's example exactly, and the
 * dim_order variant), and host -> device -> host round trips with padding, strides and
 * relayouts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/dl16.h"
#include "spyre-emu/layout.h"

static void expect_i64s(const int64_t *got, const int64_t *want, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		cr_expect_eq(got[i], want[i], "%s[%d] = %lld, want %lld", what, i,
			     (long long)got[i], (long long)want[i]);
}

Test(layout, spyre_md_example)
{
	struct spyre_layout l;
	int64_t shape[] = { 5, 100, 150 };
	cr_assert_eq(spyre_layout_default(&l, shape, 3, SPYRE_DTYPE_FLOAT16), 0, "%s", err_last());
	cr_assert_eq(l.ndim, 4);
	cr_expect_eq(l.elems_per_stick, 64);
	cr_expect_eq(l.device_dtype, SPYRE_DTYPE_DL16);
	expect_i64s(l.device_size, (int64_t[]){ 100, 3, 5, 64 }, 4, "device_size");
	expect_i64s(l.stride_map, (int64_t[]){ 150, 64, 15000, 1 }, 4, "stride_map");
	cr_expect_eq(spyre_layout_sticks(&l), 100 * 3 * 5);
	cr_expect_eq(spyre_layout_bytes(&l), 100 * 3 * 5 * 128);
}

Test(layout, one_to_four_dims)
{
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 150 }, 1, SPYRE_DTYPE_FLOAT16), 0);
	cr_assert_eq(l.ndim, 2);
	expect_i64s(l.device_size, (int64_t[]){ 3, 64 }, 2, "1d size");
	expect_i64s(l.stride_map, (int64_t[]){ 64, 1 }, 2, "1d stride");

	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 67, 256 }, 2, SPYRE_DTYPE_FLOAT32), 0);
	cr_expect_eq(l.elems_per_stick, 32);
	expect_i64s(l.device_size, (int64_t[]){ 8, 67, 32 }, 3, "2d size");
	expect_i64s(l.stride_map, (int64_t[]){ 32, 256, 1 }, 3, "2d stride");

	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 2, 3, 4, 130 }, 4, SPYRE_DTYPE_FLOAT16),
		     0);
	cr_assert_eq(l.ndim, 5);
	expect_i64s(l.device_size, (int64_t[]){ 3, 4, 3, 2, 64 }, 5, "4d size");
	expect_i64s(l.stride_map, (int64_t[]){ 520, 130, 64, 1560, 1 }, 5, "4d stride");

	/* Size-1 dimensions walk nothing: -1. */
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 1, 64 }, 2, SPYRE_DTYPE_FLOAT16), 0);
	expect_i64s(l.device_size, (int64_t[]){ 1, 1, 64 }, 3, "1x64 size");
	expect_i64s(l.stride_map, (int64_t[]){ 64, -1, 1 }, 3, "1x64 stride");

	/* Element sizes: int64 16 per stick, int8 and bool 128. */
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 40 }, 1, SPYRE_DTYPE_INT64), 0);
	expect_i64s(l.device_size, (int64_t[]){ 3, 16 }, 2, "int64 size");
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 129 }, 1, SPYRE_DTYPE_BOOL), 0);
	expect_i64s(l.device_size, (int64_t[]){ 2, 128 }, 2, "bool size");
	cr_expect_eq(spyre_layout_bytes(&l), 256);

	/* A scalar is shape [1]. */
	cr_assert_eq(spyre_layout_default(&l, NULL, 0, SPYRE_DTYPE_FLOAT16), 0);
	cr_expect_eq(l.host_ndim, 1);
	expect_i64s(l.device_size, (int64_t[]){ 1, 64 }, 2, "scalar size");
	expect_i64s(l.stride_map, (int64_t[]){ -1, -1 }, 2, "scalar stride");
}

Test(layout, dim_order_variant)
{
	struct spyre_layout l;
	/* (M, K) = (100, 150) sticked on M: order [1, 0]. */
	cr_assert_eq(spyre_layout_with_order(&l, (int64_t[]){ 100, 150 }, 2, SPYRE_DTYPE_FLOAT16,
					     (int[]){ 1, 0 }),
		     0, "%s", err_last());
	expect_i64s(l.device_size, (int64_t[]){ 2, 150, 64 }, 3, "size");
	expect_i64s(l.stride_map, (int64_t[]){ 9600, 1, 150 }, 3, "stride");

	/* (5, 100, 150) with order [0, 2, 1]: stick along dimension 1. */
	cr_assert_eq(spyre_layout_with_order(&l, (int64_t[]){ 5, 100, 150 }, 3, SPYRE_DTYPE_FLOAT16,
					     (int[]){ 0, 2, 1 }),
		     0);
	expect_i64s(l.device_size, (int64_t[]){ 150, 2, 5, 64 }, 4, "size3");
	expect_i64s(l.stride_map, (int64_t[]){ 1, 9600, 15000, 150 }, 4, "stride3");

	/* (5, 100, 150) with order [2, 0, 1]. */
	cr_assert_eq(spyre_layout_with_order(&l, (int64_t[]){ 5, 100, 150 }, 3, SPYRE_DTYPE_FLOAT32,
					     (int[]){ 2, 0, 1 }),
		     0);
	expect_i64s(l.device_size, (int64_t[]){ 5, 4, 150, 32 }, 4, "size4");
	expect_i64s(l.stride_map, (int64_t[]){ 15000, 4800, 1, 150 }, 4, "stride4");
}

Test(layout, bad_input)
{
	struct spyre_layout l;
	int64_t shape[9] = { 2, 2, 2, 2, 2, 2, 2, 2, 2 };
	cr_expect_eq(spyre_layout_default(&l, shape, 9, SPYRE_DTYPE_FLOAT16), ERR_INVAL);
	cr_expect_eq(spyre_layout_default(&l, shape, -1, SPYRE_DTYPE_FLOAT16), ERR_INVAL);
	cr_expect_eq(spyre_layout_default(&l, shape, 8, SPYRE_DTYPE_FLOAT16), 0);
	cr_expect_eq(spyre_layout_default(&l, (int64_t[]){ 3, -1 }, 2, SPYRE_DTYPE_FLOAT16),
		     ERR_INVAL);
	cr_expect(strstr(err_last(), "negative") != NULL, "%s", err_last());
	cr_expect_eq(spyre_layout_default(&l, shape, 2, SPYRE_DTYPE_DL16), ERR_INVAL);
	cr_expect_eq(spyre_layout_default(&l, shape, 2, (enum spyre_dtype)99), ERR_INVAL);
	cr_expect_eq(spyre_layout_with_order(&l, shape, 2, SPYRE_DTYPE_FLOAT16, (int[]){ 0, 0 }),
		     ERR_INVAL);
	cr_expect_eq(spyre_layout_with_order(&l, shape, 2, SPYRE_DTYPE_FLOAT16, (int[]){ 0, 2 }),
		     ERR_INVAL);
	cr_expect_eq(spyre_layout_with_order(&l, shape, 2, SPYRE_DTYPE_FLOAT16, (int[]){ -1, 0 }),
		     ERR_INVAL);
	cr_expect_eq(spyre_layout_with_order(&l, shape, 2, SPYRE_DTYPE_FLOAT16, NULL), ERR_INVAL);
	cr_expect_eq(spyre_layout_default(&l, (int64_t[]){ 1 << 20, 1 << 20, 1 << 20 }, 3,
					  SPYRE_DTYPE_FLOAT32),
		     ERR_LIMIT);
	/* A hand-edited layout is refused by the copies. */
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 4, 4 }, 2, SPYRE_DTYPE_FLOAT32), 0);
	l.stride_map[0] = 7;
	float host[16] = { 0 }, dev[64];
	cr_expect_eq(spyre_layout_stickify(&l, host, NULL, dev), ERR_INVAL);
}

/* A host tensor of `n` int32 values, each distinct and non-zero. */
static int32_t *host_values(uint64_t n)
{
	int32_t *h = malloc(n * sizeof(*h));
	cr_assert_not_null(h);
	for (uint64_t i = 0; i < n; i++)
		h[i] = (int32_t)(i * 7 + 1);
	return h;
}

static uint64_t numel(const int64_t *shape, int ndim)
{
	uint64_t n = 1;
	for (int i = 0; i < ndim; i++)
		n *= (uint64_t)shape[i];
	return n;
}

/* Stickifies an int32 tensor, checks every device element against the stride_map (the host
 * element it names, or zero padding), unstickifies and compares. */
static void round_trip(const int64_t *shape, int ndim, const int *order)
{
	struct spyre_layout l;
	int rc = order ? spyre_layout_with_order(&l, shape, ndim, SPYRE_DTYPE_INT32, order)
		       : spyre_layout_default(&l, shape, ndim, SPYRE_DTYPE_INT32);
	cr_assert_eq(rc, 0, "%s", err_last());
	uint64_t n = numel(shape, ndim), de = spyre_layout_elems(&l);
	int32_t *h = host_values(n), *back = calloc(n ? n : 1, sizeof(int32_t));
	int32_t *dev = malloc(de * sizeof(int32_t));
	cr_assert(back && dev);
	memset(dev, 0xAB, de * sizeof(int32_t));
	cr_assert_eq(spyre_layout_stickify(&l, h, NULL, dev), 0, "%s", err_last());
	/* Device element i at index (j_0..j_n): host linear offset sum(j_k * stride_map_k)
	 * when the stick coordinate is inside the host size, else padding (zero). */
	int64_t idx[SPYRE_DIMS_MAX + 2] = { 0 };
	uint64_t pad = 0;
	for (uint64_t i = 0; i < de; i++) {
		int64_t off = 0;
		for (int k = 0; k < l.ndim; k++)
			off += idx[k] * (l.stride_map[k] > 0 ? l.stride_map[k] : 0);
		int sd = l.dim_order[ndim - 1];
		int64_t sc =
		    idx[l.ndim - 1] + (ndim == 1 ? idx[0] : idx[ndim - 2]) * l.elems_per_stick;
		if (sc >= shape[sd]) {
			cr_assert_eq(dev[i], 0, "padding at %llu is %d", (unsigned long long)i,
				     dev[i]);
			pad++;
		} else {
			cr_assert_eq(dev[i], h[off], "device %llu: %d, want host %lld = %d",
				     (unsigned long long)i, dev[i], (long long)off, h[off]);
		}
		for (int k = l.ndim - 1; k >= 0; k--) {
			if (++idx[k] < l.device_size[k])
				break;
			idx[k] = 0;
		}
	}
	cr_expect_eq(pad, de - n);
	cr_assert_eq(spyre_layout_unstickify(&l, dev, back, NULL), 0);
	cr_expect_eq(memcmp(h, back, n * sizeof(int32_t)), 0);
	free(h);
	free(back);
	free(dev);
}

Test(layout, round_trips_unaligned)
{
	static const int64_t sizes[] = { 1, 31, 32, 33, 63, 67, 129, 150, 2880 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		round_trip((int64_t[]){ sizes[i] }, 1, NULL);
		round_trip((int64_t[]){ 3, sizes[i] }, 2, NULL);
		round_trip((int64_t[]){ sizes[i], 5 }, 2, (int[]){ 1, 0 });
	}
	round_trip((int64_t[]){ 5, 100, 150 }, 3, NULL);
	round_trip((int64_t[]){ 5, 100, 150 }, 3, (int[]){ 0, 2, 1 });
	round_trip((int64_t[]){ 5, 100, 150 }, 3, (int[]){ 2, 0, 1 });
	round_trip((int64_t[]){ 2, 3, 4, 67 }, 4, NULL);
	round_trip((int64_t[]){ 2, 1, 129, 3 }, 4, (int[]){ 3, 1, 0, 2 });
	round_trip((int64_t[]){ 4, 0, 7 }, 3, NULL);
}

Test(layout, transposed_view)
{
	/* Host storage is (67, 40) row-major; the tensor is its transpose, shape (40, 67) with
	 * strides (1, 40). */
	enum { R = 67, C = 40 };
	float store[R * C];
	for (int i = 0; i < R * C; i++)
		store[i] = (float)i + 0.5f;
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ C, R }, 2, SPYRE_DTYPE_FLOAT32), 0);
	expect_i64s(l.device_size, (int64_t[]){ 3, 40, 32 }, 3, "size");
	uint64_t de = spyre_layout_elems(&l);
	float *dev = malloc(de * sizeof(float));
	cr_assert_not_null(dev);
	int64_t strides[2] = { 1, C };
	cr_assert_eq(spyre_layout_stickify(&l, store, strides, dev), 0);
	/* Device [s, i, e] holds tensor[i][s*32+e] = store[(s*32+e)*C + i]. */
	for (int s = 0; s < 3; s++)
		for (int i = 0; i < C; i++)
			for (int e = 0; e < 32; e++) {
				float got = dev[(s * C + i) * 32 + e];
				int j = s * 32 + e;
				float want = j < R ? store[j * C + i] : 0.0f;
				cr_assert_eq(got, want, "[%d,%d,%d] %g want %g", s, i, e, got,
					     want);
			}
	float back[R * C];
	memset(back, 0, sizeof(back));
	cr_assert_eq(spyre_layout_unstickify(&l, dev, back, strides), 0);
	cr_expect_eq(memcmp(back, store, sizeof(back)), 0);
	free(dev);
}

Test(layout, float16_converts_to_dl16)
{
	/* 1.0 in IEEE half is 0x3C00; in DL16 it is 31 << 9 = 0x3E00. */
	uint16_t host[70], back[70];
	for (int i = 0; i < 70; i++)
		host[i] = i % 2 ? 0x3C00 : 0xBC00; /* 1.0, -1.0 */
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ 70 }, 1, SPYRE_DTYPE_FLOAT16), 0);
	uint16_t dev[128];
	cr_assert_eq(spyre_layout_stickify(&l, host, NULL, dev), 0);
	cr_expect_eq(dev[1], 0x3E00, "%#x", dev[1]);
	cr_expect_eq(dev[0], 0xBE00, "%#x", dev[0]);
	cr_expect_eq(dev[69], 0x3E00);
	for (int i = 70; i < 128; i++)
		cr_expect_eq(dev[i], 0);
	cr_assert_eq(spyre_layout_unstickify(&l, dev, back, NULL), 0);
	cr_expect_eq(memcmp(host, back, sizeof(back)), 0);
}

/* Relayout (5, 100, 150) between orders and back: same bytes as a direct stickify. */
static void relayout_case(const int64_t *shape, int ndim, const int *oa, const int *ob)
{
	struct spyre_layout a, b;
	cr_assert_eq(spyre_layout_with_order(&a, shape, ndim, SPYRE_DTYPE_INT32, oa), 0);
	cr_assert_eq(spyre_layout_with_order(&b, shape, ndim, SPYRE_DTYPE_INT32, ob), 0);
	uint64_t n = numel(shape, ndim);
	int32_t *h = host_values(n);
	uint64_t na = spyre_layout_elems(&a), nb = spyre_layout_elems(&b);
	int32_t *da = malloc(na * 4), *db = malloc(nb * 4), *want = malloc(nb * 4);
	int32_t *back = malloc(na * 4);
	cr_assert(da && db && want && back);
	memset(db, 0x55, nb * 4);
	cr_assert_eq(spyre_layout_stickify(&a, h, NULL, da), 0);
	cr_assert_eq(spyre_layout_stickify(&b, h, NULL, want), 0);
	cr_assert_eq(spyre_layout_relayout(&a, da, &b, db), 0, "%s", err_last());
	cr_expect_eq(memcmp(db, want, nb * 4), 0, "relayout differs from a direct stickify");
	cr_assert_eq(spyre_layout_relayout(&b, db, &a, back), 0);
	cr_expect_eq(memcmp(back, da, na * 4), 0, "relayout round trip differs");
	free(h);
	free(da);
	free(db);
	free(want);
	free(back);
}

Test(layout, relayout_round_trips)
{
	relayout_case((int64_t[]){ 5, 100, 150 }, 3, (int[]){ 0, 1, 2 }, (int[]){ 0, 2, 1 });
	relayout_case((int64_t[]){ 5, 100, 150 }, 3, (int[]){ 0, 1, 2 }, (int[]){ 2, 0, 1 });
	relayout_case((int64_t[]){ 67, 129 }, 2, (int[]){ 0, 1 }, (int[]){ 1, 0 });
	/* Same stick dimension, other tiling: whole sticks move. */
	relayout_case((int64_t[]){ 5, 100, 150 }, 3, (int[]){ 0, 1, 2 }, (int[]){ 1, 0, 2 });
	relayout_case((int64_t[]){ 7, 67, 3 }, 3, (int[]){ 2, 0, 1 }, (int[]){ 0, 2, 1 });
	relayout_case((int64_t[]){ 3, 2, 63, 40 }, 4, (int[]){ 0, 1, 2, 3 }, (int[]){ 3, 0, 1, 2 });

	struct spyre_layout a, b;
	cr_assert_eq(spyre_layout_default(&a, (int64_t[]){ 4, 4 }, 2, SPYRE_DTYPE_INT32), 0);
	cr_assert_eq(spyre_layout_default(&b, (int64_t[]){ 4, 5 }, 2, SPYRE_DTYPE_INT32), 0);
	int32_t x[256];
	cr_expect_eq(spyre_layout_relayout(&a, x, &b, x + 128), ERR_INVAL);
	cr_assert_eq(spyre_layout_default(&b, (int64_t[]){ 4, 4 }, 2, SPYRE_DTYPE_FLOAT32), 0);
	cr_expect_eq(spyre_layout_relayout(&a, x, &b, x + 128), ERR_INVAL);
}

Test(layout, float16_round_trip_unaligned)
{
	/* (3, 129) half values with an even fraction (exact in DL16's 9 bits): every device
	 * element is the DL16 of its host value, and the round trip is exact. */
	enum { R = 3, C = 129 };
	uint16_t host[R * C], back[R * C];
	for (int i = 0; i < R * C; i++)
		host[i] =
		    (uint16_t)((i % 2 ? 0x8000 : 0) | ((10 + i % 12) << 10) | ((i * 6) & 0x3FE));
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, (int64_t[]){ R, C }, 2, SPYRE_DTYPE_FLOAT16), 0);
	expect_i64s(l.device_size, (int64_t[]){ 3, R, 64 }, 3, "size");
	uint16_t dev[3 * R * 64];
	cr_assert_eq(spyre_layout_stickify(&l, host, NULL, dev), 0);
	for (int s = 0; s < 3; s++)
		for (int r = 0; r < R; r++)
			for (int e = 0; e < 64; e++) {
				int c = s * 64 + e;
				uint16_t want =
				    c < C ? spyre_dl16_from_f32(spyre_half_to_f32(host[r * C + c]))
					  : 0;
				cr_assert_eq(dev[(s * R + r) * 64 + e], want, "[%d,%d,%d]", s, r,
					     e);
			}
	cr_assert_eq(spyre_layout_unstickify(&l, dev, back, NULL), 0);
	cr_expect_eq(memcmp(host, back, sizeof(back)), 0);
}
