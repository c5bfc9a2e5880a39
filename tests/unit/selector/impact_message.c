/* Stage 2's message signal: each form a commit message names tests in, against a head catalog in
 * PyTorch's style (device-generic and @ops classes, a plain class, module-level tests, a name
 * many classes share), with golden outputs (tests/fixtures/message/NAME.txt -> NAME.golden: the
 * tokens, then the candidates with their scores and reasons; SELECTOR_UPDATE_GOLDEN=1 rewrites
 * them). Then the bounds (a bare name, a file, one message, the bytes read, the tokens kept) and
 * hostile messages (huge, without spaces, binary). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/impact.h"

#define M CHANGE_MODE_FILE

static const char *test_ops =
    "from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops\n"
    "from torch.testing._internal.common_utils import TestCase\n"
    "class TestCommon(TestCase):\n"
    "    @ops(op_db)\n    def test_out(self, device, dtype, op):\n        pass\n"
    "    @ops(op_db)\n    def test_variant_consistency(self, device, dtype, op):\n        pass\n"
    "instantiate_device_type_tests(TestCommon, globals())\n";
static const char *test_nn = "from torch.testing._internal.common_utils import TestCase\n"
			     "class TestNN(TestCase):\n"
			     "    def test_fold(self):\n        pass\n"
			     "    def test_conv(self):\n        pass\n"
			     "    def test_conv2d(self):\n        pass\n"
			     "    def test_forward(self):\n        pass\n"
			     "class TestNNDeviceType(TestCase):\n"
			     "    def test_conv(self, device):\n        pass\n"
			     "    def test_fold(self, device, dtype):\n        pass\n"
			     "instantiate_device_type_tests(TestNNDeviceType, globals())\n"
			     "def test_free():\n    pass\n";

static char *many_classes(int n, const char *method)
{
	struct buf b;
	buf_init(&b, 64 * MIB);
	cr_assert_eq(
	    buf_append_str(&b, "from torch.testing._internal.common_utils import TestCase\n"), 0);
	for (int i = 0; i < n; i++)
		cr_assert_eq(buf_appendf(&b,
					 "class TestPool%d(TestCase):\n    def %s(self):\n"
					 "        pass\n",
					 i, method),
			     0);
	return buf_detach(&b);
}

static char *many_methods(const char *cls, int n)
{
	struct buf b;
	buf_init(&b, 64 * MIB);
	cr_assert_eq(buf_appendf(&b,
				 "from torch.testing._internal.common_utils import TestCase\n"
				 "class %s(TestCase):\n",
				 cls),
		     0);
	for (int i = 0; i < n; i++)
		cr_assert_eq(buf_appendf(&b, "    def test_m%d(self):\n        pass\n", i), 0);
	return buf_detach(&b);
}

static struct test_repo repo;
static struct catalog_cache *cache;
static struct catalog *head, *base;

static void setup(void)
{
	test_repo_create(&repo);
	char *pool = many_classes(40, "test_forward");
	char *big[3] = { many_methods("TestBig0", 2100), many_methods("TestBig1", 2100),
			 many_methods("TestBig2", 2100) };
	struct test_edit e[] = {
		{ "test/test_ops.py", M, test_ops, 0 },
		{ "test/test_nn.py", M, test_nn, 0 },
		{ "test/nn/test_pooling.py", M, pool, 0 },
		{ "test/nn/test_more.py", M,
		  "from torch.testing._internal.common_utils import TestCase\n"
		  "class TestNN(TestCase):\n    def test_more(self):\n        pass\n",
		  0 }, /* a class of the same name in another file */
		{ "test/big/test_big0.py", M, big[0], 0 },
		{ "test/big/test_big1.py", M, big[1], 0 },
		{ "test/big/test_big2.py", M, big[2], 0 },
	};
	char id[41];
	test_repo_commit(&repo, id, NULL, "c0", NULL, 0, e, sizeof(e) / sizeof(e[0]));
	free(pool);
	for (int i = 0; i < 3; i++)
		free(big[i]);
	cr_assert_eq(selector_catalog_cache_create(&cache, 0), 0);
	cr_assert_eq(selector_catalog_build(&head, repo.dir, id, cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&base, repo.dir, NULL, cache), 0, "%s", err_last());
}

static void teardown(void)
{
	selector_catalog_destroy(head);
	selector_catalog_destroy(base);
	selector_catalog_cache_destroy(cache);
	test_repo_destroy(&repo);
}

TestSuite(impact_message, .init = setup, .fini = teardown);

/* Stage 2 over a change of no files with these messages (commit ids "c0...", "c1...", ...).
 * Base and head are the same tree: only the messages can select. */
static struct impact_result *run(const char *const *msgs, size_t n)
{
	struct change_commit commits[8];
	cr_assert(n <= 8);
	for (size_t i = 0; i < n; i++) {
		memset(commits[i].id, '0', 40);
		commits[i].id[0] = 'c';
		commits[i].id[1] = (char)('0' + i);
		commits[i].id[40] = '\0';
		commits[i].message = (char *)msgs[i];
	}
	struct change_set cs = { .commits = commits, .n_commits = n };
	struct impact_result *r = NULL;
	cr_assert_eq(selector_impact_run(&r, &cs, head, head, NULL), 0, "%s", err_last());
	cr_assert(!r->fallback);
	return r;
}

static const struct impact_candidate *cand(const struct impact_result *r, const char *id)
{
	for (size_t i = 0; i < r->n_candidates; i++)
		if (strcmp(r->candidates[i].id, id) == 0)
			return &r->candidates[i];
	return NULL;
}

static void dump(struct buf *b, const char *msg, const struct impact_result *r)
{
	struct impact_message_token t[IMPACT_MESSAGE_TOKENS_MAX];
	size_t n = selector_impact_message_tokens(t, IMPACT_MESSAGE_TOKENS_MAX, msg, strlen(msg));
	cr_assert_eq(buf_append_str(b, "tokens:\n"), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(buf_appendf(b, "  %-12s %.*s [%.*s|%.*s|%.*s]\n",
					 selector_impact_message_form_name(t[i].form), (int)t[i].n,
					 t[i].s, (int)t[i].path_n, t[i].path, (int)t[i].cls_n,
					 t[i].cls, (int)t[i].name_n, t[i].name),
			     0);
	cr_assert_eq(buf_appendf(b, "candidates: %zu\n", r->n_candidates), 0);
	for (size_t i = 0; i < r->n_candidates && i < 12; i++) {
		const struct impact_candidate *c = &r->candidates[i];
		cr_assert_eq(c->n_reasons, 1);
		cr_assert_eq(c->reasons[0].signal, IMPACT_MESSAGE);
		cr_assert_eq(
		    buf_appendf(b, "  %.2f %s\n       %s\n", c->score, c->id, c->reasons[0].detail),
		    0);
	}
	if (r->n_candidates > 12)
		cr_assert_eq(buf_appendf(b, "  ...\n"), 0);
}

static void golden(const char *name)
{
	char path[512], *msg = NULL, *want = NULL;
	size_t len = 0, wlen = 0;
	snprintf(path, sizeof(path), "%s/message/%s.txt", SELECTOR_TEST_FIXTURES, name);
	cr_assert_eq(fs_read_file(&msg, &len, path, 1 << 20), 0, "%s", err_last());
	const char *msgs[] = { msg };
	struct impact_result *r = run(msgs, 1);
	struct buf got;
	buf_init(&got, MIB);
	dump(&got, msg, r);
	snprintf(path, sizeof(path), "%s/message/%s.golden", SELECTOR_TEST_FIXTURES, name);
	const char *update = getenv("SELECTOR_UPDATE_GOLDEN");
	if (update && *update) {
		FILE *f = fopen(path, "w");
		cr_assert(f);
		fputs(buf_str(&got), f);
		fclose(f);
	}
	cr_assert_eq(fs_read_file(&want, &wlen, path, 1 << 20), 0, "%s", err_last());
	cr_assert_str_eq(buf_str(&got), want, "%s:\n%s", name, buf_str(&got));
	free(want);
	buf_finish(&got);
	free(msg);
	selector_impact_result_destroy(r);
}

Test(impact_message, full_ids)
{
	golden("01_full_id");
}
Test(impact_message, class_method)
{
	golden("02_class_method");
}
Test(impact_message, path_class)
{
	golden("03_path_class");
}
Test(impact_message, file)
{
	golden("04_file");
}
Test(impact_message, instantiated)
{
	golden("05_instantiated");
}
Test(impact_message, bare)
{
	golden("06_bare");
}
Test(impact_message, dash_k)
{
	golden("07_dash_k");
}
Test(impact_message, markdown)
{
	golden("08_markdown");
}
Test(impact_message, noise)
{
	golden("09_noise");
}
Test(impact_message, disabled_issue_title)
{
	golden("10_disabled");
}

/* The strongest form wins, whichever message or token came first. */
Test(impact_message, strongest_reason)
{
	const char *msgs[] = { "test_fold is flaky", "Fixes test/test_nn.py::TestNN::test_fold" };
	struct impact_result *r = run(msgs, 2);
	const struct impact_candidate *c = cand(r, "test/test_nn.py::TestNN::test_fold");
	cr_assert(c);
	cr_assert_eq(c->n_reasons, 1);
	cr_assert_float_eq(c->score, 1.0, 1e-9);
	cr_assert(strstr(c->reasons[0].detail, "commit c1000000000") != NULL, "%s",
		  c->reasons[0].detail);
	selector_impact_result_destroy(r);
}

Test(impact_message, bare_name_bound)
{
	const char *msgs[] = { "test_forward" };
	struct impact_result *r = run(msgs, 1);
	cr_assert_eq(r->n_candidates, IMPACT_MESSAGE_BARE_MAX);
	cr_assert(strstr(r->candidates[0].reasons[0].detail, "the first 32 of 41 tests (bound)"),
		  "%s", r->candidates[0].reasons[0].detail);
	selector_impact_result_destroy(r);
}

Test(impact_message, group_and_message_bounds)
{
	const char *one[] = { "see test/big/test_big0.py" };
	struct impact_result *r = run(one, 1);
	cr_assert_eq(r->n_candidates, IMPACT_MESSAGE_GROUP_MAX);
	cr_assert(strstr(r->candidates[0].reasons[0].detail, "the first 2000 of 2100 tests"));
	selector_impact_result_destroy(r);
	const char *three[] = {
		"test/big/test_big0.py test/big/test_big1.py test/big/test_big2.py"
	};
	r = run(three, 1);
	cr_assert_eq(r->n_candidates, IMPACT_MESSAGE_TESTS_MAX);
	selector_impact_result_destroy(r);
	/* Each message has its own budget. */
	const char *two[] = { "test/big/test_big0.py test/big/test_big1.py test/big/test_big2.py",
			      "TestBig2::test_m2099" };
	r = run(two, 2);
	cr_assert_eq(r->n_candidates, IMPACT_MESSAGE_TESTS_MAX + 1);
	selector_impact_result_destroy(r);
}

/* Only the first IMPACT_MESSAGE_BYTES_MAX bytes are read, only IMPACT_MESSAGE_TOKENS_MAX tokens
 * kept, and a token longer than IMPACT_MESSAGE_TOKEN_MAX names nothing. */
Test(impact_message, reading_bounds)
{
	struct buf b;
	buf_init(&b, 64 * MIB);
	for (size_t i = 0; b.len < IMPACT_MESSAGE_BYTES_MAX; i++)
		cr_assert_eq(buf_append_str(&b, "filler words "), 0);
	cr_assert_eq(buf_append_str(&b, "TestNN.test_fold"), 0);
	const char *msgs[] = { buf_str(&b) };
	struct impact_result *r = run(msgs, 1);
	cr_assert_eq(r->n_candidates, 0, "a name past the bytes read");
	selector_impact_result_destroy(r);
	buf_reset(&b);
	for (int i = 0; i < IMPACT_MESSAGE_TOKENS_MAX; i++)
		cr_assert_eq(buf_append_str(&b, "TestNothing.test_nothing "), 0);
	cr_assert_eq(buf_append_str(&b, "TestNN.test_fold"), 0);
	msgs[0] = buf_str(&b);
	r = run(msgs, 1);
	cr_assert_eq(r->n_candidates, 0, "a name past the tokens kept");
	selector_impact_result_destroy(r);
	buf_reset(&b);
	for (int i = 0; i < IMPACT_MESSAGE_TOKEN_MAX; i++)
		cr_assert_eq(buf_append_char(&b, 'x'), 0);
	cr_assert_eq(buf_append_str(&b, ".TestNN.test_fold TestNN.test_conv"), 0);
	msgs[0] = buf_str(&b);
	r = run(msgs, 1);
	cr_assert_eq(r->n_candidates, 1, "a token too long names nothing");
	cr_assert_str_eq(r->candidates[0].id, "test/test_nn.py::TestNN::test_conv");
	selector_impact_result_destroy(r);
	buf_finish(&b);
}

Test(impact_message, hostile)
{
	size_t n = 4 * IMPACT_MESSAGE_BYTES_MAX;
	char *s = malloc(n + 1);
	cr_assert(s);
	memset(s, 'a', n); /* one word, no spaces */
	s[n] = '\0';
	const char *msgs[] = { s, s, s };
	struct impact_result *r = run(msgs, 3);
	cr_assert_eq(r->n_candidates, 0);
	selector_impact_result_destroy(r);
	for (size_t i = 0; i < n; i++) /* repeated names: bounded work, one reason each */
		s[i] = "test_fold "[i % 10];
	r = run(msgs, 1);
	cr_assert_eq(r->n_candidates, 2);
	selector_impact_result_destroy(r);
	unsigned x = 12345; /* binary bytes, with names between */
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		s[i] = (char)((x >> 16) & 0xff ? (x >> 16) & 0xff : 1);
	}
	memcpy(s + 1000, "\xff TestNN.test_conv2d\x80", 21);
	r = run(msgs, 1);
	cr_assert(cand(r, "test/test_nn.py::TestNN::test_conv2d"));
	selector_impact_result_destroy(r);
	const char *colons[] = { "::::::::::: ::a:: test/x.py:: ..TestNN..test_fold.. -k -k -k" };
	r = run(colons, 1);
	cr_assert_eq(r->n_candidates, 0);
	selector_impact_result_destroy(r);
	free(s);
}

/* A change set read through libgit2 carries the messages: the signal through selector_changes. */
Test(impact_message, from_git)
{
	const char *p[1];
	char c0[41], c1[41];
	snprintf(c0, sizeof(c0), "%s", head->commit_id);
	p[0] = c0;
	struct test_edit e[] = { { "docs/x.md", M, "x\n", 0 } };
	test_repo_commit(&repo, c1, NULL,
			 "Docs\n\nFixes TestNNDeviceTypeCPU::test_fold_cpu_float32", p, 1, e, 1);
	struct change_set *cs;
	cr_assert_eq(selector_changes_from_git(&cs, repo.dir, c0, c1, NULL), 0, "%s", err_last());
	struct catalog *h;
	cr_assert_eq(selector_catalog_build(&h, repo.dir, c1, cache), 0);
	struct impact_result *r;
	cr_assert_eq(selector_impact_run(&r, cs, head, h, NULL), 0, "%s", err_last());
	cr_assert_eq(r->n_candidates, 1);
	cr_assert_str_eq(r->candidates[0].id, "test/test_nn.py::TestNNDeviceType::test_fold");
	cr_assert_eq(r->candidates[0].reasons[0].signal, IMPACT_MESSAGE);
	cr_assert_str_eq(selector_impact_signal_name(IMPACT_MESSAGE), "message");
	selector_impact_result_destroy(r);
	selector_catalog_destroy(h);
	selector_change_set_destroy(cs);
}

/* A test file named in the message of a change that edits it selects nothing more: the file's
 * own signals say which of its tests changed. Named by a change that does not edit it, all its
 * tests. */
Test(impact_message, file_the_change_edits)
{
	char c0[41], c1[41], c2[41];
	snprintf(c0, sizeof(c0), "%s", head->commit_id);
	const char *p0[] = { c0 };
	char *pool = many_classes(40, "test_forward");
	char *at = strstr(pool, "def test_forward");
	cr_assert(at);
	memcpy(at + 4, "test_fxrward", 12); /* TestPool0's test renamed: one test added */
	struct test_edit e1[] = { { "test/nn/test_pooling.py", M, pool, 0 } };
	test_repo_commit(&repo, c1, NULL, "Edit test/nn/test_pooling.py", p0, 1, e1, 1);
	free(pool);
	const char *p1[] = { c1 };
	struct test_edit e2[] = { { "docs/x.md", M, "x\n", 0 } };
	test_repo_commit(&repo, c2, NULL, "Docs for test/nn/test_pooling.py", p1, 1, e2, 1);
	const char *range[2][2] = { { c0, c1 }, { c1, c2 } };
	size_t want[2] = { 1, 40 };
	for (int k = 0; k < 2; k++) {
		struct change_set *cs;
		cr_assert_eq(
		    selector_changes_from_git(&cs, repo.dir, range[k][0], range[k][1], NULL), 0,
		    "%s", err_last());
		struct catalog *b, *h;
		cr_assert_eq(selector_catalog_build(&b, repo.dir, range[k][0], cache), 0);
		cr_assert_eq(selector_catalog_build(&h, repo.dir, range[k][1], cache), 0);
		struct impact_result *r;
		cr_assert_eq(selector_impact_run(&r, cs, b, h, NULL), 0, "%s", err_last());
		cr_assert_eq(r->n_candidates, want[k], "range %d: %zu candidates", k,
			     r->n_candidates);
		cr_assert_eq(r->candidates[0].reasons[0].signal,
			     k ? IMPACT_MESSAGE : IMPACT_TEST_EDITED);
		selector_impact_result_destroy(r);
		selector_catalog_destroy(b);
		selector_catalog_destroy(h);
		selector_change_set_destroy(cs);
	}
}

/* A class's tests in every file that has a class of that name. */
Test(impact_message, class_in_two_files)
{
	const char *msgs[] = { "pytest -k TestNN" };
	struct impact_result *r = run(msgs, 1);
	cr_assert_eq(r->n_candidates, 5);
	cr_assert(cand(r, "test/nn/test_more.py::TestNN::test_more"));
	cr_assert(cand(r, "test/test_nn.py::TestNN::test_forward"));
	selector_impact_result_destroy(r);
}
