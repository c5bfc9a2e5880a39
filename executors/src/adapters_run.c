/* A case through its adapter (adapters.h): inputs by init kind, the expression evaluated step by
 * step on the emulator itself (each step a spyre_run() on the values the earlier steps' device
 * outputs left, its plan executed and timed), compared with the original op's float64
 * reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters_priv.h"
#include "common/err.h"
#include "executors/inputs.h"
#include "spyre-emu/dl16.h"

struct eval {
	const struct exec_adapter *a;
	const struct exec_case *c;
	const struct spyre_hw *hw;
	enum spyre_dtype dtype;
	const struct spyre_tensor *dev_in; /* the inputs as the device holds them */
	double device_us, util_pe, util_vec;
	char plan[SPYRE_PLAN_NAME_MAX];
};

/* What the device's copy of a value is: DL16 for float16, fp32 for float32. */
static double device_round(enum spyre_dtype t, double v)
{
	if (t == SPYRE_DTYPE_FLOAT16)
		return spyre_dl16_to_f32(spyre_dl16_from_f32((float)v));
	if (t == SPYRE_DTYPE_FLOAT32)
		return (float)v;
	return v;
}

static int tensor_copy_device(struct spyre_tensor *dst, const struct spyre_tensor *src)
{
	int rc = spyre_tensor_alloc(dst, src->dtype, src->shape, src->ndim);
	uint64_t n = spyre_tensor_numel(src);
	for (uint64_t i = 0; !rc && i < n; i++)
		spyre_tensor_set(dst, i, device_round(src->dtype, spyre_tensor_get(src, i)));
	return rc;
}

static double number_of(const struct eval *e, const struct node *n)
{
	return n->kind == N_EXPONENT ? e->c->params.scalar : n->num;
}

static bool is_number(const struct node *n)
{
	return n->kind == N_NUM || n->kind == N_EXPONENT;
}

/* spyre_run()'s fill_input: a step's inputs are the values the earlier steps left. */
static int fill_step(void *ctx, struct spyre_tensor *t, int index)
{
	const struct spyre_tensor *in = ctx;
	uint64_t n = spyre_tensor_numel(t);
	if (n != spyre_tensor_numel(&in[index]))
		return err_set(ERR_INVAL, "step input %d: %llu elements, want %llu", index,
			       (unsigned long long)spyre_tensor_numel(&in[index]),
			       (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++)
		spyre_tensor_set(t, i, spyre_tensor_get(&in[index], i));
	return 0;
}

/* One step on the emulator: the op on these inputs, the fastest valid plan executed, its
 * output (as the device computed it) into *out and its modeled time added. */
static int run_step(struct eval *e, const struct spyre_op_info *op, const struct spyre_tensor *in,
		    int nin, const struct spyre_op_params *p, struct spyre_tensor *out)
{
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = op->name;
	o.nin = nin;
	for (int i = 0; i < nin; i++) {
		o.ndims[i] = in[i].ndim;
		memcpy(o.shapes[i], in[i].shape, sizeof(in[i].shape));
	}
	o.dtype = e->dtype;
	o.params = *p;
	o.hw = e->hw;
	o.seed = e->c->seed;
	o.skip_reference = 1; /* the case compares with the original op's reference */
	o.fill_input = fill_step;
	o.fill_ctx = (void *)in; /* read only */
	o.keep_output = out;
	struct spyre_run_result r;
	int rc = spyre_run(&o, &r);
	if (rc)
		return err_prefix("step %s", op->name);
	e->device_us += r.timing.us;
	e->util_pe = fmax(e->util_pe, r.timing.util_avg[SPYRE_UNIT_PE]);
	e->util_vec = fmax(e->util_vec, r.timing.util_avg[SPYRE_UNIT_VEC]);
	size_t len = strlen(e->plan);
	snprintf(e->plan + len, sizeof(e->plan) - len, "%s%s", len ? "+" : "", op->name);
	spyre_run_result_finish(&r);
	return 0;
}

static int eval_node(struct eval *e, int id, struct spyre_tensor *out);

/* Arguments of a call: tensors, except the numeric parameters of pow and clamp. */
static int eval_args(struct eval *e, const struct node *n, struct spyre_tensor *in, int *nin,
		     struct spyre_op_params *p)
{
	bool params_from_numbers =
	    strcmp(n->info->name, "pow") == 0 || strcmp(n->info->name, "clamp") == 0;
	for (int i = 0; i < n->nargs; i++) {
		const struct node *arg = &e->a->nodes[n->args[i]];
		if (params_from_numbers && i > 0) {
			if (!is_number(arg))
				return err_set(ERR_INVAL, "%s takes numbers after its tensor",
					       n->info->name);
			if (strcmp(n->info->name, "pow") == 0)
				p->scalar = number_of(e, arg);
			else if (i == 1)
				p->scalar = number_of(e, arg), p->has_min = 1;
			else
				p->scalar2 = number_of(e, arg), p->has_max = 1;
			continue;
		}
		int rc = eval_node(e, n->args[i], &in[(*nin)++]);
		if (rc)
			return rc;
	}
	return 0;
}

static int eval_call(struct eval *e, const struct node *n, struct spyre_tensor *out)
{
	struct spyre_tensor in[SPYRE_OP_INPUTS_MAX];
	memset(in, 0, sizeof(in));
	int nin = 0;
	struct spyre_run_opts defaults;
	spyre_run_opts_init(&defaults);
	struct spyre_op_params p = defaults.params;
	p.dim = 0;
	int rc = eval_args(e, n, in, &nin, &p);
	if (!rc && nin != n->info->nin)
		rc = err_set(ERR_INVAL, "%s takes %d tensors, the expression gives %d",
			     n->info->name, n->info->nin, nin);
	if (!rc)
		rc = run_step(e, n->info, in, nin, &p, out);
	for (int i = 0; i < nin; i++)
		spyre_tensor_finish(&in[i]);
	return rc;
}

static int eval_node(struct eval *e, int id, struct spyre_tensor *out)
{
	const struct node *n = &e->a->nodes[id];
	if (n->kind == N_CALL)
		return eval_call(e, n, out);
	if (n->kind == N_INPUT)
		return tensor_copy_device(out, &e->dev_in[n->input]);
	int64_t one = 1; /* a number: a one-element tensor that broadcasts */
	int rc = spyre_tensor_alloc(out, e->dtype, &one, 1);
	if (!rc)
		spyre_tensor_set(out, 0, device_round(e->dtype, number_of(e, n)));
	return rc;
}

static int make_inputs(const struct exec_adapter *a, const struct exec_case *c, enum spyre_dtype dt,
		       struct spyre_tensor *host, struct spyre_tensor *dev)
{
	for (int i = 0; i < c->nin; i++) {
		const char *init = c->init[i][0] ? c->init[i] : i < a->ninit ? a->init[i] : "randn";
		int rc = spyre_tensor_alloc(&host[i], dt, c->shapes[i], c->ndims[i]);
		if (!rc)
			rc = exec_inputs_fill_args(&host[i], init, &c->init_args[i], c->seed, i);
		if (!rc)
			rc = tensor_copy_device(&dev[i], &host[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int compare_with_original(const struct exec_adapter *a, const struct exec_case *c,
				 const struct spyre_tensor *host, const struct spyre_tensor *got,
				 struct exec_compare *cmp)
{
	double *want = NULL, *have = NULL;
	uint64_t n = 0;
	int rc = exec_reference(a->reference, host, c->nin, c->params.scalar, &want, &n);
	if (!rc && n != spyre_tensor_numel(got))
		rc = err_set(ERR_INVAL, "the expression gives %llu elements, %s gives %llu",
			     (unsigned long long)spyre_tensor_numel(got), a->reference,
			     (unsigned long long)n);
	if (!rc && !(have = malloc((size_t)(n ? n : 1) * sizeof(double))))
		rc = err_set(ERR_NOMEM, "out of memory comparing");
	if (!rc) {
		spyre_tensor_get_all(got, have);
		exec_compare_values(cmp, have, want, n, c->atol, c->rtol, false);
	}
	free(want);
	free(have);
	return rc;
}

void exec_adapter_run(const struct exec_adapter *a, const struct exec_case *c,
		      const struct spyre_hw *hw, struct exec_result *r)
{
	struct spyre_tensor host[SPYRE_OP_INPUTS_MAX], dev[SPYRE_OP_INPUTS_MAX], out;
	memset(host, 0, sizeof(host));
	memset(dev, 0, sizeof(dev));
	memset(&out, 0, sizeof(out));
	struct eval e = { .a = a, .c = c, .hw = hw, .dev_in = dev };
	struct exec_compare cmp;
	snprintf(r->adapter, sizeof(r->adapter), "%s", a->name);
	int rc = exec__emu_dtype((enum spec_dtype)c->dtype, &e.dtype);
	if (rc == 0)
		rc = make_inputs(a, c, e.dtype, host, dev);
	if (rc == 0)
		rc = eval_node(&e, a->root, &out);
	if (rc == 0)
		rc = compare_with_original(a, c, host, &out, &cmp);
	if (rc) {
		r->outcome = EXEC_ERROR;
		snprintf(r->message, sizeof(r->message), "via adapter %s: %s", a->name, err_last());
		err_clear();
	} else {
		r->max_abs_err = cmp.max_abs_err;
		r->max_rel_err = cmp.max_rel_err;
		r->mismatches = cmp.mismatches;
		r->device_us = e.device_us;
		r->util_pe = e.util_pe;
		r->util_vec = e.util_vec;
		snprintf(r->plan, sizeof(r->plan), "%s", e.plan);
		r->outcome = exec_outcome_for((enum spec_mode)c->mode, cmp.mismatches == 0);
		if (cmp.mismatches)
			snprintf(r->message, sizeof(r->message),
				 "via adapter %s: %llu elements differ beyond atol %g + rtol %g; "
				 "greatest absolute difference %g, relative %g",
				 a->name, (unsigned long long)cmp.mismatches, c->atol, c->rtol,
				 cmp.max_abs_err, cmp.max_rel_err);
		else
			snprintf(r->message, sizeof(r->message), "via adapter %s", a->name);
	}
	for (int i = 0; i < SPYRE_OP_INPUTS_MAX; i++) {
		spyre_tensor_finish(&host[i]);
		spyre_tensor_finish(&dev[i]);
	}
	spyre_tensor_finish(&out);
}
