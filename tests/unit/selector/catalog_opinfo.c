/* The catalog's op database facts against the generator's ground truth of them
 * (.ground_truth/opinfos.jsonl): each entry's file, dtypes, sample function and the literal
 * shapes that function builds from S, M, L, XS, found by OpInfo name, name.variant_test_name
 * and formatted name; then stage 3 on the same upstream, where an @ops test's cases of one op
 * are the truth's shapes times the truth's dtypes within the specs' (or the op's default
 * samples at those dtypes when the entry builds no literal shape). */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <criterion/criterion.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "fixture/fixture.h"
#include "select_helpers.h"
#include "selector/catalog.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

struct up {
	char dir[64];
	struct catalog_cache *cache;
	struct catalog *cat;
	json_t *truth; /* array of the truth's lines */
};

static void up_open(struct up *u, unsigned seed)
{
	snprintf(u->dir, sizeof u->dir, "/tmp/catalog-opinfo-XXXXXX");
	cr_assert(mkdtemp(u->dir));
	struct fixture_opts o = {
		.out = u->dir, .scale = FIXTURE_SMALL, .seed = seed, .commits = 6
	};
	cr_assert_eq(fixture_generate(&o, NULL), 0, "%s", err_last());
	cr_assert_eq(selector_catalog_cache_create(&u->cache, 0), 0);
	cr_assert_eq(selector_catalog_build(&u->cat, u->dir, "HEAD", u->cache), 0, "%s",
		     err_last());
	char path[256], *s = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/.ground_truth/opinfos.jsonl", u->dir);
	cr_assert_eq(fs_read_file(&s, &len, path, 1u << 24), 0, "%s", path);
	u->truth = json_array();
	for (char *p = s, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		json_t *j = json_loads(p, 0, NULL);
		cr_assert_not_null(j, "%s", p);
		json_array_append_new(u->truth, j);
	}
	free(s);
}

static void up_close(struct up *u)
{
	json_decref(u->truth);
	selector_catalog_destroy(u->cat);
	selector_catalog_cache_destroy(u->cache);
	nftw(u->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *str_or_null(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

static void expect_same(const char *what, const char *key, const char *got, const char *want)
{
	if (!want)
		cr_expect_null(got, "%s %s: got '%s', want none", key, what, got ? got : "");
	else
		cr_expect(got && strcmp(got, want) == 0, "%s %s: got '%s', want '%s'", key, what,
			  got ? got : "(none)", want);
}

Test(catalog_opinfo, catalog_equals_the_truth_entry_by_entry)
{
	size_t entries = 0, with_shapes = 0;
	for (unsigned seed = 1; seed <= 2; seed++) {
		struct up u;
		up_open(&u, seed);
		size_t i;
		json_t *j;
		json_array_foreach(u.truth, i, j)
		{
			const char *name = str_or_null(j, "name"),
				   *variant = str_or_null(j, "variant");
			char key[256], formatted[256];
			snprintf(key, sizeof key, "%s%s%s", name, variant ? "." : "",
				 variant ? variant : "");
			snprintf(formatted, sizeof formatted, "%s%s%s", name, variant ? "_" : "",
				 variant ? variant : "");
			const char *path = NULL;
			const struct scan_opinfo *o = selector_catalog_opinfo(u.cat, key, &path);
			cr_assert_not_null(o, "no entry for %s", key);
			cr_expect_eq(o, selector_catalog_opinfo(u.cat, formatted, NULL), "%s", key);
			expect_same("file", key, path, str_or_null(j, "file"));
			expect_same("dtypes", key, o->dtypes, str_or_null(j, "dtypes"));
			expect_same("sample function", key, o->sample_func,
				    str_or_null(j, "sample_func"));
			expect_same("shapes", key, o->samples, str_or_null(j, "shapes"));
			if (!variant) /* a bare name is the entry without a variant name */
				cr_expect_null(o->variant_test_name, "%s", key);
			entries++;
			with_shapes += str_or_null(j, "shapes") != NULL;
		}
		cr_expect_null(selector_catalog_opinfo(u.cat, "no_such_op", NULL));
		up_close(&u);
	}
	cr_expect_gt(entries, 2 * 20, "%zu entries", entries);
	cr_expect(with_shapes > 0 && with_shapes < entries, "%zu of %zu with shapes", with_shapes,
		  entries);
}

static size_t n_shapes(const char *s)
{
	size_t n = s && *s ? 1 : 0;
	for (; s && *s; s++)
		n += *s == ';';
	return n;
}

static size_t default_samples(const char *op)
{
	const struct spyre_op_info *info = spyre_op_find(testspecs_opmap_find(op)->emu);
	return n_shapes(info->samples);
}

/* float16 and float32 are the specs' dtypes: how many of them the truth's dtypes hold. */
static size_t dtypes_within(const char *truth)
{
	size_t n = 0;
	for (const char *p = truth; *p;) {
		size_t k = strcspn(p, ",");
		n += (k == 7 && !strncmp(p, "float16", 7)) || (k == 7 && !strncmp(p, "float32", 7));
		p += k + (p[k] == ',');
	}
	return n;
}

/* For each binary op of the truth the emulator implements: a spec set supporting that op
 * alone, and test_binary's cases as stage 3 counts them with the catalog as op database. */
Test(catalog_opinfo, stage3_cases_follow_the_truth)
{
	struct up u;
	up_open(&u, 1);
	size_t checked = 0, i;
	json_t *j;
	json_array_foreach(u.truth, i, j)
	{
		const char *name = str_or_null(j, "name");
		const struct spec_op_map *m = testspecs_opmap_find(name);
		if (str_or_null(j, "variant") || !m || m->family != SPEC_FAMILY_BINARY_UFUNC ||
		    !spyre_op_find(m->emu))
			continue;
		char specs[1024];
		snprintf(specs, sizeof specs,
			 "test_suite_config:\n  files:\n"
			 "    - path: ${TORCH_ROOT}/test/test_op_variants.py\n"
			 "      unlisted_test_mode: mandatory_success\n"
			 "  global:\n"
			 "    supported_dtypes: [{name: float16}, {name: float32}]\n"
			 "    supported_ops: [%s]\n",
			 name);
		struct spec_set *set = specs_from_text(specs);
		struct spec_resolver *res;
		cr_assert_eq(testspecs_resolver_create(&res, set), 0);
		struct select_report rep;
		selector_report_init(&rep);
		struct select_reason why = { "test-edited", 1.0, (char *)"edited" };
		struct select_candidate c = { .id = "test/test_op_variants.py::TestOpVariants::"
						    "test_binary",
					      .reasons = &why,
					      .n_reasons = 1,
					      .opinfo = true };
		struct select_stage3_opts o = { .opdb = u.cat };
		cr_assert_eq(selector_stage3_run(&rep, set, res, &c, 1, &o), 0, "%s", err_last());
		const struct select_test *t = &rep.tests[0];
		const char *shapes = str_or_null(j, "shapes");
		size_t nd = dtypes_within(str_or_null(j, "dtypes"));
		if (shapes) {
			cr_expect_eq(t->kernel_by_source[SPEC_SOURCE_OPINFO_SAMPLES],
				     n_shapes(shapes) * nd, "%s", name);
			cr_expect_eq(t->kernel_cases, n_shapes(shapes) * nd, "%s", name);
		} else {
			size_t want = nd ? default_samples(name) * nd : default_samples(name);
			cr_expect_eq(t->kernel_by_source[SPEC_SOURCE_OPINFO_DTYPES], want, "%s",
				     name);
			cr_expect_eq(t->kernel_unsupported, nd ? 0 : want, "%s", name);
		}
		checked++;
		selector_report_finish(&rep);
		testspecs_resolver_destroy(res);
		testspecs_set_destroy(set);
	}
	cr_expect_gt(checked, 3, "%zu binary ops checked", checked);
	up_close(&u);
}

/* Which supported ops an @ops test runs: the ops its list covers by their entries' classes (a
 * reduction is no variant of @ops(binary_ufuncs)); an op with no entry only under op_db. */
Test(catalog_opinfo, runs_op_follows_the_tests_op_list)
{
	struct up u;
	up_open(&u, 1);
	const char *binary = NULL, *reduction = NULL, *unary0 = NULL, *unary1 = NULL;
	size_t i;
	json_t *j;
	json_array_foreach(u.truth, i, j)
	{
		const char *name = str_or_null(j, "name");
		const struct spec_op_map *m = testspecs_opmap_find(name);
		if (!m || str_or_null(j, "variant"))
			continue;
		if (!binary && m->family == SPEC_FAMILY_BINARY_UFUNC)
			binary = name;
		if (!reduction && m->family == SPEC_FAMILY_REDUCTION)
			reduction = name;
	}
	cr_assert(binary && reduction);
	/* test_filtered keeps every UnaryUfuncInfo entry but the first (the generator's truth) */
	json_array_foreach(u.truth, i, j)
	{
		const char *name = str_or_null(j, "name");
		const struct scan_opinfo *o = selector_catalog_opinfo(u.cat, name, NULL);
		if (str_or_null(j, "variant") || !o || strcmp(o->kind, "UnaryUfuncInfo") != 0)
			continue;
		if (!unary0)
			unary0 = name;
		else if (!unary1)
			unary1 = name;
	}
	cr_assert(unary0 && unary1);
	/* which ops each @ops test runs: 1 yes, 0 no, -1 not known (the family decides) */
	const struct {
		const char *test, *op;
		int want;
	} runs[] = {
		{ "TestOpVariants::test_binary", binary, 1 },
		{ "TestOpVariants::test_binary", reduction, 0 },
		{ "TestOpVariants::test_binary", "no_such_op", 0 },
		{ "TestOpVariants::test_reduction", binary, 0 },
		{ "TestOpVariants::test_reduction", reduction, 1 },
		{ "TestOpVariants::test_op_db", reduction, 1 },
		/* an evaluated list holds entries only: an op with none is in no list */
		{ "TestOpVariants::test_op_db", "no_such_op", 0 },
		/* a filter(lambda ...) over a family: the ops it keeps, not the names it mentions
		 */
		{ "TestOpVariants::test_filtered", unary0, 0 },
		{ "TestOpVariants::test_filtered", unary1, 1 },
		{ "TestGenerated::no_such_test", binary, -1 },
	};
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		char id[200];
		snprintf(id, sizeof id, "test/test_op_variants.py::%s", runs[k].test);
		struct selector_opdb db;
		cr_assert_eq(selector_opdb_for(&db, u.cat, id), 0, "%s", id);
		cr_assert(db.test || runs[k].want == -1, "%s", id);
		cr_expect_eq(selector_runs_op(&db, runs[k].op), runs[k].want, "%s: %s", id,
			     runs[k].op);
		selector_opdb_finish(&db);
	}

	/* stage 3: a binary test under specs supporting both ops expands the binary one only */
	char specs[1024];
	snprintf(specs, sizeof specs,
		 "test_suite_config:\n  files:\n"
		 "    - path: ${TORCH_ROOT}/test/test_op_variants.py\n"
		 "      unlisted_test_mode: mandatory_success\n"
		 "  global:\n"
		 "    supported_dtypes: [{name: float16}, {name: float32}]\n"
		 "    supported_ops: [%s, %s]\n",
		 binary, reduction);
	struct spec_set *set = specs_from_text(specs);
	struct spec_resolver *res;
	cr_assert_eq(testspecs_resolver_create(&res, set), 0);
	struct select_report rep;
	selector_report_init(&rep);
	struct select_reason why = { "test-edited", 1.0, (char *)"edited" };
	struct select_candidate c = { .id = "test/test_op_variants.py::TestOpVariants::test_binary",
				      .reasons = &why,
				      .n_reasons = 1,
				      .opinfo = true };
	struct select_stage3_opts o = { .opdb = u.cat };
	cr_assert_eq(selector_stage3_run(&rep, set, res, &c, 1, &o), 0, "%s", err_last());
	/* the cases stage 3 counted are the ones it kept: the binary op's only */
	const struct select_test *t = &rep.tests[0];
	cr_assert_gt(t->kernel_cases, 0);
	cr_expect_eq(rep.cases.n, t->kernel_cases);
	for (size_t k = 0; k < t->kernel_cases; k++) {
		const struct spec_case *sc = &rep.cases.v[t->case_first + k];
		cr_expect_str_eq(sc->op, binary);
		cr_expect_str_eq(sc->test_id, c.id);
	}
	selector_report_finish(&rep);

	/* test_op_db only looks at its entries (assertIsNotNone(op.name)): no case, and why */
	selector_report_init(&rep);
	c.id = "test/test_op_variants.py::TestOpVariants::test_op_db";
	cr_assert_eq(selector_stage3_run(&rep, set, res, &c, 1, &o), 0, "%s", err_last());
	t = &rep.tests[0];
	cr_expect_eq(t->kernel_cases, 0);
	cr_expect(t->case_why && strstr(t->case_why, "runs no op"), "%s",
		  t->case_why ? t->case_why : "(no reason)");
	selector_report_finish(&rep);
	testspecs_resolver_destroy(res);
	testspecs_set_destroy(set);
	up_close(&u);
}
