/* The upstream mirror through libgit2. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "mirror.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
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

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

static int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_set_errno(ERR_IO, "mirror: cannot stat %s", path);
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return err_set_errno(ERR_IO, "mirror: cannot remove %s", path);
	return 0;
}

static int stale_lock(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	size_t n = strlen(path + ftw->base);
	if (flag != FTW_F || n < 5 || strcmp(path + ftw->base + n - 5, ".lock"))
		return 0;
	if (unlink(path) < 0 && errno != ENOENT)
		return -1;
	log_warn("mirror: removed %s, left by a process that died holding it", path);
	return 0;
}

/* The state directory fsync()ed: a rename of the mirror in it is then durable. */
static int sync_parent(const char *state_dir)
{
	int fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		int rc = err_set_errno(ERR_IO, "mirror: cannot sync %s", state_dir);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	return 0;
}

int mirror_recover(const char *state_dir)
{
	char path[PATH_TEXT_MAX], part[PATH_TEXT_MAX + 8], walk[PATH_TEXT_MAX + 8];
	int rc = mirror_path(path, sizeof(path), state_dir);
	if (rc < 0)
		return rc;
	snprintf(part, sizeof(part), "%s.new", path);
	if ((rc = remove_tree(part)) < 0)
		return rc;
	struct stat st;
	if (stat(path, &st) < 0)
		return 0;
	/* "mirror.git/." so that a mirror.git that is a symbolic link is walked too (FTW_PHYS
	 * reports a link given as the root as a link and does not enter it) */
	snprintf(walk, sizeof(walk), "%s/.", path);
	if (nftw(walk, stale_lock, 16, FTW_PHYS) != 0)
		return err_set_errno(ERR_IO, "mirror: cannot clear the stale locks of %s", path);
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
	return sync_parent(state_dir);
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
	} else if ((rc = remove_tree(part)) == 0) {
		git_repository *made = NULL;
		if (git_repository_init(&made, part, 1) < 0)
			rc = git_fail("mirror init");
		git_repository_free(made);
		if (rc == 0 && rename(part, path) < 0)
			rc = err_set_errno(ERR_IO, "mirror: cannot rename %s", part);
		if (rc < 0) /* quietly: the error above is the one reported */
			nftw(part, remove_one, 16, FTW_DEPTH | FTW_PHYS);
		if (rc == 0)
			rc = sync_parent(state_dir);
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
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (pthread_mutex_timedlock(&fetching, &ts) == 0)
			break;
		if (stop && atomic_load(stop))
			return err_set(ERR_IO, "fetch: stopped while another fetch ran");
	}
	int rc = git_remote_fetch(remote, &specs, &opts, NULL) < 0 ? git_fail("fetch") : 0;
	pthread_mutex_unlock(&fetching);
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
