/* Private to the selector: the paths that differ between two trees, found by walking only the
 * subtrees whose ids differ (libgit2's tree-to-tree diff visits every entry of both trees: ~8 ms
 * at PyTorch's 20,000 files, for a commit that touches one). Used by stage 1 to narrow libgit2's
 * diff to those paths, and by the catalog to derive one revision's catalog from another's. */
#ifndef SELECTOR_TREEDIFF_H
#define SELECTOR_TREEDIFF_H

#include <git2.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/limits.h"

struct treediff {
	char **paths; /* malloc'd, in walk order (not sorted); a type change lists both sides */
	size_t n, cap;
	size_t max; /* more paths than this: no more are kept, and the result says so */
	bool over;
	size_t visits; /* tree entries looked at (TREE_ENTRIES_MAX at most: a "tree bomb" of
			* subtrees shared many times over would otherwise be exponential) */
	char path[PATH_TEXT_MAX]; /* private: the directory being walked */
	size_t len;
};

/* Fills `d` (zeroed, with d->max set) with the blob, link and submodule paths that are added,
 * removed or changed (id or mode) from `old_tree` (NULL: the empty tree) to `new_tree`. Returns 0,
 * 1 when more than d->max paths differ (d then holds the first d->max), 2 when more than
 * TREE_ENTRIES_MAX entries had to be looked at (a hostile tree: do not walk it whole either), or a
 * negative ERR_*. */
int treediff__paths(struct treediff *d, git_repository *repo, const git_tree *old_tree,
		    const git_tree *new_tree);
void treediff__free(struct treediff *d);

/* Opens the repository at `dir` (a work tree or a git directory, not searched upward) for
 * reading objects: a work tree's .git directory is opened as a bare repository, so that
 * libgit2 never loads the work tree's index (a 20,000-entry index read for every diff's
 * attribute lookups: ~10 ms). The work tree's .gitattributes are therefore not consulted;
 * binary files are told by content, as in a CI mirror. Returns libgit2's code. */
int selector__repo_open(git_repository **out, const char *dir);

#endif
