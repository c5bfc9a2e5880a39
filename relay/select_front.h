/* The front of `spyre-ci select`: the catalog of upstream tests at head (test files scanned
 * from the head tree through libgit2) and stage 2's candidates. Until the selector's own stage
 * 2 (selector/impact.h) lands, stage 2 here is a conservative stand-in: a test function edited
 * selects that test, a module-level edit of a test file selects the file's tests, documentation
 * changes select nothing, and any other change falls back to every test, with that reason. */
#ifndef RELAY_SELECT_FRONT_H
#define RELAY_SELECT_FRONT_H

#include <stdbool.h>
#include <stddef.h>

#include "selector/changes.h"
#include "selector/scan.h"
#include "selector/select.h"

struct front_test {
	char *id; /* path::Class::method */
	const struct scan_file *file;
	const struct scan_function *fn;
	const char **ops; /* the body's torch.* uses (for kernel cases); borrowed from file */
	size_t n_ops;
	bool opinfo;
};

struct front {
	struct scan_file **files; /* scanned test files at head */
	size_t n_files, cap_files;
	struct front_test *tests;
	size_t n_tests, cap_tests;
	/* stage 2 */
	struct select_candidate *cands;
	struct select_reason *reasons; /* one per candidate */
	size_t n_cands;
	bool fallback;
	char fallback_reason[SELECT_FALLBACK_MAX];
	const char **ids; /* every test id, for stale drift */
};

typedef void (*front_progress_fn)(void *ctx, const char *what, size_t done, size_t total);

/* Scans the test files (test/.../test_*.py) of revision `head` of the repository. */
int front_catalog(struct front *f, const char *repo_dir, const char *head,
		  front_progress_fn progress, void *ctx);

/* Stage 2 (the stand-in) from a change set; `base` may be NULL (a diff: no base tree). */
int front_impact(struct front *f, const char *repo_dir, const char *base,
		 const struct change_set *cs);

void front_finish(struct front *f);

/* True for test/.../test_*.py. */
bool front_is_test_path(const char *path);

#endif
