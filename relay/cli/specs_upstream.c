/* `spyre-ci specs ... --upstream DIR`. lint: the front end of torch-spyre's config checker
 * (testspecs/lint_upstream.h). It reads the collectable tests of DIR's HEAD through the
 * selector's catalog (generated tests included), loads every spec file as a config of its own
 * (a directory's *.yaml files one by one, in name order) and prints what the check finds.
 * list and explain: the specs and the tests of DIR's revision through the funnel, as `select`
 * takes them (funnel_tests_expand), and explain's op database lines. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "funnel/funnel.h"
#include "selector/catalog.h"
#include "selector/select.h"
#include "specs_cmd.h"
#include "testspecs/lint_upstream.h"

#define UPSTREAM_CONFIGS_MAX  4096
#define SPECS_EXPLAIN_OPS_MAX 256 /* ops whose OpInfo entries explain prints */

struct configs {
	struct spec_set *v[UPSTREAM_CONFIGS_MAX];
	size_t n;
};

static int yaml_name(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
	       (n > 4 && strcmp(name + n - 4, ".yml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_one(struct configs *c, const char *path, const struct spec_load_opts *o)
{
	if (c->n >= UPSTREAM_CONFIGS_MAX)
		return err_set(ERR_LIMIT, "more than %d spec files", UPSTREAM_CONFIGS_MAX);
	int rc = testspecs_set_create(&c->v[c->n]);
	if (rc)
		return rc;
	c->n++;
	size_t seen = o->diags->n;
	rc = testspecs_load_file(c->v[c->n - 1], path, o);
	if (rc != ERR_INVAL)
		return rc;
	/* A file with errors is left out and said so; the other files are still checked. */
	testspecs_set_destroy(c->v[--c->n]);
	c->v[c->n] = NULL;
	fprintf(stderr, "spyre-ci specs: %s: not checked against the upstream, its errors:\n",
		path);
	for (size_t i = seen; i < o->diags->n; i++) {
		char line[1024];
		if (o->diags->v[i].severity == SPEC_ERROR &&
		    testspecs_diag_format(&o->diags->v[i], line, sizeof line) >= 0)
			fprintf(stderr, "  %s\n", line);
	}
	return 0;
}

/* A directory's spec files, each a config. */
static int load_dir(struct configs *c, const char *dir, const struct spec_load_opts *o)
{
	DIR *d = opendir(dir);
	if (!d)
		return err_set_errno(ERR_IO, "%s", dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		if (!yaml_name(e->d_name))
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
			rc = p ? 0 : err_set(ERR_NOMEM, "%s", dir);
			names = p ? p : names;
		}
		if (rc == 0 && n >= UPSTREAM_CONFIGS_MAX)
			rc = err_set(ERR_LIMIT, "%s: more than %d spec files", dir,
				     UPSTREAM_CONFIGS_MAX);
		if (rc == 0 && !(names[n++] = strdup(e->d_name)))
			rc = err_set(ERR_NOMEM, "%s", dir);
	}
	closedir(d);
	if (rc == 0 && n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		rc = load_one(c, path, o);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int load_configs(struct configs *c, const struct specs_args *a, struct spec_roots *roots,
			struct spec_diag_list *diags)
{
	struct spec_load_opts o = { .roots = roots, .diags = diags };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < a->n_paths; i++) {
		struct stat st;
		if (stat(a->paths[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = load_dir(c, a->paths[i], &o);
		else
			rc = load_one(c, a->paths[i], &o);
	}
	return rc;
}

int specs_lint_upstream(const struct specs_args *a, struct spec_diag_list *diags,
			struct spec_upstream_counts *counts)
{
	struct specs_upstream u;
	int rc = specs_upstream_open(&u, a->upstream);
	if (rc)
		return rc;
	const struct catalog *cat = u.cat;
	const char **ids = malloc((cat->n_tests + 1) * sizeof *ids);
	struct configs *c = calloc(1, sizeof *c);
	rc = ids && c ? 0 : err_set(ERR_NOMEM, "--upstream: %zu tests", cat->n_tests);
	for (size_t i = 0; rc == 0 && i < cat->n_tests; i++)
		ids[i] = cat->tests[i].id;
	struct spec_roots roots = { a->upstream, a->roots.torch_device_root };
	struct spec_diag_list load_diags; /* the plain lint reported these already */
	testspecs_diags_init(&load_diags);
	if (rc == 0)
		rc = load_configs(c, a, &roots, &load_diags);
	testspecs_diags_finish(&load_diags);
	if (rc == 0)
		rc = testspecs_lint_upstream(c->v, c->n, ids, cat->n_tests, diags, counts);
	for (size_t i = 0; c && i < c->n; i++)
		testspecs_set_destroy(c->v[i]);
	free(c);
	free(ids);
	specs_upstream_close(&u);
	return rc;
}

/* ---- list and explain --upstream: through the funnel ---- */

int specs_load_upstream(struct funnel_specs **out, const struct specs_args *a)
{
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct funnel_specs_opts o = { .paths = a->paths,
				       .n_paths = a->n_paths,
				       .torch_root = a->upstream, /* as select's --repo */
				       .device_root = a->roots.torch_device_root,
				       .diags = &diags };
	int rc = funnel_specs_load(out, &o);
	if (rc)
		specs_print_diags(stderr, &diags, false);
	testspecs_diags_finish(&diags);
	return rc;
}

int specs_expand_upstream(struct funnel_expansion *x, const struct specs_args *a,
			  struct funnel_specs *specs, const char *const *ids, size_t n_ids)
{
	struct funnel_tests t = { .repo = a->upstream,
				  .rev = a->rev,
				  .ids = ids,
				  .n_ids = n_ids,
				  .tier = a->label,
				  .cache_dir = a->cache };
	int rc = funnel_tests_expand(x, &t, specs, NULL);
	return rc ? err_prefix("--upstream %s: ", a->upstream) : 0;
}

/* ---- lint's catalog, explain's op database lines ---- */

int specs_upstream_open(struct specs_upstream *u, const char *dir)
{
	memset(u, 0, sizeof *u);
	int rc = selector_catalog_cache_create(&u->cache, 0);
	if (rc == 0)
		rc = selector_catalog_build(&u->cat, dir, "HEAD", u->cache);
	if (rc) {
		specs_upstream_close(u);
		return err_prefix("--upstream %s: ", dir);
	}
	return 0;
}

void specs_upstream_close(struct specs_upstream *u)
{
	if (u->cat)
		selector_catalog_destroy(u->cat);
	if (u->cache)
		selector_catalog_cache_destroy(u->cache);
	memset(u, 0, sizeof *u);
}

void specs_explain_sources(FILE *out, const struct spec_case_list *l,
			   const struct spec_expand_result *res, const struct catalog *cat)
{
	size_t n = 0;
	for (int s = 1; s < SPEC_SOURCE_COUNT; s++)
		if (res->n_by_source[s])
			fprintf(out, "%s%s %zu", n++ ? ", " : "from      ",
				testspecs_source_name((enum spec_case_source)s),
				res->n_by_source[s]);
	if (n)
		fputc('\n', out);
	const char *shown[SPECS_EXPLAIN_OPS_MAX];
	size_t n_shown = 0;
	for (size_t i = 0; cat && n && i < l->n && n_shown < SPECS_EXPLAIN_OPS_MAX; i++) {
		bool seen = l->v[i].source == SPEC_SOURCE_NONE;
		for (size_t j = 0; j < n_shown && !seen; j++)
			seen = strcmp(shown[j], l->v[i].op) == 0;
		if (seen)
			continue;
		shown[n_shown++] = l->v[i].op;
		struct spec_opinfo oi;
		struct selector_opdb db = { cat, NULL, NULL };
		if (selector_opinfo_of(&db, l->v[i].op, &oi) != 1) {
			fprintf(out, "  opinfo %s: no entry in the op database\n", l->v[i].op);
			continue;
		}
		fprintf(out, "  opinfo %s: %s at %s, dtypes %s, sample_inputs_func %s, shapes %s\n",
			l->v[i].op, oi.kind, oi.where, oi.dtypes ? oi.dtypes : "(not read)",
			oi.sample_func ? oi.sample_func : "(none, or not a plain name)",
			oi.shapes ? oi.shapes : "(none read)");
	}
}
