/* Benchmark of the selector on a generated PyTorch-shaped upstream (fixture/fixture.h), each
 * figure beside `git diff --name-only` on the same range, run in the same process run (git is
 * spawned with an argv, no shell; without git the floors are skipped and said so):
 *   - a cold catalog build of the head tree (empty tree..HEAD for git);
 *   - a warm single-commit selection (stage 1, both catalogs through a cache that already holds
 *     their blobs, stages 2, 3 and 4) over the last first-parent commits: median and worst;
 *   - the whole history as one range (the first commit to HEAD), from a cold cache;
 *   - the blob cache: a second build at another revision scans only the changed blobs, in
 *     memory and through the on-disk cache (a second cache on the same directory);
 *   - the peak memory (getrusage ru_maxrss; the repository is generated in a child process so
 *     that the generator's memory is not counted).
 * Never asserts a time: exits 1 only when a figure is insane (no tests, no scans), 2 on bad
 * usage. --smoke: scale small. --repo DIR reuses a generated repository (with its working tree,
 * for spyre/specs). --json: one JSON object on stdout instead of the text. */
#include <ftw.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "fixture/fixture.h"
#include "git_floor.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"
#include "selector/select.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define WARM_COMMITS 15 /* single commits timed warm */
#define GIT_REPS     3  /* git runs per floor, the best kept */
#define EMPTY_TREE   "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

struct opts {
	const char *repo;
	enum fixture_scale scale;
	unsigned long long seed;
	int json, smoke;
};

struct env {
	const char *repo;
	char gitdir[4200];
	bool have_git;
	struct spec_set *specs;
	struct spec_resolver *resolver;
	struct select_drift_memo *memo; /* stale drift kept across runs (3b only), or NULL */
};

static void die(const char *what)
{
	const git_error *e = git_error_last();
	fprintf(stderr, "bench-select: %s: %s\n", what,
		err_last()[0] ? err_last()
		: e           ? e->message
			      : "");
	exit(1);
}

/* ---- git, the floor ---- */

/* `git --git-dir=... diff --name-only a b`: the best wall time of GIT_REPS runs in seconds and
 * the number of names in *names; -1 when git is missing. */
static double git_names(const struct env *e, const char *a, const char *b, size_t *names)
{
	const char *argv[] = { "git", e->gitdir, "diff", "--name-only", a, b, NULL };
	double best = 1e9;
	for (int rep = 0; rep < GIT_REPS; rep++) {
		double t = bench_git(argv, NULL, NULL, names);
		if (t == -1)
			return -1;
		if (t < 0)
			die("git diff --name-only failed");
		best = t < best ? t : best;
	}
	return best;
}

/* ---- the repository ---- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Generates the repository in a child process; returns its seconds. */
static double generate(const char *out, const struct opts *o)
{
	uint64_t t0 = clock_mono_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct fixture_opts fo = { .out = out, .scale = o->scale, .seed = o->seed };
		struct fixture_stats st;
		if (fixture_generate(&fo, &st) != 0) {
			fprintf(stderr, "bench-select: generate: %s\n", err_last());
			_exit(1);
		}
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("the generator failed");
	return clock_elapsed_s(t0, clock_mono_ns());
}

/* The first-parent chain from HEAD, newest first, into ids (at most cap); returns the count. */
static size_t first_parents(const char *repo_dir, char (*ids)[41], size_t cap, char *root,
			    size_t *all)
{
	git_repository *repo;
	git_revwalk *w;
	git_oid oid;
	if (git_repository_open(&repo, repo_dir) < 0 || git_revwalk_new(&w, repo) < 0 ||
	    git_revwalk_push_head(w) < 0)
		die("open the repository");
	git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL);
	size_t n = 0;
	*all = 0;
	while (git_revwalk_next(&oid, w) == 0) {
		(*all)++;
		git_oid_tostr(root, 41, &oid); /* the last one is the root */
	}
	git_revwalk_reset(w);
	git_revwalk_push_head(w);
	git_revwalk_simplify_first_parent(w);
	while (n < cap && git_revwalk_next(&oid, w) == 0)
		git_oid_tostr(ids[n++], 41, &oid);
	git_revwalk_free(w);
	git_repository_free(repo);
	return n;
}

static void load_specs(struct env *e)
{
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/spyre/specs", e->repo);
	struct spec_roots roots = { e->repo, NULL };
	struct spec_diag_list diags;
	struct spec_load_opts o = { .roots = &roots, .diags = &diags };
	testspecs_diags_init(&diags);
	if (testspecs_set_create(&e->specs) != 0 || testspecs_load_path(e->specs, dir, &o) != 0 ||
	    testspecs_resolver_create(&e->resolver, e->specs) != 0)
		die("the specs (spyre/specs of the repository's working tree)");
	testspecs_diags_finish(&diags);
}

/* ---- one selection ---- */

struct sel_out {
	size_t changed, candidates, eligible, scheduled, base_scans;
	bool fallback;
	double part[5]; /* seconds: stage 1, catalogs, stage 2, stage 3, stage 4 */
};

static const char *const part_names[5] = { "stage 1", "catalogs", "stage 2", "stage 3", "stage 4" };

/* Stage 1, both catalogs through `cache`, stages 2-4: what `spyre-ci select` does. */
static void select_range(const struct env *e, struct catalog_cache *cache, const char *base,
			 const char *head, struct sel_out *so)
{
	struct change_set *cs = NULL;
	struct catalog *head_cat = NULL, *base_cat = NULL;
	struct impact_result *impact = NULL;
	struct select_candidates cands;
	const char **ids;
	struct select_report rep;
	double part[5];
	uint64_t t = clock_mono_ns(), t1;
	selector_report_init(&rep);
	if (selector_changes_from_git(&cs, e->repo, base, head, NULL) != 0)
		die("stage 1");
	part[0] = clock_elapsed_s(t, t1 = clock_mono_ns());
	t = t1;
	if (selector_catalog_build(&head_cat, e->repo, head, cache) != 0)
		die("the head catalog");
	size_t before = selector_catalog_cache_scans(cache);
	if (selector_catalog_build(&base_cat, e->repo, base, cache) != 0)
		die("the base catalog");
	so->base_scans = selector_catalog_cache_scans(cache) - before;
	ids = malloc((head_cat->n_tests + 1) * sizeof *ids);
	if (!ids)
		die("out of memory");
	for (size_t i = 0; i < head_cat->n_tests; i++)
		ids[i] = head_cat->tests[i].id;
	part[1] = clock_elapsed_s(t, t1 = clock_mono_ns());
	t = t1;
	if (selector_impact_run(&impact, cs, base_cat, head_cat, NULL) < 0 ||
	    selector_candidates_make(&cands, impact, head_cat, base_cat) != 0)
		die("stage 2");
	part[2] = clock_elapsed_s(t, t1 = clock_mono_ns());
	t = t1;
	selector_report_set_front(&rep, head_cat->n_tests, cs->n_files, cands.n);
	if (impact->fallback)
		selector_report_set_fallback(&rep, impact->fallback_reason);
	struct select_stage3_opts o3 = { .catalog_ids = ids,
					 .n_catalog = head_cat->n_tests,
					 .opdb = head_cat,
					 .drift_memo = e->memo };
	if (selector_stage3_run(&rep, e->specs, e->resolver, cands.v, cands.n, &o3) != 0)
		die("stage 3");
	part[3] = clock_elapsed_s(t, t1 = clock_mono_ns());
	t = t1;
	if (selector_stage4_run(&rep, NULL, NULL, NULL, 0) != 0)
		die("stage 4");
	part[4] = clock_elapsed_s(t, clock_mono_ns());
	*so = (struct sel_out){ cs->n_files,       cands.n,        rep.stages[2].out,
				rep.stages[3].out, so->base_scans, rep.fallback };
	memcpy(so->part, part, sizeof part);
	selector_report_finish(&rep);
	selector_candidates_finish(&cands);
	free(ids);
	selector_impact_result_destroy(impact);
	selector_catalog_destroy(base_cat);
	selector_catalog_destroy(head_cat);
	selector_change_set_destroy(cs);
}

/* ---- output ---- */

struct figure {
	const char *name;
	double ours, git; /* seconds; git < 0: no floor */
	size_t git_names;
	double target;
};

static void print_figure(const struct figure *f, bool json, bool last)
{
	if (json) {
		printf("\"%s\": {\"seconds\": %.6f, \"git_seconds\": %.6f, \"git_names\": %zu, "
		       "\"ratio\": %.2f, \"target_seconds\": %g}%s",
		       f->name, f->ours, f->git, f->git_names, f->git > 0 ? f->ours / f->git : 0,
		       f->target, last ? "" : ", ");
		return;
	}
	printf("%-26s %9.1f ms (target < %g ms)", f->name, f->ours * 1e3, f->target * 1e3);
	if (f->git > 0)
		printf("  git diff --name-only: %7.1f ms, %zu names (ratio %.1f)\n", f->git * 1e3,
		       f->git_names, f->ours / f->git);
	else
		printf("  git diff --name-only: not measured (no git)\n");
}

static int parse_opts(struct opts *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--json"))
			o->json = 1;
		else if (!strcmp(argv[i], "--smoke"))
			o->smoke = 1, o->scale = FIXTURE_SMALL;
		else if (!strcmp(argv[i], "--repo") && v)
			o->repo = v, i++;
		else if (!strcmp(argv[i], "--seed") && v)
			o->seed = strtoull(v, NULL, 10), i++;
		else if (!strcmp(argv[i], "--scale") && v) {
			if (fixture_scale_parse(&o->scale, v) != 0)
				return -1;
			i++;
		} else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .scale = FIXTURE_PYTORCH, .seed = 7 };
	if (parse_opts(&o, argc, argv) != 0) {
		fprintf(stderr,
			"usage: bench-select [--repo DIR | --scale small|pytorch] [--seed N] "
			"[--json] [--smoke]\n");
		return 2;
	}
	char tmp[] = "/tmp/bench-select-XXXXXX", out[64];
	double gen_s = 0;
	if (!o.repo) {
		if (!mkdtemp(tmp))
			die("mkdtemp");
		snprintf(out, sizeof out, "%s/upstream", tmp);
		gen_s = generate(out, &o);
		o.repo = out;
	}
	git_libgit2_init();
	struct env e = { .repo = o.repo };
	snprintf(e.gitdir, sizeof e.gitdir, "--git-dir=%s/.git", o.repo);
	load_specs(&e);
	static char chain[WARM_COMMITS + 1][41];
	char root[41];
	size_t all, n_chain = first_parents(o.repo, chain, WARM_COMMITS + 1, root, &all);
	if (n_chain < 2)
		die("the history has fewer than two commits");
	const char *head = chain[0];

	/* 1. Cold catalog of the head tree. */
	struct catalog_cache *cache;
	struct catalog *cat;
	if (selector_catalog_cache_create(&cache, 0) != 0)
		die("cache");
	selector_catalog_cache_set_trees(cache, 0); /* 1-3: blobs cached, every tree walked */
	uint64_t t0 = clock_mono_ns();
	if (selector_catalog_build(&cat, o.repo, head, cache) != 0)
		die("the cold catalog");
	struct figure cold = { "cold catalog (HEAD tree)", clock_elapsed_s(t0, clock_mono_ns()) };
	cold.git = git_names(&e, EMPTY_TREE, head, &cold.git_names);
	cold.target = 10;
	e.have_git = cold.git >= 0;
	size_t files = cat->n_files, tests = cat->n_tests,
	       scans1 = selector_catalog_cache_scans(cache);
	selector_catalog_destroy(cat);

	/* 2. The blob cache: HEAD^ through the same cache. */
	t0 = clock_mono_ns();
	if (selector_catalog_build(&cat, o.repo, chain[1], cache) != 0)
		die("the second catalog");
	double second_s = clock_elapsed_s(t0, clock_mono_ns());
	size_t scans2 = selector_catalog_cache_scans(cache) - scans1, parent_names = 0;
	if (e.have_git)
		git_names(&e, chain[1], head, &parent_names);
	selector_catalog_destroy(cat);

	/* 3. Warm single commits: the cache first holds every tree's blobs (untimed). */
	for (size_t i = 2; i < n_chain; i++) {
		if (selector_catalog_build(&cat, o.repo, chain[i], cache) != 0)
			die("warming the cache");
		selector_catalog_destroy(cat);
	}
	double warm[WARM_COMMITS], floor[WARM_COMMITS];
	size_t floor_names[WARM_COMMITS] = { 0 };
	double warm_part[5] = { 0 };
	size_t n_warm = 0, warm_sched = 0, warm_fallback = 0, worst = 0;
	for (size_t i = 0; i + 1 < n_chain; i++, n_warm++) {
		struct sel_out so;
		t0 = clock_mono_ns();
		select_range(&e, cache, chain[i + 1], chain[i], &so);
		warm[n_warm] = clock_elapsed_s(t0, clock_mono_ns());
		floor[n_warm] =
		    e.have_git ? git_names(&e, chain[i + 1], chain[i], &floor_names[n_warm]) : -1;
		warm_sched += so.scheduled;
		warm_fallback += so.fallback;
		for (int k = 0; k < 5; k++)
			warm_part[k] += so.part[k];
		worst = warm[n_warm] > warm[worst] ? n_warm : worst;
	}
	/* The median of the ratios' parts: sort copies. */
	double ws[WARM_COMMITS], fs[WARM_COMMITS];
	memcpy(ws, warm, sizeof ws);
	memcpy(fs, floor, sizeof fs);
	for (size_t i = 0; i < n_warm; i++)
		for (size_t j = i + 1; j < n_warm; j++) {
			if (ws[j] < ws[i]) {
				double t = ws[i];
				ws[i] = ws[j], ws[j] = t;
			}
			if (fs[j] < fs[i]) {
				double t = fs[i];
				fs[i] = fs[j], fs[j] = t;
			}
		}
	struct figure wmed = { "warm commit (median)", ws[n_warm / 2], fs[n_warm / 2], 0, 0.1 };
	struct figure wmax = { "warm commit (worst)", warm[worst], floor[worst], floor_names[worst],
			       0.1 };

	/* 3b. Reuse, as the daemon selects: whole catalogs shared by tree id and stage 2's graph
	 * kept with its head catalog. The same commit twice (the second is timed), then the chain
	 * oldest first, each base catalog the previous selection's head (the oldest is untimed).
	 * Stale drift keeps what it resolved of each test id (with the same specs). */
	selector_catalog_cache_set_trees(cache, CATALOG_TREES_MAX);
	if (selector_drift_memo_create(&e.memo, e.specs, e.resolver) != 0)
		die("drift memo");
	struct sel_out so;
	double reuse_part[5] = { 0 }, seq[WARM_COMMITS] = { 0 };
	select_range(&e, cache, chain[1], chain[0], &so);
	t0 = clock_mono_ns();
	select_range(&e, cache, chain[1], chain[0], &so);
	struct figure same = { "same commit again (reuse)", clock_elapsed_s(t0, clock_mono_ns()),
			       floor[0], floor_names[0], 0.1 };
	double same_part[5];
	memcpy(same_part, so.part, sizeof same_part);
	size_t n_seq = 0, seq_worst = 0;
	select_range(&e, cache, chain[n_chain - 1], chain[n_chain - 2], &so);
	for (size_t i = n_chain - 2; i-- > 0; n_seq++) {
		t0 = clock_mono_ns();
		select_range(&e, cache, chain[i + 1], chain[i], &so);
		seq[n_seq] = clock_elapsed_s(t0, clock_mono_ns());
		for (int k = 0; k < 5; k++)
			reuse_part[k] += so.part[k];
		if (seq[n_seq] > seq[seq_worst]) /* the worst and its own git floor */
			seq_worst = n_seq;
	}
	double ss[WARM_COMMITS];
	memcpy(ss, seq, sizeof ss);
	for (size_t i = 0; i < n_seq; i++)
		for (size_t j = i + 1; j < n_seq; j++)
			if (ss[j] < ss[i]) {
				double t = ss[i];
				ss[i] = ss[j], ss[j] = t;
			}
	/* seq[k] selected chain[n_chain - 3 - k] over its parent, whose floor is floor[...]. */
	size_t wi = n_seq ? n_chain - 3 - seq_worst : 0;
	struct figure smed = { "next commit (reuse, median)", n_seq ? ss[n_seq / 2] : 0,
			       fs[n_warm / 2], 0, 0.1 };
	struct figure smax = { "next commit (reuse, worst)", n_seq ? seq[seq_worst] : 0, floor[wi],
			       floor_names[wi], 0.1 };
	size_t tree_hits = selector_catalog_cache_tree_hits(cache),
	       derived = selector_catalog_cache_derived(cache), memo_resolved, memo_hits,
	       ol_hits = selector_catalog_cache_oplist_hits(cache),
	       ol_kept = selector_catalog_cache_oplists_kept(cache);
	selector_drift_memo_counts(e.memo, &memo_resolved, &memo_hits);
	selector_drift_memo_destroy(e.memo);
	e.memo = NULL;
	selector_catalog_cache_destroy(cache);

	/* 5. The on-disk cache: one cache writes HEAD's blobs, a second one (another process, as
	 * far as the cache can tell) builds HEAD^ from the directory and scans only what changed.
	 */
	char disk_dir[300];
	snprintf(disk_dir, sizeof disk_dir, "%s/catalog-cache", o.repo == out ? tmp : "/tmp");
	if (o.repo != out)
		snprintf(disk_dir, sizeof disk_dir, "/tmp/bench-select-cache-%ld", (long)getpid());
	struct catalog_cache *c1, *c2;
	if (selector_catalog_cache_create(&c1, 0) != 0 ||
	    selector_catalog_cache_set_dir(c1, disk_dir) != 0)
		die("the disk cache");
	t0 = clock_mono_ns();
	if (selector_catalog_build(&cat, o.repo, head, c1) != 0)
		die("the disk-backed catalog");
	double disk_write_s = clock_elapsed_s(t0, clock_mono_ns());
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(c1);
	if (selector_catalog_cache_create(&c2, 0) != 0 ||
	    selector_catalog_cache_set_dir(c2, disk_dir) != 0)
		die("the disk cache");
	t0 = clock_mono_ns();
	if (selector_catalog_build(&cat, o.repo, chain[1], c2) != 0)
		die("the catalog from the disk cache");
	struct figure disk = { "catalog HEAD^ from disk", clock_elapsed_s(t0, clock_mono_ns()) };
	disk.git = e.have_git ? git_names(&e, EMPTY_TREE, chain[1], &disk.git_names) : -1;
	disk.target = 10;
	size_t disk_scans = selector_catalog_cache_scans(c2),
	       disk_hits = selector_catalog_cache_disk_hits(c2);
	selector_catalog_destroy(cat);
	selector_catalog_cache_destroy(c2);
	nftw(disk_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);

	/* 4. The whole history as one range, from a cold cache. */
	struct sel_out range;
	if (selector_catalog_cache_create(&cache, 0) != 0)
		die("cache");
	t0 = clock_mono_ns();
	select_range(&e, cache, root, head, &range);
	struct figure rng = { "range (root..HEAD, cold)", clock_elapsed_s(t0, clock_mono_ns()) };
	rng.git = e.have_git ? git_names(&e, root, head, &rng.git_names) : -1;
	rng.target = 10;
	size_t range_scans = selector_catalog_cache_scans(cache);
	selector_catalog_cache_destroy(cache);

	struct rusage self;
	getrusage(RUSAGE_SELF, &self);
	double rss_mb = self.ru_maxrss / 1024.0;

	if (o.json) {
		printf("{\"repo\": \"%s\", \"files\": %zu, \"tests\": %zu, \"commits\": %zu, "
		       "\"generate_seconds\": %.3f, \"git\": %s, ",
		       o.repo, files, tests, all, gen_s, e.have_git ? "true" : "false");
		print_figure(&cold, true, false);
		print_figure(&wmed, true, false);
		print_figure(&wmax, true, false);
		print_figure(&same, true, false);
		print_figure(&smed, true, false);
		print_figure(&smax, true, false);
		printf(
		    "\"reuse_tree_hits\": %zu, \"reuse_derived\": %zu, \"reuse_drift_resolved\": "
		    "%zu, \"reuse_drift_hits\": %zu, ",
		    tree_hits, derived, memo_resolved, memo_hits);
		print_figure(&rng, true, false);
		print_figure(&disk, true, false);
		printf(
		    "\"disk_cache\": {\"write_seconds\": %.6f, \"second_process_scans\": %zu, "
		    "\"disk_hits\": %zu}, "
		    "\"cache\": {\"cold_scans\": %zu, \"second_build_scans\": %zu, "
		    "\"second_build_seconds\": %.6f, \"changed_names\": %zu}, "
		    "\"range\": {\"changed\": %zu, \"candidates\": %zu, \"eligible\": %zu, "
		    "\"scheduled\": %zu, \"fallback\": %s, \"scans\": %zu, \"base_scans\": %zu}, "
		    "\"peak_rss_mb\": %.1f}\n",
		    disk_write_s, disk_scans, disk_hits, scans1, scans2, second_s, parent_names,
		    range.changed, range.candidates, range.eligible, range.scheduled,
		    range.fallback ? "true" : "false", range_scans, range.base_scans, rss_mb);
	} else {
		printf("repository %s: %zu catalog files, %zu tests, %zu commits", o.repo, files,
		       tests, all);
		if (gen_s > 0)
			printf(" (generated in %.1f s)", gen_s);
		printf("\n");
		if (!e.have_git)
			printf("git not found: the git diff floors are skipped\n");
		print_figure(&cold, false, false);
		printf("  blob cache: cold build scanned %zu blobs; HEAD^ through the same cache "
		       "scanned %zu in %.1f ms (git: %zu names changed)\n",
		       scans1, scans2, second_s * 1e3, parent_names);
		print_figure(&wmed, false, false);
		print_figure(&wmax, false, false);
		printf("  %zu commits, %zu fell back, %.1f tests scheduled on average\n", n_warm,
		       warm_fallback, n_warm ? (double)warm_sched / n_warm : 0.0);
		printf("  mean of the parts:");
		for (int k = 0; k < 5; k++)
			printf(" %s %.1f ms%s", part_names[k], warm_part[k] / n_warm * 1e3,
			       k < 4 ? "," : "\n");
		print_figure(&same, false, false);
		printf("  parts:");
		for (int k = 0; k < 5; k++)
			printf(" %s %.1f ms%s", part_names[k], same_part[k] * 1e3,
			       k < 4 ? "," : "\n");
		print_figure(&smed, false, false);
		print_figure(&smax, false, false);
		printf("  %zu commits oldest first, each base the previous head; %zu catalogs "
		       "reused by tree id, %zu derived from the previous one; stale drift resolved "
		       "%zu ids, found %zu in its memo; @ops answers: %zu taken from an earlier "
		       "catalog, %zu kept\n  mean of the parts:",
		       n_seq, tree_hits, derived, memo_resolved, memo_hits, ol_hits, ol_kept);
		for (int k = 0; k < 5; k++)
			printf(" %s %.1f ms%s", part_names[k],
			       n_seq ? reuse_part[k] / n_seq * 1e3 : 0, k < 4 ? "," : "\n");
		print_figure(&rng, false, false);
		printf(
		    "  %zu commits, %zu changed files, %zu candidates, %zu eligible, %zu "
		    "scheduled%s; %zu blobs scanned (%zu for the base, through the head's cache)\n",
		    all, range.changed, range.candidates, range.eligible, range.scheduled,
		    range.fallback ? " (fallback)" : "", range_scans, range.base_scans);
		printf("  parts:");
		for (int k = 0; k < 5; k++)
			printf(" %s %.1f ms%s", part_names[k], range.part[k] * 1e3,
			       k < 4 ? "," : "\n");
		print_figure(&disk, false, false);
		printf("  on-disk cache: HEAD's catalog written in %.1f ms; a second cache on the "
		       "directory built HEAD^ with %zu scans, %zu blobs read back\n",
		       disk_write_s * 1e3, disk_scans, disk_hits);
		printf("peak memory (ru_maxrss)    %9.1f MB (target < 1024 MB)\n", rss_mb);
	}
	testspecs_resolver_destroy(e.resolver);
	testspecs_set_destroy(e.specs);
	git_libgit2_shutdown();
	if (!o.repo || o.repo == out)
		nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	bool sane = tests > 0 && scans1 > 0 && scans2 <= scans1 && n_warm > 0 && disk_hits > 0 &&
		    disk_scans <= scans2;
	if (!sane)
		fprintf(stderr, "bench-select: insane figures (tests %zu, scans %zu/%zu)\n", tests,
			scans1, scans2);
	return sane ? 0 : 1;
}
