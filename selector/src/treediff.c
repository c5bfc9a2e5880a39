/* Two trees compared by entry: equal ids are skipped whole, so the work is proportional to the
 * directories on the paths that changed, not to the size of the tree. */
#include <git2/sys/repository.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/limits.h"
#include "scan_internal.h"
#include "treediff.h"

/* The walk keeps the directory it is in as d->path[0, d->len), one buffer for every level: a
 * path buffer on the stack of each of TREE_DEPTH_MAX levels would take a megabyte of it. */

/* d->path + `name`, the next path, unless there are enough already (then only counted). */
static int add(struct treediff *d, const char *name)
{
	if (d->n >= d->max) {
		d->over = true; /* go on counting the entries, keep no more paths */
		return 0;
	}
	size_t ln = strlen(name);
	char *p = malloc(d->len + ln + 1);
	void *v = scan__grow(d->paths, d->n, &d->cap, sizeof(*d->paths));
	if (!p || !v) {
		free(p);
		return err_set(ERR_NOMEM, "tree diff: %zu paths", d->n);
	}
	d->paths = v;
	memcpy(p, d->path, d->len);
	memcpy(p + d->len, name, ln + 1);
	d->paths[d->n++] = p;
	return 0;
}

/* Enters directory `name`: d->path gets "name/"; *saved is the length to go back to. */
static int enter(struct treediff *d, const char *name, size_t *saved, int depth)
{
	size_t ln = strlen(name);
	if (depth >= TREE_DEPTH_MAX)
		return err_set(ERR_LIMIT, "tree diff: %.*s deeper than %d", (int)d->len, d->path,
			       TREE_DEPTH_MAX);
	if (d->len + ln + 2 > sizeof(d->path))
		return err_set(ERR_LIMIT, "tree diff: a path over %zu bytes", sizeof(d->path));
	*saved = d->len;
	memcpy(d->path + d->len, name, ln);
	d->len += ln;
	d->path[d->len++] = '/';
	d->path[d->len] = 0;
	return 0;
}

static void leave(struct treediff *d, size_t saved)
{
	d->len = saved;
	d->path[d->len] = 0;
}

static int lookup(git_tree **out, struct treediff *d, git_repository *repo, const git_oid *id)
{
	if (git_tree_lookup(out, repo, id) < 0)
		return err_set(ERR_GENERIC, "tree diff: %.*s: %s", (int)d->len, d->path,
			       git_error_last()->message);
	return 0;
}

/* Every path under entry `e` (the entry itself when it is not a tree). */
static int all(struct treediff *d, git_repository *repo, const git_tree_entry *e, int depth)
{
	if (++d->visits > TREE_ENTRIES_MAX)
		return 2;
	if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
		return add(d, git_tree_entry_name(e));
	size_t saved;
	git_tree *t = NULL;
	int rc = enter(d, git_tree_entry_name(e), &saved, depth + 1);
	if (rc)
		return rc;
	rc = lookup(&t, d, repo, git_tree_entry_id(e));
	for (size_t i = 0, n = t ? git_tree_entrycount(t) : 0; !rc && i < n; i++)
		rc = all(d, repo, git_tree_entry_byindex(t, i), depth + 1);
	git_tree_free(t);
	leave(d, saved);
	return rc;
}

static int compare(struct treediff *d, git_repository *repo, const git_tree *a, const git_tree *b,
		   int depth);

/* Both sides of directory `name` are trees with different ids: compared entry by entry. */
static int compare_dirs(struct treediff *d, git_repository *repo, const char *name,
			const git_oid *a, const git_oid *b, int depth)
{
	size_t saved;
	int rc = enter(d, name, &saved, depth + 1);
	if (rc)
		return rc;
	git_tree *ta = NULL, *tb = NULL;
	rc = lookup(&ta, d, repo, a);
	if (!rc)
		rc = lookup(&tb, d, repo, b);
	if (!rc)
		rc = compare(d, repo, ta, tb, depth + 1);
	git_tree_free(ta);
	git_tree_free(tb);
	leave(d, saved);
	return rc;
}

static int compare(struct treediff *d, git_repository *repo, const git_tree *a, const git_tree *b,
		   int depth)
{
	int rc = 0;
	for (size_t i = 0, n = git_tree_entrycount(a); !rc && i < n; i++) {
		const git_tree_entry *ea = git_tree_entry_byindex(a, i);
		const char *name = git_tree_entry_name(ea);
		if (++d->visits > TREE_ENTRIES_MAX)
			return 2;
		const git_tree_entry *eb = git_tree_entry_byname(b, name);
		if (!eb) {
			rc = all(d, repo, ea, depth);
			continue;
		}
		if (git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
		    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
			continue;
		bool ta = git_tree_entry_type(ea) == GIT_OBJECT_TREE,
		     tb = git_tree_entry_type(eb) == GIT_OBJECT_TREE;
		if (ta && tb) {
			rc = compare_dirs(d, repo, name, git_tree_entry_id(ea),
					  git_tree_entry_id(eb), depth);
		} else if (ta || tb) {
			rc = all(d, repo, ea, depth);
			if (!rc)
				rc = all(d, repo, eb, depth);
		} else {
			rc = add(d, name);
		}
	}
	for (size_t i = 0, n = git_tree_entrycount(b); !rc && i < n; i++) {
		const git_tree_entry *eb = git_tree_entry_byindex(b, i);
		if (++d->visits > TREE_ENTRIES_MAX)
			return 2;
		if (!git_tree_entry_byname(a, git_tree_entry_name(eb)))
			rc = all(d, repo, eb, depth);
	}
	return rc;
}

int treediff__paths(struct treediff *d, git_repository *repo, const git_tree *old_tree,
		    const git_tree *new_tree)
{
	int rc = 0;
	if (!old_tree) /* the empty tree: every path of the new one */
		for (size_t i = 0, n = git_tree_entrycount(new_tree); !rc && i < n; i++)
			rc = all(d, repo, git_tree_entry_byindex(new_tree, i), 0);
	else if (!git_oid_equal(git_tree_id(old_tree), git_tree_id(new_tree)))
		rc = compare(d, repo, old_tree, new_tree, 0);
	return rc ? rc : d->over ? 1 : 0;
}

void treediff__free(struct treediff *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->paths[i]);
	free(d->paths);
	*d = (struct treediff){ 0 };
}

int selector__repo_open(git_repository **out, const char *dir)
{
	char gitdir[4200];
	struct stat st;
	int k = snprintf(gitdir, sizeof(gitdir), "%s/.git", dir);
	int rc = -1;
	if (k > 0 && (size_t)k < sizeof(gitdir) && stat(gitdir, &st) == 0 && S_ISDIR(st.st_mode))
		rc = git_repository_open_ext(
		    out, gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);
	if (rc < 0)
		rc = git_repository_open_ext(out, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc < 0)
		return rc;
	/* Even a bare repository loads an index file when there is one: an empty one instead. */
	git_index *index = NULL;
	if (git_index_new(&index) == 0) {
		git_repository_set_index(*out, index);
		git_index_free(index);
	}
	return 0;
}
