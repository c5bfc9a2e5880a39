/* Stage 4, rank and budget: each eligible test's score is the weighted sum of its reasons'
 * scores, plus a boost when it failed before, times a factor when it is known to be flaky; the
 * tests are ranked by score, ties by id; each gets a cost (its recorded mean duration, else its
 * kernel cases at a default cost each, else a default per test); the budget keeps a prefix of
 * the ranking (count, seconds, or a percent of the eligible tests) and always the smoke set;
 * the shard plan puts the scheduled tests, longest first, onto the least-loaded worker. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/num.h"
#include "select_internal.h"

static const struct select_weight default_weights[] = {
	{ "test-edited", 4.0 }, { "test-module", 3.0 }, { "opdb", 3.0 },    { "native", 3.0 },
	{ "symbol", 2.0 },      { "coverage", 2.0 },    { "message", 2.0 }, { "path-rule", 1.0 },
	{ "history", 1.0 },     { "fallback", 0.5 },
};

void selector_config_default(struct select_config *cfg)
{
	*cfg = (struct select_config){
		.weights = default_weights,
		.n_weights = sizeof default_weights / sizeof default_weights[0],
		.default_weight = 1.0,
		.failed_boost = 2.0,
		.flaky_factor = 0.5,
		.case_seconds = SELECT_CASE_SECONDS,
		.test_seconds = SELECT_TEST_SECONDS,
	};
}

static int hist_cmp(const void *a, const void *b)
{
	return strcmp(((const struct select_history_entry *)a)->id,
		      ((const struct select_history_entry *)b)->id);
}

void selector_history_sort(struct select_history *h)
{
	if (h->n > 1)
		qsort(h->v, h->n, sizeof *h->v, hist_cmp);
}

const struct select_history_entry *selector_history_find(const struct select_history *h,
							 const char *id)
{
	if (!h || h->n == 0)
		return NULL;
	struct select_history_entry key = { .id = id };
	return bsearch(&key, h->v, h->n, sizeof *h->v, hist_cmp);
}

int selector_budget_parse(struct select_budget *out, const char *text)
{
	size_t len = text ? strlen(text) : 0;
	enum select_budget_kind kind = SELECT_BUDGET_COUNT;
	double max = 1e12;
	if (len > 0 && text[len - 1] == 's') {
		kind = SELECT_BUDGET_SECONDS;
		len--;
	} else if (len > 0 && text[len - 1] == '%') {
		kind = SELECT_BUDGET_PERCENT;
		max = 100.0;
		len--;
	}
	double v = 0;
	if (len == 0 || num_parse_doublen(&v, text, len, 0.0, max) < 0)
		return err_set(ERR_INVAL,
			       "budget '%s': want N (tests), Ns (seconds) or N%% (0-100)",
			       text ? text : "");
	if (kind == SELECT_BUDGET_COUNT && v != floor(v))
		return err_set(ERR_INVAL, "budget '%s': a count of tests is a whole number", text);
	*out = (struct select_budget){ kind, v };
	return 0;
}

static double weight_of(const struct select_config *cfg, const char *kind)
{
	for (size_t i = 0; i < cfg->n_weights; i++)
		if (strcmp(cfg->weights[i].kind, kind) == 0)
			return cfg->weights[i].weight;
	return cfg->default_weight;
}

static void score_one(struct select_test *t, const struct select_config *cfg,
		      const struct select_history *hist)
{
	double s = 0;
	for (size_t i = 0; i < t->n_reasons; i++)
		s += weight_of(cfg, t->reasons[i].kind) * t->reasons[i].score;
	const struct select_history_entry *h = selector_history_find(hist, t->id);
	t->failed_before = h && h->failed_before;
	t->flaky = h && h->flaky;
	if (t->failed_before)
		s += cfg->failed_boost;
	if (t->flaky)
		s *= cfg->flaky_factor;
	t->score = s;
	if (h && h->mean_seconds > 0)
		t->seconds = h->mean_seconds;
	else if (t->kernel_cases > 0)
		t->seconds = (double)t->kernel_cases * cfg->case_seconds;
	else
		t->seconds = cfg->test_seconds;
}

/* Eligible tests first, by score descending then id; the rest by id. */
static int rank_cmp(const void *pa, const void *pb)
{
	const struct select_test *a = pa, *b = pb;
	bool ea = a->fate >= SELECT_ELIGIBLE, eb = b->fate >= SELECT_ELIGIBLE;
	if (ea != eb)
		return ea ? -1 : 1;
	if (ea && a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return strcmp(a->id, b->id);
}

static size_t count_limit(const struct select_budget *b, size_t eligible)
{
	if (b->kind == SELECT_BUDGET_COUNT)
		return (size_t)b->value;
	/* percent: round up, so that 1% of 50 tests is one test, not none */
	return (size_t)ceil(b->value * (double)eligible / 100.0 - 1e-9);
}

/* Smoke tests first, whatever the budget; then a prefix of the ranking while it fits. */
static void apply_budget(struct select_report *rep, size_t eligible, const struct select_budget *b)
{
	size_t count = 0;
	double secs = 0;
	for (size_t i = 0; i < eligible; i++) {
		struct select_test *t = &rep->tests[i];
		if (t->smoke || b->kind == SELECT_BUDGET_NONE) {
			t->fate = SELECT_SCHEDULED;
			t->why4 = t->smoke ? "smoke set (always run)" : "no budget";
			count++;
			secs += t->seconds;
		}
	}
	bool full = false;
	size_t limit = b->kind == SELECT_BUDGET_SECONDS ? 0 : count_limit(b, eligible);
	for (size_t i = 0; i < eligible && b->kind != SELECT_BUDGET_NONE; i++) {
		struct select_test *t = &rep->tests[i];
		if (t->smoke)
			continue;
		if (!full)
			full = b->kind == SELECT_BUDGET_SECONDS
				   ? secs + t->seconds > b->value + 1e-9
				   : count >= limit;
		if (full) {
			t->why4 = "over budget";
			continue;
		}
		t->fate = SELECT_SCHEDULED;
		t->why4 = "within budget";
		count++;
		secs += t->seconds;
	}
}

static int shard_cmp(const void *pa, const void *pb)
{
	const struct select_test *a = *(const struct select_test *const *)pa;
	const struct select_test *b = *(const struct select_test *const *)pb;
	if (a->seconds != b->seconds)
		return a->seconds > b->seconds ? -1 : 1;
	return strcmp(a->id, b->id);
}

/* Longest first onto the least-loaded worker (the lowest index among equals). */
static int plan_shards(struct select_report *rep, size_t eligible, size_t n_shards)
{
	size_t n = 0;
	struct select_test **order = malloc((eligible ? eligible : 1) * sizeof *order);
	rep->shards = calloc(n_shards, sizeof *rep->shards);
	if (!order || !rep->shards) {
		free(order);
		return err_set(ERR_NOMEM, "stage 4: shard plan for %zu tests", eligible);
	}
	rep->n_shards = n_shards;
	for (size_t i = 0; i < eligible; i++)
		if (rep->tests[i].fate == SELECT_SCHEDULED)
			order[n++] = &rep->tests[i];
	if (n > 1)
		qsort(order, n, sizeof *order, shard_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t best = 0;
		for (size_t w = 1; w < n_shards; w++)
			if (rep->shards[w].seconds < rep->shards[best].seconds - 1e-12)
				best = w;
		order[i]->shard = (int)best;
		rep->shards[best].seconds += order[i]->seconds;
		rep->shards[best].n_tests++;
	}
	free(order);
	return 0;
}

int selector_stage4_run(struct select_report *rep, const struct select_config *cfg,
			const struct select_history *hist, const struct select_budget *budget,
			size_t n_shards)
{
	struct select_config dflt;
	struct select_budget none = { SELECT_BUDGET_NONE, 0 };
	if (n_shards > SELECT_SHARDS_MAX)
		return err_set(ERR_INVAL, "stage 4: %zu shards (at most %d)", n_shards,
			       SELECT_SHARDS_MAX);
	if (!cfg) {
		selector_config_default(&dflt);
		cfg = &dflt;
	}
	if (!budget)
		budget = &none;
	size_t eligible = 0;
	for (size_t i = 0; i < rep->n_tests; i++)
		if (rep->tests[i].fate >= SELECT_ELIGIBLE) {
			score_one(&rep->tests[i], cfg, hist);
			eligible++;
		}
	if (rep->n_tests > 1)
		qsort(rep->tests, rep->n_tests, sizeof *rep->tests, rank_cmp);
	for (size_t i = 0; i < eligible; i++)
		rep->tests[i].rank = i + 1;
	apply_budget(rep, eligible, budget);
	size_t scheduled = 0;
	rep->est_seconds = 0;
	rep->kernel_cases = 0;
	for (size_t i = 0; i < eligible; i++)
		if (rep->tests[i].fate == SELECT_SCHEDULED) {
			scheduled++;
			rep->est_seconds += rep->tests[i].seconds;
			rep->kernel_cases += rep->tests[i].kernel_cases;
		}
	rep->stages[3].in = eligible;
	rep->stages[3].out = scheduled;
	return n_shards ? plan_shards(rep, eligible, n_shards) : 0;
}
