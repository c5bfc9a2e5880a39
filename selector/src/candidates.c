/* Stage 2's result handed to stage 3 (select.h: selector_candidates_make): one reason per
 * signal, the fallback's reason on every test when the change cannot be traced, and `added`
 * for a test the base catalog lacks (spec drift). What the scanner knows of each test, stage 3
 * reads from the head catalog itself (selector_case_test_init). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "selector/catalog.h"
#include "selector/impact.h"
#include "selector/select.h"

void selector_candidates_finish(struct select_candidates *c)
{
	free(c->v);
	free(c->reasons);
	memset(c, 0, sizeof *c);
}

static void add_one(struct select_candidates *out, const struct impact_result *r,
		    const struct impact_candidate *ic, const struct catalog *head,
		    const struct catalog *base)
{
	struct select_candidate *c = &out->v[out->n++];
	struct select_reason *first = &out->reasons[out->n_reasons];
	c->id = ic->id;
	c->reasons = first;
	for (size_t k = 0; k < ic->n_reasons; k++) {
		struct select_reason *sr = &out->reasons[out->n_reasons++];
		snprintf(sr->kind, sizeof sr->kind, "%s",
			 selector_impact_signal_name(ic->reasons[k].signal));
		sr->score = ic->reasons[k].score;
		sr->text = ic->reasons[k].detail; /* borrowed from the impact result */
	}
	if (r->fallback) {
		struct select_reason *sr = &out->reasons[out->n_reasons++];
		snprintf(sr->kind, sizeof sr->kind, "fallback");
		sr->score = 1.0;
		sr->text = r->fallback_reason;
	}
	c->n_reasons = (size_t)(&out->reasons[out->n_reasons] - first);
	c->added = selector_catalog_test(head, c->id) && !selector_catalog_test(base, c->id);
}

int selector_candidates_make(struct select_candidates *out, const struct impact_result *r,
			     const struct catalog *head, const struct catalog *base)
{
	memset(out, 0, sizeof *out);
	size_t nr = 0;
	for (size_t i = 0; i < r->n_candidates; i++)
		nr += r->candidates[i].n_reasons + (r->fallback ? 1 : 0);
	out->v = calloc(r->n_candidates + 1, sizeof *out->v);
	out->reasons = calloc(nr + 1, sizeof *out->reasons);
	if (!out->v || !out->reasons) {
		selector_candidates_finish(out);
		return err_set(ERR_NOMEM, "stage 2: %zu candidates", r->n_candidates);
	}
	for (size_t i = 0; i < r->n_candidates; i++)
		add_one(out, r, &r->candidates[i], head, base);
	return 0;
}
