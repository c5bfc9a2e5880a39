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

static int add(struct treediff *d, const char *prefix, const char *name)
{
	if (d->n >= d->max) {
		d->over = true; /* go on counting the entries, keep no more paths */
		return 0;
	}
	size_t lp = strlen(prefix), ln = strlen(name);
	char *p = malloc(lp + ln + 1);
	void *v = scan__grow(d->paths, d->n, &d->cap, sizeof(*d->paths));
	if (!p || !v) {
		free(p);
		return err_set(ERR_NOMEM, "tree diff: %zu paths", d->n);
	}
	d->paths = v;
	memcpy(p, prefix, lp);
	memcpy(p + lp, name, ln + 1);
	d->paths[d->n++] = p;
	return 0;
}

static int all(struct treediff *d, git_repository *repo, const git_tree_entry *e,
	       const char *prefix, int depth);

/* `prefix` + `name` + "/" into `buf`. */
static int sub_prefix(char *buf, size_t n, const char *prefix, const char *name)
{
	int k = snprintf(buf, n, "%s%s/", prefix, name);
	return k < 0 || (size_t)k >= n ? err_set(ERR_LIMIT, "tree diff: path over %zu bytes", n)
				       : 0;
}

static int all_of_tree(struct treediff *d, git_repository *repo, const git_oid *id,
		       const char *prefix, int depth)
{
	if (depth >= TREE_DEPTH_MAX)
		return err_set(ERR_LIMIT, "tree diff: %s deeper than %d", prefix, TREE_DEPTH_MAX);
	git_tree *t;
	if (git_tree_lookup(&t, repo, id) < 0)
		return err_set(ERR_GENERIC, "tree diff: %s: %s", prefix, git_error_last()->message);
	int rc = 0;
	for (size_t i = 0, n = git_tree_entrycount(t); !rc && i < n; i++)
		rc = all(d, repo, git_tree_entry_byindex(t, i), prefix, depth);
	git_tree_free(t);
	return rc;
}

/* Every path under entry `e` (the entry itself when it is not a tree). */
static int all(struct treediff *d, git_repository *repo, const git_tree_entry *e,
	       const char *prefix, int depth)
{
	if (++d->visits > TREE_ENTRIES_MAX)
		return 2;
	if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
		return add(d, prefix, git_tree_entry_name(e));
	char sub[4096];
	int rc = sub_prefix(sub, sizeof(sub), prefix, git_tree_entry_name(e));
	return rc ? rc : all_of_tree(d, repo, git_tree_entry_id(e), sub, depth + 1);
}

static int compare(struct treediff *d, git_repository *repo, const git_tree *a, const git_tree *b,
		   const char *prefix, int depth);

static int compare_ids(struct treediff *d, git_repository *repo, const git_oid *a, const git_oid *b,
		       const char *prefix, int depth)
{
	if (depth >= TREE_DEPTH_MAX)
		return err_set(ERR_LIMIT, "tree diff: %s deeper than %d", prefix, TREE_DEPTH_MAX);
	git_tree *ta = NULL, *tb = NULL;
	int rc = 0;
	if (git_tree_lookup(&ta, repo, a) < 0 || git_tree_lookup(&tb, repo, b) < 0)
		rc = err_set(ERR_GENERIC, "tree diff: %s: %s", prefix, git_error_last()->message);
	else
		rc = compare(d, repo, ta, tb, prefix, depth);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

static int compare(struct treediff *d, git_repository *repo, const git_tree *a, const git_tree *b,
		   const char *prefix, int depth)
{
	int rc = 0;
	for (size_t i = 0, n = git_tree_entrycount(a); !rc && i < n; i++) {
		const git_tree_entry *ea = git_tree_entry_byindex(a, i);
		const char *name = git_tree_entry_name(ea);
		if (++d->visits > TREE_ENTRIES_MAX)
			return 2;
		const git_tree_entry *eb = git_tree_entry_byname(b, name);
		if (!eb) {
			rc = all(d, repo, ea, prefix, depth);
			continue;
		}
		if (git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
		    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
			continue;
		bool ta = git_tree_entry_type(ea) == GIT_OBJECT_TREE,
		     tb = git_tree_entry_type(eb) == GIT_OBJECT_TREE;
		if (ta && tb) {
			char sub[4096];
			rc = sub_prefix(sub, sizeof(sub), prefix, name);
			if (!rc)
				rc = compare_ids(d, repo, git_tree_entry_id(ea),
						 git_tree_entry_id(eb), sub, depth + 1);
		} else if (ta || tb) {
			rc = all(d, repo, ea, prefix, depth);
			if (!rc)
				rc = all(d, repo, eb, prefix, depth);
		} else {
			rc = add(d, prefix, name);
		}
	}
	for (size_t i = 0, n = git_tree_entrycount(b); !rc && i < n; i++) {
		const git_tree_entry *eb = git_tree_entry_byindex(b, i);
		if (++d->visits > TREE_ENTRIES_MAX)
			return 2;
		if (!git_tree_entry_byname(a, git_tree_entry_name(eb)))
			rc = all(d, repo, eb, prefix, depth);
	}
	return rc;
}

int treediff__paths(struct treediff *d, git_repository *repo, const git_tree *old_tree,
		    const git_tree *new_tree)
{
	int rc = 0;
	if (!old_tree) /* the empty tree: every path of the new one */
		for (size_t i = 0, n = git_tree_entrycount(new_tree); !rc && i < n; i++)
			rc = all(d, repo, git_tree_entry_byindex(new_tree, i), "", 0);
	else if (!git_oid_equal(git_tree_id(old_tree), git_tree_id(new_tree)))
		rc = compare(d, repo, old_tree, new_tree, "", 0);
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
