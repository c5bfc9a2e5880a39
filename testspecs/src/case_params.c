/* A kernel case's emulator parameters (cases.h: testspecs_case_params): what the op call's
 * non-tensor arguments mean for the op it runs as. torch-spyre's model-op configs write a
 * call's arguments as they were traced: `value:` nodes (numbers, tuples such as
 * "(1, 41, -1, 128)", dtypes such as "torch.float32", devices such as "cuda:0", null) and
 * `py:` literals (getitem's index tuple: "(None, slice(None, 64, None), Ellipsis, 3)"), plus
 * kwargs. Each is read strictly, bounded, and an argument this file cannot read, or one that
 * asks for what the emulator does not do (a dropout, a mask, a max_norm), makes the case
 * unsupported with the reason rather than run it with a guess. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"

#define ARG_TEXT_MAX 1024 /* bytes of one value or py literal this file reads */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return s;
}

/* One integer at *s (advanced past it); 0 or ERR_INVAL. */
static int read_int(const char **s, int64_t *out)
{
	const char *p = skip_ws(*s);
	char *end;
	errno = 0;
	long long v = strtoll(p, &end, 10);
	if (end == p || errno)
		return ERR_INVAL;
	*out = v;
	*s = end;
	return 0;
}

static int parse_number(const char *text, double *out)
{
	const char *p = skip_ws(text);
	char *end;
	errno = 0;
	double v = strtod(p, &end);
	if (end == p || errno || *skip_ws(end) || !isfinite(v))
		return err_set(ERR_INVAL, "'%.40s' is not a number", text);
	*out = v;
	return 0;
}

/* "(1, 41, -1)", "[1, 41]" or "5": up to max integers. */
static int parse_ints(const char *text, int64_t *v, int max, int *n)
{
	const char *p = skip_ws(text);
	char close = *p == '(' ? ')' : *p == '[' ? ']' : 0;
	if (close)
		p++;
	*n = 0;
	for (;;) {
		p = skip_ws(p);
		if (close && *p == close) {
			p++;
			break;
		}
		if (*n >= max || read_int(&p, &v[*n]))
			return err_set(ERR_INVAL, "'%.40s' is not a tuple of at most %d integers",
				       text, max);
		(*n)++;
		p = skip_ws(p);
		if (*p == ',')
			p++;
		else if (!close)
			break;
	}
	if (*skip_ws(p))
		return err_set(ERR_INVAL, "'%.40s': text after the integers", text);
	return 0;
}

static int is_true(const char *t)
{
	return t && (!strcmp(t, "true") || !strcmp(t, "True") || !strcmp(t, "1"));
}

static int is_null(const char *t)
{
	return !t || strcmp(t, "null") == 0 || strcmp(t, "None") == 0 || strcmp(t, "~") == 0;
}

/* "slice(a, b, c)" with None or integers; *s advanced past ')'. */
static int read_slice(const char **s, struct spyre_index_item *it)
{
	const char *p = *s + strlen("slice(");
	int64_t v[3] = { 0, 0, 0 };
	int has[3] = { 0, 0, 0 };
	for (int k = 0; k < 3; k++) {
		p = skip_ws(p);
		if (strncmp(p, "None", 4) == 0)
			p += 4;
		else if (read_int(&p, &v[k]))
			return ERR_INVAL;
		else
			has[k] = 1;
		p = skip_ws(p);
		if (*p != (k < 2 ? ',' : ')'))
			return ERR_INVAL;
		p++;
	}
	if (has[2] && v[2] != 1)
		return ERR_INVAL; /* steps other than 1: not traced by the configs, not read */
	*it = (struct spyre_index_item){ .kind = SPYRE_INDEX_SLICE,
					 .has_start = has[0],
					 .start = v[0],
					 .has_stop = has[1],
					 .stop = v[1],
					 .step = 1 };
	*s = p;
	return 0;
}

/* getitem's index: a tuple of None, Ellipsis, slice(...) and integers, or one of them. */
static int parse_index(const char *text, struct spyre_op_params *p)
{
	const char *s = skip_ws(text);
	int tuple = *s == '(';
	if (tuple)
		s++;
	p->n_index = 0;
	for (;;) {
		s = skip_ws(s);
		if (tuple && *s == ')') {
			s++;
			break;
		}
		if (p->n_index >= SPYRE_INDEX_MAX)
			return err_set(ERR_INVAL, "index '%.60s': more than %d items", text,
				       SPYRE_INDEX_MAX);
		struct spyre_index_item *it = &p->index[p->n_index++];
		memset(it, 0, sizeof(*it));
		if (strncmp(s, "None", 4) == 0) {
			it->kind = SPYRE_INDEX_NONE, s += 4;
		} else if (strncmp(s, "Ellipsis", 8) == 0) {
			it->kind = SPYRE_INDEX_ELLIPSIS, s += 8;
		} else if (strncmp(s, "...", 3) == 0) {
			it->kind = SPYRE_INDEX_ELLIPSIS, s += 3;
		} else if (strncmp(s, "slice(", 6) == 0) {
			if (read_slice(&s, it))
				return err_set(ERR_INVAL, "index '%.60s': a slice it cannot read",
					       text);
		} else if (read_int(&s, &it->start) == 0) {
			it->kind = SPYRE_INDEX_INT;
		} else {
			return err_set(ERR_INVAL, "index '%.60s': an item it cannot read", text);
		}
		s = skip_ws(s);
		if (*s == ',')
			s++;
		else if (!tuple)
			break;
	}
	if (*skip_ws(s))
		return err_set(ERR_INVAL, "index '%.60s': text after the index", text);
	return 0;
}

static int parse_dtype(const char *text, enum spyre_dtype *out)
{
	const char *t = strncmp(text, "torch.", 6) == 0 ? text + 6 : text;
	return spyre_dtype_parse(out, t);
}

#define CALL_VALUES_MAX 16

/* The call's arguments, in order: values (and py literals) only, and the kwargs by name. */
struct call {
	const char *vals[CALL_VALUES_MAX];
	int nvals;
	const struct spec_sample_inputs *si;
	char buf[CALL_VALUES_MAX][ARG_TEXT_MAX + 1];
	char kw[ARG_TEXT_MAX + 1];
};

/* A value's text as the loader keeps it (flow YAML: a quoted string keeps its quotes), into
 * out without them; ERR_INVAL past ARG_TEXT_MAX. */
static int unquote(const char *t, char *out)
{
	size_t n = strlen(t);
	if (n > ARG_TEXT_MAX)
		return err_set(ERR_INVAL, "an argument longer than %d bytes", ARG_TEXT_MAX);
	if (n >= 2 && (t[0] == '"' || t[0] == '\'') && t[n - 1] == t[0]) {
		t++;
		n -= 2;
	}
	memcpy(out, t, n);
	out[n] = '\0';
	return 0;
}

static const char *kwarg(struct call *c, const char *name)
{
	for (size_t i = 0; c->si && i < c->si->n_kwargs; i++)
		if (c->si->kwargs[i].key.s && strcmp(c->si->kwargs[i].key.s, name) == 0) {
			const char *t = c->si->kwargs[i].arg.text.s;
			return t && unquote(t, c->kw) == 0 ? c->kw : "null";
		}
	return NULL;
}

static int set_dim(const char *text, int *dim)
{
	int64_t v[1];
	int n;
	if (parse_ints(text, v, 1, &n) || n != 1)
		return err_set(ERR_INVAL, "dim '%.40s' is not an integer", text);
	*dim = (int)v[0];
	return 0;
}

/* Sizes as one tuple value or as several integer values from index `from` on. */
static int set_shape(struct call *c, int from, struct spyre_op_params *p)
{
	if (c->nvals == from + 1 || c->nvals <= from)
		return c->nvals <= from
			   ? 0
			   : parse_ints(c->vals[from], p->shape, SPYRE_DIMS_MAX, &p->shape_ndim);
	p->shape_ndim = 0;
	for (int i = from; i < c->nvals; i++) {
		int n;
		if (p->shape_ndim >= SPYRE_DIMS_MAX ||
		    parse_ints(c->vals[i], &p->shape[p->shape_ndim], 1, &n) || n != 1)
			return err_set(ERR_INVAL, "sizes: '%.40s' is not an integer", c->vals[i]);
		p->shape_ndim++;
	}
	return 0;
}

static int params_to(struct call *c, const char *name, struct spyre_op_params *p)
{
	const struct spec_op_map *m = testspecs_opmap_find(name);
	if (m && strcmp(m->upstream, "float") == 0) { /* Tensor.float() */
		p->has_out_dtype = 1;
		p->out_dtype = SPYRE_DTYPE_FLOAT32;
		return 0;
	}
	const char *d = kwarg(c, "dtype");
	for (int i = 0; !d && i < c->nvals; i++)
		if (strncmp(c->vals[i], "torch.", 6) == 0)
			d = c->vals[i]; /* a positional dtype; a device ("cuda:0") moves nothing */
	if (!d || is_null(d))
		return 0;
	if (parse_dtype(d, &p->out_dtype))
		return err_prefix("to");
	p->has_out_dtype = 1;
	return 0;
}

static int params_attention(struct call *c, const struct spec_case *cs, struct spyre_op_params *p)
{
	const char *v;
	double x;
	if ((v = kwarg(c, "dropout_p")) && (parse_number(v, &x) || x != 0.0))
		return err_set(ERR_INVAL, "attention with a dropout is not emulated");
	if ((v = kwarg(c, "attn_mask")) && !is_null(v))
		return err_set(ERR_INVAL, "attention with a mask tensor is not emulated");
	if ((v = kwarg(c, "is_causal")))
		p->causal = is_true(v);
	if ((v = kwarg(c, "scale")) && !is_null(v)) {
		if (parse_number(v, &p->scale))
			return err_prefix("attention scale");
		p->has_scale = 1;
	}
	(void)cs;
	return 0;
}

static int params_reduce(struct call *c, struct spyre_op_params *p)
{
	const char *d = kwarg(c, "dim"), *k = kwarg(c, "keepdim");
	if (!d && c->nvals)
		d = c->vals[0];
	if (!k && c->nvals > 1)
		k = c->vals[1];
	if (d && set_dim(d, &p->dim))
		return ERR_INVAL;
	p->keepdim = is_true(k);
	return 0;
}

/* torch.arange(end), (start, end) or (start, end, step), positional or by keyword. */
static int params_arange(struct call *c, struct spyre_op_params *p)
{
	double v[3] = { 0, 0, 1 };
	static const char *const names[3] = { "start", "end", "step" };
	int n = c->nvals > 3 ? 3 : c->nvals;
	for (int i = 0; i < n; i++)
		if (parse_number(c->vals[i], &v[n == 1 ? 1 : i]))
			return err_prefix("arange");
	for (int i = 0; i < 3; i++) {
		const char *k = kwarg(c, names[i]);
		if (k && parse_number(k, &v[i]))
			return err_prefix("arange %s", names[i]);
	}
	double len = v[2] != 0 ? ceil((v[1] - v[0]) / v[2]) : -1;
	if (!(len >= 0 && len <= (double)SPYRE_TENSOR_ELEMS_MAX))
		return err_set(ERR_INVAL, "arange(%g, %g, %g): no length", v[0], v[1], v[2]);
	p->scalar = v[0];
	p->scalar2 = v[2];
	p->shape[0] = (int64_t)len;
	p->shape_ndim = 1;
	return 0;
}

static int scalar_arg(struct call *c, const char *what, double *out)
{
	if (!c->nvals)
		return err_set(ERR_INVAL, "%s: no scalar operand", what);
	return parse_number(c->vals[0], out) ? err_prefix("%s", what) : 0;
}

static int params_call(struct call *c, const struct spec_case *cs, const char *emu,
		       struct spyre_op_params *p)
{
	const char *v;
	if (strstr(emu, "_scalar") || strcmp(emu, "pow") == 0)
		return scalar_arg(c, emu, &p->scalar);
	if (strcmp(emu, "to") == 0)
		return params_to(c, cs->op, p);
	if (!strcmp(emu, "sum") || !strcmp(emu, "mean") || !strcmp(emu, "max") ||
	    !strcmp(emu, "min") || !strcmp(emu, "softmax") || !strcmp(emu, "log_softmax"))
		return params_reduce(c, p);
	if (strcmp(emu, "transpose") == 0) {
		if (c->nvals < 2 || set_dim(c->vals[0], &p->perm[0]) ||
		    set_dim(c->vals[1], &p->perm[1]))
			return err_set(ERR_INVAL, "transpose: two dims expected");
		return 0;
	}
	if (!strcmp(emu, "view") || !strcmp(emu, "reshape") || !strcmp(emu, "expand"))
		return set_shape(c, 0, p);
	if (strcmp(emu, "zeros") == 0) {
		int rc = set_shape(c, 0, p);
		return rc ? rc : (p->shape_ndim ? 0 : err_set(ERR_INVAL, "zeros: no size"));
	}
	if (strcmp(emu, "arange") == 0)
		return params_arange(c, p);
	if (strcmp(emu, "getitem") == 0)
		return c->nvals ? parse_index(c->vals[0], p) : 0;
	if (!strcmp(emu, "unsqueeze") || !strcmp(emu, "index_copy_") || !strcmp(emu, "cat")) {
		v = kwarg(c, "dim");
		if (!v && c->nvals)
			v = c->vals[0];
		p->dim = 0; /* torch.cat's default */
		return v ? set_dim(v, &p->dim) : 0;
	}
	if (strcmp(emu, "scaled_dot_product_attention") == 0)
		return params_attention(c, cs, p);
	if (strcmp(emu, "embedding") == 0 && c->nvals > 1 && !is_null(c->vals[1]))
		return err_set(ERR_INVAL, "embedding with max_norm renormalises its weight: not "
					  "emulated");
	return 0;
}

/* `kernels:` params: the names `spyre-ci emu run` takes. */
static int params_kernel(const struct spec_kernel *k, struct spyre_op_params *p)
{
	for (size_t i = 0; i < k->n_params; i++) {
		const char *key = k->params[i].key.s, *val = k->params[i].value.s;
		int rc = 0;
		if (!key || !val)
			continue;
		if (strcmp(key, "dim") == 0)
			rc = set_dim(val, &p->dim);
		else if (strcmp(key, "keepdim") == 0)
			p->keepdim = is_true(val);
		else if (strcmp(key, "exponent") == 0 || strcmp(key, "scalar") == 0)
			rc = parse_number(val, &p->scalar);
		else if (strcmp(key, "min") == 0)
			rc = parse_number(val, &p->scalar), p->has_min = 1;
		else if (strcmp(key, "max") == 0)
			rc = parse_number(val, &p->scalar2), p->has_max = 1;
		else if (strcmp(key, "eps") == 0)
			rc = parse_number(val, &p->eps);
		else if (strcmp(key, "causal") == 0)
			p->causal = is_true(val);
		else if (strcmp(key, "approximate") == 0)
			p->approximate_tanh = strcmp(val, "tanh") == 0;
		else if (strcmp(key, "shape") == 0)
			rc = parse_ints(val, p->shape, SPYRE_DIMS_MAX, &p->shape_ndim);
		else if (strcmp(key, "index") == 0)
			rc = parse_index(val, p);
		else if (strcmp(key, "perm") == 0) {
			int64_t v[SPYRE_DIMS_MAX];
			int n;
			rc = parse_ints(val, v, SPYRE_DIMS_MAX, &n);
			for (int j = 0; !rc && j < n; j++)
				p->perm[j] = (int)v[j];
		}
		if (rc)
			return err_prefix("kernels param %s", key);
	}
	return 0;
}

int testspecs_case_params(const struct spec_case *cs, struct spyre_op_params *p)
{
	memset(p, 0, sizeof(*p));
	p->dim = -1; /* spyre_run_opts_init's defaults */
	p->perm[1] = 1;
	if (cs->kernel)
		return params_kernel(cs->kernel, p);
	if (!cs->sample || !cs->emu_op)
		return 0;
	struct call *c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(ERR_NOMEM, "case params: out of memory");
	c->si = cs->sample;
	int rc = 0;
	for (size_t i = 0; !rc && i < cs->sample->n_args; i++) {
		const struct spec_arg *a = &cs->sample->args[i];
		if (a->kind != SPEC_ARG_VALUE && a->kind != SPEC_ARG_PY)
			continue;
		if (c->nvals >= CALL_VALUES_MAX)
			rc = err_set(ERR_INVAL, "more than %d non-tensor arguments",
				     CALL_VALUES_MAX);
		else if (!(rc = unquote(a->text.s ? a->text.s : "null", c->buf[c->nvals])))
			c->vals[c->nvals] = c->buf[c->nvals], c->nvals++;
	}
	if (!rc)
		rc = params_call(c, cs, cs->emu_op, p);
	free(c);
	return rc;
}
