/* The selector's accuracy, measured against the synthetic upstream's ground truth.
 * Generates the upstream (or reuses --repo DIR), then for N single (non-merge) commits spread
 * evenly over the history runs stage 1 (changes parent..commit), the catalogs of both sides
 * through ONE catalog cache for the whole run (each commit re-scans only the blobs it changed),
 * stage 2 and stage 3 against the repository's own specs (DIR/spyre/specs), and compares with
 * DIR/.ground_truth/commits.jsonl:
 *   recall           |selected eligible ∩ affected eligible| / |affected eligible|, where a truly
 *                    affected test counts only when the specs make it eligible;
 *   selection ratio  selected eligible / eligible tests of the head catalog, over the commits
 *                    that did not fall back (mean and median);
 *   fallback         a commit whose truth says "fallback" must get the selector's fallback.
 * When DIR/.ground_truth/commits_exec.jsonl is there (tests/tools/trace_tests.py truth writes it
 * by running the tests under a profiler; --trace SCRIPT runs it after generating), recall is
 * also measured against that execution truth. Both are broken down per shape: the way the
 * truly affected test reached what changed (a direct call, a helper in the test file, an
 * aliased import, ... as the generator records it in "affected_shapes"; "module_level" for an
 * edge only the execution truth has: module-level code of the test file or of a module it
 * imports changed).
 * Prints those, the time per commit and the peak RSS (getrusage); --json as one object. Never
 * asserts a time: exits 1 when a recall (overall or of one shape) < 99.5% or the mean ratio
 * > 10% (correctness targets), or on an error; 2 on bad usage. --smoke: scale small, every
 * single commit. --shapes basic: generate without the shapes beyond direct calls. --contiguous:
 * the last N single commits of the history instead of N spread over it (what trace_tests.py
 * truth --contiguous traces: close revisions keep the execution truth affordable). */
#include <ftw.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "fixture/fixture.h"
#include "selector/catalog.h"
#include "selector/changes.h"
#include "selector/impact.h"
#include "selector/select.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define TRUTH_MAX      (512u << 20) /* bytes of commits.jsonl */
#define ELIG_SLOTS     (1u << 20)   /* eligibility memo: distinct test ids */
#define MISSES_SHOWN   10
#define RECALL_TARGET  0.995
#define RATIO_TARGET   0.10
#define EVAL_COMMITS   500
#define EVAL_PATH_MAX  4096
#define EVAL_DIR_MAX   3000 /* bytes of --repo, leaving room for the file names */
#define SHAPES_MAX     32   /* distinct shape names in a truth */
#define SHAPE_NAME_MAX 40

extern char **environ;

struct args {
	const char *repo, *trace, *shapes;
	int commits;
	int smoke, json, contiguous;
	uint64_t seed;
};

struct truth {
	const char *id, *parent, *kind; /* copies */
	bool fallback, affected_all;
	const char *line; /* its commits.jsonl line, parsed again only when it is evaluated */
	size_t len;
	const char *xline; /* its commits_exec.jsonl line, when traced */
	size_t xlen;
	json_t *obj, *xobj; /* while it is evaluated */
};

/* Affected tests and the selected ones among them, per shape. */
struct shape_tab {
	char name[SHAPES_MAX][SHAPE_NAME_MAX];
	size_t n, aff[SHAPES_MAX], hit[SHAPES_MAX];
};

/* id -> eligible (1) or not (0), resolved once per distinct id. */
struct memo {
	char **keys;
	signed char *val;
	size_t n;
};

struct totals {
	size_t commits, fb_truth, fb_sel, fb_missed, fb_extra, hits, affected_elig, misses_shown;
	size_t affected_inelig, ratio_n, errors;
	/* over the commits the selector did not answer with the fallback */
	size_t nf_hits, nf_affected, nf_empty, head_eligible;
	size_t s2_hits, s2_affected;          /* stage 2's candidates against every affected test */
	size_t x_commits, x_hits, x_affected; /* against the execution truth */
	struct shape_tab st_shapes, x_shapes;
	double *ratios, seconds, max_seconds, sum_ratio;
};

struct ctx {
	const char *repo;
	struct catalog_cache *cache;
	struct spec_set *specs;
	struct spec_resolver *resolver;
	struct memo memo;
	struct totals t;
};

static void die(const char *what)
{
	fprintf(stderr, "bench-select-eval: %s: %s\n", what, err_last());
	exit(1);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* 1 eligible, 0 not. The same decision stage 3 makes (tier: any). */
static int eligible(struct ctx *c, const char *id)
{
	size_t i = (size_t)hash_str(id) & (ELIG_SLOTS - 1);
	for (size_t probe = 0; probe < ELIG_SLOTS; probe++, i = (i + 1) & (ELIG_SLOTS - 1)) {
		if (!c->memo.keys[i])
			break;
		if (strcmp(c->memo.keys[i], id) == 0)
			return c->memo.val[i];
	}
	if (c->memo.n * 2 >= ELIG_SLOTS)
		die("eligibility memo full");
	static struct spec_decision d;
	int rc = testspecs_resolver_resolve(c->resolver, id, NULL, &d);
	int v = rc == 0 && d.eligible;
	if (rc < 0 && rc != ERR_INVAL)
		die(id);
	c->memo.keys[i] = strdup(id);
	if (!c->memo.keys[i])
		die("memo key");
	c->memo.val[i] = (signed char)v;
	c->memo.n++;
	return v;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* ---- ground truth ---- */

/* The single-parent commits of commits.jsonl: their ids and flags, and where their line is
 * (`*data`, kept) to be parsed again when evaluated: the whole file as JSON objects took five
 * times its size and was most of this benchmark's peak memory, not the selector's. */
static size_t read_truth(const char *repo, char **data_out, struct truth **out)
{
	char path[EVAL_PATH_MAX], *data = NULL;
	size_t len = 0, n = 0, cap = 0;
	snprintf(path, sizeof path, "%.*s/.ground_truth/commits.jsonl", EVAL_DIR_MAX, repo);
	if (fs_read_file(&data, &len, path, TRUTH_MAX) < 0)
		die(path);
	struct truth *v = NULL;
	for (char *p = data, *nl; p < data + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(data + len - p));
		if (!nl)
			nl = data + len;
		if (nl == p)
			continue;
		json_t *o = jx_loadb(p, (size_t)(nl - p), TRUTH_MAX);
		if (!o)
			die("commits.jsonl line");
		json_t *par = json_object_get(o, "parents");
		if (json_array_size(par) != 1) {
			json_decref(o); /* the root commit and merges */
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			if (!(v = realloc(v, cap * sizeof *v)))
				die("truth");
		}
		const char *id = jx_get_str(o, "id"),
			   *parent = json_string_value(json_array_get(par, 0)),
			   *kind = jx_get_str(o, "kind");
		if (!id || !parent)
			die("commits.jsonl: a commit without id or parent");
		v[n++] = (struct truth){
			.id = strdup(id),
			.parent = strdup(parent),
			.kind = kind ? strdup(kind) : NULL,
			.fallback = jx_get_bool(o, "fallback", false),
			.affected_all = jx_get_bool(o, "affected_all", false),
			.line = p,
			.len = (size_t)(nl - p),
		};
		if (!v[n - 1].id || !v[n - 1].parent || (kind && !v[n - 1].kind))
			die("truth");
		json_decref(o);
	}
	*data_out = data;
	*out = v;
	return n;
}

static int cmp_truth_id(const void *a, const void *b)
{
	return strcmp((*(const struct truth *const *)a)->id, (*(const struct truth *const *)b)->id);
}

/* Attaches each line of commits_exec.jsonl (when the file is there) to its commit. */
static size_t read_exec(const char *repo, struct truth *v, size_t n, char **data_out)
{
	char path[EVAL_PATH_MAX], *data = NULL;
	size_t len = 0, found = 0;
	snprintf(path, sizeof path, "%.*s/.ground_truth/commits_exec.jsonl", EVAL_DIR_MAX, repo);
	*data_out = NULL;
	if (access(path, R_OK) != 0)
		return 0;
	if (fs_read_file(&data, &len, path, TRUTH_MAX) < 0)
		die(path);
	struct truth **idx = malloc((n + 1) * sizeof *idx);
	if (!idx)
		die("exec index");
	for (size_t i = 0; i < n; i++)
		idx[i] = &v[i];
	qsort(idx, n, sizeof *idx, cmp_truth_id);
	for (char *p = data, *nl; p < data + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(data + len - p));
		if (!nl)
			nl = data + len;
		if (nl == p)
			continue;
		json_t *o = jx_loadb(p, (size_t)(nl - p), TRUTH_MAX);
		if (!o || !jx_get_str(o, "id"))
			die("commits_exec.jsonl line");
		struct truth key = { .id = jx_get_str(o, "id") }, *kp = &key;
		struct truth **hit = bsearch(&kp, idx, n, sizeof *idx, cmp_truth_id);
		if (hit) {
			(*hit)->xline = p;
			(*hit)->xlen = (size_t)(nl - p);
			found++;
		}
		json_decref(o);
	}
	free(idx);
	*data_out = data;
	return found;
}

/* Counts one affected test under each shape of `shapes` ("helper+inherited"). */
static void shape_count(struct shape_tab *t, const char *shapes, bool hit)
{
	for (const char *p = shapes; *p;) {
		size_t l = strcspn(p, "+");
		size_t k = 0;
		while (k < t->n && (strlen(t->name[k]) != l || strncmp(t->name[k], p, l)))
			k++;
		if (k == t->n) {
			if (t->n == SHAPES_MAX || l >= SHAPE_NAME_MAX)
				die("too many or too long shape names");
			memcpy(t->name[k], p, l);
			t->name[k][l] = '\0';
			t->n++;
		}
		t->aff[k]++;
		t->hit[k] += hit;
		p += l + (p[l] == '+');
	}
}

struct shaped {
	const char *id, *shapes;
};

static int cmp_shaped(const void *a, const void *b)
{
	return strcmp(((const struct shaped *)a)->id, ((const struct shaped *)b)->id);
}

/* The static truth's affected tests with their shapes, sorted by id. */
static struct shaped *static_shapes(json_t *obj, size_t *n_out)
{
	json_t *aff = json_object_get(obj, "affected"),
	       *sh = json_object_get(obj, "affected_shapes");
	size_t n = json_array_size(aff);
	struct shaped *v = calloc(n + 1, sizeof *v);
	if (!v)
		die("shapes");
	for (size_t i = 0; i < n; i++) {
		v[i].id = json_string_value(json_array_get(aff, i));
		v[i].shapes = json_string_value(json_array_get(sh, i));
		if (!v[i].id)
			v[i].id = "";
		if (!v[i].shapes)
			v[i].shapes = "unlabelled";
	}
	qsort(v, n, sizeof *v, cmp_shaped);
	*n_out = n;
	return v;
}

/* ---- one commit ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void show_miss(struct ctx *c, const struct truth *tr, const char *test, const char *why)
{
	if (c->t.misses_shown++ >= MISSES_SHOWN)
		return;
	char *paths = jx_dumps(json_object_get(tr->obj, "paths"));
	char *edited = jx_dumps(json_object_get(tr->obj, "edited"));
	fprintf(stderr, "miss: %s commit %.12s kind %s paths %s edited %s: %s\n", why, tr->id,
		tr->kind ? tr->kind : "?", paths ? paths : "?", edited ? edited : "?", test);
	free(paths);
	free(edited);
}

/* Stage 3 over the candidates; the selected eligible ids, sorted, into *out. */
static size_t stage3(struct ctx *c, const struct impact_result *ir, const char ***out)
{
	struct select_candidate *cands = calloc(ir->n_candidates + 1, sizeof *cands);
	const char **sel = calloc(ir->n_candidates + 1, sizeof *sel);
	if (!cands || !sel)
		die("candidates");
	for (size_t i = 0; i < ir->n_candidates; i++)
		cands[i].id = ir->candidates[i].id;
	struct select_report rep;
	selector_report_init(&rep);
	if (selector_stage3_run(&rep, c->specs, c->resolver, cands, ir->n_candidates, NULL) < 0)
		die("stage 3");
	size_t n = 0;
	for (size_t i = 0; i < rep.n_tests; i++)
		if (rep.tests[i].fate >= SELECT_ELIGIBLE) {
			/* stage 3 appends in candidate order: point into the impact result,
			 * which outlives the report */
			if (i >= ir->n_candidates || strcmp(ir->candidates[i].id, rep.tests[i].id))
				die("stage 3 reordered the candidates");
			sel[n++] = ir->candidates[i].id;
		}
	selector_report_finish(&rep);
	free(cands);
	qsort(sel, n, sizeof *sel, cmp_str);
	*out = sel;
	return n;
}

/* The truly affected tests against the selection: hits and eligible affected counted. */
static int cmp_cand(const void *key, const void *cand)
{
	return strcmp(key, ((const struct impact_candidate *)cand)->id);
}

static void score(struct ctx *c, const struct truth *tr, const struct catalog *head,
		  const struct impact_result *ir, const char **sel, size_t n_sel)
{
	bool all_selected = ir->fallback;
	json_t *aff = json_object_get(tr->obj, "affected");
	if (tr->affected_all) {
		/* every eligible head test truly depends on it */
		for (size_t i = 0; i < head->n_tests; i++) {
			const char *id = head->tests[i].id;
			if (!eligible(c, id))
				continue;
			c->t.affected_elig++;
			bool hit = all_selected || bsearch(&id, sel, n_sel, sizeof *sel, cmp_str);
			c->t.hits += hit;
			if (!hit)
				show_miss(c, tr, id, "affected_all");
		}
		return;
	}
	json_t *shapes = json_object_get(tr->obj, "affected_shapes");
	for (size_t i = 0; i < json_array_size(aff); i++) {
		const char *id = json_string_value(json_array_get(aff, i));
		const char *sh = json_string_value(json_array_get(shapes, i));
		if (!id)
			continue;
		if (!ir->fallback) {
			/* stage 2 alone, eligibility aside */
			c->t.s2_affected++;
			c->t.s2_hits += bsearch(id, ir->candidates, ir->n_candidates,
						sizeof *ir->candidates, cmp_cand) != NULL;
		}
		if (!eligible(c, id)) {
			c->t.affected_inelig++;
			continue;
		}
		c->t.affected_elig++;
		bool hit = all_selected || bsearch(&id, sel, n_sel, sizeof *sel, cmp_str);
		c->t.hits += hit;
		shape_count(&c->t.st_shapes, sh ? sh : "unlabelled", hit);
		if (!hit)
			show_miss(c, tr, id, "not selected");
	}
}

/* The same against the execution truth; an edge the static truth lacks is "module_level". */
static void score_exec(struct ctx *c, const struct truth *tr, const struct catalog *head,
		       const struct impact_result *ir, const char **sel, size_t n_sel)
{
	bool all_selected = ir->fallback;
	c->t.x_commits++;
	if (jx_get_bool(tr->xobj, "affected_all", false)) {
		for (size_t i = 0; i < head->n_tests; i++) {
			const char *id = head->tests[i].id;
			if (!eligible(c, id))
				continue;
			bool hit = all_selected || bsearch(&id, sel, n_sel, sizeof *sel, cmp_str);
			c->t.x_affected++;
			c->t.x_hits += hit;
			shape_count(&c->t.x_shapes, "all_tests", hit);
		}
		return;
	}
	size_t n_st = 0;
	struct shaped *st = static_shapes(tr->obj, &n_st);
	json_t *aff = json_object_get(tr->xobj, "affected");
	for (size_t i = 0; i < json_array_size(aff); i++) {
		const char *id = json_string_value(json_array_get(aff, i));
		if (!id || !eligible(c, id))
			continue;
		struct shaped key = { .id = id };
		const struct shaped *s = bsearch(&key, st, n_st, sizeof *st, cmp_shaped);
		bool hit = all_selected || bsearch(&id, sel, n_sel, sizeof *sel, cmp_str);
		c->t.x_affected++;
		c->t.x_hits += hit;
		shape_count(&c->t.x_shapes, s ? s->shapes : "module_level", hit);
		if (!hit)
			show_miss(c, tr, id, "not selected (execution truth)");
	}
	free(st);
}

static void eval_commit(struct ctx *c, const struct truth *tr)
{
	uint64_t t0 = clock_mono_ns();
	struct change_set *cs = NULL;
	struct catalog *base = NULL, *head = NULL;
	struct impact_result *ir = NULL;
	if (selector_changes_from_git(&cs, c->repo, tr->parent, tr->id, NULL) < 0 ||
	    selector_catalog_build(&base, c->repo, tr->parent, c->cache) < 0 ||
	    selector_catalog_build(&head, c->repo, tr->id, c->cache) < 0 ||
	    selector_impact_run(&ir, cs, base, head, NULL) < 0) {
		fprintf(stderr, "bench-select-eval: commit %s: %s\n", tr->id, err_last());
		c->t.errors++;
		goto out;
	}
	c->t.commits++;
	c->t.fb_truth += tr->fallback;
	c->t.fb_sel += ir->fallback;
	if (tr->fallback && !ir->fallback) {
		c->t.fb_missed++;
		show_miss(c, tr, "(every test)", "fallback missed");
	}
	if (!tr->fallback && ir->fallback)
		c->t.fb_extra++;
	const char **sel = NULL;
	size_t n_sel = ir->fallback ? 0 : stage3(c, ir, &sel);
	size_t hits0 = c->t.hits, aff0 = c->t.affected_elig;
	score(c, tr, head, ir, sel, n_sel);
	if (tr->xobj)
		score_exec(c, tr, head, ir, sel, n_sel);
	if (!ir->fallback) {
		c->t.nf_hits += c->t.hits - hits0;
		c->t.nf_affected += c->t.affected_elig - aff0;
		c->t.nf_empty += c->t.affected_elig == aff0;
	}
	if (!ir->fallback) {
		size_t n_elig = 0;
		for (size_t i = 0; i < head->n_tests; i++)
			n_elig += (size_t)eligible(c, head->tests[i].id);
		c->t.head_eligible = n_elig;
		double r = n_elig ? (double)n_sel / (double)n_elig : 0.0;
		c->t.ratios[c->t.ratio_n++] = r;
		c->t.sum_ratio += r;
	}
	free(sel);
out:
	selector_impact_result_destroy(ir);
	selector_catalog_destroy(head);
	selector_catalog_destroy(base);
	selector_change_set_destroy(cs);
	double s = clock_elapsed_s(t0, clock_mono_ns());
	c->t.seconds += s;
	if (s > c->t.max_seconds)
		c->t.max_seconds = s;
}

/* ---- setup and report ---- */

static void load_specs(struct ctx *c)
{
	char dir[EVAL_PATH_MAX];
	snprintf(dir, sizeof dir, "%.*s/spyre/specs", EVAL_DIR_MAX, c->repo);
	struct spec_roots roots = { c->repo, NULL };
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_load_opts o = { .roots = &roots, .diags = &diags };
	if (testspecs_set_create(&c->specs) < 0 || testspecs_load_path(c->specs, dir, &o) < 0 ||
	    testspecs_resolver_create(&c->resolver, c->specs) < 0)
		die(dir);
	testspecs_diags_finish(&diags);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0.0;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static bool shapes_ok(const struct shape_tab *t)
{
	for (size_t k = 0; k < t->n; k++)
		if ((double)t->hit[k] < RECALL_TARGET * (double)t->aff[k])
			return false;
	return true;
}

static double pct(size_t a, size_t b)
{
	return b ? 100.0 * (double)a / (double)b : 100.0;
}

/* One table: shape, then affected / selected / missed / recall under each truth. */
static void print_shapes(const struct totals *t)
{
	printf("per shape           %-16s %9s %9s %7s %9s | %9s %9s %7s %9s\n", "", "static",
	       "selected", "missed", "recall", "executed", "selected", "missed", "recall");
	struct shape_tab all = t->st_shapes;
	for (size_t k = 0; k < t->x_shapes.n; k++) /* names only the execution truth has */
		shape_count(&all, t->x_shapes.name[k], false);
	for (size_t k = 0; k < all.n; k++) {
		size_t sa = 0, sh = 0, xa = 0, xh = 0;
		for (size_t j = 0; j < t->st_shapes.n; j++)
			if (!strcmp(t->st_shapes.name[j], all.name[k]))
				sa = t->st_shapes.aff[j], sh = t->st_shapes.hit[j];
		for (size_t j = 0; j < t->x_shapes.n; j++)
			if (!strcmp(t->x_shapes.name[j], all.name[k]))
				xa = t->x_shapes.aff[j], xh = t->x_shapes.hit[j];
		printf("  %-33s %9zu %9zu %7zu %8.3f%% | %9zu %9zu %7zu %8.3f%%\n", all.name[k], sa,
		       sh, sa - sh, pct(sh, sa), xa, xh, xa - xh, pct(xh, xa));
	}
}

static void json_shapes(const struct shape_tab *t)
{
	printf("{");
	for (size_t k = 0; k < t->n; k++)
		printf("%s\"%s\":{\"affected\":%zu,\"selected\":%zu}", k ? "," : "", t->name[k],
		       t->aff[k], t->hit[k]);
	printf("}");
}

static int report(struct ctx *c, const struct args *a, double gen_s, size_t singles)
{
	struct totals *t = &c->t;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double recall = t->affected_elig ? (double)t->hits / (double)t->affected_elig : 1.0;
	double mean = t->ratio_n ? t->sum_ratio / (double)t->ratio_n : 0.0;
	double med = median(t->ratios, t->ratio_n);
	double nf_recall = t->nf_affected ? (double)t->nf_hits / (double)t->nf_affected : 1.0;
	double per = t->commits ? t->seconds / (double)t->commits : 0.0;
	double rss_mb = (double)ru.ru_maxrss / 1024.0;
	double x_recall = t->x_affected ? (double)t->x_hits / (double)t->x_affected : 1.0;
	bool ok = recall >= RECALL_TARGET && mean <= RATIO_TARGET && t->fb_missed == 0 &&
		  t->errors == 0 && t->commits > 0 && x_recall >= RECALL_TARGET &&
		  shapes_ok(&t->st_shapes) && shapes_ok(&t->x_shapes);
	if (a->json) {
		printf("{\"commits\":%zu,\"single_commits\":%zu,\"errors\":%zu,\"recall\":%.6f,"
		       "\"hits\":%zu,\"affected_eligible\":%zu,\"affected_ineligible\":%zu,"
		       "\"ratio_mean\":%.6f,\"ratio_median\":%.6f,\"ratio_commits\":%zu,"
		       "\"fallback_truth\":%zu,\"fallback_selected\":%zu,\"fallback_missed\":%zu,"
		       "\"fallback_extra\":%zu,\"seconds_per_commit\":%.4f,\"seconds_max\":%.4f,"
		       "\"generate_seconds\":%.2f,\"peak_rss_mb\":%.1f,\"blobs_scanned\":%zu,"
		       "\"recall_no_fallback\":%.6f,\"affected_eligible_no_fallback\":%zu,"
		       "\"commits_no_affected_eligible\":%zu,\"head_eligible\":%zu,\"stage2_hits\":"
		       "%zu,"
		       "\"stage2_affected\":%zu,\"exec_commits\":%zu,\"recall_exec\":%.6f,"
		       "\"exec_hits\":%zu,\"exec_affected\":%zu,\"ok\":%s,\"shapes_static\":",
		       t->commits, singles, t->errors, recall, t->hits, t->affected_elig,
		       t->affected_inelig, mean, med, t->ratio_n, t->fb_truth, t->fb_sel,
		       t->fb_missed, t->fb_extra, per, t->max_seconds, gen_s, rss_mb,
		       selector_catalog_cache_scans(c->cache), nf_recall, t->nf_affected,
		       t->nf_empty, t->head_eligible, t->s2_hits, t->s2_affected, t->x_commits,
		       x_recall, t->x_hits, t->x_affected, ok ? "true" : "false");
		json_shapes(&t->st_shapes);
		printf(",\"shapes_exec\":");
		json_shapes(&t->x_shapes);
		printf("}\n");
	} else {
		printf("commits evaluated   %zu of %zu single commits (%zu errors)\n", t->commits,
		       singles, t->errors);
		printf("recall              %.4f%% (%zu of %zu truly affected eligible tests; "
		       "%zu affected not eligible) target >= %.1f%%\n",
		       100 * recall, t->hits, t->affected_elig, t->affected_inelig,
		       100 * RECALL_TARGET);
		printf(
		    "  without fallback  %.4f%% (%zu of %zu over %zu commits; %zu of them with no "
		    "affected eligible test)\n",
		    100 * nf_recall, t->nf_hits, t->nf_affected, t->ratio_n, t->nf_empty);
		printf("  stage 2 alone     %.4f%% (%zu of %zu affected tests, eligible or not, "
		       "among the candidates)\n",
		       t->s2_affected ? 100.0 * (double)t->s2_hits / (double)t->s2_affected : 100.0,
		       t->s2_hits, t->s2_affected);
		if (t->x_commits)
			printf("recall (executed)   %.4f%% (%zu of %zu truly affected eligible "
			       "tests by "
			       "the traced runs, over %zu commits)\n",
			       100 * x_recall, t->x_hits, t->x_affected, t->x_commits);
		else
			printf("recall (executed)   no execution truth (tests/tools/trace_tests.py "
			       "truth; --trace)\n");
		print_shapes(t);
		printf("selection ratio     mean %.3f%%  median %.3f%% over %zu non-fallback "
		       "commits; target mean <= %.0f%%; %zu eligible at head\n",
		       100 * mean, 100 * med, t->ratio_n, 100 * RATIO_TARGET, t->head_eligible);
		printf("fallback            truth %zu, selector %zu, missed %zu, extra %zu\n",
		       t->fb_truth, t->fb_sel, t->fb_missed, t->fb_extra);
		printf("time                %.3f s per commit (max %.3f s, total %.1f s); "
		       "generation %.1f s\n",
		       per, t->max_seconds, t->seconds, gen_s);
		printf(
		    "memory              peak RSS %.1f MB; %zu blobs scanned through one cache\n",
		    rss_mb, selector_catalog_cache_scans(c->cache));
		printf("%s\n", ok ? "OK" : "TARGET MISSED");
	}
	return ok ? 0 : 1;
}

static int parse_args(struct args *a, int argc, char **argv)
{
	a->commits = EVAL_COMMITS;
	a->seed = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke"))
			a->smoke = 1;
		else if (!strcmp(argv[i], "--contiguous"))
			a->contiguous = 1;
		else if (!strcmp(argv[i], "--json"))
			a->json = 1;
		else if (!strcmp(argv[i], "--repo") && i + 1 < argc)
			a->repo = argv[++i];
		else if (!strcmp(argv[i], "--commits") && i + 1 < argc)
			a->commits = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			a->seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
			a->trace = argv[++i];
		else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
			a->shapes = argv[++i];
		else
			return -1;
	}
	if (a->shapes && strcmp(a->shapes, "basic") && strcmp(a->shapes, "all"))
		return -1;
	return a->commits > 0 ? 0 : -1;
}

/* python3 SCRIPT truth --repo DIR --commits N: the execution truth of the commits evaluated. */
static void trace(const char *script, const char *dir, int commits, bool all, bool run)
{
	char n[32];
	snprintf(n, sizeof n, "%d", all ? 0 : commits);
	char *argv[] = { "python3",   (char *)script, "truth", "--repo",
			 (char *)dir, "--commits",    n,       run ? "--contiguous" : NULL,
			 NULL };
	pid_t pid;
	int st = 0;
	if (posix_spawnp(&pid, "python3", NULL, NULL, argv, environ) != 0)
		die("spawning python3 for the execution truth");
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench-select-eval: %s truth failed\n", script);
		exit(1);
	}
}

static double generate(char *dir, size_t size, const struct args *a)
{
	snprintf(dir, size, "/tmp/bench-select-eval-XXXXXX");
	if (!mkdtemp(dir))
		die("mkdtemp");
	struct fixture_opts o = {
		.out = dir,
		.scale = a->smoke ? FIXTURE_SMALL : FIXTURE_PYTORCH,
		.seed = a->seed,
		.shapes_basic = a->shapes && !strcmp(a->shapes, "basic"),
	};
	struct fixture_stats st;
	if (fixture_generate(&o, &st) < 0)
		die("generate");
	fprintf(stderr, "generated %zu files, %zu tests, %zu commits in %.1f s: %s\n", st.files,
		st.tests, st.commits, st.seconds, dir);
	return st.seconds;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	if (parse_args(&a, argc, argv) < 0) {
		fprintf(stderr,
			"usage: bench-select-eval [--smoke] [--repo DIR] [--commits N] "
			"[--seed N] [--shapes basic|all] [--trace trace_tests.py] [--contiguous] "
			"[--json]\n");
		return 2;
	}
	char dir[EVAL_PATH_MAX];
	double gen_s = a.repo ? 0.0 : generate(dir, sizeof dir, &a);
	struct ctx c = { .repo = a.repo ? a.repo : dir };
	char *truth_text = NULL;
	struct truth *tr = NULL;
	if (a.trace)
		trace(a.trace, c.repo, a.commits, a.smoke, a.contiguous);
	size_t singles = read_truth(c.repo, &truth_text, &tr);
	size_t n = a.smoke || (size_t)a.commits >= singles ? singles : (size_t)a.commits;
	char *exec_text = NULL;
	size_t traced = read_exec(c.repo, tr, singles, &exec_text);
	if (!a.json && traced)
		fprintf(stderr, "execution truth for %zu commits\n", traced);
	c.memo.keys = calloc(ELIG_SLOTS, sizeof *c.memo.keys);
	c.memo.val = calloc(ELIG_SLOTS, 1);
	c.t.ratios = calloc(n + 1, sizeof *c.t.ratios);
	if (!c.memo.keys || !c.memo.val || !c.t.ratios)
		die("tables");
	if (selector_catalog_cache_create(&c.cache, 0) < 0)
		die("cache");
	load_specs(&c);
	for (size_t k = 0; k < n; k++) {
		struct truth *t = &tr[a.contiguous ? singles - n + k : k * singles / n];
		if (!(t->obj = jx_loadb(t->line, t->len, TRUTH_MAX)))
			die("commits.jsonl line");
		if (t->xline && !(t->xobj = jx_loadb(t->xline, t->xlen, TRUTH_MAX)))
			die("commits_exec.jsonl line");
		eval_commit(&c, t);
		json_decref(t->obj);
		json_decref(t->xobj);
		t->obj = t->xobj = NULL;
		if (!a.json && (k + 1) % 50 == 0) {
			struct rusage ru;
			getrusage(RUSAGE_SELF, &ru);
			fprintf(stderr,
				"%zu/%zu commits, %.1f s, peak RSS %.0f MB, %zu blobs held\n",
				k + 1, n, c.t.seconds, (double)ru.ru_maxrss / 1024.0,
				selector_catalog_cache_size(c.cache));
		}
	}
	int rc = report(&c, &a, gen_s, singles);
	for (size_t i = 0; i < ELIG_SLOTS; i++)
		free(c.memo.keys[i]);
	free(c.memo.keys);
	free(c.memo.val);
	free(c.t.ratios);
	for (size_t i = 0; i < singles; i++) {
		free((char *)tr[i].id);
		free((char *)tr[i].parent);
		free((char *)tr[i].kind);
	}
	free(tr);
	free(truth_text);
	free(exec_text);
	testspecs_resolver_destroy(c.resolver);
	testspecs_set_destroy(c.specs);
	selector_catalog_cache_destroy(c.cache);
	if (!a.repo)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
