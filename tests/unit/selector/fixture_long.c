/* The `pytorch` scale of the synthetic upstream is PyTorch-sized (docs/fixture.md): at least 20,000
 * files, 1,500 test files, 60,000 tests and 3,000 commits, with merges. Long (tens of seconds):
 * run with `meson test -C build --suite long`. */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "selector/fixture.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

Test(fixture_long, pytorch_scale_counts, .timeout = 600)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/fixture-long-XXXXXX");
	cr_assert(mkdtemp(dir));
	struct selector_fixture_opts o = {
		.out = dir, .scale = SELECTOR_FIXTURE_PYTORCH, .seed = 7, .no_checkout = 1
	};
	struct selector_fixture_stats st;
	int rc = selector_fixture_generate(&o, &st);
	nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS);
	cr_assert_eq(rc, 0, "%s", err_last());
	cr_assert_geq(st.files, 20000);
	cr_assert_eq(st.test_files, 1500);
	cr_assert_geq(st.tests, 60000);
	cr_assert_eq(st.commits, 3000);
	cr_assert_geq(st.merges, 50);
	cr_assert_geq(st.fallback_commits, 100);
}
