/* Stage 2 follows the ways a real test reaches torch/ beyond its own body, each in a tiny
 * hand-written upstream: module-level helpers of the test file (through another helper),
 * helpers of torch/testing/_internal, aliased imports (`from m import f as g`, `import m as M`),
 * names re-exported by torch/__init__.py under another name, helper methods (`self._check`,
 * `cls.x`, `super().x`), methods of a mixin, of an in-file base and of a base imported from
 * torch/testing/_internal, decorators (of the file and imported), `functools.partial`, lambdas
 * in a table, module-level lists of callables, nested functions; and it widens, saying so, where
 * a name is computed (`getattr(torch.special, name)`, `exec`, `importlib.import_module`). Each
 * commit changes one torch/ function: the tests selected in the shapes file must be exactly the
 * ones that reach it, and the first one's reason (what `--explain` prints) is a golden chain.
 * Every commit is run twice (a cold cache, then the head catalog and graph kept), and the two
 * results must be equal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"

#define M   CHANGE_MODE_FILE
#define T   "test/test_shapes.py::TestShapes::"
#define TI  "test/test_shapes.py::TestImported::"
#define DYN "test/test_dynamic.py::TestDynamic::"

/* The functions of torch/a/ops.py, one per shape, each changed by one commit. */
static const char *const ops_fns[] = {
	"s_helper", "s_internal", "s_method", "s_cls",      "s_inherit", "s_mixin",
	"s_deco",   "s_ideco",    "s_part",   "s_part_mod", "s_lambda",  "s_list",
	"s_nested", "s_base",     "s_setup",  "s_kw",       "s_sample",  "s_oplambda",
};
#define N_OPS (sizeof(ops_fns) / sizeof(*ops_fns))

static const char *test_shapes =
    "import functools\n"
    "from functools import partial\n"
    "import torch\n"
    "import torch.a.ops\n"
    "from torch.special.m193 import f5 as m193_f5\n"
    "import torch._prims.m204 as M_prims_m204\n"
    "from torch.testing._internal.common_helpers import run_helper, deco_internal\n"
    "from torch.testing._internal import common_helpers\n"
    "from torch.testing._internal.common_utils import TestCase\n"
    "\n"
    "def _helper_x(x):\n"
    "    return _helper_y(x)\n"
    "\n"
    "def _helper_y(x):\n"
    "    return torch.a.ops.s_helper(x)\n"
    "\n"
    "def _deco(fn):\n"
    "    def wrapper(*args):\n"
    "        torch.a.ops.s_deco(0)\n"
    "        return fn(*args)\n"
    "    return wrapper\n"
    "\n"
    "_FNS = [torch.a.ops.s_list]\n"
    "OPS = {\n"
    "    'x': lambda x: torch.a.ops.s_lambda(x),\n"
    "}\n"
    "_PART = partial(torch.a.ops.s_part_mod, 1)\n"
    "\n"
    "class Mixin:\n"
    "    def _mixin_helper(self, x):\n"
    "        return torch.a.ops.s_mixin(x)\n"
    "\n"
    "class Base(TestCase):\n"
    "    def setUp(self):\n"
    "        torch.a.ops.s_setup(0)\n"
    "\n"
    "    def _base_helper(self, x):\n"
    "        return torch.a.ops.s_inherit(x)\n"
    "\n"
    "class TestShapes(Mixin, Base):\n"
    "    def _check(self, x):\n"
    "        return torch.a.ops.s_method(x)\n"
    "\n"
    "    @classmethod\n"
    "    def _cls_helper(cls, x):\n"
    "        return torch.a.ops.s_cls(x)\n"
    "\n"
    "    def test_helper(self):\n"
    "        _helper_x(1)\n"
    "\n"
    "    def test_internal_helper(self):\n"
    "        run_helper(1)\n"
    "\n"
    "    def test_alias_from(self):\n"
    "        m193_f5(1)\n"
    "\n"
    "    def test_alias_module(self):\n"
    "        M_prims_m204.f3(1)\n"
    "\n"
    "    def test_reexport(self):\n"
    "        torch.api_36(1)\n"
    "\n"
    "    def test_method(self):\n"
    "        self.assertEqual(self._check(1), 1)\n"
    "\n"
    "    def test_cls(self):\n"
    "        type(self)._cls_helper(1)\n"
    "\n"
    "    def test_inherited(self):\n"
    "        self._base_helper(1)\n"
    "\n"
    "    def test_super(self):\n"
    "        super()._base_helper(1)\n"
    "\n"
    "    def test_mixin(self):\n"
    "        self._mixin_helper(1)\n"
    "\n"
    "    @_deco\n"
    "    def test_decorator(self):\n"
    "        pass\n"
    "\n"
    "    @deco_internal\n"
    "    def test_decorator_internal(self):\n"
    "        pass\n"
    "\n"
    "    def test_partial(self):\n"
    "        functools.partial(torch.a.ops.s_part, 2)()\n"
    "\n"
    "    def test_partial_module(self):\n"
    "        _PART()\n"
    "\n"
    "    def test_lambda_table(self):\n"
    "        OPS['x'](1)\n"
    "\n"
    "    def test_list(self):\n"
    "        for f in _FNS:\n"
    "            f(1)\n"
    "\n"
    "    def test_nested(self):\n"
    "        def inner(x):\n"
    "            return torch.a.ops.s_nested(x)\n"
    "        inner(1)\n"
    "\n"
    "    def test_kwarg(self):\n"
    "        self._run(fn=torch.a.ops.s_kw)\n"
    "\n"
    "class TestImported(common_helpers.CommonBase, TestCase):\n"
    "    def test_base_imported(self):\n"
    "        self._check_base(1)\n";

static const char *test_dynamic = "import importlib\n"
				  "import torch\n"
				  "import torch.special\n"
				  "from torch.testing._internal.common_utils import TestCase\n"
				  "\n"
				  "class TestDynamic(TestCase):\n"
				  "    def test_getattr(self):\n"
				  "        name = 'f' + '5'\n"
				  "        getattr(torch.special, name)(1)\n"
				  "\n"
				  "    def test_getattr_literal(self):\n"
				  "        getattr(torch._prims.m204, 'f3')(1)\n"
				  "\n"
				  "    def test_exec(self):\n"
				  "        exec('torch.a.ops.s_helper(1)')\n"
				  "\n"
				  "    def test_import_module(self):\n"
				  "        importlib.import_module('torch._refs.m245').f4(1)\n"
				  "\n"
				  "    def test_plain(self):\n"
				  "        torch.nothing_changes(1)\n";

static const char *common_helpers = "import torch.a.ops\n"
				    "def run_helper(x):\n"
				    "    return torch.a.ops.s_internal(x)\n"
				    "def deco_internal(fn):\n"
				    "    torch.a.ops.s_ideco(1)\n"
				    "    return fn\n"
				    "class CommonBase:\n"
				    "    def _check_base(self, x):\n"
				    "        return torch.a.ops.s_base(x)\n";

static const char *cmi = "import torch.a.ops\n"
			 "def sample_inputs_foo(op_info, device, dtype, requires_grad):\n"
			 "    return [torch.a.ops.s_sample(1)]\n"
			 "op_db = [\n"
			 "    OpInfo('foo', op=lambda x: torch.a.ops.s_oplambda(x),\n"
			 "           sample_inputs_func=sample_inputs_foo),\n"
			 "    OpInfo('bar'),\n"
			 "]\n";

static const char *test_opdb =
    "from torch.testing._internal.common_utils import TestCase\n"
    "from torch.testing._internal.common_methods_invocations import op_db\n"
    "from torch.testing._internal.common_device_type import ops\n"
    "\n"
    "class TestOpdb(TestCase):\n"
    "    @ops([op for op in op_db if op.name in ('foo',)])\n"
    "    def test_foo(self, device, dtype, op):\n"
    "        op(1)\n"
    "\n"
    "    @ops([op for op in op_db if op.name in ('bar',)])\n"
    "    def test_bar(self, device, dtype, op):\n"
    "        op(1)\n";

/* torch/a/ops.py with function `changed` (or none) returning x + 1. */
static char *ops_source(const char *changed)
{
	static char buf[4096];
	size_t w = 0;
	for (size_t i = 0; i < N_OPS; i++)
		w += (size_t)snprintf(buf + w, sizeof(buf) - w, "def %s(x):\n    return x%s\n",
				      ops_fns[i],
				      changed && strcmp(changed, ops_fns[i]) == 0 ? " + 1" : "");
	return buf;
}

static const char *fn_source(const char *name, bool changed)
{
	static char buf[128];
	snprintf(buf, sizeof(buf), "def %s(x):\n    return x%s\n", name, changed ? " * 2" : "");
	return buf;
}

struct shapes {
	struct test_repo t;
	char base[41];
};

static void build(struct shapes *s)
{
	test_repo_create(&s->t);
	char f5[128], f3[128], f4[128];
	snprintf(f5, sizeof(f5), "%s", fn_source("f5", false));
	snprintf(f3, sizeof(f3), "%s", fn_source("f3", false));
	snprintf(f4, sizeof(f4), "%s", fn_source("f4", false));
	struct test_edit e[] = {
		{ "torch/__init__.py", M, "from torch._refs.m245 import f4 as api_36\n", 0 },
		{ "torch/a/__init__.py", M, "", 0 },
		{ "torch/a/ops.py", M, ops_source(NULL), 0 },
		{ "torch/special/m193.py", M, f5, 0 },
		{ "torch/_prims/m204.py", M, f3, 0 },
		{ "torch/_refs/m245.py", M, f4, 0 },
		{ "torch/testing/_internal/common_helpers.py", M, common_helpers, 0 },
		{ "test/test_shapes.py", M, test_shapes, 0 },
		{ "test/test_dynamic.py", M, test_dynamic, 0 },
		{ "torch/testing/_internal/common_methods_invocations.py", M, cmi, 0 },
		{ "test/test_opdb.py", M, test_opdb, 0 },
	};
	test_repo_commit(&s->t, s->base, "refs/heads/main", "base", NULL, 0, e,
			 sizeof(e) / sizeof(*e));
}

static void same_result(const struct impact_result *a, const struct impact_result *b)
{
	cr_assert_eq(a->n_candidates, b->n_candidates);
	for (size_t i = 0; i < a->n_candidates; i++) {
		cr_assert_str_eq(a->candidates[i].id, b->candidates[i].id);
		cr_assert_eq(a->candidates[i].n_reasons, b->candidates[i].n_reasons);
		for (size_t k = 0; k < a->candidates[i].n_reasons; k++)
			cr_assert_str_eq(a->candidates[i].reasons[k].detail,
					 b->candidates[i].reasons[k].detail);
	}
}

static enum impact_signal golden_signal = IMPACT_SYMBOL; /* whose reason is the golden one */

static const char *symbol_reason(const struct impact_result *r, const char *id)
{
	for (size_t i = 0; i < r->n_candidates; i++)
		if (strcmp(r->candidates[i].id, id) == 0)
			for (size_t k = 0; k < r->candidates[i].n_reasons; k++)
				if (r->candidates[i].reasons[k].signal == golden_signal)
					return r->candidates[i].reasons[k].detail;
	return NULL;
}

/* One commit on the base that writes `path` with `content`; the candidates of the file of
 * `want[0]` must be exactly `want` (sorted), and want[0]'s symbol reason `golden`. */
static void expect(struct shapes *s, const char *path, const char *content, const char *const *want,
		   size_t n, const char *golden)
{
	char head[41];
	const char *parents[] = { s->base };
	struct test_edit e[] = { { path, M, content, 0 } };
	test_repo_commit(&s->t, head, NULL, path, parents, 1, e, 1);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct change_set *cs;
	cr_assert_eq(selector_changes_from_git(&cs, s->t.dir, s->base, head, NULL), 0, "%s",
		     err_last());
	struct catalog *b, *h, *h2;
	cr_assert_eq(selector_catalog_build(&b, s->t.dir, s->base, cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&h, s->t.dir, head, cache), 0, "%s", err_last());
	struct impact_result *r, *r2;
	cr_assert_eq(selector_impact_run(&r, cs, b, h, NULL), 0, "%s", err_last());
	cr_assert_not(r->fallback, "%s: fallback %s", path, r->fallback_reason);
	const char *file_end = strstr(want[0], "::");
	size_t flen = (size_t)(file_end - want[0]);
	size_t got = 0;
	for (size_t i = 0; i < r->n_candidates; i++) {
		const char *id = r->candidates[i].id;
		if (strncmp(id, want[0], flen) != 0 || id[flen] != ':')
			continue;
		cr_assert(got < n, "%s: %s selected too", path, id);
		cr_assert_str_eq(id, want[got], "%s: candidate %zu", path, got);
		got++;
	}
	cr_assert_eq(got, n, "%s: %zu of %zu selected (%s first missing)", path, got, n,
		     want[got < n ? got : 0]);
	const char *why = symbol_reason(r, want[0]);
	cr_assert_not_null(why, "%s: no symbol reason for %s", path, want[0]);
	cr_assert_str_eq(why, golden, "%s", path);
	/* Warm: the head catalog and its graph kept, the same answer. */
	cr_assert_eq(selector_catalog_build(&h2, s->t.dir, head, cache), 0);
	cr_assert_eq(selector_impact_run(&r2, cs, b, h2, NULL), 0, "%s", err_last());
	same_result(r, r2);
	selector_impact_result_destroy(r);
	selector_impact_result_destroy(r2);
	selector_catalog_destroy(b);
	selector_catalog_destroy(h);
	selector_catalog_destroy(h2);
	selector_change_set_destroy(cs);
	selector_catalog_cache_destroy(cache);
}

static void expect_op(struct shapes *s, const char *fn, const char *const *want, size_t n,
		      const char *golden)
{
	expect(s, "torch/a/ops.py", ops_source(fn), want, n, golden);
}

Test(impact_shapes, module_level_helpers_and_internal_helpers)
{
	struct shapes s;
	build(&s);
	const char *h[] = { T "test_helper" };
	expect_op(&s, "s_helper", h, 1,
		  T "test_helper -> _helper_x (test/test_shapes.py) -> _helper_y "
		    "(test/test_shapes.py) -> torch.a.ops.s_helper (changed)");
	const char *in[] = { T "test_internal_helper" };
	expect_op(&s, "s_internal", in, 1,
		  T "test_internal_helper -> torch.testing._internal.common_helpers.run_helper -> "
		    "torch.a.ops.s_internal (changed)");
	test_repo_destroy(&s.t);
}

Test(impact_shapes, aliases_and_reexports)
{
	struct shapes s;
	build(&s);
	const char *f[] = { T "test_alias_from" };
	expect(&s, "torch/special/m193.py", fn_source("f5", true), f, 1,
	       T "test_alias_from -> torch.special.m193.f5 (changed)");
	const char *m[] = { T "test_alias_module" };
	expect(&s, "torch/_prims/m204.py", fn_source("f3", true), m, 1,
	       T "test_alias_module -> torch._prims.m204.f3 (changed)");
	const char *r[] = { T "test_reexport" };
	expect(&s, "torch/_refs/m245.py", fn_source("f4", true), r, 1,
	       T "test_reexport -> torch._refs.m245.f4 (changed)");
	test_repo_destroy(&s.t);
}

Test(impact_shapes, methods_bases_and_mixins)
{
	struct shapes s;
	build(&s);
	const char *me[] = { T "test_method" };
	expect_op(&s, "s_method", me, 1,
		  T "test_method -> TestShapes._check (test/test_shapes.py) -> "
		    "torch.a.ops.s_method (changed)");
	const char *c[] = { T "test_cls" };
	expect_op(&s, "s_cls", c, 1,
		  T "test_cls -> TestShapes._cls_helper (test/test_shapes.py) -> "
		    "torch.a.ops.s_cls (changed)");
	const char *in[] = { T "test_inherited", T "test_super" };
	expect_op(&s, "s_inherit", in, 2,
		  T "test_inherited -> Base._base_helper (test/test_shapes.py) -> "
		    "torch.a.ops.s_inherit (changed)");
	const char *mx[] = { T "test_mixin" };
	expect_op(&s, "s_mixin", mx, 1,
		  T "test_mixin -> Mixin._mixin_helper (test/test_shapes.py) -> "
		    "torch.a.ops.s_mixin (changed)");
	/* a fixture of an in-file base runs before every test of the class */
	const char *su[] = { T "test_alias_from",
			     T "test_alias_module",
			     T "test_cls",
			     T "test_decorator",
			     T "test_decorator_internal",
			     T "test_helper",
			     T "test_inherited",
			     T "test_internal_helper",
			     T "test_kwarg",
			     T "test_lambda_table",
			     T "test_list",
			     T "test_method",
			     T "test_mixin",
			     T "test_nested",
			     T "test_partial",
			     T "test_partial_module",
			     T "test_reexport",
			     T "test_super" };
	expect_op(&s, "s_setup", su, 18,
		  T "test_alias_from -> Base.setUp (test/test_shapes.py) -> "
		    "torch.a.ops.s_setup (changed)");
	const char *b[] = { TI "test_base_imported" };
	expect_op(&s, "s_base", b, 1,
		  TI "test_base_imported -> "
		     "torch.testing._internal.common_helpers.CommonBase._check_base -> "
		     "torch.a.ops.s_base (changed)");
	test_repo_destroy(&s.t);
}

Test(impact_shapes, decorators_partials_tables_nested)
{
	struct shapes s;
	build(&s);
	const char *d[] = { T "test_decorator" };
	expect_op(&s, "s_deco", d, 1,
		  T
		  "test_decorator -> _deco (test/test_shapes.py) -> torch.a.ops.s_deco (changed)");
	const char *di[] = { T "test_decorator_internal" };
	expect_op(&s, "s_ideco", di, 1,
		  T "test_decorator_internal -> "
		    "torch.testing._internal.common_helpers.deco_internal -> "
		    "torch.a.ops.s_ideco (changed)");
	const char *p[] = { T "test_partial" };
	expect_op(&s, "s_part", p, 1, T "test_partial -> torch.a.ops.s_part (changed)");
	const char *pm[] = { T "test_partial_module" };
	expect_op(&s, "s_part_mod", pm, 1,
		  T "test_partial_module -> _PART (test/test_shapes.py) -> "
		    "torch.a.ops.s_part_mod (changed)");
	const char *l[] = { T "test_lambda_table" };
	expect_op(&s, "s_lambda", l, 1,
		  T "test_lambda_table -> OPS (test/test_shapes.py) -> "
		    "torch.a.ops.s_lambda (changed)");
	const char *li[] = { T "test_list" };
	expect_op(&s, "s_list", li, 1,
		  T "test_list -> _FNS (test/test_shapes.py) -> torch.a.ops.s_list (changed)");
	const char *n[] = { T "test_nested" };
	expect_op(&s, "s_nested", n, 1, T "test_nested -> torch.a.ops.s_nested (changed)");
	const char *k[] = { T "test_kwarg" };
	expect_op(&s, "s_kw", k, 1, T "test_kwarg -> torch.a.ops.s_kw (changed)");
	test_repo_destroy(&s.t);
}

Test(impact_shapes, helper_of_the_test_file_changed)
{
	struct shapes s;
	build(&s);
	/* _helper_y edited: test_helper reaches it through _helper_x. */
	char *edited = strdup(test_shapes);
	cr_assert_not_null(edited);
	char *at = strstr(edited, "torch.a.ops.s_helper(x)");
	cr_assert_not_null(at);
	memcpy(at, "torch.a.ops.s_method(x)", strlen("torch.a.ops.s_method(x)"));
	char head[41];
	const char *parents[] = { s.base };
	struct test_edit e[] = { { "test/test_shapes.py", M, edited, 0 } };
	test_repo_commit(&s.t, head, NULL, "helper", parents, 1, e, 1);
	struct change_set *cs;
	cr_assert_eq(selector_changes_from_git(&cs, s.t.dir, s.base, head, NULL), 0);
	struct catalog_cache *cache;
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	struct catalog *b, *h;
	cr_assert_eq(selector_catalog_build(&b, s.t.dir, s.base, cache), 0);
	cr_assert_eq(selector_catalog_build(&h, s.t.dir, head, cache), 0);
	struct impact_result *r;
	cr_assert_eq(selector_impact_run(&r, cs, b, h, NULL), 0, "%s", err_last());
	cr_assert_eq(r->n_candidates, 1, "%zu candidates", r->n_candidates);
	cr_assert_str_eq(r->candidates[0].id, T "test_helper");
	cr_assert_str_eq(r->candidates[0].reasons[0].detail,
			 "helper _helper_y of the test file changed: " T "test_helper -> _helper_x "
			 "(test/test_shapes.py) -> _helper_y (test/test_shapes.py)");
	selector_impact_result_destroy(r);
	selector_catalog_destroy(b);
	selector_catalog_destroy(h);
	selector_change_set_destroy(cs);
	selector_catalog_cache_destroy(cache);
	free(edited);
	test_repo_destroy(&s.t);
}

/* Computed names widen: every test whose name is computed under a changed symbol's root, with
 * the reason saying so; exec reaches anything. */
Test(impact_shapes, computed_names_widen)
{
	struct shapes s;
	build(&s);
	const char *g[] = { DYN "test_exec", DYN "test_getattr" };
	expect(&s, "torch/special/m193.py", fn_source("f5", true), g, 2,
	       "reached through a computed name: " DYN
	       "test_exec -> exec, eval or an import of a computed module -> "
	       "torch.special.m193.f5 (changed)");
	const char *l[] = { DYN "test_exec", DYN "test_getattr_literal" };
	expect(&s, "torch/_prims/m204.py", fn_source("f3", true), l, 2,
	       "reached through a computed name: " DYN
	       "test_exec -> exec, eval or an import of a computed module -> "
	       "torch._prims.m204.f3 (changed)");
	const char *i[] = { DYN "test_exec", DYN "test_import_module" };
	expect(&s, "torch/_refs/m245.py", fn_source("f4", true), i, 2,
	       "reached through a computed name: " DYN
	       "test_exec -> exec, eval or an import of a computed module -> "
	       "torch._refs.m245.f4 (changed)");
	test_repo_destroy(&s.t);
}

static struct impact_result *run_pair(const char *dir, const char *base, const char *head,
				      struct catalog_cache *cache, size_t *shared)
{
	struct change_set *cs;
	cr_assert_eq(selector_changes_from_git(&cs, dir, base, head, NULL), 0, "%s", err_last());
	struct catalog *b, *h;
	cr_assert_eq(selector_catalog_build(&h, dir, head, cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&b, dir, base, cache), 0, "%s", err_last());
	struct impact_result *r;
	cr_assert_eq(selector_impact_run(&r, cs, b, h, NULL), 0, "%s", err_last());
	*shared += selector_impact_graph_reused(h, NULL) == 1;
	selector_catalog_destroy(b);
	selector_catalog_destroy(h);
	selector_change_set_destroy(cs);
	return r;
}

/* Consecutive commits through one kept cache (each head's catalog derived from the previous one,
 * its graph laid over the base's, test blocks kept per blob) select exactly what a fresh cache
 * selects, chains included: source edits, a helper and a table of the test file edited, a
 * re-exported function and an imported base edited. */
Test(impact_shapes, consecutive_commits_kept_equal_fresh)
{
	struct shapes s;
	build(&s);
	char ids[8][41];
	memcpy(ids[0], s.base, 41);
	char *t1 = strdup(test_shapes), *t2 = strdup(test_shapes);
	cr_assert(t1 && t2);
	memcpy(strstr(t1, "s_helper(x)"), "s_method(x)", 11);
	memcpy(strstr(t2, "_FNS = [torch.a.ops.s_list]"), "_FNS = [torch.a.ops.s_cls] ", 27);
	char f4[128], hv[512];
	snprintf(f4, sizeof(f4), "%s", fn_source("f4", true));
	snprintf(hv, sizeof(hv), "%s    return 0\n", common_helpers);
	const struct test_edit steps[][1] = {
		{ { "torch/a/ops.py", M, NULL, 0 } },
		{ { "test/test_shapes.py", M, t1, 0 } },
		{ { "torch/_refs/m245.py", M, f4, 0 } },
		{ { "test/test_shapes.py", M, t2, 0 } },
		{ { "torch/testing/_internal/common_helpers.py", M, hv, 0 } },
		{ { "torch/a/ops.py", M, NULL, 0 } },
	};
	const char *changed_op[] = { "s_helper", NULL, NULL, NULL, NULL, "s_base" };
	size_t n = sizeof(steps) / sizeof(*steps);
	for (size_t i = 0; i < n; i++) {
		struct test_edit e = steps[i][0];
		if (!e.content)
			e.content = ops_source(changed_op[i]);
		const char *parents[] = { ids[i] };
		test_repo_commit(&s.t, ids[i + 1], NULL, "step", parents, 1, &e, 1);
	}
	struct catalog_cache *kept;
	cr_assert_eq(selector_catalog_cache_create(&kept, 0), 0);
	size_t selected = 0, shared = 0, ignored = 0;
	for (size_t i = 0; i < n; i++) {
		struct impact_result *a = run_pair(s.t.dir, ids[i], ids[i + 1], kept, &shared);
		struct catalog_cache *fresh;
		cr_assert_eq(selector_catalog_cache_create(&fresh, 0), 0);
		struct impact_result *b = run_pair(s.t.dir, ids[i], ids[i + 1], fresh, &ignored);
		same_result(a, b);
		selected += a->n_candidates;
		cr_assert_gt(a->n_candidates, 0, "step %zu selects something", i);
		selector_impact_result_destroy(a);
		selector_impact_result_destroy(b);
		selector_catalog_cache_destroy(fresh);
	}
	cr_assert_gt(selected, n);
	cr_assert_geq(shared, 3, "%zu of %zu graphs laid over the base's", shared, n);
	selector_catalog_cache_destroy(kept);
	free(t1);
	free(t2);
	test_repo_destroy(&s.t);
}

/* An entry removed from the op database: the tests whose op lists held it at the base are
 * selected (found in the base's lists: the head's no longer have it), the others are not. */
Test(impact_shapes, op_database_entry_removed)
{
	struct shapes s;
	build(&s);
	golden_signal = IMPACT_OPDB;
	const char *bar[] = { "test/test_opdb.py::TestOpdb::test_bar" };
	const char *without_bar = "import torch.a.ops\n"
				  "def sample_inputs_foo(op_info, device, dtype, requires_grad):\n"
				  "    return [torch.a.ops.s_sample(1)]\n"
				  "op_db = [\n"
				  "    OpInfo('foo', op=lambda x: torch.a.ops.s_oplambda(x),\n"
				  "           sample_inputs_func=sample_inputs_foo),\n"
				  "]\n";
	expect(&s, "torch/testing/_internal/common_methods_invocations.py", without_bar, bar, 1,
	       "@ops over bar: op database entry removed");
	test_repo_destroy(&s.t);
}

/* An op database entry's lambda and its sample inputs function: a change of what they call
 * selects the @ops tests over that entry's op, not those over another op. */
Test(impact_shapes, op_database_lambdas_and_sample_inputs)
{
	struct shapes s;
	build(&s);
	golden_signal = IMPACT_OPDB;
	const char *foo[] = { "test/test_opdb.py::TestOpdb::test_foo" };
	expect_op(&s, "s_oplambda", foo, 1,
		  "@ops over foo: its entry uses torch.a.ops.s_oplambda (changed)");
	expect_op(&s, "s_sample", foo, 1,
		  "@ops over foo: its entry uses "
		  "torch.testing._internal.common_methods_invocations.sample_inputs_foo "
		  "(reaches a change)");
	test_repo_destroy(&s.t);
}
