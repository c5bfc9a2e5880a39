/* The case runner (case.h): a flat case from a testspecs case, its checks after a pipe, and one
 * run on spyre-emu with the outcome its mode gives. */
#include "executors/case.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "adapters_priv.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/num.h"
#include "spyre-emu/graph.h"
#include "spyre-emu/hw.h"

static const char *const outcome_names[EXEC_OUTCOME_COUNT] = {
	"not_run", "passed",  "failed",  "error",     "skipped",
	"xfailed", "xpassed", "crashed", "timed_out", "flaky",
};

const char *exec_outcome_name(enum exec_outcome o)
{
	return (unsigned)o < EXEC_OUTCOME_COUNT ? outcome_names[o] : "unknown";
}

enum exec_outcome exec_outcome_for(enum spec_mode mode, bool passed)
{
	switch (mode) {
	case SPEC_MODE_XFAIL:
		return passed ? EXEC_XPASSED : EXEC_XFAILED;
	case SPEC_MODE_XFAIL_STRICT:
		return passed ? EXEC_FAILED : EXEC_XFAILED;
	default:
		return passed ? EXEC_PASSED : EXEC_FAILED;
	}
}

bool exec_outcome_ok(enum exec_outcome o)
{
	return o == EXEC_PASSED || o == EXEC_FLAKY || o == EXEC_SKIPPED || o == EXEC_XFAILED ||
	       o == EXEC_XPASSED;
}

static int copy_str(char *dst, size_t size, const char *src, const char *what)
{
	size_t n = src ? strlen(src) : 0;
	if (n >= size)
		return err_set(ERR_INVAL, "%s is longer than %zu bytes", what, size - 1);
	memcpy(dst, src ? src : "", n + 1);
	return 0;
}

/* One `params:` entry of a `kernels:` case onto the op parameters. */
static int take_param(struct spyre_op_params *p, const char *key, const char *v)
{
	double d;
	if (strcmp(key, "approximate") == 0) {
		p->approximate_tanh = strcmp(v, "tanh") == 0;
		return 0;
	}
	if (num_parse_double(&d, v, -1e300, 1e300) != 0)
		return err_prefix("params.%s: ", key);
	if (!strcmp(key, "exponent") || !strcmp(key, "scalar") || !strcmp(key, "value"))
		p->scalar = d;
	else if (!strcmp(key, "min"))
		p->scalar = d, p->has_min = 1;
	else if (!strcmp(key, "max"))
		p->scalar2 = d, p->has_max = 1;
	else if (!strcmp(key, "dim"))
		p->dim = (int)d;
	else if (!strcmp(key, "keepdim"))
		p->keepdim = d != 0;
	else if (!strcmp(key, "eps"))
		p->eps = d;
	else if (!strcmp(key, "causal"))
		p->causal = d != 0;
	return 0; /* other keys are the spec author's notes: the runner does not need them */
}

/* A spec tensor's init kind, init_args and strides into input i (the kind is kept only when
 * the tensor's shape is the case's input shape: the inputs of the call, in order). */
static int take_tensor(struct exec_case *out, int i, const struct spec_tensor *t)
{
	if (!t->init.s || i >= out->nin || t->shape.n != (size_t)out->ndims[i] ||
	    memcmp(t->shape.v, out->shapes[i], t->shape.n * sizeof(int64_t)) != 0)
		return 0;
	if (copy_str(out->init[i], EXEC_INIT_NAME_MAX, t->init.s, "init"))
		return -1;
	struct exec_init_args *a = &out->init_args[i];
	if (t->init_args.s && exec_init_args_parse(a, t->init_args.s))
		return -1;
	bool contiguous = !t->has_storage_offset || t->storage_offset == 0;
	int64_t want = 1;
	for (int d = out->ndims[i] - 1; t->stride.n == t->shape.n && d >= 0; d--) {
		a->stride[d] = t->stride.v[d];
		contiguous = contiguous && (t->shape.v[d] == 1 || t->stride.v[d] == want);
		want *= t->shape.v[d];
	}
	if (t->stride.n == t->shape.n && !contiguous) {
		a->strided = true;
		a->offset = t->has_storage_offset ? t->storage_offset : 0;
	}
	return 0;
}

/* A sample_inputs_func call: its tensors (a tensor list's one by one) are the case's inputs. */
static int take_sample(struct exec_case *out, const struct spec_sample_inputs *si)
{
	int i = 0;
	for (size_t j = 0; j < si->n_args && i < SPEC_CASE_INPUTS_MAX; j++) {
		const struct spec_arg *g = &si->args[j];
		if (g->kind == SPEC_ARG_TENSOR && take_tensor(out, i++, &g->tensor))
			return -1;
		for (size_t k = 0; g->kind == SPEC_ARG_TENSOR_LIST && k < g->n_list; k++)
			if (i < SPEC_CASE_INPUTS_MAX && take_tensor(out, i++, &g->list[k]))
				return -1;
	}
	return 0;
}

static int take_kernel(struct exec_case *out, const struct spec_kernel *k)
{
	for (size_t i = 0; i < k->n_params; i++) {
		const struct spec_param *pm = &k->params[i];
		if (pm->key.s && pm->value.s && take_param(&out->params, pm->key.s, pm->value.s))
			return -1;
	}
	for (size_t i = 0; i < k->n_inputs && i < SPEC_CASE_INPUTS_MAX; i++) {
		const struct spec_kernel_input *in = &k->inputs[i];
		if (in->is_tensor && take_tensor(out, (int)i, &in->tensor))
			return -1;
	}
	return 0;
}

int exec_case_from_spec(struct exec_case *out, const struct spec_case *c)
{
	memset(out, 0, sizeof(*out));
	out->params.dim = -1;
	out->params.perm[1] = 1;
	memcpy(out->id, c->id, sizeof(out->id));
	if (copy_str(out->test_id, sizeof(out->test_id), c->test_id, "test id") ||
	    copy_str(out->op, sizeof(out->op), c->op, "op") ||
	    copy_str(out->emu_op, sizeof(out->emu_op), c->emu_op, "emulator op") ||
	    copy_str(out->why, sizeof(out->why), c->why, "reason"))
		return err_prefix("case %s: ", c->id);
	out->nin = c->nin;
	memcpy(out->shapes, c->shapes, sizeof(out->shapes));
	memcpy(out->ndims, c->ndims, sizeof(out->ndims));
	out->dtype = (int32_t)c->dtype;
	out->atol = c->atol;
	out->rtol = c->rtol;
	out->mode = (int32_t)c->mode;
	out->seed = c->seed;
	out->unsupported = c->unsupported;
	snprintf(out->loc, sizeof(out->loc), "%s:%u:%u", c->loc.file ? c->loc.file : "?",
		 c->loc.line, c->loc.col);
	out->kind = (int32_t)c->kind;
	if (c->kind == SPEC_CASE_GRAPH) {
		out->cores = c->kernel->cores;
		out->relayout = c->kernel->relayout;
		if (copy_str(out->graph, sizeof(out->graph), c->kernel->graph_path, "graph path"))
			return err_prefix("case %s: ", c->id);
		return 0;
	}
	if (c->kernel && take_kernel(out, c->kernel))
		return err_prefix("case %s: ", c->id);
	if (c->sample && !c->kernel && take_sample(out, c->sample))
		return err_prefix("case %s: ", c->id);
	/* A call's non-tensor arguments (dims, scalars, index tuples) as emulator parameters;
	 * one the emulator cannot take makes the case unsupported, with the reason. */
	if (c->sample && !c->kernel && !out->unsupported &&
	    testspecs_case_params(c, &out->params) != 0) {
		out->unsupported = 1;
		snprintf(out->why, sizeof(out->why), "%s", err_last());
		err_clear();
	}
	return 0;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

int exec_case_check(const struct exec_case *c)
{
	if (!terminated(c->id, sizeof(c->id)) || !terminated(c->test_id, sizeof(c->test_id)) ||
	    !terminated(c->op, sizeof(c->op)) || !terminated(c->emu_op, sizeof(c->emu_op)) ||
	    !terminated(c->why, sizeof(c->why)) || !terminated(c->loc, sizeof(c->loc)) ||
	    !terminated(c->graph, sizeof(c->graph)))
		return err_set(ERR_INVAL, "case: a string is not terminated");
	for (int i = 0; i < SPEC_CASE_INPUTS_MAX; i++)
		if (!terminated(c->init[i], EXEC_INIT_NAME_MAX) || c->ndims[i] < 0 ||
		    c->ndims[i] > SPEC_CASE_DIMS_MAX)
			return err_set(ERR_INVAL, "case %s: input %d is malformed", c->id, i);
	if (c->nin < 0 || c->nin > SPEC_CASE_INPUTS_MAX)
		return err_set(ERR_INVAL, "case %s: %d inputs", c->id, (int)c->nin);
	if ((c->kind != SPEC_CASE_OP && c->kind != SPEC_CASE_GRAPH) || c->cores < 0 ||
	    c->cores > SPYRE_CORES_MAX || c->relayout < SPYRE_RELAYOUT_BEST ||
	    c->relayout > SPYRE_RELAYOUT_DEVMEM)
		return err_set(ERR_INVAL, "case %s: bad graph fields", c->id);
	if (c->mode < SPEC_MODE_UNSET || c->mode > SPEC_MODE_SKIP)
		return err_set(ERR_INVAL, "case %s: mode %d", c->id, (int)c->mode);
	return 0;
}

int exec_result_check(const struct exec_result *r)
{
	if (!terminated(r->id, sizeof(r->id)) || !terminated(r->plan, sizeof(r->plan)) ||
	    !terminated(r->adapter, sizeof(r->adapter)) ||
	    !terminated(r->message, sizeof(r->message)) || !terminated(r->steps, sizeof(r->steps)))
		return err_set(ERR_INVAL, "result: a string is not terminated");
	if (r->outcome <= EXEC_NOT_RUN || r->outcome >= EXEC_OUTCOME_COUNT)
		return err_set(ERR_INVAL, "result %s: outcome %d", r->id, (int)r->outcome);
	return 0;
}

/* The hardware description, loaded once per process (each worker loads its own). */
static const struct spyre_hw *hw_default(void)
{
	static struct spyre_hw hw;
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	if (state == 0)
		state = spyre_hw_load_default(&hw) == 0 ? 1 : -1;
	return state == 1 ? &hw : NULL;
}

int exec__emu_dtype(enum spec_dtype d, enum spyre_dtype *out)
{
	return spyre_dtype_parse(out, testspecs_dtype_name(d));
}

/* spyre_run()'s fill_input: the spec's init kind over the input the op made; an input
 * without one keeps the op's own values. */
static int fill_from_spec(void *ctx, struct spyre_tensor *t, int index)
{
	const struct exec_case *c = ctx;
	if (index >= SPEC_CASE_INPUTS_MAX || !c->init[index][0])
		return 0;
	int rc = exec_inputs_fill_args(t, c->init[index], &c->init_args[index], c->seed, index);
	/* index_copy_ with a repeated index has no one right answer (torch: nondeterministic) */
	if (!rc && !strcmp(c->emu_op, "index_copy_") && !spyre_dtype_is_float(t->dtype))
		rc = exec_inputs_make_distinct(t, &c->init_args[index]);
	return rc;
}

static void run_native(const struct exec_case *c, const struct spyre_hw *hw, struct exec_result *r)
{
	struct spyre_run_opts o;
	spyre_run_opts_init(&o);
	o.op = c->emu_op;
	o.nin = c->nin;
	memcpy(o.shapes, c->shapes, sizeof(o.shapes));
	memcpy(o.ndims, c->ndims, sizeof(o.ndims));
	o.params = c->params;
	o.hw = hw;
	o.seed = c->seed;
	o.fill_input = fill_from_spec;
	o.fill_ctx = (void *)c; /* read only */
	o.atol = c->atol;
	o.rtol = c->rtol;
	if (exec__emu_dtype((enum spec_dtype)c->dtype, &o.dtype) != 0) {
		r->outcome = EXEC_SKIPPED;
		snprintf(r->message, sizeof(r->message), "the emulator has no %s",
			 testspecs_dtype_name((enum spec_dtype)c->dtype));
		return;
	}
	struct spyre_run_result res;
	if (spyre_run(&o, &res) != 0) {
		r->outcome = EXEC_ERROR;
		snprintf(r->message, sizeof(r->message), "the emulator refused: %s", err_last());
		err_clear();
		return;
	}
	r->max_abs_err = res.max_abs_err;
	r->max_rel_err = res.max_rel_err;
	r->mismatches = res.mismatches;
	r->device_us = res.timing.us;
	r->util_pe = res.timing.util_avg[SPYRE_UNIT_PE];
	r->util_vec = res.timing.util_avg[SPYRE_UNIT_VEC];
	snprintf(r->plan, sizeof(r->plan), "%s", res.plan);
	r->outcome = exec_outcome_for((enum spec_mode)c->mode, res.passed);
	if (res.passed && r->outcome == EXEC_FAILED)
		snprintf(r->message, sizeof(r->message),
			 "passed, but the mode is xfail_strict: an unexpected pass fails");
	else if (!res.passed)
		snprintf(r->message, sizeof(r->message),
			 "%llu elements differ beyond atol %g + rtol %g; greatest absolute "
			 "difference %g, relative %g",
			 (unsigned long long)res.mismatches, c->atol, c->rtol, res.max_abs_err,
			 res.max_rel_err);
	spyre_run_result_finish(&res);
}

/* The graph's steps as one line (exec_result.steps) and a short plan name: how many kernels
 * and relayouts ran. */
static void graph_steps(const struct spyre_graph_result *res, struct exec_result *r)
{
	size_t n = 0, size = sizeof(r->steps);
	int kernels = 0, relayouts = 0;
	bool cut = false;
	r->steps[0] = '\0';
	for (int i = 0; i < res->nsteps; i++) {
		const struct spyre_graph_step *st = &res->steps[i];
		char one[160];
		if (st->relayout)
			snprintf(one, sizeof(one), "%s%s relayout %s %.3fus", i ? "; " : "",
				 st->name, st->via, st->modeled_us);
		else
			snprintf(one, sizeof(one), "%s%s %s %s %.3fus", i ? "; " : "", st->name,
				 st->op, st->plan, st->modeled_us);
		relayouts += st->relayout != 0;
		kernels += st->relayout == 0;
		size_t len = strlen(one);
		if (!cut && n + len + 4 >= size) { /* room for "..." and the NUL */
			memcpy(r->steps + n, "...", 4);
			cut = true;
		} else if (!cut) {
			memcpy(r->steps + n, one, len + 1);
			n += len;
		}
	}
	snprintf(r->plan, sizeof(r->plan), "graph: %d kernels, %d relayouts", kernels, relayouts);
}

/* A graph case: the file read again in this worker (the loader checked it), run on a copy of
 * the hardware description with the case's cores, its outputs held to the case's tolerance. */
static void run_graph(const struct exec_case *c, const struct spyre_hw *hw0, struct exec_result *r)
{
	static struct spyre_graph g; /* one case at a time per worker process */
	struct spyre_hw hw = *hw0;
	struct spyre_graph_opts o = { .hw = &hw,
				      .relayout = (enum spyre_relayout_mode)c->relayout,
				      .seed = c->seed,
				      .has_tol = 1,
				      .atol = c->atol,
				      .rtol = c->rtol };
	struct spyre_graph_result res;
	int rc = exec__emu_dtype((enum spec_dtype)c->dtype, &o.dtype);
	if (!rc && c->cores)
		rc = spyre_hw_set_cores(&hw, c->cores);
	if (!rc)
		rc = spyre_graph_load_file(&g, c->graph);
	if (!rc)
		rc = spyre_graph_run(&g, &o, &res);
	if (rc) {
		r->outcome = EXEC_ERROR;
		snprintf(r->message, sizeof(r->message), "the graph did not run: %s", err_last());
		err_clear();
		return;
	}
	r->max_abs_err = res.max_abs_err;
	r->mismatches = res.mismatches;
	r->device_us = res.modeled_us;
	graph_steps(&res, r);
	r->outcome = exec_outcome_for((enum spec_mode)c->mode, res.passed);
	if (res.passed && r->outcome == EXEC_FAILED)
		snprintf(r->message, sizeof(r->message),
			 "passed, but the mode is xfail_strict: an unexpected pass fails");
	else if (!res.passed)
		snprintf(
		    r->message, sizeof(r->message),
		    "%llu output elements differ from the graph's float64 reference beyond atol "
		    "%g + rtol %g; greatest absolute difference %g",
		    (unsigned long long)res.mismatches, c->atol, c->rtol, res.max_abs_err);
}

/* Why a case cannot run at all, or NULL. */
static const char *not_runnable(const struct exec_case *c, const struct exec_adapter **ad,
				const struct exec_adapters *adapters)
{
	*ad = NULL;
	if (c->mode == SPEC_MODE_SKIP)
		return "the specs skip it";
	if ((c->emu_op[0] || c->kind == SPEC_CASE_GRAPH) && !c->unsupported)
		return NULL;
	if (c->kind == SPEC_CASE_GRAPH)
		return c->why;
	*ad = adapters ? exec_adapters_find(adapters, c) : NULL;
	if (*ad)
		return NULL;
	return c->why[0] ? c->why : "the emulator lacks this op and no adapter rewrites it";
}

void exec_case_run(const struct exec_case *c, const struct exec_adapters *adapters,
		   struct exec_result *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->id, c->id, sizeof(r->id));
	r->atol = c->atol;
	r->rtol = c->rtol;
	r->attempts = 1;
	uint64_t t0 = clock_mono_ns();
	const struct exec_adapter *ad;
	const char *why = not_runnable(c, &ad, adapters);
	const struct spyre_hw *hw = hw_default();
	if (why) {
		r->outcome = EXEC_SKIPPED;
		snprintf(r->message, sizeof(r->message), "%s", why);
	} else if (!hw) {
		r->outcome = EXEC_ERROR;
		snprintf(r->message, sizeof(r->message), "no hardware description: %s", err_last());
	} else if (c->kind == SPEC_CASE_GRAPH) {
		run_graph(c, hw, r);
	} else if (ad) {
		exec_adapter_run(ad, c, hw, r);
	} else {
		run_native(c, hw, r);
	}
	r->first_outcome = r->outcome;
	r->seconds = clock_elapsed_s(t0, clock_mono_ns());
}
