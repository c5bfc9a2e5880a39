/* job.json and results.jsonl: what is accepted, and that every refusal names the file and the
 * line or the field. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/limits.h"
#include "dashboard-client/job.h"
#include "helpers.h"

static void expect_job_error(const char *text, const char *needle)
{
	struct dc_job job;
	int rc = dc_job_parse(&job, "job.json", text, strlen(text));
	cr_assert_neq(rc, 0, "accepted: %s", text);
	cr_assert(strstr(err_last(), needle) != NULL, "error '%s' lacks '%s'", err_last(), needle);
	cr_assert(strncmp(err_last(), "job.json", 8) == 0, "error '%s' does not name the file",
		  err_last());
}

Test(job, fixtures_parse)
{
	struct dc_job job;
	load_job(&job, "job-pr.json");
	cr_assert_eq(job.event, DC_EVENT_PULL_REQUEST);
	cr_assert_str_eq(job.run_id, "1001"); /* a number in job.json, a string on the wire */
	cr_assert(job.has_queue_time && !job.has_execution_time);
	dc_job_finish(&job);
	load_job(&job, "job-nightly.json");
	cr_assert_eq(job.event, DC_EVENT_NIGHTLY);
	cr_assert_str_eq(job.delivery_id, "fedcba9876543210fedcba9876543210fedcba98");
	cr_assert_str_eq(json_string_value(json_object_get(job.payload, "head_sha")),
			 job.delivery_id);
	dc_job_finish(&job);
}

Test(job, refusals)
{
	char ok[2048];
	job_text(ok, sizeof(ok), 7);
	struct dc_job job;
	cr_assert_eq(dc_job_parse(&job, "job.json", ok, strlen(ok)), 0, "%s", err_last());
	dc_job_finish(&job);

	expect_job_error("{\"event_type\": \"push\",", "line 1");
	expect_job_error("[]", "not a JSON object");
	expect_job_error("{\"event_type\":\"merge\"}", "event_type 'merge'");
	expect_job_error("{\"event_type\":\"push\",\"delivery_id\":\"x\",\"payload\":[]}",
			 "payload must be");
	expect_job_error("{\"event_type\":\"push\",\"delivery_id\":\"x\",\"payload\":{},"
			 "\"workflow\":{\"name\":\"w\"}}",
			 "workflow.url is missing");
	expect_job_error("{\"event_type\":\"nightly\",\"head_sha\":\"XYZ\",\"workflow\":{}}",
			 "head_sha must be lowercase hex");
	expect_job_error("{\"event_type\":\"nightly\",\"delivery_id\":\"aa\",\"head_sha\":\"bb\"}",
			 "must be its head_sha");

	/* The same good text with one field broken at a time. */
	struct {
		const char *from, *to, *needle;
	} edits[] = {
		{ "\"2026-10-01T12:00:00Z\"", "\"yesterday\"", "workflow.started_at" },
		{ "\"job-7\"", "\"\"", "workflow.job_name is empty" },
		{ "\"job-7\"", "17.5", "workflow.job_name must be a string" },
		{ "\"L2\"", "\"L9\"", "downstream_repo_level" },
		{ "\"1\"", "-1", "workflow.run_attempt must be a string or a non-negative" },
	};
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		char bad[2048];
		const char *at = strstr(ok, edits[i].from);
		cr_assert_not_null(at);
		snprintf(bad, sizeof(bad), "%.*s%s%s", (int)(at - ok), ok, edits[i].to,
			 at + strlen(edits[i].from));
		expect_job_error(bad, edits[i].needle);
	}
}

static void expect_results_error(const char *text, const char *needle)
{
	struct dc_results r = { 0 };
	int rc = dc_results_parse(&r, "results.jsonl", text, strlen(text));
	cr_assert_neq(rc, 0, "accepted: %s", text);
	cr_assert(strstr(err_last(), needle) != NULL, "error '%s' lacks '%s'", err_last(), needle);
	dc_results_finish(&r);
}

Test(results, refusals_name_the_line)
{
	const char *good = "{\"name\":\"a\",\"outcome\":\"passed\"}\n";
	char text[512];
	snprintf(text, sizeof(text), "%s%s{\"name\":\"b\",\"outcome\":\"exploded\"}\n", good, good);
	expect_results_error(text, "results.jsonl:3: outcome 'exploded'");
	snprintf(text, sizeof(text), "%s{\"name\":\"b\"", good);
	expect_results_error(text, "results.jsonl:2: JSON error");
	expect_results_error("{\"outcome\":\"passed\"}", "results.jsonl:1: 'name' must be");
	expect_results_error("[1]", "results.jsonl:1: not a JSON object");
	expect_results_error("{\"name\":\"a\",\"outcome\":\"failed\",\"message\":5}",
			     "results.jsonl:1: 'message' must be a string");
	expect_results_error("{\"name\":\"a\",\"outcome\":\"passed\",\"time\":\"1s\"}",
			     "'time' must be a number");
}

Test(results, blank_lines_and_no_final_newline)
{
	const char *text = "\n{\"name\":\"a\",\"outcome\":\"passed\"}\n  \n"
			   "{\"name\":\"b\",\"outcome\":\"skipped\"}";
	struct dc_results r = { 0 };
	cr_assert_eq(dc_results_parse(&r, "r", text, strlen(text)), 0, "%s", err_last());
	cr_assert_eq(r.passed, 1);
	cr_assert_eq(r.skipped, 1);
	cr_assert_eq(r.lines, 2);
	dc_results_finish(&r);
}

/* The file reader agrees with the text parser, and a line past the bound names its number. */
Test(results, file_reader)
{
	char path[] = "/tmp/dc-results-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	for (int i = 0; i < 5000; i++)
		fprintf(f, "{\"name\":\"t%d\",\"outcome\":\"%s\"}\n", i,
			i % 3 ? "passed" : "failed");
	fputc('{', f);
	for (size_t i = 0; i < DC_RESULTS_LINE_MAX + 10; i++)
		fputc(' ', f);
	fputs("}\n", f);
	fclose(f);
	struct dc_results r = { 0 };
	int rc = dc_results_load(&r, path);
	cr_assert_eq(rc, ERR_LIMIT);
	cr_assert(strstr(err_last(), ":5001: a line of more than") != NULL, "%s", err_last());
	cr_assert_eq(r.lines, 5000);
	cr_assert_eq(r.failed, 1667);
	cr_assert_eq(r.n_failed_tests, HUD_FAILED_TESTS_MAX);
	dc_results_finish(&r);
	unlink(path);
	cr_assert_eq(dc_results_load(&r, path), ERR_NOTFOUND);
}
