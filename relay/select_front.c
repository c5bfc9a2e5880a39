/* Stage 2 for `spyre-ci select` (select_front.h): catalogs, impact, and the conversion of impact
 * candidates into stage 3's candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "select_front.h"

/* The blob cache, backed by `cache_dir` when not NULL. */
static int open_cache(struct front *f, const char *cache_dir)
{
	int rc = selector_catalog_cache_create(&f->cache, 0);
	if (rc == 0 && cache_dir && (rc = selector_catalog_cache_set_dir(f->cache, cache_dir)) < 0)
		return err_prefix("--cache: ");
	return rc;
}

/* Every head test id, for stale drift. */
static int head_ids(struct front *f)
{
	if (!f->head->n_tests)
		return 0;
	f->ids = malloc(f->head->n_tests * sizeof *f->ids);
	if (!f->ids)
		return err_set(ERR_NOMEM, "catalog: %zu ids", f->head->n_tests);
	for (size_t i = 0; i < f->head->n_tests; i++)
		f->ids[i] = f->head->tests[i].id;
	return 0;
}

int front_catalogs(struct front *f, const char *repo_dir, const char *base, const char *head,
		   const char *cache_dir)
{
	int rc = open_cache(f, cache_dir);
	if (rc == 0)
		rc = selector_catalog_build(&f->head, repo_dir, head, f->cache);
	if (rc == 0)
		rc = selector_catalog_build(&f->base, repo_dir, base, f->cache);
	return rc ? rc : head_ids(f);
}

/* True when the catalog's file at `path` has a blob id that `id` (maybe abbreviated) names. */
static bool has_blob(const struct catalog *cat, const char *path, const char *id)
{
	const struct catalog_file *cf = selector_catalog_file(cat, path);
	size_t n = strlen(id);
	return cf && n >= 4 && strncmp(cf->blob_id, id, n) == 0;
}

/* Which side of the patch the work tree's HEAD is: the side more of the files' blob ids say
 * (the post-image when none say: `git diff HEAD~1 | select --diff -`). */
static bool head_is_preimage(const struct catalog *cur, const struct change_set *cs)
{
	size_t pre = 0, post = 0;
	for (size_t i = 0; i < cs->n_files; i++) {
		const struct file_change *fc = &cs->files[i];
		post += has_blob(cur, fc->new_path.bytes, fc->new_id);
		pre += has_blob(cur, fc->old_path.bytes, fc->old_id);
	}
	return pre > post;
}

/* The overrides that turn the catalog of one side of the patch into the other's: each file's
 * path on the far side gets its blob there (NULL for a side that does not exist or an id the
 * patch does not give: the file is then left out, the safe side), and a renamed file's path on
 * the near side is left out. */
static int far_side(struct catalog_override **out, size_t *n, const struct change_set *cs,
		    bool to_new)
{
	*out = calloc(2 * cs->n_files + 1, sizeof(**out));
	if (!*out)
		return err_set(ERR_NOMEM, "--diff: %zu files", cs->n_files);
	*n = 0;
	for (size_t i = 0; i < cs->n_files; i++) {
		const struct file_change *fc = &cs->files[i];
		const char *far = to_new ? fc->new_path.bytes : fc->old_path.bytes;
		const char *near = to_new ? fc->old_path.bytes : fc->new_path.bytes;
		const char *id = to_new ? fc->new_id : fc->old_id;
		bool absent = to_new ? fc->status == CHANGE_DELETED : fc->status == CHANGE_ADDED;
		if (strcmp(far, near) != 0 && fc->status != CHANGE_COPIED)
			(*out)[(*n)++] = (struct catalog_override){ near, NULL, true };
		(*out)[(*n)++] =
		    (struct catalog_override){ far, absent || !id[0] ? NULL : id, true };
	}
	return 0;
}

/* A new blob the repository lacks cannot be read: the head keeps HEAD's version of that file
 * and the base leaves it out instead, so that every test of it counts as new (the safe side).
 * Rebuilds f->head without the overrides it could not apply and builds f->base. */
static int keep_missing(struct front *f, const char *repo_dir, const struct catalog *cur,
			struct catalog_override *ov, size_t n)
{
	struct catalog_override *lost = calloc(n + 1, sizeof(*lost));
	if (!lost)
		return err_set(ERR_NOMEM, "--diff overrides");
	size_t n_lost = 0, n_kept = 0, missing;
	for (size_t i = 0; i < n; i++) {
		if (!ov[i].found)
			lost[n_lost++] = (struct catalog_override){ ov[i].path, NULL, true };
		else
			ov[n_kept++] = ov[i];
	}
	selector_catalog_destroy(f->head);
	f->head = NULL;
	int rc = selector_catalog_build_overrides(&f->head, repo_dir, cur, ov, n_kept, f->cache,
						  &missing);
	if (!rc)
		rc = selector_catalog_build_overrides(&f->base, repo_dir, cur, lost, n_lost,
						      f->cache, &missing);
	free(lost);
	return rc;
}

int front_catalogs_diff(struct front *f, const char *repo_dir, const struct change_set *cs,
			const char *cache_dir)
{
	int rc = open_cache(f, cache_dir);
	struct catalog *cur = NULL;
	if (rc == 0)
		rc = selector_catalog_build(&cur, repo_dir, "HEAD", f->cache);
	if (rc)
		return rc;
	bool pre = head_is_preimage(cur, cs);
	struct catalog_override *ov = NULL;
	size_t n = 0, missing = 0;
	rc = far_side(&ov, &n, cs, pre);
	if (!rc && !pre) {
		/* HEAD is the patch's result: the base is HEAD with the old blobs. */
		f->head = cur;
		rc = selector_catalog_build_overrides(&f->base, repo_dir, cur, ov, n, f->cache,
						      &missing);
		cur = NULL;
	} else if (!rc) {
		/* HEAD is what the patch applies to: the head is HEAD with the new blobs. */
		rc = selector_catalog_build_overrides(&f->head, repo_dir, cur, ov, n, f->cache,
						      &missing);
		if (!rc && missing)
			rc = keep_missing(f, repo_dir, cur, ov, n);
		if (!rc && !f->base) {
			f->base = cur;
			cur = NULL;
		}
	}
	selector_catalog_destroy(cur);
	free(ov);
	return rc ? rc : head_ids(f);
}

/* The body of a head test as the scanner saw it, or NULL. */
static const struct scan_function *body_of(const struct catalog *cat, const struct catalog_test *t)
{
	const struct catalog_file *cf = &cat->files[t->file];
	if (!cf->blob || !cf->blob->scan || t->function < 0 ||
	    (size_t)t->function >= cf->blob->scan->n_functions)
		return NULL;
	return &cf->blob->scan->functions[t->function];
}

static void fill_facts(struct front *f, struct select_candidate *c)
{
	const struct catalog_test *t = selector_catalog_test(f->head, c->id);
	if (!t)
		return;
	const struct scan_function *fn = body_of(f->head, t);
	c->opinfo = t->opset != CATALOG_OPSET_NONE;
	c->added = selector_catalog_test(f->base, c->id) == NULL;
	if (fn) {
		c->body_ops = fn->uses;
		c->n_body_ops = fn->n_uses;
	}
}

static int make_cands(struct front *f)
{
	const struct impact_result *r = f->impact;
	size_t nr = 0;
	for (size_t i = 0; i < r->n_candidates; i++)
		nr += r->candidates[i].n_reasons + (r->fallback ? 1 : 0);
	f->cands = calloc(r->n_candidates + 1, sizeof *f->cands);
	f->reasons = calloc(nr + 1, sizeof *f->reasons);
	if (!f->cands || !f->reasons)
		return err_set(ERR_NOMEM, "stage 2: %zu candidates", r->n_candidates);
	for (size_t i = 0; i < r->n_candidates; i++) {
		const struct impact_candidate *ic = &r->candidates[i];
		struct select_candidate *c = &f->cands[f->n_cands++];
		struct select_reason *first = &f->reasons[f->n_reasons];
		c->id = ic->id;
		c->reasons = first;
		for (size_t k = 0; k < ic->n_reasons; k++, f->n_reasons++) {
			struct select_reason *sr = &f->reasons[f->n_reasons];
			snprintf(sr->kind, sizeof sr->kind, "%s",
				 selector_impact_signal_name(ic->reasons[k].signal));
			sr->score = ic->reasons[k].score;
			sr->text = ic->reasons[k].detail; /* borrowed from the impact result */
		}
		if (r->fallback) {
			struct select_reason *sr = &f->reasons[f->n_reasons++];
			snprintf(sr->kind, sizeof sr->kind, "fallback");
			sr->score = 1.0;
			sr->text = r->fallback_reason;
		}
		c->n_reasons = (size_t)(&f->reasons[f->n_reasons] - first);
		fill_facts(f, c);
	}
	return 0;
}

int front_impact(struct front *f, const struct change_set *cs)
{
	/* A limit hit in stage 1 is the fallback inside selector_impact_run. */
	int rc = selector_impact_run(&f->impact, cs, f->base, f->head, NULL);
	if (rc < 0)
		return err_prefix("stage 2: ");
	return make_cands(f);
}

void front_finish(struct front *f)
{
	free(f->cands);
	free(f->reasons);
	free(f->ids);
	selector_impact_result_destroy(f->impact);
	selector_catalog_destroy(f->base);
	selector_catalog_destroy(f->head);
	selector_catalog_cache_destroy(f->cache);
	memset(f, 0, sizeof *f);
}
