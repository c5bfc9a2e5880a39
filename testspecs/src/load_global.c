/* The schema walk of the global capability block (supported_dtypes, supported_ops,
 * supported_modules, input_config) and of our `kernels:` extension (spec.h documents it). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spyre-emu/hw.h"
#include "walk.h"

/* A supported op or module: a plain name, or {name, force_xfail, dtypes} (modules may also
 * carry inline inputs, which are checked and not kept). */
static void walk_op(struct walk *w, const struct ynode *n, struct spec_op *op, bool module)
{
	op->loc = walk_loc(w, n);
	if (n->kind == YN_SCALAR) {
		walk_str(w, n, &op->name, module ? "a module name" : "an op name");
		return;
	}
	op->structured = true;
	if (!walk_is_map(w, n, "a name or a mapping with 'name'"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "name")) {
			walk_str(w, v, &op->name, "a name");
		} else if (walk_key_is(k, "force_xfail")) {
			walk_tri(w, v, &op->force_xfail);
		} else if (walk_key_is(k, "dtypes")) {
			op->dtypes_present = true;
			walk_dtype_items(w, v, &op->dtypes, true);
		} else if (walk_key_is(k, "description")) {
			struct spec_str d;
			walk_str(w, v, &d, "a description");
		} else if (module && walk_key_is(k, "constructor_inputs")) {
			struct spec_sample_inputs tmp = { 0 };
			walk_sample_inputs(w, v, &tmp);
		} else if (module && walk_key_is(k, "forward_inputs")) {
			struct spec_sample_inputs tmp = { 0 };
			for (size_t j = 0; j < (v->kind == YN_SEQ ? v->n : 1); j++)
				walk_sample_inputs(w, v->kind == YN_SEQ ? v->kids[j] : v, &tmp);
		} else {
			walk_unknown_key(w, k, module ? "a supported module" : "a supported op");
		}
		walk_pop(w, saved);
	}
	if (!op->name.s)
		walk_error(w, n, "missing 'name'");
}

static void walk_ops(struct walk *w, const struct ynode *n, struct spec_op **out, size_t *count,
		     bool module)
{
	if (!walk_is_seq(w, n, "a list of names or {name: ...} items"))
		return;
	*out = walk_calloc(w, n->n, sizeof(**out));
	*count = *out ? n->n : 0;
	for (size_t i = 0; i < *count; i++) {
		size_t saved = walk_push_index(w, i);
		walk_op(w, n->kids[i], &(*out)[i], module);
		walk_pop(w, saved);
	}
}

static void walk_input_config(struct walk *w, const struct ynode *n, struct spec_global *g)
{
	if (!walk_is_map(w, n, "a mapping (seed)"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "seed")) {
			int64_t s;
			if (walk_i64(w, v, &s)) {
				if (s < 0) {
					walk_error(w, v, "seed must be non-negative");
				} else {
					g->has_seed = true;
					g->seed = (uint64_t)s;
					g->seed_loc = walk_loc(w, v);
				}
			}
		} else {
			walk_unknown_key(w, k, "input_config");
		}
		walk_pop(w, saved);
	}
}

void walk_global(struct walk *w, const struct ynode *n, struct spec_global *g)
{
	g->loc = walk_loc(w, n);
	g->present = true;
	if (!walk_is_map(w, n, "a mapping (supported_dtypes, supported_ops, ...)"))
		return;
	for (size_t i = 0; i < n->n / 2; i++) {
		const struct ynode *k = walk_key(w, n, i), *v = n->kids[2 * i + 1];
		if (!k)
			continue;
		size_t saved = walk_push_key(w, k->text);
		if (walk_key_is(k, "supported_dtypes")) {
			g->has_supported_dtypes = true;
			walk_dtype_items(w, v, &g->supported_dtypes, true);
		} else if (walk_key_is(k, "supported_ops")) {
			g->has_supported_ops = true;
			walk_ops(w, v, &g->supported_ops, &g->n_supported_ops, false);
		} else if (walk_key_is(k, "supported_modules")) {
			g->has_supported_modules = true;
			walk_ops(w, v, &g->supported_modules, &g->n_supported_modules, true);
		} else if (walk_key_is(k, "input_config")) {
			walk_input_config(w, v, g);
		} else {
			walk_unknown_key(w, k, "global");
		}
		walk_pop(w, saved);
	}
}

/* "67x256", "[67, 256]", "67,256", "4"; "" and "[]" are a scalar. */
static bool parse_shape_text(struct walk *w, const char *s, struct spec_ints *out)
{
	int64_t dims[16];
	size_t n = 0;
	const char *p = s;
	while (isspace((unsigned char)*p) || *p == '[' || *p == '(')
		p++;
	while (*p && *p != ']' && *p != ')') {
		if (n == 16 || !isdigit((unsigned char)*p))
			return false;
		errno = 0;
		char *end;
		long long v = strtoll(p, &end, 10);
		if (errno)
			return false;
		dims[n++] = v;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == 'x' || *p == ',')
			p++;
		while (isspace((unsigned char)*p))
			p++;
	}
	out->v = walk_calloc(w, n, sizeof(*out->v));
	if (!out->v)
		return false;
	memcpy(out->v, dims, n * sizeof(*dims));
	out->n = n;
	out->present = true;
	return true;
}

static void walk_kernel_input(struct walk *w, const struct ynode *n, struct spec_kernel_input *in)
{
	in->loc = walk_loc(w, n);
	if (n->kind == YN_MAP) {
		in->is_tensor = true;
		walk_tensor(w, n, &in->tensor);
		return;
	}
	if (n->kind == YN_SEQ) {
		in->shape_text.loc = in->loc;
		walk_ints(w, n, &in->shape, true);
		return;
	}
	if (n->kind != YN_SCALAR) {
		walk_error(w, n, "expected a shape (\"67x256\") or a tensor spec");
		return;
	}
	in->shape_text.s = n->text;
	in->shape_text.len = n->len;
	in->shape_text.loc = in->loc;
	in->shape.loc = in->loc;
	if (!parse_shape_text(w, n->text, &in->shape))
		walk_error(w, n, "bad shape '%s' (expected like \"67x256\" or \"[67, 256]\")",
			   n->text);
}

static void kernel_key(struct walk *w, const struct ynode *k, const struct ynode *v,
		       struct spec_kernel *kc)
{
	if (walk_key_is(k, "op")) {
		walk_str(w, v, &kc->op, "an op name");
	} else if (walk_key_is(k, "graph")) {
		walk_kernel_graph(w, v, kc);
	} else if (walk_key_is(k, "relayout")) {
		walk_kernel_relayout(w, v, kc);
	} else if (walk_key_is(k, "cores")) {
		int64_t n = 0;
		if (walk_i64(w, v, &n) && (n < 1 || n > SPYRE_CORES_MAX))
			walk_error(w, v, "cores must be 1..%d", SPYRE_CORES_MAX);
		else
			kc->cores = (int)n;
	} else if (walk_key_is(k, "inputs")) {
		if (!walk_is_seq(w, v, "a list of shapes or tensor specs"))
			return;
		kc->inputs = walk_calloc(w, v->n, sizeof(*kc->inputs));
		kc->n_inputs = kc->inputs ? v->n : 0;
		for (size_t j = 0; j < kc->n_inputs; j++) {
			size_t saved = walk_push_index(w, j);
			walk_kernel_input(w, v->kids[j], &kc->inputs[j]);
			walk_pop(w, saved);
		}
	} else if (walk_key_is(k, "dtype")) {
		struct spec_str name;
		walk_dtype(w, v, &name, &kc->dtype, true);
	} else if (walk_key_is(k, "atol")) {
		kc->has_atol = walk_double(w, v, &kc->atol);
	} else if (walk_key_is(k, "rtol")) {
		kc->has_rtol = walk_double(w, v, &kc->rtol);
	} else if (walk_key_is(k, "mode")) {
		walk_mode(w, v, &kc->mode, "mode");
	} else if (walk_key_is(k, "seed")) {
		int64_t s = 0;
		if (walk_i64(w, v, &s) && s >= 0) {
			kc->has_seed = true;
			kc->seed = (uint64_t)s;
		} else if (s < 0) {
			walk_error(w, v, "seed must be non-negative");
		}
	} else if (walk_key_is(k, "params")) {
		if (!walk_is_map(w, v, "a mapping of op parameters"))
			return;
		kc->params = walk_calloc(w, v->n / 2, sizeof(*kc->params));
		for (size_t j = 0; kc->params && j < v->n / 2; j++) {
			const struct ynode *pk = walk_key(w, v, j);
			if (!pk)
				continue;
			struct spec_param *p = &kc->params[kc->n_params++];
			walk_str(w, pk, &p->key, "a parameter name");
			walk_text(w, v->kids[2 * j + 1], &p->value);
		}
	} else {
		walk_unknown_key(w, k, "a kernel case");
	}
}

/* An op case names an op; a graph case a graph, and its inputs and parameters are the
 * graph's. */
static void kernel_check(struct walk *w, const struct ynode *c, const struct spec_kernel *kc)
{
	bool graph = kc->graph.s != NULL;
	if (!kc->op.s && !graph)
		walk_error(w, c, "missing 'op' (or 'graph')");
	else if (kc->op.s && graph)
		walk_error(w, c, "a kernel case names an 'op' or a 'graph', not both");
	else if (graph && (kc->n_inputs || kc->n_params))
		walk_error(w, c, "a graph case takes its inputs and parameters from the graph");
	else if (!graph && (kc->cores || kc->relayout))
		walk_error(w, c, "'cores' and 'relayout' are for graph cases");
}

void walk_kernels(struct walk *w, const struct ynode *n, struct spec_test *t)
{
	if (!walk_is_seq(w, n, "a list of kernel cases"))
		return;
	t->kernels = walk_calloc(w, n->n, sizeof(*t->kernels));
	t->n_kernels = t->kernels ? n->n : 0;
	for (size_t i = 0; i < t->n_kernels; i++) {
		const struct ynode *c = n->kids[i];
		struct spec_kernel *kc = &t->kernels[i];
		size_t saved = walk_push_index(w, i);
		kc->loc = walk_loc(w, c);
		if (walk_is_map(w, c, "a kernel case (a mapping with 'op')")) {
			for (size_t j = 0; j < c->n / 2; j++) {
				const struct ynode *k = walk_key(w, c, j);
				if (!k)
					continue;
				size_t s2 = walk_push_key(w, k->text);
				kernel_key(w, k, c->kids[2 * j + 1], kc);
				walk_pop(w, s2);
			}
			kernel_check(w, c, kc);
		}
		walk_pop(w, saved);
	}
}
