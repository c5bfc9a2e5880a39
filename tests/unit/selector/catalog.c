/* The catalog: tests found in a small repository built with libgit2 (TestCase classes, derived
 * test classes, device-generic classes, module-level tests, @ops sets), the YAML and C++
 * readers, and the blob cache (a second build scans only the blobs it has not seen). Also the
 * impact signals on the same repository: a test edit, a source edit through the call graph, a
 * native kernel edit, and the fallback. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/impact.h"

#define M CHANGE_MODE_FILE

static const char *test_v1 =
    "import torch\nfrom torch.nn.functional import gelu\n"
    "from torch.testing._internal.common_utils import TestCase\n"
    "class TestA(TestCase):\n    def test_one(self):\n        gelu(1)\n"
    "    def test_two(self):\n        torch.add(1, 2)\n    def helper(self):\n        pass\n"
    "class TestB(TestA):\n    def test_three(self):\n        x.mul(2)\n"
    "class NotATest:\n    def test_no(self):\n        pass\n"
    "from torch.testing._internal.common_methods_invocations import op_db, unary_ufuncs\n"
    "class TestD(TestCase):\n    @ops(unary_ufuncs)\n    def test_u(self, device, dtype, op):\n    "
    "    pass\n"
    "    @ops([op for op in op_db if op.name in ('mul',)])\n"
    "    def test_n(self, device, dtype, op):\n        pass\n"
    "instantiate_device_type_tests(TestD, globals())\n"
    "def test_free():\n    pass\n";
static const char *test_v2_edit =
    "import torch\nfrom torch.nn.functional import gelu\n"
    "from torch.testing._internal.common_utils import TestCase\n"
    "class TestA(TestCase):\n    def test_one(self):\n        gelu(2)\n"
    "    def test_two(self):\n        torch.add(1, 2)\n    def helper(self):\n        pass\n"
    "class TestB(TestA):\n    def test_three(self):\n        x.mul(2)\n"
    "class NotATest:\n    def test_no(self):\n        pass\n"
    "from torch.testing._internal.common_methods_invocations import op_db, unary_ufuncs\n"
    "class TestD(TestCase):\n    @ops(unary_ufuncs)\n    def test_u(self, device, dtype, op):\n    "
    "    pass\n"
    "    @ops([op for op in op_db if op.name in ('mul',)])\n"
    "    def test_n(self, device, dtype, op):\n        pass\n"
    "instantiate_device_type_tests(TestD, globals())\n"
    "def test_free():\n    pass\n";
static const char *functional_v1 =
    "import torch\nfrom torch.nn._impl import inner\ndef gelu(x):\n    return inner(x)\n";
static const char *impl_v1 = "def inner(x):\n    return x\n";
static const char *impl_v2 = "def inner(x):\n    return x + 1\n";
static const char *yaml_v1 =
    "- func: add.Tensor(Tensor self) -> Tensor\n  dispatch:\n    CPU: add_k\n"
    "- func: mul.Tensor(Tensor self) -> Tensor\n  dispatch:\n    CPU, CUDA: mul_k\n";
static const char *cpp_v1 = "Tensor add_k(const Tensor& s) {\n  return s;\n}\n\n"
			    "Tensor mul_k(const Tensor& s) {\n  return s;\n}\n";
static const char *cpp_v2 = "Tensor add_k(const Tensor& s) {\n  return s;\n}\n\n"
			    "Tensor mul_k(const Tensor& s) {\n  return s * 2;\n}\n";
static const char *opdb = "op_db = [\n    UnaryUfuncInfo('exp'),\n    OpInfo('mul'),\n]\n"
			  "unary_ufuncs = [op for op in op_db if isinstance(op, UnaryUfuncInfo)]\n";

struct fx {
	struct test_repo t;
	char c[8][41];
};

static void build(struct fx *f)
{
	test_repo_create(&f->t);
	struct test_edit e0[] = {
		{ "test/test_a.py", M, test_v1, 0 },
		{ "torch/nn/functional.py", M, functional_v1, 0 },
		{ "torch/nn/_impl.py", M, impl_v1, 0 },
		{ "aten/src/ATen/native/native_functions.yaml", M, yaml_v1, 0 },
		{ "aten/src/ATen/native/Ops.cpp", M, cpp_v1, 0 },
		{ "torch/testing/_internal/common_methods_invocations.py", M, opdb, 0 },
	};
	test_repo_commit(&f->t, f->c[0], NULL, "c0", NULL, 0, e0, 6);
	const char *p0[] = { f->c[0] };
	struct test_edit e1[] = { { "test/test_a.py", M, test_v2_edit, 0 } };
	test_repo_commit(&f->t, f->c[1], NULL, "c1", p0, 1, e1, 1);
	const char *p1[] = { f->c[1] };
	struct test_edit e2[] = { { "torch/nn/_impl.py", M, impl_v2, 0 } };
	test_repo_commit(&f->t, f->c[2], NULL, "c2", p1, 1, e2, 1);
	const char *p2[] = { f->c[2] };
	struct test_edit e3[] = { { "aten/src/ATen/native/Ops.cpp", M, cpp_v2, 0 } };
	test_repo_commit(&f->t, f->c[3], NULL, "c3", p2, 1, e3, 1);
	const char *p3[] = { f->c[3] };
	struct test_edit e4[] = { { "setup.py", M, "x = 1\n", 0 } };
	test_repo_commit(&f->t, f->c[4], NULL, "c4", p3, 1, e4, 1);
	const char *p4[] = { f->c[4] };
	struct test_edit e5[] = {
		{ "torch/testing/_internal/common_methods_invocations.py", M,
		  "op_db = [\n    UnaryUfuncInfo('exp', x=1),\n    OpInfo('mul'),\n]\n"
		  "unary_ufuncs = [op for op in op_db if isinstance(op, UnaryUfuncInfo)]\n",
		  0 }
	};
	test_repo_commit(&f->t, f->c[5], NULL, "c5", p4, 1, e5, 1);
	const char *p5[] = { f->c[5] };
	struct test_edit e6[] = { { "docs/index.md", M, "hello\n", 0 } };
	test_repo_commit(&f->t, f->c[6], NULL, "c6", p5, 1, e6, 1);
	const char *p6[] = { f->c[6] };
	struct test_edit e7[] = { { "torch/nn/_impl.py", M, NULL, 0 } };
	test_repo_commit(&f->t, f->c[7], NULL, "c7", p6, 1, e7, 1);
}

Test(catalog, tests_and_native)
{
	struct fx f;
	build(&f);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *cat;
	cr_assert_eq(selector_catalog_build(&cat, f.t.dir, f.c[0], cache), 0, "%s", err_last());
	/* TestB(TestA) runs TestA's tests too: listed under TestB after its own. */
	const char *want[] = {
		"test/test_a.py::TestA::test_one",   "test/test_a.py::TestA::test_two",
		"test/test_a.py::TestB::test_three", "test/test_a.py::TestB::test_one",
		"test/test_a.py::TestB::test_two",   "test/test_a.py::TestD::test_u",
		"test/test_a.py::TestD::test_n",     "test/test_a.py::test_free"
	};
	cr_assert_eq(cat->n_tests, 8);
	for (size_t i = 0; i < 8; i++)
		cr_assert_str_eq(cat->tests[i].id, want[i]);
	cr_assert_eq(cat->tests[3].function, cat->tests[0].function, "TestA.test_one's def");
	cr_assert_eq(cat->tests[3].body_hash, cat->tests[0].body_hash);
	cr_assert_str_eq(cat->tests[3].class_name, "TestB");
	cr_assert(cat->tests[5].device_generic);
	cr_assert_not(cat->tests[0].device_generic);
	cr_assert_eq(cat->tests[5].opset, CATALOG_OPSET_UNARY);
	cr_assert_eq(cat->tests[6].opset, CATALOG_OPSET_NAMES);
	cr_assert_str_eq(cat->tests[6].op_names[0], "mul");
	cr_assert_eq(selector_catalog_test_runs_op(cat, &cat->tests[5], "exp"), 1);
	cr_assert_eq(selector_catalog_test_runs_op(cat, &cat->tests[5], "mul"), 0);
	const struct catalog_file *y =
	    selector_catalog_file(cat, "aten/src/ATen/native/native_functions.yaml");
	cr_assert_not_null(y);
	cr_assert_eq(y->blob->n_native_ops, 2);
	cr_assert_str_eq(y->blob->native_ops[1].op, "mul");
	cr_assert_eq(y->blob->native_ops[1].n_kernels, 1);
	cr_assert_str_eq(y->blob->native_ops[1].kernels[0], "mul_k");
	const struct catalog_file *k = selector_catalog_file(cat, "aten/src/ATen/native/Ops.cpp");
	cr_assert_eq(k->blob->n_kernels, 2);
	cr_assert_str_eq(k->blob->kernels[1].name, "mul_k");
	cr_assert_eq(k->blob->kernels[1].first_line, 5);
	cr_assert_eq(k->blob->kernels[1].last_line, 7);
	size_t scans = selector_catalog_cache_scans(cache);
	cr_assert_eq(scans, 6);
	struct catalog *cat2;
	cr_assert_eq(selector_catalog_build(&cat2, f.t.dir, f.c[2], cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_scans(cache), scans + 2, "only the two changed blobs");
	selector_catalog_destroy(cat2);
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&f.t);
}

Test(catalog, shared_by_tree)
{
	struct fx f;
	build(&f);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *a, *b, *c, *e1, *e2;
	cr_assert_eq(selector_catalog_build(&a, f.t.dir, f.c[0], cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&b, f.t.dir, f.c[0], cache), 0, "%s", err_last());
	cr_assert_eq(a, b, "the same tree: the same catalog");
	cr_assert_eq(selector_catalog_cache_tree_hits(cache), 1);
	selector_catalog_destroy(a); /* b (and the cache) still hold it */
	cr_assert_eq(b->n_tests, 8);
	cr_assert_eq(selector_catalog_build(&c, f.t.dir, f.c[2], cache), 0, "%s", err_last());
	cr_assert_neq(c, b);
	cr_assert_eq(selector_catalog_build(&e1, f.t.dir, NULL, cache), 0);
	cr_assert_eq(selector_catalog_build(&e2, f.t.dir, NULL, cache), 0);
	cr_assert_neq(e1, e2, "the empty tree is never shared");
	cr_assert_eq(selector_catalog_cache_tree_hits(cache), 1);
	/* Sharing off: the cache drops its references, a build walks its tree again. */
	selector_catalog_cache_set_trees(cache, 0);
	cr_assert_eq(selector_catalog_build(&a, f.t.dir, f.c[0], cache), 0, "%s", err_last());
	cr_assert_neq(a, b);
	cr_assert_eq(a->n_tests, b->n_tests);
	cr_assert_eq(selector_catalog_cache_tree_hits(cache), 1);
	/* Eviction keeps a catalog its caller still holds alive. */
	selector_catalog_cache_set_trees(cache, 1);
	struct catalog *d;
	for (int i = 1; i < 8; i++) {
		cr_assert_eq(selector_catalog_build(&d, f.t.dir, f.c[i], cache), 0, "%s",
			     err_last());
		selector_catalog_destroy(d);
	}
	cr_assert_eq(selector_catalog_build(&d, f.t.dir, f.c[7], cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_tree_hits(cache), 2);
	cr_assert_str_eq(c->tests[0].id, "test/test_a.py::TestA::test_one");
	selector_catalog_destroy(d);
	selector_catalog_destroy(a);
	selector_catalog_destroy(b);
	selector_catalog_destroy(c);
	selector_catalog_destroy(e1);
	selector_catalog_destroy(e2);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&f.t);
}

static void same_result(const struct impact_result *a, const struct impact_result *b)
{
	cr_assert_eq(a->fallback, b->fallback);
	cr_assert_eq(a->n_candidates, b->n_candidates);
	for (size_t i = 0; i < a->n_candidates; i++) {
		const struct impact_candidate *x = &a->candidates[i], *y = &b->candidates[i];
		cr_assert_str_eq(x->id, y->id);
		cr_assert_eq(x->score, y->score);
		cr_assert_eq(x->n_reasons, y->n_reasons);
		for (size_t k = 0; k < x->n_reasons; k++)
			cr_assert_str_eq(x->reasons[k].detail, y->reasons[k].detail);
	}
}

static void expect_cfg(struct fx *f, int from, const char *const *ids, size_t n, bool fallback,
		       const struct impact_config *cfg)
{
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *b, *h;
	struct change_set *cs;
	cr_assert_eq(selector_changes_from_git(&cs, f->t.dir, f->c[from], f->c[from + 1], NULL), 0);
	cr_assert_eq(selector_catalog_build(&b, f->t.dir, f->c[from], cache), 0);
	cr_assert_eq(selector_catalog_build(&h, f->t.dir, f->c[from + 1], cache), 0);
	struct impact_result *r;
	cr_assert_eq(selector_impact_run(&r, cs, b, h, cfg), 0, "%s", err_last());
	cr_assert_eq(r->fallback, fallback, "commit %d: %s", from + 1,
		     r->fallback_reason ? r->fallback_reason : "no fallback");
	if (!fallback) {
		cr_assert_eq(r->n_candidates, n, "commit %d: %zu candidates", from + 1,
			     r->n_candidates);
		for (size_t i = 0; i < n; i++)
			cr_assert_str_eq(r->candidates[i].id, ids[i]);
	} else {
		cr_assert_eq(r->n_candidates, h->n_tests);
	}
	/* Warm: the head rebuilt is the same shared catalog, and a second run over its kept call
	 * graph gives exactly the same candidates and reasons. */
	struct catalog *h2;
	cr_assert_eq(selector_catalog_build(&h2, f->t.dir, f->c[from + 1], cache), 0);
	cr_assert_eq(h2, h, "commit %d: the head catalog is shared by tree id", from + 1);
	struct impact_result *r2;
	cr_assert_eq(selector_impact_run(&r2, cs, b, h2, cfg), 0, "%s", err_last());
	same_result(r, r2);
	selector_impact_result_destroy(r2);
	selector_catalog_destroy(h2);
	selector_impact_result_destroy(r);
	selector_catalog_destroy(b);
	selector_catalog_destroy(h);
	selector_change_set_destroy(cs);
	selector_catalog_cache_destroy(cache);
}

static void expect(struct fx *f, int from, const char *const *ids, size_t n, bool fallback)
{
	expect_cfg(f, from, ids, n, fallback, NULL);
}

Test(impact, each_signal)
{
	struct fx f;
	build(&f);
	/* The test body edit: that test, and TestB's that inherits it. */
	const char *edited[] = { "test/test_a.py::TestA::test_one",
				 "test/test_a.py::TestB::test_one" };
	expect(&f, 0, edited, 2, false);
	const char *sym[] = { "test/test_a.py::TestA::test_one",
			      "test/test_a.py::TestB::test_one" };
	expect(&f, 1, sym, 2, false); /* _impl.inner <- functional.gelu <- test_one */
	const char *native[] = { "test/test_a.py::TestB::test_three",
				 "test/test_a.py::TestD::test_n" };
	expect(&f, 2, native, 2, false); /* mul_k -> mul -> x.mul(), @ops('mul') */
	expect(&f, 3, NULL, 0, true);    /* setup.py */
	const char *opdb_ids[] = { "test/test_a.py::TestD::test_u" };
	expect(&f, 4, opdb_ids, 1, false); /* UnaryUfuncInfo('exp') edited: @ops(unary_ufuncs) */
	expect(&f, 5, NULL, 0, false);     /* docs: nothing */
	expect(&f, 6, NULL, 0, true);      /* a deleted torch module */
	/* A path rule and a coverage map on the docs commit. */
	const char *ids[] = { "test/test_a.py::test_free" };
	struct impact_path_rule rule = { "docs/*", "*::TestA::*", NULL, 0, 0.5 };
	struct impact_config cfg = { .rules = &rule,
				     .n_rules = 1,
				     .coverage_json =
					 "{\"docs/index.md\": [\"test/test_a.py::test_free\", "
					 "\"test/gone.py::test_x\"]}" };
	const char *both[] = { "test/test_a.py::TestA::test_one", "test/test_a.py::TestA::test_two",
			       "test/test_a.py::test_free" };
	expect_cfg(&f, 5, both, 3, false, &cfg);
	cfg.n_rules = 0;
	expect_cfg(&f, 5, ids, 1, false, &cfg);
	/* A fallback list of our own: docs fall back; setup.py is not on it, but no signal reads
	 * it, so it still widens (only the reason differs). */
	const char *globs[] = { "docs/**" };
	struct impact_config fb = { .fallback_globs = globs, .n_fallback_globs = 1 };
	expect_cfg(&f, 5, NULL, 0, true, &fb);
	expect_cfg(&f, 3, NULL, 0, true, &fb);
	test_repo_destroy(&f.t);
}

/* Same tests, same facts: the catalog read back from the disk cache equals the scanned one. */
static void assert_same_catalog(const struct catalog *a, const struct catalog *b)
{
	cr_assert_eq(a->n_files, b->n_files);
	cr_assert_eq(a->n_tests, b->n_tests);
	for (size_t i = 0; i < a->n_tests; i++) {
		cr_assert_str_eq(a->tests[i].id, b->tests[i].id);
		cr_assert_eq(a->tests[i].body_hash, b->tests[i].body_hash);
		cr_assert_eq(a->tests[i].device_generic, b->tests[i].device_generic);
		cr_assert_eq(a->tests[i].opset, b->tests[i].opset);
		cr_assert_eq(a->tests[i].n_op_names, b->tests[i].n_op_names);
	}
	for (size_t i = 0; i < a->n_files; i++) {
		const struct catalog_blob *x = a->files[i].blob, *y = b->files[i].blob;
		cr_assert_eq(x->n_native_ops, y->n_native_ops);
		cr_assert_eq(x->n_kernels, y->n_kernels);
		for (size_t k = 0; k < x->n_kernels; k++) {
			cr_assert_str_eq(x->kernels[k].name, y->kernels[k].name);
			cr_assert_eq(x->kernels[k].hash, y->kernels[k].hash);
		}
		for (size_t k = 0; k < x->n_native_ops; k++) {
			cr_assert_str_eq(x->native_ops[k].func, y->native_ops[k].func);
			cr_assert_eq(x->native_ops[k].n_kernels, y->native_ops[k].n_kernels);
			cr_assert_eq(x->native_ops[k].hash, y->native_ops[k].hash);
		}
		cr_assert_eq(!x->scan, !y->scan);
		if (!x->scan)
			continue;
		cr_assert_eq(x->scan->module_hash, y->scan->module_hash);
		cr_assert_eq(x->scan->n_functions, y->scan->n_functions);
		cr_assert_eq(x->scan->n_imports, y->scan->n_imports);
		cr_assert_eq(x->scan->n_opinfos, y->scan->n_opinfos);
		cr_assert_eq(x->scan->n_globals, y->scan->n_globals);
		for (size_t k = 0; k < x->scan->n_globals; k++) {
			const struct scan_global *p = &x->scan->globals[k],
						 *q = &y->scan->globals[k];
			cr_assert_str_eq(p->name, q->name);
			cr_assert_eq(p->class_index, q->class_index);
			cr_assert_eq(p->n_uses, q->n_uses);
			for (size_t u = 0; u < p->n_uses; u++)
				cr_assert_str_eq(p->uses[u], q->uses[u]);
		}
		for (size_t k = 0; k < x->scan->n_functions; k++) {
			const struct scan_function *p = &x->scan->functions[k],
						   *q = &y->scan->functions[k];
			cr_assert_str_eq(p->qualname, q->qualname);
			cr_assert_eq(p->n_uses, q->n_uses);
			for (size_t u = 0; u < p->n_uses; u++)
				cr_assert_str_eq(p->uses[u], q->uses[u]);
			cr_assert_eq(p->n_decorators, q->n_decorators);
			cr_assert_eq(p->last_line, q->last_line);
		}
	}
}

Test(catalog, disk_cache_second_process_scans_only_changes)
{
	struct fx f;
	build(&f);
	char dir[300];
	snprintf(dir, sizeof dir, "%s/catcache", f.t.dir);
	struct catalog_cache *first, *second;
	struct catalog *a, *b, *b2;
	cr_assert_eq(selector_catalog_cache_create(&first, 0), 0);
	cr_assert_eq(selector_catalog_cache_set_dir(first, dir), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&a, f.t.dir, f.c[0], first), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_scans(first), 6);
	cr_assert_eq(selector_catalog_cache_disk_hits(first), 0);

	/* Another cache on the same directory: what a second `spyre-ci select` sees. */
	cr_assert_eq(selector_catalog_cache_create(&second, 0), 0);
	cr_assert_eq(selector_catalog_cache_set_dir(second, dir), 0);
	cr_assert_eq(selector_catalog_build(&b, f.t.dir, f.c[0], second), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_scans(second), 0, "everything came from the disk");
	cr_assert_eq(selector_catalog_cache_disk_hits(second), 6);
	assert_same_catalog(a, b);
	cr_assert_eq(selector_catalog_build(&b2, f.t.dir, f.c[2], second), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_scans(second), 2, "only the two changed blobs");
	selector_catalog_destroy(b2);
	selector_catalog_destroy(b);
	selector_catalog_cache_destroy(second);

	/* A damaged entry is a miss: scanned again, and the catalog is still right. */
	const struct catalog_file *t = selector_catalog_file(a, "test/test_a.py");
	cr_assert_not_null(t);
	char path[400];
	snprintf(path, sizeof path, "%s/%.2s/%s%d", dir, t->blob_id, t->blob_id + 2, CATALOG_TEST);
	FILE *fp = fopen(path, "r+b");
	cr_assert_not_null(fp, "%s", path);
	fseek(fp, 0, SEEK_END);
	long len = ftell(fp);
	cr_assert_eq(ftruncate(fileno(fp), len / 2), 0);
	fclose(fp);
	cr_assert_eq(selector_catalog_cache_create(&second, 0), 0);
	cr_assert_eq(selector_catalog_cache_set_dir(second, dir), 0);
	cr_assert_eq(selector_catalog_build(&b, f.t.dir, f.c[0], second), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_scans(second), 1, "the damaged entry only");
	assert_same_catalog(a, b);
	selector_catalog_destroy(b);
	selector_catalog_cache_destroy(second);
	selector_catalog_destroy(a);
	selector_catalog_cache_destroy(first);
	test_repo_destroy(&f.t);
}

/* Consecutive commits through one cache (each base the previous head, with its call graph,
 * shared when the sources did not change) select exactly what a fresh cache selects. */
Test(catalog, warm_chain_same_as_cold)
{
	struct fx f;
	build(&f);
	struct catalog_cache *warm;
	cr_assert_eq(selector_catalog_cache_create(&warm, 0), 0);
	for (int from = 0; from < 7; from++) {
		struct change_set *cs;
		cr_assert_eq(
		    selector_changes_from_git(&cs, f.t.dir, f.c[from], f.c[from + 1], NULL), 0);
		struct impact_result *r[2];
		struct catalog *h[2];
		struct catalog_cache *cold = NULL;
		cr_assert_eq(selector_catalog_cache_create(&cold, 0), 0);
		for (int k = 0; k < 2; k++) {
			struct catalog_cache *c = k ? cold : warm;
			struct catalog *b;
			cr_assert_eq(selector_catalog_build(&b, f.t.dir, f.c[from], c), 0);
			cr_assert_eq(selector_catalog_build(&h[k], f.t.dir, f.c[from + 1], c), 0);
			cr_assert_eq(selector_impact_run(&r[k], cs, b, h[k], NULL), 0, "%s",
				     err_last());
			selector_catalog_destroy(b);
		}
		same_result(r[0], r[1]);
		for (int k = 0; k < 2; k++) {
			selector_impact_result_destroy(r[k]); /* its ids are the head's */
			selector_catalog_destroy(h[k]);
		}
		selector_catalog_cache_destroy(cold);
		selector_change_set_destroy(cs);
	}
	cr_assert_geq(selector_catalog_cache_tree_hits(warm), 6, "each base was the last head");
	selector_catalog_cache_destroy(warm);
	test_repo_destroy(&f.t);
}

/* Inherited tests: a test class runs the test methods of the classes of its file it derives
 * from (overridden by name, through chains, mixins too), under its own name and flags. */
static const char *inherit_v1 =
    "from torch.testing._internal.common_utils import TestCase\n"
    "class Mixin:\n    def test_mix(self):\n        m = 1\n    def test_mix(self):\n"
    "        m = 2\n    def helper(self):\n        pass\n"
    "class TestA(TestCase):\n    def test_x(self):\n        a = 1\n"
    "    def test_y(self):\n        b = 1\n"
    "class TestB(TestA):\n    def test_y(self):\n        c = 1\n"
    "class TestC(TestB, Mixin):\n    pass\n"
    "class TestDev(TestA):\n    @onlyCPU\n    def test_d(self, device):\n        pass\n"
    "class TestEarly(TestLate):\n    def test_e(self):\n        pass\n"
    "class TestLate(TestCase):\n    def test_l(self):\n        pass\n"
    "class TestOther(other.TestCase):\n    def test_o(self):\n        pass\n"
    "class TestR(TestCase):\n    def test_r1(self):\n        pass\n"
    "class TestR(TestR):\n    def test_r2(self):\n        pass\n"
    "class TestTwice(TestCase):\n    def test_t(self):\n        pass\n"
    "    def test_t(self):\n        return 2\n"
    "instantiate_device_type_tests(TestDev, globals())\n";
static const char *inherit_v2_base = /* TestA.test_x's body */
    "from torch.testing._internal.common_utils import TestCase\n"
    "class Mixin:\n    def test_mix(self):\n        m = 1\n    def test_mix(self):\n"
    "        m = 2\n    def helper(self):\n        pass\n"
    "class TestA(TestCase):\n    def test_x(self):\n        a = 2\n"
    "    def test_y(self):\n        b = 1\n"
    "class TestB(TestA):\n    def test_y(self):\n        c = 1\n"
    "class TestC(TestB, Mixin):\n    pass\n"
    "class TestDev(TestA):\n    @onlyCPU\n    def test_d(self, device):\n        pass\n"
    "class TestEarly(TestLate):\n    def test_e(self):\n        pass\n"
    "class TestLate(TestCase):\n    def test_l(self):\n        pass\n"
    "class TestOther(other.TestCase):\n    def test_o(self):\n        pass\n"
    "class TestR(TestCase):\n    def test_r1(self):\n        pass\n"
    "class TestR(TestR):\n    def test_r2(self):\n        pass\n"
    "class TestTwice(TestCase):\n    def test_t(self):\n        pass\n"
    "    def test_t(self):\n        return 2\n"
    "instantiate_device_type_tests(TestDev, globals())\n";

static void build_inherit(struct fx *f)
{
	test_repo_create(&f->t);
	/* A chain of 20 classes, each deriving from the one before, for the depth bound. */
	static char fixed[4096];
	size_t m = (size_t)snprintf(fixed, sizeof(fixed), "%s", inherit_v1);
	for (int k = 0; k < 20 && m < sizeof(fixed); k++) {
		char base[16] = "TestCase";
		if (k)
			snprintf(base, sizeof(base), "T%d", k - 1);
		m += (size_t)snprintf(fixed + m, sizeof(fixed) - m,
				      "class T%d(%s):\n    def test_%d(self):\n        pass\n", k,
				      base, k);
	}
	cr_assert_lt(m, sizeof(fixed));
	struct test_edit e0[] = { { "test/test_inherit.py", M, fixed, 0 } };
	test_repo_commit(&f->t, f->c[0], NULL, "c0", NULL, 0, e0, 1);
	const char *p0[] = { f->c[0] };
	static char edited[4096];
	snprintf(edited, sizeof(edited), "%s%s", inherit_v2_base, fixed + strlen(inherit_v1));
	struct test_edit e1[] = { { "test/test_inherit.py", M, edited, 0 } };
	test_repo_commit(&f->t, f->c[1], NULL, "c1", p0, 1, e1, 1);
	const char *p1[] = { f->c[1] };
	static char edited2[4096];
	snprintf(edited2, sizeof(edited2), "%s", edited);
	char *c1 = strstr(edited2, "c = 1");
	cr_assert_not_null(c1);
	c1[4] = '2'; /* TestB.test_y's body */
	struct test_edit e2[] = { { "test/test_inherit.py", M, edited2, 0 } };
	test_repo_commit(&f->t, f->c[2], NULL, "c2", p1, 1, e2, 1);
}

static const struct catalog_test *test_of(const struct catalog *cat, const char *cls,
					  const char *name)
{
	char id[128];
	snprintf(id, sizeof(id), "test/test_inherit.py::%s::%s", cls, name);
	return selector_catalog_test(cat, id);
}

Test(catalog, inherited_tests)
{
	struct fx f;
	build_inherit(&f);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *cat;
	cr_assert_eq(selector_catalog_build(&cat, f.t.dir, f.c[0], cache), 0, "%s", err_last());
	static const char *const want[] = {
		"TestA::test_x",     "TestA::test_y",   "TestB::test_y",     "TestB::test_x",
		"TestC::test_y",     "TestC::test_x",   "TestC::test_mix",   "TestDev::test_d",
		"TestDev::test_x",   "TestDev::test_y", "TestEarly::test_e", "TestLate::test_l",
		"TestOther::test_o", "TestR::test_r2",  "TestR::test_r1",    "TestTwice::test_t",
	};
	size_t nw = sizeof(want) / sizeof(want[0]);
	cr_assert_geq(cat->n_tests, nw);
	for (size_t i = 0; i < nw; i++)
		cr_assert(strstr(cat->tests[i].id, want[i]) && strchr(want[i], ':') &&
			      strcmp(strstr(cat->tests[i].id, "::") + 2, want[i]) == 0,
			  "test %zu: %s, want %s", i, cat->tests[i].id, want[i]);
	/* overriding by name: TestC runs TestB's test_y, not TestA's */
	cr_assert_eq(test_of(cat, "TestC", "test_y")->body_hash,
		     test_of(cat, "TestB", "test_y")->body_hash);
	cr_assert_neq(test_of(cat, "TestC", "test_y")->body_hash,
		      test_of(cat, "TestA", "test_y")->body_hash);
	/* a mixin defining test_mix twice: the second definition */
	const struct scan_file *sf = cat->files[cat->tests[0].file].blob->scan;
	const struct catalog_test *mix = test_of(cat, "TestC", "test_mix");
	cr_assert_eq(sf->functions[mix->function].first_line, 5);
	cr_assert_null(test_of(cat, "Mixin", "test_mix"), "a mixin alone is no test class");
	/* the subclass's flags, the inherited method's decorators */
	cr_assert(test_of(cat, "TestDev", "test_x")->device_generic);
	cr_assert_not(test_of(cat, "TestA", "test_x")->device_generic);
	/* a base defined later (a NameError in Python) is not followed */
	cr_assert_null(test_of(cat, "TestEarly", "test_l"));
	/* a redefined class shadows the first: TestR runs test_r2 and, inherited, test_r1 once */
	cr_assert_str_eq(cat->tests[16].id, "test/test_inherit.py::T0::test_0");
	/* a test defined twice in a class is one test, the last definition */
	const struct catalog_test *twice = test_of(cat, "TestTwice", "test_t");
	cr_assert_not_null(twice);
	cr_assert_eq(sf->functions[twice->function].first_line, 41);
	size_t n_twice = 0;
	for (size_t i = 0; i < cat->n_tests; i++)
		n_twice += strstr(cat->tests[i].id, "::TestTwice::") != NULL;
	cr_assert_eq(n_twice, 1);
	/* the chain of 20: T19 inherits from its INHERIT_DEPTH_MAX (16) nearest ancestors */
	size_t t19 = 0;
	for (size_t i = 0; i < cat->n_tests; i++)
		t19 += strstr(cat->tests[i].id, "::T19::") != NULL;
	cr_assert_eq(t19, 17, "its own test and 16 inherited, got %zu", t19);
	cr_assert_not_null(test_of(cat, "T19", "test_3"));
	cr_assert_null(test_of(cat, "T19", "test_2"));
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&f.t);
}

/* Stage 2: an edit of an inherited method selects the subclasses that run it; an override's
 * edit selects the subclasses that inherit the override, not the base class. */
Test(impact, inherited_test_edited)
{
	struct fx f;
	build_inherit(&f);
	const char *x[] = {
		"test/test_inherit.py::TestA::test_x",
		"test/test_inherit.py::TestB::test_x",
		"test/test_inherit.py::TestC::test_x",
		"test/test_inherit.py::TestDev::test_x",
	};
	expect(&f, 0, x, 4, false);
	const char *y[] = { "test/test_inherit.py::TestB::test_y",
			    "test/test_inherit.py::TestC::test_y" };
	expect(&f, 1, y, 2, false);
	test_repo_destroy(&f.t);
}

/* The id index is built from each file's tests in id order, files in path order: a path that
 * is a proper prefix of another ("test/test_p.py" and "test/test_p.py.py") sorts its ids
 * after the longer path's (':' > '.'), and every id must still be found; derived and walked
 * catalogs agree. */
Test(catalog, ids_found_when_a_path_prefixes_another)
{
	struct test_repo t;
	test_repo_create(&t);
	const char *body = "class TestP(TestCase):\n    def test_a(self):\n        pass\n"
			   "    def test_b(self):\n        pass\n";
	const struct test_edit e[] = {
		{ "test/test_p.py", 0100644, body, 0 },
		{ "test/test_p.py.py", 0100644, body, 0 },
		{ "test/test_z.py", 0100644, body, 0 },
	};
	char c0[41], c1[41];
	test_repo_commit(&t, c0, NULL, "c0", NULL, 0, e, 3);
	const char *p0[] = { c0 };
	const struct test_edit e1[] = { { "test/test_z.py", 0100644, "def test_z():\n    pass\n",
					  0 } };
	test_repo_commit(&t, c1, NULL, "c1", p0, 1, e1, 1);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	for (int k = 0; k < 2; k++) {
		struct catalog *cat;
		cr_assert_eq(selector_catalog_build(&cat, t.dir, k ? c1 : c0, cache), 0, "%s",
			     err_last());
		cr_assert_eq(cat->n_tests, k ? 5 : 6);
		for (size_t i = 0; i < cat->n_tests; i++)
			cr_assert(selector_catalog_test(cat, cat->tests[i].id) == &cat->tests[i],
				  "%s not found", cat->tests[i].id);
		cr_assert_null(selector_catalog_test(cat, "test/test_p.py::TestP::test_c"));
		selector_catalog_destroy(cat);
	}
	cr_assert_eq(selector_catalog_cache_derived(cache), 1);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&t);
}

/* A catalog made from another by overrides: a file replaced by an abbreviated blob id, one left
 * out, one added, one whose blob the repository lacks (left out, counted, marked not found);
 * files that are of no interest are ignored. */
Test(catalog, overrides_replace_remove_and_count_missing)
{
	struct test_repo t;
	test_repo_create(&t);
	const char *v1 = "class TestP(TestCase):\n    def test_a(self):\n        pass\n";
	const char *v2 = "class TestP(TestCase):\n    def test_a(self):\n        pass\n"
			 "    def test_b(self):\n        pass\n";
	const struct test_edit e0[] = {
		{ "test/test_p.py", 0100644, v1, 0 },
		{ "test/test_q.py", 0100644, v1, 0 },
	};
	const struct test_edit e1[] = { { "test/test_p.py", 0100644, v2, 0 },
					{ "test/test_r.py", 0100644, v1, 0 } };
	char c0[41], c1[41];
	test_repo_commit(&t, c0, NULL, "c0", NULL, 0, e0, 2);
	const char *p0[] = { c0 };
	test_repo_commit(&t, c1, NULL, "c1", p0, 1, e1, 2);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *base, *head, *made;
	cr_assert_eq(selector_catalog_build(&base, t.dir, c0, cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&head, t.dir, c1, cache), 0, "%s", err_last());
	char abbrev[8];
	snprintf(abbrev, sizeof abbrev, "%.7s",
		 selector_catalog_file(head, "test/test_p.py")->blob_id);
	struct catalog_override ov[] = {
		{ "test/test_p.py", abbrev, false }, /* v2 by an abbreviation */
		{ "test/test_q.py", NULL, false },   /* left out */
		{ "test/test_r.py", "0000000", false },
		{ "test/test_s.py", "1234567", false }, /* not in the repository */
		{ "README.md", "1234567", false },      /* of no interest */
	};
	size_t missing = 99;
	cr_assert_eq(selector_catalog_build_overrides(&made, t.dir, base, ov, 5, cache, &missing),
		     0, "%s", err_last());
	cr_assert_eq(missing, 1);
	cr_assert(ov[0].found && ov[1].found && ov[2].found && !ov[3].found && ov[4].found);
	cr_assert_eq(made->n_files, 1, "%zu files", made->n_files);
	cr_assert_eq(made->n_tests, 2);
	cr_assert_not_null(selector_catalog_test(made, "test/test_p.py::TestP::test_b"));
	cr_assert_null(selector_catalog_test(made, "test/test_q.py::TestP::test_a"));
	selector_catalog_destroy(made);
	selector_catalog_destroy(base);
	selector_catalog_destroy(head);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&t);
}
