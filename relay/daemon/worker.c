/* A worker thread: claim a job, bring its range into the mirror, and take it through the funnel
 * (funnel.h: select, record the selection, run the cases, record the results, queue the
 * dashboard's messages: job.h). The funnel's state that is exact across jobs (the selector's
 * cache: blobs by id, catalogs by tree; the specs, their resolver and the drift memo) lives in
 * the worker and is kept between jobs; the specs are loaded again only when SIGHUP brought a
 * new configuration. A lease keeper thread renews the lease while the job runs; every write of
 * the job checks the lease. */
#include "worker.h"

#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "daemon.h"
#include "funnel/funnel.h"
#include "job.h"
#include "mirror.h"

#define WORKER_IDLE_MS 1000

struct worker {
	struct daemon *d;
	struct store *s;
	struct dc_outbox *ob; /* on `s` */
	char owner[64];
	struct funnel_cache *cache;
	unsigned specs_gen; /* the configuration the specs were loaded from (0: none) */
	struct funnel_specs *specs;
};

static void specs_drop(struct worker *w)
{
	funnel_specs_destroy(w->specs);
	w->specs = NULL;
	w->specs_gen = 0;
}

static int specs_load(struct worker *w, const struct cfg_ref *cfg)
{
	if (w->specs && w->specs_gen == cfg->gen)
		return 0;
	specs_drop(w);
	struct funnel_specs_opts o = { .paths = (const char *const *)cfg->c.specs.v,
				       .n_paths = cfg->c.specs.n };
	int rc = funnel_specs_load(&w->specs, &o);
	if (rc < 0)
		return rc;
	w->specs_gen = cfg->gen;
	return 0;
}

static bool have_commit(git_repository *repo, const char *sha)
{
	git_oid oid;
	git_commit *c = NULL;
	if (git_oid_fromstr(&oid, sha) < 0 || git_commit_lookup(&c, repo, &oid) < 0)
		return false;
	git_commit_free(c);
	return true;
}

/* Makes sure the head is in the mirror (fetching the job's ref if not) and finds a base when
 * the event gave none: the merge base with the first watched branch for a pull request, the
 * first parent otherwise. */
static int prepare_range(struct job_row *j, const struct config *c, const atomic_bool *stop)
{
	git_repository *repo = NULL;
	int rc = mirror_open(&repo, c->state_dir);
	if (rc == 0 && !have_commit(repo, j->head)) {
		char spec[600];
		snprintf(spec, sizeof(spec), "+%s:%s", j->ref, j->ref);
		char *specs[] = { spec };
		git_remote *remote = NULL;
		rc = mirror_remote(&remote, repo, c->upstream_url);
		if (rc == 0)
			rc = mirror_fetch(remote, specs, 1, stop);
		git_remote_free(remote);
		if (rc == 0 && !have_commit(repo, j->head))
			rc = err_set(ERR_NOTFOUND, "commit %s is not upstream", j->head);
	}
	git_oid head, other;
	if (rc == 0 && !j->base[0] && git_oid_fromstr(&head, j->head) == 0) {
		char ref[300];
		snprintf(ref, sizeof(ref), "refs/heads/%s", c->branches.v[0]);
		git_commit *hc = NULL;
		if (j->pr_number && git_reference_name_to_id(&other, repo, ref) == 0) {
			char prev[41];
			git_oid_tostr(prev, sizeof(prev), &other);
			mirror_base(j->base, repo, prev, j->head);
		} else if (git_commit_lookup(&hc, repo, &head) == 0 &&
			   git_commit_parentcount(hc) > 0) {
			git_oid_tostr(j->base, sizeof(j->base), git_commit_parent_id(hc, 0));
		}
		git_commit_free(hc);
	}
	git_repository_free(repo);
	return rc;
}

/* Between the funnel's steps: the lease is still ours (ERR_BADSTATE when not). */
static int renew(void *ctx, enum funnel_step step)
{
	(void)step;
	struct job *j = ctx;
	return j->s->ops->renew(j->s, j->row.id, j->owner, (int64_t)j->c->lease_s * 1000,
				clock_wall_ms());
}

static int select_range(struct worker *w, struct job *j, struct funnel_selection *sel)
{
	char repo[PATH_TEXT_MAX];
	const struct config *c = j->c;
	struct funnel_select_opts o = { .shards = (size_t)c->selection_shards,
					.checkpoint = renew,
					.checkpoint_ctx = j };
	int rc = mirror_path(repo, sizeof(repo), c->state_dir);
	if (rc == 0)
		rc = selector_budget_parse(&o.budget, c->selection_budget);
	struct funnel_change ch = { .repo = repo,
				    .base = j->row.base[0] ? j->row.base : NULL,
				    .head = j->row.head };
	return rc ? rc : funnel_select(sel, &ch, w->specs, w->cache, &o);
}

static void publish_funnel(struct daemon *d, const struct select_report *rep)
{
	atomic_store(&d->metrics.funnel_last[0], rep->stages[0].in);
	for (int i = 1; i < 4; i++)
		atomic_store(&d->metrics.funnel_last[i], rep->stages[i].out);
}

/* The selection as the store keeps it (the job page and /api read it back). */
static int record_selection(struct worker *w, const struct job *j, const struct select_report *rep)
{
	char *json = selector_report_json(rep);
	if (!json)
		return err_set(ERR_NOMEM, "out of memory");
	int rc = j->s->ops->selection_put(j->s, j->row.id, j->owner, json,
					  (int64_t)rep->stages[3].out, clock_wall_ms());
	free(json);
	if (rc == 0) {
		atomic_fetch_add(&w->d->metrics.selections_ok, 1);
		publish_funnel(w->d, rep);
	}
	return rc;
}

/* The cases of the selection through the executors, recorded. 0, JOB_ATTEMPT_STOPPED, or a
 * negative code. */
static int run_cases(struct worker *w, struct job *j, const struct funnel_selection *sel)
{
	const struct config *c = j->c;
	struct funnel_run_opts o = {
		.jobs = c->executor_jobs,
		.timeout_s = c->executor_timeout_s,
		.mem_bytes = c->executor_memory_max,
		.retries = 1,
		.spec_paths = (const char *const *)c->specs.v,
		.n_spec_paths = c->specs.n,
		.runner = w->d->seams.runner,
		.runner_ctx = w->d->seams.runner_ctx,
		/* the daemon has threads (HTTP, poller, outbox, other workers): a bare fork
		 * could inherit a lock one of them held; spyre-ci's main answers the worker
		 * argument */
		.worker_exe = "/proc/self/exe",
		.stop = &w->d->exec_stop,
	};
	struct funnel_results res = { 0 };
	int rc = funnel_run(&res, sel->cases, sel->n_cases, &o);
	if (rc == 0 && res.stopped)
		rc = JOB_ATTEMPT_STOPPED; /* nothing is recorded */
	if (rc == 0)
		rc = job_record(j, &res);
	funnel_results_finish(&res);
	return rc;
}

/* One attempt at a claimed job, from its range to `completed` queued and the job reported. */
static int attempt(struct worker *w, struct job *j, const struct cfg_ref *cfg, int64_t t0)
{
	struct funnel_selection sel = { 0 };
	int rc = prepare_range(&j->row, j->c, &w->d->stopping);
	if (rc == 0)
		rc = specs_load(w, cfg);
	if (rc == 0)
		rc = select_range(w, j, &sel);
	if (rc == 0)
		rc = record_selection(w, j, &sel.rep);
	if (rc == 0)
		rc = job_announce(j);
	if (rc == 0)
		rc = run_cases(w, j, &sel);
	char detail[200];
	bool dash = j->c->crcr_url[0] || j->c->hud_url[0];
	snprintf(detail, sizeof(detail), "%zu kernel cases run; %s", sel.n_cases,
		 dash ? "results queued for the dashboard" : "no dashboard configured");
	if (rc == 0)
		rc = job_complete(j, detail);
	if (rc == 0) {
		int64_t ms = clock_wall_ms() - t0;
		metrics_observe_seconds(&w->d->metrics.job_run, (uint64_t)(ms > 0 ? ms : 0));
		log_info("job %lld: %s..%.12s: %zu kernel cases", (long long)j->row.id,
			 j->row.base[0] ? j->row.base : "(root)", j->row.head, sel.n_cases);
	}
	funnel_selection_finish(&sel);
	return rc;
}

/* Keeps a job's lease alive while the worker is busy with it (the selector on a large range,
 * the executors): a thread of its own, with its own store handle, renewing every third of the
 * lease. A renewal that fails means the lease was lost; the worker then finds out at its next
 * write, which checks the lease in the same transaction. */
struct keeper {
	struct daemon *d;
	const char *owner, *state_dir;
	int64_t job_id, lease_ms;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool done;
	pthread_t thread;
};

static void *keeper_main(void *arg)
{
	struct keeper *k = arg;
	struct store *s = NULL;
	if (store_sqlite_open(&s, k->state_dir) < 0) {
		log_error("lease keeper: %s", err_last());
		return NULL;
	}
	pthread_mutex_lock(&k->mu);
	while (!k->done) {
		struct timespec ts;
		clock_deadline(&ts, k->lease_ms / 3);
		pthread_cond_timedwait(&k->cond, &k->mu, &ts);
		if (!k->done &&
		    s->ops->renew(s, k->job_id, k->owner, k->lease_ms, clock_wall_ms()) < 0)
			log_warn("job %lld: lease renewal failed: %s", (long long)k->job_id,
				 err_last());
	}
	pthread_mutex_unlock(&k->mu);
	store_close(s);
	return NULL;
}

static int keeper_start(struct keeper *k, struct worker *w, const struct job_row *j,
			const struct config *c)
{
	*k = (struct keeper){ .d = w->d,
			      .owner = w->owner,
			      .state_dir = c->state_dir,
			      .job_id = j->id,
			      .lease_ms = (int64_t)c->lease_s * 1000 };
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cond, NULL);
	if (pthread_create(&k->thread, NULL, keeper_main, k) != 0)
		return err_set(ERR_GENERIC, "cannot start the lease keeper");
	return 0;
}

static void keeper_stop(struct keeper *k)
{
	pthread_mutex_lock(&k->mu);
	k->done = true;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->cond);
}

static void run_job(struct worker *w, const struct job_row *row, const struct cfg_ref *cfg)
{
	struct job j;
	struct keeper k;
	if (job_init(&j, row, &cfg->c, w->s, w->ob, w->owner, &w->d->metrics) < 0 ||
	    keeper_start(&k, w, row, &cfg->c) < 0) {
		log_error("job %lld: %s", (long long)row->id, err_last());
		w->s->ops->release(w->s, row->id, w->owner, clock_wall_ms());
		return;
	}
	if (j.row.attempts > cfg->c.max_attempts) {
		job_give_up(&j);
	} else {
		log_info("worker %s: claimed job %lld (attempt %lld)", w->owner, (long long)row->id,
			 (long long)row->attempts);
		int rc = attempt(w, &j, cfg, clock_wall_ms());
		if (rc != 0)
			job_settle(&j, rc, atomic_load(&w->d->stopping), err_last());
	}
	keeper_stop(&k);
}

void *worker_main(void *arg)
{
	static atomic_int next_index;
	struct worker w = { .d = arg };
	snprintf(w.owner, sizeof(w.owner), "pid%ld-w%d", (long)getpid(),
		 atomic_fetch_add(&next_index, 1));
	struct cfg_ref *cfg = daemon_cfg_get(w.d);
	int rc = store_sqlite_open(&w.s, cfg->c.state_dir);
	if (rc == 0)
		rc = funnel_cache_create(&w.cache, NULL);
	if (rc == 0) /* on the worker's own handle: the thread that uses the one uses the other */
		rc = w.s->ops->outbox_open(w.s, &w.ob);
	daemon_cfg_put(cfg);
	if (rc < 0)
		log_error("worker %s: %s", w.owner, err_last());
	while (rc == 0 && !atomic_load(&w.d->stopping)) {
		cfg = daemon_cfg_get(w.d);
		struct job_row j;
		int c = w.s->ops->claim(w.s, &j, w.owner, (int64_t)cfg->c.lease_s * 1000,
					clock_wall_ms());
		if (c == 0)
			run_job(&w, &j, cfg);
		daemon_cfg_put(cfg);
		if (c == ERR_NOTFOUND)
			daemon_sleep(w.d, WORKER_IDLE_MS);
		else if (c < 0) {
			log_error("worker %s: %s", w.owner, err_last());
			daemon_sleep(w.d, WORKER_IDLE_MS);
		}
	}
	specs_drop(&w);
	dc_outbox_destroy(w.ob);
	funnel_cache_destroy(w.cache);
	store_close(w.s);
	return NULL;
}
