/* The read-only endpoints: /readyz, /metrics and the jobs API. They share one read store
 * handle under a mutex (reads are short; the writers have their own handles). */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/jsonx.h"
#include "common/num.h"
#include "daemon.h"
#include "http_priv.h"

#define API_PAGE_MAX     100
#define API_PAGE_DEFAULT 20
#define METRICS_TEXT_MAX (1 * 1024 * 1024)

enum MHD_Result http__readyz(struct daemon *d, struct MHD_Connection *c)
{
	pthread_mutex_lock(&d->read_mu);
	int store_ok = d->read_store->ops->ping(d->read_store) == 0;
	pthread_mutex_unlock(&d->read_mu);
	int failures = atomic_load(&d->poll_failures);
	int poller_ok = !atomic_load(&d->poll_enabled) || failures < 3;
	json_t *v = json_pack("{s:b,s:b,s:i}", "store", store_ok, "poller", poller_ok,
			      "poll_failures", failures);
	return http__reply_json(c, store_ok && poller_ok ? 200 : 503, v);
}

static int store_gauges(struct daemon *d, struct buf *o)
{
	int64_t counts[JOB_STATES], outbox = 0, deliveries = 0;
	pthread_mutex_lock(&d->read_mu);
	struct store *s = d->read_store;
	int rc = s->ops->job_counts(s, counts);
	if (rc == 0)
		rc = s->ops->outbox_depth(s, &outbox);
	if (rc == 0)
		rc = s->ops->delivery_count(s, &deliveries);
	pthread_mutex_unlock(&d->read_mu);
	if (rc < 0)
		return rc;
	rc = buf_appendf(o, "# HELP spyre_ci_jobs Jobs by state.\n# TYPE spyre_ci_jobs gauge\n");
	for (int i = 0; rc == 0 && i < JOB_STATES; i++)
		rc = buf_appendf(o, "spyre_ci_jobs{state=\"%s\"} %lld\n",
				 job_state_name((enum job_state)i), (long long)counts[i]);
	if (rc == 0)
		rc = buf_appendf(o,
				 "# HELP spyre_ci_queue_depth Jobs waiting for a worker.\n"
				 "# TYPE spyre_ci_queue_depth gauge\nspyre_ci_queue_depth %lld\n"
				 "# HELP spyre_ci_outbox_depth Dashboard messages not yet sent.\n"
				 "# TYPE spyre_ci_outbox_depth gauge\nspyre_ci_outbox_depth %lld\n"
				 "# HELP spyre_ci_deliveries_stored Delivery ids in the store.\n"
				 "# TYPE spyre_ci_deliveries_stored gauge\n"
				 "spyre_ci_deliveries_stored %lld\n",
				 (long long)counts[JOB_QUEUED], (long long)outbox,
				 (long long)deliveries);
	return rc;
}

enum MHD_Result http__metrics(struct daemon *d, struct MHD_Connection *c)
{
	struct buf o;
	buf_init(&o, METRICS_TEXT_MAX);
	int rc = metrics_write(&o, &d->metrics);
	if (rc == 0)
		rc = store_gauges(d, &o);
	enum MHD_Result r =
	    rc == 0 ? http__reply(c, 200, "text/plain; version=0.0.4", buf_str(&o), o.len)
		    : http__error(c, 503, "metrics unavailable");
	buf_finish(&o);
	return r;
}

static json_t *job_json(const struct job_row *j)
{
	char created[CLOCK_ISO8601_LEN + 1] = "";
	clock_format_iso8601(created, sizeof(created), j->created_ms, 0);
	json_t *v = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:I}", "id", (json_int_t)j->id, "state",
			      job_state_name(j->state), "event", j->event, "ref", j->ref, "head",
			      j->head, "created_at", created, "attempts", (json_int_t)j->attempts);
	if (!v)
		return NULL;
	jx_set_str(v, "base", j->base[0] ? j->base : NULL);
	if (j->pr_number)
		jx_set_int(v, "pr_number", j->pr_number);
	if (j->detail[0])
		jx_set_str(v, "detail", j->detail);
	return v;
}

static int query_int(struct MHD_Connection *c, const char *name, int64_t *out, int64_t min,
		     int64_t max)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	return v ? num_parse_i64(out, v, min, max) : 0;
}

enum MHD_Result http__jobs(struct daemon *d, struct MHD_Connection *c)
{
	int64_t limit = API_PAGE_DEFAULT, before = 0;
	if (query_int(c, "limit", &limit, 1, API_PAGE_MAX) < 0 ||
	    query_int(c, "before", &before, 1, INT64_MAX) < 0)
		return http__error(c, 400, "limit must be 1..100 and before a job id");
	struct job_row *rows = malloc(API_PAGE_MAX * sizeof(*rows));
	size_t n = 0;
	if (!rows)
		return http__error(c, 503, "out of memory");
	pthread_mutex_lock(&d->read_mu);
	int rc = d->read_store->ops->job_list(d->read_store, rows, &n, (size_t)limit, before);
	pthread_mutex_unlock(&d->read_mu);
	if (rc < 0) {
		free(rows);
		return http__error(c, 503, "store unavailable");
	}
	json_t *jobs = json_array();
	for (size_t i = 0; i < n; i++)
		jx_append_new(jobs, job_json(&rows[i]));
	json_t *v = json_object();
	jx_set_new(v, "jobs", jobs); /* v owns jobs */
	if (n == (size_t)limit)
		jx_set_int(v, "next_before", rows[n - 1].id);
	free(rows);
	return http__reply_json(c, 200, v);
}

/* The funnel of a stored selection report: its "stages" as they are. */
static void add_count(const char *outcome, int64_t n, void *ctx)
{
	jx_set_int(ctx, outcome, n);
}

static json_t *funnel(const char *report)
{
	json_t *r = report ? jx_loadb(report, strlen(report), 256u << 20) : NULL;
	json_t *stages = r ? json_incref(jx_get(r, "stages")) : NULL;
	json_decref(r);
	return stages ? stages : json_null();
}

enum MHD_Result http__job(struct daemon *d, struct MHD_Connection *c, const char *idtext)
{
	int64_t id;
	if (num_parse_i64(&id, idtext, 1, INT64_MAX) < 0)
		return http__error(c, 404, "no such job");
	struct job_row j;
	char *report = NULL;
	pthread_mutex_lock(&d->read_mu);
	int rc = d->read_store->ops->job_get(d->read_store, &j, id);
	if (rc == 0 && d->read_store->ops->selection_get(d->read_store, &report, id) < 0)
		report = NULL;
	pthread_mutex_unlock(&d->read_mu);
	if (rc == ERR_NOTFOUND)
		return http__error(c, 404, "no such job");
	if (rc < 0)
		return http__error(c, 503, "store unavailable");
	json_t *v = job_json(&j);
	jx_set_new(v, "funnel", funnel(report));
	/* the case outcomes once recorded; null before (never an empty summary that looks like
	 * success) */
	json_t *res = json_object();
	pthread_mutex_lock(&d->read_mu);
	rc = d->read_store->ops->results_count(d->read_store, id, add_count, res);
	pthread_mutex_unlock(&d->read_mu);
	jx_set_new(v, "results", rc == 0 && res && json_object_size(res) ? res : json_null());
	if (!(rc == 0 && res && json_object_size(res)))
		json_decref(res);
	free(report);
	return http__reply_json(c, 200, v);
}
