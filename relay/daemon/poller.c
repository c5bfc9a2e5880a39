/* The upstream poller: on every interval, list the upstream's branches, fetch the watched ones
 * it has into the mirror and make one job for each branch whose tip moved since the cursor (the
 * pushes of a burst between two fetches coalesce into their last tip). The base is always the
 * previous tip, also after a force-push backwards, sideways or onto an unrelated history: the
 * tree diff then holds both what was undone and what is new, and no job has base = head. A
 * watched branch the upstream does not have (deleted, not yet made) is logged once when it goes
 * and once when it comes back, and never holds up the others. The job's tip key is the one a
 * webhook push uses, and the store makes a job only when the key is new, so the webhook and the
 * poller never make two jobs for one tip. After a failure (the upstream cannot be reached) the
 * wait doubles, up to upstream.poll_backoff_max_s. */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "daemon.h"
#include "mirror.h"

static int poll_branch(struct daemon *d, struct store *s, git_repository *repo, const char *b)
{
	char ref[300], tip[41], prev[41], base[41], key[64];
	snprintf(ref, sizeof(ref), "refs/heads/%s", b);
	git_oid oid;
	if (git_reference_name_to_id(&oid, repo, ref) < 0)
		return err_set(ERR_NOTFOUND, "upstream has no branch %s", b);
	git_oid_tostr(tip, sizeof(tip), &oid);
	int rc = s->ops->cursor_get(s, prev, ref);
	if (rc == 0 && !strcmp(prev, tip))
		return 0;
	if (rc == 0) {
		git_oid p;
		snprintf(base, sizeof(base), "%s", prev);
		if (git_oid_fromstr(&p, prev) == 0 && git_graph_descendant_of(repo, &oid, &p) != 1)
			log_info("poller: %s moved from %.12s to %.12s, not a descendant (a "
				 "force-push): "
				 "the job's base is the previous tip",
				 b, prev, tip);
	} else {
		/* first sight of the branch: its tip against its first parent */
		git_commit *c = NULL;
		base[0] = 0;
		if (git_commit_lookup(&c, repo, &oid) == 0 && git_commit_parentcount(c) > 0)
			git_oid_tostr(base, sizeof(base), git_commit_parent_id(c, 0));
		git_commit_free(c);
	}
	snprintf(key, sizeof(key), "push:%s", tip);
	struct job_spec job = { .event = "poll",
				.ref = ref,
				.base = base[0] ? base : NULL,
				.head = tip,
				.tip_key = key };
	int64_t id = 0;
	if ((rc = s->ops->poll_tip(s, &id, &job, ref, clock_wall_ms())) < 0)
		return rc;
	if (id) {
		atomic_fetch_add(&d->metrics.poll_jobs, 1);
		log_info("poller: %s moved to %.12s: job %lld", b, tip, (long long)id);
	}
	return 0;
}

/* The poller's mirror, opened at the first round and kept, and the watched branches the
 * upstream did not have at the last round (logged when they went). The remote is made for each
 * fetch: libgit2 1.5 crashes when one remote fetches twice over its local transport. */
struct poll_git {
	git_repository *repo;
	git_remote *remote;
	char **missing;
	size_t n_missing;
};

static bool was_missing(struct poll_git *g, const char *b, bool now_missing)
{
	for (size_t i = 0; i < g->n_missing; i++)
		if (strcmp(g->missing[i], b) == 0) {
			if (!now_missing) {
				free(g->missing[i]);
				g->missing[i] = g->missing[--g->n_missing];
			}
			return true;
		}
	if (now_missing) {
		char **p = realloc(g->missing, (g->n_missing + 1) * sizeof(*p));
		char *copy = strdup(b);
		if (p)
			g->missing = p;
		if (p && copy)
			g->missing[g->n_missing++] = copy;
		else
			free(copy); /* out of memory: it is logged again next round */
	}
	return false;
}

static int poll_once(struct daemon *d, struct store *s, struct poll_git *g, const struct config *c)
{
	int rc = 0;
	if (!g->repo && (rc = mirror_open(&g->repo, c->state_dir)) < 0)
		return rc;
	size_t n = c->branches.n;
	char **specs = calloc(n + 1, sizeof(*specs));
	bool *present = calloc(n + 1, sizeof(*present));
	if (!specs || !present)
		rc = err_set(ERR_NOMEM, "out of memory");
	if (rc == 0)
		rc = mirror_heads(c->upstream_url, g->repo, c->branches.v, n, present);
	size_t k = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const char *b = c->branches.v[i];
		bool before = was_missing(g, b, !present[i]);
		if (!present[i] && !before)
			log_warn(
			    "poller: the upstream has no branch %s (deleted, or not made yet); "
			    "the other branches are polled",
			    b);
		else if (present[i] && before)
			log_info("poller: branch %s is upstream again", b);
		if (!present[i])
			continue;
		size_t len = 2 * strlen(b) + 32;
		if (!(specs[k] = malloc(len)))
			rc = err_set(ERR_NOMEM, "out of memory");
		else
			snprintf(specs[k++], len, "+refs/heads/%s:refs/heads/%s", b, b);
	}
	if (rc == 0 && k && (rc = mirror_remote(&g->remote, g->repo, c->upstream_url)) == 0)
		rc = mirror_fetch(g->remote, specs, k, &d->stopping);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (present[i])
			rc = poll_branch(d, s, g->repo, c->branches.v[i]);
	for (size_t i = 0; specs && i < k; i++)
		free(specs[i]);
	free(specs);
	free(present);
	git_remote_free(g->remote);
	g->remote = NULL;
	return rc;
}

void *poller_main(void *arg)
{
	struct daemon *d = arg;
	struct store *s = NULL;
	struct cfg_ref *cfg = daemon_cfg_get(d);
	if (store_sqlite_open(&s, cfg->c.state_dir) < 0) {
		log_error("poller: %s", err_last());
		atomic_store(&d->poll_failures, 1000);
		daemon_cfg_put(cfg);
		return NULL;
	}
	daemon_cfg_put(cfg);
	struct poll_git g = { 0 };
	while (!atomic_load(&d->stopping)) {
		cfg = daemon_cfg_get(d);
		int rc = poll_once(d, s, &g, &cfg->c);
		int64_t wait = (int64_t)cfg->c.poll_interval_s * 1000;
		if (rc < 0) {
			int f = atomic_fetch_add(&d->poll_failures, 1) + 1;
			atomic_fetch_add(&d->metrics.polls_failed, 1);
			for (int i = 0;
			     i < f && i < 20 && wait < cfg->c.poll_backoff_max_s * 1000LL; i++)
				wait *= 2;
			if (wait > cfg->c.poll_backoff_max_s * 1000LL)
				wait = cfg->c.poll_backoff_max_s * 1000LL;
			log_warn("poller: %s (failure %d, next try in %lld s)", err_last(), f,
				 (long long)(wait / 1000));
		} else {
			atomic_store(&d->poll_failures, 0);
			atomic_fetch_add(&d->metrics.polls_ok, 1);
		}
		daemon_cfg_put(cfg);
		daemon_sleep(d, wait);
	}
	git_remote_free(g.remote);
	git_repository_free(g.repo);
	for (size_t i = 0; i < g.n_missing; i++)
		free(g.missing[i]);
	free(g.missing);
	store_close(s);
	return NULL;
}
