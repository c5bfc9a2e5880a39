/* Stage 1 from a repository: resolve base and head (any revspec), optionally their merge base,
 * diff the two trees with libgit2 (renames and copies found, no context lines), and read each
 * delta's hunks, modes and binary flag; then the commit messages of base..head. Bounded by the
 * builder's limits, which are recorded, never silently applied. */
#include <git2.h>
#include <stdio.h>
#include <string.h>

#include "changes_internal.h"
#include "common/err.h"
#include "common/limits.h"
#include "treediff.h"

/* libgit2's last message, or a fallback. */
static const char *git_msg(void)
{
	const git_error *e = git_error_last();
	return e && e->message ? e->message : "unknown libgit2 error";
}

static int git_fail(const char *what)
{
	return err_set(ERR_GENERIC, "%s: %s", what, git_msg());
}

/* Resolves `spec` to a commit; `role` ("base", "head") names it in the error. */
static int resolve(git_commit **out, git_repository *repo, const char *role, const char *spec)
{
	git_object *obj = NULL;
	int rc = git_revparse_single(&obj, repo, spec);
	if (rc < 0)
		return err_set(rc == GIT_ENOTFOUND ? ERR_NOTFOUND : ERR_INVAL,
			       "%s revision '%s' did not resolve: %s", role, spec, git_msg());
	git_object *peeled = NULL;
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0)
		return err_set(ERR_INVAL, "%s revision '%s' is not a commit: %s", role, spec,
			       git_msg());
	*out = (git_commit *)peeled;
	return 0;
}

static enum change_status map_status(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
		return CHANGE_ADDED;
	case GIT_DELTA_DELETED:
		return CHANGE_DELETED;
	case GIT_DELTA_RENAMED:
		return CHANGE_RENAMED;
	case GIT_DELTA_COPIED:
		return CHANGE_COPIED;
	case GIT_DELTA_TYPECHANGE:
		return CHANGE_TYPECHANGE;
	default:
		return CHANGE_MODIFIED;
	}
}

/* The lines of one side of a type change (a gitlink reads as one line, as git shows it);
 * *binary set for binary content. */
static int side_lines(uint32_t *lines, bool *binary, struct change_builder *b, git_repository *repo,
		      const git_diff_file *f)
{
	*lines = 1;
	if (f->mode == GIT_FILEMODE_COMMIT)
		return 0;
	git_blob *blob = NULL;
	if (git_blob_lookup(&blob, repo, &f->id) < 0)
		return git_fail(f->path);
	const char *p = git_blob_rawcontent(blob);
	size_t n = (size_t)git_blob_rawsize(blob);
	*binary = *binary || git_blob_is_binary(blob);
	uint32_t count = 0;
	for (size_t i = 0; i < n; i++)
		count += p[i] == '\n';
	*lines = count + (n && p[n - 1] != '\n');
	git_blob_free(blob);
	return changes__add_bytes(b, n); /* the whole side is the change */
}

/* libgit2 gives a type change no hunks; git shows it as the deletion of the old content and
 * the addition of the new, and so does this (udiff.c joins git's two sections the same way). */
static int typechange_hunks(struct change_builder *b, git_repository *repo, const git_diff_delta *d,
			    struct file_change *fc)
{
	uint32_t old_n, new_n;
	int rc = side_lines(&old_n, &fc->binary, b, repo, &d->old_file);
	if (!rc)
		rc = side_lines(&new_n, &fc->binary, b, repo, &d->new_file);
	if (rc || fc->binary)
		return rc; /* CHANGES_STOP: the file is kept, its hunks are not */
	struct change_hunk del = { 1, old_n, 0, 0 }, add = { 0, 0, 1, new_n };
	if (old_n)
		rc = changes__add_hunk(b, &del);
	if (!rc && new_n)
		rc = changes__add_hunk(b, &add);
	return rc;
}

/* Reads one delta: its file change, then its hunks through a git_patch. */
static int read_delta(struct change_builder *b, git_repository *repo, git_diff *diff, size_t idx)
{
	const git_diff_delta *d = git_diff_get_delta(diff, idx);
	struct file_change *fc;
	int rc = changes__add_file(b, &fc);
	if (rc)
		return rc;
	fc->status = map_status(d->status);
	fc->old_mode = d->status == GIT_DELTA_ADDED ? 0 : d->old_file.mode;
	fc->new_mode = d->status == GIT_DELTA_DELETED ? 0 : d->new_file.mode;
	if (fc->status == CHANGE_RENAMED || fc->status == CHANGE_COPIED)
		fc->similarity = d->similarity;
	git_oid_tostr(fc->old_id, sizeof(fc->old_id), &d->old_file.id);
	git_oid_tostr(fc->new_id, sizeof(fc->new_id), &d->new_file.id);
	const char *op = d->old_file.path ? d->old_file.path : d->new_file.path;
	const char *np = d->new_file.path ? d->new_file.path : op;
	rc = changes__path_set(&fc->old_path, op, strlen(op));
	if (!rc)
		rc = changes__path_set(&fc->new_path, np, strlen(np));
	if (rc)
		return err_prefix("diff entry %zu", idx);

	if (d->status == GIT_DELTA_TYPECHANGE)
		return typechange_hunks(b, repo, d, fc);
	git_patch *patch = NULL;
	if (git_patch_from_diff(&patch, diff, idx) < 0)
		return git_fail(fc->new_path.text);
	/* The patch loads the blobs, so the binary flag is known only now. */
	fc->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
	if (patch) {
		rc = changes__add_bytes(b, git_patch_size(patch, 0, 0, 0));
		size_t nh = git_patch_num_hunks(patch);
		for (size_t h = 0; !rc && h < nh && !fc->binary; h++) {
			const git_diff_hunk *gh;
			size_t lines;
			if (git_patch_get_hunk(&gh, &lines, patch, h) < 0) {
				rc = git_fail(fc->new_path.text);
				break;
			}
			struct change_hunk ch = { (uint32_t)gh->old_start, (uint32_t)gh->old_lines,
						  (uint32_t)gh->new_start,
						  (uint32_t)gh->new_lines };
			rc = changes__add_hunk(b, &ch);
		}
		git_patch_free(patch);
	}
	return rc;
}

static int diff_trees(struct change_builder *b, git_repository *repo, git_tree *old_tree,
		      git_tree *new_tree, const struct changes_opts *opts)
{
	git_diff_options dopts;
	git_diff_options_init(&dopts, GIT_DIFF_OPTIONS_VERSION);
	dopts.context_lines = 0;
	dopts.interhunk_lines = 0;
	dopts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	/* libgit2 visits every entry of both trees; given the paths that differ (found by
	 * skipping equal subtrees) it looks at those only, with the same deltas: renames and
	 * copies pair deleted, added and modified files, all of which are among them. */
	struct treediff td = { .max = CHANGES_PATHSPEC_MAX };
	int t = treediff__paths(&td, repo, old_tree, new_tree);
	if (t != 0 || td.n == 0) {
		/* A change this wide, or a tree this hostile, is answered with everything:
		 * libgit2's whole-tree diff, which does not skip shared subtrees, is never run. */
		treediff__free(&td);
		if (t == 0)
			return 0; /* the same tree */
		if (t == 1)
			return changes__hit(b, "files", CHANGES_PATHSPEC_MAX);
		if (t == 2)
			return changes__hit(b, "tree entries", TREE_ENTRIES_MAX);
		if (t != ERR_LIMIT)
			return t; /* out of memory, a tree that cannot be read */
		err_clear();
		return changes__hit(b, "tree depth or path length", TREE_DEPTH_MAX);
	}
	dopts.pathspec.strings = td.paths;
	dopts.pathspec.count = td.n;
	dopts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	git_diff *diff = NULL;
	int drc = git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, &dopts);
	treediff__free(&td);
	if (drc < 0)
		return git_fail("diff of the trees");

	git_diff_find_options fopts;
	git_diff_find_options_init(&fopts, GIT_DIFF_FIND_OPTIONS_VERSION);
	fopts.flags =
	    GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_COPIES | GIT_DIFF_FIND_REMOVE_UNMODIFIED;
	if (opts && opts->rename_threshold) {
		fopts.rename_threshold = opts->rename_threshold;
		fopts.copy_threshold = opts->rename_threshold;
	}
	int rc = 0;
	if (git_diff_find_similar(diff, &fopts) < 0)
		rc = git_fail("rename detection");
	size_t n = git_diff_num_deltas(diff);
	for (size_t i = 0; !rc && i < n; i++)
		rc = read_delta(b, repo, diff, i);
	git_diff_free(diff);
	return rc;
}

/* Commit messages of base..head (all of head's history when there is no base). */
static int read_commits(struct change_builder *b, git_repository *repo, const git_oid *base,
			const git_oid *head)
{
	git_revwalk *walk = NULL;
	if (git_revwalk_new(&walk, repo) < 0)
		return git_fail("commit walk");
	int rc = 0;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	if (git_revwalk_push(walk, head) < 0 || (base && git_revwalk_hide(walk, base) < 0))
		rc = git_fail("commit walk");
	git_oid id;
	while (!rc && git_revwalk_next(&id, walk) == 0) {
		git_commit *c = NULL;
		if (git_commit_lookup(&c, repo, &id) < 0) {
			rc = git_fail("commit walk");
			break;
		}
		char hex[GIT_OID_HEXSZ + 1];
		git_oid_tostr(hex, sizeof(hex), &id);
		const char *msg = git_commit_message(c);
		rc = changes__add_commit(b, hex, msg ? msg : "");
		git_commit_free(c);
	}
	git_revwalk_free(walk);
	return rc;
}

struct git_range {
	git_repository *repo;
	git_commit *base, *head, *mbase;
	git_tree *old_tree, *new_tree;
};

static void range_free(struct git_range *r)
{
	git_tree_free(r->old_tree);
	git_tree_free(r->new_tree);
	git_commit_free(r->mbase);
	git_commit_free(r->base);
	git_commit_free(r->head);
	git_repository_free(r->repo);
}

/* Opens the repository, resolves the revisions and picks the trees to diff. */
static int range_open(struct git_range *r, struct change_set *set, const char *repo_dir,
		      const char *base, const char *head, bool merge_base)
{
	if (selector__repo_open(&r->repo, repo_dir) < 0)
		return err_set(ERR_NOTFOUND, "%s: not a git repository: %s", repo_dir, git_msg());
	int rc = resolve(&r->head, r->repo, "head", head);
	if (!rc && base && *base)
		rc = resolve(&r->base, r->repo, "base", base);
	if (rc)
		return rc;
	git_oid_tostr(set->head_id, sizeof(set->head_id), git_commit_id(r->head));
	git_commit *from = r->base;
	if (r->base) {
		git_oid_tostr(set->base_id, sizeof(set->base_id), git_commit_id(r->base));
		if (merge_base) {
			git_oid mb;
			if (git_merge_base(&mb, r->repo, git_commit_id(r->base),
					   git_commit_id(r->head)) < 0)
				return err_set(ERR_NOTFOUND, "no merge base of '%s' and '%s': %s",
					       base, head, git_msg());
			if (git_commit_lookup(&r->mbase, r->repo, &mb) < 0)
				return git_fail("merge base");
			git_oid_tostr(set->merge_base_id, sizeof(set->merge_base_id), &mb);
			from = r->mbase;
		}
	}
	if (git_commit_tree(&r->new_tree, r->head) < 0 ||
	    (from && git_commit_tree(&r->old_tree, from) < 0))
		return git_fail("reading a commit's tree");
	return 0;
}

int selector_changes_from_git(struct change_set **out, const char *repo_dir, const char *base,
			      const char *head, const struct changes_opts *opts)
{
	*out = NULL;
	if (!repo_dir || !head || !*head)
		return err_set(ERR_INVAL, "changes from git: a repository and a head are needed");
	git_libgit2_init();
	struct change_builder b;
	int rc = changes__builder_init(&b, opts);
	if (rc) {
		git_libgit2_shutdown();
		return rc;
	}
	struct git_range r = { 0 };
	rc = range_open(&r, b.set, repo_dir, base, head, opts && opts->merge_base);
	if (!rc)
		rc = diff_trees(&b, r.repo, r.old_tree, r.new_tree, opts);
	if (!rc || rc == CHANGES_STOP) {
		/* Even a cut diff keeps the messages, within what is left of the bounds. */
		int rc2 = read_commits(&b, r.repo, r.base ? git_commit_id(r.base) : NULL,
				       git_commit_id(r.head));
		if (rc2 < 0)
			rc = rc2;
	}
	range_free(&r);
	git_libgit2_shutdown();
	if (rc < 0) {
		changes__builder_finish(&b);
		return rc;
	}
	*out = changes__builder_take(&b);
	return 0;
}
