/* The group-commit writer. Each waiter sleeps on its own condition variable (one broadcast to
 * all would wake every connection thread at every commit); the writer copies a batch out of
 * the queue, commits it without the lock held, and wakes exactly the waiters of that batch. */
#include "intake.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/log.h"

struct pending {
	struct intake_item *item;
	int rc;
	bool done;
	pthread_cond_t cond;
	struct pending *next;
};

struct intake {
	struct store *store;
	struct metrics *m;
	pthread_mutex_t mu;
	pthread_cond_t work;
	struct pending *head, *tail;
	bool stopping;
	pthread_t thread;
	struct intake_item items[INTAKE_BATCH_MAX];
};

static size_t take_batch(struct intake *in, struct pending **batch)
{
	size_t n = 0;
	while (in->head && n < INTAKE_BATCH_MAX) {
		batch[n++] = in->head;
		in->head = in->head->next;
	}
	if (!in->head)
		in->tail = NULL;
	return n;
}

/* Answers one waiter: its item as the store filled it when its commit held, else untouched. */
static void answer(struct intake *in, struct pending *p, const struct intake_item *item, int rc)
{
	pthread_mutex_lock(&in->mu);
	if (rc == 0)
		*p->item = *item;
	p->rc = rc;
	p->done = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&in->mu);
}

/* Commits the batch in one transaction. When that fails, each delivery is committed again on
 * its own: one that the store refuses (a malformed item, a key it repeats) fails alone, not
 * every delivery that happened to wait beside it. */
static void commit_batch(struct intake *in, struct pending **batch, size_t n)
{
	struct intake_item *items = in->items; /* only the writer thread uses them */
	for (size_t i = 0; i < n; i++)
		items[i] = *batch[i]->item;
	int rc = in->store->ops->intake(in->store, items, n, clock_wall_ms());
	metrics_observe_count(&in->m->commit_batch, n);
	if (rc == 0 || n == 1) {
		if (rc < 0)
			log_error("intake: delivery %s not committed: %s", items[0].ids[0],
				  err_last());
		for (size_t i = 0; i < n; i++)
			answer(in, batch[i], &items[i], rc);
		return;
	}
	log_warn("intake: batch of %zu not committed (%s); committing each on its own", n,
		 err_last());
	for (size_t i = 0; i < n; i++) {
		items[i] = *batch[i]->item;
		int one = in->store->ops->intake(in->store, &items[i], 1, clock_wall_ms());
		if (one < 0)
			log_error("intake: delivery %s not committed: %s", items[i].ids[0],
				  err_last());
		answer(in, batch[i], &items[i], one);
	}
}

static void *writer(void *arg)
{
	struct intake *in = arg;
	struct pending *batch[INTAKE_BATCH_MAX];
	pthread_mutex_lock(&in->mu);
	for (;;) {
		while (!in->head && !in->stopping)
			pthread_cond_wait(&in->work, &in->mu);
		if (!in->head && in->stopping)
			break;
		size_t n = take_batch(in, batch);
		pthread_mutex_unlock(&in->mu);
		commit_batch(in, batch, n);
		pthread_mutex_lock(&in->mu);
	}
	pthread_mutex_unlock(&in->mu);
	return NULL;
}

int intake_create(struct intake **out, struct store *store, struct metrics *m)
{
	struct intake *in = calloc(1, sizeof(*in));
	if (!in) {
		store_close(store);
		return err_set(ERR_NOMEM, "out of memory");
	}
	in->store = store; /* owned by the intake from here */
	in->m = m;
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->work, NULL);
	if (pthread_create(&in->thread, NULL, writer, in) != 0) {
		store_close(store);
		free(in);
		return err_set(ERR_GENERIC, "intake: cannot start the writer thread");
	}
	*out = in;
	return 0;
}

int intake_submit(struct intake *in, struct intake_item *it)
{
	struct pending p = { .item = it };
	pthread_cond_init(&p.cond, NULL);
	pthread_mutex_lock(&in->mu);
	if (in->stopping) {
		pthread_mutex_unlock(&in->mu);
		pthread_cond_destroy(&p.cond);
		return err_set(ERR_BADSTATE, "intake: shutting down");
	}
	if (in->tail)
		in->tail->next = &p;
	else
		in->head = &p;
	in->tail = &p;
	pthread_cond_signal(&in->work);
	while (!p.done)
		pthread_cond_wait(&p.cond, &in->mu);
	pthread_mutex_unlock(&in->mu);
	pthread_cond_destroy(&p.cond);
	return p.rc < 0 ? err_set(p.rc, "the store could not commit the delivery") : 0;
}

size_t intake_queued(struct intake *in)
{
	size_t n = 0;
	pthread_mutex_lock(&in->mu);
	for (const struct pending *p = in->head; p; p = p->next)
		n++;
	pthread_mutex_unlock(&in->mu);
	return n;
}

void intake_destroy(struct intake *in)
{
	if (!in)
		return;
	pthread_mutex_lock(&in->mu);
	in->stopping = true;
	pthread_cond_signal(&in->work);
	pthread_mutex_unlock(&in->mu);
	pthread_join(in->thread, NULL);
	store_close(in->store);
	pthread_mutex_destroy(&in->mu);
	pthread_cond_destroy(&in->work);
	free(in);
}
