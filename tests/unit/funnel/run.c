/* funnel_run and funnel_results_write: the scheduled cases through the executors' pool, cut to a
 * shard when asked, a stop request honoured, and the report files a dashboard reads. The shard
 * and stop clauses use a runner that only answers (pool.h's exec_runner_fn); the files come
 * from a run of real cases on the emulator (small shapes: well under a second). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "funnel/funnel.h"
#include "upstream.h"

struct fixture {
	struct funnel_specs *specs;
	struct funnel_cache *cache;
	struct funnel_selection sel;
};

/* base..HEAD's selection; NULL: the empty tree (every test of the upstream). */
static void open_fixture(struct fixture *f, const char *base)
{
	f->specs = up_specs(NULL);
	cr_assert_eq(funnel_cache_create(&f->cache, NULL), 0, "%s", err_last());
	up_select(&f->sel, f->specs, f->cache, base, "HEAD", NULL);
	cr_assert_gt(f->sel.n_cases, 0);
}

static void close_fixture(struct fixture *f)
{
	funnel_selection_finish(&f->sel);
	funnel_cache_destroy(f->cache);
	funnel_specs_destroy(f->specs);
}

static void answer(const struct exec_case *c, struct exec_result *r, int fd, void *ctx)
{
	(void)fd, (void)ctx;
	memcpy(r->id, c->id, sizeof r->id);
	r->outcome = EXEC_PASSED;
	r->first_outcome = EXEC_PASSED;
	r->attempts = 1;
}

struct seen {
	size_t starts, n_start, progress, last_done, last_total;
};

static void on_start(void *ctx, size_t n)
{
	struct seen *s = ctx;
	s->starts++;
	s->n_start = n;
}

static void on_progress(void *ctx, const struct exec_progress *p)
{
	struct seen *s = ctx;
	s->progress++;
	s->last_done = p->done;
	s->last_total = p->total;
}

static struct funnel_run_opts answering(struct seen *s)
{
	return (struct funnel_run_opts){ .jobs = 2,
					 .retries = 0,
					 .runner = answer,
					 .on_start = on_start,
					 .progress = on_progress,
					 .progress_ctx = s };
}

static int by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

Test(funnel_run, every_case_gets_its_result_at_its_index)
{
	struct fixture f;
	open_fixture(&f, "HEAD~2");
	struct seen s = { 0 };
	struct funnel_run_opts o = answering(&s);
	struct funnel_results r;
	cr_assert_eq(funnel_run(&r, f.sel.cases, f.sel.n_cases, &o), 0, "%s", err_last());
	cr_expect(!r.stopped);
	cr_assert_eq(r.n, f.sel.n_cases);
	for (size_t i = 0; i < r.n; i++) {
		cr_expect_str_eq(r.cases[i].id, f.sel.cases[i]->id, "the input order");
		cr_expect_str_eq(r.res[i].id, r.cases[i].id, "result %zu is its case's", i);
	}
	cr_expect_eq(r.summary.total, r.n);
	cr_expect_eq(r.summary.count[EXEC_PASSED], r.n);
	cr_expect_eq(s.starts, 1);
	cr_expect_eq(s.n_start, r.n);
	cr_expect_eq(s.progress, r.n, "progress after each result");
	cr_expect(s.last_done == r.n && s.last_total == r.n);
	funnel_results_finish(&r);
	close_fixture(&f);
}

Test(funnel_run, a_stop_already_asked_runs_nothing_and_returns_0)
{
	struct fixture f;
	open_fixture(&f, "HEAD~2");
	struct seen s = { 0 };
	volatile sig_atomic_t stop = 1;
	struct funnel_run_opts o = answering(&s);
	o.stop = &stop;
	struct funnel_results r;
	cr_assert_eq(funnel_run(&r, f.sel.cases, f.sel.n_cases, &o), 0, "%s", err_last());
	cr_expect(r.stopped);
	cr_assert_eq(r.n, f.sel.n_cases, "every case is accounted for");
	for (size_t i = 0; i < r.n; i++)
		cr_expect_eq(r.res[i].outcome, EXEC_NOT_RUN, "case %zu not run", i);
	cr_expect_eq(r.summary.count[EXEC_NOT_RUN], r.n);
	cr_expect_eq(r.summary.total, r.n);
	funnel_results_finish(&r);
	close_fixture(&f);
}

Test(funnel_run, two_shards_run_every_case_once_keeping_each_tests_cases_together)
{
	struct fixture f;
	open_fixture(&f, NULL);
	size_t n = f.sel.n_cases, got = 0;
	const char **want = calloc(n, sizeof *want), **ran = calloc(n + 1, sizeof *ran);
	cr_assert(want && ran);
	for (size_t i = 0; i < n; i++)
		want[i] = f.sel.cases[i]->id;
	struct funnel_results r[2];
	for (int k = 0; k < 2; k++) {
		struct seen s = { 0 };
		struct funnel_run_opts o = answering(&s);
		o.shard_index = k + 1;
		o.shard_count = 2;
		cr_assert_eq(funnel_run(&r[k], f.sel.cases, n, &o), 0, "%s", err_last());
		cr_expect_eq(s.starts, 1, "on_start once");
		cr_expect_eq(s.n_start, r[k].n, "with the shard's count");
		cr_expect_gt(r[k].n, 0, "shard %d/2 has cases", k + 1);
		cr_expect_lt(r[k].n, n, "shard %d/2 has not every case", k + 1);
		for (size_t i = 0; i < r[k].n; i++) {
			cr_assert_lt(got, n + 1, "no more cases than given");
			cr_expect_str_eq(r[k].res[i].id, r[k].cases[i].id);
			ran[got++] = r[k].cases[i].id;
		}
	}
	cr_assert_eq(got, n, "every case once");
	qsort(want, n, sizeof *want, by_id);
	qsort(ran, n, sizeof *ran, by_id);
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(ran[i], want[i], "case ids");
	for (size_t i = 0; i < r[0].n; i++)
		for (size_t j = 0; j < r[1].n; j++)
			cr_expect_str_neq(r[0].cases[i].test_id, r[1].cases[j].test_id,
					  "%s has cases in both shards", r[0].cases[i].test_id);
	funnel_results_finish(&r[0]);
	funnel_results_finish(&r[1]);
	free(want);
	free(ran);
	close_fixture(&f);
}

Test(funnel_run, no_case_is_an_empty_run)
{
	struct seen s = { 0 };
	struct funnel_run_opts o = answering(&s);
	struct funnel_results r;
	cr_assert_eq(funnel_run(&r, NULL, 0, &o), 0, "%s", err_last());
	cr_expect_eq(r.n, 0);
	cr_expect(!r.stopped);
	cr_expect_eq(s.starts, 1);
	cr_expect_eq(s.n_start, 0);
	funnel_results_finish(&r);
	funnel_results_finish(&r); /* again: harmless */
}

/* ---- the report files ---- */

static size_t lines_of(const char *path)
{
	char *text = NULL;
	size_t len = 0, n = 0;
	cr_assert_eq(fs_read_file(&text, &len, path, 1 << 24), 0, "%s", err_last());
	for (char *p = text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		json_t *j = json_loads(p, 0, NULL);
		cr_expect(json_is_object(j), "line %zu of %s is an object", n + 1, path);
		json_decref(j);
		n++;
	}
	free(text);
	return n;
}

static void expect_file(const char *dir, const char *name)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_expect(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0, "%s", path);
}

Test(funnel_results, written_into_a_directory_made_when_missing)
{
	struct fixture f;
	open_fixture(&f, "HEAD~2");
	struct funnel_run_opts o = { .jobs = 2, .retries = 0 }; /* the emulator, for real */
	struct funnel_results r;
	cr_assert_eq(funnel_run(&r, f.sel.cases, f.sel.n_cases, &o), 0, "%s", err_last());
	cr_expect_eq(r.summary.count[EXEC_NOT_RUN], 0);
	char dir[64], out[96], path[128];
	tmp_make(dir, sizeof dir, "results");
	snprintf(out, sizeof out, "%s/out", dir);
	cr_assert_eq(funnel_results_write(&r, out), 0, "%s", err_last());
	expect_file(out, "junit.xml");
	expect_file(out, "results.jsonl");
	expect_file(out, "summary.json");
	snprintf(path, sizeof path, "%s/results.jsonl", out);
	cr_expect_eq(lines_of(path), r.n, "one line per case");
	snprintf(path, sizeof path, "%s/summary.json", out);
	json_t *sum = json_load_file(path, 0, NULL);
	cr_expect_eq(json_integer_value(json_object_get(sum, "total")), (json_int_t)r.n);
	json_decref(sum);
	cr_assert_eq(funnel_results_write(&r, out), 0, "again, over the first: %s", err_last());
	funnel_results_finish(&r);
	tmp_remove(dir);
	close_fixture(&f);
}

Test(funnel_results, an_unwritable_directory_is_io_naming_the_path)
{
	struct funnel_results r = { 0 };
	char dir[64], file[96], under[128];
	tmp_make(dir, sizeof dir, "results");
	tmp_write(file, sizeof file, dir, "file", "not a directory\n");
	snprintf(under, sizeof under, "%s/out", file);
	const char *bad[] = { under, file }; /* under a file; a file itself */
	for (size_t i = 0; i < 2; i++) {
		cr_expect_eq(funnel_results_write(&r, bad[i]), ERR_IO, "%s: %s", bad[i],
			     err_last());
		cr_expect(strstr(err_last(), bad[i]), "names %s: %s", bad[i], err_last());
	}
	tmp_remove(dir);
}
