/* The synthetic upstream generator: the same seed gives the same commits; the repository opens
 * with libgit2 and holds what the generator claims (commits, merges, files, tests); the ground
 * truth agrees with the history (each line's id, parents and paths match the commit's real
 * first-parent diff; every affected test exists in that commit's tree) and with its rules (a
 * test-body edit affects exactly that test; setup.py is a fallback). */
#include <criterion/criterion.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "fixture/fixture.h"
#include "gitrepo.h"

static char dir_a[64], dir_b[64];

static void rm_rf(const char *p)
{
	if (*p)
		test_rm_tree(p);
}

static void make_dirs(void)
{
	snprintf(dir_a, sizeof(dir_a), "/tmp/fixture-test-XXXXXX");
	snprintf(dir_b, sizeof(dir_b), "/tmp/fixture-test-XXXXXX");
	cr_assert(mkdtemp(dir_a) && mkdtemp(dir_b));
	git_libgit2_init();
}

static void drop_dirs(void)
{
	rm_rf(dir_a);
	rm_rf(dir_b);
	git_libgit2_shutdown();
}

static void gen(const char *out, uint64_t seed, int commits, struct fixture_stats *st)
{
	struct fixture_opts o = { .out = out,
				  .scale = FIXTURE_SMALL,
				  .seed = seed,
				  .commits = commits,
				  .no_checkout = 1 };
	int rc = fixture_generate(&o, st);
	cr_assert_eq(rc, 0, "generate: %s", err_last());
}

static char *slurp(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/.ground_truth/%s", dir, name);
	FILE *f = fopen(path, "rb");
	cr_assert(f, "no %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	cr_assert(s);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

/* The JSON lines of a truth file as an array. */
static json_t *lines(const char *dir, const char *name)
{
	char *s = slurp(dir, name);
	json_t *a = json_array();
	for (char *p = s, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		cr_assert(nl, "%s: last line has no newline", name);
		*nl = 0;
		json_error_t e;
		json_t *o = json_loads(p, 0, &e);
		cr_assert(o, "%s: %s", name, e.text);
		json_array_append_new(a, o);
	}
	free(s);
	return a;
}

TestSuite(fixture, .init = make_dirs, .fini = drop_dirs, .timeout = 120);

Test(fixture, same_seed_same_commits)
{
	struct fixture_stats a, b;
	gen(dir_a, 42, 0, &a);
	gen(dir_b, 42, 0, &b);
	cr_assert_str_eq(a.head, b.head);
	char *ta = slurp(dir_a, "commits.jsonl"), *tb = slurp(dir_b, "commits.jsonl");
	cr_assert_str_eq(ta, tb);
	free(ta);
	free(tb);
	rm_rf(dir_b);
	cr_assert_eq(mkdir(dir_b, 0700), 0);
	gen(dir_b, 43, 0, &b);
	cr_assert_str_neq(a.head, b.head);
}

Test(fixture, refuses_a_non_empty_directory)
{
	struct fixture_stats st;
	gen(dir_a, 1, 10, &st);
	struct fixture_opts o = { .out = dir_a, .seed = 1 };
	cr_assert_eq(fixture_generate(&o, NULL), ERR_EXISTS);
	enum fixture_scale sc;
	cr_assert_eq(fixture_scale_parse(&sc, "pytorch"), 0);
	cr_assert_eq(sc, FIXTURE_PYTORCH);
	cr_assert_eq(fixture_scale_parse(&sc, "huge"), ERR_INVAL);
}

static size_t count_tree(git_repository *r, const git_tree *t, size_t *tests_py)
{
	size_t n = 0;
	for (size_t i = 0; i < git_tree_entrycount(t); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(t, i);
		if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
			git_tree *sub;
			cr_assert_eq(git_tree_lookup(&sub, r, git_tree_entry_id(e)), 0);
			n += count_tree(r, sub, tests_py);
			git_tree_free(sub);
		} else {
			const char *name = git_tree_entry_name(e);
			size_t l = strlen(name);
			*tests_py +=
			    !strncmp(name, "test_", 5) && l > 3 && !strcmp(name + l - 3, ".py");
			n++;
		}
	}
	return n;
}

Test(fixture, repository_has_the_counts_claimed)
{
	struct fixture_stats st;
	gen(dir_a, 7, 0, &st);
	cr_assert_eq(st.commits, 100);
	cr_assert_geq(st.merges, 2);
	cr_assert(st.files >= 300 && st.files <= 1000, "files %zu", st.files);
	cr_assert(st.tests >= 1500 && st.tests <= 2600, "tests %zu", st.tests);
	git_repository *r;
	cr_assert_eq(git_repository_open(&r, dir_a), 0);
	git_oid head;
	cr_assert_eq(git_reference_name_to_id(&head, r, "HEAD"), 0);
	char hex[41];
	cr_assert_str_eq(git_oid_tostr(hex, sizeof(hex), &head), st.head);
	git_revwalk *w;
	cr_assert_eq(git_revwalk_new(&w, r), 0);
	cr_assert_eq(git_revwalk_push_head(w), 0);
	size_t commits = 0, merges = 0;
	git_oid id;
	while (!git_revwalk_next(&id, w)) {
		git_commit *c;
		cr_assert_eq(git_commit_lookup(&c, r, &id), 0);
		commits++;
		merges += git_commit_parentcount(c) == 2;
		git_commit_free(c);
	}
	git_revwalk_free(w);
	cr_assert_eq(commits, st.commits);
	cr_assert_eq(merges, st.merges);
	git_commit *c;
	git_tree *t;
	cr_assert_eq(git_commit_lookup(&c, r, &head), 0);
	cr_assert_eq(git_commit_tree(&t, c), 0);
	size_t tests_py = 0;
	cr_assert_eq(count_tree(r, t, &tests_py), st.files);
	cr_assert_eq(tests_py, st.test_files);
	git_tree_free(t);
	git_commit_free(c);
	git_repository_free(r);
	json_t *tl = lines(dir_a, "tests.jsonl");
	cr_assert_eq(json_array_size(tl), st.tests);
	/* what a test uses directly is among what it depends on */
	size_t i;
	json_t *tj;
	json_array_foreach(tl, i, tj)
	{
		json_t *fns = json_object_get(tj, "functions"), *u;
		size_t k;
		json_array_foreach(json_object_get(tj, "uses"), k, u)
		{
			int found = 0;
			for (size_t m = 0; m < json_array_size(fns) && !found; m++)
				found = json_equal(json_array_get(fns, m), u);
			cr_assert(found, "%s uses %s but does not depend on it",
				  json_string_value(json_object_get(tj, "id")),
				  json_string_value(u));
		}
	}
	json_decref(tl);
}

/* The sorted paths of the first-parent diff of commit `c` (no rename detection). */
static json_t *diff_paths(git_repository *r, git_commit *c)
{
	git_tree *new_t, *old_t = NULL;
	cr_assert_eq(git_commit_tree(&new_t, c), 0);
	if (git_commit_parentcount(c)) {
		git_commit *p;
		cr_assert_eq(git_commit_parent(&p, c, 0), 0);
		cr_assert_eq(git_commit_tree(&old_t, p), 0);
		git_commit_free(p);
	}
	git_diff *d;
	cr_assert_eq(git_diff_tree_to_tree(&d, r, old_t, new_t, NULL), 0);
	json_t *a = json_array();
	for (size_t i = 0; i < git_diff_num_deltas(d); i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		const char *p =
		    dd->status == GIT_DELTA_DELETED ? dd->old_file.path : dd->new_file.path;
		json_array_append_new(a, json_string(p));
	}
	git_diff_free(d);
	git_tree_free(new_t);
	git_tree_free(old_t);
	return a;
}

static int has_str(json_t *a, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) if (!strcmp(json_string_value(v), s)) return 1;
	return 0;
}

/* True when the test `id` (path::Class::method) is defined in commit c's tree. */
static int test_in_tree(git_repository *r, git_commit *c, const char *id)
{
	char path[256], def[128];
	const char *sep = strstr(id, "::");
	cr_assert(sep);
	snprintf(path, sizeof(path), "%.*s", (int)(sep - id), id);
	snprintf(def, sizeof(def), "def %s(", strrchr(id, ':') + 1);
	git_tree *t;
	git_tree_entry *e;
	cr_assert_eq(git_commit_tree(&t, c), 0);
	int found = 0;
	if (!git_tree_entry_bypath(&e, t, path)) {
		git_blob *b;
		cr_assert_eq(git_blob_lookup(&b, r, git_tree_entry_id(e)), 0);
		const char *txt = git_blob_rawcontent(b);
		size_t n = (size_t)git_blob_rawsize(b), l = strlen(def);
		for (size_t k = 0; !found && k + l <= n; k++)
			found = txt[k] == def[0] && !memcmp(txt + k, def, l);
		git_blob_free(b);
		git_tree_entry_free(e);
	}
	git_tree_free(t);
	return found;
}

Test(fixture, ground_truth_agrees_with_the_history)
{
	struct fixture_stats st;
	gen(dir_a, 9, 300, &st);
	json_t *cl = lines(dir_a, "commits.jsonl");
	cr_assert_eq(json_array_size(cl), st.commits);
	git_repository *r;
	cr_assert_eq(git_repository_open(&r, dir_a), 0);
	size_t i, test_bodies = 0, setup_py = 0, nonfallback = 0, named = 0;
	json_t *o;
	json_array_foreach(cl, i, o)
	{
		git_oid id;
		cr_assert_eq(git_oid_fromstr(&id, json_string_value(json_object_get(o, "id"))), 0);
		git_commit *c;
		cr_assert_eq(git_commit_lookup(&c, r, &id), 0, "line %zu: no such commit", i);
		json_t *parents = json_object_get(o, "parents");
		cr_assert_eq(json_array_size(parents), git_commit_parentcount(c));
		for (unsigned k = 0; k < git_commit_parentcount(c); k++) {
			char hex[41];
			git_oid_tostr(hex, sizeof(hex), git_commit_parent_id(c, k));
			cr_assert_str_eq(json_string_value(json_array_get(parents, k)), hex);
		}
		const char *kind = json_string_value(json_object_get(o, "kind"));
		json_t *paths = json_object_get(o, "paths"), *aff = json_object_get(o, "affected");
		int fallback = json_is_true(json_object_get(o, "fallback"));
		if (strcmp(kind, "initial")) {
			json_t *real = diff_paths(r, c);
			cr_assert_eq(json_array_size(real), json_array_size(paths),
				     "%s at line %zu", kind, i);
			size_t k;
			json_t *p;
			json_array_foreach(paths, k, p)
			    cr_assert(has_str(real, json_string_value(p)),
				      "%s not in the diff of line %zu", json_string_value(p), i);
			json_decref(real);
		}
		size_t k;
		json_t *t;
		json_array_foreach(aff, k, t)
		    cr_assert(test_in_tree(r, c, json_string_value(t)),
			      "line %zu: %s does not exist", i, json_string_value(t));
		/* A test the message names ("Fixes ...", "Repro: ...") is in the truth. */
		const char *msg = git_commit_message(c);
		const char *line = strstr(msg, "\n\nFixes ");
		line = line ? line : strstr(msg, "\n\nRepro: ");
		if (line && !fallback) {
			const char *end = strchr(line + 2, '\n');
			bool found = false;
			json_array_foreach(aff, k, t)
			{
				const char *name = strrchr(json_string_value(t), ':') + 1;
				const char *at = strstr(line, name);
				found = found || (at && at < end);
			}
			cr_assert(found, "line %zu: the test its message names is not in its truth",
				  i);
			named++;
		}
		if (!strcmp(kind, "test_body")) {
			test_bodies++;
			cr_assert(json_array_size(aff) == 1 || (json_array_size(aff) == 2 && line),
				  "line %zu: a test body edit affects its test (and one named)", i);
			/* the test file, and its helper module when the test's helpers changed */
			cr_assert(json_array_size(paths) == 1 ||
				  (json_array_size(paths) == 2 &&
				   strstr(json_string_value(json_array_get(paths, 1)),
					  "/test_helpers/h")));
			const char *p = json_string_value(json_array_get(paths, 0));
			bool in_file = false; /* the edited test (the named one may be elsewhere) */
			json_array_foreach(aff, k, t)
			{
				const char *tid = json_string_value(t);
				in_file = in_file || (!strncmp(tid, p, strlen(p)) &&
						      !strncmp(tid + strlen(p), "::", 2));
			}
			cr_assert(in_file, "line %zu", i);
			cr_assert(!fallback);
		}
		if (has_str(paths, "setup.py")) {
			setup_py++;
			cr_assert(fallback, "a setup.py commit is not a fallback (line %zu)", i);
		}
		if (!fallback)
			nonfallback++;
		git_commit_free(c);
	}
	cr_assert_geq(test_bodies, 10);
	cr_assert_geq(named, 10);
	cr_assert_geq(setup_py, 1);
	cr_assert_geq(nonfallback, 200);
	git_repository_free(r);
	json_decref(cl);
}
