/* The daemon's counters and histograms, updated lock-free from any thread (C11 atomics) and
 * written in Prometheus' text format by GET /metrics, together with gauges read from the store
 * at scrape time (jobs by state, queue depth, outbox depth). */
#ifndef RELAY_DAEMON_METRICS_H
#define RELAY_DAEMON_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/buf.h"

enum m_event { M_EV_PUSH, M_EV_PR, M_EV_DISPATCH, M_EV_PING, M_EV_OTHER, M_EVENTS };
enum m_outcome {
	M_OUT_ACCEPTED,
	M_OUT_DUPLICATE,
	M_OUT_IGNORED,
	M_OUT_REJECTED, /* 4xx: unsigned, bad signature, malformed, too large */
	M_OUT_ERROR,    /* 5xx: the store failed */
	M_OUTCOMES,
};

#define M_LAT_BUCKETS   12
#define M_CASE_OUTCOMES 16 /* at least executors' EXEC_OUTCOME_COUNT */

struct m_hist {
	atomic_uint_fast64_t bucket[M_LAT_BUCKETS + 1]; /* the last is +Inf */
	atomic_uint_fast64_t sum_us, count;
};

struct metrics {
	atomic_uint_fast64_t deliveries[M_EVENTS][M_OUTCOMES];
	struct m_hist webhook_latency; /* request complete -> answer, commit included */
	struct m_hist commit_batch;    /* group-commit batch sizes (in items, not seconds) */
	atomic_uint_fast64_t polls_ok, polls_failed, poll_jobs;
	atomic_uint_fast64_t selections_ok, selections_failed;
	atomic_uint_fast64_t
	    funnel_last[4]; /* the last selection: catalog, impacted, eligible, scheduled */
	atomic_uint_fast64_t case_outcomes[M_CASE_OUTCOMES]; /* by enum exec_outcome */
	struct m_hist job_run;                               /* claim -> completed queued */
	atomic_uint_fast64_t jobs_completed, jobs_released, jobs_retried;
	atomic_uint_fast64_t outbox_posts, outbox_delivered, outbox_retries, outbox_dead;
	atomic_uint_fast64_t retention_jobs, retention_outbox;
};

enum m_event metrics_event(const char *name);
void metrics_delivery(struct metrics *m, enum m_event e, enum m_outcome o);
void metrics_observe_us(struct m_hist *h, uint64_t us);
void metrics_observe_count(struct m_hist *h, uint64_t n);

void metrics_observe_seconds(struct m_hist *h, uint64_t ms);

/* Appends the counters above in Prometheus text format. */
int metrics_write(struct buf *out, struct metrics *m);

#endif
