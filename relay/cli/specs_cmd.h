/* `spyre-ci specs`, shared between its files: the parsed command line, loading the spec files,
 * and the kernel cases of one test id as the subcommand presents them (cmd_specs.c: lint,
 * explain and the help; specs_list.c: list). */
#ifndef RELAY_SPECS_CMD_H
#define RELAY_SPECS_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/jsonx.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define SPECS_ARGS_MAX 256 /* paths, --test, --op and --dtype values on one command line */

enum specs_action { SPECS_LINT = 1, SPECS_LIST, SPECS_EXPLAIN };

struct specs_args {
	enum specs_action action;
	bool strict, json;
	const char *label;
	const char *paths[SPECS_ARGS_MAX];
	size_t n_paths;
	const char *tests[SPECS_ARGS_MAX];
	size_t n_tests;
	const char *ops[SPECS_ARGS_MAX];
	size_t n_ops;
	spec_dtype_mask dtypes;
	struct spec_roots roots;
	bool has_roots; /* one of the roots is set: the loader resolves paths */
	/* --upstream DIR: an upstream checkout (a git work tree); list and explain read its
	 * revision --rev (NULL: HEAD) through the funnel, lint its HEAD */
	const char *upstream, *rev;
	const char *cache; /* list and explain --cache DIR: the scanned files of --upstream */
};

/* Loads every path of `a` into a new set. Problems go to `diags`; returns 0, ERR_INVAL when a
 * file has an error (the set holds the others), or another negative code (err_last() says). */
int specs_load(struct spec_set **out, const struct specs_args *a, bool strict,
	       struct spec_diag_list *diags);

/* Prints the diagnostics, one `file:line:col: severity: message (at path)` line each, to `out`;
 * `as_errors` prints warnings as errors (--strict). */
void specs_print_diags(FILE *out, const struct spec_diag_list *d, bool as_errors);

/* The id path of a file entry: its path without `${TORCH_ROOT}/` (ids are relative to it). */
const char *specs_id_path(const struct spec_file *f);

/* A case as JSON {id, test, op, shapes, dtype, atol, rtol, mode, seed, rule, at} (+ why when
 * unsupported). NULL when out of memory. */
json_t *specs_case_json(const struct spec_case *c);

struct catalog;

/* Expands the cases of `test_id` (resolving it first for the @ops guess). With `cat` (an
 * upstream's catalog, may be NULL) the catalog's own test decides whether it is @ops and its
 * ops' cases come from the catalog's op database (selector_opinfo_of). */
int specs_expand_id(struct spec_case_list *list, const struct spec_resolver *r,
		    const struct spec_set *set, const char *test_id, const char *tier,
		    const struct catalog *cat, struct spec_expand_result *res);

/* An upstream checkout's catalog (its HEAD) for lint --upstream (specs_upstream.c). */
struct specs_upstream {
	struct catalog *cat;
	struct catalog_cache *cache;
};
int specs_upstream_open(struct specs_upstream *u, const char *dir);
void specs_upstream_close(struct specs_upstream *u);
/* explain's text: each op of the cases with the OpInfo entry its cases came from (or none),
 * and the cases by source. */
void specs_explain_sources(FILE *out, const struct spec_case_list *l,
			   const struct spec_expand_result *res, const struct catalog *cat);

/* list and explain --upstream (specs_upstream.c), through the funnel as `select` goes:
 * the specs loaded as select loads them (${TORCH_ROOT} is the upstream DIR), their problems
 * printed to stderr; 0 or a negative code (ERR_INVAL: a file has errors). */
struct funnel_specs;
struct funnel_expansion;
int specs_load_upstream(struct funnel_specs **out, const struct specs_args *a);
/* The tests `ids` (NULL: every test) of a->upstream at a->rev, resolved and expanded by the
 * funnel's stage 3 (funnel_tests_expand) under a->label; finish `x` either way. */
int specs_expand_upstream(struct funnel_expansion *x, const struct specs_args *a,
			  struct funnel_specs *specs, const char *const *ids, size_t n_ids);

int specs_list_run(const struct specs_args *a);

struct spec_upstream_counts;
/* lint --upstream (specs_upstream.c): torch-spyre's three checks of every path of `a`, each a
 * config of its own, against the collectable tests of a->upstream's HEAD; findings to `diags`. */
int specs_lint_upstream(const struct specs_args *a, struct spec_diag_list *diags,
			struct spec_upstream_counts *counts);

#endif
