/* The dashboard's JSON (pages.h): what the store has about jobs, their selections, results,
 * outbox messages and the reports the receiver accepted, and commit facts from the mirror.
 * A part the store does not have is null, never a zero that would read as "nothing failed".
 * Reads go through the daemon's read handle under its mutex, one short hold per job. */
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "daemon.h"
#include "dashboard-client/encode.h"
#include "dashboard-client/job.h"
#include "mirror.h"
#include "pages.h"
#include "store_dash.h"

static const char *s_or(const json_t *v, const char *path, const char *dflt)
{
	const char *x = jx_get_str(v, path);
	return x ? x : dflt;
}

/* The funnel as the pages show it: files changed (stage 1) -> tests impacted -> eligible ->
 * scheduled; `changed_files` is null in a report written before it carried the count. */
static json_t *stages_funnel(const json_t *report)
{
	const json_t *st = jx_get(report, "stages");
	if (!json_is_array(st) || json_array_size(st) < 4)
		return json_null();
	static const char *const names[] = { "impacted", "eligible", "scheduled" };
	json_t *f = json_object();
	json_int_t total = json_integer_value(json_object_get(json_array_get(st, 0), "in"));
	jx_set_int(f, "tests", total);
	const json_t *cf = json_object_get(report, "changed_files");
	jx_set_new(f, "changed_files",
		   json_is_integer(cf) ? json_incref((json_t *)cf) : json_null());
	for (int i = 0; i < 3; i++)
		jx_set_int(
		    f, names[i],
		    json_integer_value(json_object_get(json_array_get(st, (size_t)i + 1), "out")));
	return f;
}

/* Passed / failed / other over a job's results, the modeled device time, the flaky ones. */
static json_t *tally(const json_t *results)
{
	int64_t passed = 0, failed = 0, other = 0, flaky = 0;
	double device_us = 0;
	size_t i;
	const json_t *r;
	json_array_foreach(results, i, r)
	{
		const char *o = jx_get_str(r, "outcome");
		const json_t *dt = jx_get(r, "detail");
		if (o && (!strcmp(o, "passed") || !strcmp(o, "xpassed") || !strcmp(o, "flaky")))
			passed++;
		else if (o && (!strcmp(o, "failed") || !strcmp(o, "error") ||
			       !strcmp(o, "crashed") || !strcmp(o, "timed_out")))
			failed++;
		else
			other++;
		if (json_is_object(dt)) {
			device_us += json_number_value(json_object_get(dt, "device_us"));
		}
		flaky += o && !strcmp(o, "flaky");
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:f}", "passed", (json_int_t)passed, "failed",
			 (json_int_t)failed, "other", (json_int_t)other, "flaky", (json_int_t)flaky,
			 "device_s", device_us / 1e6);
}

/* The commit's first line, author and time from the mirror, or null when it is not there. */
static json_t *commit_json(git_repository *repo, const char *head)
{
	git_oid oid;
	git_commit *c = NULL;
	if (!repo || git_oid_fromstr(&oid, head) < 0 || git_commit_lookup(&c, repo, &oid) < 0)
		return json_null();
	const char *msg = git_commit_summary(c);
	const git_signature *a = git_commit_author(c);
	char when[CLOCK_ISO8601_LEN + 1] = "";
	clock_format_iso8601(when, sizeof(when), (int64_t)git_commit_time(c) * 1000, 0);
	json_t *v = json_object();
	jx_set_str(v, "summary", msg ? msg : "");
	jx_set_str(v, "author", a && a->name ? a->name : "");
	jx_set_str(v, "time", when);
	git_commit_free(c);
	return v;
}

static git_repository *mirror(struct daemon *d)
{
	struct cfg_ref *cfg = daemon_cfg_get(d);
	char path[4096];
	git_repository *repo = NULL;
	if (mirror_path(path, sizeof(path), cfg->c.state_dir) == 0 &&
	    git_repository_open_bare(&repo, path) < 0)
		repo = NULL;
	daemon_cfg_put(cfg);
	return repo;
}

/* Queue time (creation to the last claim) and run time (claim to the last word of a job that
 * ended), from the store's own stamps; null where the job has not got that far. */
static void times_set(json_t *v, const struct job_row *j)
{
	bool ended = j->state == JOB_REPORTED || j->state == JOB_FAILED;
	bool claimed = j->started_ms > 0 && j->started_ms >= j->created_ms;
	jx_set_new(v, "started_ms", claimed ? json_integer(j->started_ms) : json_null());
	jx_set_new(v, "queue_s",
		   claimed ? json_real((double)(j->started_ms - j->created_ms) / 1e3)
			   : json_null());
	jx_set_new(v, "run_s",
		   claimed && ended && j->updated_ms >= j->started_ms
		       ? json_real((double)(j->updated_ms - j->started_ms) / 1e3)
		       : json_null());
}

static json_t *job_base(const struct job_row *j)
{
	char created[CLOCK_ISO8601_LEN + 1] = "";
	clock_format_iso8601(created, sizeof(created), j->created_ms, 0);
	const char *branch = !strncmp(j->ref, "refs/heads/", 11) ? j->ref + 11 : j->ref;
	json_t *v = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s%,s:I,s:I,s:I}", "id",
			      (json_int_t)j->id, "state", job_state_name(j->state), "event",
			      j->event, "trigger", strcmp(j->event, "poll") ? "webhook" : "poller",
			      "ref", j->ref, "branch", branch, "head", j->head, "short", j->head,
			      (size_t)(strlen(j->head) < 10 ? strlen(j->head) : 10), "created_ms",
			      (json_int_t)j->created_ms, "updated_ms", (json_int_t)j->updated_ms,
			      "attempts", (json_int_t)j->attempts);
	jx_set_str(v, "created_at", created);
	times_set(v, j);
	jx_set_str(v, "base", j->base[0] ? j->base : NULL);
	jx_set_str(v, "detail", j->detail[0] ? j->detail : NULL);
	return v;
}

/* What one job's page needs from the store: selection report, results, outbox, reports. */
struct job_parts {
	json_t *report, *results, *outbox, *hud;
};

int pages_report_path(struct daemon *d, char *path, size_t size, int64_t id, const char *name)
{
	struct cfg_ref *cfg = daemon_cfg_get(d);
	int n = snprintf(path, size, "%s/reports/%lld/%s", cfg->c.state_dir, (long long)id, name);
	daemon_cfg_put(cfg);
	return n < 0 || (size_t)n >= size ? err_set(ERR_LIMIT, "state_dir is too long") : 0;
}

/* The job's results.jsonl as an object keyed by each line's case name; NULL when the run left
 * none (or it does not parse: the stored rows still stand alone then). */
static json_t *report_lines(struct daemon *d, int64_t id)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	if (pages_report_path(d, path, sizeof(path), id, "results.jsonl") < 0 ||
	    access(path, R_OK) != 0 || fs_read_file(&text, &len, path, PAGES_REPORT_MAX) < 0)
		return NULL;
	json_t *by = json_object();
	for (char *line = text, *end; by && line < text + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(text + len - line));
		if (!end)
			end = text + len;
		json_t *o =
		    end > line ? jx_loadb(line, (size_t)(end - line), PAGES_REPORT_MAX) : NULL;
		const char *name = jx_get_str(o, "name");
		if (name)
			json_object_set(by, name, o);
		json_decref(o);
	}
	free(text);
	return by;
}

/* Each stored result whose detail is only its message gets its line of results.jsonl (op,
 * shapes, errors, plan, a trace where the executor kept one) as its detail. */
static void results_enrich(struct daemon *d, json_t *results, int64_t id)
{
	json_t *by = json_array_size(results) ? report_lines(d, id) : NULL;
	size_t i;
	json_t *r;
	json_array_foreach(results, i, r)
	{
		json_t *line = json_object_get(by, s_or(r, "case", ""));
		if (line && !json_is_object(json_object_get(r, "detail")))
			json_object_set(r, "detail", line);
	}
	json_decref(by);
}

/* The outbox's job keys of job `id` (CRCR and HUD), from the job.json its run wrote; empty
 * strings when it has none yet. */
static void job_keys(struct daemon *d, int64_t id, char keys[2][48])
{
	struct cfg_ref *cfg = daemon_cfg_get(d);
	char path[4096];
	struct dc_job job;
	keys[0][0] = keys[1][0] = '\0';
	int n = snprintf(path, sizeof(path), "%s/reports/%lld/job.json", cfg->c.state_dir,
			 (long long)id);
	daemon_cfg_put(cfg);
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, R_OK) != 0 ||
	    dc_job_load(&job, path) != 0)
		return;
	if (dc_job_key(keys[0], &job, DC_FORMAT_CRCR) != 0)
		keys[0][0] = '\0';
	if (dc_job_key(keys[1], &job, DC_FORMAT_HUD) != 0)
		keys[1][0] = '\0';
	dc_job_finish(&job);
}

static int parts_load(struct daemon *d, struct job_parts *p, const struct job_row *j, bool full,
		      bool lines)
{
	char *sel = NULL, keys[2][48];
	if (full)
		job_keys(d, j->id, keys);
	const char *const kv[2] = { full && keys[0][0] ? keys[0] : NULL,
				    full && keys[1][0] ? keys[1] : NULL };
	memset(p, 0, sizeof(*p));
	pthread_mutex_lock(&d->read_mu);
	struct store *s = d->read_store;
	int rc = s->ops->selection_get(s, &sel, j->id);
	if (rc == ERR_NOTFOUND)
		rc = 0;
	if (rc == 0)
		rc = store_results_json(s, &p->results, j->id, PAGES_ROWS_MAX);
	if (rc == 0 && full)
		rc = store_outbox_json(s, &p->outbox, kv, PAGES_ROWS_MAX);
	if (rc == 0)
		rc = store_hud_json(s, &p->hud, j->head, full ? PAGES_ROWS_MAX : 1);
	pthread_mutex_unlock(&d->read_mu);
	p->report = sel ? jx_loadb(sel, strlen(sel), PAGES_REPORT_MAX) : NULL;
	free(sel);
	if (rc == 0 && lines)
		results_enrich(d, p->results, j->id);
	return rc;
}

static void parts_finish(struct job_parts *p)
{
	json_decref(p->report);
	json_decref(p->results);
	json_decref(p->outbox);
	json_decref(p->hud);
}

/* The newest report the receiver has about the job's commit, as counts. */
static json_t *last_report(const json_t *hud)
{
	const json_t *m = json_array_get(hud, 0);
	if (!m)
		return json_null();
	return json_pack("{s:O?,s:O?,s:O?,s:O?,s:O?}", "status", json_object_get(m, "status"),
			 "conclusion", json_object_get(m, "conclusion"), "passed",
			 json_object_get(m, "passed"), "failed", json_object_get(m, "failed"),
			 "skipped", json_object_get(m, "skipped"));
}

static json_t *summary(struct daemon *d, git_repository *repo, const struct job_row *j)
{
	struct job_parts p;
	if (parts_load(d, &p, j, false, false) < 0) {
		parts_finish(&p);
		return NULL;
	}
	json_t *v = job_base(j);
	jx_set_new(v, "commit", commit_json(repo, j->head));
	jx_set_new(v, "funnel", p.report ? stages_funnel(p.report) : json_null());
	jx_set_new(v, "cases", json_array_size(p.results) ? tally(p.results) : json_null());
	jx_set_new(v, "report", last_report(p.hud));
	parts_finish(&p);
	return v;
}

static bool matches(const struct job_row *j, const struct pages_filter *f)
{
	if (f->state && *f->state && strcmp(job_state_name(j->state), f->state) != 0)
		return false;
	const char *branch = !strncmp(j->ref, "refs/heads/", 11) ? j->ref + 11 : j->ref;
	return !(f->branch && *f->branch && strcmp(branch, f->branch) != 0);
}

json_t *pages_index_json(struct daemon *d, const struct pages_filter *f)
{
	struct job_row *rows = malloc(PAGES_JOBS_MAX * sizeof(*rows));
	size_t n = 0;
	int64_t counts[JOB_STATES];
	if (!rows) {
		err_set(ERR_NOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_lock(&d->read_mu);
	int rc = d->read_store->ops->job_list(d->read_store, rows, &n, PAGES_JOBS_MAX, 0);
	if (rc == 0)
		rc = d->read_store->ops->job_counts(d->read_store, counts);
	pthread_mutex_unlock(&d->read_mu);
	git_repository *repo = rc == 0 ? mirror(d) : NULL;
	json_t *v = rc == 0 ? json_object() : NULL, *jobs = json_array(), *cj = json_object(),
	       *branches = json_object();
	bool running = false;
	for (size_t i = 0; v && i < n && json_array_size(jobs) < (size_t)f->limit; i++) {
		const char *b =
		    !strncmp(rows[i].ref, "refs/heads/", 11) ? rows[i].ref + 11 : rows[i].ref;
		json_object_set_new(branches, b, json_true());
		if (!matches(&rows[i], f))
			continue;
		json_t *s = summary(d, repo, &rows[i]);
		if (!s) {
			json_decref(v);
			v = NULL;
			break;
		}
		running |= rows[i].state == JOB_QUEUED || rows[i].state == JOB_RUNNING;
		jx_append_new(jobs, s);
	}
	for (int i = 0; i < JOB_STATES; i++)
		jx_set_int(cj, job_state_name((enum job_state)i), rc == 0 ? counts[i] : 0);
	git_repository_free(repo);
	free(rows);
	if (v) {
		json_t *bl = json_array();
		const char *k;
		json_t *x;
		json_object_foreach(branches, k, x) jx_append_new(bl, json_string(k));
		jx_set_new(v, "jobs", jobs);
		jx_set_new(v, "counts", cj);
		jx_set_new(v, "branches", bl);
		jx_set_bool(v, "running", running);
		jx_set_new(v, "filter",
			   json_pack("{s:s?,s:s?}", "state", f->state, "branch", f->branch));
		jobs = cj = NULL; /* v owns them */
	}
	json_decref(jobs);
	json_decref(cj);
	json_decref(branches);
	return v;
}

/* Failures first, then the rest, each result with its detail's fields lifted up. */
static json_t *cases_sorted(const json_t *results)
{
	json_t *fail = json_array(), *rest = json_array();
	size_t i;
	const json_t *r;
	json_array_foreach(results, i, r)
	{
		const char *o = jx_get_str(r, "outcome");
		bool bad = o && strcmp(o, "passed") && strcmp(o, "xpassed") && strcmp(o, "flaky") &&
			   strcmp(o, "skipped") && strcmp(o, "xfailed");
		json_t *c = json_deep_copy(r);
		json_t *dt = json_object_get(c, "detail");
		if (json_is_object(dt))
			json_object_update_missing(c, dt);
		json_array_append_new(bad ? fail : rest, c);
	}
	json_array_extend(fail, rest);
	json_decref(rest);
	return fail;
}

json_t *pages_job_json(struct daemon *d, int64_t id)
{
	struct job_row j;
	pthread_mutex_lock(&d->read_mu);
	int rc = d->read_store->ops->job_get(d->read_store, &j, id);
	pthread_mutex_unlock(&d->read_mu);
	if (rc == ERR_NOTFOUND)
		return json_null();
	struct job_parts p;
	if (rc < 0 || parts_load(d, &p, &j, true, true) < 0) {
		if (rc == 0)
			parts_finish(&p);
		return NULL;
	}
	git_repository *repo = mirror(d);
	json_t *v = job_base(&j);
	jx_set_new(v, "commit", commit_json(repo, j.head));
	git_repository_free(repo);
	jx_set_new(v, "funnel", p.report ? stages_funnel(p.report) : json_null());
	jx_set_new(v, "tests", p.report ? json_incref(jx_get(p.report, "tests")) : json_null());
	jx_set_new(v, "fallback",
		   p.report ? json_incref(jx_get(p.report, "fallback")) : json_null());
	jx_set_new(v, "cases", json_array_size(p.results) ? tally(p.results) : json_null());
	jx_set_new(v, "results", cases_sorted(p.results));
	jx_set_new(v, "outbox", json_incref(p.outbox));
	jx_set_new(v, "reports", json_incref(p.hud));
	jx_set_bool(v, "running", j.state == JOB_QUEUED || j.state == JOB_RUNNING);
	parts_finish(&p);
	return v;
}

/* The newest `limit` jobs, newest first; *n of them. */
static struct job_row *recent(struct daemon *d, size_t *n, int64_t limit)
{
	struct job_row *rows = malloc(PAGES_JOBS_MAX * sizeof(*rows));
	*n = 0;
	if (!rows) {
		err_set(ERR_NOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_lock(&d->read_mu);
	int rc = d->read_store->ops->job_list(d->read_store, rows, n, (size_t)limit, 0);
	pthread_mutex_unlock(&d->read_mu);
	if (rc < 0) {
		free(rows);
		return NULL;
	}
	return rows;
}

static json_t *num_or_null(const json_t *v)
{
	return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

/* One point of each chart for a job; flaky cases counted into `flaky`. */
static json_t *trend_point(const struct job_row *j, const struct job_parts *p, json_t *flaky)
{
	json_t *v = json_pack("{s:I,s:s%,s:I}", "id", (json_int_t)j->id, "short", j->head,
			      (size_t)(strlen(j->head) < 10 ? strlen(j->head) : 10), "created_ms",
			      (json_int_t)j->created_ms);
	json_t *t = json_array_size(p->results) ? tally(p->results) : NULL;
	const json_t *m = json_array_get(p->hud, 0);
	double passed = t   ? (double)json_integer_value(json_object_get(t, "passed"))
			: m ? json_number_value(json_object_get(m, "passed"))
			    : 0;
	double failed = t   ? (double)json_integer_value(json_object_get(t, "failed"))
			: m ? json_number_value(json_object_get(m, "failed"))
			    : 0;
	jx_set_new(v, "pass_rate",
		   passed + failed > 0 ? json_real(passed / (passed + failed)) : json_null());
	json_t *f = p->report ? stages_funnel(p->report) : json_null();
	double all = (double)json_integer_value(json_object_get(f, "tests"));
	jx_set_new(
	    v, "selected_share",
	    all > 0 ? json_real((double)json_integer_value(json_object_get(f, "scheduled")) / all)
		    : json_null());
	json_decref(f);
	times_set(v, j); /* the store's stamps; a received report's metrics beside them */
	jx_set_new(v, "report_queue_s", num_or_null(json_object_get(m, "queue_time")));
	jx_set_new(v, "report_run_s", num_or_null(json_object_get(m, "execution_time")));
	size_t i;
	const json_t *r;
	json_array_foreach(p->results, i, r) if (!strcmp(s_or(r, "outcome", ""), "flaky"))
	{
		const char *id = jx_get_str(r, "case");
		json_t *c = json_object_get(flaky, id);
		json_object_set_new(flaky, id, json_integer(c ? json_integer_value(c) + 1 : 1));
	}
	json_decref(t);
	return v;
}

json_t *pages_trends_json(struct daemon *d, int64_t limit)
{
	size_t n;
	struct job_row *rows = recent(d, &n, limit);
	if (!rows)
		return NULL;
	json_t *pts = json_array(), *flaky = json_object(), *v = NULL;
	for (size_t i = n; i-- > 0;) { /* oldest first: charts read left to right */
		struct job_parts p;
		if (parts_load(d, &p, &rows[i], false, false) < 0) {
			parts_finish(&p);
			goto out;
		}
		jx_append_new(pts, trend_point(&rows[i], &p, flaky));
		parts_finish(&p);
	}
	json_t *fl = json_array();
	const char *k;
	json_t *c;
	json_object_foreach(flaky, k, c)
	    jx_append_new(fl, json_pack("{s:s,s:O}", "case", k, "jobs", c));
	v = json_pack("{s:I,s:o,s:o}", "limit", (json_int_t)limit, "jobs", pts, "flaky", fl);
	pts = NULL; /* v owns it */
out:
	json_decref(pts);
	json_decref(flaky);
	free(rows);
	return v;
}

/* Skipped cases whose op the device stack lacks, counted by op. */
static void count_unsupported(json_t *ops, const json_t *results)
{
	size_t i;
	const json_t *r;
	json_array_foreach(results, i, r)
	{
		const char *o = jx_get_str(r, "outcome"), *op = jx_get_str(r, "detail.op"),
			   *msg = jx_get_str(r, "detail.message");
		if (!o || strcmp(o, "skipped") || !op || !msg ||
		    (!strstr(msg, "lacks") && !strstr(msg, "unsupported") &&
		     !strstr(msg, "no emulator op")))
			continue;
		json_t *c = json_object_get(ops, op);
		json_object_set_new(ops, op, json_integer(c ? json_integer_value(c) + 1 : 1));
	}
}

json_t *pages_specs_json(struct daemon *d)
{
	size_t n;
	struct job_row *rows = recent(d, &n, PAGES_JOBS_DEFAULT);
	if (!rows)
		return NULL;
	json_t *unlisted = json_array(), *stale = json_array(), *ops = json_object();
	json_t *from = json_null();
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct job_parts p;
		rc = parts_load(d, &p, &rows[i], false, true);
		count_unsupported(ops, p.results);
		const json_t *drift = jx_get(p.report, "drift");
		if (rc == 0 && json_is_null(from) && json_is_array(drift)) {
			from = json_integer(
			    rows[i].id); /* the newest selection speaks for the specs */
			size_t k;
			const json_t *e;
			json_array_foreach(drift, k, e) jx_append_new(
			    strcmp(jx_get_str(e, "kind") ? jx_get_str(e, "kind") : "", "unlisted")
				? stale
				: unlisted,
			    json_deep_copy(e));
		}
		parts_finish(&p);
	}
	free(rows);
	json_t *ol = json_array();
	const char *k;
	json_t *c;
	json_object_foreach(ops, k, c)
	    jx_append_new(ol, json_pack("{s:s,s:O}", "op", k, "cases", c));
	json_decref(ops);
	if (rc < 0) {
		json_decref(unlisted);
		json_decref(stale);
		json_decref(ol);
		json_decref(from);
		return NULL;
	}
	return json_pack("{s:o,s:o,s:o,s:o}", "from_job", from, "unlisted", unlisted, "stale",
			 stale, "unsupported_ops", ol);
}
