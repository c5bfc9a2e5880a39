/* Running an op graph (graph.h) on one emulated card. Tensors live on the device from first to
 * last op; each op is planned like a single op (every candidate built, validated, timed; the
 * fastest executed). A transpose of the last two dimensions of an op's result is a relayout:
 * its data is produced by the fastest transpose plan, and its modeled cost is the relayout's,
 * timed both ways:
 *  - ring: the producer's rows are still in the cores' LX (the consumer reads the assembled
 *    rows from LX), so only the exchange is paid: a tile transpose per core, pieces sent over
 *    the ring, placed into whole output rows (plan__relayout_build with in_lx);
 *  - devmem: a kernel boundary and a round trip: the rows loaded from device memory,
 *    transposed, the pieces stored, a barrier, the pieces loaded, placed and stored.
 * The reference is the whole graph on the host: each op's float64 reference, intermediates
 * held in float32 tensors. */
#include "spyre-emu/graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "graph_trace.h"
#include "plan.h"
#include "spyre-emu/device.h"
#include "spyre-emu/run.h"
#include "spyre-emu/timing.h"

struct gstate {
	const struct spyre_graph *g;
	const struct spyre_graph_opts *o;
	struct spyre_device *dev;
	struct plan_tensor dt[SPYRE_GRAPH_TENSORS_MAX];   /* device tensors */
	struct spyre_tensor ref[SPYRE_GRAPH_TENSORS_MAX]; /* host reference values */
	int producer_op[SPYRE_GRAPH_TENSORS_MAX];         /* -1: a graph input */
	struct graph_trace trace;
	uint64_t clock; /* modeled cycles so far */
};

static void gstate_finish(struct gstate *s)
{
	for (int i = 0; i < SPYRE_GRAPH_TENSORS_MAX; i++)
		spyre_tensor_finish(&s->ref[i]);
	spyre_device_destroy(s->dev);
	graph_trace_finish(&s->trace);
}

static int place(struct gstate *s, int t, const int64_t *shape, int ndim, enum spyre_dtype dt)
{
	struct spyre_layout l;
	uint64_t addr;
	int rc = spyre_layout_default(&l, shape, ndim, dt);
	if (!rc)
		rc = spyre_device_alloc(s->dev, &addr, spyre_layout_bytes(&l));
	return rc ? rc : plan_tensor_init(&s->dt[t], &l, addr);
}

/* Graph inputs: randn x 0.1 from the seed (as a unary op's inputs are made), on the device. */
static int make_inputs(struct gstate *s)
{
	const struct spyre_op_info *gen = spyre_op_find("neg");
	for (int i = 0; i < s->g->ninputs; i++) {
		int rc = spyre_op_make_inputs(gen, &s->ref[i], 1, &s->g->input_shape[i],
					      &s->g->input_ndim[i], s->o->dtype, s->o->seed + i);
		if (!rc)
			rc = place(s, i, s->ref[i].shape, s->ref[i].ndim, s->o->dtype);
		int64_t strides[SPYRE_DIMS_MAX];
		spyre_layout_contiguous_strides(strides, s->ref[i].shape, s->ref[i].ndim);
		if (!rc)
			rc = spyre_copy_to_device(s->dev, NULL, s->dt[i].addr, &s->dt[i].l,
						  s->ref[i].data, strides);
		if (rc)
			return err_prefix("input %s", s->g->input_name[i]);
		s->producer_op[i] = -1;
	}
	return 0;
}

/* The op's host reference into ref[t] (float32), and its output shape. */
static int reference(struct gstate *s, const struct spyre_graph_op *op, int t,
		     struct spyre_op_params *p)
{
	struct spyre_tensor in[SPYRE_OP_INPUTS_MAX];
	for (int i = 0; i < op->nin; i++)
		in[i] = s->ref[op->in[i]]; /* borrowed, not owned */
	int64_t shape[SPYRE_DIMS_MAX];
	int ndim;
	double *v = NULL;
	uint64_t n = 0;
	int rc = spyre_op_output_shape(op->op, in, op->nin, p, shape, &ndim);
	if (!rc)
		rc = spyre_op_reference(op->op, in, op->nin, p, &v, &n);
	if (!rc)
		rc = spyre_tensor_alloc(&s->ref[t], SPYRE_DTYPE_FLOAT32, shape, ndim);
	if (!rc)
		spyre_tensor_set_all(&s->ref[t], v);
	free(v);
	return rc;
}

static int time_launch(struct gstate *s, struct spyre_launch *l, struct spyre_timing *tm,
		       int validated)
{
	int rc = validated ? spyre_launch_time_validated(l, s->o->hw, tm, s->o->trace_path != NULL)
			   : spyre_launch_time(l, s->o->hw, tm, s->o->trace_path != NULL);
	return rc;
}

/* Plans, times and runs op k (its ctx filled in); the chosen plan's name and timing out. */
static int run_best(struct gstate *s, struct plan_ctx *c, struct spyre_graph_step *st,
		    struct spyre_timing *best_t, int traced)
{
	struct plan_variant v[PLAN_VARIANTS_MAX];
	int n = plan_variants(c, v), rc = 0, have = 0;
	if (n < 0)
		return n;
	uint64_t scratch = 0;
	for (int i = 0; i < n; i++)
		scratch = v[i].scratch_bytes > scratch ? v[i].scratch_bytes : scratch;
	if (scratch && (rc = spyre_device_alloc(s->dev, &c->scratch, scratch)))
		return rc;
	c->scratch_bytes = scratch;
	struct spyre_launch best;
	for (int i = 0; i < n; i++) {
		struct spyre_launch l;
		struct spyre_timing t;
		spyre_launch_init(&l, s->o->hw->cores);
		memcpy(l.plan, v[i].name, sizeof(l.plan));
		c->launch = &l;
		if (v[i].build(c, &v[i]) != 0 || time_launch(s, &l, &t, 0) != 0) {
			spyre_launch_finish(&l);
			continue;
		}
		if (have && t.cycles >= best_t->cycles) {
			spyre_timing_finish(&t);
			spyre_launch_finish(&l);
			continue;
		}
		if (have) {
			spyre_launch_finish(&best);
			spyre_timing_finish(best_t);
		}
		best = l, *best_t = t, have = 1;
	}
	if (!have)
		rc = err_set(ERR_INVAL, "no valid plan for %s on these shapes", c->op->name);
	if (!rc) {
		snprintf(st->plan, sizeof(st->plan), "%s", best.plan);
		rc = spyre_launch_execute(&best, s->dev);
		if (!rc && traced)
			rc = graph_trace_add(&s->trace, &best, best_t, s->clock, st->name);
		spyre_launch_finish(&best);
	}
	if (rc && have)
		spyre_timing_finish(best_t);
	if (scratch)
		spyre_device_free(s->dev, c->scratch);
	c->scratch = 0;
	return rc;
}

/* A transpose of the last two dimensions of an op's result. */
static int is_relayout(const struct gstate *s, const struct spyre_graph_op *op)
{
	if (strcmp(op->op->name, "transpose") != 0 || s->producer_op[op->in[0]] < 0)
		return 0;
	int n = s->dt[op->in[0]].ndim, a = op->p.perm[0], b = op->p.perm[1];
	a = a < 0 ? a + n : a, b = b < 0 ? b + n : b;
	return n >= 2 && ((a == n - 1 && b == n - 2) || (a == n - 2 && b == n - 1));
}

/* The modeled cost of relayout op `c` over the ring or through device memory; 0 on success
 * with *us, else the reason it cannot (the re-stick does not fit LX). */
static int relayout_cost(struct gstate *s, struct plan_ctx *c, int ring, double *us,
			 struct spyre_launch *keep, struct spyre_timing *kt)
{
	struct spyre_launch full, l;
	uint64_t scratch = ring ? 0 : plan__relayout_scratch(c);
	int rc = !ring && !scratch ? err_set(ERR_LIMIT, "the re-stick does not fit LX") : 0;
	if (!rc && scratch)
		rc = spyre_device_alloc(s->dev, &c->scratch, scratch);
	/* the whole re-stick validates the extents; the ring one is timed without its loads and
	 * stores */
	spyre_launch_init(&full, s->o->hw->cores);
	c->launch = &full;
	if (!rc)
		rc = plan__relayout_build(c, ring, 0);
	if (!rc)
		rc = spyre_launch_validate(&full, s->o->hw);
	spyre_launch_init(&l, s->o->hw->cores);
	snprintf(l.plan, sizeof(l.plan), "relayout_%s", ring ? "ring" : "devmem");
	c->launch = &l;
	if (!rc)
		rc = ring ? plan__relayout_build(c, 1, 1) : plan__relayout_build(c, 0, 0);
	struct spyre_timing t;
	if (!rc)
		rc = time_launch(s, &l, &t, 1);
	if (!rc) {
		*us = t.us;
		*keep = l, *kt = t;
	} else {
		spyre_launch_finish(&l);
	}
	spyre_launch_finish(&full);
	if (scratch && c->scratch)
		spyre_device_free(s->dev, c->scratch);
	c->scratch = 0;
	return rc;
}

static int run_relayout(struct gstate *s, struct plan_ctx *c, struct spyre_graph_step *st,
			struct spyre_timing *out_t)
{
	struct spyre_launch lr = { 0 }, ld = { 0 };
	struct spyre_timing tr = { 0 }, td = { 0 };
	int okr = relayout_cost(s, c, 1, &st->ring_us, &lr, &tr) == 0;
	int okd = relayout_cost(s, c, 0, &st->devmem_us, &ld, &td) == 0;
	err_clear();
	enum spyre_relayout_mode m = s->o->relayout;
	int ring = m == SPYRE_RELAYOUT_RING ||
		   (m == SPYRE_RELAYOUT_BEST && okr && (!okd || st->ring_us <= st->devmem_us));
	st->relayout = 1;
	st->bytes = spyre_layout_bytes(&c->out.l);
	snprintf(st->via, sizeof(st->via), "%s", ring ? "ring" : "devmem");
	/* the data: the fastest transpose plan (the same bytes either way) */
	struct spyre_timing data_t;
	int rc = run_best(s, c, st, &data_t, 0);
	if (!rc && ((ring && !okr) || (!ring && !okd))) {
		/* that path cannot re-stick this tensor at once: the transpose plan is the cost */
		st->modeled_us = data_t.us;
		*out_t = data_t;
		snprintf(st->via, sizeof(st->via), "devmem");
		rc = graph_trace_add(&s->trace,
				     &(struct spyre_launch){ .ncores = c->launch->ncores }, out_t,
				     s->clock, st->name);
	} else if (!rc) {
		spyre_timing_finish(&data_t);
		st->modeled_us = ring ? st->ring_us : st->devmem_us;
		*out_t = ring ? tr : td;
		memset(ring ? &tr : &td, 0, sizeof(tr));
		char label[64];
		snprintf(label, sizeof(label), "relayout %s via %s", st->name, st->via);
		rc = graph_trace_add(&s->trace, ring ? &lr : &ld, out_t, s->clock, label);
	}
	if (okr)
		spyre_launch_finish(&lr), spyre_timing_finish(&tr);
	if (okd)
		spyre_launch_finish(&ld), spyre_timing_finish(&td);
	return rc;
}

static int run_op(struct gstate *s, int k, struct spyre_graph_result *r)
{
	const struct spyre_graph_op *op = &s->g->ops[k];
	int t = s->g->ninputs + k;
	struct spyre_graph_step *st = &r->steps[r->nsteps];
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", op->name);
	snprintf(st->op, sizeof(st->op), "%s", op->op->name);
	struct plan_ctx c;
	memset(&c, 0, sizeof(c));
	c.hw = s->o->hw, c.dev = s->dev, c.op = op->op, c.p = op->p, c.nin = op->nin;
	for (int i = 0; i < op->nin; i++)
		c.in[i] = s->dt[op->in[i]];
	int nd0 = c.in[0].ndim;
	if (c.p.dim < 0)
		c.p.dim += nd0;
	if (c.p.eps == 0)
		c.p.eps = strcmp(op->op->name, "rms_norm") == 0 ? 1e-6 : 1e-5;
	int rc = reference(s, op, t, &c.p);
	enum spyre_dtype odt = s->o->dtype;
	if (!rc && !spyre_op_supports(op->op, odt))
		rc = err_set(ERR_INVAL, "%s does not support %s", op->op->name,
			     spyre_dtype_name(odt));
	if (!rc)
		rc = place(s, t, s->ref[t].shape, s->ref[t].ndim, odt);
	c.out = s->dt[t];
	s->producer_op[t] = k;
	struct spyre_timing tm = { 0 };
	if (!rc)
		rc =
		    is_relayout(s, op) ? run_relayout(s, &c, st, &tm) : run_best(s, &c, st, &tm, 1);
	if (rc)
		return err_prefix("op %s (line %d)", op->name, op->line);
	if (!st->relayout)
		st->modeled_us = tm.us;
	s->clock += tm.cycles;
	r->modeled_us += st->modeled_us;
	r->nsteps++;
	spyre_timing_finish(&tm);
	return 0;
}

static int compare_outputs(struct gstate *s, struct spyre_graph_result *r)
{
	if (s->o->has_tol) {
		r->atol = s->o->atol;
		r->rtol = s->o->rtol;
	} else {
		spyre_run_default_tol(s->o->dtype, "", &r->atol, &r->rtol);
	}
	for (int i = 0; i < s->g->noutputs; i++) {
		int t = s->g->outputs[i];
		struct spyre_tensor out;
		int rc = spyre_tensor_alloc(&out, s->o->dtype, s->ref[t].shape, s->ref[t].ndim);
		int64_t strides[SPYRE_DIMS_MAX];
		spyre_layout_contiguous_strides(strides, out.shape, out.ndim);
		if (!rc)
			rc = spyre_copy_to_host(s->dev, NULL, out.data, strides, s->dt[t].addr,
						&s->dt[t].l);
		for (uint64_t j = 0; !rc && j < spyre_tensor_numel(&out); j++) {
			double got = spyre_tensor_get(&out, j),
			       want = spyre_tensor_get(&s->ref[t], j);
			double e = fabs(got - want);
			if (!(e <= r->max_abs_err) && !(isnan(got) && isnan(want)))
				r->max_abs_err = isnan(e) ? INFINITY : e;
			if (!(e <= r->atol + r->rtol * fabs(want)) && !(isnan(got) && isnan(want)))
				r->mismatches++;
		}
		spyre_tensor_finish(&out);
		if (rc)
			return rc;
	}
	r->passed = r->mismatches == 0;
	return 0;
}

int spyre_graph_run(const struct spyre_graph *g, const struct spyre_graph_opts *o,
		    struct spyre_graph_result *r)
{
	memset(r, 0, sizeof(*r));
	if (o->dtype != SPYRE_DTYPE_FLOAT16 && o->dtype != SPYRE_DTYPE_FLOAT32)
		return err_set(ERR_INVAL, "graphs run in float16 or float32, not %s",
			       spyre_dtype_name(o->dtype));
	struct gstate *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(ERR_NOMEM, "out of memory");
	s->g = g, s->o = o;
	int rc = spyre_device_create(&s->dev, o->hw);
	if (!rc)
		rc = make_inputs(s);
	for (int k = 0; !rc && k < g->nops; k++)
		rc = run_op(s, k, r);
	if (!rc)
		rc = compare_outputs(s, r);
	if (!rc && o->trace_path)
		rc = graph_trace_write(&s->trace, o->hw, o->trace_path);
	gstate_finish(s);
	free(s);
	return rc;
}
