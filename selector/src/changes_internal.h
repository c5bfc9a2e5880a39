/* What changes_git.c and udiff.c share: a builder that grows a change set within its bounds.
 * Every add either succeeds, fails (a negative ERR_*), or says CHANGES_STOP: a bound was hit,
 * it is recorded in the set, and the reader must stop and hand back what it has. */
#ifndef SELECTOR_CHANGES_INTERNAL_H
#define SELECTOR_CHANGES_INTERNAL_H

#include "selector/changes.h"

#define CHANGES_STOP 1

struct change_builder {
	struct change_set *set;
	size_t cap_files, cap_commits, cap_hunks; /* cap_hunks: of the last file */
	size_t max_files, max_hunks, max_bytes, max_commits;
	size_t n_hunks_total, n_bytes;
};

/* Allocates an empty set; opts may be NULL. */
int changes__builder_init(struct change_builder *b, const struct changes_opts *opts);
/* Frees the set unless it was taken. */
void changes__builder_finish(struct change_builder *b);
/* Hands the set to the caller; the builder forgets it. */
struct change_set *changes__builder_take(struct change_builder *b);

/* Appends a zeroed file change (*out valid until the next add_file). */
int changes__add_file(struct change_builder *b, struct file_change **out);
/* Appends a hunk to the last file. */
int changes__add_hunk(struct change_builder *b, const struct change_hunk *h);
/* Counts `n` bytes read against max_bytes. */
int changes__add_bytes(struct change_builder *b, size_t n);
int changes__add_commit(struct change_builder *b, const char *id, const char *message);
/* Records a bound hit (once per kind) and returns CHANGES_STOP. */
int changes__hit(struct change_builder *b, const char *what, uint64_t limit);

/* Sets a path from bytes (copying them) and builds its printable form. ERR_INVAL for a NUL in
 * the bytes or an empty path, ERR_LIMIT past PATH_TEXT_MAX. */
int changes__path_set(struct change_path *p, const char *bytes, size_t len);
/* bytes[0..len) as printable text (struct change_path's `text`), malloc'ed; NULL: no memory. */
char *changes__escape(const char *bytes, size_t len);
/* Copies a path (both forms). */
int changes__path_copy(struct change_path *dst, const struct change_path *src);
void changes__path_finish(struct change_path *p);
void changes__file_finish(struct file_change *fc);

#endif
