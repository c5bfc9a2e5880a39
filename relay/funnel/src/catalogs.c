/* The catalogs of a selection's two sides (funnel_int.h: funnel__catalogs): for a git range
 * the catalogs of its base and head revisions; for a unified diff both sides laid over the
 * repository's HEAD, file by file, from the blobs the diff's `index` lines name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "funnel_int.h"

int funnel__catalog_ids(const char ***out, const struct catalog *cat)
{
	*out = NULL;
	if (!cat->n_tests)
		return 0;
	*out = malloc(cat->n_tests * sizeof **out);
	if (!*out)
		return err_set(ERR_NOMEM, "catalog: %zu ids", cat->n_tests);
	for (size_t i = 0; i < cat->n_tests; i++)
		(*out)[i] = cat->tests[i].id;
	return 0;
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

static int diff_catalogs(struct funnel_front *f, const char *repo_dir, const struct change_set *cs,
			 struct catalog_cache *cache)
{
	struct catalog *cur = NULL;
	int rc = selector_catalog_build(&cur, repo_dir, "HEAD", cache);
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
						      cache, &missing);
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
							      sd.n_head, cache, &missing);
	}
	if (!rc)
		rc = selector_catalog_build_overrides(&f->base, repo_dir, cur, sd.base, sd.n_base,
						      cache, &missing);
	selector_catalog_destroy(cur);
	free(sd.base);
	free(sd.head);
	free(sd.head_file);
	free(lost);
	return rc;
}

int funnel__catalogs(struct funnel_front *f, const struct funnel_change *ch,
		     struct catalog_cache *cache)
{
	int rc;
	if (ch->diff_path) {
		rc = diff_catalogs(f, ch->repo, f->cs, cache);
	} else {
		rc = selector_catalog_build(&f->head, ch->repo, ch->head, cache);
		if (rc == 0)
			rc = selector_catalog_build(&f->base, ch->repo, ch->base, cache);
	}
	return rc ? rc : funnel__catalog_ids(&f->ids, f->head);
}
