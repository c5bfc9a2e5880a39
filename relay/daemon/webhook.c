/* Webhook bodies to decisions. The rules, in order: the repository must be upstream's (or,
 * for a dispatch, the configured downstream one); a deleted ref makes no job; tags, ciflow/...
 * tags included, make none unless configured; a branch push makes a job only for a watched
 * branch; a pull request only when opened, reopened or synchronized. */
#include "webhook.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/jsonx.h"

static void set_reason(struct wh_decision *d, enum wh_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_reason(struct wh_decision *d, enum wh_outcome o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	d->outcome = o;
}

static bool is_sha(const char *s)
{
	if (!s || strlen(s) != 40)
		return false;
	for (size_t i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool is_zero_sha(const char *s)
{
	return s && strspn(s, "0") == 40 && s[40] == 0;
}

static bool repo_is(const json_t *body, const char *want, struct wh_decision *d)
{
	const char *repo = jx_get_str(body, "repository.full_name");
	if (!repo) {
		set_reason(d, WH_BAD, "repository.full_name is missing");
		return false;
	}
	if (strcmp(repo, want) != 0) {
		set_reason(d, WH_IGNORED, "repository %.100s is not %.100s", repo, want);
		return false;
	}
	return true;
}

static bool watched(const struct wh_rules *r, const char *branch)
{
	for (size_t i = 0; i < r->n_branches; i++)
		if (!strcmp(r->branches[i], branch))
			return true;
	return false;
}

static void set_job(struct wh_decision *d, const char *ref, const char *base, const char *head,
		    const char *key_prefix, long long pr)
{
	snprintf(d->ref, sizeof(d->ref), "%s", ref);
	snprintf(d->base, sizeof(d->base), "%s", is_sha(base) && !is_zero_sha(base) ? base : "");
	snprintf(d->head, sizeof(d->head), "%s", head);
	snprintf(d->tip_key, sizeof(d->tip_key), "%s:%s", key_prefix, head);
	d->job = (struct job_spec){
		.event = d->event,
		.ref = d->ref,
		.base = d->base[0] ? d->base : NULL,
		.head = d->head,
		.tip_key = d->tip_key,
		.pr_number = pr,
	};
	d->outcome = WH_ACCEPT;
	d->reason[0] = 0;
}

static void decide_push(struct wh_decision *d, const struct wh_rules *r, const json_t *b)
{
	if (!repo_is(b, r->repo, d))
		return;
	const char *ref = jx_get_str(b, "ref"), *after = jx_get_str(b, "after");
	if (!ref || strlen(ref) >= sizeof(d->ref))
		return set_reason(d, WH_BAD, "push: ref is missing or too long");
	if (jx_get_bool(b, "deleted", false) || is_zero_sha(after))
		return set_reason(d, WH_IGNORED, "deleted ref %.200s", ref);
	if (!is_sha(after))
		return set_reason(d, WH_BAD, "push: after is not a 40-hex commit id");
	if (!strncmp(ref, "refs/tags/", 10)) {
		bool ciflow = !strncmp(ref + 10, "ciflow/", 7);
		if (ciflow ? !r->ciflow : !r->tags)
			return set_reason(d, WH_IGNORED, "%s %.200s", ciflow ? "ciflow tag" : "tag",
					  ref);
		return set_job(d, ref, NULL, after, "push", 0);
	}
	if (strncmp(ref, "refs/heads/", 11) != 0)
		return set_reason(d, WH_IGNORED, "ref %.200s is not a branch or a tag", ref);
	if (!watched(r, ref + 11))
		return set_reason(d, WH_IGNORED, "branch %.200s is not watched", ref + 11);
	set_job(d, ref, jx_get_str(b, "before"), after, "push", 0);
}

static void decide_pr(struct wh_decision *d, const struct wh_rules *r, const json_t *b)
{
	if (!repo_is(b, r->repo, d))
		return;
	const char *action = jx_get_str(b, "action");
	if (!action)
		return set_reason(d, WH_BAD, "pull_request: action is missing");
	if (strcmp(action, "opened") && strcmp(action, "reopened") && strcmp(action, "synchronize"))
		return set_reason(d, WH_IGNORED, "pull_request action %.64s makes no job", action);
	int64_t number = 0;
	if (jx_get_int(&number, b, "number") < 0 &&
	    jx_get_int(&number, b, "pull_request.number") < 0)
		return set_reason(d, WH_BAD, "pull_request: number is missing");
	if (number <= 0)
		return set_reason(d, WH_BAD, "pull_request: number is not positive");
	const char *head = jx_get_str(b, "pull_request.head.sha");
	if (!is_sha(head))
		return set_reason(d, WH_BAD, "pull_request: head.sha is not a 40-hex commit id");
	char ref[64], prefix[40];
	snprintf(ref, sizeof(ref), "refs/pull/%lld/head", (long long)number);
	snprintf(prefix, sizeof(prefix), "pr:%lld", (long long)number);
	set_job(d, ref, jx_get_str(b, "pull_request.base.sha"), head, prefix, number);
}

static void decide_event(struct wh_decision *d, const struct wh_rules *r, const char *event,
			 const json_t *b, int depth);

static void decide_dispatch(struct wh_decision *d, const struct wh_rules *r, const json_t *b,
			    int depth)
{
	const char *outer = jx_get_str(b, "repository.full_name");
	if (r->dispatch_repo && *r->dispatch_repo && (!outer || strcmp(outer, r->dispatch_repo)))
		return set_reason(d, WH_IGNORED, "dispatch to %.100s, not %.100s",
				  outer ? outer : "(none)", r->dispatch_repo);
	const json_t *cp = jx_get(b, "client_payload");
	const json_t *et = jx_get(cp, "event_type"), *id = jx_get(cp, "delivery_id"),
		     *payload = jx_get(cp, "payload");
	if (!et && !id && !payload)
		return set_reason(d, WH_IGNORED, "repository_dispatch without a CRCR payload");
	if (depth > 0)
		return set_reason(d, WH_BAD, "a dispatch inside a dispatch");
	if (!json_is_string(et) || !json_is_string(id) || !json_is_object(payload))
		return set_reason(d, WH_BAD,
				  "client_payload: event_type and delivery_id must be "
				  "strings, payload an object");
	size_t idlen = json_string_length(id);
	if (idlen == 0 || idlen > WEBHOOK_PREAUTH_HEADER_MAX ||
	    memchr(json_string_value(id), 0, idlen))
		return set_reason(d, WH_BAD, "client_payload.delivery_id is empty or too long");
	memcpy(d->ids[1], json_string_value(id), idlen + 1);
	d->n_ids = strcmp(d->ids[0], d->ids[1]) == 0 ? 1 : 2; /* one id is one key */
	decide_event(d, r, json_string_value(et), payload, depth + 1);
}

static void decide_event(struct wh_decision *d, const struct wh_rules *r, const char *event,
			 const json_t *b, int depth)
{
	snprintf(d->event, sizeof(d->event), "%s", event);
	if (!strcmp(event, "push"))
		decide_push(d, r, b);
	else if (!strcmp(event, "pull_request"))
		decide_pr(d, r, b);
	else if (!strcmp(event, "repository_dispatch"))
		decide_dispatch(d, r, b, depth);
	else if (!strcmp(event, "ping") && depth == 0)
		set_reason(d, WH_PING, "pong");
	else
		set_reason(d, WH_IGNORED, "event %.64s is not handled", event);
}

void webhook_decide(struct wh_decision *d, const struct wh_rules *r, const char *event,
		    const char *delivery, const char *body, size_t len)
{
	memset(d, 0, sizeof(*d));
	size_t dl = strlen(delivery);
	if (dl == 0 || dl > WEBHOOK_PREAUTH_HEADER_MAX)
		return set_reason(d, WH_BAD, "X-GitHub-Delivery is empty or too long");
	memcpy(d->ids[0], delivery, dl + 1);
	d->n_ids = 1;
	json_t *b = jx_loadb(body, len, WEBHOOK_BODY_MAX);
	if (!b)
		return set_reason(d, WH_BAD, "malformed JSON: %.200s", err_last());
	if (!json_is_object(b))
		set_reason(d, WH_BAD, "the body is not a JSON object");
	else
		decide_event(d, r, event, b, 0);
	json_decref(b);
}

void webhook_item(struct intake_item *it, const struct wh_decision *d)
{
	memset(it, 0, sizeof(*it));
	for (size_t i = 0; i < d->n_ids; i++)
		it->ids[i] = d->ids[i];
	it->n_ids = d->n_ids;
	it->event = d->event;
	it->job = d->outcome == WH_ACCEPT ? &d->job : NULL;
}
