/* A worker thread: claim, bring the range into the mirror, select, record, run the cases. The
 * selector's state that is exact across jobs (the catalog cache: blobs by id, catalogs by tree;
 * the spec set, its resolver and the drift memo) lives in the worker and is kept between jobs;
 * the specs are loaded again only when SIGHUP brought a new configuration. A lease keeper
 * thread renews the lease while the job runs; every write of the job checks the lease. */
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
#include "jobrun.h"
#include "mirror.h"
#include "select_front.h"
#include "selector/changes.h"
#include "selector/select.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define WORKER_IDLE_MS 1000

struct worker {
	struct daemon *d;
	struct store *s;
	char owner[64];
	struct catalog_cache *cache;
	unsigned specs_gen; /* the configuration the specs were loaded from (0: none) */
	struct spec_set *specs;
	struct spec_resolver *resolver;
	struct select_drift_memo *memo;
	struct jobrun jr;
};

static void specs_drop(struct worker *w)
{
	selector_drift_memo_destroy(w->memo);
	testspecs_resolver_destroy(w->resolver);
	testspecs_set_destroy(w->specs);
	w->memo = NULL;
	w->resolver = NULL;
	w->specs = NULL;
	w->specs_gen = 0;
}

static int specs_load(struct worker *w, const struct cfg_ref *cfg)
{
	if (w->specs && w->specs_gen == cfg->gen)
		return 0;
	specs_drop(w);
	struct spec_load_opts o = { 0 };
	int rc = testspecs_set_create(&w->specs);
	for (size_t i = 0; rc == 0 && i < cfg->c.specs.n; i++)
		if ((rc = testspecs_load_path(w->specs, cfg->c.specs.v[i], &o)) < 0)
			err_prefix("specs %s", cfg->c.specs.v[i]);
	if (rc == 0)
		rc = testspecs_resolver_create(&w->resolver, w->specs);
	if (rc == 0)
		rc = selector_drift_memo_create(&w->memo, w->specs, w->resolver);
	if (rc < 0) {
		specs_drop(w);
		return rc;
	}
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

static int renew(struct worker *w, const struct job_row *j, const struct config *c)
{
	return w->s->ops->renew(w->s, j->id, w->owner, (int64_t)c->lease_s * 1000, clock_wall_ms());
}

static int select_range(struct worker *w, const struct job_row *j, const struct config *c,
			struct select_report *rep, struct spec_case_list *list)
{
	char repo[PATH_TEXT_MAX];
	struct change_set *cs = NULL;
	struct front f = { .cache = w->cache, .cache_borrowed = true };
	struct select_budget budget;
	int rc = mirror_path(repo, sizeof(repo), c->state_dir);
	if (rc == 0)
		rc = selector_budget_parse(&budget, c->selection_budget);
	if (rc == 0)
		rc = selector_changes_from_git(&cs, repo, j->base[0] ? j->base : NULL, j->head,
					       NULL);
	if (rc == 0)
		rc = renew(w, j, c);
	if (rc == 0)
		rc = front_catalogs(&f, repo, j->base[0] ? j->base : NULL, j->head, NULL);
	if (rc == 0)
		rc = front_impact(&f, cs);
	if (rc == 0)
		rc = renew(w, j, c);
	if (rc == 0) {
		selector_report_set_front(rep, f.head->n_tests, cs->n_files, f.n_cands);
		if (f.impact->fallback)
			selector_report_set_fallback(rep, f.impact->fallback_reason);
		struct select_stage3_opts o3 = { .catalog_ids = f.ids,
						 .n_catalog = f.head->n_tests,
						 .drift_memo = w->memo,
						 .opdb = f.head };
		rc = selector_stage3_run(rep, w->specs, w->resolver, f.cands, f.n_cands, &o3);
	}
	if (rc == 0)
		rc = selector_stage4_run(rep, NULL, NULL, &budget, (size_t)c->selection_shards);
	/* the cases point into the worker's spec set, which outlives the job */
	if (rc == 0)
		rc = front_expand_scheduled(&f, rep, w->specs, w->resolver, NULL, list);
	front_finish(&f);
	selector_change_set_destroy(cs);
	return rc;
}

static void publish_funnel(struct daemon *d, const struct select_report *rep)
{
	atomic_store(&d->metrics.funnel_last[0], rep->stages[0].in);
	for (int i = 1; i < 4; i++)
		atomic_store(&d->metrics.funnel_last[i], rep->stages[i].out);
}

/* After the selection is recorded: in_progress queued, the cases run and recorded, completed
 * queued, the job reported. A stop request in the middle puts the job back (queued). */
static int hand_on(struct worker *w, const struct job_row *j, const struct config *c,
		   const struct spec_case_list *list, int64_t t0)
{
	int rc = jobrun_started(&w->jr, w->s, j, c);
	if (rc == 0)
		rc = jobrun_cases(&w->jr, w->s, w->owner, j, c, list);
	if (rc == 1) {
		atomic_fetch_add(&w->d->metrics.jobs_released, 1);
		log_info("job %lld: stopped mid-run; back in the queue", (long long)j->id);
		return w->s->ops->release(w->s, j->id, w->owner, clock_wall_ms());
	}
	if (rc == 0)
		rc = jobrun_completed(&w->jr, j, c);
	if (rc < 0)
		return rc;
	char detail[200];
	bool dash = c->crcr_url[0] || c->hud_url[0];
	snprintf(detail, sizeof(detail), "%zu kernel cases run; %s", list->n,
		 dash ? "results queued for the dashboard" : "no dashboard configured");
	rc = w->s->ops->finish(w->s, j->id, w->owner, JOB_REPORTED, detail, clock_wall_ms());
	if (rc == 0) {
		atomic_fetch_add(&w->d->metrics.jobs_completed, 1);
		int64_t ms = clock_wall_ms() - t0;
		metrics_observe_seconds(&w->d->metrics.job_run, (uint64_t)(ms > 0 ? ms : 0));
	}
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

/* Failures that may pass on their own: the operating system's (a fetch that lost its
 * connection or met a lock, a full disk, a busy database) and memory. A bad range, spec or
 * input fails the same way every time and fails the job at once. */
static bool passing(int rc)
{
	return rc == ERR_IO || rc == ERR_NOMEM;
}

/* JOB_RETRY_FIRST_MS after the first failed attempt, doubling, at most JOB_RETRY_MAX_MS. */
static int64_t retry_wait_ms(int64_t attempts)
{
	int64_t ms = JOB_RETRY_FIRST_MS;
	for (int64_t i = 1; i < attempts && ms < JOB_RETRY_MAX_MS; i++)
		ms *= 2;
	return ms < JOB_RETRY_MAX_MS ? ms : JOB_RETRY_MAX_MS;
}

static void run_job(struct worker *w, struct job_row *j, const struct cfg_ref *cfg)
{
	struct keeper k;
	if (keeper_start(&k, w, j, &cfg->c) < 0) {
		log_error("job %lld: %s", (long long)j->id, err_last());
		w->s->ops->release(w->s, j->id, w->owner, clock_wall_ms());
		return;
	}
	int64_t t0 = clock_wall_ms();
	struct select_report rep;
	selector_report_init(&rep);
	struct spec_case_list list;
	testspecs_cases_init(&list);
	char *json = NULL;
	int rc = prepare_range(j, &cfg->c, &w->d->stopping);
	if (rc == 0)
		rc = specs_load(w, cfg);
	if (rc == 0)
		rc = select_range(w, j, &cfg->c, &rep, &list);
	if (rc == 0 && !(json = selector_report_json(&rep)))
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc == 0)
		rc = w->s->ops->selection_put(w->s, j->id, w->owner, json,
					      (int64_t)rep.stages[3].out, clock_wall_ms());
	if (rc == 0) {
		atomic_fetch_add(&w->d->metrics.selections_ok, 1);
		publish_funnel(w->d, &rep);
		rc = hand_on(w, j, &cfg->c, &list, t0);
	}
	if (rc < 0 && rc != ERR_BADSTATE && atomic_load(&w->d->stopping)) {
		/* a fetch or a write cut short by the stop: not the job's failure */
		atomic_fetch_add(&w->d->metrics.jobs_released, 1);
		log_info("job %lld: stopped (%s); back in the queue", (long long)j->id, err_last());
		w->s->ops->release(w->s, j->id, w->owner, clock_wall_ms());
	} else if (rc < 0 && passing(rc) && j->attempts < cfg->c.max_attempts) {
		char detail[400];
		int64_t wait = retry_wait_ms(j->attempts);
		snprintf(detail, sizeof(detail), "attempt %lld of %d failed, next in %lld s: %s",
			 (long long)j->attempts, cfg->c.max_attempts, (long long)(wait / 1000),
			 err_last());
		log_warn("job %lld: %s", (long long)j->id, detail);
		int64_t now = clock_wall_ms();
		if (w->s->ops->retry(w->s, j->id, w->owner, now + wait, detail, now) < 0)
			log_error("job %lld: %s", (long long)j->id, err_last());
		else
			atomic_fetch_add(&w->d->metrics.jobs_retried, 1);
	} else if (rc < 0) {
		char detail[400];
		if (passing(rc))
			snprintf(detail, sizeof(detail), "attempt %lld of %d failed, no more: %s",
				 (long long)j->attempts, cfg->c.max_attempts, err_last());
		else
			snprintf(detail, sizeof(detail), "%s", err_last());
		atomic_fetch_add(&w->d->metrics.selections_failed, 1);
		log_error("job %lld: %s", (long long)j->id, detail);
		if (rc != ERR_BADSTATE) { /* a lost lease is someone else's job now */
			if (jobrun_failed(&w->jr, j, &cfg->c) < 0)
				log_error("job %lld: %s", (long long)j->id, err_last());
			w->s->ops->finish(w->s, j->id, w->owner, JOB_FAILED, detail,
					  clock_wall_ms());
		}
	} else {
		log_info("job %lld: %s..%.12s: %zu kernel cases", (long long)j->id,
			 j->base[0] ? j->base : "(root)", j->head, list.n);
	}
	keeper_stop(&k);
	testspecs_cases_finish(&list);
	free(json);
	selector_report_finish(&rep);
}

/* A job claimed past workers.max_attempts: its last lease expired (its daemon was killed, or
 * it ran longer than its lease with the keeper stalled), or a retry came due after the limit
 * was lowered. It is failed, and the dashboard told when it had heard of the job. */
static void give_up(struct worker *w, const struct job_row *j, const struct config *c)
{
	char detail[sizeof(j->detail) + 96];
	snprintf(detail, sizeof(detail),
		 "gave up after %lld attempts (workers.max_attempts %d)%s%s",
		 (long long)(j->attempts - 1), c->max_attempts, j->detail[0] ? "; last: " : "",
		 j->detail);
	log_error("job %lld: %s", (long long)j->id, detail);
	if (jobrun_failed(&w->jr, j, c) < 0)
		log_error("job %lld: %s", (long long)j->id, err_last());
	if (w->s->ops->finish(w->s, j->id, w->owner, JOB_FAILED, detail, clock_wall_ms()) < 0)
		log_error("job %lld: %s", (long long)j->id, err_last());
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
		rc = selector_catalog_cache_create(&w.cache, 0);
	if (rc == 0)
		rc = jobrun_open(&w.jr, w.s);
	w.jr.runner = w.d->seams.runner;
	w.jr.runner_ctx = w.d->seams.runner_ctx;
	w.jr.stop = &w.d->exec_stop;
	w.jr.metrics = &w.d->metrics;
	daemon_cfg_put(cfg);
	if (rc < 0)
		log_error("worker %s: %s", w.owner, err_last());
	while (rc == 0 && !atomic_load(&w.d->stopping)) {
		cfg = daemon_cfg_get(w.d);
		struct job_row j;
		int c = w.s->ops->claim(w.s, &j, w.owner, (int64_t)cfg->c.lease_s * 1000,
					clock_wall_ms());
		if (c == 0 && j.attempts > cfg->c.max_attempts) {
			give_up(&w, &j, &cfg->c);
		} else if (c == 0) {
			log_info("worker %s: claimed job %lld (attempt %lld)", w.owner,
				 (long long)j.id, (long long)j.attempts);
			run_job(&w, &j, cfg);
		}
		daemon_cfg_put(cfg);
		if (c == ERR_NOTFOUND)
			daemon_sleep(w.d, WORKER_IDLE_MS);
		else if (c < 0) {
			log_error("worker %s: %s", w.owner, err_last());
			daemon_sleep(w.d, WORKER_IDLE_MS);
		}
	}
	specs_drop(&w);
	jobrun_close(&w.jr);
	selector_catalog_cache_destroy(w.cache);
	store_close(w.s);
	return NULL;
}
