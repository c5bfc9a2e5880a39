/* Where `spyre-ci run` gets its kernel cases (run_cmd.h): every entry of the specs (--all), or
 * the tests a selection schedules (the four stages of `select`, through the same front), each
 * expanded with the scanner's facts. Also the --history durations and the adapter table. */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "executors/collect.h"
#include "run_cmd.h"
#include "select_front.h"
#include "selector/changes.h"
#include "specs_cmd.h"
#include "testspecs/resolve.h"

static int load_specs(const struct run_args *a, struct spec_set **set)
{
	struct spec_roots roots = { a->repo, NULL };
	struct spec_diag_list diags;
	struct spec_load_opts o = { .roots = a->repo ? &roots : NULL, .diags = &diags };
	char dflt[PATH_TEXT_MAX];
	int rc = testspecs_set_create(set);
	testspecs_diags_init(&diags);
	if (rc == 0 && a->n_specs == 0) {
		snprintf(dflt, sizeof dflt, "%s/spyre/specs", a->repo);
		rc = access(dflt, R_OK) == 0
			 ? testspecs_load_path(*set, dflt, &o)
			 : err_set(ERR_NOTFOUND, "no --specs given and no %s", dflt);
	}
	for (size_t i = 0; i < a->n_specs && rc == 0; i++)
		if ((rc = testspecs_load_path(*set, a->specs[i], &o)) < 0)
			err_prefix("--specs %s: ", a->specs[i]);
	specs_print_diags(stderr, &diags, false);
	testspecs_diags_finish(&diags);
	return rc;
}

int run__all(const struct run_args *a)
{
	struct spec_set *set = NULL;
	struct spec_resolver *r = NULL;
	struct spec_case_list list;
	testspecs_cases_init(&list);
	int rc = load_specs(a, &set);
	if (!rc)
		rc = testspecs_resolver_create(&r, set);
	if (!rc)
		rc = exec_collect_cases(&list, set, r, a->tier);
	if (!rc)
		rc = run__execute(a, &list);
	testspecs_cases_finish(&list);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
	return rc;
}

/* ---- a selection ---- */

static int read_changes(const struct run_args *a, struct change_set **cs)
{
	if (!a->diff)
		return selector_changes_from_git(cs, a->repo, a->base, a->head, NULL);
	char *data = NULL;
	size_t len = 0;
	int rc = strcmp(a->diff, "-") == 0
		     ? fs_read_file(&data, &len, "/dev/stdin", SELECT_DIFF_INPUT_MAX)
		     : fs_read_file(&data, &len, a->diff, SELECT_DIFF_INPUT_MAX);
	if (rc)
		return err_prefix("--diff %s: ", a->diff);
	rc = selector_changes_from_udiff(cs, data, len, a->diff);
	free(data);
	return rc;
}

/* Selects, expands and runs the cases (while the spec set they point into is alive). */
static int select_and_expand(const struct run_args *a, struct spec_case_list *list)
{
	struct change_set *cs = NULL;
	struct spec_set *set = NULL;
	struct spec_resolver *r = NULL;
	struct front f = { 0 };
	struct select_report rep;
	selector_report_init(&rep);
	int rc = read_changes(a, &cs);
	if (!rc)
		rc = load_specs(a, &set);
	if (!rc)
		rc = testspecs_resolver_create(&r, set);
	if (!rc)
		rc = a->diff ? front_catalogs_diff(&f, a->repo, cs, a->cache)
			     : front_catalogs(&f, a->repo, a->base, a->head, a->cache);
	if (!rc)
		rc = front_impact(&f, cs);
	if (!rc) {
		struct select_stage3_opts o3 = { .tier = a->tier,
						 .catalog_ids = f.ids,
						 .n_catalog = f.head->n_tests,
						 .opdb = f.head };
		rc = selector_stage3_run(&rep, set, r, f.cands, f.n_cands, &o3);
	}
	if (!rc)
		rc = selector_stage4_run(&rep, NULL, NULL, &a->budget, 0);
	if (!rc)
		rc = front_expand_scheduled(&f, &rep, set, r, a->tier, list);
	/* now: the cases point into the spec set (their kernels, their locations) */
	if (!rc)
		rc = run__execute(a, list);
	selector_report_finish(&rep);
	front_finish(&f);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
	selector_change_set_destroy(cs);
	return rc;
}

int run__selection(const struct run_args *a)
{
	struct spec_case_list list;
	testspecs_cases_init(&list);
	git_libgit2_init();
	int rc = select_and_expand(a, &list);
	git_libgit2_shutdown();
	testspecs_cases_finish(&list);
	return rc;
}

/* ---- history and adapters ---- */

int run__history(const char *path, json_t **json, struct exec_duration **out, size_t *n)
{
	*json = NULL;
	*out = NULL;
	*n = 0;
	if (!path)
		return 0;
	struct select_history h = { 0 };
	int rc = front_history_load(path, json, &h);
	if (rc == 0 && !(*out = calloc(h.n + 1, sizeof(**out))))
		rc = err_set(ERR_NOMEM, "--history %s", path);
	for (size_t i = 0; rc == 0 && i < h.n; i++)
		(*out)[(*n)++] = (struct exec_duration){ h.v[i].id, h.v[i].mean_seconds };
	free(h.v);
	return rc;
}

int run__adapters(const struct run_args *a, struct exec_adapters **out)
{
	if (a->adapters)
		return exec_adapters_load(out, a->adapters);
	return exec_adapters_load_beside(out, a->specs, a->n_specs);
}
