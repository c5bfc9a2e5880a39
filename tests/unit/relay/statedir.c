/* Tests of the state directory's owner and of the mirror's recovery: one daemon at a time holds
 * the lock (a second is refused, naming the holder's pid); a kill during a fetch leaves a ref
 * lock that fails every later fetch until a start clears it; a kill during the mirror's init
 * leaves mirror.git.new, which the next start removes and the next open does not trip on; a
 * mirror that does not open is set aside; a symlinked mirror is cleared too. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "gitrepo.h"
#include "mirror.h"
#include "statedir.h"
#include "tmpstate.h"

static char state[256];

static void setup(void)
{
	git_libgit2_init();
	tmpstate_make(state, sizeof(state), "statedir");
}

static void teardown(void)
{
	tmpstate_remove(state);
	git_libgit2_shutdown();
}

TestSuite(statedir, .init = setup, .fini = teardown);

Test(statedir, one_holder_at_a_time)
{
	char sub[300];
	snprintf(sub, sizeof(sub), "%s/new", state); /* created when missing */
	int a = -1, b = -1;
	cr_assert_eq(statedir_lock(&a, sub, 0), 0, "%s", err_last());
	cr_assert_eq(statedir_lock(&b, sub, 200), ERR_BADSTATE);
	char want[64];
	snprintf(want, sizeof(want), "in use by another spyre-ci (pid %ld)", (long)getpid());
	cr_assert_not_null(strstr(err_last(), want), "%s", err_last());
	cr_assert_eq(b, -1);
	statedir_unlock(a);
	cr_assert_eq(statedir_lock(&b, sub, 0), 0, "%s", err_last());
	statedir_unlock(b);
}

static int fetch_main(const char *url)
{
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	char spec[] = "+refs/heads/main:refs/heads/main", *specs[] = { spec };
	int rc = mirror_open(&repo, state);
	if (rc == 0)
		rc = mirror_remote(&remote, repo, url);
	if (rc == 0)
		rc = mirror_fetch(remote, specs, 1, NULL);
	git_remote_free(remote);
	git_repository_free(repo);
	return rc;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fclose(f);
}

Test(statedir, a_stale_ref_lock_fails_fetches_until_recovered)
{
	struct test_repo up;
	test_repo_create(&up);
	char one[41], two[41];
	struct test_edit e = { "a.py", 0100644, "x = 1\n", 0 };
	test_repo_commit(&up, one, "refs/heads/main", "one", NULL, 0, &e, 1);
	cr_assert_eq(fetch_main(up.dir), 0, "%s", err_last());

	/* a fetch killed while it updated refs/heads/main */
	char lock[400];
	snprintf(lock, sizeof(lock), "%s/mirror.git/refs/heads/main.lock", state);
	touch(lock);
	const char *parents[] = { one };
	struct test_edit e2 = { "a.py", 0100644, "x = 2\n", 0 };
	test_repo_commit(&up, two, "refs/heads/main", "two", parents, 1, &e2, 1);
	cr_assert_eq(fetch_main(up.dir), ERR_IO, "a stale lock must fail the fetch");

	cr_assert_eq(mirror_recover(state), 0, "%s", err_last());
	cr_assert_eq(access(lock, F_OK), -1);
	cr_assert_eq(fetch_main(up.dir), 0, "%s", err_last());
	git_repository *repo = NULL;
	git_oid got;
	char hex[41];
	cr_assert_eq(mirror_open(&repo, state), 0);
	cr_assert_eq(git_reference_name_to_id(&got, repo, "refs/heads/main"), 0);
	git_oid_tostr(hex, sizeof(hex), &got);
	cr_assert_str_eq(hex, two);
	git_repository_free(repo);
	test_repo_destroy(&up);
}

Test(statedir, a_half_made_mirror_is_removed_and_made_again)
{
	/* a daemon killed inside git_repository_init: a .new with a config lock and no HEAD */
	char part[400], p[500];
	snprintf(part, sizeof(part), "%s/mirror.git.new", state);
	cr_assert_eq(mkdir(part, 0700), 0);
	snprintf(p, sizeof(p), "%s/config.lock", part);
	touch(p);
	cr_assert_eq(mirror_recover(state), 0, "%s", err_last());
	cr_assert_eq(access(part, F_OK), -1);

	/* and an open that meets one (no start between) makes the mirror all the same */
	cr_assert_eq(mkdir(part, 0700), 0);
	touch(p);
	git_repository *repo = NULL;
	cr_assert_eq(mirror_open(&repo, state), 0, "%s", err_last());
	cr_assert(git_repository_is_bare(repo));
	git_repository_free(repo);
	cr_assert_eq(access(part, F_OK), -1);
	snprintf(p, sizeof(p), "%s/mirror.git/HEAD", state);
	cr_assert_eq(access(p, F_OK), 0);
}

Test(statedir, a_mirror_that_does_not_open_is_set_aside)
{
	/* an older daemon killed inside its init made mirror.git itself, half-way */
	char path[400], p[500];
	snprintf(path, sizeof(path), "%s/mirror.git", state);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(p, sizeof(p), "%s/config", path);
	touch(p);
	cr_assert_eq(mirror_recover(state), 0, "%s", err_last());
	cr_assert_eq(access(path, F_OK), -1, "set aside");
	git_repository *repo = NULL;
	cr_assert_eq(mirror_open(&repo, state), 0, "%s", err_last());
	git_repository_free(repo);
	/* the old one is kept beside it, for a post-mortem */
	DIR *d = opendir(state);
	cr_assert_not_null(d);
	int aside = 0;
	for (struct dirent *e; (e = readdir(d));)
		aside += !strncmp(e->d_name, "mirror.git.broken-", 18);
	closedir(d);
	cr_assert_eq(aside, 1);
}

Test(statedir, stale_locks_are_cleared_through_a_symlinked_mirror)
{
	char real[400], link[400], lock[500];
	snprintf(real, sizeof(real), "%s/elsewhere.git", state);
	snprintf(link, sizeof(link), "%s/mirror.git", state);
	git_repository *repo = NULL;
	cr_assert_eq(git_repository_init(&repo, real, 1), 0);
	git_repository_free(repo);
	cr_assert_eq(symlink(real, link), 0);
	snprintf(lock, sizeof(lock), "%s/FETCH_HEAD.lock", real);
	touch(lock);
	cr_assert_eq(mirror_recover(state), 0, "%s", err_last());
	cr_assert_eq(access(lock, F_OK), -1, "the lock inside the linked mirror is gone");
	cr_assert_eq(access(link, F_OK), 0, "the mirror itself is kept");
}
