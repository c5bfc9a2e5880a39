/* The op table (generated from spyre-emu/ops.def), host tensors, deterministic inputs and
 * output shapes. The float64 reference of every op is in reference.c. */
#include "spyre-emu/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "elem.h"
#include "ops_impl.h"
#include "spyre-emu/dl16.h"

#define KERNEL(name, nin, shape, passes, transcendental)

const struct spyre_op_info spyre_ops[] = {
#define OP(name, cls, nin, inputs, dtypes, samples, init, doc)                                     \
	{ #name, SPYRE_OPC_##cls, nin, inputs, dtypes, samples, doc },
#include "../ops.def"
#undef OP
};

/* How spyre_op_make_inputs fills each input, parallel to spyre_ops[]. */
static const char *const op_inits[] = {
#define OP(name, cls, nin, inputs, dtypes, samples, init, doc) init,
#include "../ops.def"
#undef OP
};
#undef KERNEL

const size_t spyre_ops_count = sizeof(spyre_ops) / sizeof(spyre_ops[0]);

const struct spyre_op_info *spyre_op_find(const char *name)
{
	for (size_t i = 0; i < spyre_ops_count; i++)
		if (strcmp(spyre_ops[i].name, name) == 0)
			return &spyre_ops[i];
	return NULL;
}

int spyre_op_supports(const struct spyre_op_info *op, enum spyre_dtype t)
{
	const char *name = spyre_dtype_name(t);
	size_t len = strlen(name);
	for (const char *p = op->dtypes; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == len && strncmp(p, name, n) == 0)
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* ---- host tensors ---- */

int spyre_tensor_alloc(struct spyre_tensor *t, enum spyre_dtype dtype, const int64_t *shape,
		       int ndim)
{
	memset(t, 0, sizeof(*t));
	if (ndim < 0 || ndim > SPYRE_DIMS_MAX)
		return err_set(ERR_INVAL, "tensor: %d dimensions (at most %d)", ndim,
			       SPYRE_DIMS_MAX);
	if ((unsigned)dtype >= SPYRE_DTYPE_COUNT)
		return err_set(ERR_INVAL, "tensor: unknown dtype %d", (int)dtype);
	uint64_t n = 1;
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 0 || (uint64_t)shape[i] > SPYRE_TENSOR_ELEMS_MAX)
			return err_set(ERR_INVAL, "tensor: size %lld of dim %d out of range",
				       (long long)shape[i], i);
		n *= (uint64_t)shape[i];
		if (n > SPYRE_TENSOR_ELEMS_MAX)
			return err_set(ERR_LIMIT, "tensor: more than %llu elements",
				       (unsigned long long)SPYRE_TENSOR_ELEMS_MAX);
		t->shape[i] = shape[i];
	}
	t->dtype = dtype;
	t->ndim = ndim;
	t->data = calloc(n ? n : 1, spyre_dtype_size(dtype));
	if (!t->data)
		return err_set(ERR_NOMEM, "tensor: %llu elements of %s", (unsigned long long)n,
			       spyre_dtype_name(dtype));
	return 0;
}

void spyre_tensor_finish(struct spyre_tensor *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
}

uint64_t spyre_tensor_numel(const struct spyre_tensor *t)
{
	uint64_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		n *= (uint64_t)t->shape[i];
	return n;
}

double spyre_tensor_get(const struct spyre_tensor *t, uint64_t i)
{
	const uint8_t *p = (const uint8_t *)t->data + i * spyre_dtype_size(t->dtype);
	if ((unsigned)t->dtype >= SPYRE_DTYPE_COUNT)
		return NAN;
	return kx_is_int(t->dtype) ? (double)kx_load_i(p, t->dtype)
				   : (double)kx_load_f(p, t->dtype);
}

/* double -> integer as a cast: toward zero, saturating, NaN -> 0. */
static int64_t to_i64(double v)
{
	if (isnan(v))
		return 0;
	if (v >= 9.2233720368547758e18)
		return INT64_MAX;
	if (v <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)v;
}

#define BULK_CHUNK 1024

void spyre_tensor_get_all(const struct spyre_tensor *t, double *out)
{
	uint64_t n = spyre_tensor_numel(t);
	if (spyre_dtype_size(t->dtype) != 2 || !spyre_dtype_is_float(t->dtype)) {
		for (uint64_t i = 0; i < n; i++)
			out[i] = spyre_tensor_get(t, i);
		return;
	}
	const uint16_t *src = t->data;
	float f[BULK_CHUNK];
	for (uint64_t i = 0; i < n; i += BULK_CHUNK) {
		size_t m = n - i < BULK_CHUNK ? (size_t)(n - i) : BULK_CHUNK;
		if (t->dtype == SPYRE_DTYPE_FLOAT16)
			spyre_half_to_f32_n(f, src + i, m);
		else if (t->dtype == SPYRE_DTYPE_BFLOAT16)
			spyre_bf16_to_f32_n(f, src + i, m);
		else
			spyre_dl16_to_f32_n(f, src + i, m);
		for (size_t k = 0; k < m; k++)
			out[i + k] = f[k];
	}
}

void spyre_tensor_set_all(struct spyre_tensor *t, const double *v)
{
	uint64_t n = spyre_tensor_numel(t);
	if (spyre_dtype_size(t->dtype) != 2 || !spyre_dtype_is_float(t->dtype)) {
		for (uint64_t i = 0; i < n; i++)
			spyre_tensor_set(t, i, v[i]);
		return;
	}
	uint16_t *dst = t->data;
	float f[BULK_CHUNK];
	for (uint64_t i = 0; i < n; i += BULK_CHUNK) {
		size_t m = n - i < BULK_CHUNK ? (size_t)(n - i) : BULK_CHUNK;
		for (size_t k = 0; k < m; k++)
			f[k] = (float)v[i + k]; /* as spyre_tensor_set rounds: through fp32 */
		if (t->dtype == SPYRE_DTYPE_FLOAT16)
			spyre_half_from_f32_n(dst + i, f, m);
		else if (t->dtype == SPYRE_DTYPE_BFLOAT16)
			spyre_bf16_from_f32_n(dst + i, f, m);
		else
			spyre_dl16_from_f32_n(dst + i, f, m);
	}
}

void spyre_tensor_set(struct spyre_tensor *t, uint64_t i, double v)
{
	uint8_t *p = (uint8_t *)t->data + i * spyre_dtype_size(t->dtype);
	uint16_t h;
	float f = (float)v;
	int64_t x = to_i64(v);
	int32_t i32 = x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : (int32_t)x;
	switch (t->dtype) {
	case SPYRE_DTYPE_FLOAT16:
		h = spyre_half_from_f32(f);
		memcpy(p, &h, 2);
		break;
	case SPYRE_DTYPE_DL16:
		h = spyre_dl16_from_f32(f);
		memcpy(p, &h, 2);
		break;
	case SPYRE_DTYPE_BFLOAT16:
		h = spyre_bf16_from_f32(f);
		memcpy(p, &h, 2);
		break;
	case SPYRE_DTYPE_FLOAT32:
		memcpy(p, &f, 4);
		break;
	case SPYRE_DTYPE_INT64:
		memcpy(p, &x, 8);
		break;
	case SPYRE_DTYPE_INT32:
		memcpy(p, &i32, 4);
		break;
	case SPYRE_DTYPE_INT8:
		p[0] = (uint8_t)(int8_t)(x > 127 ? 127 : x < -128 ? -128 : x);
		break;
	case SPYRE_DTYPE_BOOL:
		p[0] = v != 0.0;
		break;
	default:
		break;
	}
}

/* ---- deterministic inputs ---- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The generator of one input: splitmix64. */
struct rng {
	uint64_t s;
};

/* Uniform in [0, 1) with 53 random bits. */
static double uniform(struct rng *r)
{
	return (double)(splitmix64(&r->s) >> 11) * 0x1.0p-53;
}

/* Approximately standard normal: the sum of four uniforms from one 64-bit draw, centred and
 * scaled to unit variance (Irwin-Hall). Bounded at +-3.46 sigma, which suits test inputs (no
 * outliers that swamp a tolerance) and costs one generator step, no logarithm. */
static double randn(struct rng *r)
{
	uint64_t x = splitmix64(&r->s);
	double sum = (double)(x & 0xFFFF) + (double)(x >> 16 & 0xFFFF) +
		     (double)(x >> 32 & 0xFFFF) + (double)(x >> 48);
	return (sum / 65536.0 - 2.0) * 1.7320508075688772; /* sqrt(12 / 4) */
}

/* The init kind of input i: the i-th comma-separated word of the op's init column. */
static void init_kind(char *out, size_t cap, const char *inits, int i)
{
	const char *p = inits;
	for (int k = 0; k < i && p; k++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	size_t n = 0;
	while (p && p[n] && p[n] != ',' && n + 1 < cap) {
		out[n] = p[n];
		n++;
	}
	out[n] = '\0';
}

enum init { INIT_RANDN, INIT_POS, INIT_BOOL, INIT_INDEX, INIT_SLOT };

static enum init init_of(const char *kind)
{
	if (strcmp(kind, "bool") == 0)
		return INIT_BOOL;
	if (strcmp(kind, "index") == 0)
		return INIT_INDEX;
	if (strcmp(kind, "slot") == 0)
		return INIT_SLOT;
	if (strcmp(kind, "pos") == 0)
		return INIT_POS;
	return INIT_RANDN;
}

static double draw(enum init kind, int is_int, int64_t index_hi, struct rng *r)
{
	switch (kind) {
	case INIT_BOOL:
		return uniform(r) < 0.5 ? 0.0 : 1.0;
	case INIT_INDEX:
		return (double)(int64_t)(uniform(r) * (double)index_hi);
	case INIT_POS:
		return is_int ? (double)(1 + (int64_t)(uniform(r) * 8)) : 0.1 + 2.0 * uniform(r);
	default:
		return is_int ? (double)((int64_t)(uniform(r) * 17) - 8) : 0.1 * randn(r);
	}
}

static enum spyre_dtype input_dtype(const char *kind, enum spyre_dtype dtype)
{
	if (strcmp(kind, "bool") == 0)
		return SPYRE_DTYPE_BOOL;
	if (strcmp(kind, "index") == 0 || strcmp(kind, "slot") == 0)
		return SPYRE_DTYPE_INT64;
	return dtype;
}

/* Distinct positions in [0, hi) in random order (index_copy_ with a repeated index has no
 * defined result); ERR_INVAL when there are more than hi. */
static int draw_slots(double *v, uint64_t n, int64_t hi, struct rng *r)
{
	if ((int64_t)n > hi)
		return err_set(ERR_INVAL, "%llu distinct indices do not fit in [0, %lld)",
			       (unsigned long long)n, (long long)hi);
	int64_t *perm = malloc((size_t)(hi ? hi : 1) * sizeof(*perm));
	if (!perm)
		return err_set(ERR_NOMEM, "indices: out of memory");
	for (int64_t i = 0; i < hi; i++)
		perm[i] = i;
	for (uint64_t i = 0; i < n; i++) {
		int64_t j = (int64_t)i + (int64_t)(uniform(r) * (double)(hi - (int64_t)i));
		int64_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
		v[i] = (double)perm[i];
	}
	free(perm);
	return 0;
}

int spyre_op_make_inputs(const struct spyre_op_info *op, struct spyre_tensor *in, int nin,
			 const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims,
			 enum spyre_dtype dtype, uint64_t seed)
{
	return spyre_op_make_inputs_p(op, in, nin, shapes, ndims, dtype, seed, NULL);
}

enum spyre_dtype spyre_op_output_dtype(const struct spyre_op_info *op,
				       const struct spyre_op_params *p, enum spyre_dtype dtype)
{
	static const char *const cmp[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++)
		if (strcmp(op->name, cmp[i]) == 0)
			return SPYRE_DTYPE_BOOL;
	if (strcmp(op->name, "to") == 0 && p && p->has_out_dtype)
		return p->out_dtype;
	return dtype;
}

int spyre_op_make_inputs_p(const struct spyre_op_info *op, struct spyre_tensor *in, int nin,
			   const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims,
			   enum spyre_dtype dtype, uint64_t seed, const struct spyre_op_params *p)
{
	if (nin != op->nin)
		return err_set(ERR_INVAL, "%s: %d inputs given, it takes %d (%s)", op->name, nin,
			       op->nin, op->inputs);
	const char *inits = op_inits[op - spyre_ops];
	for (int i = 0; i < nin; i++)
		in[i].data = NULL;
	for (int i = 0; i < nin; i++) {
		char kind[16];
		init_kind(kind, sizeof(kind), inits, i);
		enum spyre_dtype t = input_dtype(kind, dtype);
		int rc = spyre_tensor_alloc(&in[i], t, shapes[i], ndims[i]);
		if (rc) {
			for (int k = 0; k < i; k++)
				spyre_tensor_finish(&in[k]);
			return err_prefix("%s input %d", op->name, i);
		}
		int64_t hi = i + 1 < nin && ndims[i + 1] > 0 ? shapes[i + 1][0] : 1;
		if (strcmp(kind, "slot") == 0) { /* positions along dim of input 0 */
			int d = p ? p->dim : -1; /* the runner's default dim */
			d = d < 0 ? d + ndims[0] : d;
			hi = d >= 0 && d < ndims[0] ? shapes[0][d] : 1;
		}
		struct rng r = { .s = seed ^ (0xA5A5A5A5ull * (uint64_t)(i + 1)) };
		uint64_t n = spyre_tensor_numel(&in[i]);
		int is_int = !spyre_dtype_is_float(t);
		enum init k0 = init_of(kind);
		double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
		if (!v) {
			for (int k = 0; k <= i; k++)
				spyre_tensor_finish(&in[k]);
			return err_set(ERR_NOMEM, "%s input %d: out of memory", op->name, i);
		}
		rc = 0;
		if (k0 == INIT_SLOT)
			rc = draw_slots(v, n, hi, &r);
		else
			for (uint64_t k = 0; k < n; k++)
				v[k] = draw(k0, is_int, hi, &r);
		if (rc) {
			free(v);
			for (int k = 0; k <= i; k++)
				spyre_tensor_finish(&in[k]);
			return err_prefix("%s input %d", op->name, i);
		}
		spyre_tensor_set_all(&in[i], v);
		free(v);
	}
	return 0;
}
