/* Stage 2, impact: the fallback check, the candidates and their reasons, and the per-file
 * signals (tests edited, op database entries, native code, path rules, coverage). The call
 * graph and the symbol signal are in impact_graph.c, the commit messages in impact_message.c. */
#include <fnmatch.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "impact_internal.h"

static const char *const default_fallback[] = {
	"setup.py",
	"CMakeLists.txt",
	"*.cmake",
	"requirements*.txt",
	"torch/__init__.py",
	"conftest.py",
	"test/run_test.py",
	"torch/testing/_internal/common_utils.py",
	"torch/testing/_internal/common_device_type.py",
};

const char *selector_impact_signal_name(enum impact_signal s)
{
	static const char *const names[] = { "test-edited", "test-module", "opdb",     "symbol",
					     "native",      "path-rule",   "coverage", "message" };
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* ---- candidates ---- */

int impact__add(struct ictx *x, const char *id, enum impact_signal sig, double score,
		const char *fmt, ...)
{
	intptr_t idx;
	struct impact_result *r = x->res;
	if (!strmap_get(&x->cand, id, &idx)) {
		void *p = scan__grow(r->candidates, r->n_candidates, &x->cand_cap,
				     sizeof(*r->candidates));
		if (!p)
			return err_set(ERR_NOMEM, "impact candidates");
		r->candidates = p;
		idx = (intptr_t)r->n_candidates;
		r->candidates[r->n_candidates++] = (struct impact_candidate){ .id = id };
		if (strmap_put(&x->cand, id, idx))
			return ERR_NOMEM;
	}
	struct impact_candidate *c = &r->candidates[idx];
	for (size_t i = 0; i < c->n_reasons; i++)
		if (c->reasons[i].signal == sig)
			return 0; /* one reason per signal: the first, which is the strongest */
	void *p = realloc(c->reasons, sizeof(*c->reasons) * (c->n_reasons + 1));
	if (!p)
		return err_set(ERR_NOMEM, "impact reasons");
	c->reasons = p;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *d = strdup(buf);
	if (!d)
		return err_set(ERR_NOMEM, "impact reason");
	c->reasons[c->n_reasons++] = (struct impact_reason){ sig, d, score };
	c->score += score;
	return 0;
}

/* ---- fallback ---- */

static bool glob_path(const char *glob, const char *path)
{
	if (!strchr(glob, '/')) {
		const char *b = strrchr(path, '/');
		path = b ? b + 1 : path;
	}
	return fnmatch(glob, path, 0) == 0;
}

static int fallback_reason(struct ictx *x, char *buf, size_t n)
{
	const struct impact_config *cfg = x->cfg;
	const char *const *globs =
	    cfg && cfg->fallback_globs ? cfg->fallback_globs : default_fallback;
	size_t ng = cfg && cfg->fallback_globs
			? cfg->n_fallback_globs
			: sizeof(default_fallback) / sizeof(*default_fallback);
	if (selector_change_set_limited(x->cs)) {
		snprintf(buf, n, "change set incomplete: the %s limit (%llu) was hit",
			 x->cs->limit_hits[0].what, (unsigned long long)x->cs->limit_hits[0].limit);
		return 1;
	}
	for (size_t i = 0; i < x->cs->n_files; i++) {
		const struct file_change *fc = &x->cs->files[i];
		const char *paths[2] = { fc->new_path.bytes, fc->old_path.bytes };
		for (size_t p = 0; p < 2; p++)
			for (size_t g = 0; g < ng; g++)
				if (glob_path(globs[g], paths[p])) {
					snprintf(buf, n, "%s changed (fallback rule '%s')",
						 paths[p], globs[g]);
					return 1;
				}
		const char *old = fc->old_path.bytes;
		if ((fc->status == CHANGE_DELETED || fc->status == CHANGE_RENAMED) &&
		    strncmp(old, "torch/", 6) == 0 && strlen(old) > 3 &&
		    strcmp(old + strlen(old) - 3, ".py") == 0) {
			snprintf(buf, n, "torch module %s %s", old,
				 fc->status == CHANGE_DELETED ? "deleted" : "renamed");
			return 1;
		}
	}
	return 0;
}

static int fallback_all(struct ictx *x, const char *reason)
{
	struct impact_result *r = x->res;
	if (!(r->fallback_reason = strdup(reason)))
		return err_set(ERR_NOMEM, "fallback reason");
	r->fallback = true;
	r->candidates = calloc(x->head->n_tests + 1, sizeof(*r->candidates));
	if (!r->candidates)
		return err_set(ERR_NOMEM, "fallback candidates");
	for (size_t i = 0; i < x->head->n_tests; i++)
		r->candidates[i].id = x->head->tests[i].id;
	r->n_candidates = x->head->n_tests;
	return 0;
}

/* ---- test files ---- */

static int file_tests_all(struct ictx *x, size_t file, enum impact_signal sig, double score,
			  const char *why)
{
	for (size_t i = 0; i < x->head->n_tests; i++)
		if (x->head->tests[i].file == file) {
			int rc = impact__add(x, x->head->tests[i].id, sig, score, "%s", why);
			if (rc)
				return rc;
		}
	return 0;
}

static const struct scan_function *fn_by_qualname(const struct scan_file *sf, const char *q)
{
	for (size_t i = 0; sf && i < sf->n_functions; i++)
		if (strcmp(sf->functions[i].qualname, q) == 0)
			return &sf->functions[i];
	return NULL;
}

/* Helpers (non-test functions) of the file that changed: the tests that reach them through the
 * file's helpers, globals and decorators (impact_local.c), each with the chain. */
static int helpers_changed(struct ictx *x, size_t fi, const struct scan_file *hs,
			   const struct scan_file *bs)
{
	uint8_t *changed = calloc(hs->n_functions ? hs->n_functions : 1, 1);
	if (!changed)
		return err_set(ERR_NOMEM, "impact: helpers of %s", hs->path);
	bool any = false;
	for (size_t h = 0; h < hs->n_functions; h++) {
		const struct scan_function *fn = &hs->functions[h];
		const struct scan_function *old = fn_by_qualname(bs, fn->qualname);
		changed[h] =
		    strncmp(fn->name, "test", 4) != 0 && (!old || old->body_hash != fn->body_hash);
		any |= changed[h];
	}
	struct local_index li;
	int rc = any ? impact__local_init(&li, hs) : 0;
	for (size_t i = 0; any && !rc && i < x->head->n_tests; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		if (t->file != fi)
			continue;
		size_t reached = impact__local_walk(&li, (uint32_t)t->function);
		uint32_t hit = UINT32_MAX;
		for (size_t q = 1; q < reached && hit == UINT32_MAX; q++)
			if (li.queue[q] < li.n_fn && changed[li.queue[q]])
				hit = li.queue[q];
		if (hit == UINT32_MAX)
			continue;
		char chain[400];
		impact__local_chain(&li, (uint32_t)t->function, hit, chain, sizeof(chain));
		rc = impact__add(x, t->id, IMPACT_TEST_EDITED, 0.8,
				 "helper %s of the test file changed: %s%s",
				 hs->functions[hit].qualname, t->id, chain);
	}
	if (any)
		impact__local_finish(&li);
	free(changed);
	return rc;
}

static int test_file_signal(struct ictx *x, const struct catalog_file *hf,
			    const struct catalog_file *bf)
{
	size_t fi = (size_t)(hf - x->head->files);
	const struct scan_file *hs = hf->blob->scan, *bs = bf ? bf->blob->scan : NULL;
	if (!hs)
		return 0;
	if (!bs)
		return file_tests_all(x, fi, IMPACT_TEST_EDITED, 1.0, "test file added");
	if (hs->module_hash != bs->module_hash)
		return file_tests_all(x, fi, IMPACT_TEST_MODULE, 0.9,
				      "module-level code of the test file changed");
	for (size_t i = 0; i < x->head->n_tests; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		if (t->file != fi)
			continue;
		const struct catalog_test *b = selector_catalog_test(x->base, t->id);
		if (b && b->body_hash == t->body_hash)
			continue;
		int rc = impact__add(x, t->id, IMPACT_TEST_EDITED, 1.0,
				     b ? "test body changed" : "test added");
		if (rc)
			return rc;
	}
	return helpers_changed(x, fi, hs, bs);
}

/* ---- op database ---- */

static bool overlaps(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1)
{
	return a0 <= b1 && b0 <= a1;
}

/* Op names of the entries of `sf` overlapping the hunks' old (side 0) or new (side 1) lines. */
static int opdb_side(struct ictx *x, const struct scan_file *sf, const struct file_change *fc,
		     int side, bool *outside)
{
	for (size_t h = 0; sf && h < fc->n_hunks; h++) {
		const struct change_hunk *hk = &fc->hunks[h];
		uint32_t s = side ? hk->new_start : hk->old_start;
		uint32_t n = side ? hk->new_lines : hk->old_lines;
		if (n == 0)
			continue;
		bool hit = false;
		for (size_t e = 0; e < sf->n_opinfos; e++) {
			const struct scan_opinfo *op = &sf->opinfos[e];
			if (!op->name || !overlaps(s, s + n - 1, op->first_line, op->last_line))
				continue;
			hit = true;
			if (strmap_put(&x->ops, op->name, (intptr_t) "op database entry edited"))
				return ERR_NOMEM;
		}
		if (!hit && selector_scan_function_at(sf, s) < 0)
			*outside = true;
	}
	return 0;
}

static int opdb_signal(struct ictx *x, const struct catalog_file *hf, const struct catalog_file *bf,
		       const struct file_change *fc)
{
	bool outside = false;
	int rc = opdb_side(x, bf ? bf->blob->scan : NULL, fc, 0, &outside);
	if (!rc)
		rc = opdb_side(x, hf ? hf->blob->scan : NULL, fc, 1, &outside);
	if (rc || !outside)
		return rc;
	for (size_t i = 0; i < x->head->n_tests; i++) /* not within an entry: every @ops test */
		if (x->head->tests[i].opset != CATALOG_OPSET_NONE &&
		    (rc = impact__add(x, x->head->tests[i].id, IMPACT_OPDB, 0.5,
				      "op database changed outside its entries")))
			return rc;
	return 0;
}

/* ---- native code ---- */

static const struct catalog_native_op *native_find(const struct catalog_blob *b, const char *f)
{
	for (size_t i = 0; b && i < b->n_native_ops; i++)
		if (strcmp(b->native_ops[i].func, f) == 0)
			return &b->native_ops[i];
	return NULL;
}

static int native_yaml(struct ictx *x, const struct catalog_blob *hb, const struct catalog_blob *bb)
{
	for (int side = 0; side < 2; side++) {
		const struct catalog_blob *a = side ? bb : hb, *o = side ? hb : bb;
		for (size_t i = 0; a && i < a->n_native_ops; i++) {
			const struct catalog_native_op *e = native_find(o, a->native_ops[i].func);
			if (e && e->hash == a->native_ops[i].hash)
				continue;
			if (strmap_put(&x->ops, a->native_ops[i].op,
				       (intptr_t) "native_functions.yaml entry changed"))
				return ERR_NOMEM;
		}
	}
	return 0;
}

static int kernel_ops(struct ictx *x, const char *kernel)
{
	const struct catalog *cats[2] = { x->head, x->base };
	for (int c = 0; c < 2; c++) {
		const struct catalog_file *yf =
		    selector_catalog_file(cats[c], "aten/src/ATen/native/native_functions.yaml");
		const struct catalog_blob *b = yf ? yf->blob : NULL;
		for (size_t i = 0; b && i < b->n_native_ops; i++)
			for (size_t k = 0; k < b->native_ops[i].n_kernels; k++)
				if (strcmp(b->native_ops[i].kernels[k], kernel) == 0 &&
				    strmap_put(&x->ops, b->native_ops[i].op,
					       (intptr_t) "C++ kernel changed"))
					return ERR_NOMEM;
	}
	return 0;
}

static int native_cpp(struct ictx *x, const struct catalog_blob *hb, const struct catalog_blob *bb)
{
	for (int side = 0; side < 2; side++) {
		const struct catalog_blob *a = side ? bb : hb, *o = side ? hb : bb;
		for (size_t i = 0; a && i < a->n_kernels; i++) {
			bool same = false;
			for (size_t j = 0; o && j < o->n_kernels && !same; j++)
				same = strcmp(o->kernels[j].name, a->kernels[i].name) == 0 &&
				       o->kernels[j].hash == a->kernels[i].hash;
			int rc = same ? 0 : kernel_ops(x, a->kernels[i].name);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Changed ops -> @ops tests over them (the symbol signal adds torch.op / .op users). */
static int ops_to_tests(struct ictx *x)
{
	for (size_t s = 0; s < x->ops.cap; s++) {
		const struct strmap_slot *sl = &x->ops.slots[s];
		if (!sl->key)
			continue;
		const char *kind = selector_catalog_op_kind(x->head, sl->key);
		if (!kind)
			kind = selector_catalog_op_kind(x->base, sl->key);
		for (size_t i = 0; i < x->head->n_tests; i++) {
			const struct catalog_test *t = &x->head->tests[i];
			if (!selector_catalog_test_covers_op(t, sl->key, kind))
				continue;
			int rc = impact__add(x, t->id, IMPACT_OPDB, 1.0, "@ops over %s: %s",
					     sl->key, (const char *)sl->value);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* ---- path rules and coverage ---- */

static int rules_signal(struct ictx *x, const char *path)
{
	for (size_t r = 0; x->cfg && r < x->cfg->n_rules; r++) {
		const struct impact_path_rule *rule = &x->cfg->rules[r];
		if (fnmatch(rule->glob, path, 0) != 0)
			continue;
		for (size_t i = 0; i < x->head->n_tests; i++) {
			const char *id = x->head->tests[i].id;
			bool hit = rule->tests_glob && fnmatch(rule->tests_glob, id, 0) == 0;
			for (size_t k = 0; !hit && k < rule->n_test_ids; k++)
				hit = strcmp(rule->test_ids[k], id) == 0;
			int rc = hit ? impact__add(x, id, IMPACT_PATH_RULE, rule->score,
						   "path rule '%s' on %s", rule->glob, path)
				     : 0;
			if (rc)
				return rc;
		}
	}
	if (!x->coverage)
		return 0;
	json_t *arr = json_object_get(x->coverage, path);
	size_t k;
	json_t *v;
	json_array_foreach(arr, k, v)
	{
		const struct catalog_test *t =
		    json_is_string(v) ? selector_catalog_test(x->head, json_string_value(v)) : NULL;
		int rc = t ? impact__add(x, t->id, IMPACT_COVERAGE, 0.7, "covers %s", path) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the run ---- */

static int file_signals(struct ictx *x, const struct file_change *fc)
{
	const struct catalog_file *hf = selector_catalog_file(x->head, fc->new_path.bytes);
	const struct catalog_file *bf = selector_catalog_file(x->base, fc->old_path.bytes);
	if (fc->status == CHANGE_DELETED)
		hf = NULL;
	if (fc->status == CHANGE_ADDED)
		bf = NULL;
	int rc = rules_signal(x, selector_file_change_path(fc)->bytes);
	const struct catalog_file *f = hf ? hf : bf;
	if (rc || !f)
		return rc;
	switch (f->kind) {
	case CATALOG_TEST:
		return hf ? test_file_signal(x, hf, bf) : 0;
	case CATALOG_SOURCE:
		if (f->opdb && (rc = opdb_signal(x, hf, bf, fc)))
			return rc;
		return impact__source_changed(x, hf, bf, fc);
	case CATALOG_YAML:
		return native_yaml(x, hf ? hf->blob : NULL, bf ? bf->blob : NULL);
	case CATALOG_CPP:
		return native_cpp(x, hf ? hf->blob : NULL, bf ? bf->blob : NULL);
	}
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	return strcmp(((const struct impact_candidate *)a)->id,
		      ((const struct impact_candidate *)b)->id);
}

static int run(struct ictx *x)
{
	char why[600];
	if (fallback_reason(x, why, sizeof(why)))
		return fallback_all(x, why);
	if (x->cfg && x->cfg->coverage_json) {
		json_error_t je;
		x->coverage = json_loads(x->cfg->coverage_json, 0, &je);
		if (!json_is_object(x->coverage))
			return err_set(ERR_INVAL, "coverage map:%d: %s", je.line,
				       x->coverage ? "not an object" : je.text);
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < x->cs->n_files; i++)
		if (!x->cs->files[i].binary)
			rc = file_signals(x, &x->cs->files[i]);
	if (!rc)
		rc = impact__symbols_to_tests(x);
	if (!rc)
		rc = ops_to_tests(x);
	if (!rc)
		rc = impact__messages_to_tests(x);
	return rc;
}

int selector_impact_run(struct impact_result **out, const struct change_set *changes,
			const struct catalog *base, const struct catalog *head,
			const struct impact_config *config)
{
	if (!out || !changes || !base || !head)
		return err_set(ERR_INVAL, "impact_run: NULL argument");
	struct ictx x = { .cs = changes, .base = base, .head = head, .cfg = config };
	if (!(x.res = calloc(1, sizeof(*x.res))))
		return err_set(ERR_NOMEM, "impact result");
	int rc = run(&x);
	impact__ctx_finish(&x);
	json_decref(x.coverage);
	if (rc) {
		selector_impact_result_destroy(x.res);
		return rc;
	}
	if (x.res->n_candidates)
		qsort(x.res->candidates, x.res->n_candidates, sizeof(*x.res->candidates), cmp_cand);
	*out = x.res;
	return 0;
}

void selector_impact_result_destroy(struct impact_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->n_candidates; i++) {
		for (size_t r = 0; r < res->candidates[i].n_reasons; r++)
			free(res->candidates[i].reasons[r].detail);
		free(res->candidates[i].reasons);
	}
	free(res->candidates);
	free(res->fallback_reason);
	free(res);
}
