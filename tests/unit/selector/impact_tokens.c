/* Stage 2 compares code, not lines: an edit that leaves every token where it was (a comment, a
 * docstring, spacing, a line break inside brackets, the width of the indentation) changes no
 * function, class, op database entry or module; an op database entry changes alone when its
 * own tokens change; two defs of one name are told apart by their rank; a computed name of the
 * API does not reach into the test infrastructure; and the reverse closure of a change has no
 * depth bound (a chain of 40 calls, a cycle). Each case is a commit on a tiny hand-written
 * upstream, its candidates compared with the exact set wanted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"

#define M CHANGE_MODE_FILE

#define CMI "torch/testing/_internal/common_methods_invocations.py"
#define TO  "test/test_ops_x.py::TestOpsX::"
#define TS  "test/test_src.py::TestSrc::"

static const char *cmi =
    "'''The op database.'''\n"
    "import torch\n"
    "from torch.testing._internal.opinfo.core import OpInfo, BinaryUfuncInfo, ForeachFuncInfo\n"
    "\n"
    "def sample_inputs_add(op, device, dtype, requires_grad, **kwargs):\n"
    "    '''Samples of add.'''\n"
    "    yield make((5, 5), dtype)\n"
    "\n"
    "def sample_inputs_sub(op, device, dtype, requires_grad, **kwargs):\n"
    "    yield make((5, 5), dtype)\n"
    "\n"
    "op_db = [\n"
    "    BinaryUfuncInfo('add', dtypes=(torch.float32,),\n"
    "                    sample_inputs_func=sample_inputs_add),\n"
    "    BinaryUfuncInfo('sub', dtypes=(torch.float32,), sample_inputs_func=sample_inputs_sub),\n"
    "]\n"
    "\n"
    "foreach_binary_op_db = [\n"
    "    ForeachFuncInfo('add', dtypes=(torch.float32,)),\n"
    "]\n";

static const char *test_ops =
    "import torch\n"
    "from torch.testing._internal.common_utils import TestCase\n"
    "from torch.testing._internal.common_device_type import ops\n"
    "from torch.testing._internal.common_methods_invocations import op_db, foreach_binary_op_db\n"
    "\n"
    "class TestOpsX(TestCase):\n"
    "    @ops(op_db)\n"
    "    def test_all(self, device, dtype, op):\n"
    "        op(1)\n"
    "\n"
    "    @ops(foreach_binary_op_db)\n"
    "    def test_foreach(self, device, dtype, op):\n"
    "        op(1)\n"
    "\n"
    "    def test_api_by_name(self):\n"
    "        getattr(torch, 'add')(1)\n";

/* torch/a/x.py: two arms that each define g, a class with an attribute, a chain of 40 calls,
 * and a cycle. */
static const char *src_x(const char *g2, const char *attr, const char *deep_end, const char *cyc)
{
	static char buf[8192];
	size_t w = (size_t)snprintf(buf, sizeof(buf),
				    "'''Module x.'''\n"
				    "import os\n"
				    "if os.name == 'nt':\n"
				    "    def g(x):\n"
				    "        return x\n"
				    "else:\n"
				    "    def g(x):\n"
				    "        return x%s\n"
				    "\n"
				    "def h(x):\n"
				    "    return max(x, 0)\n"
				    "\n"
				    "class K:\n"
				    "    '''A class.'''\n"
				    "    size = %s\n"
				    "\n"
				    "    def run(self, x):\n"
				    "        return x\n"
				    "\n",
				    g2, attr);
	for (int i = 0; i < 40; i++)
		w += (size_t)snprintf(buf + w, sizeof(buf) - w,
				      "def d%d(x):\n    return d%d(x)\n\n", i, i + 1);
	w += (size_t)snprintf(buf + w, sizeof(buf) - w,
			      "def d40(x):\n    return x%s\n\n"
			      "def ping(n):\n    return pong(n - 1) if n else 0\n\n"
			      "def pong(n):\n    return ping(n - 1)%s if n else 0\n",
			      deep_end, cyc);
	return buf;
}

static const char *test_src = "import torch.a.x\n"
			      "from torch.testing._internal.common_utils import TestCase\n"
			      "\n"
			      "class TestSrc(TestCase):\n"
			      "    def test_g(self):\n"
			      "        torch.a.x.g(1)\n"
			      "\n"
			      "    def test_h(self):\n"
			      "        torch.a.x.h(1)\n"
			      "\n"
			      "    def test_k(self):\n"
			      "        torch.a.x.K().run(1)\n"
			      "\n"
			      "    def test_deep(self):\n"
			      "        torch.a.x.d0(1)\n"
			      "\n"
			      "    def test_cycle(self):\n"
			      "        torch.a.x.ping(3)\n";

static const char *test_cls = "from torch.testing._internal.common_utils import TestCase\n"
			      "\n"
			      "class TestA(TestCase):\n"
			      "    '''Checks a.'''\n"
			      "    size = 1\n"
			      "\n"
			      "    def test_a(self):\n"
			      "        pass\n"
			      "\n"
			      "class TestB(TestA):\n"
			      "    def test_b(self):\n"
			      "        pass\n"
			      "\n"
			      "class TestC(TestCase):\n"
			      "    def test_c(self):\n"
			      "        pass\n";

struct tk {
	struct test_repo t;
	char base[41];
};

static void build(struct tk *s)
{
	test_repo_create(&s->t);
	struct test_edit e[] = {
		{ "torch/__init__.py", M, "", 0 },
		{ "torch/a/__init__.py", M, "", 0 },
		{ "torch/a/x.py", M, src_x("", "4", "", ""), 0 },
		{ CMI, M, cmi, 0 },
		{ "test/test_ops_x.py", M, test_ops, 0 },
		{ "test/test_src.py", M, test_src, 0 },
		{ "test/test_cls.py", M, test_cls, 0 },
	};
	char *x = strdup(e[2].content); /* src_x's buffer is reused */
	e[2].content = x;
	test_repo_commit(&s->t, s->base, "refs/heads/main", "base", NULL, 0, e,
			 sizeof(e) / sizeof(*e));
	free(x);
}

/* One commit on the base writing `path` as `content`: the candidates' ids, joined by ' ', in
 * `out`; the reasons of the first in `why`. */
static void run(struct tk *s, const char *path, const char *content, char *out, size_t n, char *why,
		size_t wn)
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
	struct catalog *b, *h;
	cr_assert_eq(selector_catalog_build(&b, s->t.dir, s->base, cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&h, s->t.dir, head, cache), 0, "%s", err_last());
	struct impact_result *r;
	cr_assert_eq(selector_impact_run(&r, cs, b, h, NULL), 0, "%s", err_last());
	cr_assert_not(r->fallback, "%s: fallback %s", path, r->fallback_reason);
	size_t w = 0;
	out[0] = why[0] = '\0';
	for (size_t i = 0; i < r->n_candidates && w < n; i++)
		w += (size_t)snprintf(out + w, n - w, "%s%s", i ? " " : "", r->candidates[i].id);
	if (r->n_candidates && r->candidates[0].n_reasons)
		snprintf(why, wn, "%s", r->candidates[0].reasons[0].detail);
	selector_impact_result_destroy(r);
	selector_catalog_destroy(b);
	selector_catalog_destroy(h);
	selector_change_set_destroy(cs);
	selector_catalog_cache_destroy(cache);
}

static char *replaced(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	cr_assert_not_null(at, "'%s' not in the text", from);
	size_t a = (size_t)(at - s), lf = strlen(from), lt = strlen(to), ls = strlen(s);
	char *r = malloc(ls - lf + lt + 1);
	memcpy(r, s, a);
	memcpy(r + a, to, lt);
	memcpy(r + a + lt, at + lf, ls - a - lf + 1);
	return r;
}

static void expect(struct tk *s, const char *path, char *content, const char *want,
		   const char *why_has)
{
	char got[4096], why[1024];
	run(s, path, content, got, sizeof(got), why, sizeof(why));
	cr_expect_str_eq(got, want, "%s: got [%s], want [%s]", path, got, want);
	if (why_has)
		cr_expect(strstr(why, why_has) != NULL, "%s: the reason '%s' lacks '%s'", path, why,
			  why_has);
	free(content);
}

TestSuite(impact_tokens, .timeout = 60);

Test(impact_tokens, edits_that_leave_the_tokens_change_nothing)
{
	struct tk s;
	build(&s);
	const char *x = src_x("", "4", "", "");
	/* comments, a docstring, spacing, a line break inside brackets, the indentation's width */
	expect(&s, "torch/a/x.py",
	       replaced(x, "def h(x):\n    return max(x, 0)\n",
			"def h(x):  # why\n    '''Doc.'''\n    # note\n"
			"    return max(\n        x,   0)\n"),
	       "", NULL);
	expect(&s, "torch/a/x.py",
	       replaced(x, "def h(x):\n    return max(x, 0)\n", "def h(x):\n  return max(x, 0)\n"),
	       "", NULL);
	expect(&s, "torch/a/x.py", replaced(x, "'''A class.'''", "'''A class, said again.'''"), "",
	       NULL);
	expect(&s, "torch/a/x.py", replaced(x, "'''Module x.'''", "'''Module x, said again.'''"),
	       "", NULL);
	/* the op database: a comment at the end, inside an entry, an entry reflowed, a docstring */
	expect(&s, CMI, replaced(cmi, "]\n\nforeach", "]  # the end of op_db\n\nforeach"), "",
	       NULL);
	expect(&s, CMI,
	       replaced(cmi, "BinaryUfuncInfo('sub', dtypes=(torch.float32,), ",
			"BinaryUfuncInfo('sub',  # subtraction\n                    "
			"dtypes=(torch.float32,),\n                    "),
	       "", NULL);
	expect(&s, CMI, replaced(cmi, "'''Samples of add.'''", "'''Samples of add, said again.'''"),
	       "", NULL);
	char *end = malloc(strlen(cmi) + 32);
	sprintf(end, "%s# a comment at the end\n", cmi);
	expect(&s, CMI, end, "", NULL);
	/* a test file's comment and docstring */
	expect(&s, "test/test_src.py",
	       replaced(test_src, "    def test_h(self):\n",
			"    def test_h(self):\n        '''Checks h.'''\n        # note\n"),
	       "", NULL);
	test_repo_destroy(&s.t);
}

Test(impact_tokens, an_entry_changes_alone_and_a_foreach_entry_is_its_own_op)
{
	struct tk s;
	build(&s);
	/* sub's entry edited: the @ops test over op_db, for sub */
	expect(&s, CMI,
	       replaced(cmi, "BinaryUfuncInfo('sub', dtypes=(torch.float32,)",
			"BinaryUfuncInfo('sub', dtypes=(torch.float64,)"),
	       TO "test_all", "sub");
	/* ForeachFuncInfo('add') is _foreach_add: the foreach test only, not add's tests */
	expect(&s, CMI,
	       replaced(cmi, "ForeachFuncInfo('add', dtypes=(torch.float32,))",
			"ForeachFuncInfo('add', dtypes=(torch.float64,))"),
	       TO "test_foreach", "_foreach_add");
	/* the sample function of add edited: add's tests, through its entry */
	expect(&s, CMI,
	       replaced(cmi, "    yield make((5, 5), dtype)\n\ndef sample_inputs_sub",
			"    yield make((5, 7), dtype)\n\ndef sample_inputs_sub"),
	       TO "test_all", "sample_inputs_add");
	/* code outside the entries: every @ops test, saying so */
	expect(&s, CMI,
	       replaced(cmi, "foreach_binary_op_db = [", "foreach_binary_op_db = op_db[:0] + ["),
	       TO "test_all " TO "test_foreach", "outside its entries");
	test_repo_destroy(&s.t);
}

Test(impact_tokens, two_defs_of_one_name_are_told_apart_by_their_rank)
{
	struct tk s;
	build(&s);
	expect(&s, "torch/a/x.py", strdup(src_x(" + 1", "4", "", "")), TS "test_g", "g");
	/* h changed: g's two defs, compared rank by rank, did not */
	const char *x = src_x("", "4", "", "");
	expect(
	    &s, "torch/a/x.py",
	    replaced(x, "def h(x):\n    return max(x, 0)\n", "def h(x):\n    return max(x, 1)\n"),
	    TS "test_h", "h");
	test_repo_destroy(&s.t);
}

Test(impact_tokens, a_class_attribute_changes_its_class)
{
	struct tk s;
	build(&s);
	expect(&s, "torch/a/x.py", strdup(src_x("", "8", "", "")), TS "test_k", "class changed");
	test_repo_destroy(&s.t);
}

Test(impact_tokens, a_computed_name_of_the_api_does_not_reach_the_test_infrastructure)
{
	struct tk s;
	build(&s);
	/* sub's sample function: test_all runs sub; test_api_by_name's getattr(torch, ...) does
	 * not reach torch.testing._internal */
	expect(&s, CMI,
	       replaced(cmi,
			"def sample_inputs_sub(op, device, dtype, requires_grad, **kwargs):\n    "
			"yield make((5, 5), dtype)",
			"def sample_inputs_sub(op, device, dtype, requires_grad, **kwargs):\n    "
			"yield make((5, 6), dtype)"),
	       TO "test_all", NULL);
	test_repo_destroy(&s.t);
}

Test(impact_tokens, the_closure_has_no_depth_bound)
{
	struct tk s;
	build(&s);
	/* d0 -> d1 -> ... -> d40: 41 functions from the test's call to the change */
	expect(&s, "torch/a/x.py", strdup(src_x("", "4", " + 1", "")), TS "test_deep",
	       "test_deep -> torch.a.x.d0 -> torch.a.x.d1");
	/* ping <-> pong: a cycle entered from outside */
	expect(&s, "torch/a/x.py", strdup(src_x("", "4", "", " + 1")), TS "test_cycle", "pong");
	test_repo_destroy(&s.t);
}

Test(impact_tokens, a_test_class_attribute_selects_its_tests_and_its_subclasses)
{
	struct tk s;
	build(&s);
	expect(&s, "test/test_cls.py", replaced(test_cls, "size = 1", "size = 2"),
	       "test/test_cls.py::TestA::test_a test/test_cls.py::TestB::test_a "
	       "test/test_cls.py::TestB::test_b",
	       "class-level code of TestA");
	expect(&s, "test/test_cls.py",
	       replaced(test_cls, "'''Checks a.'''", "'''Checks a, again.'''"), "", NULL);
	test_repo_destroy(&s.t);
}
