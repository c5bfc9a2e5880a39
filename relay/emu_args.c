/* Option parsing for `spyre-ci emu`; see emu_args.h. */
#include "emu_args.h"

#include <string.h>

#include "common/err.h"
#include "common/num.h"

int emu_parse_shape(int64_t *dims, int *ndim, const char *text)
{
	int n = 0;
	const char *p = text;
	if (!*p)
		return err_set(ERR_INVAL, "empty --shape (expected sizes like 5x100x150)");
	for (;;) {
		const char *x = strchr(p, 'x');
		size_t len = x ? (size_t)(x - p) : strlen(p);
		if (n == SPYRE_DIMS_MAX)
			return err_set(ERR_INVAL, "--shape %s has more than %d dimensions", text,
				       SPYRE_DIMS_MAX);
		if (num_parse_i64n(&dims[n], p, len, 1, (int64_t)1 << 32) != 0)
			return err_set(ERR_INVAL,
				       "--shape %s: '%.*s' is not a size from 1 to 2^32 (expected "
				       "sizes like 5x100x150)",
				       text, (int)len, p);
		n++;
		if (!x)
			break;
		p = x + 1;
	}
	*ndim = n;
	return 0;
}

int emu_parse_int_list(int *out, int cap, const char *text, int max)
{
	int n = 0;
	const char *p = text;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		int64_t v;
		if (n == cap)
			return err_set(ERR_INVAL, "'%s' has more than %d entries", text, cap);
		if (num_parse_i64n(&v, p, len, 0, max - 1) != 0)
			return err_set(ERR_INVAL, "'%s': '%.*s' is not a whole number from 0 to %d",
				       text, (int)len, p, max - 1);
		out[n++] = (int)v;
		if (!c)
			break;
		p = c + 1;
	}
	return n;
}

static int need_value(int i, int argc, char **argv)
{
	if (i + 1 >= argc)
		return err_set(ERR_INVAL, "%s needs a value", argv[i]);
	return 0;
}

static int parse_double_opt(double *out, const char *name, const char *v)
{
	if (num_parse_double(out, v, -1e300, 1e300) != 0)
		return err_set(ERR_INVAL, "%s: %s", name, err_last());
	return 0;
}

/* One option with a value at argv[i]; returns 1 if it consumed it, 0 if unknown, < 0 error. */
static int parse_valued(struct emu_args *a, const char *o, const char *v)
{
	struct spyre_op_params *p = &a->params;
	int64_t i64;
	if (strcmp(o, "--op") == 0) {
		a->op = v;
	} else if (strcmp(o, "--shape") == 0) {
		if (a->nshapes == SPYRE_OP_INPUTS_MAX)
			return err_set(ERR_INVAL, "at most %d --shape options",
				       SPYRE_OP_INPUTS_MAX);
		if (emu_parse_shape(a->shapes[a->nshapes], &a->ndims[a->nshapes], v) != 0)
			return ERR_INVAL;
		a->nshapes++;
	} else if (strcmp(o, "--dtype") == 0) {
		if (spyre_dtype_parse(&a->dtype, v) != 0)
			return ERR_INVAL;
		a->has_dtype = 1;
	} else if (strcmp(o, "--dim-order") == 0) {
		if (emu_parse_int_list(a->dim_order, SPYRE_DIMS_MAX, v, SPYRE_DIMS_MAX) < 0)
			return ERR_INVAL;
		a->has_dim_order = 1;
	} else if (strcmp(o, "--cores") == 0) {
		if (num_parse_int(&a->cores, v, 1, SPYRE_CORES_MAX) != 0)
			return err_set(ERR_INVAL, "--cores: %s", err_last());
	} else if (strcmp(o, "--seed") == 0) {
		if (num_parse_u64(&a->seed, v, 0, UINT64_MAX) != 0)
			return err_set(ERR_INVAL, "--seed: %s", err_last());
	} else if (strcmp(o, "--plan") == 0) {
		a->plan = v;
	} else if (strcmp(o, "--hw") == 0) {
		a->hw_path = v;
	} else if (strcmp(o, "--trace") == 0) {
		a->trace = v;
	} else if (strcmp(o, "--atol") == 0) {
		return parse_double_opt(&a->atol, o, v) ? ERR_INVAL : 1;
	} else if (strcmp(o, "--rtol") == 0) {
		return parse_double_opt(&a->rtol, o, v) ? ERR_INVAL : 1;
	} else if (strcmp(o, "--dim") == 0) {
		if (num_parse_i64(&i64, v, -SPYRE_DIMS_MAX, SPYRE_DIMS_MAX - 1) != 0)
			return err_set(ERR_INVAL, "--dim: %s", err_last());
		p->dim = (int)i64;
	} else if (strcmp(o, "--exponent") == 0) {
		return parse_double_opt(&p->scalar, o, v) ? ERR_INVAL : 1;
	} else if (strcmp(o, "--min") == 0) {
		p->has_min = 1;
		return parse_double_opt(&p->scalar, o, v) ? ERR_INVAL : 1;
	} else if (strcmp(o, "--max") == 0) {
		p->has_max = 1;
		return parse_double_opt(&p->scalar2, o, v) ? ERR_INVAL : 1;
	} else if (strcmp(o, "--eps") == 0) {
		return parse_double_opt(&p->eps, o, v) ? ERR_INVAL : 1;
	} else if (strcmp(o, "--perm") == 0) {
		if (emu_parse_int_list(p->perm, SPYRE_DIMS_MAX, v, SPYRE_DIMS_MAX) < 0)
			return ERR_INVAL;
	} else if (strcmp(o, "--approximate") == 0) {
		if (strcmp(v, "tanh") == 0)
			p->approximate_tanh = 1;
		else if (strcmp(v, "none") == 0)
			p->approximate_tanh = 0;
		else
			return err_set(ERR_INVAL, "--approximate takes tanh or none, not '%s'", v);
	} else {
		return 0;
	}
	return 1;
}

int emu_args_parse(struct emu_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	a->atol = -1;
	a->rtol = -1;
	a->dtype = SPYRE_DTYPE_FLOAT16;
	a->params.dim = -1;
	a->params.perm[0] = 0;
	a->params.perm[1] = 1;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		if (strcmp(o, "--json") == 0) {
			a->json = 1;
			continue;
		}
		if (strcmp(o, "--keepdim") == 0) {
			a->params.keepdim = 1;
			continue;
		}
		if (strcmp(o, "--causal") == 0) {
			a->params.causal = 1;
			continue;
		}
		if (strncmp(o, "--", 2) != 0)
			return err_set(ERR_INVAL, "unexpected argument '%s'", o);
		if (need_value(i, argc, argv) != 0)
			return ERR_INVAL;
		int rc = parse_valued(a, o, argv[i + 1]);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return err_set(ERR_INVAL, "unknown option '%s'", o);
		i++;
	}
	return 0;
}

void emu_args_finish(struct emu_args *a)
{
	(void)a;
}

int emu_args_to_opts(struct emu_args *a, struct spyre_run_opts *o)
{
	if (!a->op)
		return err_set(ERR_INVAL, "--op is required (see `spyre-ci emu ops`)");
	const struct spyre_op_info *op = spyre_op_find(a->op);
	if (!op)
		return err_set(ERR_INVAL, "unknown op '%s' (see `spyre-ci emu ops`)", a->op);
	if (a->nshapes != op->nin)
		return err_set(ERR_INVAL, "%s takes %d --shape options (%s), got %d", op->name,
			       op->nin, op->inputs, a->nshapes);
	if (!a->has_dtype)
		return err_set(ERR_INVAL, "--dtype is required (%s supports %s)", op->name,
			       op->dtypes);
	int rc =
	    a->hw_path ? spyre_hw_load_file(&a->hw, a->hw_path) : spyre_hw_load_default(&a->hw);
	if (rc)
		return rc;
	if (a->cores && spyre_hw_set_cores(&a->hw, a->cores) != 0)
		return ERR_INVAL;
	spyre_run_opts_init(o);
	o->op = a->op;
	o->nin = a->nshapes;
	memcpy(o->shapes, a->shapes, sizeof(o->shapes));
	memcpy(o->ndims, a->ndims, sizeof(o->ndims));
	o->dtype = a->dtype;
	o->params = a->params;
	o->hw = &a->hw;
	o->seed = a->seed;
	o->plan = a->plan;
	o->trace_path = a->trace;
	o->atol = a->atol;
	o->rtol = a->rtol;
	return 0;
}
