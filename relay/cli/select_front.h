/* The front of `spyre-ci select`: stage 2 through the selector's catalog (selector/catalog.h:
 * the upstream tests and sources of a revision, read through libgit2) and impact analysis
 * (selector/impact.h), turned into the candidates stage 3 takes (selector/select.h): one reason
 * per signal, the fallback's reason on every test when the change cannot be traced, `added` for
 * a test the base catalog lacks (spec drift), and the scanner's facts for kernel cases. */
#ifndef RELAY_SELECT_FRONT_H
#define RELAY_SELECT_FRONT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"
#include "selector/select.h"

struct front {
	struct catalog_cache *cache;
	/* Set by a caller that keeps `cache` between runs (the daemon's workers): front_catalogs()
	 * then uses it as it is and front_finish() leaves it alone. */
	bool cache_borrowed;
	struct catalog *head, *base;
	struct impact_result *impact;
	struct select_candidate *cands;
	struct select_reason *reasons; /* all candidates' reasons, in one array */
	size_t n_cands, n_reasons;
	const char **ids; /* every head test id, for stale drift */
};

/* Builds the catalogs of `head` and `base` (NULL: the empty tree) of the repository, through a
 * blob cache backed by `cache_dir` when not NULL (selector_catalog_cache_set_dir). */
int front_catalogs(struct front *f, const char *repo_dir, const char *base, const char *head,
		   const char *cache_dir);

/* The catalogs of both sides of a unified diff, each HEAD's catalog with the changed files set
 * to the blobs the diff's `index` lines name on that side (see select_front.c). A file whose new
 * blob the repository lacks (or a diff without `index` lines) keeps HEAD's version in the head
 * and is left out of the base, so every test of it counts as new: the safe side. */
int front_catalogs_diff(struct front *f, const char *repo_dir, const struct change_set *cs,
			const char *cache_dir);

/* Runs stage 2 on the change set and makes the candidates. */
int front_impact(struct front *f, const struct change_set *cs);

/* Expands every test the report schedules into its kernel cases, in rank order (the cases point
 * into `set`, which must outlive `list`). `tier` NULL: any. */
struct spec_set;
struct spec_resolver;
struct spec_case_list;
int front_expand_scheduled(const struct front *f, const struct select_report *rep,
			   const struct spec_set *set, const struct spec_resolver *r,
			   const char *tier, struct spec_case_list *list);

void front_finish(struct front *f);

/* --history FILE (`select` and `run`): {"test id": {"failed_before": bool, "flaky": bool,
 * "mean_seconds": N}}, at most SELECT_HISTORY_MAX bytes, sorted for lookup. The ids point into
 * `*json`. The caller starts with *json NULL and h empty, keeps both as long as the history is
 * used, then json_decref()s *json and frees h->v, after an error too. */
int front_history_load(const char *path, json_t **json, struct select_history *h);

#endif
