/* Merging: several documents into one set (entries for one path combine, global lists become
 * unions, labels stay with each entry), and a directory loads *.yaml sorted by name. */
#include <criterion/criterion.h>

#include "helpers.h"

static const char doc_a[] = "test_suite_config:\n"
			    "  labels: [smoke]\n"
			    "  files:\n"
			    "    - path: ${TORCH_ROOT}/test/test_a.py\n"
			    "      unlisted_test_mode: skip\n"
			    "      tests:\n"
			    "        - names: [TestA::test_one]\n"
			    "  global:\n"
			    "    supported_dtypes: [{name: float16}, {name: float32}]\n"
			    "    supported_ops: [add, mul]\n"
			    "    input_config: {seed: 1}\n";

static const char doc_b[] = "test_suite_config:\n"
			    "  labels: [trunk, smoke]\n"
			    "  files:\n"
			    "    - path: ${TORCH_ROOT}/test/../test/test_a.py\n"
			    "      unlisted_test_mode: xfail\n"
			    "      tests:\n"
			    "        - names: [TestA::test_two]\n"
			    "          mode: xfail\n"
			    "    - path: ${TORCH_DEVICE_ROOT}/tests/test_b.py\n"
			    "  global:\n"
			    "    supported_dtypes: [{name: float32}, {name: bfloat16}]\n"
			    "    supported_ops: [mul, {name: mm, force_xfail: true}]\n"
			    "    input_config: {seed: 2}\n";

static void load_two(struct spec_set **out, struct spec_diag_list *d)
{
	testspecs_diags_init(d);
	cr_assert_eq(testspecs_set_create(out), 0);
	struct spec_load_opts o = { .roots = &test_roots, .diags = d };
	cr_assert_eq(testspecs_load_text(*out, "a.yaml", doc_a, sizeof(doc_a) - 1, &o), 0);
	cr_assert_eq(testspecs_load_text(*out, "b.yaml", doc_b, sizeof(doc_b) - 1, &o), 0);
}

Test(merge, same_path_combines_tests)
{
	struct spec_set *s;
	struct spec_diag_list d;
	load_two(&s, &d);
	cr_assert_eq(s->n_files, 2);
	const struct spec_file *a = &s->files[0];
	cr_expect_str_eq(a->resolved, "/src/pytorch/test/test_a.py");
	cr_assert_eq(a->n_tests, 2);
	cr_expect_str_eq(a->tests[0].names.v[0].s, "TestA::test_one");
	cr_expect_str_eq(a->tests[1].names.v[0].s, "TestA::test_two");
	cr_expect_str_eq(a->tests[1].names.v[0].loc.file, "b.yaml");
	cr_expect_eq(a->tests[1].suite_labels.n, 2, "labels stay with their document");
	cr_expect_eq(a->unlisted, SPEC_MODE_SKIP, "the first unlisted_test_mode wins");
	cr_expect_str_eq(s->files[1].resolved, "/src/torch-spyre/tests/test_b.py");
	cr_expect_eq(s->n_sources, 2);
	/* a warning for the differing unlisted_test_mode of one path; none for the seed: each
	 * config's own global decides its files, so two configs' seeds do not conflict */
	cr_expect_eq(d.n_errors, 0);
	cr_expect_eq(d.n_warnings, 1, "%s", diags_text(&d));
	cr_expect(strstr(diags_text(&d), "seed") == NULL, "%s", diags_text(&d));
	testspecs_diags_finish(&d);
	testspecs_set_destroy(s);
}

Test(merge, global_lists_are_unions)
{
	struct spec_set *s;
	struct spec_diag_list d;
	load_two(&s, &d);
	const struct spec_global *g = &s->global;
	cr_assert_eq(g->supported_dtypes.n, 3);
	cr_expect_eq(g->supported_dtypes.v[0].dtype, SPEC_DTYPE_FLOAT16);
	cr_expect_eq(g->supported_dtypes.v[2].dtype, SPEC_DTYPE_BFLOAT16);
	cr_assert_eq(g->n_supported_ops, 3);
	cr_expect_str_eq(g->supported_ops[2].name.s, "mm");
	cr_expect_eq(g->supported_ops[2].force_xfail, SPEC_TRI_TRUE);
	cr_expect_eq(g->seed, 1);
	cr_assert_eq(s->labels.n, 2);
	cr_expect_str_eq(s->labels.v[1].s, "trunk");
	testspecs_diags_finish(&d);
	testspecs_set_destroy(s);
}

Test(merge, directory_sorted_by_name)
{
	struct loaded l;
	loaded_path(&l, SPECS_DIR "/real", true);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	cr_expect_eq(l.diags.n, 0, "%s", diags_text(&l.diags));
	cr_assert_eq(l.set->n_sources, 4);
	cr_expect(strstr(l.set->sources[0], "example_test_config.yaml") != NULL);
	cr_expect(strstr(l.set->sources[3], "test_torch.yaml") != NULL);
	cr_expect_eq(l.set->n_files, 4);
	/* labels: regression from the example, unit/trunk from the others */
	cr_expect_eq(l.set->labels.n, 3);
	loaded_finish(&l);
}

Test(merge, broken_file_adds_nothing_and_others_load)
{
	struct spec_set *s;
	struct spec_diag_list d;
	testspecs_diags_init(&d);
	cr_assert_eq(testspecs_set_create(&s), 0);
	struct spec_load_opts o = { .roots = &test_roots, .diags = &d };
	static const char bad[] = "test_suite_config:\n  files:\n    - path: ${TORCH_ROOT}/x.py\n"
				  "      unlisted_test_mode: nope\n";
	cr_expect_neq(testspecs_load_text(s, "bad.yaml", bad, sizeof(bad) - 1, &o), 0);
	cr_expect_eq(testspecs_load_text(s, "a.yaml", doc_a, sizeof(doc_a) - 1, &o), 0);
	cr_expect_eq(s->n_files, 1);
	cr_expect_eq(s->n_sources, 1);
	testspecs_diags_finish(&d);
	testspecs_set_destroy(s);
}
