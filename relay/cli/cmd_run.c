/* `spyre-ci run`: kernel cases on the emulator in the executors' process pool, with reports CI
 * dashboards read. The cases come from a selection (--base/--head or --diff: the four stages of
 * `select`, then every scheduled test expanded into its kernel cases) or from every entry of
 * the specs (--all: the nightly run). Then --shard, the pool, and junit.xml, results.jsonl and
 * summary.json in --out. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/num.h"
#include "funnel/funnel.h"
#include "run_cmd.h"
#include "specs_cmd.h"

#define RUN_SPECS_ARGS_MAX  64
#define RUN_PROGRESS_LINE_S 5.0 /* seconds between progress lines when stderr is no terminal */

static volatile sig_atomic_t stop_requested;

static void handle_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const struct cli_command *self(void)
{
	return cli_find("run");
}

/* ---- arguments ---- */

static int parse_number_opt(struct run_args *a, const char *opt, const char *v)
{
	if (!strcmp(opt, "--jobs"))
		return num_parse_int(&a->jobs, v, 1, EXEC_JOBS_MAX);
	if (!strcmp(opt, "--timeout"))
		return num_parse_double(&a->timeout_s, v, 0.001, 86400);
	if (!strcmp(opt, "--mem"))
		return num_parse_bytes(&a->mem_bytes, v, (uint64_t)1 << 44);
	if (!strcmp(opt, "--retries"))
		return num_parse_int(&a->retries, v, 0, 1);
	if (!strcmp(opt, "--shard"))
		return exec_shard_parse(v, &a->shard_index, &a->shard_count);
	if (!strcmp(opt, "--budget"))
		return selector_budget_parse(&a->budget, v);
	if (!strcmp(opt, "--format"))
		return dc_format_parse(&a->format, v);
	if (!strcmp(opt, "--post-horizon"))
		return num_parse_i64(&a->post_horizon_s, v, 0, 7 * 86400);
	return err_set(ERR_INVAL, "unknown option %s", opt);
}

static int parse_value(struct run_args *a, const char *opt, const char *v)
{
	const char **slot = !strcmp(opt, "--repo")         ? &a->repo
			    : !strcmp(opt, "--base")       ? &a->base
			    : !strcmp(opt, "--head")       ? &a->head
			    : !strcmp(opt, "--diff")       ? &a->diff
			    : !strcmp(opt, "--out")        ? &a->out
			    : !strcmp(opt, "--tier")       ? &a->tier
			    : !strcmp(opt, "--history")    ? &a->history
			    : !strcmp(opt, "--adapters")   ? &a->adapters
			    : !strcmp(opt, "--cache")      ? &a->cache
			    : !strcmp(opt, "--post")       ? &a->post
			    : !strcmp(opt, "--token-file") ? &a->token_file
			    : !strcmp(opt, "--job")        ? &a->job
							   : NULL;
	if (slot) {
		*slot = v;
		return CLI_OK;
	}
	if (!strcmp(opt, "--specs")) {
		if (a->n_specs == RUN_SPECS_ARGS_MAX)
			return cli_usage_error(self(), "more than %d --specs", RUN_SPECS_ARGS_MAX);
		a->specs[a->n_specs++] = v;
		return CLI_OK;
	}
	if (parse_number_opt(a, opt, v) != 0)
		return cli_usage_error(self(), "%s: %s", opt, err_last());
	return CLI_OK;
}

static int check_args(const struct run_args *a)
{
	if (!a->post != !a->token_file)
		return cli_usage_error(self(), "--post URL and --token-file FILE go together");
	if (a->job && !a->post)
		return cli_usage_error(self(), "--job is the job.json of --post");
	if (a->all) {
		if (a->base || a->head || a->diff)
			return cli_usage_error(self(), "--all excludes --base, --head and --diff");
		if (!a->n_specs)
			return cli_usage_error(self(), "--all needs --specs FILE|DIR");
		return CLI_OK;
	}
	if (!a->repo)
		return cli_usage_error(self(), "--repo DIR is required (or --all --specs ...)");
	if (a->diff && (a->base || a->head))
		return cli_usage_error(self(), "--diff excludes --base and --head");
	if (!a->diff && (!a->base || !a->head))
		return cli_usage_error(self(),
				       "give --base REV --head REV, --diff FILE|-, or --all");
	return CLI_OK;
}

static int parse_args(struct run_args *a, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all")) {
			a->all = 1;
			continue;
		}
		if (!strcmp(argv[i], "--no-progress")) {
			a->no_progress = 1;
			continue;
		}
		if (strncmp(argv[i], "--", 2) != 0)
			return cli_usage_error(self(), "unexpected argument '%s'", argv[i]);
		if (i + 1 >= argc)
			return cli_usage_error(self(), "%s needs a value", argv[i]);
		int rc = parse_value(a, argv[i], argv[i + 1]);
		if (rc != CLI_OK)
			return rc;
		i++;
	}
	return check_args(a);
}

/* ---- progress ---- */

struct progress {
	const struct run_args *a;
	bool tty;
	double last_line;
};

static void show_progress(void *ctx, const struct exec_progress *p)
{
	struct progress *pr = ctx;
	double rate = p->elapsed_s > 0 ? (double)p->done / p->elapsed_s : 0;
	double left = rate > 0 ? (double)(p->total - p->done) / rate : 0;
	if (pr->tty) {
		int width = 30, fill = p->total ? (int)((double)p->done / p->total * width) : width;
		fprintf(stderr, "\r[%.*s%*s] %zu/%zu ok %zu bad %zu %.0f/s %.0fs left\033[K", fill,
			"##############################", width - fill, "", p->done, p->total,
			p->ok, p->bad, rate, left);
		if (p->done == p->total)
			fprintf(stderr, "\r\033[K");
	} else if (p->elapsed_s - pr->last_line >= RUN_PROGRESS_LINE_S || p->done == p->total) {
		fprintf(stderr,
			"spyre-ci run: %zu/%zu cases, %zu ok, %zu bad, %.0f/s, %.0f s left\n",
			p->done, p->total, p->ok, p->bad, rate, left);
		pr->last_line = p->elapsed_s;
	}
	fflush(stderr);
}

/* ---- the run ---- */

static void on_start(void *ctx, size_t n)
{
	const struct run_args *a = ((struct progress *)ctx)->a;
	fprintf(stderr, "spyre-ci run: %zu kernel cases%s\n", n,
		a->shard_count ? " in this shard" : "");
}

/* Runs the cases, writes the reports, and posts them when asked. 0 every mandatory case
 * passed, 1 one did not (or the run was stopped), RUN_POST_UNDELIVERED, or a negative code. */
static int execute(const struct run_args *a, const struct spec_case *const *cases, size_t n,
		   const struct funnel_history *hist)
{
	struct progress pr = { .a = a, .tty = isatty(STDERR_FILENO) };
	struct funnel_run_opts o = {
		.jobs = a->jobs,
		.timeout_s = a->timeout_s,
		.mem_bytes = a->mem_bytes,
		.retries = a->retries,
		.adapters_file = a->adapters,
		.spec_paths = a->specs,
		.n_spec_paths = a->n_specs,
		.shard_index = a->shard_index,
		.shard_count = a->shard_count,
		.durations = hist->durations,
		.n_durations = hist->n_durations,
		.worker_exe = "/proc/self/exe", /* the same workers as the daemon's */
		.stop = &stop_requested,
		.on_start = on_start,
		.progress = a->no_progress ? NULL : show_progress,
		.progress_ctx = &pr,
	};
	struct sigaction sa = { .sa_handler = handle_stop }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct funnel_results res = { 0 };
	struct run_post *post = NULL;
	int rc = a->post ? run__post_begin(&post, a, &stop_requested) : 0;
	if (!rc)
		rc = funnel_run(&res, cases, n, &o);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc < 0) {
		run__post_destroy(post);
		funnel_results_finish(&res);
		return rc;
	}
	int wrc = funnel_results_write(&res, a->out);
	exec_summary_print(stdout, &res.summary);
	if (res.stopped)
		fprintf(stderr,
			"spyre-ci run: stopped; the reports hold the %zu cases that "
			"finished\n",
			res.n - res.summary.count[EXEC_NOT_RUN]);
	size_t bad = res.summary.mandatory_bad;
	funnel_results_finish(&res);
	int prc = !wrc && post ? run__post_end(post) : 0;
	run__post_destroy(post);
	if (wrc)
		return wrc;
	if (prc)
		return prc;
	return bad ? 1 : 0;
}

static int execute_list(const struct run_args *a, const struct spec_case_list *l,
			const struct funnel_history *hist)
{
	const struct spec_case **v = calloc(l->n + 1, sizeof *v);
	if (!v)
		return err_set(ERR_NOMEM, "out of memory for %zu cases", l->n);
	for (size_t i = 0; i < l->n; i++)
		v[i] = &l->v[i];
	int rc = execute(a, v, l->n, hist);
	free(v);
	return rc;
}

/* The cases of a selection (the four stages of `select`) or of every spec entry (--all). */
static int run_cases(const struct run_args *a)
{
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct funnel_specs_opts so = { .paths = a->specs,
					.n_paths = a->n_specs,
					.default_repo = a->repo,
					.torch_root = a->repo,
					.diags = &diags,
					.what = "--specs" };
	struct funnel_specs *specs = NULL;
	struct funnel_cache *cache = NULL;
	struct funnel_history hist;
	struct funnel_selection sel = { 0 };
	struct spec_case_list all;
	testspecs_cases_init(&all);
	/* read without --shard too: a bad file is an error, not ignored */
	int rc = funnel_history_load(&hist, a->history);
	if (!rc)
		rc = funnel_specs_load(&specs, &so);
	specs_print_diags(stderr, &diags, false);
	testspecs_diags_finish(&diags);
	if (!rc && a->all) {
		rc = funnel_all_cases(&all, specs, a->tier);
		if (!rc)
			rc = execute_list(a, &all, &hist);
	} else if (!rc) {
		struct funnel_change ch = {
			.repo = a->repo, .base = a->base, .head = a->head, .diff_path = a->diff
		};
		struct funnel_select_opts o = { .tier = a->tier,
						.budget = a->budget,
						.history = &hist.h };
		rc = funnel_cache_create(&cache, a->cache);
		if (!rc)
			rc = funnel_select(&sel, &ch, specs, cache, &o);
		if (!rc)
			rc = execute(a, sel.cases, sel.n_cases, &hist);
	}
	funnel_selection_finish(&sel);
	testspecs_cases_finish(&all);
	funnel_cache_destroy(cache);
	funnel_specs_destroy(specs);
	funnel_history_finish(&hist);
	return rc;
}

static int exit_code(int rc)
{
	if (rc == 0 || rc == 1 || rc == RUN_POST_UNDELIVERED)
		return rc;
	fprintf(stderr, "spyre-ci run: %s\n", err_last());
	return rc == ERR_INVAL || rc == ERR_NOTFOUND ? CLI_USAGE : CLI_FAILED;
}

int cmd_run_main(int argc, char **argv)
{
	struct run_args a = { .out = "spyre-ci-results",
			      .retries = 1,
			      .format = DC_FORMAT_CRCR,
			      .post_horizon_s = 600 };
	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, self());
		return CLI_OK;
	}
	int code = parse_args(&a, argc, argv);
	if (code != CLI_OK)
		return code;
	stop_requested = 0;
	return exit_code(run_cases(&a));
}

const char cmd_run_summary[] =
    "run kernel cases on the emulator in a process pool and write JUnit, JSONL and a summary";

const char cmd_run_help[] =
    "Usage: spyre-ci run --repo DIR (--base REV --head REV | --diff FILE|-)\n"
    "                    [--specs FILE|DIR ...] [--tier LABEL] [--budget B] [--out DIR]\n"
    "                    [--jobs N] [--shard I/N] [--history FILE] [--timeout S] [--mem BYTES]\n"
    "                    [--retries 0|1] [--adapters FILE] [--cache DIR] [--no-progress]\n"
    "                    [--post URL --token-file FILE [--format crcr|hud] [--job FILE]\n"
    "                     [--post-horizon S]]\n"
    "       spyre-ci run --all --specs FILE|DIR ... [--repo DIR] [--tier LABEL] [...]\n"
    "\n"
    "Selects as `spyre-ci select` does (or, with --all, takes every case the specs give: the\n"
    "nightly run), expands the scheduled tests into kernel cases, and runs each in a pool of\n"
    "worker processes on the emulator: the float64 host reference, atol/rtol as the specs say,\n"
    "the outcome by the test's mode. A case that crashes its worker, never returns or writes\n"
    "garbage gets its own outcome (crashed, timed_out, error) and the run goes on. A failed case\n"
    "is run once more: a pass then is flaky. An op the emulator lacks runs through an adapter\n"
    "when the adapter table has one (compared with the original op's reference), else it is\n"
    "skipped with the reason.\n"
    "\n"
    "Options:\n"
    "  --repo DIR       the upstream git repository (specs paths: ${TORCH_ROOT} is DIR)\n"
    "  --base, --head   revisions; --diff FILE|- a unified diff instead (as in select)\n"
    "  --all            every case of the specs, no selection (needs --specs)\n"
    "  --specs PATH     spec file or directory, repeatable (default DIR/spyre/specs)\n"
    "  --tier LABEL     resolve the specs for this label\n"
    "  --budget B       N tests, Ns seconds or N% (as in select)\n"
    "  --out DIR        where junit.xml, results.jsonl, summary.json go (default\n"
    "                   spyre-ci-results); each is written atomically\n"
    "  --jobs N         worker processes (default: the number of cores)\n"
    "  --shard I/N      only shard I of N: tests longest first onto the least-loaded shard,\n"
    "                   by --history's mean_seconds, else 0.05 s per case\n"
    "  --history FILE   the selector's history JSON {\"ID\": {\"mean_seconds\": 1.5, ...}}:\n"
    "                   stage 4 ranks and budgets by it as in select, --shard plans by it\n"
    "  --timeout S      seconds one case may take before its worker is killed (default 120)\n"
    "  --mem BYTES      address-space limit of one worker, 512M, 8G (default 8G)\n"
    "  --retries 0|1    reruns of a failed, crashed or timed-out case (default 1)\n"
    "  --adapters FILE  the adapter table (default: adapters/adapters.yaml beside --specs)\n"
    "  --no-progress    no progress on stderr (a bar on a terminal, else a line every 5 s)\n"
    "  --post URL       post the CRCR callbacks (as `spyre-ci report` does): in_progress when\n"
    "                   execution starts, completed with the counts at the end; the run\n"
    "                   waits until both are delivered or dead-lettered. --out gets job.json\n"
    "                   and outbox.sqlite beside results.jsonl: a second run with the same\n"
    "                   --out is the same job and resumes (nothing delivered is sent again)\n"
    "  --token-file F   the token for --post: the file's one line (never printed)\n"
    "  --format F       crcr (default) or hud, as in `spyre-ci report`\n"
    "  --job FILE       job.json to report as (event_type, delivery_id, payload, workflow,\n"
    "                   hud: docs/report.md); default: a nightly (--all) or periodic job\n"
    "                   keyed by the head SHA of --repo, named spyre-ci-run\n"
    "  --post-horizon S retry a callback for up to S seconds (default 600; 0: one try)\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops the workers and still writes the reports of the cases\n"
    "that finished.\n"
    "\n"
    "Exit codes: 0 every mandatory case passed (xfails as expected); 1 a case failed, errored,\n"
    "crashed or timed out, or the run was stopped; 2 bad usage or bad input (a bad --job,\n"
    "token file or URL is found before any case runs); 3 with --post, the cases ran but a\n"
    "callback was dead-lettered (a 4xx such as 401: printed with the receiver's answer) or is\n"
    "still pending (stopped: run again with the same --out to resume).\n"
    "\n"
    "Examples:\n"
    "  spyre-ci run --all --specs testspecs/specs --jobs 2 --out /tmp/results\n"
    "  spyre-ci run --all --specs testspecs/specs --tier smoke --shard 1/4\n"
    "  spyre-ci run --repo /tmp/up --base HEAD~1 --head HEAD --out /tmp/results\n";
