/* Stage 2 for `spyre-ci select` (select_front.h): catalogs, impact, and the conversion of impact
 * candidates into stage 3's candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "select_front.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"

/* The blob cache, backed by `cache_dir` when not NULL. */
static int open_cache(struct front *f, const char *cache_dir)
{
	if (f->cache_borrowed)
		return 0;
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

/* Both sides of a unified diff are made from HEAD's catalog, file by file: the base gets each
 * changed file's old blob (or loses the path, for an added file, a rename's or a copy's new
 * path), the head its new blob. Whether HEAD is the diff's pre-image, its post-image or neither
 * (a patch applied in part) does not matter: the files the diff names are set on both sides,
 * the others are HEAD's on both. */

static bool zeros(const char *hex)
{
	return hex[strspn(hex, "0")] == 0;
}

/* The blob id of one side of a file change, or NULL when it cannot be known. git writes no
 * `index` line when the content is the same on both sides (a mode change, a whole rename or
 * copy): then the other side's id, else HEAD's file at either path. A file with hunks but no
 * ids (plain `diff -u`) changed in a way no blob names. */
static const char *side_id(const struct catalog *cur, const struct file_change *fc, bool new_side)
{
	const char *own = new_side ? fc->new_id : fc->old_id;
	const char *other = new_side ? fc->old_id : fc->new_id;
	if (own[0] && !zeros(own))
		return own;
	if (own[0] || fc->n_hunks || fc->binary)
		return NULL;
	if (other[0] && !zeros(other))
		return other;
	const struct catalog_file *cf = selector_catalog_file(cur, fc->new_path.bytes);
	if (!cf)
		cf = selector_catalog_file(cur, fc->old_path.bytes);
	return cf ? cf->blob_id : NULL;
}

struct sides {
	struct catalog_override *base, *head;
	size_t n_base, n_head;
	size_t *head_file; /* the file change each head override comes from */
};

static void put(struct catalog_override *v, size_t *n, const char *path, const char *blob)
{
	v[(*n)++] = (struct catalog_override){ path, blob, true };
}

/* The overrides of one file change; `lost`: its new blob is unknown or not in the repository,
 * so the head keeps HEAD's version of its paths and the base leaves them out (every test of
 * it then counts as new: the safe side). */
static void file_sides(struct sides *sd, const struct catalog *cur, const struct file_change *fc,
		       size_t i, bool lost)
{
	const char *o = fc->old_path.bytes, *nw = fc->new_path.bytes;
	bool moved = strcmp(o, nw) != 0;
	const char *old_id = fc->status == CHANGE_ADDED ? NULL : side_id(cur, fc, false);
	const char *new_id = fc->status == CHANGE_DELETED ? NULL : side_id(cur, fc, true);
	if (lost || (fc->status != CHANGE_DELETED && !new_id)) {
		put(sd->base, &sd->n_base, nw, NULL);
		if (moved && fc->status != CHANGE_COPIED)
			put(sd->base, &sd->n_base, o, NULL);
		return;
	}
	/* The base: the old content where it was, nothing where only the head has a file. */
	if (fc->status == CHANGE_COPIED || fc->status == CHANGE_ADDED || moved)
		put(sd->base, &sd->n_base, nw, NULL);
	if (fc->status != CHANGE_ADDED && fc->status != CHANGE_COPIED)
		put(sd->base, &sd->n_base, o, old_id); /* NULL (unknown): left out, safe */
	/* The head: the new content, nothing where a rename or a deletion left. */
	if ((moved && fc->status != CHANGE_COPIED) || fc->status == CHANGE_DELETED) {
		sd->head_file[sd->n_head] = i;
		put(sd->head, &sd->n_head, o, NULL);
	}
	if (fc->status != CHANGE_DELETED) {
		sd->head_file[sd->n_head] = i;
		put(sd->head, &sd->n_head, nw, new_id);
	}
}

static int make_sides(struct sides *sd, const struct catalog *cur, const struct change_set *cs,
		      const bool *lost)
{
	sd->n_base = sd->n_head = 0;
	for (size_t i = 0; i < cs->n_files; i++)
		file_sides(sd, cur, &cs->files[i], i, lost[i]);
	return 0;
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
	size_t n = 2 * cs->n_files + 1, missing = 0;
	struct sides sd = { calloc(n, sizeof(*sd.base)), calloc(n, sizeof(*sd.head)), 0, 0,
			    calloc(n, sizeof(*sd.head_file)) };
	bool *lost = calloc(cs->n_files + 1, sizeof(*lost));
	if (!sd.base || !sd.head || !sd.head_file || !lost)
		rc = err_set(ERR_NOMEM, "--diff: %zu files", cs->n_files);
	if (!rc)
		rc = make_sides(&sd, cur, cs, lost);
	if (!rc)
		rc = selector_catalog_build_overrides(&f->head, repo_dir, cur, sd.head, sd.n_head,
						      f->cache, &missing);
	if (!rc && missing) {
		/* A new blob the repository lacks (a patch not yet fetched): that file's head
		 * keeps HEAD's version, its base leaves it out. */
		for (size_t k = 0; k < sd.n_head; k++)
			if (!sd.head[k].found)
				lost[sd.head_file[k]] = true;
		selector_catalog_destroy(f->head);
		f->head = NULL;
		rc = make_sides(&sd, cur, cs, lost);
		if (!rc)
			rc = selector_catalog_build_overrides(&f->head, repo_dir, cur, sd.head,
							      sd.n_head, f->cache, &missing);
	}
	if (!rc)
		rc = selector_catalog_build_overrides(&f->base, repo_dir, cur, sd.base, sd.n_base,
						      f->cache, &missing);
	selector_catalog_destroy(cur);
	free(sd.base);
	free(sd.head);
	free(sd.head_file);
	free(lost);
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
	if (!f->cache_borrowed)
		selector_catalog_cache_destroy(f->cache);
	memset(f, 0, sizeof *f);
}

static const struct select_candidate *find_candidate(const struct front *f, const char *id)
{
	for (size_t i = 0; i < f->n_cands; i++)
		if (strcmp(f->cands[i].id, id) == 0)
			return &f->cands[i];
	return NULL;
}

int front_expand_scheduled(const struct front *f, const struct select_report *rep,
			   const struct spec_set *set, const struct spec_resolver *r,
			   const char *tier, struct spec_case_list *list)
{
	for (size_t i = 0; i < rep->n_tests; i++) {
		const struct select_test *t = &rep->tests[i];
		const struct select_candidate *c = find_candidate(f, t->id);
		if (t->fate != SELECT_SCHEDULED || !c)
			continue;
		const char *sep = strstr(t->id, "::");
		char path[PATH_TEXT_MAX];
		snprintf(path, sizeof(path), "%.*s", sep ? (int)(sep - t->id) : 0, t->id);
		struct selector_opdb db;
		if (selector_opdb_for(&db, f->head, t->id) < 0)
			return err_prefix("kernel cases of '%s': ", t->id);
		struct spec_case_test ct = {
			.test_id = t->id,
			.tier = tier,
			.opinfo = c->opinfo,
			.family = testspecs_family_for_path(path),
			.body_ops = c->body_ops,
			.n_body_ops = c->n_body_ops,
			.opinfo_of = selector_opinfo_of,
			.runs_op = selector_runs_op,
			.opinfo_ctx = &db,
		};
		struct spec_expand_result res;
		int rc = testspecs_cases_expand(list, r, set, &ct, &res);
		selector_opdb_finish(&db);
		if (rc)
			return err_prefix("kernel cases of '%s': ", t->id);
	}
	return 0;
}

int front_history_load(const char *path, json_t **json, struct select_history *h)
{
	char *data = NULL;
	size_t len = 0;
	int rc = fs_read_file(&data, &len, path, SELECT_HISTORY_MAX);
	if (rc < 0)
		return err_prefix("--history %s: ", path);
	*json = jx_loadb(data, len, SELECT_HISTORY_MAX);
	free(data);
	if (!*json)
		return err_prefix("--history %s", path);
	if (!json_is_object(*json))
		return err_set(ERR_INVAL, "--history %s: not a JSON object of test ids", path);
	h->v = calloc(json_object_size(*json) + 1, sizeof *h->v);
	if (!h->v)
		return err_set(ERR_NOMEM, "--history %s", path);
	const char *id;
	json_t *e;
	json_object_foreach(*json, id, e)
	{
		json_t *secs = json_object_get(e, "mean_seconds");
		if (!json_is_object(e) || (secs && !json_is_number(secs)))
			return err_set(ERR_INVAL,
				       "--history %s: '%s': want {failed_before, flaky, "
				       "mean_seconds}",
				       path, id);
		h->v[h->n++] = (struct select_history_entry){
			.id = id,
			.failed_before = jx_get_bool(e, "failed_before", false),
			.flaky = jx_get_bool(e, "flaky", false),
			.mean_seconds = secs ? json_number_value(secs) : 0,
		};
	}
	selector_history_sort(h);
	return 0;
}
