/* The drain loop (see drain.h): claim, post, classify, settle, in batches so that a batch costs
 * two durable commits however many messages it holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "dashboard-client/drain.h"

#define DRAIN_BATCH_DEFAULT 64
#define DRAIN_SLEEP_MAX_MS  1000 /* a sleep is cut into pieces so that `stop` is seen */

/* One claimed message's outcome, with the storage its settlement points into. */
struct slot {
	struct dc_settlement s;
	char error[384];
	char *body;
};

static void step(const struct dc_drain_opts *o, enum dc_step s)
{
	if (o->step)
		o->step(s, o->step_ctx);
}

static void describe(char *out, size_t size, const struct dc_response *r)
{
	if (r->status)
		snprintf(out, size, "HTTP %ld", r->status);
	else
		snprintf(out, size, "no answer: %.*s", (int)(size > 12 ? size - 12 : 0),
			 r->error[0] ? r->error : "transfer failed");
}

/* The delay before the next try: backoff, or the server's Retry-After when that is later. */
static int64_t retry_delay(const struct dc_drain_opts *o, const struct dc_response *r, int attempts,
			   int64_t now)
{
	int64_t d = dc_backoff_ms(&o->policy, attempts, o->clock.random(o->clock.ctx));
	int64_t ra = 0;
	if (r->retry_after[0] &&
	    dc_retry_after_parse(&ra, r->retry_after, strlen(r->retry_after), now) == 0 && ra > d)
		d = ra;
	return d;
}

static void decide(struct slot *x, struct dc_outbox *ob, const char *target,
		   const struct dc_message *m, const struct dc_response *r,
		   const struct dc_drain_opts *o, int64_t now, struct dc_drain_stats *st)
{
	enum dc_verdict v = dc_classify(r, m->attempts > 0);
	memset(&x->s, 0, sizeof(x->s));
	x->s.key = m->key;
	x->s.status = r->status;
	x->s.error = x->error;
	describe(x->error, sizeof(x->error), r);
	if (v == DC_VERDICT_DELIVERED || v == DC_VERDICT_ALREADY) {
		x->s.kind = DC_SETTLE_DELIVERED;
		x->s.already = v == DC_VERDICT_ALREADY;
		if (x->s.already)
			st->already++;
		else
			st->delivered++;
		return;
	}
	if (v == DC_VERDICT_RETRY) {
		int64_t first = 0, delay = retry_delay(o, r, m->attempts + 1, now);
		if (ob->ops->first_attempt(ob, target, m->key, &first) != 0 || first == 0)
			first = now;
		if (now + delay - first <= o->policy.horizon_ms) {
			x->s.kind = DC_SETTLE_RETRY;
			x->s.next_at_ms = now + delay;
			st->retries++;
			log_debug("outbox: %s: %s, again in %" PRId64 " ms", m->key, x->error,
				  delay);
			return;
		}
		char why[sizeof(x->error) / 2];
		describe(why, sizeof(why), r);
		snprintf(x->error, sizeof(x->error),
			 "gave up after %d attempts over %.1f s (the retry horizon): %.180s",
			 m->attempts + 1, (double)(now - first) / 1000.0, why);
	}
	x->s.kind = DC_SETTLE_DEAD;
	if (r->body) {
		x->body = malloc(r->body_len + 1);
		if (x->body) {
			memcpy(x->body, r->body, r->body_len + 1);
			x->s.body = x->body;
			x->s.body_len = r->body_len;
		}
	}
	st->dead++;
	log_warn("outbox: %s dead-lettered: %s", m->key, x->error);
}

/* Posts one claimed batch and settles it. */
static int send_batch(struct dc_outbox *ob, struct dc_transport *t, const char *target,
		      const struct dc_drain_opts *o, struct dc_message *ms, struct slot *slots,
		      size_t n, struct dc_drain_stats *st)
{
	struct dc_response r = { 0 };
	struct dc_settlement *sets = calloc(n, sizeof(*sets));
	int rc = sets ? 0 : err_set(ERR_NOMEM, "out of memory");
	size_t done = 0; /* the posted ones are settled even when a later post cannot start */
	for (; rc == 0 && done < n; done++) {
		rc = dc_transport_post(t, ms[done].key, ms[done].body, ms[done].body_len, &r);
		if (rc)
			break;
		st->posts++;
		step(o, DC_STEP_POSTED);
		decide(&slots[done], ob, target, &ms[done], &r, o, o->clock.now_ms(o->clock.ctx),
		       st);
		sets[done] = slots[done].s;
	}
	dc_response_finish(&r);
	if (sets && done > 0) {
		int src = ob->ops->settle(ob, target, sets, done);
		if (src == 0)
			step(o, DC_STEP_SETTLED);
		rc = rc ? rc : src;
	}
	free(sets);
	for (size_t i = 0; i < n; i++) {
		free(slots[i].body);
		slots[i].body = NULL;
	}
	return rc;
}

/* Nothing due now: sleeps towards the earliest retry. 1 when nothing is pending at all. */
static int wait_due(struct dc_outbox *ob, const char *target, const struct dc_drain_opts *o)
{
	int64_t due = 0;
	int rc = ob->ops->next_due(ob, target, &due);
	if (rc == ERR_NOTFOUND)
		return 1;
	if (rc)
		return rc;
	int64_t wait = due - o->clock.now_ms(o->clock.ctx);
	if (wait > 0)
		o->clock.sleep_ms(o->clock.ctx,
				  wait < DRAIN_SLEEP_MAX_MS ? wait : DRAIN_SLEEP_MAX_MS);
	return 0;
}

int dc_drain(struct dc_outbox *ob, struct dc_transport *t, const char *target,
	     const struct dc_drain_opts *o, struct dc_drain_stats *st)
{
	size_t batch = o->batch ? o->batch : DRAIN_BATCH_DEFAULT;
	struct dc_message *ms = calloc(batch, sizeof(*ms));
	struct slot *slots = calloc(batch, sizeof(*slots));
	int rc = ms && slots ? 0 : err_set(ERR_NOMEM, "out of memory");
	while (rc == 0) {
		if (o->stop && *o->stop) {
			rc = err_set(ERR_BADSTATE, "the drain was stopped");
			break;
		}
		size_t n = 0;
		rc = ob->ops->claim(ob, target, o->clock.now_ms(o->clock.ctx), batch, ms, &n);
		if (rc)
			break;
		if (n == 0) {
			rc = wait_due(ob, target, o);
			if (rc == 1) {
				rc = 0;
				break;
			}
			continue;
		}
		step(o, DC_STEP_CLAIMED);
		rc = send_batch(ob, t, target, o, ms, slots, n, st);
		for (size_t i = 0; i < n; i++)
			dc_message_finish(&ms[i]);
	}
	free(ms);
	free(slots);
	return rc;
}
