/* The encoders against golden files (one per message kind: CRCR in_progress, completed, a
 * nightly completed; HUD in_progress and completed), HUD's caps on failed_tests_json, UTF-8 cuts
 * and the idempotency keys. Set DC_UPDATE_GOLDEN=1 to rewrite the goldens after a deliberate
 * change (and read the diff). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "dashboard-client/encode.h"
#include "helpers.h"

static void check_golden(const char *name, const char *body)
{
	char path[1024];
	fixture_path(path, sizeof(path), name);
	size_t len = strlen(body);
	if (getenv("DC_UPDATE_GOLDEN")) {
		char *text = malloc(len + 2);
		memcpy(text, body, len);
		text[len] = '\n';
		cr_assert_eq(fs_atomic_write(path, text, len + 1, 0644), 0);
		free(text);
	}
	size_t glen = 0;
	char *golden = slurp(path, &glen);
	cr_assert(glen == len + 1 && golden[len] == '\n' && memcmp(golden, body, len) == 0,
		  "%s differs from the encoder's output:\n%s", name, body);
	free(golden);
}

static void golden_pair(const char *job_file, enum dc_format f, const char *first,
			const char *second)
{
	struct dc_job job;
	struct dc_results r;
	load_job(&job, job_file);
	load_results(&r, "results.jsonl");
	struct dc_message *ms = NULL;
	size_t n = 0;
	cr_assert_eq(dc_job_messages(&ms, &n, &job, &r, f), 0, "%s", err_last());
	cr_assert_eq(n, first ? 2u : 1u);
	size_t k = 0;
	if (first) {
		cr_assert_eq(ms[k].seq, 0);
		check_golden(first, ms[k++].body);
	}
	cr_assert_eq(ms[k].seq, 1);
	check_golden(second, ms[k].body);
	for (size_t i = 0; i < n; i++)
		dc_message_finish(&ms[i]);
	free(ms);
	dc_results_finish(&r);
	dc_job_finish(&job);
}

Test(encode, golden_crcr)
{
	golden_pair("job-pr.json", DC_FORMAT_CRCR, "crcr-in_progress.json", "crcr-completed.json");
}

Test(encode, golden_crcr_nightly)
{
	golden_pair("job-nightly.json", DC_FORMAT_CRCR, NULL, "crcr-nightly-completed.json");
}

Test(encode, golden_hud)
{
	golden_pair("job-pr.json", DC_FORMAT_HUD, "hud-in_progress.json", "hud-completed.json");
}

Test(encode, counts_and_conclusion)
{
	struct dc_job job;
	struct dc_results r;
	load_job(&job, "job-pr.json");
	load_results(&r, "results.jsonl");
	/* passed + xpassed; failed, timed_out, crashed, error; skipped + xfailed */
	cr_assert_eq(r.passed, 2);
	cr_assert_eq(r.failed, 4);
	cr_assert_eq(r.skipped, 2);
	cr_assert_eq(r.n_failed_tests, 4);
	cr_assert_str_eq(dc_job_conclusion(&job, &r), "failure");
	struct dc_results none = { 0 };
	cr_assert_str_eq(dc_job_conclusion(&job, &none), "success");
	dc_results_finish(&r);
	dc_job_finish(&job);
}

Test(encode, periodic_has_no_in_progress)
{
	struct dc_job job;
	load_job(&job, "job-nightly.json");
	json_t *cb = NULL;
	cr_assert_neq(dc_callback_build(&cb, &job, DC_STATUS_IN_PROGRESS, NULL), 0);
	cr_assert_null(cb);
	dc_job_finish(&job);
}

Test(encode, utf8_cut)
{
	/* "é" is 2 bytes, "€" 3, "😀" 4. */
	char *s = dc_utf8_cut("ab\xc3\xa9", 4, 3);
	cr_assert_str_eq(s, "ab");
	free(s);
	s = dc_utf8_cut("a\xe2\x82\xac", 4, 3);
	cr_assert_str_eq(s, "a");
	free(s);
	s = dc_utf8_cut("a\xe2\x82\xac", 4, 4);
	cr_assert_str_eq(s, "a\xe2\x82\xac");
	free(s);
	s = dc_utf8_cut("\xf0\x9f\x98\x80z", 5, 4);
	cr_assert_str_eq(s, "\xf0\x9f\x98\x80");
	free(s);
	s = dc_utf8_cut("\xf0\x9f\x98\x80", 4, 2);
	cr_assert_str_eq(s, "");
	free(s);
}

/* True when `s` is valid UTF-8 (what a truncation must never break). */
static bool valid_utf8(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len); /* Jansson refuses invalid UTF-8 */
	bool ok = j != NULL;
	json_decref(j);
	return ok;
}

/* 1,500 failures with long multi-byte messages and traces: at most 1,000 entries, message
 * <= 1 KiB and stacktrace <= 4 KiB, all valid UTF-8, the body under 2 MiB. */
Test(encode, failed_tests_caps)
{
	struct dc_job job;
	load_job(&job, "job-pr.json");
	struct dc_buf {
		char *p;
		size_t n;
	} lines = { 0 };
	FILE *f = open_memstream(&lines.p, &lines.n);
	for (int i = 0; i < 1500; i++) {
		fprintf(f,
			"{\"name\":\"test_%d\",\"classname\":\"C\",\"file\":\"t.py\",\"outcome\":"
			"\"failed\",\"message\":\"",
			i);
		for (int k = 0; k < 700; k++)
			fputs("\xe2\x82\xac", f); /* 2,100 bytes of euro signs */
		fputs("\",\"stacktrace\":\"", f);
		for (int k = 0; k < 2000; k++)
			fputs("\xc3\xa9\\n", f); /* 4,000 bytes of é + 2,000 newlines */
		fputs("\"}\n", f);
	}
	fclose(f);
	struct dc_results r = { 0 };
	cr_assert_eq(dc_results_parse(&r, "big.jsonl", lines.p, lines.n), 0, "%s", err_last());
	free(lines.p);
	cr_assert_eq(r.failed, 1500);
	cr_assert_leq(r.n_failed_tests, (size_t)HUD_FAILED_TESTS_MAX);

	struct dc_message *ms = NULL;
	size_t n = 0;
	cr_assert_eq(dc_job_messages(&ms, &n, &job, &r, DC_FORMAT_HUD), 0, "%s", err_last());
	cr_assert_leq(ms[1].body_len, (size_t)HUD_BODY_MAX);
	json_t *env = jx_loadb(ms[1].body, ms[1].body_len, HUD_BODY_MAX);
	cr_assert_not_null(env);
	const char *ft = jx_get_str(env, "untrusted.callback_payload.workflow.failed_tests_json");
	cr_assert_not_null(ft);
	json_t *arr = jx_loadb(ft, strlen(ft), HUD_BODY_MAX);
	cr_assert(json_is_array(arr));
	size_t entries = json_array_size(arr);
	cr_assert_gt(entries, 0);
	cr_assert_leq(entries, (size_t)HUD_FAILED_TESTS_MAX);
	for (size_t i = 0; i < entries; i++) {
		json_t *e = json_array_get(arr, i);
		json_t *m = json_object_get(e, "message"), *t = json_object_get(e, "stacktrace");
		cr_assert_leq(json_string_length(m), (size_t)HUD_FAILED_MESSAGE_MAX);
		cr_assert_leq(json_string_length(t), (size_t)HUD_FAILED_TRACE_MAX);
		cr_assert(valid_utf8(json_string_value(m), json_string_length(m)));
		cr_assert_gt(json_string_length(m), HUD_FAILED_MESSAGE_MAX - 3);
	}
	/* The count of failures stays the true one, whatever the list holds. */
	json_int_t failed = json_integer_value(
	    jx_get(env, "untrusted.callback_payload.workflow.test_results.failed"));
	cr_assert_eq(failed, 1500);
	json_decref(arr);
	json_decref(env);
	for (size_t i = 0; i < n; i++)
		dc_message_finish(&ms[i]);
	free(ms);
	dc_results_finish(&r);
	dc_job_finish(&job);
}

Test(encode, idempotency_keys)
{
	char text[2048];
	struct dc_job a, b;
	job_text(text, sizeof(text), 1);
	cr_assert_eq(dc_job_parse(&a, "a", text, strlen(text)), 0, "%s", err_last());
	job_text(text, sizeof(text), 2);
	cr_assert_eq(dc_job_parse(&b, "b", text, strlen(text)), 0, "%s", err_last());
	struct dc_results r = { 0 };
	struct dc_message *ma, *mb, *mh;
	size_t na, nb, nh;
	cr_assert_eq(dc_job_messages(&ma, &na, &a, &r, DC_FORMAT_CRCR), 0);
	cr_assert_eq(dc_job_messages(&mb, &nb, &b, &r, DC_FORMAT_CRCR), 0);
	cr_assert_eq(dc_job_messages(&mh, &nh, &a, &r, DC_FORMAT_HUD), 0);
	cr_assert_str_neq(ma[0].key, ma[1].key);
	cr_assert_str_eq(ma[0].job_key, ma[1].job_key);
	cr_assert_str_neq(ma[0].key, mb[0].key);
	cr_assert_str_neq(ma[0].job_key, mb[0].job_key);
	cr_assert_str_neq(ma[0].key, mh[0].key);
	cr_assert_eq(strncmp(ma[0].key, "sci1-", 5), 0);
	cr_assert_eq(strlen(ma[0].key), 37);
	/* The same job encoded again has the same keys and bytes. */
	struct dc_message *m2;
	size_t n2;
	cr_assert_eq(dc_job_messages(&m2, &n2, &a, &r, DC_FORMAT_CRCR), 0);
	cr_assert_str_eq(m2[1].key, ma[1].key);
	cr_assert_str_eq(m2[1].body, ma[1].body);
	struct dc_message *all[] = { ma, mb, mh, m2 };
	for (int k = 0; k < 4; k++) {
		for (int i = 0; i < 2; i++)
			dc_message_finish(&all[k][i]);
		free(all[k]);
	}
	dc_job_finish(&a);
	dc_job_finish(&b);
}
