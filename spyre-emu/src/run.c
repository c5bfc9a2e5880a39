/* One op end to end on the emulated card (see run.h): inputs, device copies in their layouts,
 * every candidate plan validated and timed, the chosen one executed, the result compared with
 * the float64 host reference. */
#include "spyre-emu/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"
#include "plan.h"
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
		*atol = 0.1; /* SPYRE.md section 4: torch-spyre's fp16 kernel tests */
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
		rc = spyre_launch_time(launch, s->ctx.hw, t, keep);
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

/* ---- the plan choice cache ----
 * The same op on the same shapes, dtype, parameters and hardware builds the same candidate
 * launches, so which one is fastest and its modeled timing are pure functions of that key.
 * Kernel cases repeat shapes a great deal (every test mapped onto an op's default samples), so
 * each thread remembers its last few choices and, on a hit, builds and validates only the
 * chosen plan and copies its timing. A run that writes a trace always simulates. */
#define PLAN_CACHE_ENTRIES 32

struct plan_key {
	char op[48];
	int dtype, nin;
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int ndims[SPYRE_OP_INPUTS_MAX];
	double pd[4];               /* scalar, scalar2, eps, and 0 */
	int pi[6 + SPYRE_DIMS_MAX]; /* has_min, has_max, dim, keepdim, approx, causal, perm */
	double hwd[3];              /* dev_mem_gbps, clock_ghz, 0 */
	uint64_t pext;              /* FNV-1a of the params the MOVE ops, casts and attention add */
	uint64_t hwu[12];
};

struct plan_entry {
	int used;
	struct plan_key key;
	char plan[SPYRE_PLAN_NAME_MAX];
	struct spyre_timing timing; /* critical path owned; no schedule */
};

static _Thread_local struct plan_entry plan_cache[PLAN_CACHE_ENTRIES];
static _Thread_local unsigned plan_cache_next;

static uint64_t fnv_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Field by field (a struct's padding is not hashed). */
static uint64_t params_ext_hash(const struct spyre_op_params *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv_mix(h, p->shape, sizeof(p->shape));
	h = fnv_mix(h, &p->shape_ndim, sizeof(p->shape_ndim));
	for (int i = 0; i < p->n_index && i < SPYRE_INDEX_MAX; i++) {
		const struct spyre_index_item *it = &p->index[i];
		int f[3] = { (int)it->kind, it->has_start, it->has_stop };
		int64_t v[3] = { it->start, it->stop, it->step };
		h = fnv_mix(h, f, sizeof(f));
		h = fnv_mix(h, v, sizeof(v));
	}
	int f[4] = { p->n_index, p->has_out_dtype, (int)p->out_dtype, p->has_scale };
	h = fnv_mix(h, f, sizeof(f));
	return fnv_mix(h, &p->scale, sizeof(p->scale));
}

static void key_of(struct plan_key *k, const struct spyre_run_opts *o, const struct plan_ctx *c)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->op, sizeof(k->op), "%s", o->op);
	k->dtype = (int)o->dtype;
	k->nin = o->nin;
	for (int i = 0; i < o->nin && i < SPYRE_OP_INPUTS_MAX; i++) {
		k->ndims[i] = o->ndims[i];
		for (int d = 0; d < o->ndims[i] && d < SPYRE_DIMS_MAX; d++)
			k->shapes[i][d] = o->shapes[i][d];
	}
	const struct spyre_op_params *p = &c->p;
	k->pd[0] = p->scalar, k->pd[1] = p->scalar2, k->pd[2] = p->eps;
	k->pi[0] = p->has_min, k->pi[1] = p->has_max, k->pi[2] = p->dim, k->pi[3] = p->keepdim;
	k->pi[4] = p->approximate_tanh, k->pi[5] = p->causal;
	for (int d = 0; d < SPYRE_DIMS_MAX; d++)
		k->pi[6 + d] = p->perm[d];
	k->pext = params_ext_hash(p);
	const struct spyre_hw *h = c->hw;
	k->hwd[0] = h->dev_mem_gbps, k->hwd[1] = h->clock_ghz;
	uint64_t u[12] = { (uint64_t)h->cores,
			   (uint64_t)h->corelets_per_core,
			   (uint64_t)h->pe_rows,
			   (uint64_t)h->pe_cols,
			   h->lx_bytes,
			   h->stick_bytes,
			   h->ring_bytes_per_cycle,
			   h->ring_hop_cycles,
			   h->dev_mem_bytes,
			   h->window_bytes,
			   h->vec_elems_per_cycle,
			   (uint64_t)h->transcendental_factor << 32 | h->dma_setup_cycles };
	memcpy(k->hwu, u, sizeof(u));
}

static int timing_copy(struct spyre_timing *dst, const struct spyre_timing *src)
{
	*dst = *src;
	dst->sched = NULL;
	dst->nsched = 0;
	dst->critical = NULL;
	if (src->ncritical) {
		dst->critical = malloc(src->ncritical * sizeof(*src->critical));
		if (!dst->critical)
			return err_set(ERR_NOMEM, "out of memory copying a timing");
		memcpy(dst->critical, src->critical, src->ncritical * sizeof(*src->critical));
	}
	return 0;
}

static struct plan_entry *cache_find(const struct plan_key *k)
{
	for (int i = 0; i < PLAN_CACHE_ENTRIES; i++)
		if (plan_cache[i].used && memcmp(&plan_cache[i].key, k, sizeof(*k)) == 0)
			return &plan_cache[i];
	return NULL;
}

static void cache_put(const struct plan_key *k, const char *plan, const struct spyre_timing *t)
{
	struct plan_entry *e = &plan_cache[plan_cache_next++ % PLAN_CACHE_ENTRIES];
	if (e->used)
		spyre_timing_finish(&e->timing);
	e->used = 0;
	if (timing_copy(&e->timing, t) != 0)
		return;
	e->key = *k;
	snprintf(e->plan, sizeof(e->plan), "%s", plan);
	e->used = 1;
}

/* On a cache hit: builds and validates only the remembered plan. 1 when it did, 0 on a miss. */
static int run_cached(struct run_state *s, const struct plan_key *k, struct spyre_launch *best,
		      struct spyre_timing *t)
{
	struct plan_entry *e = cache_find(k);
	if (!e)
		return 0;
	for (int i = 0; i < s->nvariants; i++) {
		const struct plan_variant *v = &s->variants[i];
		if (strcmp(v->name, e->plan) != 0)
			continue;
		spyre_launch_init(best, s->ctx.hw->cores);
		snprintf(best->plan, sizeof(best->plan), "%s", v->name);
		s->ctx.launch = best;
		if (v->build(&s->ctx, v) != 0 || spyre_launch_validate(best, s->ctx.hw) != 0 ||
		    timing_copy(t, &e->timing) != 0) {
			spyre_launch_finish(best);
			err_clear();
			return 0;
		}
		return 1;
	}
	return 0;
}

int spyre_run(const struct spyre_run_opts *o, struct spyre_run_result *r)
{
	memset(r, 0, sizeof(*r));
	struct run_state s;
	int rc = run_prepare(&s, o);
	uint64_t t0 = clock_mono_ns();
	struct spyre_launch best;
	int have = 0;
	uint64_t best_cycles = UINT64_MAX;
	int found = !o->plan;
	struct plan_key key;
	int cacheable = !rc && !o->plan && !o->trace_path, cached = 0;
	if (cacheable) {
		key_of(&key, o, &s.ctx);
		have = found = cached = run_cached(&s, &key, &best, &r->timing);
	}
	for (int i = 0; !rc && !cached && i < s.nvariants; i++) {
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
	if (!rc && !found)
		rc = err_set(ERR_INVAL, "no plan named '%s' (see `spyre-ci emu plans`)", o->plan);
	if (!rc && have && cacheable && !cached)
		cache_put(&key, best.plan, &r->timing);
	if (!rc && !have)
		rc = err_set(ERR_INVAL, "no valid plan for %s on these shapes", s.op->name);
	if (!rc) {
		snprintf(r->plan, sizeof(r->plan), "%s", best.plan);
		uint64_t t1 = clock_mono_ns();
		r->plan_s = clock_elapsed_s(t0, t1);
		rc = spyre_launch_execute(&best, s.dev);
		r->exec_s = clock_elapsed_s(t1, clock_mono_ns());
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
	for (int i = 0; i < PLAN_CACHE_ENTRIES; i++) {
		if (plan_cache[i].used)
			spyre_timing_finish(&plan_cache[i].timing);
		plan_cache[i].used = 0;
	}
	spyre_launch_release_buffers();
}
