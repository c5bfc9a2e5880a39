/* Shared internals of stages 3 and 4 and the report (select.h); not a public header. */
#ifndef SELECTOR_SELECT_INTERNAL_H
#define SELECTOR_SELECT_INTERNAL_H

#include <stddef.h>

#include "selector/select.h"

/* Grows *v (elements of `size` bytes, capacity *cap) to hold `need`; 0 or ERR_NOMEM/ERR_LIMIT. */
int select__grow(void **v, size_t *cap, size_t need, size_t size);

/* Appends a test with a copy of `id` and `reasons`, fate IMPACTED, shard -1. */
int select__add_test(struct select_report *rep, const char *id, const struct select_reason *reasons,
		     size_t n_reasons, struct select_test **out);

/* Spec names of plain form that no catalog id matches: STALE drift. `d` is scratch. */
int select__stale_drift(struct select_report *rep, const struct spec_set *set,
			const struct spec_resolver *resolver, const struct select_stage3_opts *opts,
			struct spec_decision *d);

#define SELECT_PROGRESS_EVERY 512 /* items between progress calls */

/* The candidate's variants from the head catalog, each resolved on its own into t->variants
 * (stage3_variants.c). No catalog or no such test: nothing. `d` is scratch. */
struct catalog;
int select__variants(struct select_test *t, const struct catalog *cat,
		     const struct spec_resolver *r, const struct spec_resolve_opts *ropts,
		     struct spec_decision *d);

#endif
