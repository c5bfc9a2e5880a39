/* The history writer's state, shared by fixture_history.c (the edits) and fixture.c (the
 * driver, merges and the ground-truth lines). */
#ifndef SELECTOR_FIXTURE_HISTORY_H
#define SELECTOR_FIXTURE_HISTORY_H

#include <stdarg.h>

#include "fixture_int.h"

struct fx_hist {
	struct fx_gen *g;
	int kind, fallback;
	uint32_t index;    /* commits written so far: the clock of the next one */
	struct buf edited; /* JSON strings, comma-separated: what the commit edited */
	struct buf line;   /* the truth line being written */
	/* a side branch's commits, collected for the truth of its merge */
	struct fx_vec m_tests;
	struct fx_vec m_via; /* shape bits of m_tests, parallel */
	char **m_paths;
	uint32_t m_npaths, m_cappaths;
	struct buf m_edited;
	int m_fallback, m_all;
	size_t merges, fallbacks;
};

#define K_MERGE   (-1)
#define K_INITIAL (-2)
const char *fixture__kind_name(int kind); /* also K_MERGE, K_INITIAL */
int fixture__write_tests_jsonl(struct fx_gen *g, const char *path);
int fixture__hist_commit(struct fx_hist *h, const git_oid *parent, git_oid *out, int side);
int fixture__hist_truth(struct fx_hist *h, const git_oid *id, const git_oid *parents,
			size_t nparents);
int fixture__hist_merge_collect(struct fx_hist *h);

#endif
