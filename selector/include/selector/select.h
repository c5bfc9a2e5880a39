/* Stages 3 and 4 of the selector and the report they fill.
 *
 * Stage 2 hands over candidates (a test id, its reasons with scores, what the scanner knows of
 * it). Stage 3 resolves each against the specs (testspecs resolver), keeps the eligible ones
 * (mode != skip, dtypes and ops admitted) and expands them into kernel cases (testspecs cases),
 * and reports spec drift: new upstream tests that fall under a file's unlisted mode, and plain
 * spec names that match no test of the head catalog any more. Stage 4 sums the reasons' scores
 * with weights, boosts previously failed and penalises flaky tests, estimates each test's cost,
 * cuts by a budget (count, seconds or percent) that never drops the smoke set, and plans shards.
 *
 * The report keeps every candidate, also those that fell out, with the stage where they did and
 * why, so that `--explain TEST` can say every stage's decision. Its writers print the funnel
 * (`52,114 tests -> 6,020 impacted -> 3,977 eligible -> 3,977 scheduled (est. 212 s)`) and the
 * tests, as text or as JSON (`stages`, `tests`, `drift`, `fallback`). */
#ifndef SELECTOR_SELECT_H
#define SELECTOR_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "testspecs/cases.h"
#include "testspecs/resolve.h"

struct catalog;
#include "testspecs/spec.h"

#define SELECT_STAGES       4
#define SELECT_REASON_KIND  32  /* bytes of a reason kind, with its NUL */
#define SELECT_FALLBACK_MAX 256 /* bytes of the fallback reason */
#define SELECT_SHARDS_MAX   1024
#define SELECT_CASE_SECONDS 0.05 /* default cost of one kernel case */
#define SELECT_TEST_SECONDS 0.5  /* default cost of a test without kernel cases */

/* One signal of stage 2: kind (selector_impact_signal_name(): "test-edited", "test-module",
 * "opdb", "symbol", "native", "path-rule", "coverage", "message"; or "fallback"), its score and
 * a sentence for people. */
struct select_reason {
	char kind[SELECT_REASON_KIND];
	double score;
	char *text; /* owned */
};

/* What stage 2 hands to stage 3: borrowed, valid for the call. */
struct select_candidate {
	const char *id; /* path::Class::method, relative to the repository */
	const struct select_reason *reasons;
	size_t n_reasons;
	bool added;                  /* the test is new in this change (drift) */
	bool opinfo;                 /* @ops-parametrised */
	const char *const *body_ops; /* calls the scanner found in its body */
	size_t n_body_ops;
};

/* Stage 2's result (impact.h) as stage 3's candidates, in its order: one reason per signal (its
 * text borrowed from `r`), the fallback's reason on every test when the change could not be
 * traced, and `added` for a test of `head` that `base` lacks. `r`, `head` and `base` must
 * outlive the candidates. 0 or ERR_NOMEM. */
struct impact_result;
struct select_candidates {
	struct select_candidate *v;
	size_t n;
	struct select_reason *reasons; /* every candidate's, in one array */
	size_t n_reasons;
};
int selector_candidates_make(struct select_candidates *out, const struct impact_result *r,
			     const struct catalog *head, const struct catalog *base);
void selector_candidates_finish(struct select_candidates *c);

/* The last stage a test passed: IMPACT (a candidate that stage 3 dropped), ELIGIBLE (stage 4 cut
 * it) or SCHEDULED. */
enum select_fate { SELECT_IMPACTED = 2, SELECT_ELIGIBLE = 3, SELECT_SCHEDULED = 4 };

#define SELECT_VARIANTS_SHOWN 64

struct select_variant {
	char *name; /* the suffix after the test's name: "mean", "fn_name_amax"; owned */
	bool eligible;
	enum spec_mode mode;
	char *entry; /* "file:line" of the deciding entry, NULL for the unlisted mode; owned */
	char *why;   /* the resolver's reason; owned */
};

struct select_test {
	char *id; /* owned */
	struct select_reason *reasons;
	size_t n_reasons;
	bool added, smoke;
	enum select_fate fate;
	/* stage 3 */
	enum spec_mode mode;
	bool listed;
	char *spec_why;      /* the resolver's reason, owned */
	char *spec_entry;    /* "file:line" of the deciding entry, or NULL; owned */
	size_t kernel_cases; /* unsupported included */
	size_t kernel_unsupported;
	size_t case_first;     /* its cases: report.cases.v[case_first .. + kernel_cases) */
	const char *case_rule; /* testspecs_rule_name(), static */
	/* rule opinfo: the cases by where their shapes and dtypes came from, indexed by
	 * testspecs' enum spec_case_source (OpInfo sample shapes, OpInfo dtypes, default samples)
	 */
	size_t kernel_by_source[SPEC_SOURCE_COUNT];
	char *case_why; /* why no case came (rule not_mappable), or NULL; owned */
	/* stage 3, variant by variant (when the catalog was given): the first
	 * SELECT_VARIANTS_SHOWN of the catalog's variants of the test, each decided on its own;
	 * n_variants_all counts them all; variants_why says why the list is open or a superset. */
	struct select_variant *variants; /* owned */
	size_t n_variants, n_variants_all;
	bool variants_open;
	char *variants_why; /* owned */
	/* stage 4 */
	double score;
	double seconds; /* estimated cost */
	bool failed_before, flaky;
	size_t rank;      /* 1-based among eligible tests; 0 before stage 4 */
	int shard;        /* -1 when no plan */
	const char *why4; /* static: "smoke", "within budget", "over budget", "no budget" */
};

enum select_drift_kind {
	SELECT_DRIFT_UNLISTED = 1, /* a new upstream test that falls under an unlisted mode */
	SELECT_DRIFT_STALE,        /* a plain spec name that matches no upstream test */
};

struct select_drift {
	enum select_drift_kind kind;
	char *test;          /* the test id (UNLISTED) or the spec name (STALE); owned */
	char *where;         /* "specfile:line"; owned */
	enum spec_mode mode; /* UNLISTED: the mode it falls under */
};

struct select_stage {
	const char *name; /* "changes", "impact", "eligibility", "budget" */
	size_t in, out;
};

struct select_shard {
	double seconds;
	size_t n_tests;
};

struct select_report {
	struct select_stage stages[SELECT_STAGES];
	struct select_test *tests; /* every candidate; after stage 4 in rank order */
	size_t n_tests, cap_tests;
	struct select_drift *drift;
	size_t n_drift, cap_drift;
	bool fallback;
	char fallback_reason[SELECT_FALLBACK_MAX];
	size_t changed_files;
	double est_seconds;  /* of the scheduled tests */
	size_t kernel_cases; /* of the scheduled tests */
	/* Every eligible test's kernel cases as stage 3 expanded them (once, through
	 * selector_case_test_init), each test's in one run (select_test.case_first); they point
	 * into the spec set stage 3 was given, which must outlive the report. */
	struct spec_case_list cases;
	struct select_shard *shards;
	size_t n_shards;
};

/* ---- the report ---- */

/* Empty report with the four stage names and zero counts. */
void selector_report_init(struct select_report *rep);
void selector_report_finish(struct select_report *rep);
/* Stage 1 and 2 numbers: the head catalog's size, the changed files and the candidates. */
void selector_report_set_front(struct select_report *rep, size_t catalog_tests,
			       size_t changed_files, size_t candidates);
/* Marks the selection as the safe fallback. */
void selector_report_set_fallback(struct select_report *rep, const char *reason);
/* The test with this id, or NULL. Linear. */
const struct select_test *selector_report_find(const struct select_report *rep, const char *id);

/* ---- stage 3 ---- */

struct select_drift_memo;

struct select_stage3_opts {
	const char *tier;               /* spec label to resolve under; NULL: any */
	const char *const *catalog_ids; /* every test id at head, for stale drift; may be NULL */
	size_t n_catalog;
	/* Optional: the head catalog, for each candidate's variants (decided one by one, shown by
	 * --explain). NULL: no variants are looked at. */
	const struct catalog *catalog;
	/* Optional: the head catalog whose op database gives @ops tests their cases (each op's
	 * OpInfo shapes and dtypes, selector_opinfo_of). NULL: `catalog`'s; both NULL: the ops'
	 * default samples. */
	const struct catalog *opdb;
	/* Optional: what stale drift learnt of each id in earlier runs with the same specs and
	 * resolver (an id's resolution depends on nothing else), so that a run resolves only
	 * the ids it has not seen. NULL: every id is resolved. */
	struct select_drift_memo *drift_memo;
	const char *smoke_label; /* labels that make a test smoke; NULL: "smoke" */
	/* Called now and then with the items done of a step ("resolving candidates", "drift"). */
	void (*progress)(void *ctx, const char *what, size_t done, size_t total);
	void *progress_ctx;
};

/* What an upstream catalog tells kernel-case expansion about one test (spec_case_test's
 * opinfo_ctx): `cat` the catalog, `test` the test in it (NULL when it has none). */
struct catalog;
struct catalog_test;
struct selector_opdb {
	const struct catalog *cat;
	const struct catalog_test *test;
	void *ops_; /* private: the test's @ops variants as the catalog evaluates them, or NULL */
	char allowed_[160];  /* private: its @ops(allowed_dtypes=...), canonical names, or "" */
	char explicit_[160]; /* private: its @ops(dtypes=(torch.X, ...)), canonical names, or "" */
	char **list_;        /* private: the entries of its @ops list as evaluated, "name" or
			      * "name.variant", or NULL */
	size_t n_list_;
	char mode_; /* private: its @ops(dtypes=OpDTypes.X): 's' supported (the default), 'e'
		     * an explicit list, '1' any_one, 'c' any_common_cpu_cuda_one, 'n' none,
		     * 'u' unsupported or unsupported_backward, '?' not known */
};
/* Fills one for test id `id` (a catalog may be NULL: nothing known): 0 or ERR_NOMEM.
 * selector_opdb_finish() it after use. */
int selector_opdb_for(struct selector_opdb *o, const struct catalog *cat, const char *id);
void selector_opdb_finish(struct selector_opdb *o);
/* spec_case_test.opinfo_of with a struct selector_opdb as ctx: the op's entry
 * (selector_catalog_opinfo), also under the upstream name an emulator or call spelling maps to.
 * The `where` text lives until the next call in the thread. */
struct spec_opinfo;
int selector_opinfo_of(void *opdb, const char *op, struct spec_opinfo *out);
/* Why the test gives no kernel case whatever its ops (its @ops mode runs them only at dtypes
 * they do not support, its body runs no op of its list or only checks that the op raises),
 * or NULL. */
const char *selector_opdb_no_case_why(const struct selector_opdb *o);
/* spec_case_test.runs_op: whether the test's @ops list runs op: its OpInfo entry is one of the
 * variants the catalog evaluates the list to (selector_catalog_variants; a comprehension or
 * filter(lambda ...) included); -1 when the catalog has no such test or cannot tell (a list
 * not statically known). */
int selector_runs_op(void *opdb, const char *op);

/* What kernel-case expansion (testspecs_cases_expand) takes about one upstream test, made in
 * this one place for every caller: the specs' own guess (testspecs_case_test_from_specs, from
 * `d`, the test's decision, may be NULL), then the catalog's facts when it has the test (its
 * @ops set, the calls of its body, its ops' OpInfo entries through selector_opinfo_of and
 * selector_runs_op), else the candidate's when `c` is given; source_unread when neither `cat`
 * nor `c` is. `cat` and `c` may be NULL; `ropts` gives tier, device and is_test. The struct
 * refers to itself (ct.opinfo_ctx is &db): do not copy it; finish it after the expansion. */
struct selector_case_test {
	struct spec_case_test ct;
	struct selector_opdb db;
};
int selector_case_test_init(struct selector_case_test *x, const char *id, const struct catalog *cat,
			    const struct select_candidate *c, const struct spec_decision *d,
			    const struct spec_resolve_opts *ropts);
void selector_case_test_finish(struct selector_case_test *x);

/* Resolves the candidates, appends them to `rep` (eligible or not), expands the eligible ones
 * into kernel cases (kept in rep->cases), and records drift. Fills stage 3's in and out. Returns 0,
 * ERR_NOMEM, or the resolver's error naming the id. */
int selector_stage3_run(struct select_report *rep, const struct spec_set *set,
			const struct spec_resolver *resolver, const struct select_candidate *cands,
			size_t n_cands, const struct select_stage3_opts *opts);

/* A memo for stale drift bound to one spec set and its resolver (both must outlive it, and the
 * memo must be destroyed with them: it knows them by address; a run with another set or
 * resolver ignores it). Keeps at most SELECT_DRIFT_MEMO_MAX ids (common/limits.h; then it
 * starts again). Not thread-safe: one per worker. */
int selector_drift_memo_create(struct select_drift_memo **out, const struct spec_set *set,
			       const struct spec_resolver *resolver);
void selector_drift_memo_destroy(struct select_drift_memo *memo);
/* Ids resolved through the memo since it was created, and those found in it. */
void selector_drift_memo_counts(const struct select_drift_memo *memo, size_t *resolved,
				size_t *hits);

/* ---- stage 4 ---- */

struct select_weight {
	const char *kind;
	double weight;
};

struct select_config {
	const struct select_weight *weights; /* per reason kind; others weigh default_weight */
	size_t n_weights;
	double default_weight;
	double failed_boost; /* added to the score of a test that failed before */
	double flaky_factor; /* the score of a known-flaky test is multiplied by it */
	double case_seconds; /* cost of one kernel case without a recorded duration */
	double test_seconds; /* cost of a test without kernel cases or a recorded duration */
};

/* The defaults, by stage 2's signal names (selector_impact_signal_name): test-edited 4,
 * test-module 3, opdb 3, native 3, symbol 2, coverage 2, message 2, path-rule 1, history 1,
 * fallback 0.5, others 1; failed +2; flaky x0.5; 0.05 s a kernel case; 0.5 s a test without cases.
 */
void selector_config_default(struct select_config *cfg);

struct select_history_entry {
	const char *id;
	bool failed_before, flaky;
	double mean_seconds; /* 0: unknown */
};

/* Test history keyed by id; `v` sorted by id (selector_history_sort). */
struct select_history {
	struct select_history_entry *v;
	size_t n;
};
void selector_history_sort(struct select_history *h);
const struct select_history_entry *selector_history_find(const struct select_history *h,
							 const char *id);

enum select_budget_kind {
	SELECT_BUDGET_NONE = 0,
	SELECT_BUDGET_COUNT,
	SELECT_BUDGET_SECONDS,
	SELECT_BUDGET_PERCENT,
};

struct select_budget {
	enum select_budget_kind kind;
	double value;
};

/* "N" (tests), "Ns" (seconds), "N%" (of the eligible tests). ERR_INVAL otherwise. */
int selector_budget_parse(struct select_budget *out, const char *text);

/* Scores, ranks (score descending, then id ascending), costs and cuts the eligible tests of
 * `rep`, then plans `n_shards` shards (0: none). `cfg` and `hist` may be NULL (defaults, no
 * history). Fills stage 4 and the totals. ERR_INVAL for a bad shard count, ERR_NOMEM. */
int selector_stage4_run(struct select_report *rep, const struct select_config *cfg,
			const struct select_history *hist, const struct select_budget *budget,
			size_t n_shards);

/* ---- writers ---- */

/* The funnel and the scheduled tests with their reasons. 0 or ERR_IO. */
int selector_report_write_text(const struct select_report *rep, FILE *out);
/* The JSON object, one line, sorted keys. NEW allocation (free()), or NULL on ERR_NOMEM. */
char *selector_report_json(const struct select_report *rep);
/* Every stage's decision for one test (text). ERR_NOTFOUND when it was no candidate: the text
 * then says so too. */
int selector_report_explain(const struct select_report *rep, const char *id, FILE *out);
/* "52,114": `n` with thousands separators into `buf`. */
const char *selector_fmt_count(size_t n, char *buf, size_t size);

#endif
