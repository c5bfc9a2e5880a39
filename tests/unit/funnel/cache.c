/* funnel_cache: what selections keep between them (the selector's blobs and catalogs) is exact.
 * A cache and specs kept across selections, as the daemon's workers keep them, and a cache
 * directory read by a later process give the selection a fresh start gives. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "funnel/funnel.h"
#include "upstream.h"

#define BASE "HEAD~2" /* upstream.h */

/* The selection of BASE..HEAD with specs and a cache of its own, as a first selection is; its
 * cases point into *specs, to be destroyed after it. */
static void select_fresh(struct funnel_selection *sel, struct funnel_specs **specs)
{
	*specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0, "%s", err_last());
	up_select(sel, *specs, cache, BASE, "HEAD", NULL);
	funnel_cache_destroy(cache);
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "%s", dir);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

Test(funnel_cache, a_kept_cache_selects_as_a_fresh_one)
{
	struct funnel_selection fresh;
	struct funnel_specs *fresh_specs, *specs = up_specs(NULL);
	select_fresh(&fresh, &fresh_specs);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	/* another job first: the cache and the drift memo hold the older revisions */
	struct funnel_selection other, first, second;
	up_select(&other, specs, cache, "HEAD~6", "HEAD~4", NULL);
	up_select(&first, specs, cache, BASE, "HEAD", NULL);
	up_select(&second, specs, cache, BASE, "HEAD", NULL);
	expect_same_selection(&fresh, &first, "fresh and kept cache");
	expect_same_selection(&fresh, &second, "fresh and kept cache, again");
	cr_expect_gt(fresh.n_cases, 0);
	funnel_selection_finish(&second);
	funnel_selection_finish(&first);
	funnel_selection_finish(&other);
	funnel_selection_finish(&fresh);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
	funnel_specs_destroy(fresh_specs);
}

Test(funnel_cache, a_cache_directory_serves_the_next_cache_the_same_selection)
{
	char dir[64], cdir[96];
	tmp_make(dir, sizeof dir, "cache");
	snprintf(cdir, sizeof cdir, "%s/blobs", dir); /* made when missing */
	struct funnel_selection fresh, written, read;
	struct funnel_specs *fresh_specs, *specs = up_specs(NULL);
	select_fresh(&fresh, &fresh_specs);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, cdir), 0, "%s", err_last());
	up_select(&written, specs, cache, BASE, "HEAD", NULL);
	funnel_cache_destroy(cache);
	cr_expect_gt(entries(cdir), 0, "the scanned blobs are kept in %s", cdir);
	cr_assert_eq(funnel_cache_create(&cache, cdir), 0, "%s", err_last());
	up_select(&read, specs, cache, BASE, "HEAD", NULL);
	funnel_cache_destroy(cache);
	expect_same_selection(&fresh, &written, "fresh and writing a cache directory");
	expect_same_selection(&fresh, &read, "fresh and reading a cache directory");
	funnel_selection_finish(&read);
	funnel_selection_finish(&written);
	funnel_selection_finish(&fresh);
	funnel_specs_destroy(specs);
	funnel_specs_destroy(fresh_specs);
	tmp_remove(dir);
}

Test(funnel_cache, a_cache_directory_that_cannot_be_made_is_an_error_naming_it)
{
	char dir[64], file[96], cdir[128];
	tmp_make(dir, sizeof dir, "cache");
	tmp_write(file, sizeof file, dir, "file", "not a directory\n");
	snprintf(cdir, sizeof cdir, "%s/blobs", file);
	struct funnel_cache *cache = (struct funnel_cache *)1;
	cr_expect_eq(funnel_cache_create(&cache, cdir), ERR_IO, "%s", err_last());
	cr_expect_null(cache);
	cr_expect(strstr(err_last(), cdir), "names it: %s", err_last());
	tmp_remove(dir);
}

Test(funnel_cache, destroy_accepts_null)
{
	funnel_cache_destroy(NULL);
}
