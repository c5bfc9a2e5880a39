/* funnel_history_load: a --history file becomes stage 4's history (sorted for lookup) and the
 * shard plan's recorded durations, one of each per entry; no file is an empty history; a bad
 * file or entry is ERR_INVAL naming the file (and the entry); a loaded history reaches stage 4. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "funnel/funnel.h"
#include "upstream.h"

struct fixture {
	char dir[64], path[128];
	struct funnel_history h;
};

static int load(struct fixture *f, const char *text)
{
	tmp_make(f->dir, sizeof f->dir, "history");
	tmp_write(f->path, sizeof f->path, f->dir, "history.json", text);
	err_clear(); /* a detail after a load that succeeded is no stale one */
	return funnel_history_load(&f->h, f->path);
}

static void close_fixture(struct fixture *f)
{
	funnel_history_finish(&f->h);
	tmp_remove(f->dir);
}

static void expect_empty(const struct funnel_history *h)
{
	cr_expect_null(h->json);
	cr_expect_eq(h->h.n, 0);
	cr_expect_null(h->h.v);
	cr_expect_eq(h->n_durations, 0);
	cr_expect_null(h->durations);
}

Test(funnel_history, no_path_is_an_empty_history)
{
	struct funnel_history h;
	cr_assert_eq(funnel_history_load(&h, NULL), 0);
	expect_empty(&h);
	cr_expect_null(selector_history_find(&h.h, "test/a.py::A::test_a"));
	funnel_history_finish(&h);
	funnel_history_finish(&h); /* again: harmless */
}

Test(funnel_history, every_entry_is_a_history_entry_and_a_duration)
{
	struct fixture f;
	int rc = load(&f, "{\"test/z.py::Z::test_z\": {\"mean_seconds\": 2.5},\n"
			  " \"test/a.py::A::test_a\": {\"failed_before\": true, \"flaky\": true},\n"
			  " \"test/m.py::M::test_m\": {\"flaky\": false, \"mean_seconds\": 0}}\n");
	cr_assert_eq(rc, 0, "%s", err_last());
	cr_expect_eq(f.h.h.n, 3);
	cr_expect_eq(f.h.n_durations, f.h.h.n, "one duration per entry");
	for (size_t i = 1; i < f.h.h.n; i++)
		cr_expect_lt(strcmp(f.h.h.v[i - 1].id, f.h.h.v[i].id), 0, "sorted by id");
	const struct select_history_entry *a =
	    selector_history_find(&f.h.h, "test/a.py::A::test_a");
	const struct select_history_entry *z =
	    selector_history_find(&f.h.h, "test/z.py::Z::test_z");
	cr_assert(a && z);
	cr_expect(a->failed_before && a->flaky && a->mean_seconds == 0);
	cr_expect(!z->failed_before && !z->flaky && z->mean_seconds == 2.5);
	double zs = -1;
	for (size_t i = 0; i < f.h.n_durations; i++)
		if (!strcmp(f.h.durations[i].id, "test/z.py::Z::test_z"))
			zs = f.h.durations[i].seconds;
	cr_expect_eq(zs, 2.5, "the shard plan's duration is the mean");
	close_fixture(&f);
}

Test(funnel_history, an_empty_object_is_an_empty_history)
{
	struct fixture f;
	cr_assert_eq(load(&f, "{}"), 0, "%s", err_last());
	cr_expect_eq(f.h.h.n, 0);
	cr_expect_eq(f.h.n_durations, 0);
	close_fixture(&f);
}

Test(funnel_history, a_bad_entry_is_inval_naming_the_file_and_the_id)
{
	static const char *const bad[] = {
		"{\"test/a.py::A::ok\": {}, \"test/b.py::B::bad\": 3}",
		"{\"test/b.py::B::bad\": {\"mean_seconds\": \"slow\"}}",
		"{\"test/b.py::B::bad\": {\"mean_seconds\": -1.5}}",
		"{\"test/b.py::B::bad\": {\"failed_before\": \"true\"}}",
		"{\"test/b.py::B::bad\": {\"flaky\": 1}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct fixture f;
		cr_expect_eq(load(&f, bad[i]), ERR_INVAL, "%s: %s", bad[i], err_last());
		cr_expect(strstr(err_last(), f.path), "names the file: %s", err_last());
		cr_expect(strstr(err_last(), "test/b.py::B::bad"), "names the entry: %s",
			  err_last());
		expect_empty(&f.h);
		close_fixture(&f);
	}
}

Test(funnel_history, a_bad_file_is_inval_naming_it)
{
	static const char *const bad[] = { "[\"test/a.py::A::test_a\"]", "{\"a\": ", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct fixture f;
		cr_expect_eq(load(&f, bad[i]), ERR_INVAL, "'%s': %s", bad[i], err_last());
		cr_expect(strstr(err_last(), f.path), "names the file: %s", err_last());
		expect_empty(&f.h);
		close_fixture(&f);
	}
}

Test(funnel_history, a_missing_file_is_an_error_naming_it)
{
	struct funnel_history h;
	const char *path = "/nonexistent/funnel/history.json";
	cr_expect_lt(funnel_history_load(&h, path), 0);
	cr_expect(strstr(err_last(), path), "%s", err_last());
	expect_empty(&h);
}

Test(funnel_history, a_loaded_history_reaches_stage_4)
{
	struct funnel_specs *specs = up_specs(NULL);
	struct funnel_cache *cache;
	cr_assert_eq(funnel_cache_create(&cache, NULL), 0);
	struct funnel_selection plain, with;
	up_select(&plain, specs, cache, "HEAD~2", "HEAD", NULL);
	size_t eligible = plain.rep.stages[3].in;
	cr_assert_geq(eligible, 2);
	const char *last = plain.rep.tests[eligible - 1].id; /* the last-ranked eligible test */
	char text[1024];
	snprintf(text, sizeof text, "{\"%s\": {\"failed_before\": true, \"mean_seconds\": 7.5}}",
		 last);
	struct fixture f;
	cr_assert_eq(load(&f, text), 0, "%s", err_last());
	struct funnel_select_opts o = { .history = &f.h.h };
	up_select(&with, specs, cache, "HEAD~2", "HEAD", &o);
	const struct select_test *t = selector_report_find(&with.rep, last);
	cr_assert_not_null(t);
	cr_expect(t->failed_before, "%s failed before", last);
	cr_expect_eq(t->seconds, 7.5, "its recorded duration is its cost");
	cr_expect_lt(t->rank, eligible, "a test that failed before ranks higher");
	expect_cases_follow_the_schedule(&with);
	funnel_selection_finish(&with);
	funnel_selection_finish(&plain);
	close_fixture(&f);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
}
