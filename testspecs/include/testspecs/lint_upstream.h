/* Spec authoring against a real upstream: torch-spyre's config checker, restated. Each config
 * is a spec set of its own (torch-spyre runs one config at a time), checked against the
 * collectable test ids of an upstream checkout ("test/test_x.py::TestX::test_y", as the
 * selector's catalog lists them, generated tests included). Three findings, each located at
 * the entry it is about (file:line:col):
 *  - dead: a name that matches no collectable test, neither as the test's name nor as its name
 *    plus `_` (a variant: an @ops op, a @parametrize value); patterns that match none too;
 *  - duplicate: a collectable test that entries of more than one config decide;
 *  - not covered: a collectable test of a file some config lists that no entry of any config
 *    names (it falls to its file's unlisted_test_mode).
 * File entries under ${TORCH_DEVICE_ROOT} name torch-spyre's own tests and are left out. */
#ifndef TESTSPECS_LINT_UPSTREAM_H
#define TESTSPECS_LINT_UPSTREAM_H

#include <stddef.h>

#include "testspecs/spec.h"

struct spec_upstream_counts {
	size_t tests;       /* collectable ids looked at */
	size_t names, live; /* entry names of the configs, and the live ones */
	size_t dead, duplicates, uncovered;
};

/* Appends the findings to `diags` (dead: warning; duplicate and not covered: warning) and the
 * counts to `counts` (may be NULL). Returns 0, ERR_NOMEM, or a resolver error. */
int testspecs_lint_upstream(struct spec_set *const *configs, size_t n_configs,
			    const char *const *ids, size_t n_ids, struct spec_diag_list *diags,
			    struct spec_upstream_counts *counts);

#endif
