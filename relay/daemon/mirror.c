/* The upstream mirror through libgit2. */
#include "mirror.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"

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

int mirror_open(git_repository **out, const char *state_dir)
{
	char path[PATH_TEXT_MAX];
	int rc = mirror_path(path, sizeof(path), state_dir);
	if (rc < 0)
		return rc;
	/* The first opens of a new state directory come at once from the workers and the
	 * poller: one of them creates the mirror, the others open it (two inits at once fail on
	 * libgit2's config.lock, and failed the job that lost). */
	static pthread_mutex_t creating = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&creating);
	if (git_repository_open_bare(out, path) == 0)
		rc = 0;
	else if (git_repository_init(out, path, 1) < 0)
		rc = git_fail("mirror init");
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

int mirror_fetch(git_remote *remote, char *const *refspecs, size_t n)
{
	git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
	opts.prune = GIT_FETCH_NO_PRUNE;
	git_strarray specs = { .strings = (char **)refspecs, .count = n };
	return git_remote_fetch(remote, &specs, &opts, NULL) < 0 ? git_fail("fetch") : 0;
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
