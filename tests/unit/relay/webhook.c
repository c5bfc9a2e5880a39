/* Tests of the webhook decision rules that the integration test does not reach: tag filters
 * turned on, a pull request without a base, a dispatch inside a dispatch, bad ids. */
#include <criterion/criterion.h>
#include <string.h>

#include "webhook.h"

static char *branches[] = { "main" };
static const struct wh_rules rules = { .repo = "p/t", .branches = branches, .n_branches = 1 };

/* The decision lives in one static slot: its job spec points into itself, so it must not be
 * copied by value. */
static struct wh_decision slot;

static const struct wh_decision *decide(const struct wh_rules *r, const char *event,
					const char *body)
{
	webhook_decide(&slot, r, event, "id-1", body, strlen(body));
	return &slot;
}

#define REPO "\"repository\":{\"full_name\":\"p/t\"}"
#define SHA  "\"cccccccccccccccccccccccccccccccccccccccc\""

Test(webhook, tags_only_when_configured)
{
	const char *tag = "{\"ref\":\"refs/tags/v1\",\"after\":" SHA "," REPO "}";
	const char *ciflow = "{\"ref\":\"refs/tags/ciflow/trunk/1\",\"after\":" SHA "," REPO "}";
	cr_assert_eq(decide(&rules, "push", tag)->outcome, WH_IGNORED);
	struct wh_rules r = rules;
	r.tags = true;
	const struct wh_decision *d = decide(&r, "push", tag);
	cr_assert_eq(d->outcome, WH_ACCEPT);
	cr_assert_str_eq(d->job.tip_key, "push:cccccccccccccccccccccccccccccccccccccccc");
	cr_assert_eq(decide(&r, "push", ciflow)->outcome, WH_IGNORED);
	r.ciflow = true;
	cr_assert_eq(decide(&r, "push", ciflow)->outcome, WH_ACCEPT);
}

Test(webhook, push_fields_checked)
{
	cr_assert_eq(
	    decide(&rules, "push", "{\"ref\":\"refs/heads/main\",\"after\":\"xyz\"," REPO "}")
		->outcome,
	    WH_BAD);
	cr_assert_eq(decide(&rules, "push", "{\"after\":" SHA "," REPO "}")->outcome, WH_BAD);
	cr_assert_eq(
	    decide(&rules, "push", "{\"ref\":\"refs/heads/main\",\"after\":" SHA "}")->outcome,
	    WH_BAD);
	const struct wh_decision *d =
	    decide(&rules, "push", "{\"ref\":\"refs/heads/main\",\"after\":" SHA "," REPO "}");
	cr_assert_eq(d->outcome, WH_ACCEPT);
	cr_assert_null(d->job.base);
}

Test(webhook, pull_request_without_base)
{
	const struct wh_decision *d =
	    decide(&rules, "pull_request",
		   "{\"action\":\"reopened\",\"number\":7,\"pull_request\":{\"head\":{\"sha\":" SHA
		   "}}," REPO "}");
	cr_assert_eq(d->outcome, WH_ACCEPT);
	cr_assert_null(d->job.base);
	cr_assert_str_eq(d->job.ref, "refs/pull/7/head");
	cr_assert_eq(d->job.pr_number, 7);
	cr_assert_eq(
	    decide(&rules, "pull_request", "{\"action\":\"labeled\",\"number\":7," REPO "}")
		->outcome,
	    WH_IGNORED);
}

Test(webhook, dispatch_rules)
{
	const char *nested =
	    "{\"client_payload\":{\"event_type\":\"repository_dispatch\",\"delivery_id\":\"u\","
	    "\"payload\":{\"client_payload\":{\"event_type\":\"push\",\"delivery_id\":\"v\","
	    "\"payload\":{}}}}}";
	cr_assert_eq(decide(&rules, "repository_dispatch", nested)->outcome, WH_BAD);
	const char *bad_id = "{\"client_payload\":{\"event_type\":\"push\",\"delivery_id\":\"\","
			     "\"payload\":{}}}";
	cr_assert_eq(decide(&rules, "repository_dispatch", bad_id)->outcome, WH_BAD);
	struct wh_rules r = rules;
	r.dispatch_repo = "ts/ts";
	const char *other = "{\"client_payload\":{},\"repository\":{\"full_name\":\"x/y\"}}";
	cr_assert_eq(decide(&r, "repository_dispatch", other)->outcome, WH_IGNORED);
	const char *ok = "{\"client_payload\":{\"event_type\":\"push\",\"delivery_id\":\"up-1\","
			 "\"payload\":{\"ref\":\"refs/heads/main\",\"after\":" SHA "," REPO "}}}";
	const struct wh_decision *d = decide(&rules, "repository_dispatch", ok);
	cr_assert_eq(d->outcome, WH_ACCEPT);
	cr_assert_eq(d->n_ids, 2);
	cr_assert_str_eq(d->ids[1], "up-1");
	cr_assert_str_eq(d->event, "push");
}

/* A dispatch whose upstream delivery id is its own X-GitHub-Delivery has one dedup key, not the
 * same key twice (which the store refuses as a repeated key). */
Test(webhook, dispatch_with_its_own_delivery_id_has_one_key)
{
	const char *same = "{\"client_payload\":{\"event_type\":\"push\",\"delivery_id\":\"id-1\","
			   "\"payload\":{\"ref\":\"refs/heads/main\",\"after\":" SHA "," REPO "}}}";
	const struct wh_decision *d = decide(&rules, "repository_dispatch", same);
	cr_assert_eq(d->outcome, WH_ACCEPT);
	cr_assert_eq(d->n_ids, 1);
	cr_assert_str_eq(d->ids[0], "id-1");
}

Test(webhook, ping_only_at_top)
{
	cr_assert_eq(decide(&rules, "ping", "{}")->outcome, WH_PING);
	const char *inner = "{\"client_payload\":{\"event_type\":\"ping\",\"delivery_id\":\"p\","
			    "\"payload\":{}}}";
	cr_assert_eq(decide(&rules, "repository_dispatch", inner)->outcome, WH_IGNORED);
}
