/* The funnel: what spyre-ci is for, as one library. A change of upstream (a range of its git
 * history, or a unified diff) and torch-spyre's specs go in; the four stages of the selector
 * narrow the upstream tests to those the change can affect, each with its reasons (changes ->
 * impact -> spec eligibility -> rank and budget); stage 3 expands the eligible tests into kernel
 * cases once; the scheduled tests' cases run on the emulator in the executors' process pool; the
 * results become the report files a CI dashboard reads (junit.xml, results.jsonl,
 * summary.json) and the messages its outbox sends.
 *
 * Both front-ends are callers of it and neither reimplements a step: the CLI's `select`, `run`
 * and `report` once per command, the daemon's workers once per job with the specs and the
 * selector's cache kept between jobs. What crosses this header is the lower libraries' plain
 * structures (select.h's report, cases.h's cases, the executors' results), so a caller prints
 * or stores them as it likes.
 *
 *   funnel_specs_load ─┐
 *   struct funnel_change ─▶ funnel_select ─▶ struct funnel_selection (report + cases)
 *   funnel_cache (kept) ─┘                          │ cases of the scheduled tests, in rank
 *                                                   ▼ order
 *                          funnel_run ─▶ struct funnel_results ─▶ funnel_results_write (DIR)
 *                                                   ▼
 *                          funnel_report_queue (DIR's job.json + results.jsonl) ─▶ outbox */
#ifndef FUNNEL_FUNNEL_H
#define FUNNEL_FUNNEL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dashboard-client/encode.h"
#include "dashboard-client/outbox.h"
#include "executors/pool.h"
#include "executors/report.h"
#include "executors/shard.h"
#include "selector/select.h"
#include "testspecs/cases.h"
#include "testspecs/spec.h"

/* ---- the specs ---- */

/* A spec set with the resolver built on it and stale drift's memo bound to both: valid only
 * together, so they live and die together. */
struct funnel_specs {
	struct spec_set *set;
	struct spec_resolver *resolver;
	struct select_drift_memo *memo;
};

struct funnel_specs_opts {
	const char *const *paths; /* spec files or directories of them */
	size_t n_paths;
	/* With no path: `default_repo`/spyre/specs when it exists, else ERR_NOTFOUND saying so.
	 * NULL: no default. */
	const char *default_repo;
	const char *torch_root;       /* ${TORCH_ROOT} in spec paths; NULL: not resolved */
	const char *device_root;      /* ${TORCH_DEVICE_ROOT}; NULL: not resolved */
	struct spec_diag_list *diags; /* what the loader found, or NULL */
	const char *what; /* how errors name a path: "--specs" ("--specs X: ..."); NULL: "specs" */
};

/* Loads every path into one set (a bad file is an error naming it), builds the resolver and
 * the memo. 0, ERR_INVAL or ERR_NOTFOUND for bad input, or another negative code. */
int funnel_specs_load(struct funnel_specs **out, const struct funnel_specs_opts *o);
void funnel_specs_destroy(struct funnel_specs *s);

/* ---- a change ---- */

struct funnel_change {
	const char *repo; /* the upstream repository: a work tree or a git directory */
	const char *base; /* a revision, or NULL: the empty tree (a root commit) */
	const char *head; /* a revision */
	/* Instead of base and head: a unified diff (git's format) read from this file, "-" for
	 * standard input, at most SELECT_DIFF_INPUT_MAX bytes. Both sides are then the
	 * repository's HEAD with the blobs the diff's `index` lines name; a file whose new blob
	 * the repository lacks counts whole (every test of it new: the safe side). */
	const char *diff_path;
};

/* ---- what selections keep between them ---- */

/* The selector's blob and catalog cache (selector/catalog.h): exact across selections of the
 * same repository, so a long-running caller keeps one and each later selection reads only
 * what changed. `dir` non-NULL keeps the scanned blobs there too, for the next process. */
struct funnel_cache;
int funnel_cache_create(struct funnel_cache **out, const char *dir);
void funnel_cache_destroy(struct funnel_cache *c);

/* ---- the selection ---- */

enum funnel_step {
	FUNNEL_STEP_CHANGES = 1, /* stage 1 is done: the change set is read */
	FUNNEL_STEP_IMPACT,      /* stage 2 is done: the candidates are known */
};

struct funnel_select_opts {
	const char *tier;                     /* resolve the specs for this label; NULL: any */
	struct select_budget budget;          /* stage 4's cut; kind NONE: none */
	size_t shards;                        /* stage 4's shard plan; 0: none */
	const struct select_history *history; /* NULL: none */
	bool variants; /* decide each candidate's variants on its own (for --explain) */
	/* Called after the steps above; a negative return ends the selection with that code (the
	 * daemon checks its lease there). NULL: never. */
	int (*checkpoint)(void *ctx, enum funnel_step step);
	void *checkpoint_ctx;
	/* Now and then during long steps (stage 3 on a fallback). NULL: never. */
	void (*progress)(void *ctx, const char *what, size_t done, size_t total);
	void *progress_ctx;
};

struct funnel_selection {
	/* The four stages: counts in and out, every candidate with its reasons and the stage it
	 * reached, spec drift, the fallback, estimates, shards, and (rep.cases) every eligible
	 * test's kernel cases as stage 3 expanded them. */
	struct select_report rep;
	/* The scheduled tests' kernel cases in rank order: pointers into rep.cases. */
	const struct spec_case **cases;
	size_t n_cases;
};

/* Runs the four stages on `ch` with `specs` (which must outlive the selection: its cases point
 * into them). `cache` is borrowed; NULL: a cache of the selection's own, dropped at its end.
 * Returns 0, ERR_INVAL or ERR_NOTFOUND for bad input (an unknown revision, a malformed diff), a
 * checkpoint's code, or another negative code; the selection is then empty but must still be
 * finished. */
int funnel_select(struct funnel_selection *out, const struct funnel_change *ch,
		  struct funnel_specs *specs, struct funnel_cache *cache,
		  const struct funnel_select_opts *o);
void funnel_selection_finish(struct funnel_selection *sel);

/* ---- named tests, without a change ---- */

/* Upstream tests at one revision taken straight to stage 3, with no change and no ranking: each
 * resolved and expanded into kernel cases as funnel_select's stage 3 takes a candidate (the
 * revision's catalog says which ops its @ops list runs and gives their OpInfo entries, its test
 * ids feed the resolver's variant rule), so that `specs list --upstream` and `specs explain
 * --upstream` show a test the cases `select` and `run` give it. */
struct funnel_tests {
	const char *repo; /* the upstream repository: a work tree or a git directory */
	const char *rev;  /* a revision; NULL: HEAD */
	/* These ids, each once (borrowed); NULL: every test of the revision's catalog. */
	const char *const *ids;
	size_t n_ids;
	const char *tier; /* resolve the specs for this label; NULL: any */
	/* Without a cache given: keep the scanned files in this directory too, as
	 * funnel_cache_create does (NULL: in memory only). */
	const char *cache_dir;
};

struct funnel_expansion {
	/* Stage 3's part of a report: the tests of the revision asked for, in the order asked
	 * (the catalog's without ids), each decided (fate SELECT_ELIGIBLE, or SELECT_IMPACTED
	 * when the specs refuse it) with its cases at rep.cases.v[case_first ..]; stale drift
	 * (plain spec names that no test of the revision matches) in rep.drift. */
	struct select_report rep;
	/* The ids asked for that are no test of the revision (the caller's pointers). */
	const char **absent;
	size_t n_absent;
	/* The revision's catalog (its op database, for explanations); it lives until the
	 * expansion is finished, and needs the cache it was built with. */
	struct catalog *catalog;
	struct funnel_cache *own_cache_; /* private: the cache made when none was given */
};

/* Expands `t`'s tests with `specs` (which must outlive the expansion: its cases point into
 * them). `cache` is borrowed and must outlive the expansion; NULL: one of its own. 0,
 * ERR_NOTFOUND or ERR_INVAL for bad input (a revision that does not resolve, a directory that
 * is no repository), or another negative code; the expansion must be finished either way. */
int funnel_tests_expand(struct funnel_expansion *out, const struct funnel_tests *t,
			struct funnel_specs *specs, struct funnel_cache *cache);
void funnel_expansion_finish(struct funnel_expansion *x);
/* spec_resolve_opts.is_test over the expansion's catalog (ctx: the expansion), for a caller
 * that resolves one of its tests itself (explain prints the decision): whether `id` is a test
 * of the revision, as stage 3's variant rule asks it. */
int funnel_expansion_is_test(void *ctx, const char *id);

/* Every case the specs give, no selection (the nightly run): each entry's concrete test ids and
 * its patterns' own cases (executors/collect.h), into `list`, which points into `specs`. */
int funnel_all_cases(struct spec_case_list *list, const struct funnel_specs *specs,
		     const char *tier);

/* ---- the run ---- */

struct funnel_run_opts {
	int jobs;           /* worker processes; <= 0: the number of cores */
	double timeout_s;   /* per case; <= 0: the executors' default */
	uint64_t mem_bytes; /* address-space limit of a worker; 0: the executors' default */
	int retries;        /* reruns of a failed case: 0 or 1 */
	/* The adapter table: this file, else adapters/adapters.yaml beside the first of
	 * spec_paths that has one, else none. */
	const char *adapters_file;
	const char *const *spec_paths;
	size_t n_spec_paths;
	/* Only shard shard_index of shard_count (1-based; 0: every case), longest first by
	 * `durations` (recorded seconds per test id), else SELECT_CASE_SECONDS a case. */
	int shard_index, shard_count;
	const struct exec_duration *durations;
	size_t n_durations;
	exec_runner_fn runner; /* NULL: the executors' own (tests inject slow or faulty ones) */
	void *runner_ctx;
	/* The program each worker execs (executors/pool.h: worker_exe), NULL: forks only. A
	 * front-end whose main answers EXEC_WORKER_ARG passes "/proc/self/exe". */
	const char *worker_exe;
	volatile sig_atomic_t *stop; /* a stop request ends the run; NULL: never */
	/* Before the first case, with the cases this run will run (after the shard plan); then
	 * after each result. NULL: not called. Both get progress_ctx. */
	void (*on_start)(void *ctx, size_t n_cases);
	void (*progress)(void *ctx, const struct exec_progress *p);
	void *progress_ctx;
};

/* What a run produced: the cases it ran (this shard's), each one's result at its index. */
struct funnel_results {
	struct exec_case *cases;
	struct exec_result *res;
	size_t n;
	struct exec_summary summary; /* of res (EXEC_NOT_RUN counts the cases a stop left) */
	bool stopped;                /* a stop request ended the run first */
};

/* Runs `n` cases (pointers, e.g. funnel_selection.cases). 0 (every case has a result, or the
 * run was stopped: out->stopped), or a negative code before any case ran (a bad adapter
 * table, fork). `out` must be finished either way. */
int funnel_run(struct funnel_results *out, const struct spec_case *const *cases, size_t n,
	       const struct funnel_run_opts *o);
/* junit.xml, results.jsonl and summary.json in `dir` (made when missing), each written
 * atomically. 0 or ERR_IO / ERR_NOMEM / ERR_LIMIT naming the path. */
int funnel_results_write(const struct funnel_results *r, const char *dir);
void funnel_results_finish(struct funnel_results *r);

/* ---- the dashboard ---- */

/* A job's results directory as the dashboard hears of it: DIR/job.json (the job's identity,
 * docs/report.md) and, when `with_results`, DIR/results.jsonl. Only the messages whose status
 * is in `statuses` (a mask of 1u << enum dc_status; 0: every one) are taken; `conclusion`,
 * when not NULL, replaces the job's (a job that failed before any result: "failure");
 * `completed_at`, when not NULL, replaces its workflow.completed_at. */
struct funnel_report {
	const char *dir;
	bool with_results;
	unsigned statuses;
	const char *conclusion;
	const char *completed_at;
};
#define FUNNEL_STATUS(s) (1u << (s))

/* The messages in delivery order, for `format` (each with its idempotency key). The caller
 * finishes each (dc_message_finish) and frees the array. 0, or ERR_INVAL naming the file and
 * what is wrong in it, ERR_IO, ERR_NOMEM. */
int funnel_report_messages(struct dc_message **out, size_t *n, const struct funnel_report *r,
			   enum dc_format format);
/* The same messages queued for `target` in one durable step; a message already there keeps
 * its place (the outbox is idempotent by key). *added counts the new ones (may be NULL). */
int funnel_report_queue(struct dc_outbox *ob, const char *target, enum dc_format format,
			const struct funnel_report *r, size_t *added);

/* ---- history ---- */

/* A --history file: {"test id": {"failed_before": bool, "flaky": bool, "mean_seconds": N}},
 * at most SELECT_HISTORY_MAX bytes: stage 4's history (sorted for lookup) and the shards'
 * recorded durations, both pointing into `json`. */
struct funnel_history {
	json_t *json;
	struct select_history h;
	struct exec_duration *durations;
	size_t n_durations;
};
/* `path` NULL: an empty history. A bad file is ERR_INVAL naming it and the entry. */
int funnel_history_load(struct funnel_history *out, const char *path);
void funnel_history_finish(struct funnel_history *h);

#endif
