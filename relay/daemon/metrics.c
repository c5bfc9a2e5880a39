/* Prometheus text exposition of the daemon's counters. */
#include "metrics.h"

#include <string.h>

#include "executors/case.h"

static const char *const ev_names[M_EVENTS] = { "push", "pull_request", "repository_dispatch",
						"ping", "other" };
static const char *const out_names[M_OUTCOMES] = { "accepted", "duplicate", "ignored", "rejected",
						   "error" };
/* Latency buckets in microseconds (the le labels print them in seconds). */
static const uint64_t lat_us[M_LAT_BUCKETS] = { 250,   500,   1000,   2500,   5000,    10000,
						25000, 50000, 100000, 250000, 1000000, 10000000 };
static const uint64_t batch_n[M_LAT_BUCKETS] = {
	1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096
};

/* Job run times in milliseconds (printed in seconds). */
static const uint64_t run_ms[M_LAT_BUCKETS] = { 100,   250,   500,   1000,   2500,   5000,
						10000, 30000, 60000, 300000, 900000, 3600000 };

enum m_event metrics_event(const char *name)
{
	for (int i = 0; i < M_EV_OTHER; i++)
		if (!strcmp(name, ev_names[i]))
			return (enum m_event)i;
	return M_EV_OTHER;
}

void metrics_delivery(struct metrics *m, enum m_event e, enum m_outcome o)
{
	atomic_fetch_add(&m->deliveries[e][o], 1);
}

static void observe(struct m_hist *h, const uint64_t *bounds, uint64_t v)
{
	int i = 0;
	while (i < M_LAT_BUCKETS && v > bounds[i])
		i++;
	atomic_fetch_add(&h->bucket[i], 1);
	atomic_fetch_add(&h->sum_us, v);
	atomic_fetch_add(&h->count, 1);
}

void metrics_observe_us(struct m_hist *h, uint64_t us)
{
	observe(h, lat_us, us);
}

void metrics_observe_seconds(struct m_hist *h, uint64_t ms)
{
	observe(h, run_ms, ms);
}

void metrics_observe_count(struct m_hist *h, uint64_t n)
{
	observe(h, batch_n, n);
}

static int write_hist(struct buf *o, const char *name, const char *help, struct m_hist *h,
		      const uint64_t *bounds, double scale)
{
	int rc = buf_appendf(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	uint64_t cum = 0;
	for (int i = 0; rc == 0 && i <= M_LAT_BUCKETS; i++) {
		cum += atomic_load(&h->bucket[i]);
		if (i < M_LAT_BUCKETS)
			rc = buf_appendf(o, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i] * scale,
					 (unsigned long long)cum);
		else
			rc = buf_appendf(o, "%s_bucket{le=\"+Inf\"} %llu\n", name,
					 (unsigned long long)cum);
	}
	if (rc == 0)
		rc = buf_appendf(o, "%s_sum %g\n%s_count %llu\n", name,
				 (double)atomic_load(&h->sum_us) * scale, name,
				 (unsigned long long)atomic_load(&h->count));
	return rc;
}

static int counter(struct buf *o, const char *name, const char *help, atomic_uint_fast64_t *v)
{
	return buf_appendf(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
			   (unsigned long long)atomic_load(v));
}

/* What the workers, the outbox sender and retention add. */
static int write_work(struct buf *o, struct metrics *m)
{
	int rc = buf_appendf(o, "# HELP spyre_ci_cases_total Kernel cases run, by outcome.\n"
				"# TYPE spyre_ci_cases_total counter\n");
	for (int i = 1; rc == 0 && i < EXEC_OUTCOME_COUNT && i < M_CASE_OUTCOMES; i++)
		rc = buf_appendf(o, "spyre_ci_cases_total{outcome=\"%s\"} %llu\n",
				 exec_outcome_name((enum exec_outcome)i),
				 (unsigned long long)atomic_load(&m->case_outcomes[i]));
	if (rc == 0)
		rc = write_hist(o, "spyre_ci_job_run_seconds",
				"A job's run: claim to its completed message queued.", &m->job_run,
				run_ms, 1e-3);
	struct {
		const char *name, *help;
		atomic_uint_fast64_t *v;
	} c[] = {
		{ "spyre_ci_jobs_completed_total", "Jobs run to the end.", &m->jobs_completed },
		{ "spyre_ci_jobs_released_total", "Jobs put back unfinished (stop).",
		  &m->jobs_released },
		{ "spyre_ci_jobs_retried_total",
		  "Job attempts that failed in a way that may pass, queued again after a wait.",
		  &m->jobs_retried },
		{ "spyre_ci_outbox_posts_total", "Dashboard posts, first or again.",
		  &m->outbox_posts },
		{ "spyre_ci_outbox_delivered_total", "Dashboard messages delivered.",
		  &m->outbox_delivered },
		{ "spyre_ci_outbox_retries_total", "Dashboard posts failed and scheduled again.",
		  &m->outbox_retries },
		{ "spyre_ci_outbox_dead_total", "Dashboard messages dead-lettered.",
		  &m->outbox_dead },
		{ "spyre_ci_retention_jobs_total", "Jobs removed by retention.",
		  &m->retention_jobs },
		{ "spyre_ci_retention_outbox_total", "Outbox messages removed by retention.",
		  &m->retention_outbox },
	};
	for (size_t i = 0; rc == 0 && i < sizeof(c) / sizeof(c[0]); i++)
		rc = counter(o, c[i].name, c[i].help, c[i].v);
	return rc;
}

int metrics_write(struct buf *o, struct metrics *m)
{
	int rc = buf_appendf(o, "# HELP spyre_ci_deliveries_total Webhook deliveries by event and "
				"outcome.\n# TYPE spyre_ci_deliveries_total counter\n");
	for (int e = 0; rc == 0 && e < M_EVENTS; e++)
		for (int k = 0; rc == 0 && k < M_OUTCOMES; k++)
			rc = buf_appendf(o,
					 "spyre_ci_deliveries_total{event=\"%s\",outcome=\"%s\"} "
					 "%llu\n",
					 ev_names[e], out_names[k],
					 (unsigned long long)atomic_load(&m->deliveries[e][k]));
	if (rc == 0)
		rc = write_hist(o, "spyre_ci_webhook_seconds",
				"Webhook answer latency, durable commit included.",
				&m->webhook_latency, lat_us, 1e-6);
	if (rc == 0)
		rc = write_hist(o, "spyre_ci_commit_batch_size",
				"Deliveries committed together by one group commit.",
				&m->commit_batch, batch_n, 1.0);
	if (rc == 0)
		rc = counter(o, "spyre_ci_polls_ok_total", "Successful upstream fetches.",
			     &m->polls_ok);
	if (rc == 0)
		rc = counter(o, "spyre_ci_polls_failed_total", "Failed upstream fetches.",
			     &m->polls_failed);
	if (rc == 0)
		rc = counter(o, "spyre_ci_poll_jobs_total", "Jobs the poller made.", &m->poll_jobs);
	if (rc == 0)
		rc = counter(o, "spyre_ci_selections_total", "Selections recorded.",
			     &m->selections_ok);
	if (rc == 0)
		rc = counter(o, "spyre_ci_selections_failed_total", "Selections that failed.",
			     &m->selections_failed);
	static const char *const stage[4] = { "catalog", "impacted", "eligible", "scheduled" };
	if (rc == 0)
		rc = buf_appendf(o, "# HELP spyre_ci_selection_funnel Tests at each stage of the "
				    "last selection.\n# TYPE spyre_ci_selection_funnel gauge\n");
	for (int i = 0; rc == 0 && i < 4; i++)
		rc = buf_appendf(o, "spyre_ci_selection_funnel{stage=\"%s\"} %llu\n", stage[i],
				 (unsigned long long)atomic_load(&m->funnel_last[i]));
	if (rc == 0)
		rc = write_work(o, m);
	return rc;
}
