/* Tests of the built-in dashboard's pieces below HTTP: HTML escaping (html.c), the HUD envelope's
 * checks (hud_parse.c), and the receiver's store calls (store_dash.c): stored once by key or by
 * record and status, read back by commit, and a version 2 state directory migrated in place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "html.h"
#include "hud_parse.h"
#include "store.h"
#include "store_dash.h"
#include "tmpstate.h"

static char dir[256];

static void make_dir(void)
{
	tmpstate_make(dir, sizeof(dir), "dash");
}

static void remove_dir(void)
{
	tmpstate_remove(dir);
}

TestSuite(dashboard, .init = make_dir, .fini = remove_dir);

static char *escaped(const char *s, size_t cut)
{
	struct buf b;
	buf_init(&b, 1 << 20);
	cr_assert_eq(cut ? html_text_cut(&b, s, cut) : html_text(&b, s), 0);
	buf_append(&b, "", 0);
	return buf_detach(&b);
}

Test(dashboard, html_escapes_every_special_character)
{
	char *e = escaped("<script>alert('x')</script> & \"q\"", 0);
	cr_assert_str_eq(e, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
	free(e);
	e = escaped("plain", 0);
	cr_assert_str_eq(e, "plain");
	free(e);
}

Test(dashboard, html_cut_never_splits_a_character)
{
	/* "é" is two bytes: a cut after 2 bytes of "aé" must not keep half of it */
	char *e = escaped("a\xc3\xa9z", 2);
	cr_assert_str_eq(e, "a\xe2\x80\xa6");
	free(e);
	e = escaped("<<<<", 2);
	cr_assert_str_eq(e, "&lt;&lt;\xe2\x80\xa6");
	free(e);
}

Test(dashboard, url_values_are_percent_encoded)
{
	struct buf b;
	buf_init(&b, 1024);
	cr_assert_eq(html_url_value(&b, "a b&c=\"/"), 0);
	cr_assert_str_eq(buf_str(&b), "a%20b%26c%3D%22%2F");
	buf_finish(&b);
}

#define ENVELOPE(wf)                                                                               \
	"{\"trusted\":{\"verified_repo\":\"t/s\",\"ci_metrics\":{\"queue_time\":1.5}},"            \
	"\"untrusted\":{\"callback_payload\":{\"delivery_id\":\"d1\",\"payload\":{\"after\":"      \
	"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},\"workflow\":{" wf "}}}}"
#define GOOD_WF                                                                                    \
	"\"schema_version\":\"1\",\"status\":\"completed\",\"conclusion\":\"failure\","            \
	"\"name\":\"w\",\"job_name\":\"j\",\"check_run_id\":\"7\",\"run_id\":\"9\","               \
	"\"test_results\":{\"passed\":1,\"failed\":2,\"skipped\":3},"                              \
	"\"failed_tests_json\":\"[{\\\"name\\\":\\\"t1\\\"}]\""

static int parse(struct hud_msg *m, const char *body, char *why)
{
	return hud_msg_parse(m, body, strlen(body), NULL, why, 512);
}

Test(dashboard, envelope_accepted_with_its_keys)
{
	struct hud_msg m;
	char why[512];
	cr_assert_eq(parse(&m, ENVELOPE(GOOD_WF), why), 0, "%s", why);
	cr_assert_str_eq(m.rec.record_key, "t/s/d1/w/j/7");
	cr_assert_str_eq(m.rec.idem_key, "t/s/d1/w/j/7#completed");
	cr_assert_str_eq(m.rec.head_sha, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	cr_assert_eq(m.rec.failed, 2);
	cr_assert(m.rec.has_queue_time && !m.rec.has_execution_time);
	hud_msg_finish(&m);
}

Test(dashboard, envelope_refusals_name_the_field)
{
	static const struct {
		const char *body, *want;
	} bad[] = {
		{ "{", "malformed JSON" },
		{ "[]", "not an object" },
		{ ENVELOPE("\"schema_version\":\"2\""), "schema_version" },
		{ ENVELOPE("\"schema_version\":\"1\",\"status\":\"done\""), "status" },
		{ ENVELOPE("\"schema_version\":\"1\",\"status\":\"in_progress\",\"name\":\"w\""),
		  "job_name" },
		{ ENVELOPE("\"schema_version\":\"1\",\"status\":\"completed\",\"name\":\"w\","
			   "\"job_name\":\"j\",\"check_run_id\":\"7\",\"run_id\":\"9\""),
		  "conclusion" },
		{ ENVELOPE("\"schema_version\":\"1\",\"status\":\"in_progress\",\"name\":\"w\","
			   "\"job_name\":\"j\",\"check_run_id\":\"7\",\"run_id\":\"9\","
			   "\"test_results\":{\"passed\":-1,\"failed\":0,\"skipped\":0}"),
		  "test_results.passed" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hud_msg m;
		char why[512] = "";
		cr_assert_eq(parse(&m, bad[i].body, why), ERR_INVAL, "#%zu accepted", i);
		cr_assert(strstr(why, bad[i].want), "#%zu: '%s' does not name %s", i, why,
			  bad[i].want);
		hud_msg_finish(&m);
	}
}

static struct hud_record record(const char *key, const char *status)
{
	return (struct hud_record){ .idem_key = key,
				    .record_key = "r/1",
				    .status = status,
				    .delivery_id = "d",
				    .run_id = "1",
				    .job_name = "j",
				    .workflow = "w",
				    .head_sha = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				    .passed = 3,
				    .failed_tests = "[{\"name\":\"<b>\"}]" };
}

Test(dashboard, stored_once_by_key_or_by_record_and_status)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	bool dup;
	struct hud_record a = record("k1", "in_progress"), b = record("k2", "in_progress"),
			  c = record("k1", "completed"), d = record("k3", "completed");
	cr_assert_eq(store_hud_put(s, &dup, &a, 1), 0, "%s", err_last());
	cr_assert(!dup);
	cr_assert_eq(store_hud_put(s, &dup, &b, 2), 0);
	cr_assert(dup, "same record and status under another key");
	cr_assert_eq(store_hud_put(s, &dup, &c, 3), 0);
	cr_assert(dup, "same key");
	cr_assert_eq(store_hud_put(s, &dup, &d, 4), 0);
	cr_assert(!dup);
	json_t *v;
	cr_assert_eq(store_hud_json(s, &v, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 10), 0);
	cr_assert_eq(json_array_size(v), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "status")),
			 "completed");
	cr_assert(json_is_array(json_object_get(json_array_get(v, 0), "failed_tests")));
	json_decref(v);
	cr_assert_eq(store_hud_json(s, &v, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 10), 0);
	cr_assert_eq(json_array_size(v), 0);
	json_decref(v);
	store_close(s);
}

Test(dashboard, version_2_migrated_in_place)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open_at(&s, dir, 2), 0, "%s", err_last());
	struct job_spec j = { .event = "push",
			      .ref = "refs/heads/main",
			      .head = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			      .tip_key = "push:a" };
	struct intake_item it = { .ids = { "d1" }, .n_ids = 1, .event = "push", .job = &j };
	cr_assert_eq(s->ops->intake(s, &it, 1, 1000), 0, "%s", err_last());
	store_close(s);
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	struct job_row row;
	cr_assert_eq(s->ops->job_get(s, &row, it.job_id), 0);
	bool dup;
	struct hud_record r = record("k", "completed");
	cr_assert_eq(store_hud_put(s, &dup, &r, 5), 0, "%s", err_last());
	json_t *v;
	cr_assert_eq(store_results_json(s, &v, it.job_id, 10), 0);
	cr_assert_eq(json_array_size(v), 0);
	json_decref(v);
	const char *const keys[2] = { "sci1-none", NULL };
	cr_assert_eq(store_outbox_json(s, &v, keys, 10), 0);
	cr_assert_eq(json_array_size(v), 0);
	json_decref(v);
	store_close(s);
}
