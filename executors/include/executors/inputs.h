/* Inputs by the spec format's `init` kinds, and the comparison torch.testing.assert_close
 * makes. Both are what the adapter path of the case runner uses (adapters.h): it builds its own
 * inputs and compares with the original op's float64 reference. */
#ifndef EXECUTORS_INPUTS_H
#define EXECUTORS_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "spyre-emu/layout.h"
#include "spyre-emu/ops.h"

#define EXEC_DISTINCT_MAX     65536               /* elements exec_inputs_make_distinct() takes */
#define EXEC_INIT_STORAGE_MAX ((uint64_t)1 << 28) /* elements of a strided input's storage */

/* Fills the allocated tensor `t` by `init`: rand (uniform [0, 1)), randn (standard normal),
 * zeros, ones, randint (integers in [-8, 8]), arange (0, 1, ...), eye (identity over the last
 * two dimensions), full (ones), xavier (uniform in +-sqrt(6 / (fan_in + fan_out)), the fans of
 * the last two dimensions). Seeded from `seed` and the input's index, so a rerun is identical.
 * ERR_INVAL for another kind (`file` needs the file, which a kernel case does not carry). */
int exec_inputs_fill(struct spyre_tensor *t, const char *init, uint64_t seed, int index);

/* What a spec's tensor says beside its `init` kind. */
struct exec_init_args {
	bool has_range; /* init_args {low, high}: randint's integers in [low, high) */
	double low, high;
	bool strided; /* stride / storage_offset given and not the contiguous layout */
	int64_t offset;
	int64_t stride[SPYRE_DIMS_MAX];
};

/* Reads init_args as the loader keeps it (flow YAML: "{high: 1000}", "{low: -3, high: 3}"), within
 * 2^53: `high` and `low` are taken, other keys ignored. ERR_INVAL for a malformed number or low >=
 * high. */
int exec_init_args_parse(struct exec_init_args *a, const char *text);

/* exec_inputs_fill() with the spec's arguments: randint's range; and with strides, the values
 * are drawn over the storage (storage_offset, then the span the strides reach) in storage
 * order and read through the strides, as a strided view of torch's filled storage reads them
 * (a stride of 0 repeats values). ERR_LIMIT when that storage passes EXEC_INIT_STORAGE_MAX
 * elements. `a` NULL: exec_inputs_fill(). */
int exec_inputs_fill_args(struct spyre_tensor *t, const char *init, const struct exec_init_args *a,
			  uint64_t seed, int index);

/* Makes the integers of `t` distinct: each repeat becomes the next unused value, wrapping
 * within [low, high) (a->has_range) or [0, largest + n). For index_copy_'s index, whose result
 * torch leaves nondeterministic when an index repeats. ERR_LIMIT past EXEC_DISTINCT_MAX
 * elements, ERR_INVAL when the range holds fewer values than the tensor. */
int exec_inputs_make_distinct(struct spyre_tensor *t, const struct exec_init_args *a);

/* Whether `init` is a kind exec_inputs_fill() knows. */
bool exec_init_known(const char *init);

struct exec_compare {
	double max_abs_err, max_rel_err; /* over all elements; INFINITY for a NaN/inf mismatch */
	uint64_t mismatches;
	uint64_t first_bad; /* index of the first mismatch; valid when mismatches > 0 */
};

/* torch.testing.assert_close's rule per element: both NaN agree only with `equal_nan`; a NaN
 * against a number disagrees; infinities agree only with an infinity of the same sign; finite
 * values agree when |got - want| <= atol + rtol * |want|. */
void exec_compare_values(struct exec_compare *out, const double *got, const double *want,
			 uint64_t n, double atol, double rtol, bool equal_nan);

#endif
