/* `spyre-ci select`: from an upstream change to the upstream tests worth running on Spyre, in
 * four stages (changes, impact, spec eligibility, rank and budget), with the funnel and a reason
 * for every test; --json for machines, --explain TEST for every stage's decision on one test,
 * --cases for the kernel cases `run` would run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/num.h"
#include "funnel/funnel.h"
#include "specs_cmd.h"

#define SELECT_SPECS_ARGS_MAX 64
#define PROGRESS_MIN          2000 /* items before a progress bar is worth drawing */

struct select_args {
	const char *repo, *base, *head, *diff, *explain, *tier, *history, *cache;
	const char *specs[SELECT_SPECS_ARGS_MAX];
	size_t n_specs;
	struct select_budget budget;
	size_t shards;
	int json, cases;
};

static const struct cli_command *self(void)
{
	return cli_find("select");
}

/* ---- arguments ---- */

static int parse_value(struct select_args *a, const char *opt, const char *v)
{
	if (!strcmp(opt, "--repo"))
		a->repo = v;
	else if (!strcmp(opt, "--base"))
		a->base = v;
	else if (!strcmp(opt, "--head"))
		a->head = v;
	else if (!strcmp(opt, "--diff"))
		a->diff = v;
	else if (!strcmp(opt, "--explain"))
		a->explain = v;
	else if (!strcmp(opt, "--tier"))
		a->tier = v;
	else if (!strcmp(opt, "--history"))
		a->history = v;
	else if (!strcmp(opt, "--cache"))
		a->cache = v;
	else if (!strcmp(opt, "--specs")) {
		if (a->n_specs == SELECT_SPECS_ARGS_MAX)
			return cli_usage_error(self(), "more than %d --specs",
					       SELECT_SPECS_ARGS_MAX);
		a->specs[a->n_specs++] = v;
	} else if (!strcmp(opt, "--budget")) {
		if (selector_budget_parse(&a->budget, v) < 0)
			return cli_usage_error(self(), "--budget: %s", err_last());
	} else if (!strcmp(opt, "--shards")) {
		int n;
		if (num_parse_int(&n, v, 1, SELECT_SHARDS_MAX) < 0)
			return cli_usage_error(self(), "--shards: %s", err_last());
		a->shards = (size_t)n;
	} else
		return cli_usage_error(self(), "unknown option %s", opt);
	return CLI_OK;
}

static int parse_args(struct select_args *a, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--cases")) {
			*(argv[i][2] == 'j' ? &a->json : &a->cases) = 1;
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
	if (!a->repo)
		return cli_usage_error(self(), "--repo DIR is required");
	if (a->diff && (a->base || a->head))
		return cli_usage_error(self(), "--diff excludes --base and --head");
	if (!a->diff && (!a->base || !a->head))
		return cli_usage_error(self(), "give --base REV --head REV, or --diff FILE|-");
	if (a->cases && (a->json || a->explain))
		return cli_usage_error(self(), "--cases prints instead of the report: it excludes "
					       "--json and --explain");
	return CLI_OK;
}

/* ---- progress ---- */

static void progress(void *ctx, const char *what, size_t done, size_t total)
{
	(void)ctx;
	if (total < PROGRESS_MIN)
		return;
	int width = 30, fill = (int)((double)done / (double)total * width);
	fprintf(stderr, "\r[%.*s%*s] %3d%% %s %zu/%zu", fill, "##############################",
		width - fill, "", (int)(100.0 * done / total), what, done, total);
	if (done == total)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* ---- the run ---- */

struct run {
	struct funnel_specs *specs;
	struct funnel_cache *cache;
	struct funnel_history history;
	struct funnel_selection sel;
};

static void print_diags(const struct spec_diag_list *diags)
{
	for (size_t i = 0; i < diags->n; i++) {
		char line[1024];
		testspecs_diag_format(&diags->v[i], line, sizeof line);
		fprintf(stderr, "spyre-ci select: %s\n", line);
	}
}

static int stages(struct run *r, const struct select_args *a, bool tty)
{
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct funnel_specs_opts so = { .paths = a->specs,
					.n_paths = a->n_specs,
					.default_repo = a->repo,
					.torch_root = a->repo,
					.diags = &diags,
					.what = "--specs" };
	int rc = funnel_history_load(&r->history, a->history);
	if (rc == 0)
		rc = funnel_specs_load(&r->specs, &so);
	print_diags(&diags);
	testspecs_diags_finish(&diags);
	if (rc == 0)
		rc = funnel_cache_create(&r->cache, a->cache);
	if (rc < 0)
		return rc;
	struct funnel_change ch = {
		.repo = a->repo, .base = a->base, .head = a->head, .diff_path = a->diff
	};
	struct funnel_select_opts o = {
		.tier = a->tier,
		.budget = a->budget,
		.shards = a->shards,
		.history = &r->history.h,
		.variants = a->explain != NULL,
		.progress = tty ? progress : NULL,
	};
	return funnel_select(&r->sel, &ch, r->specs, r->cache, &o);
}

/* --cases: the scheduled tests' kernel cases in rank order, one JSON object a line. */
static int print_cases(const struct funnel_selection *sel)
{
	for (size_t i = 0; i < sel->n_cases; i++) {
		if (cli_print_json(specs_case_json(sel->cases[i])) != CLI_OK)
			return CLI_FAILED;
	}
	return CLI_OK;
}

static int output(const struct run *r, const struct select_args *a)
{
	if (a->cases)
		return print_cases(&r->sel);
	if (a->explain) {
		int rc = selector_report_explain(&r->sel.rep, a->explain, stdout);
		return rc == 0 ? CLI_OK : CLI_FAILED;
	}
	if (a->json) {
		char *s = selector_report_json(&r->sel.rep);
		if (!s) {
			fprintf(stderr, "spyre-ci select: %s\n", err_last());
			return CLI_FAILED;
		}
		puts(s);
		free(s);
		return CLI_OK;
	}
	return selector_report_write_text(&r->sel.rep, stdout) == 0 ? CLI_OK : CLI_FAILED;
}

static int exit_code(int rc)
{
	fprintf(stderr, "spyre-ci select: %s\n", err_last());
	return rc == ERR_INVAL || rc == ERR_NOTFOUND ? CLI_USAGE : CLI_FAILED;
}

int cmd_select_main(int argc, char **argv)
{
	struct select_args a = { 0 };
	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, self());
		return CLI_OK;
	}
	int code = parse_args(&a, argc, argv);
	if (code != CLI_OK)
		return code;
	struct run r = { 0 };
	int rc = stages(&r, &a, isatty(STDERR_FILENO));
	code = rc < 0 ? exit_code(rc) : output(&r, &a);
	funnel_selection_finish(&r.sel);
	funnel_cache_destroy(r.cache);
	funnel_specs_destroy(r.specs);
	funnel_history_finish(&r.history);
	return code;
}

const char cmd_select_summary[] =
    "select the upstream tests a change can affect, with the funnel and a reason for each";

const char cmd_select_help[] =
    "Usage: spyre-ci select --repo DIR (--base REV --head REV | --diff FILE|-)\n"
    "                       [--specs FILE|DIR ...] [--tier LABEL] [--budget N|Ns|N%]\n"
    "                       [--history FILE] [--shards N] [--cache DIR] [--json]\n"
    "                       [--explain TEST | --cases]\n"
    "\n"
    "Four stages, each counted in and out:\n"
    "  1 changes      base..head of the repository through libgit2, or a unified diff\n"
    "  2 impact       the tests of the head catalog (test/.../test_*.py) the change reaches:\n"
    "                 tests edited, op database entries, callers of changed functions, native\n"
    "                 ops, tests named in the commit messages; each with a reason and a\n"
    "                 score; a change it cannot trace (build files, torch/__init__.py, a\n"
    "                 deleted module, a submodule, a file it cannot scan, C++ outside the\n"
    "                 kernels, anything but docs that no signal reads, a limit) selects\n"
    "                 every test and says so (the fallback)\n"
    "  3 eligibility  each candidate resolved against the specs: skip drops it, the others are\n"
    "                 expanded into kernel cases; spec drift is reported (new tests under an\n"
    "                 unlisted mode, spec names that match no test any more)\n"
    "  4 budget       scores weighted and summed, ranked (ties by id), cut by the budget; the\n"
    "                 smoke set (spec label smoke) is always kept; shards planned longest first\n"
    "\n"
    "Options:\n"
    "  --repo DIR       the upstream git repository (specs paths: ${TORCH_ROOT} is DIR)\n"
    "  --base, --head   revisions (branch, tag, id, HEAD~3)\n"
    "  --diff FILE|-    a unified diff (git's format) instead: both sides are DIR's HEAD with\n"
    "                   the blobs its `index` lines name (a file whose new blob DIR lacks\n"
    "                   counts whole); a format-patch mail's message counts as a commit\n"
    "                   message\n"
    "  --specs PATH     a spec file or a directory of them, repeatable (default DIR/spyre/specs)\n"
    "  --tier LABEL     resolve the specs for this label (smoke, regression, ...)\n"
    "  --budget B       N tests, Ns seconds, or N% of the eligible tests\n"
    "  --history FILE   JSON {\"ID\": {\"failed_before\": true, \"flaky\": false,\n"
    "                   \"mean_seconds\": 1.5}}: failed tests boosted, flaky ones halved,\n"
    "                   recorded durations as costs\n"
    "  --shards N       plan N shards (longest first onto the least-loaded worker)\n"
    "  --cache DIR      keep the scanned files in DIR, keyed by blob id: the next run\n"
    "                   re-scans only the files that changed (delete DIR to clear it)\n"
    "  --json           {stages: [4 x {name, in, out}], tests: [{id, score, reasons,\n"
    "                   kernel_cases[, case_sources]}], drift, fallback,\n"
    "                   estimate_seconds, changed_files[, shards][, escaped]}; a path\n"
    "                   that is not UTF-8 is written with \\ooo escapes, and escaped: true\n"
    "  --explain TEST   every stage's decision for one test id (path::Class::method)\n"
    "  --cases          instead of the report, the kernel cases of the scheduled tests in\n"
    "                   rank order (the cases `run` runs), one JSON object a line with the\n"
    "                   keys of a case of `spyre-ci specs list --json` (id, test, op, shapes,\n"
    "                   dtype, atol, rtol, mode, seed, rule, at)\n"
    "\n"
    "Text output: the funnel on one line, then the scheduled tests with their reasons:\n"
    "  52,114 tests -> 6,020 impacted -> 3,977 eligible -> 3,977 scheduled (est. 212 s)\n"
    "A progress bar is drawn on stderr when it is a terminal and the run is long.\n"
    "\n"
    "Exit codes: 0 selected (or explained); 1 the run failed (libgit2, I/O), or --explain's\n"
    "test was no candidate; 2 bad usage or bad input (unknown revision, malformed diff or\n"
    "specs).\n"
    "\n"
    "Examples:\n"
    "  spyre-ci fixture upstream --out /tmp/up --seed 1\n"
    "  spyre-ci select --repo /tmp/up --base HEAD~1 --head HEAD\n"
    "  spyre-ci select --repo /tmp/up --base HEAD~10 --head HEAD --budget 5% --shards 4 --json\n"
    "  git -C /tmp/up diff HEAD~1 | spyre-ci select --repo /tmp/up --diff -\n"
    "  spyre-ci select --repo /tmp/up --base HEAD~1 --head HEAD \\\n"
    "      --explain test/test_nn_0.py::TestNn0::test_fold_0\n"
    "  spyre-ci select --repo /tmp/up --base HEAD~1 --head HEAD --cases\n";
