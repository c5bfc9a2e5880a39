/* Tests of the group-commit intake (intake.h): a delivery is answered only once it is durable;
 * deliveries submitted together share a transaction and are each committed once; redeliveries
 * and second deliveries of a tip make no second job; a store failure reaches every waiter of
 * its group, commits none of it, and leaves the intake working; destroy leaves no waiter
 * waiting. Under the intake is the real SQLite store seen through a gate (`struct gate`): a
 * store_ops of its own that can hold a commit back, so that the test decides what forms a
 * group, or refuse one. What the store holds is read through a second, fresh handle. Waiters
 * run on their own threads and never assert: the test thread waits for them with a deadline. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/err.h"
#include "intake.h"
#include "metrics.h"
#include "store.h"
#include "tmpstate.h"

#define DEADLINE_MS 5000 /* no wait of these tests takes a fraction of it */

/* The store under the intake: the real one, a gate in front of its intake. */
struct gate {
	struct store base; /* first: the intake holds &gate.base */
	struct store *real;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool hold;        /* calls wait here until gate_release() */
	bool held;        /* a call is waiting */
	size_t held_n;    /* its number of items */
	size_t calls;     /* intake calls so far */
	size_t fail_call; /* this call (1 for the first) is refused; 0: none */
	size_t sizes[16]; /* the items of the first calls */
	bool closed;
};

static char dir[256];
static struct gate gate;
static struct metrics metrics;
static struct intake *in;

static int gate_intake(struct store *s, struct intake_item *items, size_t n, int64_t now_ms)
{
	struct gate *g = (struct gate *)s;
	pthread_mutex_lock(&g->mu);
	size_t call = ++g->calls;
	if (call <= sizeof(g->sizes) / sizeof(g->sizes[0]))
		g->sizes[call - 1] = n;
	if (g->hold) {
		g->held = true;
		g->held_n = n;
		pthread_cond_broadcast(&g->cond);
		struct timespec dl;
		clock_deadline(&dl, DEADLINE_MS);
		while (g->hold && pthread_cond_timedwait(&g->cond, &g->mu, &dl) == 0)
			;
		g->held = false;
	}
	bool refuse = call == g->fail_call;
	pthread_mutex_unlock(&g->mu);
	if (refuse)
		return err_set(ERR_IO, "gate: the disk refused the commit");
	return g->real->ops->intake(g->real, items, n, now_ms);
}

static void gate_close(struct store *s)
{
	struct gate *g = (struct gate *)s;
	store_close(g->real);
	g->real = NULL;
	g->closed = true;
}

/* Only what the intake calls; anything else would crash at once. */
static const struct store_ops gate_ops = { .close = gate_close, .intake = gate_intake };

static void gate_hold(void)
{
	pthread_mutex_lock(&gate.mu);
	gate.hold = true;
	pthread_mutex_unlock(&gate.mu);
}

static void gate_release(void)
{
	pthread_mutex_lock(&gate.mu);
	gate.hold = false;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.mu);
}

/* Waits until a commit is held at the gate; its number of items. */
static size_t gate_wait_held(void)
{
	struct timespec dl;
	clock_deadline(&dl, DEADLINE_MS);
	pthread_mutex_lock(&gate.mu);
	while (!gate.held && pthread_cond_timedwait(&gate.cond, &gate.mu, &dl) == 0)
		;
	bool held = gate.held;
	size_t n = gate.held_n;
	pthread_mutex_unlock(&gate.mu);
	cr_assert(held, "no commit reached the store within %d ms", DEADLINE_MS);
	return n;
}

/* The gate refuses the call after those made so far. */
static void gate_refuse_next(void)
{
	pthread_mutex_lock(&gate.mu);
	gate.fail_call = gate.calls + 1;
	pthread_mutex_unlock(&gate.mu);
}

static size_t gate_size(size_t call)
{
	pthread_mutex_lock(&gate.mu);
	size_t n = gate.sizes[call - 1];
	pthread_mutex_unlock(&gate.mu);
	return n;
}

static void setup(void)
{
	tmpstate_make(dir, sizeof(dir), "intake");
	memset(&metrics, 0, sizeof(metrics));
	gate = (struct gate){ .base.ops = &gate_ops };
	pthread_mutex_init(&gate.mu, NULL);
	pthread_cond_init(&gate.cond, NULL);
	cr_assert_eq(store_sqlite_open(&gate.real, dir), 0, "%s", err_last());
	cr_assert_eq(intake_create(&in, &gate.base, &metrics), 0, "%s", err_last());
}

static void teardown(void)
{
	gate_release();
	intake_destroy(in);
	in = NULL;
	tmpstate_remove(dir);
}

TestSuite(intake, .init = setup, .fini = teardown, .timeout = 30);

/* A second handle on the state directory: sees only what was committed. */
static struct store *fresh(void)
{
	struct store *s;
	cr_assert_eq(store_sqlite_open(&s, dir), 0, "%s", err_last());
	return s;
}

static int64_t deliveries(struct store *s)
{
	int64_t n;
	cr_assert_eq(s->ops->delivery_count(s, &n), 0, "%s", err_last());
	return n;
}

static int64_t jobs(struct store *s)
{
	int64_t counts[JOB_STATES], n = 0;
	cr_assert_eq(s->ops->job_counts(s, counts), 0, "%s", err_last());
	for (int i = 0; i < JOB_STATES; i++)
		n += counts[i];
	return n;
}

/* Asks `s` about a redelivery of `id` without a job: the job the first delivery recorded, or -1
 * when `id` was never delivered (and is recorded now). */
static int64_t seen_job(struct store *s, const char *id)
{
	struct intake_item it = { .ids = { id }, .n_ids = 1, .event = "push" };
	cr_assert_eq(s->ops->intake(s, &it, 1, 1000), 0, "%s", err_last());
	return it.duplicate ? it.job_id : -1;
}

/* One delivery, and the thread that submits it. */
struct sub {
	char id[32], head[41], key[64];
	struct job_spec job;
	struct intake_item it;
	int rc;
	atomic_bool done;
	pthread_t thread;
};

/* A push of tip number `tip` (its head is `tip` in 40 hex digits), delivered as `id`. */
static void sub_init(struct sub *s, const char *id, unsigned tip)
{
	memset(s, 0, sizeof(*s));
	atomic_init(&s->done, false);
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->head, sizeof(s->head), "%040x", tip);
	snprintf(s->key, sizeof(s->key), "push:%s", s->head);
	s->job = (struct job_spec){
		.event = "push", .ref = "refs/heads/main", .head = s->head, .tip_key = s->key
	};
	s->it =
	    (struct intake_item){ .ids = { s->id }, .n_ids = 1, .event = "push", .job = &s->job };
}

static void *sub_run(void *arg)
{
	struct sub *s = arg;
	s->rc = intake_submit(in, &s->it);
	atomic_store(&s->done, true);
	return NULL;
}

static void sub_start(struct sub *s)
{
	cr_assert_eq(pthread_create(&s->thread, NULL, sub_run, s), 0);
}

static void wait_until(bool (*cond)(void *), void *arg, const char *what)
{
	uint64_t end = clock_mono_ns() + (uint64_t)DEADLINE_MS * 1000000u;
	while (!cond(arg)) {
		cr_assert_lt(clock_mono_ns(), end, "%s: still not after %d ms", what, DEADLINE_MS);
		clock_sleep_ms(1);
	}
}

static bool is_done(void *arg)
{
	return atomic_load(&((struct sub *)arg)->done);
}

/* Every waiter answered before the deadline; their threads joined. */
static void sub_join(struct sub *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		wait_until(is_done, &s[i], "a waiter of the intake is still waiting");
	for (size_t i = 0; i < n; i++)
		pthread_join(s[i].thread, NULL);
}

static bool queued_reached(void *arg)
{
	return intake_queued(in) >= *(size_t *)arg;
}

static void wait_queued(size_t n)
{
	wait_until(queued_reached, &n, "deliveries queued behind the held commit");
}

/* Holds the store, and submits `holder` whose commit waits at the gate: what is submitted
 * next queues up and forms the next group. */
static void hold_with(struct sub *holder)
{
	gate_hold();
	sub_init(holder, "holder", 0xf00d);
	sub_start(holder);
	cr_assert_eq(gate_wait_held(), 1);
}

/* Submits each of `s` in order, each queued before the next, all behind a held commit. */
static void queue_group(struct sub *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sub_start(&s[i]);
		wait_queued(i + 1);
	}
}

Test(intake, a_delivery_is_durable_when_submit_returns_0)
{
	struct sub d;
	sub_init(&d, "d1", 1);
	cr_assert_eq(intake_submit(in, &d.it), 0, "%s", err_last());
	cr_assert_gt(d.it.job_id, 0);
	cr_assert_not(d.it.duplicate);
	struct store *s = fresh();
	struct job_row j;
	cr_assert_eq(s->ops->job_get(s, &j, d.it.job_id), 0, "%s", err_last());
	cr_assert_str_eq(j.head, d.head);
	cr_assert_str_eq(j.event, "push");
	cr_assert_eq(j.state, JOB_QUEUED);
	cr_assert_eq(deliveries(s), 1);
	cr_assert_eq(seen_job(s, "d1"), d.it.job_id);
	store_close(s);
}

Test(intake, a_delivery_is_not_answered_before_its_commit)
{
	struct sub d;
	gate_hold();
	sub_init(&d, "d1", 1);
	sub_start(&d);
	gate_wait_held();
	clock_sleep_ms(20);
	cr_assert_not(atomic_load(&d.done), "answered while its commit was held");
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 0);
	gate_release();
	sub_join(&d, 1);
	cr_assert_eq(d.rc, 0);
	cr_assert_eq(deliveries(s), 1);
	store_close(s);
}

#define BURST_THREADS 8
#define BURST_EACH    50
#define BURST_ALL     (BURST_THREADS * BURST_EACH)

struct burst {
	struct sub d[BURST_EACH];
	pthread_t thread;
	atomic_bool done;
};

static struct burst bursts[BURST_THREADS];

/* One connection thread's deliveries, one after the other. */
static void *burst_run(void *arg)
{
	struct burst *b = arg;
	for (size_t i = 0; i < BURST_EACH; i++)
		b->d[i].rc = intake_submit(in, &b->d[i].it);
	atomic_store(&b->done, true);
	return NULL;
}

static bool burst_done(void *arg)
{
	return atomic_load(&((struct burst *)arg)->done);
}

/* Every thread has its first delivery in the held commit or in the queue. */
static bool burst_all_waiting(void *arg)
{
	pthread_mutex_lock(&gate.mu);
	size_t held = gate.held ? gate.held_n : 0;
	pthread_mutex_unlock(&gate.mu);
	return held + intake_queued(in) == BURST_THREADS;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

Test(intake, concurrent_deliveries_are_each_committed_once_in_shared_transactions)
{
	/* the first round is held until all threads wait: at least one group is shared */
	gate_hold();
	for (unsigned t = 0; t < BURST_THREADS; t++) {
		atomic_init(&bursts[t].done, false);
		for (unsigned i = 0; i < BURST_EACH; i++) {
			char id[32];
			snprintf(id, sizeof(id), "b%u-%u", t, i);
			sub_init(&bursts[t].d[i], id, 1 + t * BURST_EACH + i);
		}
		cr_assert_eq(pthread_create(&bursts[t].thread, NULL, burst_run, &bursts[t]), 0);
	}
	wait_until(burst_all_waiting, NULL, "every thread waiting on the intake");
	gate_release();
	for (unsigned t = 0; t < BURST_THREADS; t++)
		wait_until(burst_done, &bursts[t], "a burst thread is still waiting");
	static int64_t ids[BURST_ALL];
	struct store *s = fresh();
	for (unsigned t = 0; t < BURST_THREADS; t++) {
		pthread_join(bursts[t].thread, NULL);
		for (unsigned i = 0; i < BURST_EACH; i++) {
			const struct sub *d = &bursts[t].d[i];
			cr_assert_eq(d->rc, 0, "%s", d->id);
			cr_assert_not(d->it.duplicate, "%s", d->id);
			struct job_row j;
			cr_assert_eq(s->ops->job_get(s, &j, d->it.job_id), 0, "%s", d->id);
			cr_assert_str_eq(j.head, d->head, "%s has another's job", d->id);
			ids[t * BURST_EACH + i] = d->it.job_id;
		}
	}
	qsort(ids, BURST_ALL, sizeof(ids[0]), cmp_i64);
	for (size_t i = 1; i < BURST_ALL; i++)
		cr_assert_neq(ids[i], ids[i - 1], "two deliveries got job %lld", (long long)ids[i]);
	cr_assert_eq(deliveries(s), BURST_ALL);
	cr_assert_eq(jobs(s), BURST_ALL);
	store_close(s);
	/* the intake's own account: one batch per transaction, every delivery in one batch */
	uint64_t batches = atomic_load(&metrics.commit_batch.count);
	cr_assert_eq(atomic_load(&metrics.commit_batch.sum_us), BURST_ALL);
	cr_assert_eq(batches, gate.calls);
	cr_assert_lt(batches, BURST_ALL, "no two deliveries shared a transaction");
}

Test(intake, a_redelivery_is_a_duplicate_and_makes_no_second_job)
{
	struct sub a, again;
	sub_init(&a, "d1", 1);
	sub_init(&again, "d1", 1);
	cr_assert_eq(intake_submit(in, &a.it), 0, "%s", err_last());
	cr_assert_eq(intake_submit(in, &again.it), 0, "%s", err_last());
	cr_assert_not(a.it.duplicate);
	cr_assert(again.it.duplicate);
	cr_assert_eq(again.it.job_id, a.it.job_id);
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 1);
	cr_assert_eq(jobs(s), 1);
	store_close(s);
}

Test(intake, a_dispatch_whose_upstream_delivery_was_seen_is_a_duplicate)
{
	struct sub a, dispatch;
	sub_init(&a, "upstream-1", 1);
	cr_assert_eq(intake_submit(in, &a.it), 0, "%s", err_last());
	/* the CRCR dispatch: its own GUID, the upstream delivery id second, another tip */
	sub_init(&dispatch, "outer-1", 2);
	dispatch.it.ids[1] = "upstream-1";
	dispatch.it.n_ids = 2;
	cr_assert_eq(intake_submit(in, &dispatch.it), 0, "%s", err_last());
	cr_assert(dispatch.it.duplicate);
	cr_assert_eq(dispatch.it.job_id, a.it.job_id);
	struct store *s = fresh();
	cr_assert_eq(jobs(s), 1, "the dispatch made a job");
	cr_assert_eq(seen_job(s, "outer-1"), a.it.job_id, "the dispatch's own id was not kept");
	store_close(s);
}

Test(intake, two_deliveries_of_one_tip_make_one_job)
{
	struct sub a, b;
	sub_init(&a, "d1", 7);
	sub_init(&b, "d2", 7);
	cr_assert_eq(intake_submit(in, &a.it), 0, "%s", err_last());
	cr_assert_eq(intake_submit(in, &b.it), 0, "%s", err_last());
	cr_assert_not(b.it.duplicate, "another delivery of a tip is not a redelivery");
	cr_assert_eq(b.it.job_id, a.it.job_id);
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 2);
	cr_assert_eq(jobs(s), 1);
	store_close(s);
}

Test(intake, a_redelivery_in_the_same_group_is_a_duplicate)
{
	struct sub holder, g[3];
	hold_with(&holder);
	sub_init(&g[0], "d1", 1);
	sub_init(&g[1], "d1", 1);
	sub_init(&g[2], "d2", 1); /* and one more of the tip */
	queue_group(g, 3);
	gate_release();
	sub_join(&holder, 1);
	sub_join(g, 3);
	cr_assert_eq(gate_size(2), 3, "the three were not one group");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(g[i].rc, 0);
	cr_assert_not(g[0].it.duplicate);
	cr_assert(g[1].it.duplicate);
	cr_assert_not(g[2].it.duplicate);
	cr_assert_eq(g[1].it.job_id, g[0].it.job_id);
	cr_assert_eq(g[2].it.job_id, g[0].it.job_id);
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 3); /* holder, d1, d2 */
	cr_assert_eq(jobs(s), 2);
	store_close(s);
}

Test(intake, a_delivery_that_makes_no_job_is_recorded_and_answered)
{
	struct sub d;
	sub_init(&d, "ping-1", 1);
	d.it.job = NULL;
	d.it.event = "ping";
	cr_assert_eq(intake_submit(in, &d.it), 0, "%s", err_last());
	cr_assert_eq(d.it.job_id, 0);
	cr_assert_not(d.it.duplicate);
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 1);
	cr_assert_eq(jobs(s), 0);
	cr_assert_eq(seen_job(s, "ping-1"), 0);
	store_close(s);
}

Test(intake, a_group_the_store_refuses_once_is_committed_again_one_by_one)
{
	struct sub holder, g[5], next;
	hold_with(&holder);
	for (unsigned i = 0; i < 5; i++) {
		char id[32];
		snprintf(id, sizeof(id), "g%u", i);
		sub_init(&g[i], id, 1 + i);
	}
	queue_group(g, 5);
	gate_refuse_next();
	gate_release();
	sub_join(&holder, 1);
	sub_join(g, 5);
	cr_assert_eq(holder.rc, 0);
	cr_assert_eq(gate_size(2), 5, "the five were not one group");
	for (size_t i = 3; i <= 7; i++)
		cr_assert_eq(gate_size(i), 1, "call %zu was not one delivery", i);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(g[i].rc, 0, "%s: %d", g[i].id, g[i].rc);
		cr_assert_gt(g[i].it.job_id, 0);
	}
	sub_init(&next, "next", 9);
	cr_assert_eq(intake_submit(in, &next.it), 0, "%s", err_last());
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 7); /* holder, the five, next */
	cr_assert_eq(jobs(s), 7);
	store_close(s);
}

Test(intake, a_delivery_the_store_cannot_take_fails_alone_and_its_group_commits)
{
	struct sub holder, g[4];
	hold_with(&holder);
	sub_init(&g[0], "g0", 1);
	sub_init(&g[1], "g1", 2);
	/* its job is made, then its delivery breaks a NOT NULL: the store fails mid-transaction */
	sub_init(&g[2], "bad", 3);
	g[2].it.event = NULL;
	sub_init(&g[3], "g3", 4);
	queue_group(g, 4);
	gate_release();
	sub_join(&holder, 1);
	sub_join(g, 4);
	cr_assert_eq(holder.rc, 0);
	cr_assert_eq(gate_size(2), 4, "the four were not one group");
	for (int i = 0; i < 4; i++)
		cr_assert_eq(g[i].rc, i == 2 ? ERR_IO : 0, "%s was answered %d", g[i].id, g[i].rc);
	cr_assert_eq(g[2].it.job_id, 0, "a refused delivery was handed a job id");
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 4); /* the holder's and the three good ones */
	cr_assert_eq(jobs(s), 4);       /* nothing of the bad one's job is left */
	store_close(s);
	/* and the bad one is new when delivered again, well formed */
	struct sub again;
	sub_init(&again, "bad", 3);
	cr_assert_eq(intake_submit(in, &again.it), 0, "%s", err_last());
	cr_assert_not(again.it.duplicate);
}

Test(intake, a_delivery_refused_by_the_store_is_new_when_delivered_again)
{
	struct sub d, again;
	sub_init(&d, "d1", 1);
	gate_refuse_next();
	cr_assert_eq(intake_submit(in, &d.it), ERR_IO);
	sub_init(&again, "d1", 1);
	cr_assert_eq(intake_submit(in, &again.it), 0, "%s", err_last());
	cr_assert_not(again.it.duplicate);
	cr_assert_gt(again.it.job_id, 0);
}

struct destroyer {
	struct intake *in;
	atomic_bool done;
};

static void *destroy_run(void *arg)
{
	struct destroyer *x = arg;
	intake_destroy(x->in);
	atomic_store(&x->done, true);
	return NULL;
}

static bool destroyer_done(void *arg)
{
	return atomic_load(&((struct destroyer *)arg)->done);
}

/* Starts intake_destroy() on its own thread (it waits for the held commit); the test's
 * intake is the destroyer's from here. */
static pthread_t destroy_start(struct destroyer *x)
{
	*x = (struct destroyer){ .in = in };
	atomic_init(&x->done, false);
	in = NULL;
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, destroy_run, x), 0);
	return t;
}

Test(intake, destroy_commits_what_is_queued_then_closes_the_store)
{
	struct sub holder, g[6];
	hold_with(&holder);
	for (unsigned i = 0; i < 6; i++) {
		char id[32];
		snprintf(id, sizeof(id), "q%u", i);
		sub_init(&g[i], id, 1 + i);
	}
	queue_group(g, 6);
	struct intake *keep = in;
	struct destroyer x;
	pthread_t t = destroy_start(&x);
	clock_sleep_ms(20); /* most often destroy is stopping the writer by now; either way works */
	cr_assert_eq(intake_queued(keep), 6); /* the writer is held: destroy has not freed it */
	gate_release();
	sub_join(&holder, 1);
	sub_join(g, 6);
	wait_until(destroyer_done, &x, "intake_destroy() has not returned");
	pthread_join(t, NULL);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(g[i].rc, 0, "%s: %d", g[i].id, g[i].rc);
	cr_assert(gate.closed, "destroy left the store open");
	struct store *s = fresh();
	cr_assert_eq(deliveries(s), 7);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(seen_job(s, g[i].id), g[i].it.job_id);
	store_close(s);
}

struct late {
	struct intake *in;
	struct sub *d;
	size_t n;
};

/* Each late delivery has been answered or is queued. */
static bool late_settled(void *arg)
{
	const struct late *l = arg;
	size_t answered = 0;
	for (size_t i = 0; i < l->n; i++)
		answered += atomic_load(&l->d[i].done);
	return answered + intake_queued(l->in) == l->n;
}

Test(intake, a_delivery_submitted_during_destroy_is_committed_or_refused_never_left_waiting)
{
	struct sub holder, late[4];
	hold_with(&holder);
	struct intake *keep = in;
	struct destroyer x;
	pthread_t t = destroy_start(&x);
	clock_sleep_ms(20);
	in = keep; /* for sub_run; destroy cannot free it while the commit is held */
	for (unsigned i = 0; i < 4; i++) {
		char id[32];
		snprintf(id, sizeof(id), "late%u", i);
		sub_init(&late[i], id, 1 + i);
		sub_start(&late[i]);
	}
	struct late l = { .in = keep, .d = late, .n = 4 };
	wait_until(late_settled, &l, "late deliveries neither queued nor answered");
	in = NULL; /* the destroyer's; every late one has read it */
	gate_release();
	sub_join(&holder, 1);
	sub_join(late, 4);
	wait_until(destroyer_done, &x, "intake_destroy() has not returned");
	pthread_join(t, NULL);
	cr_assert_eq(holder.rc, 0);
	struct store *s = fresh();
	int64_t committed = 1;
	for (int i = 0; i < 4; i++) {
		cr_assert(late[i].rc == 0 || late[i].rc == ERR_BADSTATE, "%s: %d", late[i].id,
			  late[i].rc);
		if (late[i].rc == 0)
			committed++;
	}
	cr_assert_eq(deliveries(s), committed);
	for (int i = 0; i < 4; i++)
		if (late[i].rc == 0)
			cr_assert_eq(seen_job(s, late[i].id), late[i].it.job_id);
	store_close(s);
}

Test(intake, destroy_of_null_is_a_no_op)
{
	intake_destroy(NULL);
}
