/* One op end to end on the emulated card (see run.h): inputs, device copies in their layouts,
 * every candidate plan validated and timed, the chosen one executed, the result compared with
 * the float64 host reference. */
#include "spyre-emu/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/err.h"
#include "plan.h"
#include "plan_cache.h"
#include "spyre-emu/device.h"
#include "spyre-emu/dl16.h"

void spyre_run_opts_init(struct spyre_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->atol = -1;
	o->rtol = -1;
	o->params.dim = -1;
	o->params.perm[1] = 1;
}

void spyre_run_default_tol(enum spyre_dtype dtype, const char *op, double *atol, double *rtol)
{
	(void)op;
	if (dtype == SPYRE_DTYPE_FLOAT16 || dtype == SPYRE_DTYPE_DL16 ||
	    dtype == SPYRE_DTYPE_BFLOAT16) {
		*atol = 0.1; /* torch-spyre's fp16 kernel tests (docs/emu.md) */
		*rtol = 0.1;
	} else if (dtype == SPYRE_DTYPE_FLOAT32) {
		*atol = 1e-3; /* the YAML framework's default precision */
		*rtol = 1e-3;
	} else {
		*atol = 0;
		*rtol = 0;
	}
}

static int is_comparison(const char *n)
{
	static const char *const cmp[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++)
		if (strcmp(n, cmp[i]) == 0)
			return 1;
	return 0;
}

/* Everything one run owns, released by run_state_finish(). */
struct run_state {
	const struct spyre_op_info *op;
	struct spyre_tensor in[SPYRE_OP_INPUTS_MAX];
	int nin;
	struct spyre_tensor out;
	double *ref;
	uint64_t nref;
	struct spyre_device *dev;
	struct plan_ctx ctx;
	struct plan_variant variants[PLAN_VARIANTS_MAX];
	int nvariants;
};

static void run_state_finish(struct run_state *s)
{
	for (int i = 0; i < s->nin; i++)
		spyre_tensor_finish(&s->in[i]);
	spyre_tensor_finish(&s->out);
	free(s->ref);
	spyre_device_destroy(s->dev);
}

static int place(struct run_state *s, struct plan_tensor *pt, const struct spyre_tensor *t,
		 int copy)
{
	struct spyre_layout l;
	int rc = spyre_layout_default(&l, t->shape, t->ndim, t->dtype);
	if (rc)
		return rc;
	uint64_t addr;
	if ((rc = spyre_device_alloc(s->dev, &addr, spyre_layout_bytes(&l))))
		return rc;
	if ((rc = plan_tensor_init(pt, &l, addr)))
		return rc;
	if (!copy)
		return 0;
	int64_t strides[SPYRE_DIMS_MAX];
	spyre_layout_contiguous_strides(strides, t->shape, t->ndim);
	return spyre_copy_to_device(s->dev, NULL, addr, &l, t->data, strides);
}

static void value_range(const struct spyre_tensor *t, double *lo, double *hi)
{
	uint64_t n = spyre_tensor_numel(t);
	*lo = n ? spyre_tensor_get(t, 0) : 0;
	*hi = *lo;
	for (uint64_t j = 1; j < n; j++) {
		double v = spyre_tensor_get(t, j);
		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
	}
}

/* The caller's values over the inputs the op made (o->fill_input). An integer input of
 * another dtype than the op's (embedding's or index_copy_'s indices) is kept within the range
 * the op's own values had. */
static int fill_inputs(struct run_state *s, const struct spyre_run_opts *o)
{
	for (int i = 0; i < s->nin; i++) {
		struct spyre_tensor *t = &s->in[i];
		int index_like = !spyre_dtype_is_float(t->dtype) && t->dtype != o->dtype;
		double lo = 0, hi = 0, glo, ghi;
		if (index_like)
			value_range(t, &lo, &hi);
		lo = lo > 0 ? 0 : lo; /* indices may start at 0 wherever the op's own began */
		int rc = o->fill_input(o->fill_ctx, t, i);
		if (rc)
			return rc;
		if (!index_like)
			continue;
		value_range(t, &glo, &ghi);
		if (spyre_tensor_numel(t) && (glo < lo || ghi > hi))
			return err_set(ERR_INVAL,
				       "%s input %d (%s, indices) holds %g..%g; give values within "
				       "%g..%g (randint with a smaller high)",
				       s->op->name, i, spyre_dtype_name(t->dtype), glo, ghi, lo,
				       hi);
	}
	return 0;
}

static int run_prepare(struct run_state *s, const struct spyre_run_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->op = spyre_op_find(o->op);
	if (!s->op)
		return err_set(ERR_INVAL, "unknown op '%s'", o->op);
	if (o->nin != s->op->nin)
		return err_set(ERR_INVAL, "%s takes %d inputs (%s), got %d", s->op->name,
			       s->op->nin, s->op->inputs, o->nin);
	if (!spyre_op_supports(s->op, o->dtype))
		return err_set(ERR_INVAL, "%s does not support %s (it supports %s)", s->op->name,
			       spyre_dtype_name(o->dtype), s->op->dtypes);
	struct spyre_op_params p = o->params;
	int nd0 = o->ndims[0] ? o->ndims[0] : 1;
	if (p.dim < 0)
		p.dim += nd0;
	if (p.dim < 0 || p.dim >= nd0)
		return err_set(ERR_INVAL, "dim %d is out of range for %d dimensions", o->params.dim,
			       nd0);
	if (p.eps == 0)
		p.eps = strcmp(s->op->name, "rms_norm") == 0 ? 1e-6 : 1e-5;
	int rc = spyre_op_make_inputs_p(s->op, s->in, o->nin, o->shapes, o->ndims, o->dtype,
					o->seed, &p);
	if (rc)
		return rc;
	s->nin = o->nin;
	if (o->fill_input && (rc = fill_inputs(s, o)))
		return rc;
	/* A comparison is exact: give it inputs on the DL16 grid, so host and device compare
	 * the same numbers (two float16 values that round to one DL16 value compare equal on
	 * the device; that difference is the device's, not a planner bug). */
	if (spyre_dtype_is_half(o->dtype) && is_comparison(s->op->name))
		for (int i = 0; i < s->nin; i++)
			for (uint64_t j = 0; j < spyre_tensor_numel(&s->in[i]); j++)
				spyre_tensor_set(&s->in[i], j,
						 spyre_dl16_to_f32(spyre_dl16_from_f32(
						     (float)spyre_tensor_get(&s->in[i], j))));
	int64_t shape[SPYRE_DIMS_MAX];
	int ndim;
	if ((rc = spyre_op_output_shape(s->op, s->in, s->nin, &p, shape, &ndim)))
		return rc;
	enum spyre_dtype odt = spyre_op_output_dtype(s->op, &p, o->dtype);
	if ((rc = spyre_tensor_alloc(&s->out, odt, shape, ndim)))
		return rc;
	if (!o->skip_reference &&
	    (rc = spyre_op_reference(s->op, s->in, s->nin, &p, &s->ref, &s->nref)))
		return rc;
	if ((rc = spyre_device_create(&s->dev, o->hw)))
		return rc;
	struct plan_ctx *c = &s->ctx;
	c->hw = o->hw;
	c->dev = s->dev;
	c->op = s->op;
	c->p = p;
	c->nin = s->nin;
	for (int i = 0; i < s->nin; i++)
		if ((rc = place(s, &c->in[i], &s->in[i], 1)))
			return rc;
	if ((rc = place(s, &c->out, &s->out, 0)))
		return rc;
	rc = plan_variants(c, s->variants);
	if (rc < 0)
		return rc;
	s->nvariants = rc;
	uint64_t scratch = 0;
	for (int i = 0; i < s->nvariants; i++)
		if (s->variants[i].scratch_bytes > scratch)
			scratch = s->variants[i].scratch_bytes;
	if (scratch && (rc = spyre_device_alloc(s->dev, &c->scratch, scratch)))
		return rc;
	c->scratch_bytes = scratch;
	return 0;
}

/* Builds, validates and times one variant into `launch` (left built for the caller). */
static int try_variant(struct run_state *s, const struct plan_variant *v,
		       struct spyre_launch *launch, struct spyre_plan_info *info,
		       struct spyre_timing *t, int keep)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", v->name);
	spyre_launch_init(launch, s->ctx.hw->cores);
	snprintf(launch->plan, sizeof(launch->plan), "%s", v->name);
	s->ctx.launch = launch;
	int rc = v->build(&s->ctx, v);
	if (!rc)
		rc = spyre_launch_validate(launch, s->ctx.hw);
	if (!rc)
		rc = spyre_launch_time_validated(launch, s->ctx.hw, t, keep);
	if (rc) {
		snprintf(info->why, sizeof(info->why), "%s", err_last());
		return rc;
	}
	info->valid = 1;
	info->cycles = t->cycles;
	info->modeled_us = t->us;
	info->util_pe = t->util_avg[SPYRE_UNIT_PE];
	info->util_vec = t->util_avg[SPYRE_UNIT_VEC];
	info->util_dma = t->util_avg[SPYRE_UNIT_DMA];
	info->util_ring = t->util_avg[SPYRE_UNIT_RING];
	info->lx_peak_bytes = t->lx_peak_max;
	info->dev_bytes = t->dev_bytes_read + t->dev_bytes_written;
	for (int i = 0; i < t->ncores; i++)
		info->ring_bytes += t->link_bytes[i][0] + t->link_bytes[i][1];
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct spyre_plan_info *x = a, *y = b;
	if (x->valid != y->valid)
		return y->valid - x->valid;
	if (x->cycles != y->cycles)
		return x->cycles < y->cycles ? -1 : 1;
	return strcmp(x->name, y->name);
}

int spyre_run_plans(const struct spyre_run_opts *o, struct spyre_plan_info **out, size_t *n)
{
	/* nothing is executed, so nothing is compared: no float64 reference (for a large matmul
	 * it costs far more than planning) */
	struct spyre_run_opts no_ref = *o;
	no_ref.skip_reference = 1;
	struct run_state s;
	int rc = run_prepare(&s, &no_ref);
	struct spyre_plan_info *p = NULL;
	if (!rc && !(p = calloc((size_t)s.nvariants, sizeof(*p))))
		rc = err_set(ERR_NOMEM, "out of memory");
	for (int i = 0; !rc && i < s.nvariants; i++) {
		struct spyre_launch l;
		struct spyre_timing t;
		memset(&t, 0, sizeof(t));
		try_variant(&s, &s.variants[i], &l, &p[i], &t, 0);
		spyre_timing_finish(&t);
		spyre_launch_finish(&l);
	}
	if (!rc) {
		qsort(p, (size_t)s.nvariants, sizeof(*p), by_time);
		*out = p;
		*n = (size_t)s.nvariants;
	} else {
		free(p);
	}
	run_state_finish(&s);
	return rc;
}

static void fnv_hex(char out[17], const void *data, uint64_t n)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p = data;
	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static int compare(const struct run_state *s, struct spyre_run_result *r)
{
	double *got_all = malloc((size_t)(s->nref ? s->nref : 1) * sizeof(double));
	if (!got_all)
		return err_set(ERR_NOMEM, "out of memory comparing %llu results",
			       (unsigned long long)s->nref);
	spyre_tensor_get_all(&s->out, got_all);
	for (uint64_t i = 0; i < s->nref; i++) {
		double got = got_all[i], want = s->ref[i];
		double abs_err = fabs(got - want);
		double rel = want != 0 ? abs_err / fabs(want) : abs_err;
		if (isnan(got) != isnan(want) || (!isnan(got) && abs_err > r->max_abs_err))
			r->max_abs_err = isnan(got) != isnan(want) ? INFINITY : abs_err;
		if (rel > r->max_rel_err)
			r->max_rel_err = rel;
		if (!(abs_err <= r->atol + r->rtol * fabs(want)) && !(isnan(got) && isnan(want)))
			r->mismatches++;
	}
	free(got_all);
	r->passed = r->mismatches == 0;
	return 0;
}

/* On a cache hit (plan_cache.c: the same op, shapes, dtype, parameters, cores and hardware
 * build the same candidates): builds and validates only the remembered plan. 1 when it did, 0
 * on a miss. */
static int run_cached(struct run_state *s, const struct plan_key *k, const char *dir,
		      struct spyre_launch *best, struct spyre_timing *t)
{
	char plan[SPYRE_PLAN_NAME_MAX];
	if (!plan_cache_get(k, dir, plan, t))
		return 0;
	for (int i = 0; i < s->nvariants; i++) {
		const struct plan_variant *v = &s->variants[i];
		if (strcmp(v->name, plan) != 0)
			continue;
		spyre_launch_init(best, s->ctx.hw->cores);
		snprintf(best->plan, sizeof(best->plan), "%s", v->name);
		s->ctx.launch = best;
		/* not validated here: execution validates every launch before it runs */
		if (v->build(&s->ctx, v) != 0) {
			spyre_launch_finish(best);
			break;
		}
		return 1;
	}
	spyre_timing_finish(t);
	err_clear();
	return 0;
}

/* A built candidate and the lower bound of its makespan. */
struct cand {
	struct spyre_launch l;
	uint64_t lb;
	int idx, built;
};

static int by_bound(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->built != y->built)
		return y->built - x->built;
	if (x->lb != y->lb)
		return x->lb < y->lb ? -1 : 1;
	return x->idx - y->idx;
}

/* Chooses the fastest plan without simulating every candidate: all are built and bounded
 * (spyre_launch_lower_bound), then simulated in order of their bounds until the next bound
 * cannot beat (or tie ahead of) the best simulated. The choice is the one timing every
 * candidate would make. */
static int choose_pruned(struct run_state *s, struct spyre_launch *best, struct spyre_timing *t,
			 int *have, char *why, size_t why_len)
{
	struct cand c[PLAN_VARIANTS_MAX];
	int n = s->nvariants;
	for (int i = 0; i < n; i++) {
		c[i].idx = i;
		spyre_launch_init(&c[i].l, s->ctx.hw->cores);
		snprintf(c[i].l.plan, sizeof(c[i].l.plan), "%s", s->variants[i].name);
		s->ctx.launch = &c[i].l;
		c[i].built = s->variants[i].build(&s->ctx, &s->variants[i]) == 0;
		if (!c[i].built && !why[0])
			snprintf(why, why_len, "%s: %s", s->variants[i].name, err_last());
		c[i].lb = c[i].built ? spyre_launch_lower_bound(&c[i].l, s->ctx.hw) : 0;
	}
	qsort(c, (size_t)n, sizeof(c[0]), by_bound);
	uint64_t best_cycles = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		int go =
		    c[i].built && (c[i].lb < best_cycles ||
				   (c[i].lb == best_cycles && strcmp(c[i].l.plan, best->plan) < 0));
		struct spyre_timing tt;
		int ok = go && spyre_launch_validate(&c[i].l, s->ctx.hw) == 0 &&
			 spyre_launch_time_validated(&c[i].l, s->ctx.hw, &tt, 0) == 0;
		if (go && !ok && !why[0])
			snprintf(why, why_len, "%s: %s", c[i].l.plan, err_last());
		if (ok) {
			if (tt.cycles < best_cycles ||
			    (tt.cycles == best_cycles && strcmp(c[i].l.plan, best->plan) < 0)) {
				if (*have) {
					spyre_launch_finish(best);
					spyre_timing_finish(t);
				}
				*best = c[i].l;
				*t = tt;
				best_cycles = tt.cycles;
				*have = 1;
				continue;
			}
			spyre_timing_finish(&tt);
		}
		spyre_launch_finish(&c[i].l);
	}
	err_clear();
	return 0;
}

/* CPU seconds of the calling thread (the emulator plans and executes on one thread). */
static double thread_cpu_s(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int spyre_run(const struct spyre_run_opts *o, struct spyre_run_result *r)
{
	memset(r, 0, sizeof(*r));
	struct run_state s;
	int rc = run_prepare(&s, o);
	uint64_t t0 = clock_mono_ns();
	double c0 = thread_cpu_s();
	struct spyre_launch best;
	int have = 0;
	uint64_t best_cycles = UINT64_MAX;
	int found = !o->plan;
	struct plan_key key;
	int cacheable = !rc && !o->plan && !o->trace_path, cached = 0;
	if (cacheable) {
		plan_cache_key(&key, o->op, o->dtype, o->nin, o->shapes, o->ndims, &s.ctx.p,
			       s.ctx.hw);
		have = cached = run_cached(&s, &key, o->plan_cache_dir, &best, &r->timing);
		r->plan_cached = cached;
	}
	char why[256] = "";
	if (cacheable && !cached)
		rc = choose_pruned(&s, &best, &r->timing, &have, why, sizeof(why));
	for (int i = 0; !rc && !cacheable && i < s.nvariants; i++) {
		const struct plan_variant *v = &s.variants[i];
		if (o->plan && strcmp(o->plan, v->name) != 0)
			continue;
		found = 1;
		struct spyre_launch l;
		struct spyre_timing t;
		struct spyre_plan_info info;
		memset(&t, 0, sizeof(t));
		int vrc = try_variant(&s, v, &l, &info, &t, o->trace_path != NULL);
		if (vrc && o->plan)
			rc = err_prefix("plan %s", v->name);
		/* fewest cycles, ties to the first name: the order spyre_run_plans lists */
		if (!vrc && (t.cycles < best_cycles ||
			     (t.cycles == best_cycles && strcmp(v->name, best.plan) < 0))) {
			if (have) {
				spyre_launch_finish(&best);
				spyre_timing_finish(&r->timing);
			}
			best = l;
			r->timing = t;
			best_cycles = t.cycles;
			have = 1;
			continue;
		}
		spyre_timing_finish(&t);
		spyre_launch_finish(&l);
	}
	if (!rc && have && cacheable && !cached)
		plan_cache_put(&key, o->plan_cache_dir, best.plan, &r->timing);
	if (!rc && !found)
		rc = err_set(ERR_INVAL, "no plan named '%s' (see `spyre-ci emu plans`)", o->plan);
	if (!rc && !have)
		rc = err_set(ERR_INVAL, "no valid plan for %s on these shapes%s%s%s", s.op->name,
			     why[0] ? " (" : "", why, why[0] ? ")" : "");
	if (!rc) {
		snprintf(r->plan, sizeof(r->plan), "%s", best.plan);
		uint64_t t1 = clock_mono_ns();
		double c1 = thread_cpu_s();
		r->plan_s = clock_elapsed_s(t0, t1);
		r->plan_cpu_s = c1 - c0;
		rc = spyre_launch_execute(&best, s.dev);
		r->exec_s = clock_elapsed_s(t1, clock_mono_ns());
		r->exec_cpu_s = thread_cpu_s() - c1;
	}
	if (!rc) {
		int64_t strides[SPYRE_DIMS_MAX];
		spyre_layout_contiguous_strides(strides, s.out.shape, s.out.ndim);
		rc = spyre_copy_to_host(s.dev, NULL, s.out.data, strides, s.ctx.out.addr,
					&s.ctx.out.l);
	}
	if (!rc && o->trace_path)
		rc = spyre_timing_write_trace(&r->timing, &best, o->trace_path);
	if (!rc) {
		r->atol = o->atol;
		r->rtol = o->rtol;
		if (o->atol < 0 || o->rtol < 0)
			spyre_run_default_tol(o->dtype, o->op, &r->atol, &r->rtol);
		if (!o->skip_reference)
			rc = compare(&s, r);
		r->out_ndim = s.out.ndim;
		memcpy(r->out_shape, s.out.shape, sizeof(r->out_shape));
		fnv_hex(r->digest, s.out.data,
			spyre_tensor_numel(&s.out) * spyre_dtype_size(s.out.dtype));
	}
	if (!rc && o->keep_output) {
		*o->keep_output = s.out; /* the caller owns it now */
		memset(&s.out, 0, sizeof(s.out));
	}
	if (have)
		spyre_launch_finish(&best);
	run_state_finish(&s);
	if (rc) /* a failed run hands nothing back: the caller need not finish it */
		spyre_run_result_finish(r);
	return rc;
}

void spyre_run_result_finish(struct spyre_run_result *res)
{
	spyre_timing_finish(&res->timing);
	memset(&res->timing, 0, sizeof(res->timing));
}

void spyre_run_release_caches(void)
{
	plan_cache_release();
	spyre_launch_release_buffers();
}
