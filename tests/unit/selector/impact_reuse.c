/* Stage 2's reuse across commits must not change a single answer: over consecutive commits of a
 * generated history (each base the previous head, as the daemon sees them), the impact result
 * computed with the catalogs and the call graph kept from the previous commit (the head's catalog
 * derived from the previous one and a tree diff, its graph laid over the base's) equals the
 * result computed from scratch, file by file, test by test, candidate by candidate, reason by
 * reason. The test also checks that the reuse really happened. */
#include <criterion/criterion.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "fixture/fixture.h"
#include "gitrepo.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"

#define WARM_BLOBS_MAX 260 /* the small history's catalogs hold ~150 blobs, 4 kept hold more */

/* The first-parent chain from HEAD, oldest first. */
static size_t first_parents(const char *dir, char (*ids)[41], size_t cap)
{
	git_libgit2_init();
	git_repository *repo;
	cr_assert_eq(git_repository_open(&repo, dir), 0);
	git_revwalk *w;
	cr_assert_eq(git_revwalk_new(&w, repo), 0);
	git_revwalk_simplify_first_parent(w);
	git_revwalk_push_head(w);
	git_oid id;
	size_t n = 0;
	while (n < cap && git_revwalk_next(&id, w) == 0)
		git_oid_tostr(ids[n++], 41, &id);
	git_revwalk_free(w);
	git_repository_free(repo);
	git_libgit2_shutdown();
	for (size_t i = 0; i < n / 2; i++) {
		char t[41];
		memcpy(t, ids[i], 41);
		memcpy(ids[i], ids[n - 1 - i], 41);
		memcpy(ids[n - 1 - i], t, 41);
	}
	return n;
}

/* Two catalogs of the same revision, file by file and test by test. */
static void same_catalog(const struct catalog *a, const struct catalog *b, const char *commit)
{
	cr_assert_eq(a->n_files, b->n_files, "%s: %zu files kept, %zu fresh", commit, a->n_files,
		     b->n_files);
	for (size_t i = 0; i < a->n_files; i++) {
		const struct catalog_file *x = &a->files[i], *y = &b->files[i];
		cr_assert_str_eq(x->path, y->path, "%s: file %zu", commit, i);
		cr_assert_str_eq(x->blob_id, y->blob_id, "%s: %s", commit, x->path);
		cr_assert(x->kind == y->kind && x->opdb == y->opdb, "%s: %s", commit, x->path);
		cr_assert_str_eq(x->module ? x->module : "", y->module ? y->module : "", "%s: %s",
				 commit, x->path);
	}
	cr_assert_eq(a->n_tests, b->n_tests, "%s: tests", commit);
	for (size_t i = 0; i < a->n_tests; i++) {
		cr_assert_str_eq(a->tests[i].id, b->tests[i].id, "%s: test %zu", commit, i);
		cr_assert_eq(a->tests[i].body_hash, b->tests[i].body_hash, "%s: %s", commit,
			     a->tests[i].id);
		cr_assert(selector_catalog_test(a, b->tests[i].id) == &a->tests[i], "%s: %s index",
			  commit, a->tests[i].id);
	}
}

static struct impact_result *run(const char *dir, const char *base, const char *head,
				 struct catalog_cache *cache, int *reused, size_t *over,
				 struct catalog **head_out)
{
	struct change_set *cs;
	cr_assert_eq(selector_changes_from_git(&cs, dir, base, head, NULL), 0, "%s", err_last());
	struct catalog *cb, *ch;
	cr_assert_eq(selector_catalog_build(&ch, dir, head, cache), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_build(&cb, dir, base, cache), 0, "%s", err_last());
	struct impact_result *r;
	cr_assert_eq(selector_impact_run(&r, cs, cb, ch, NULL), 0, "%s", err_last());
	*reused = selector_impact_graph_reused(ch, over);
	selector_catalog_destroy(cb);
	*head_out = ch;
	selector_change_set_destroy(cs);
	return r;
}

static void same(const struct impact_result *a, const struct impact_result *b, const char *commit)
{
	cr_assert_eq(a->fallback, b->fallback, "%s: fallback", commit);
	cr_assert_eq(a->n_candidates, b->n_candidates, "%s: %zu candidates reused, %zu fresh",
		     commit, a->n_candidates, b->n_candidates);
	for (size_t i = 0; i < a->n_candidates; i++) {
		const struct impact_candidate *x = &a->candidates[i], *y = &b->candidates[i];
		cr_assert_str_eq(x->id, y->id, "%s: candidate %zu", commit, i);
		cr_assert_eq(x->score, y->score, "%s: %s score", commit, x->id);
		cr_assert_eq(x->n_reasons, y->n_reasons, "%s: %s reasons", commit, x->id);
		for (size_t k = 0; k < x->n_reasons; k++) {
			cr_assert_eq(x->reasons[k].signal, y->reasons[k].signal, "%s: %s", commit,
				     x->id);
			cr_assert_str_eq(x->reasons[k].detail, y->reasons[k].detail, "%s: %s",
					 commit, x->id);
		}
	}
}

Test(impact_reuse, consecutive_commits_equal_fresh_builds, .timeout = 240)
{
	char dir[] = "/tmp/sel-impact-reuse-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct fixture_opts fo = {
		.out = dir,
		.scale = FIXTURE_SMALL,
		.seed = 3,
		.no_checkout = 1,
		.shapes_basic = 1, /* the blob budget below was measured on direct calls only */
	};
	struct fixture_stats st;
	cr_assert_eq(fixture_generate(&fo, &st), 0, "%s", err_last());
	static char ids[4096][41];
	size_t n = first_parents(dir, ids, 4096);
	cr_assert_gt(n, 20);

	/* A cache bounded just above what its live catalogs use: it must drop unused blobs
	 * (sweeps) and never one a live catalog or a kept graph still points into. */
	struct catalog_cache *warm;
	cr_assert_eq(selector_catalog_cache_create(&warm, WARM_BLOBS_MAX), 0);
	size_t overlaid = 0, with_files = 0, symbol_runs = 0;
	for (size_t i = 1; i < n; i++) {
		int rw, rc;
		size_t over_w, over_c;
		struct catalog *cw, *cc;
		struct impact_result *a = run(dir, ids[i - 1], ids[i], warm, &rw, &over_w, &cw);
		struct catalog_cache *cold; /* a new one each time: nothing kept, nothing shared */
		cr_assert_eq(selector_catalog_cache_create(&cold, 0), 0);
		struct impact_result *b = run(dir, ids[i - 1], ids[i], cold, &rc, &over_c, &cc);
		same(a, b, ids[i]);
		same_catalog(cw, cc, ids[i]);
		selector_catalog_destroy(cw);
		selector_catalog_destroy(cc);
		selector_catalog_cache_destroy(cold);
		cr_assert_neq(rc, 1, "%s: a fresh build reported reuse", ids[i]);
		if (rw >= 0)
			symbol_runs++;
		if (rw == 1) {
			overlaid++;
			with_files += over_w > 0;
		}
		selector_impact_result_destroy(a);
		selector_impact_result_destroy(b);
	}
	/* The history edits torch/ sources often: most graphs must have been laid over the
	 * previous one, many with changed files of their own. */
	cr_assert_gt(overlaid, symbol_runs / 2, "%zu of %zu graphs reused", overlaid, symbol_runs);
	cr_assert_gt(with_files, overlaid / 4, "%zu of %zu reused graphs had an overlay",
		     with_files, overlaid);
	/* Head catalogs come from the previous one and a tree diff, not a walk. */
	cr_assert_gt(selector_catalog_cache_derived(warm), n / 2, "%zu of %zu catalogs derived",
		     selector_catalog_cache_derived(warm), n);
	cr_assert_gt(selector_catalog_cache_evicted(warm), 0, "no blob was ever dropped");
	cr_assert_leq(selector_catalog_cache_size(warm), WARM_BLOBS_MAX);
	printf("impact_reuse: %zu blobs dropped by sweeps, %zu held at the end\n",
	       selector_catalog_cache_evicted(warm), selector_catalog_cache_size(warm));
	printf("impact_reuse: %zu commits, %zu catalogs derived, %zu graphs built, %zu laid over "
	       "the base's (%zu with an overlay of changed files)\n",
	       n - 1, selector_catalog_cache_derived(warm), symbol_runs, overlaid, with_files);
	selector_catalog_cache_destroy(warm);
	cr_assert_eq(test_rm_tree(dir), 0);
}

/* A scan depends on the file's module (relative imports resolve against it), so the same blob
 * at another path must not reuse the first one's scan: a file moved from torch/a/ to torch/b/
 * whose `from .u import f` now means torch.b.u.f, then a change of torch.b.u.f, must select the
 * test that uses the moved function, with the cache kept as with a fresh one. */
Test(impact_reuse, a_moved_blob_is_scanned_for_its_new_module)
{
	struct test_repo t;
	test_repo_create(&t);
	const struct test_edit e0[] = {
		{ "torch/a/u.py", 0100644, "def f():\n    return 1\n", 0 },
		{ "torch/b/u.py", 0100644, "def f():\n    return 2\n", 0 },
		{ "test/test_g.py", 0100644,
		  "import torch.b.x\n\nclass TestG(TestCase):\n    def test_g(self):\n"
		  "        torch.b.x.g()\n",
		  0 },
	};
	const char *xsrc = "from .u import f\n\ndef g():\n    return f()\n";
	char c[4][41];
	test_repo_commit(&t, c[0], NULL, "c0", NULL, 0, e0, 3);
	const struct test_edit e1[] = { { "torch/a/x.py", 0100644, xsrc, 0 } };
	const char *p0[] = { c[0] };
	test_repo_commit(&t, c[1], NULL, "c1", p0, 1, e1, 1);
	const struct test_edit e2[] = { { "torch/a/x.py", 0, NULL, 0 },
					{ "torch/b/x.py", 0100644, xsrc, 0 } };
	const char *p1[] = { c[1] };
	test_repo_commit(&t, c[2], NULL, "c2", p1, 1, e2, 2);
	const struct test_edit e3[] = { { "torch/b/u.py", 0100644, "def f():\n    return 3\n",
					  0 } };
	const char *p2[] = { c[2] };
	test_repo_commit(&t, c[3], NULL, "c3", p2, 1, e3, 1);

	struct catalog_cache *warm, *cold;
	cr_assert_eq(selector_catalog_cache_create(&warm, 0), 0);
	cr_assert_eq(selector_catalog_cache_create(&cold, 0), 0);
	struct impact_result *a = NULL, *b;
	int reused;
	size_t over;
	struct catalog *ch;
	for (int i = 1; i <= 3; i++) {
		selector_impact_result_destroy(a);
		a = run(t.dir, c[i - 1], c[i], warm, &reused, &over, &ch);
		selector_catalog_destroy(ch);
	}
	b = run(t.dir, c[2], c[3], cold, &reused, &over, &ch);
	selector_catalog_destroy(ch);
	cr_assert_eq(b->n_candidates, 1, "fresh: %zu candidates", b->n_candidates);
	same(a, b, c[3]);
	selector_impact_result_destroy(a);
	selector_impact_result_destroy(b);
	selector_catalog_cache_destroy(warm);
	selector_catalog_cache_destroy(cold);
	test_repo_destroy(&t);
}
