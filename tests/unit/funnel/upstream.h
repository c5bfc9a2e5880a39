/* Shared by the funnel's tests: one small generated upstream (fixture.h) for the whole run of
 * the executable, temporary directories, specs loaded from the upstream's spyre/specs, and
 * selections compared field by field. */
#ifndef TESTS_UNIT_FUNNEL_UPSTREAM_H
#define TESTS_UNIT_FUNNEL_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "funnel/funnel.h"

/* The generated upstream's options: its history, newest first, is
 *   HEAD    src_body   HEAD~1  decomp    HEAD~2  build (a fallback)  ...
 * so HEAD~2..HEAD is a traced change ending at HEAD (a diff of it lays over HEAD exactly), and
 * the empty tree..HEAD brings every test in as new. The tests check what they rely on. */
#define UP_SEED    1
#define UP_COMMITS 12

/* The upstream's directory (a work tree with spyre/specs/upstream_tests.yaml). */
const char *up_dir(void);

/* /tmp/funnel-TAG-XXXXXX into dir (fails the test when it cannot be made); removed whole. */
void tmp_make(char *dir, size_t size, const char *tag);
void tmp_remove(const char *dir);
/* Writes `text` to dir/name and puts that path into `path`. */
void tmp_write(char *path, size_t size, const char *dir, const char *name, const char *text);

/* The upstream's specs (or those of `path` when not NULL), ${TORCH_ROOT} the upstream. */
struct funnel_specs *up_specs(const char *path);

/* A selection of base..head of the upstream (base NULL: the empty tree); fails the test when it
 * fails. `o` may be NULL. */
void up_select(struct funnel_selection *sel, struct funnel_specs *specs, struct funnel_cache *cache,
	       const char *base, const char *head, const struct funnel_select_opts *o);

/* The same tests (ids, in order) with the same fates, reasons' kinds and kernel-case counts, and
 * the same scheduled cases (ids, in order); `what` names the comparison in failures. */
void expect_same_selection(const struct funnel_selection *a, const struct funnel_selection *b,
			   const char *what);

/* The scheduled tests' kernel cases, and only theirs, are sel->cases in rank order, each
 * pointing at its test's run of the report's cases (n_cases = rep.kernel_cases = their sum). */
void expect_cases_follow_the_schedule(const struct funnel_selection *sel);

/* How many scheduled tests a report has. */
size_t scheduled_tests(const struct select_report *rep);

#endif
