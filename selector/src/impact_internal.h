/* Private to stage 2 (impact.c, impact_graph.c, impact_message.c): the run's context. */
#ifndef SELECTOR_IMPACT_INTERNAL_H
#define SELECTOR_IMPACT_INTERNAL_H

#include <jansson.h>

#include "catalog_internal.h"
#include "common/limits.h"
#include "selector/impact.h"

struct callers {
	const char **v;
	size_t n, cap;
};

/* What stage 2 derives from the torch/ sources of a catalog alone: the import aliases and the
 * call graph. Reference counted: catalogs whose source files (paths and blob ids) are all the
 * same share one (a commit that touches only tests keeps its base's). */
struct impact_source {
	size_t refs;
	struct arena arena;
	const char **files; /* "path\0blob id" of each source file, in the catalog's order */
	size_t n_files;
	struct strmap alias; /* "pkg.name" -> the target it re-exports */
	struct strmap rev;   /* callee -> index in callers */
	struct callers *callers;
	size_t n_callers, callers_cap;
};

/* What stage 2 derives from one head catalog, kept with the catalog (catalog_priv.graph) so that
 * every run at that head shares it: the source graph and the uses of every test resolved
 * through its aliases. */
struct impact_graph {
	struct impact_source *src;
	struct arena arena;
	const char **names; /* distinct resolved uses of the tests */
	size_t n_names, names_cap;
	uint32_t *uses; /* test i's uses, in order: names[uses[off[i]] .. uses[off[i + 1] - 1]] */
	size_t *off;    /* n_tests + 1 */
	size_t n_uses, uses_cap;
};

struct ictx {
	const struct change_set *cs;
	const struct catalog *base, *head;
	const struct impact_config *cfg;
	int max_depth;
	struct impact_result *res;
	struct strmap cand; /* test id -> candidate index */
	size_t cand_cap;
	struct strmap ops;   /* changed op name -> why (static string) */
	struct strmap seeds; /* changed symbol -> why (arena string) */
	json_t *coverage;
	struct arena arena;
	const struct impact_graph *graph; /* the head catalog's (built on first need) */
	struct strmap impacted;           /* symbol -> distance */
};

int impact__add(struct ictx *x, const char *id, enum impact_signal sig, double score,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A torch/ source file changed: seeds its changed functions, classes and registrations. */
int impact__source_changed(struct ictx *x, const struct catalog_file *hf,
			   const struct catalog_file *bf, const struct file_change *fc);
/* Builds the call graph, closes the seeds and the changed ops over it, adds the tests. */
int impact__symbols_to_tests(struct ictx *x);
/* Tests named in the commit messages of the range (impact_message.c). */
int impact__messages_to_tests(struct ictx *x);
void impact__ctx_finish(struct ictx *x);

#endif
