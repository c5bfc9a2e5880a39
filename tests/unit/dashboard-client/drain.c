/* The sender against a real HTTP server on loopback (tests/support/recorder.c), one scenario
 * per way a receiver fails: 500 for N requests, an answer that hangs past the timeout, 429 with
 * Retry-After in seconds and as a date, the connection closed mid-response, 400 "already
 * recorded", 400 for a bad message, 401. In every scenario, once the failures stop, the
 * recorder holds each message exactly once by idempotency key, in order per job; permanent
 * failures are dead-lettered with the answer. Time is a fake clock: backoff costs nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "common/log.h"
#include "dashboard-client/drain.h"
#include "dashboard-client/outbox_sqlite.h"
#include "drain_check.h"
#include "helpers.h"
#include "recorder.h"

#define TOKEN "tok-SECRET-4f9a1c"

static char dir[] = "/tmp/dc-drain-XXXXXX";

struct world {
	struct recorder *rec;
	struct dc_outbox *ob;
	struct dc_transport *t;
	char url[256];
	struct fake_clock fc;
	struct dc_drain_opts o;
	struct dc_drain_stats st;
	int jobs;
};

static void world_init(struct world *w, int jobs, enum dc_format f, const char *token)
{
	memset(w, 0, sizeof(*w));
	cr_assert_not_null(mkdtemp(dir));
	char path[300];
	snprintf(path, sizeof(path), "%s/outbox.sqlite", dir);
	w->rec = recorder_start();
	cr_assert_not_null(w->rec);
	recorder_url(w->rec, f == DC_FORMAT_HUD ? "/api/crcr/results" : "/github/callback", w->url,
		     sizeof(w->url));
	if (f == DC_FORMAT_HUD)
		recorder_require(w->rec, "x-hud-internal-bot", TOKEN);
	else
		recorder_require(w->rec, "Authorization", "Bearer " TOKEN);
	cr_assert_eq(dc_outbox_sqlite_open(&w->ob, path), 0, "%s", err_last());
	struct dc_target_opts to = { .url = w->url,
				     .format = f,
				     .token = token,
				     .user_agent = "spyre-ci/0.1.0-test",
				     .connect_timeout_ms = 2000,
				     .timeout_ms = 2000 };
	cr_assert_eq(dc_transport_create(&w->t, &to), 0, "%s", err_last());
	w->o.policy =
	    (struct dc_retry_policy){ .base_ms = 100, .max_ms = 2000, .horizon_ms = 600000 };
	w->o.clock = fake_clock(&w->fc);
	w->o.batch = 4;
	w->jobs = jobs;
	check_enqueue_jobs(w->ob, w->url, jobs, f);
}

static void world_finish(struct world *w)
{
	dc_transport_destroy(w->t);
	dc_outbox_destroy(w->ob);
	recorder_stop(w->rec);
	check_remove_outbox(dir);
}

static void drain_ok(struct world *w)
{
	int rc = dc_drain(w->ob, w->t, w->url, &w->o, &w->st);
	cr_assert_eq(rc, 0, "%s", err_last());
}

static void expect_counts(struct world *w, uint64_t delivered, uint64_t dead)
{
	struct dc_outbox_counts c;
	cr_assert_eq(w->ob->ops->counts(w->ob, w->url, &c), 0);
	cr_assert_eq(c.pending, 0);
	cr_assert_eq(c.delivered, delivered, "delivered %llu, want %llu",
		     (unsigned long long)c.delivered, (unsigned long long)delivered);
	cr_assert_eq(c.dead, dead, "dead %llu, want %llu", (unsigned long long)c.dead,
		     (unsigned long long)dead);
}

TestSuite(drain, .timeout = 60);

Test(drain, clean_run_keeps_one_connection)
{
	struct world w;
	world_init(&w, 5, DC_FORMAT_CRCR, TOKEN);
	drain_ok(&w);
	expect_counts(&w, 10, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 10);
	cr_assert_eq(w.st.posts, 10);
	cr_assert_eq(recorder_connections(w.rec), 1, "keep-alive: one connection for all");
	cr_assert_eq(dc_transport_connects(w.t), 1);
	for (size_t i = 0; i < recorder_count(w.rec); i++) {
		struct rec_request q = recorder_get(w.rec, i);
		cr_assert_str_eq(q.method, "POST");
		cr_assert_str_eq(q.path, "/github/callback");
		cr_assert_str_eq(q.ctype, "application/json");
		cr_assert_str_eq(q.agent, "spyre-ci/0.1.0-test");
		cr_assert_eq(strncmp(q.idem, "sci1-", 5), 0);
	}
	world_finish(&w);
}

Test(drain, http_500_for_n_requests)
{
	struct world w;
	world_init(&w, 3, DC_FORMAT_CRCR, TOKEN);
	recorder_fail(w.rec, REC_500, 7, 0, NULL);
	drain_ok(&w);
	expect_counts(&w, 6, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 6);
	cr_assert_eq(w.st.retries, 7);
	cr_assert_eq(w.st.posts, 13);
	cr_assert_gt(w.fc.slept, 0, "backoff slept (on the fake clock)");
	world_finish(&w);
}

Test(drain, hang_past_the_timeout)
{
	struct world w;
	world_init(&w, 2, DC_FORMAT_CRCR, TOKEN);
	dc_transport_destroy(w.t);
	struct dc_target_opts to = { .url = w.url,
				     .format = DC_FORMAT_CRCR,
				     .token = TOKEN,
				     .user_agent = "spyre-ci/test",
				     .connect_timeout_ms = 2000,
				     .timeout_ms = 250 };
	cr_assert_eq(dc_transport_create(&w.t, &to), 0);
	/* The server records the message, then answers too late: the retry meets "already". */
	recorder_fail(w.rec, REC_HANG, 2, 1000, NULL);
	drain_ok(&w);
	expect_counts(&w, 4, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 4);
	cr_assert_eq(w.st.retries, 2);
	cr_assert_eq(w.st.already, 2);
	world_finish(&w);
}

Test(drain, http_429_retry_after_seconds)
{
	struct world w;
	world_init(&w, 2, DC_FORMAT_CRCR, TOKEN);
	recorder_fail(w.rec, REC_429, 1, 0, "30");
	drain_ok(&w);
	expect_counts(&w, 4, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 4);
	cr_assert_geq(w.fc.slept, 30000, "slept %lld ms", (long long)w.fc.slept);
	world_finish(&w);
}

Test(drain, http_429_retry_after_date)
{
	struct world w;
	world_init(&w, 2, DC_FORMAT_CRCR, TOKEN);
	char date[64];
	time_t when = (time_t)(w.fc.now / 1000) + 45;
	struct tm tm;
	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	recorder_fail(w.rec, REC_429, 1, 0, date);
	drain_ok(&w);
	expect_counts(&w, 4, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 4);
	cr_assert_geq(w.fc.slept, 44000, "slept %lld ms", (long long)w.fc.slept);
	world_finish(&w);
}

Test(drain, connection_closed_mid_response)
{
	struct world w;
	world_init(&w, 3, DC_FORMAT_CRCR, TOKEN);
	recorder_fail(w.rec, REC_CLOSE, 3, 0, NULL);
	drain_ok(&w);
	expect_counts(&w, 6, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 6);
	cr_assert_eq(w.st.already, 3, "each closed answer is met by 400 already recorded");
	cr_assert_gt(recorder_connections(w.rec), 1, "a new connection after each close");
	world_finish(&w);
}

Test(drain, already_recorded_on_a_first_send_is_permanent)
{
	struct world w;
	world_init(&w, 2, DC_FORMAT_CRCR, TOKEN);
	recorder_fail(w.rec, REC_400, 1, 0, "{\"detail\":\"transition already recorded\"}");
	drain_ok(&w);
	/* The first in_progress (and so its completed) was never sent before: someone else's. */
	expect_counts(&w, 2, 2);
	cr_assert_eq(w.st.dead, 1);
	world_finish(&w);
}

Test(drain, bad_message_400_is_dead_lettered_with_the_body)
{
	struct world w;
	world_init(&w, 3, DC_FORMAT_CRCR, TOKEN);
	recorder_fail(w.rec, REC_400, 1, 0, "{\"detail\":\"missing field workflow.run_id\"}");
	drain_ok(&w);
	expect_counts(&w, 4, 2);
	check_dead_letters(w.ob, w.url, 400, "missing field workflow.run_id");
	check_exactly_once_in_order(w.rec, w.ob, w.url, 4);
	world_finish(&w);
}

struct captured {
	char text[1 << 16];
	size_t len;
};

static void capture(const char *line, size_t len, void *ctx)
{
	struct captured *c = ctx;
	if (c->len + len < sizeof(c->text)) {
		memcpy(c->text + c->len, line, len);
		c->len += len;
		c->text[c->len] = '\0';
	}
}

Test(drain, http_401_dead_letters_and_the_token_never_shows)
{
	static struct captured logs;
	log_set_level(LOG_TRACE);
	log_set_sink(capture, &logs);
	struct world w;
	world_init(&w, 3, DC_FORMAT_CRCR, "tok-WRONG-77aa");
	drain_ok(&w);
	expect_counts(&w, 0, 6);
	cr_assert_eq(recorder_count(w.rec), 3, "only the in_progress were sent");
	check_dead_letters(w.ob, w.url, 401, "bad credentials");
	log_set_sink(NULL, NULL);
	log_set_level(LOG_INFO);
	cr_assert_gt(logs.len, 0, "the dead letters were logged");
	cr_assert_null(strstr(logs.text, "tok-WRONG-77aa"), "the token reached a log line");
	cr_assert_null(strstr(err_last(), "tok-WRONG"));
	world_finish(&w);
}

Test(drain, horizon_gives_up_and_says_so)
{
	struct world w;
	world_init(&w, 2, DC_FORMAT_CRCR, TOKEN);
	w.o.policy.horizon_ms = 5000;
	recorder_fail(w.rec, REC_500, 1000, 0, NULL);
	drain_ok(&w);
	expect_counts(&w, 0, 4);
	check_dead_letters(w.ob, w.url, 500, "gave up after");
	cr_assert_leq(w.fc.slept, 5000 + 2000);
	world_finish(&w);
}

Test(drain, hud_envelope_with_its_header)
{
	struct world w;
	world_init(&w, 2, DC_FORMAT_HUD, TOKEN);
	recorder_fail(w.rec, REC_500, 1, 0, NULL);
	recorder_fail(w.rec, REC_CLOSE, 1, 0, NULL);
	drain_ok(&w);
	expect_counts(&w, 4, 0);
	check_exactly_once_in_order(w.rec, w.ob, w.url, 4);
	struct rec_request q = recorder_get(w.rec, 0);
	cr_assert_str_eq(q.auth, TOKEN);
	cr_assert_str_eq(q.path, "/api/crcr/results");
	world_finish(&w);
}

/* TLS verification cannot be turned off, and a CA file that cannot be read is a permanent
 * failure (waiting will not mend it): dead-lettered at once, with curl's reason. */
Test(drain, unreadable_ca_file_is_permanent)
{
	struct world w;
	world_init(&w, 1, DC_FORMAT_CRCR, TOKEN);
	dc_transport_destroy(w.t);
	char https[256];
	snprintf(https, sizeof(https), "https://127.0.0.1:%d/github/callback",
		 recorder_port(w.rec));
	struct dc_target_opts to = { .url = https,
				     .format = DC_FORMAT_CRCR,
				     .token = TOKEN,
				     .ca_file = "/nonexistent/ca.pem",
				     .timeout_ms = 2000 };
	cr_assert_eq(dc_transport_create(&w.t, &to), 0, "%s", err_last());
	check_enqueue_jobs(w.ob, https, 1, DC_FORMAT_CRCR);
	int rc = dc_drain(w.ob, w.t, https, &w.o, &w.st);
	cr_assert_eq(rc, 0, "%s", err_last());
	cr_assert_eq(w.st.dead, 1);
	cr_assert_eq(w.st.retries, 0);
	cr_assert_eq(recorder_count(w.rec), 0, "no plaintext request reached the server");
	world_finish(&w);
}
