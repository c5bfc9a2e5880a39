/* The upstream mirror through libgit2. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "mirror.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/log.h"

/* One fetch at a time into the mirror: two fetches at once (two workers whose tips are not
 * in the mirror yet, or a worker and the poller) race on libgit2's FETCH_HEAD.lock and ref
 * locks, and the one that loses fails. */
static pthread_mutex_t fetching = PTHREAD_MUTEX_INITIALIZER;

static int git_fail(const char *what)
{
	const git_error *e = git_error_last();
	return err_set(ERR_IO, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

int mirror_path(char *out, size_t size, const char *state_dir)
{
	if (snprintf(out, size, "%s/mirror.git", state_dir) >= (int)size)
		return err_set(ERR_LIMIT, "mirror path longer than PATH_TEXT_MAX");
	return 0;
}

static void unlink_stale(const char *path)
{
	if (unlink(path) == 0)
		log_warn("mirror: removed %s, left by a process that died holding it", path);
}

static bool is_lock(const char *name)
{
	size_t n = strlen(name);
	return n > 5 && !strcmp(name + n - 5, ".lock");
}

static int stale_ref_lock(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	if (flag == FTW_F && is_lock(path + ftw->base))
		unlink_stale(path);
	return 0;
}

/* libgit2's lock files live at the top of the repository (config, HEAD, packed-refs,
 * FETCH_HEAD) and beside each ref under refs/; objects/ holds none, and is not walked. */
static int clear_stale_locks(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return err_set_errno(ERR_IO, "mirror: cannot read %s", path);
	char p[PATH_TEXT_MAX + 260];
	for (struct dirent *e; (e = readdir(d));) {
		if (is_lock(e->d_name)) {
			snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
			unlink_stale(p);
		}
	}
	closedir(d);
	/* "refs/." so that the walk enters refs even when it is a symbolic link */
	snprintf(p, sizeof(p), "%s/refs/.", path);
	struct stat st;
	if (stat(p, &st) == 0 && nftw(p, stale_ref_lock, 16, FTW_PHYS) != 0)
		return err_set_errno(ERR_IO, "mirror: cannot clear the stale locks of %s", path);
	return 0;
}

int mirror_recover(const char *state_dir)
{
	char path[PATH_TEXT_MAX], part[PATH_TEXT_MAX + 8];
	int rc = mirror_path(path, sizeof(path), state_dir);
	if (rc < 0)
		return rc;
	snprintf(part, sizeof(part), "%s.new", path);
	if ((rc = fs_remove_tree(part)) < 0)
		return err_prefix("mirror: ");
	struct stat st;
	if (stat(path, &st) < 0)
		return 0;
	if ((rc = clear_stale_locks(path)) < 0)
		return rc;
	/* A mirror that does not open (made by an older daemon killed during its init, or
	 * damaged by hand) would fail every job: it is set aside, kept for a post-mortem, and
	 * the next open makes a new one (it is a cache of upstream: nothing is lost). */
	git_repository *repo = NULL;
	if (git_repository_open_bare(&repo, path) == 0) {
		git_repository_free(repo);
		return 0;
	}
	char aside[PATH_TEXT_MAX + 40];
	snprintf(aside, sizeof(aside), "%s.broken-%lld", path, (long long)time(NULL));
	const git_error *e = git_error_last();
	log_warn("mirror: %s does not open (%s); set aside as %s", path,
		 e && e->message ? e->message : "libgit2 error", aside);
	if (rename(path, aside) < 0)
		return err_set_errno(ERR_IO, "mirror: cannot set %s aside", path);
	return fs_fsync_dir_of(path);
}

int mirror_open(git_repository **out, const char *state_dir)
{
	char path[PATH_TEXT_MAX], part[PATH_TEXT_MAX + 8];
	int rc = mirror_path(path, sizeof(path), state_dir);
	if (rc < 0)
		return rc;
	snprintf(part, sizeof(part), "%s.new", path);
	/* The first opens of a new state directory come at once from the workers and the
	 * poller: one of them creates the mirror, the others open it (two inits at once fail on
	 * libgit2's config.lock). It is made beside its place and renamed in, so that a process
	 * killed during the init leaves no half-made mirror behind, only a .new that the next
	 * start removes. */
	static pthread_mutex_t creating = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&creating);
	if (git_repository_open_bare(out, path) == 0) {
		rc = 0;
	} else if ((rc = fs_remove_tree(part)) == 0) {
		git_repository *made = NULL;
		if (git_repository_init(&made, part, 1) < 0)
			rc = git_fail("mirror init");
		git_repository_free(made);
		if (rc == 0 && rename(part, path) < 0)
			rc = err_set_errno(ERR_IO, "mirror: cannot rename %s", part);
		if (rc == 0) /* a failed .new is removed by the next open, above */
			rc = fs_fsync_dir_of(path);
		if (rc == 0 && git_repository_open_bare(out, path) < 0)
			rc = git_fail("mirror open");
	}
	pthread_mutex_unlock(&creating);
	return rc;
}

int mirror_remote(git_remote **out, git_repository *repo, const char *url)
{
	git_remote_create_options o = GIT_REMOTE_CREATE_OPTIONS_INIT;
	o.repository = repo;
	o.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	return git_remote_create_with_opts(out, url, &o) < 0 ? git_fail("mirror remote") : 0;
}

/* libgit2's progress callbacks: a non-zero answer ends the fetch (the daemon is stopping). */
static int transfer_progress(const git_indexer_progress *p, void *payload)
{
	(void)p;
	const atomic_bool *stop = payload;
	return stop && atomic_load(stop) ? -1 : 0;
}

static int sideband_progress(const char *text, int len, void *payload)
{
	(void)text;
	(void)len;
	return transfer_progress(NULL, payload);
}

int mirror_fetch(git_remote *remote, char *const *refspecs, size_t n, const atomic_bool *stop)
{
	git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
	opts.prune = GIT_FETCH_NO_PRUNE;
	opts.callbacks.transfer_progress = transfer_progress;
	opts.callbacks.sideband_progress = sideband_progress;
	opts.callbacks.payload = (void *)stop;
	git_strarray specs = { .strings = (char **)refspecs, .count = n };
	/* waits for another thread's fetch, but not past a stop */
	for (;;) {
		struct timespec ts;
		clock_deadline(&ts, 200);
		if (pthread_mutex_timedlock(&fetching, &ts) == 0)
			break;
		if (stop && atomic_load(stop))
			return err_set(ERR_IO, "fetch: stopped while another fetch ran");
	}
	int rc = git_remote_fetch(remote, &specs, &opts, NULL) < 0 ? git_fail("fetch") : 0;
	pthread_mutex_unlock(&fetching);
	return rc;
}

int mirror_heads(const char *url, git_repository *repo, char *const *names, size_t n, bool *present)
{
	for (size_t i = 0; i < n; i++)
		present[i] = false;
	git_remote *remote = NULL;
	int rc = mirror_remote(&remote, repo, url);
	if (rc == 0 && git_remote_connect(remote, GIT_DIRECTION_FETCH, NULL, NULL, NULL) < 0) {
		/* a path that is not there says so more plainly than libgit2 does */
		struct stat st;
		if (!strstr(url, "://") && !strchr(url, '@') && stat(url, &st) != 0)
			rc = err_set(ERR_IO, "upstream path %s does not exist", url);
		else
			rc = git_fail("upstream unreachable: connect");
	}
	const git_remote_head **heads = NULL;
	size_t nh = 0;
	if (rc == 0 && git_remote_ls(&heads, &nh, remote) < 0)
		rc = git_fail("upstream: list of refs");
	for (size_t h = 0; rc == 0 && h < nh; h++)
		if (strncmp(heads[h]->name, "refs/heads/", 11) == 0)
			for (size_t i = 0; i < n; i++)
				present[i] =
				    present[i] || strcmp(heads[h]->name + 11, names[i]) == 0;
	if (remote)
		git_remote_disconnect(remote);
	git_remote_free(remote);
	return rc;
}

void mirror_base(char base[41], git_repository *repo, const char *prev, const char *tip)
{
	git_oid p, t, mb;
	base[0] = 0;
	if (!prev || git_oid_fromstr(&p, prev) < 0 || git_oid_fromstr(&t, tip) < 0)
		return;
	if (git_graph_descendant_of(repo, &t, &p) == 1) {
		git_oid_tostr(base, 41, &p);
		return;
	}
	if (git_merge_base(&mb, repo, &t, &p) == 0)
		git_oid_tostr(base, 41, &mb);
}
