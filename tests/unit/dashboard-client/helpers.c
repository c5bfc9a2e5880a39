/* See helpers.h. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"

static int64_t fake_now(void *ctx)
{
	return ((struct fake_clock *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	struct fake_clock *f = ctx;
	if (ms > 0) {
		f->now += ms;
		f->slept += ms;
	}
}

static uint64_t fake_random(void *ctx)
{
	return ((struct fake_clock *)ctx)->rnd++;
}

struct dc_clock fake_clock(struct fake_clock *f)
{
	if (f->now == 0)
		f->now = 1790000000000LL; /* some day in 2026 */
	return (struct dc_clock){ fake_now, fake_sleep, fake_random, f };
}

void fixture_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", DC_TEST_FIXTURES, name);
}

void load_job(struct dc_job *job, const char *name)
{
	char path[1024];
	fixture_path(path, sizeof(path), name);
	int rc = dc_job_load(job, path);
	cr_assert_eq(rc, 0, "%s: %s", name, err_last());
}

void load_results(struct dc_results *r, const char *name)
{
	char path[1024];
	fixture_path(path, sizeof(path), name);
	memset(r, 0, sizeof(*r));
	int rc = dc_results_load(r, path);
	cr_assert_eq(rc, 0, "%s: %s", name, err_last());
}

void job_text(char *out, size_t size, int i)
{
	snprintf(out, size,
		 "{\"event_type\":\"push\",\"delivery_id\":\"d-%d\","
		 "\"payload\":{\"ref\":\"refs/heads/main\",\"repository\":{\"full_name\":"
		 "\"pytorch/pytorch\"}},"
		 "\"workflow\":{\"name\":\"spyre-ci\",\"url\":\"https://ci.example.invalid/r/%d\","
		 "\"run_id\":\"%d\",\"run_attempt\":\"1\",\"job_name\":\"job-%d\","
		 "\"check_run_id\":\"%d\",\"started_at\":\"2026-10-01T12:00:00Z\","
		 "\"completed_at\":\"2026-10-01T12:01:00Z\","
		 "\"artifact_url\":\"https://ci.example.invalid/a/%d\"},"
		 "\"hud\":{\"verified_repo\":\"torch-spyre/torch-spyre\","
		 "\"downstream_repo_level\":\"L2\"}}",
		 i, i, 1000 + i, i, 50000 + i, i);
}

char *slurp(const char *path, size_t *len)
{
	char *data = NULL;
	size_t n = 0;
	int rc = fs_read_file(&data, &n, path, 64u << 20);
	cr_assert_eq(rc, 0, "%s: %s", path, err_last());
	if (len)
		*len = n;
	return data;
}
