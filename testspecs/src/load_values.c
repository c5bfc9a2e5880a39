/* The schema walk of values: tensor specs and sample inputs (torch-spyre's InputTensorSpec
 * and InputsEdits, with their cross-field checks), our `kernels:` extension, the global
 * capability block, dtype items and precision; and the mode and dtype name tables. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "walk.h"

static const char *const mode_names[] = {
	[SPEC_MODE_UNSET] = "unset", [SPEC_MODE_MANDATORY_SUCCESS] = "mandatory_success",
	[SPEC_MODE_XFAIL] = "xfail", [SPEC_MODE_XFAIL_STRICT] = "xfail_strict",
	[SPEC_MODE_SKIP] = "skip",
};

static const char *const dtype_names[SPEC_DTYPE_COUNT] = {
	[SPEC_DTYPE_NONE] = "none",           [SPEC_DTYPE_FLOAT16] = "float16",
	[SPEC_DTYPE_FLOAT32] = "float32",     [SPEC_DTYPE_FLOAT64] = "float64",
	[SPEC_DTYPE_BFLOAT16] = "bfloat16",   [SPEC_DTYPE_INT8] = "int8",
	[SPEC_DTYPE_INT16] = "int16",         [SPEC_DTYPE_INT32] = "int32",
	[SPEC_DTYPE_INT64] = "int64",         [SPEC_DTYPE_UINT8] = "uint8",
	[SPEC_DTYPE_UINT16] = "uint16",       [SPEC_DTYPE_UINT32] = "uint32",
	[SPEC_DTYPE_UINT64] = "uint64",       [SPEC_DTYPE_COMPLEX32] = "complex32",
	[SPEC_DTYPE_COMPLEX64] = "complex64", [SPEC_DTYPE_COMPLEX128] = "complex128",
	[SPEC_DTYPE_BOOL] = "bool",
};

const char *testspecs_mode_name(enum spec_mode mode)
{
	if ((unsigned)mode > SPEC_MODE_SKIP)
		return "unset";
	return mode_names[mode];
}

int testspecs_mode_parse(const char *text, enum spec_mode *out)
{
	for (int m = SPEC_MODE_MANDATORY_SUCCESS; m <= SPEC_MODE_SKIP; m++)
		if (strcmp(text, mode_names[m]) == 0) {
			*out = (enum spec_mode)m;
			return 0;
		}
	return err_set(ERR_INVAL, "unknown mode '%s'", text);
}

const char *testspecs_dtype_name(enum spec_dtype dtype)
{
	if ((unsigned)dtype >= SPEC_DTYPE_COUNT)
		return "none";
	return dtype_names[dtype];
}

int testspecs_dtype_parse(const char *text, bool torch_prefix, enum spec_dtype *out)
{
	if (torch_prefix && strncmp(text, "torch.", 6) == 0)
		text += 6;
	if (strcmp(text, "half") == 0) { /* torch-spyre's DTYPE_STR_MAP: half is float16 */
		*out = SPEC_DTYPE_FLOAT16;
		return 0;
	}
	for (int d = SPEC_DTYPE_FLOAT16; d < SPEC_DTYPE_COUNT; d++)
		if (strcmp(text, dtype_names[d]) == 0) {
			*out = (enum spec_dtype)d;
			return 0;
		}
	return err_set(ERR_INVAL, "unknown dtype '%s'", text);
}

void walk_precision(struct walk *w, const struct ynode *n, struct spec_precision *p)
{
	p->loc = walk_loc(w, n);
	p->present = true;
	if (!walk_is_map(w, n, "a mapping (atol, rtol)"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "atol"))
			p->has_atol = walk_double(w, v, &p->atol);
		else if (walk_key_is(k, "rtol"))
			p->has_rtol = walk_double(w, v, &p->rtol);
		else
			walk_unknown_key(w, k, "precision");
		walk_pop(w, saved);
	}
}

static void walk_dtype_item(struct walk *w, const struct ynode *n, struct spec_dtype_item *it,
			    bool full)
{
	it->loc = walk_loc(w, n);
	if (!walk_is_map(w, n, "a dtype item (a mapping with 'name')"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "name"))
			walk_dtype(w, v, &it->name, &it->dtype, false);
		else if (walk_key_is(k, "description"))
			walk_str(w, v, &it->description, "a description");
		else if (full && walk_key_is(k, "precision"))
			walk_precision(w, v, &it->precision);
		else if (full && walk_key_is(k, "force_xfail"))
			walk_tri(w, v, &it->force_xfail);
		else
			walk_unknown_key(w, k, "a dtype item");
		walk_pop(w, saved);
	}
	if (!it->name.s)
		walk_error(w, n, "missing 'name'");
}

void walk_dtype_items(struct walk *w, const struct ynode *n, struct spec_dtype_items *out,
		      bool full)
{
	out->loc = walk_loc(w, n);
	if (!walk_is_seq(w, n, "a list of dtype items ({name: float16, ...})"))
		return;
	out->v = walk_calloc(w, n->n, sizeof(*out->v));
	if (!out->v)
		return;
	out->n = n->n;
	for (size_t i = 0; i < n->n; i++) {
		size_t saved = walk_push_index(w, i);
		walk_dtype_item(w, n->kids[i], &out->v[i], full);
		walk_pop(w, saved);
	}
}

static void walk_device_layout(struct walk *w, const struct ynode *n, struct spec_device_layout *d)
{
	d->loc = walk_loc(w, n);
	d->present = true;
	if (!walk_is_map(w, n, "a mapping (device_size, stride_map, device_dtype)"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "device_size"))
			walk_ints(w, v, &d->device_size, true);
		else if (walk_key_is(k, "stride_map"))
			walk_ints(w, v, &d->stride_map, false);
		else if (walk_key_is(k, "device_dtype"))
			walk_str(w, v, &d->device_dtype, "a device dtype name");
		else
			walk_unknown_key(w, k, "device_layout");
		walk_pop(w, saved);
	}
}

/* xavier: torch-spyre's model-op configs give it to matmul and linear operands (Xavier/Glorot
 * uniform, torch.nn.init.xavier_uniform_). */
static const char *const init_names[] = { "rand",   "randn", "zeros", "ones", "randint",
					  "arange", "eye",   "full",  "file", "xavier" };

static const struct ynode *map_get(const struct ynode *n, const char *key)
{
	if (!n || n->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i < n->n / 2; i++)
		if (walk_key_is(n->kids[2 * i], key))
			return n->kids[2 * i + 1];
	return NULL;
}

/* torch-spyre's cross-field rules of a tensor spec. */
static void tensor_checks(struct walk *w, const struct ynode *n, struct spec_tensor *t,
			  const struct ynode *init_args)
{
	const char *init = t->init.s ? t->init.s : "rand";
	if (strcmp(init, "randint") == 0 && !map_get(init_args, "high"))
		walk_error(w, n, "init_args.high is required when init: randint");
	if (strcmp(init, "full") == 0 && !map_get(init_args, "fill_value"))
		walk_error(w, n, "init_args.fill_value is required when init: full");
	if (strcmp(init, "file") == 0 && !map_get(init_args, "path"))
		walk_error(w, n, "init_args.path is required when init: file");
	if (strcmp(init, "arange") == 0 && t->shape.present && t->shape.n != 1)
		walk_error(w, n, "init: arange needs a 1-D shape (found %zu dimensions)",
			   t->shape.n);
	if (strcmp(init, "eye") == 0 && t->shape.present &&
	    (t->shape.n != 2 || t->shape.v[0] != t->shape.v[1]))
		walk_error(w, n, "init: eye needs a square 2-D shape");
	if (t->stride.present && t->shape.present && t->stride.n != t->shape.n)
		walk_error(w, n, "stride has %zu entries, shape has %zu", t->stride.n, t->shape.n);
	if (!t->shape.present)
		walk_error(w, n, "missing 'shape' (expected a list of non-negative integers)");
	if (!t->dtype_text.s)
		walk_error(w, n, "missing 'dtype'");
}

static void tensor_key(struct walk *w, const struct ynode *k, const struct ynode *v,
		       struct spec_tensor *t, const struct ynode **init_args)
{
	if (walk_key_is(k, "shape")) {
		walk_ints(w, v, &t->shape, true);
	} else if (walk_key_is(k, "dtype")) {
		walk_dtype(w, v, &t->dtype_text, &t->dtype, true);
	} else if (walk_key_is(k, "device")) {
		walk_str(w, v, &t->device, "a device name");
	} else if (walk_key_is(k, "init")) {
		if (!walk_str(w, v, &t->init, "an init strategy"))
			return;
		for (size_t i = 0; i < sizeof(init_names) / sizeof(*init_names); i++)
			if (strcmp(v->text, init_names[i]) == 0)
				return;
		walk_error(w, v,
			   "unknown init strategy '%s' (expected rand, randn, zeros, ones, "
			   "randint, arange, eye, full, file or xavier)",
			   v->text);
		t->init.s = NULL;
	} else if (walk_key_is(k, "init_args")) {
		if (walk_is_map(w, v, "a mapping (low, high, fill_value, path, key)")) {
			*init_args = v;
			walk_text(w, v, &t->init_args);
		}
	} else if (walk_key_is(k, "stride")) {
		walk_ints(w, v, &t->stride, false);
	} else if (walk_key_is(k, "storage_offset")) {
		t->has_storage_offset = walk_i64(w, v, &t->storage_offset);
		if (t->has_storage_offset && t->storage_offset < 0)
			walk_error(w, v, "storage_offset must be non-negative");
	} else if (walk_key_is(k, "device_layout")) {
		walk_device_layout(w, v, &t->device_layout);
	} else {
		walk_unknown_key(w, k, "a tensor spec");
	}
}

void walk_tensor(struct walk *w, const struct ynode *n, struct spec_tensor *t)
{
	t->loc = walk_loc(w, n);
	if (!walk_is_map(w, n, "a tensor spec (a mapping with shape and dtype)"))
		return;
	const struct ynode *init_args = NULL;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		tensor_key(w, k, v, t, &init_args);
		walk_pop(w, saved);
	}
	tensor_checks(w, n, t, init_args);
}

static bool is_arg_key(const struct ynode *k)
{
	return walk_key_is(k, "tensor") || walk_key_is(k, "tensor_list") ||
	       walk_key_is(k, "value") || walk_key_is(k, "py");
}

static void walk_tensor_list(struct walk *w, const struct ynode *v, struct spec_arg *a)
{
	a->kind = SPEC_ARG_TENSOR_LIST;
	if (!walk_is_seq(w, v, "a list of tensor specs"))
		return;
	a->list = walk_calloc(w, v->n, sizeof(*a->list));
	a->n_list = a->list ? v->n : 0;
	for (size_t j = 0; j < a->n_list; j++) {
		size_t saved = walk_push_index(w, j);
		walk_tensor(w, v->kids[j], &a->list[j]);
		walk_pop(w, saved);
	}
}

/* One positional argument: a mapping with exactly one of tensor, tensor_list, value, py. */
static void walk_arg(struct walk *w, const struct ynode *n, struct spec_arg *a)
{
	a->loc = walk_loc(w, n);
	if (n->kind != YN_MAP || n->n != 2 || !is_arg_key(n->kids[0])) {
		walk_error(w, n,
			   "expected an argument with exactly one of tensor, tensor_list, value, "
			   "py");
		return;
	}
	const struct ynode *k = n->kids[0], *v = n->kids[1];
	size_t saved = walk_push_key(w, k->text);
	if (walk_key_is(k, "tensor")) {
		a->kind = SPEC_ARG_TENSOR;
		walk_tensor(w, v, &a->tensor);
	} else if (walk_key_is(k, "tensor_list")) {
		walk_tensor_list(w, v, a);
	} else if (walk_key_is(k, "value")) {
		a->kind = SPEC_ARG_VALUE;
		walk_text(w, v, &a->text);
	} else {
		a->kind = SPEC_ARG_PY;
		walk_str(w, v, &a->text, "a Python literal as a string");
	}
	walk_pop(w, saved);
}

void walk_kwargs(struct walk *w, const struct ynode *v, struct spec_sample_inputs *s)
{
	if (!walk_is_map(w, v, "a mapping of keyword arguments"))
		return;
	s->kwargs = walk_calloc(w, v->n / 2, sizeof(*s->kwargs));
	if (!s->kwargs)
		return;
	for (size_t i = 0; i < v->n / 2; i++) {
		const struct ynode *k = walk_key(w, v, i), *val = v->kids[2 * i + 1];
		if (!k)
			continue;
		struct spec_kwarg *kw = &s->kwargs[s->n_kwargs++];
		walk_str(w, k, &kw->key, "a keyword");
		size_t saved = walk_push_key(w, k->text);
		if (val->kind == YN_MAP && val->n == 2 && is_arg_key(val->kids[0])) {
			walk_arg(w, val, &kw->arg);
		} else {
			kw->arg.kind = SPEC_ARG_VALUE;
			kw->arg.loc = walk_loc(w, val);
			walk_text(w, val, &kw->arg.text);
		}
		walk_pop(w, saved);
	}
}

void walk_sample_inputs(struct walk *w, const struct ynode *n, struct spec_sample_inputs *s)
{
	s->loc = walk_loc(w, n);
	s->present = true;
	if (!walk_is_map(w, n, "a mapping (args, kwargs)"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "args")) {
			if (walk_is_seq(w, v, "a list of arguments")) {
				s->args = walk_calloc(w, v->n, sizeof(*s->args));
				s->n_args = s->args ? v->n : 0;
				for (size_t j = 0; j < s->n_args; j++) {
					size_t s2 = walk_push_index(w, j);
					walk_arg(w, v->kids[j], &s->args[j]);
					walk_pop(w, s2);
				}
			}
		} else if (walk_key_is(k, "kwargs")) {
			walk_kwargs(w, v, s);
		} else {
			walk_unknown_key(w, k, "sample inputs");
		}
		walk_pop(w, saved);
	}
}
