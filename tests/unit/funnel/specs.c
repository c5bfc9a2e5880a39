/* funnel_specs_load: the spec set, its resolver and the drift memo made together. Where the
 * specs come from when no path is given, how a bad file is named, and where the loader's
 * diagnostics go. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "funnel/funnel.h"
#include "upstream.h"

/* A spec file with one unknown key (a warning) and otherwise good. */
static const char warned[] = "test_suite_config:\n"
			     "  files:\n"
			     "    - path: ${TORCH_ROOT}/test/test_nn_0.py\n"
			     "      colour: blue\n"
			     "      unlisted_test_mode: mandatory_success\n";

/* A spec file whose mode is none of the modes (an error) on line 5. */
static const char broken[] = "test_suite_config:\n"
			     "  files:\n"
			     "    - path: ${TORCH_ROOT}/test/test_nn_0.py\n"
			     "      tests:\n"
			     "        - names: [TestNn0::test_norm_0]\n"
			     "          mode: sometimes\n";

Test(funnel_specs, no_path_and_no_default_specs_is_notfound_saying_what_to_give)
{
	char dir[64];
	tmp_make(dir, sizeof dir, "specs");
	struct funnel_specs_opts o = { .default_repo = dir, .what = "--specs" };
	struct funnel_specs *s = (struct funnel_specs *)1;
	cr_expect_eq(funnel_specs_load(&s, &o), ERR_NOTFOUND);
	cr_expect_null(s);
	cr_expect(strstr(err_last(), "--specs"), "names the option: %s", err_last());
	cr_expect(strstr(err_last(), dir) && strstr(err_last(), "spyre/specs"),
		  "names the default it looked for: %s", err_last());
	tmp_remove(dir);
}

Test(funnel_specs, no_path_takes_the_repositorys_spyre_specs)
{
	struct funnel_specs_opts o = { .default_repo = up_dir(), .torch_root = up_dir() };
	struct funnel_specs *s = NULL;
	cr_assert_eq(funnel_specs_load(&s, &o), 0, "%s", err_last());
	cr_assert_not_null(s);
	cr_expect_not_null(s->set);
	cr_expect_not_null(s->resolver);
	cr_expect_not_null(s->memo);
	cr_expect_gt(s->set->n_files, 0, "the generated upstream's spec file names test files");
	funnel_specs_destroy(s);
}

Test(funnel_specs, a_bad_file_is_inval_naming_it_after_what)
{
	char dir[64], path[128];
	tmp_make(dir, sizeof dir, "specs");
	tmp_write(path, sizeof path, dir, "broken.yaml", broken);
	const char *paths[] = { path };
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct funnel_specs_opts o = { .paths = paths,
				       .n_paths = 1,
				       .torch_root = up_dir(),
				       .diags = &diags,
				       .what = "--specs" };
	struct funnel_specs *s = (struct funnel_specs *)1;
	cr_expect_eq(funnel_specs_load(&s, &o), ERR_INVAL, "%s", err_last());
	cr_expect_null(s);
	char want[160];
	snprintf(want, sizeof want, "--specs %s: ", path);
	cr_expect(strncmp(err_last(), want, strlen(want)) == 0, "'%s' begins '%s'", err_last(),
		  want);
	cr_expect_eq(diags.n_errors, 1, "the error is in the diagnostics too");
	cr_expect(diags.n && diags.v[0].line == 6, "at the mode's line");
	testspecs_diags_finish(&diags);
	tmp_remove(dir);
}

Test(funnel_specs, what_defaults_to_specs_in_errors)
{
	char dir[64], path[128];
	tmp_make(dir, sizeof dir, "specs");
	tmp_write(path, sizeof path, dir, "broken.yaml", broken);
	const char *paths[] = { path };
	struct funnel_specs_opts o = { .paths = paths, .n_paths = 1 };
	struct funnel_specs *s = NULL;
	cr_expect_eq(funnel_specs_load(&s, &o), ERR_INVAL);
	char want[160];
	snprintf(want, sizeof want, "specs %s: ", path);
	cr_expect(strncmp(err_last(), want, strlen(want)) == 0, "'%s' begins '%s'", err_last(),
		  want);
	tmp_remove(dir);
}

Test(funnel_specs, a_bad_file_in_the_default_specs_is_inval_naming_it)
{
	char dir[64], sub[128], path[160];
	tmp_make(dir, sizeof dir, "specs");
	snprintf(sub, sizeof sub, "%s/spyre", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof sub, "%s/spyre/specs", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	tmp_write(path, sizeof path, sub, "broken.yaml", broken);
	struct funnel_specs_opts o = { .default_repo = dir, .what = "--specs" };
	struct funnel_specs *s = (struct funnel_specs *)1;
	cr_expect_eq(funnel_specs_load(&s, &o), ERR_INVAL, "%s", err_last());
	cr_expect_null(s);
	cr_expect(strstr(err_last(), path), "names the file: %s", err_last());
	tmp_remove(dir);
}

Test(funnel_specs, a_missing_file_is_an_error_naming_it)
{
	const char *paths[] = { "/nonexistent/funnel/specs.yaml" };
	struct funnel_specs_opts o = { .paths = paths, .n_paths = 1, .what = "--specs" };
	struct funnel_specs *s = (struct funnel_specs *)1;
	cr_expect_lt(funnel_specs_load(&s, &o), 0);
	cr_expect_null(s);
	cr_expect(strstr(err_last(), "--specs /nonexistent/funnel/specs.yaml"), "%s", err_last());
}

Test(funnel_specs, warnings_land_in_diags_and_the_specs_load)
{
	char dir[64], path[128];
	tmp_make(dir, sizeof dir, "specs");
	tmp_write(path, sizeof path, dir, "warned.yaml", warned);
	const char *paths[] = { path };
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct funnel_specs_opts o = {
		.paths = paths, .n_paths = 1, .torch_root = up_dir(), .diags = &diags
	};
	struct funnel_specs *s = NULL;
	cr_assert_eq(funnel_specs_load(&s, &o), 0, "%s", err_last());
	cr_expect_eq(diags.n_warnings, 1);
	cr_expect_eq(diags.n_errors, 0);
	cr_expect(diags.n && strcmp(diags.v[0].file, path) == 0, "the warning names the file");
	cr_expect_eq(s->set->n_files, 1);
	funnel_specs_destroy(s);
	testspecs_diags_finish(&diags);
	tmp_remove(dir);
}

Test(funnel_specs, a_bad_file_among_good_ones_fails_the_whole_load)
{
	char dir[64], good[128], bad[128];
	tmp_make(dir, sizeof dir, "specs");
	tmp_write(good, sizeof good, dir, "a.yaml", warned);
	tmp_write(bad, sizeof bad, dir, "b.yaml", broken);
	const char *paths[] = { good, bad };
	struct funnel_specs_opts o = { .paths = paths, .n_paths = 2, .what = "--specs" };
	struct funnel_specs *s = (struct funnel_specs *)1;
	cr_expect_eq(funnel_specs_load(&s, &o), ERR_INVAL);
	cr_expect_null(s);
	cr_expect(strstr(err_last(), bad), "names the bad one: %s", err_last());
	tmp_remove(dir);
}

Test(funnel_specs, destroy_accepts_null)
{
	funnel_specs_destroy(NULL);
}
