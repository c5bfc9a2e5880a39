/* The funnel's internals shared between its files; not a public header. */
#ifndef FUNNEL_FUNNEL_INT_H
#define FUNNEL_FUNNEL_INT_H

#include "funnel/funnel.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"

struct funnel_cache {
	struct catalog_cache *cache;
};

/* Stages 1 and 2 of one selection: the change set, both sides' catalogs, the impact result
 * and the candidates stage 3 takes (each with its reasons, borrowed from the impact result). */
struct funnel_front {
	struct change_set *cs;
	struct catalog *head, *base;
	struct impact_result *impact;
	struct select_candidates cands;
	const char **ids; /* every head test id, for stale drift */
};

/* Stage 1: the change set of `ch` (git range or unified diff). */
int funnel__changes(struct change_set **out, const struct funnel_change *ch);

/* The head and base catalogs of `ch` (catalogs.c): a git range's two revisions, or a diff's
 * two sides laid over HEAD. */
int funnel__catalogs(struct funnel_front *f, const struct funnel_change *ch,
		     struct catalog_cache *cache);

void funnel__front_finish(struct funnel_front *f);

/* Every test id of `cat` (pointers into it), for stage 3; NULL for a catalog without tests.
 * 0 or ERR_NOMEM. */
int funnel__catalog_ids(const char ***out, const struct catalog *cat);

/* Stage 3 as every path of the funnel runs it (select.c): the candidates resolved against the
 * specs under `o`'s tier and expanded into kernel cases, with `head` (a revision's catalog) for
 * their @ops lists and the op database, and `ids` (every test id of `head`) for the resolver's
 * variant rule and stale drift. funnel_select and funnel_tests_expand both come here, so a test
 * gets the same cases from either. */
int funnel__stage3(struct select_report *rep, const struct catalog *head, const char *const *ids,
		   const struct select_candidate *cands, size_t n_cands, struct funnel_specs *specs,
		   const struct funnel_select_opts *o);

#endif
