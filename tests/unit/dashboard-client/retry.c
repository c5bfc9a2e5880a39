/* The retry policy: the verdict for every kind of answer, Retry-After in both forms (all three
 * date spellings), and backoff that doubles, stays within its cap and jitters. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "dashboard-client/retry.h"

static enum dc_verdict verdict(long status, const char *body, bool sent_before)
{
	struct dc_response r = { .status = status };
	r.body = (char *)body;
	r.body_len = body ? strlen(body) : 0;
	return dc_classify(&r, sent_before);
}

Test(retry, classify)
{
	cr_assert_eq(verdict(200, NULL, false), DC_VERDICT_DELIVERED);
	cr_assert_eq(verdict(201, NULL, true), DC_VERDICT_DELIVERED);
	cr_assert_eq(verdict(500, NULL, false), DC_VERDICT_RETRY);
	cr_assert_eq(verdict(503, NULL, false), DC_VERDICT_RETRY);
	cr_assert_eq(verdict(408, NULL, false), DC_VERDICT_RETRY);
	cr_assert_eq(verdict(429, NULL, false), DC_VERDICT_RETRY);
	cr_assert_eq(verdict(401, NULL, true), DC_VERDICT_PERMANENT);
	cr_assert_eq(verdict(403, NULL, false), DC_VERDICT_PERMANENT);
	cr_assert_eq(verdict(404, NULL, false), DC_VERDICT_PERMANENT);
	cr_assert_eq(verdict(413, NULL, false), DC_VERDICT_PERMANENT);
	cr_assert_eq(verdict(301, NULL, false), DC_VERDICT_PERMANENT);
	const char *dup = "{\"detail\":\"callback rejected: invalid state transition "
			  "delivery_id=x repo=y status=completed\"}";
	/* A duplicate transition is "delivered" only when an earlier send may have arrived. */
	cr_assert_eq(verdict(400, dup, true), DC_VERDICT_ALREADY);
	cr_assert_eq(verdict(400, dup, false), DC_VERDICT_PERMANENT);
	cr_assert_eq(verdict(400, "Already Recorded", true), DC_VERDICT_ALREADY);
	cr_assert_eq(verdict(400, "{\"detail\":\"missing field run_id\"}", true),
		     DC_VERDICT_PERMANENT);
	cr_assert_eq(verdict(409, dup, true), DC_VERDICT_PERMANENT);

	struct dc_response none = { .status = 0, .transport_error = 28 };
	cr_assert_eq(dc_classify(&none, false), DC_VERDICT_RETRY);
	none.transport_fatal = true;
	cr_assert_eq(dc_classify(&none, false), DC_VERDICT_PERMANENT);
}

static int64_t ra(const char *text, int64_t now)
{
	int64_t ms = -1;
	int rc = dc_retry_after_parse(&ms, text, strlen(text), now);
	cr_assert_eq(rc, 0, "'%s': %s", text, err_last());
	return ms;
}

static void ra_bad(const char *text)
{
	int64_t ms = 0;
	cr_assert_eq(dc_retry_after_parse(&ms, text, strlen(text), 0), ERR_INVAL, "accepted '%s'",
		     text);
}

Test(retry, retry_after)
{
	/* 1994-11-06T08:49:37Z, RFC 9110's example, is 784111777 s after the epoch. */
	const int64_t t = 784111777LL * 1000;
	cr_assert_eq(ra("120", t), 120000);
	cr_assert_eq(ra(" 0 ", t), 0);
	cr_assert_eq(ra("99999999999999999999999", t), (int64_t)DC_RETRY_AFTER_MAX_S * 1000);
	cr_assert_eq(ra("Sun, 06 Nov 1994 08:49:37 GMT", t - 5000), 5000);
	cr_assert_eq(ra("Sunday, 06-Nov-94 08:49:37 GMT", t - 7000), 7000);
	cr_assert_eq(ra("Sun Nov  6 08:49:37 1994", t - 9000), 9000);
	cr_assert_eq(ra("Sun, 06 Nov 1994 08:49:37 GMT", t + 1000), 0); /* in the past */
	cr_assert_eq(ra("Mon, 06 Nov 2095 08:49:37 GMT", t), (int64_t)DC_RETRY_AFTER_MAX_S * 1000);
	ra_bad("");
	ra_bad("-5");
	ra_bad("1.5");
	ra_bad("12abc");
	ra_bad("soon");
	ra_bad("Sun, 06 Nov 1994 08:49:37 UTC");
	ra_bad("Sun, 06 Foo 1994 08:49:37 GMT");
	ra_bad("Sun, 32 Nov 1994 08:49:37 GMT");
	ra_bad("Sun, 06 Nov 1994 25:49:37 GMT");
	ra_bad("Sun, 06 Nov 1994 08:49:37 GMT trailing");
	ra_bad("Sun, 6 Nov 1994 08:49:37 GMT");
	ra_bad("Sun Nov  6 08:49:37");
	char long_text[DC_RETRY_AFTER_TEXT_MAX + 8];
	memset(long_text, '1', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	ra_bad(long_text);
}

Test(retry, backoff)
{
	struct dc_retry_policy p = { .base_ms = 100, .max_ms = 1000, .horizon_ms = 60000 };
	/* With the jitter at 0 the delay is half the step; at its top, the whole step. */
	cr_assert_eq(dc_backoff_ms(&p, 1, 0), 50);
	cr_assert_eq(dc_backoff_ms(&p, 1, 50), 100);
	cr_assert_eq(dc_backoff_ms(&p, 2, 0), 100);
	cr_assert_eq(dc_backoff_ms(&p, 3, 0), 200);
	cr_assert_eq(dc_backoff_ms(&p, 4, 0), 400);
	cr_assert_eq(dc_backoff_ms(&p, 5, 0), 500); /* 1,600 capped at 1,000 */
	cr_assert_eq(dc_backoff_ms(&p, 60, 0), 500);
	for (uint64_t rnd = 0; rnd < 5000; rnd += 7) {
		int64_t d = dc_backoff_ms(&p, 9, rnd);
		cr_assert(d >= 500 && d <= 1000, "%lld", (long long)d);
	}
	struct dc_retry_policy d = dc_retry_policy_default();
	cr_assert_gt(d.horizon_ms, d.max_ms);
}
