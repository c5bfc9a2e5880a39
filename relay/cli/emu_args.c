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

/* Every option, whether it takes a value, and the actions it fits. */
struct emu_option {
	const char *name;
	int takes_value;
	unsigned actions;
};

#define SHAPED  (EMU_LAYOUT | EMU_RUN | EMU_PLANS)
#define PLANNED (EMU_RUN | EMU_PLANS)
static const struct emu_option emu_options[] = {
	{ "--json", 0, SHAPED | EMU_OPS | EMU_HW | EMU_GRAPH },
	{ "--shape", 1, SHAPED },
	{ "--dtype", 1, SHAPED | EMU_GRAPH },
	{ "--dim-order", 1, EMU_LAYOUT },
	{ "--op", 1, PLANNED },
	{ "--cores", 1, PLANNED | EMU_GRAPH },
	{ "--hw", 1, PLANNED | EMU_HW | EMU_GRAPH },
	{ "--seed", 1, EMU_RUN | EMU_GRAPH },
	{ "--plan", 1, EMU_RUN },
	{ "--trace", 1, EMU_RUN | EMU_GRAPH },
	{ "--relayout", 1, EMU_GRAPH },
	{ "--plan-cache", 1, EMU_RUN },
	{ "--atol", 1, EMU_RUN },
	{ "--rtol", 1, EMU_RUN },
	{ "--dim", 1, PLANNED },
	{ "--keepdim", 0, PLANNED },
	{ "--exponent", 1, PLANNED },
	{ "--min", 1, PLANNED },
	{ "--max", 1, PLANNED },
	{ "--eps", 1, PLANNED },
	{ "--perm", 1, PLANNED },
	{ "--approximate", 1, PLANNED },
	{ "--causal", 0, PLANNED },
};

static const struct {
	const char *name;
	enum emu_action action;
} emu_actions[] = {
	{ "layout", EMU_LAYOUT }, { "run", EMU_RUN }, { "plans", EMU_PLANS },
	{ "ops", EMU_OPS },       { "hw", EMU_HW },   { "graph", EMU_GRAPH },
};

static const struct emu_option *option_find(const char *name)
{
	for (size_t i = 0; i < sizeof(emu_options) / sizeof(emu_options[0]); i++)
		if (strcmp(emu_options[i].name, name) == 0)
			return &emu_options[i];
	return NULL;
}

static int parse_double_opt(double *out, const char *name, const char *v)
{
	if (num_parse_double(out, v, -1e300, 1e300) != 0)
		return err_prefix("%s", name);
	return 0;
}

/* "--perm 0,2,1" and "--dim-order 1,0,2": the list and its length. */
static int parse_list_opt(int *out, int *n, const char *name, const char *v)
{
	int rc = emu_parse_int_list(out, SPYRE_DIMS_MAX, v, SPYRE_DIMS_MAX);
	if (rc < 0)
		return err_prefix("%s", name);
	*n = rc;
	return 0;
}

/* Op options: the value of option o (known to fit the action). 0 or ERR_INVAL. */
static int parse_op_option(struct emu_args *a, const char *o, const char *v)
{
	struct spyre_op_params *p = &a->params;
	int64_t i64;
	if (strcmp(o, "--dim") == 0) {
		if (num_parse_i64(&i64, v, -SPYRE_DIMS_MAX, SPYRE_DIMS_MAX - 1) != 0)
			return err_prefix("--dim");
		p->dim = (int)i64;
	} else if (strcmp(o, "--exponent") == 0) {
		return parse_double_opt(&p->scalar, o, v);
	} else if (strcmp(o, "--min") == 0) {
		p->has_min = 1;
		return parse_double_opt(&p->scalar, o, v);
	} else if (strcmp(o, "--max") == 0) {
		p->has_max = 1;
		return parse_double_opt(&p->scalar2, o, v);
	} else if (strcmp(o, "--eps") == 0) {
		return parse_double_opt(&p->eps, o, v);
	} else if (strcmp(o, "--perm") == 0) {
		return parse_list_opt(p->perm, &a->nperm, o, v);
	} else if (strcmp(o, "--approximate") == 0) {
		if (strcmp(v, "tanh") == 0)
			p->approximate_tanh = 1;
		else if (strcmp(v, "none") == 0)
			p->approximate_tanh = 0;
		else
			return err_set(ERR_INVAL, "--approximate takes tanh or none, not '%s'", v);
	}
	return 0;
}

/* The value v of option o (known to fit the action). 0 or ERR_INVAL. */
static int parse_valued(struct emu_args *a, const char *o, const char *v)
{
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
			return err_prefix("--dtype");
		a->has_dtype = 1;
	} else if (strcmp(o, "--dim-order") == 0) {
		return parse_list_opt(a->dim_order, &a->ndim_order, o, v);
	} else if (strcmp(o, "--cores") == 0) {
		if (num_parse_int(&a->cores, v, 1, SPYRE_CORES_MAX) != 0)
			return err_prefix("--cores");
	} else if (strcmp(o, "--seed") == 0) {
		if (num_parse_u64(&a->seed, v, 0, UINT64_MAX) != 0)
			return err_prefix("--seed");
	} else if (strcmp(o, "--plan") == 0) {
		a->plan = v;
	} else if (strcmp(o, "--hw") == 0) {
		a->hw_path = v;
	} else if (strcmp(o, "--trace") == 0) {
		a->trace = v;
	} else if (strcmp(o, "--plan-cache") == 0) {
		a->plan_cache = v;
	} else if (strcmp(o, "--relayout") == 0) {
		static const char *const modes[] = { "best", "ring", "devmem" };
		size_t m = 0;
		while (m < 3 && strcmp(v, modes[m]) != 0)
			m++;
		if (m == 3)
			return err_set(ERR_INVAL, "--relayout takes best, ring or devmem, not '%s'",
				       v);
		a->relayout = (enum spyre_relayout_mode)m;
	} else if (strcmp(o, "--atol") == 0 || strcmp(o, "--rtol") == 0) {
		/* a tolerance is never negative (the run's "use the default" is internal) */
		double *t = o[2] == 'a' ? &a->atol : &a->rtol;
		if (num_parse_double(t, v, 0, 1e300) != 0)
			return err_prefix("%s", o);
	} else {
		return parse_op_option(a, o, v);
	}
	return 0;
}

static void set_flag(struct emu_args *a, const char *o)
{
	if (strcmp(o, "--json") == 0)
		a->json = 1;
	else if (strcmp(o, "--keepdim") == 0)
		a->params.keepdim = 1;
	else if (strcmp(o, "--causal") == 0)
		a->params.causal = 1;
}

static int parse_action(struct emu_args *a, const char *name)
{
	for (size_t i = 0; i < sizeof(emu_actions) / sizeof(emu_actions[0]); i++)
		if (strcmp(emu_actions[i].name, name) == 0) {
			a->action = emu_actions[i].action;
			return 0;
		}
	return err_set(ERR_INVAL, "unknown action '%s' (layout, run, plans, ops, hw, graph)", name);
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
	if (argc < 1)
		return err_set(ERR_INVAL,
			       "expected an action: layout, run, plans, ops, hw or graph");
	if (parse_action(a, argv[0]) != 0)
		return ERR_INVAL;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const struct emu_option *opt = option_find(o);
		if (!opt && strncmp(o, "--", 2) != 0 && a->action == EMU_GRAPH && !a->graph_path) {
			a->graph_path = o; /* the one positional argument: the graph file */
			continue;
		}
		if (!opt && strncmp(o, "--", 2) != 0)
			return err_set(ERR_INVAL, "unexpected argument '%s'", o);
		if (!opt)
			return err_set(ERR_INVAL, "unknown option '%s'", o);
		if (!(opt->actions & a->action))
			return err_set(ERR_INVAL, "%s is not an option of `emu %s`", o, argv[0]);
		if (!opt->takes_value) {
			set_flag(a, o);
			continue;
		}
		if (i + 1 >= argc)
			return err_set(ERR_INVAL, "%s needs a value", o);
		if (parse_valued(a, o, argv[++i]) != 0)
			return ERR_INVAL;
	}
	if (a->action == EMU_GRAPH && !a->graph_path)
		return err_set(ERR_INVAL, "emu graph needs a graph file: emu graph FILE");
	return 0;
}

void emu_args_finish(struct emu_args *a)
{
	(void)a;
}

/* permute needs one --perm entry per dimension, transpose two; other ops take none. */
static int check_perm(const struct emu_args *a, const struct spyre_op_info *op)
{
	int permute = strcmp(op->name, "permute") == 0;
	int transpose = strcmp(op->name, "transpose") == 0;
	if (!permute && !transpose)
		return a->nperm ? err_set(ERR_INVAL, "%s takes no --perm", op->name) : 0;
	if (permute && a->nperm != a->ndims[0])
		return err_set(ERR_INVAL,
			       "permute needs --perm with one entry per dimension of the input "
			       "(%d), got %d",
			       a->ndims[0], a->nperm);
	if (transpose && a->nperm && a->nperm != 2)
		return err_set(ERR_INVAL, "transpose takes --perm D0,D1 (two dimensions), got %d",
			       a->nperm);
	return 0;
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
	if (check_perm(a, op) != 0)
		return ERR_INVAL;
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
	o->plan_cache_dir = a->plan_cache;
	o->atol = a->atol;
	o->rtol = a->rtol;
	return 0;
}
