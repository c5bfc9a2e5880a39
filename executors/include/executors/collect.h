/* Every kernel case a spec set gives without a selection (the nightly `run --all`, and the
 * benchmark): each plain name of each entry becomes the test id `<path>::<name>` (path relative
 * to TORCH_ROOT), resolved and expanded (testspecs/cases.h); a name that is a regular
 * expression, or an entry of a glob path, is expanded by its own entry (its `kernels:` and
 * `sample_inputs_func`). A test named twice is expanded once. The same walk as
 * `spyre-ci specs list` without --test. */
#ifndef EXECUTORS_COLLECT_H
#define EXECUTORS_COLLECT_H

#include "testspecs/cases.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define EXEC_COLLECT_TESTS_MAX 1000000 /* distinct test ids one collection expands */

/* Appends the cases to `list` (initialised by the caller). `tier` NULL: any. 0, ERR_NOMEM,
 * ERR_LIMIT, or the expansion's error naming the test. */
int exec_collect_cases(struct spec_case_list *list, const struct spec_set *set,
		       const struct spec_resolver *r, const char *tier);

#endif
