/* Shared by the dashboard-client tests: a fake clock whose sleeps advance time at once (so a
 * day of backoff takes microseconds), the fixture directory, and job loading. */
#ifndef TESTS_UNIT_DASHBOARD_CLIENT_HELPERS_H
#define TESTS_UNIT_DASHBOARD_CLIENT_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "dashboard-client/job.h"
#include "dashboard-client/retry.h"

struct fake_clock {
	int64_t now;   /* wall ms */
	int64_t slept; /* total ms slept */
	uint64_t rnd;
};

struct dc_clock fake_clock(struct fake_clock *f);

/* DC_TEST_FIXTURES "/" name into out. */
void fixture_path(char *out, size_t size, const char *name);

/* Loads tests/fixtures/dashboard/<name> into job; aborts the test on failure. */
void load_job(struct dc_job *job, const char *name);
void load_results(struct dc_results *r, const char *name);

/* A job.json text for job number i of a pull request (distinct job_name and check_run_id). */
void job_text(char *out, size_t size, int i);

/* Reads a whole file (test-side: aborts on failure). malloc()ed. */
char *slurp(const char *path, size_t *len);

#endif
