/* Stage 1 of the selector: what changed between two revisions, as a change set. A change set is
 * read either from a git repository through libgit2 (selector_changes_from_git) or from a unified
 * diff in git's format or plain `diff -u` output (selector_changes_from_udiff). Both produce the
 * same model, so that the later stages never care where the change came from.
 *
 * Paths are bytes, kept exactly as git stores them (they may be non-UTF-8), with a printable
 * escaped form beside them for messages and reports. Reading is bounded (files, hunks, bytes,
 * commits): a bound that is hit is recorded in `limit_hits` and what was read so far is kept, so
 * that the caller turns the selection into the safe fallback instead of trusting a cut list. */
#ifndef SELECTOR_CHANGES_H
#define SELECTOR_CHANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum change_status {
	CHANGE_ADDED,
	CHANGE_DELETED,
	CHANGE_MODIFIED,
	CHANGE_RENAMED,
	CHANGE_COPIED,
	CHANGE_TYPECHANGE, /* same path, another kind: file <-> symlink <-> submodule */
};

/* Git's modes (octal), as stored in trees; 0 for "no such side". */
#define CHANGE_MODE_NONE       0u
#define CHANGE_MODE_FILE       0100644u
#define CHANGE_MODE_EXECUTABLE 0100755u
#define CHANGE_MODE_SYMLINK    0120000u
#define CHANGE_MODE_GITLINK    0160000u /* a submodule entry: the id is a commit */

struct change_path {
	char *bytes; /* as given, NUL-terminated; may hold any byte but NUL */
	size_t len;
	char *text; /* printable: control bytes, '\\', '"' and invalid UTF-8 as C escapes */
};

struct change_hunk {
	uint32_t old_start, old_lines; /* old_lines 0: an insertion after line old_start */
	uint32_t new_start, new_lines; /* new_lines 0: a deletion after line new_start */
};

#define CHANGE_ID_MAX 64 /* hex digits of an object id (SHA-256) */

struct file_change {
	enum change_status status;
	/* Both are always set; they differ only for renames and copies (and for plain `diff -u`
	 * input that compared two differently named files). */
	struct change_path old_path, new_path;
	uint32_t old_mode, new_mode; /* CHANGE_MODE_NONE on the side that does not exist */
	bool binary;                 /* no hunks are known for a binary file */
	/* The blob ids of the two sides in hex, as the source gave them: full from a repository,
	 * abbreviated (at least 4 digits) from a unified diff's `index` line; "" when unknown,
	 * zeros for a side that does not exist. */
	char old_id[CHANGE_ID_MAX + 1], new_id[CHANGE_ID_MAX + 1];
	uint16_t similarity; /* 0..100 for renames and copies, else 0 */
	struct change_hunk *hunks;
	size_t n_hunks;
};

struct change_commit {
	char id[41]; /* hex */
	char *message;
};

/* A limit that was hit while reading: "files", "hunks", "bytes", "commits", "tree entries" or
 * "tree depth or path length". */
struct change_limit_hit {
	const char *what; /* static string */
	uint64_t limit;
};

struct change_set {
	struct file_change *files; /* in the order read: git's path order for a repository */
	size_t n_files;
	/* base..head, newest first; for a diff, the message of each mail (format-patch) in input
	 * order, or the text before the first file; empty for a plain diff */
	struct change_commit *commits;
	size_t n_commits;
	char base_id[41];       /* resolved base ("" for a diff, or for no base: the empty tree) */
	char head_id[41];       /* resolved head ("" for a diff) */
	char merge_base_id[41]; /* the tree actually diffed against with merge_base; else "" */
	struct change_limit_hit limit_hits[8];
	size_t n_limit_hits;
};

/* Bounds and knobs; a zero field means the default (limits.h, libgit2's thresholds). */
struct changes_opts {
	bool merge_base;           /* diff merge-base(base, head)..head, as for a pull request */
	uint16_t rename_threshold; /* percent; default 50 */
	size_t max_files, max_hunks, max_bytes, max_commits;
};

/* Reads the change base..head from the repository at `repo_dir` (a work tree or a bare
 * repository). `base` and `head` are any revspec (a branch, a tag, an id, "HEAD~3"); a NULL or
 * empty `base` means the empty tree (everything in head is added). Renames and copies (from
 * modified files) are detected. Returns 0, or ERR_NOTFOUND naming the revision that did not
 * resolve, ERR_INVAL, ERR_NOMEM, ERR_GENERIC with libgit2's message. A limit hit is not an
 * error: it is recorded in the change set. */
int selector_changes_from_git(struct change_set **out, const char *repo_dir, const char *base,
			      const char *head, const struct changes_opts *opts);

/* Parses a unified diff (git's format, or plain `diff -u`). `origin` names the input in errors
 * ("FILE:LINE: expected ..."); ERR_INVAL for malformed input. */
int selector_changes_from_udiff(struct change_set **out, const char *data, size_t len,
				const char *origin);
/* The same with bounds from `opts` (only the max_* fields are used). */
int selector_changes_from_udiff_opts(struct change_set **out, const char *data, size_t len,
				     const char *origin, const struct changes_opts *opts);

void selector_change_set_destroy(struct change_set *set);

/* True when a limit was hit: the change set is incomplete and only a safe fallback is right. */
bool selector_change_set_limited(const struct change_set *set);

/* "added", "deleted", "modified", "renamed", "copied", "typechange". */
const char *selector_change_status_name(enum change_status status);

/* The path a change is about: the new path, or the old one for a deletion. */
const struct change_path *selector_file_change_path(const struct file_change *fc);

#endif
