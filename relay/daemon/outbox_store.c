/* See outbox_store.h: each operation is the store's, one transaction each. */
#include "outbox_store.h"

#include <stdlib.h>

#include "common/clock.h"
#include "common/err.h"

struct store_outbox {
	struct dc_outbox base;
	struct store *s;
	bool owns;
};

static struct store *store_of(struct dc_outbox *ob)
{
	return ((struct store_outbox *)ob)->s;
}

static int so_enqueue_many(struct dc_outbox *ob, const char *target, const struct dc_message *m,
			   size_t n, size_t *added)
{
	struct store *s = store_of(ob);
	/* The time a message was made, for retention: the wall clock, like the jobs' times. */
	return s->ops->outbox_enqueue(s, target, m, n, added, clock_wall_ms());
}

static int so_enqueue(struct dc_outbox *ob, const char *target, const struct dc_message *m,
		      bool *added)
{
	size_t n = 0;
	int rc = so_enqueue_many(ob, target, m, 1, &n);
	*added = n > 0;
	return rc;
}

static int so_claim(struct dc_outbox *ob, const char *target, int64_t now_ms, size_t max,
		    struct dc_message *out, size_t *n)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_claim(s, target, now_ms, max, out, n);
}

static int so_settle(struct dc_outbox *ob, const char *target, const struct dc_settlement *x,
		     size_t n)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_settle(s, target, x, n);
}

static int so_next_due(struct dc_outbox *ob, const char *target, int64_t *out_ms)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_next_due(s, target, out_ms);
}

static int so_first_attempt(struct dc_outbox *ob, const char *target, const char *key,
			    int64_t *out_ms)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_first_attempt(s, target, key, out_ms);
}

static int so_counts(struct dc_outbox *ob, const char *target, struct dc_outbox_counts *out)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_counts(s, target, out);
}

static int so_each_dead(struct dc_outbox *ob, const char *target,
			void (*fn)(const struct dc_dead_letter *d, void *ctx), void *ctx)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_each_dead(s, target, fn, ctx);
}

static int so_requeue(struct dc_outbox *ob, const char *target, uint64_t *n)
{
	struct store *s = store_of(ob);
	return s->ops->outbox_requeue(s, target, n);
}

static void so_destroy(struct dc_outbox *ob)
{
	struct store_outbox *o = (struct store_outbox *)ob;
	if (o->owns)
		store_close(o->s);
	free(o);
}

static const struct dc_outbox_ops so_ops = {
	.enqueue = so_enqueue,
	.enqueue_many = so_enqueue_many,
	.claim = so_claim,
	.settle = so_settle,
	.next_due = so_next_due,
	.first_attempt = so_first_attempt,
	.counts = so_counts,
	.each_dead = so_each_dead,
	.requeue = so_requeue,
	.destroy = so_destroy,
};

int outbox_store_open(struct dc_outbox **out, struct store *s, bool owns)
{
	*out = NULL;
	struct store_outbox *o = calloc(1, sizeof(*o));
	if (!o) {
		if (owns)
			store_close(s);
		return err_set(ERR_NOMEM, "out of memory");
	}
	*o = (struct store_outbox){ .base = { .ops = &so_ops }, .s = s, .owns = owns };
	*out = &o->base;
	return 0;
}
