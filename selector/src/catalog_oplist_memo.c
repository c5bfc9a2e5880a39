/* The op lists' memo of a catalog cache (catalog_internal.h): what an @ops argument evaluated to,
 * kept across the cache's catalogs, so that a head whose op lists' inputs did not change does
 * not evaluate them again (at PyTorch scale that is most of stage 2's time per commit).
 *
 * An evaluation reads the op database, the classes and modules of torch/testing/_internal/
 * (the "internal" files), the test file, and now and then a module elsewhere (or finds one
 * missing). So an answer is kept under
 *   - the internal files exactly: every (path, blob id) of the catalog under that folder,
 *     interned as one string per distinct set (a number in the key);
 *   - the test file's path and blob id, the class, the argument's text;
 * with the list of the other modules the evaluator had read (path and blob id, or a module name
 * that was missing), each checked against the catalog that asks. Entries are kept as (file,
 * index of the entry in the file's scan), never as pointers: a blob's scan may have been dropped
 * and read again since. Answers are interned by content (op_db is the answer of thousands of
 * test files). Anything that does not check out is evaluated afresh. The memo starts again when
 * it holds CATALOG_OPLIST_MEMO_MAX keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"

#define INTERNAL_DIR "torch/testing/_internal/"

struct memo_entry {
	uint32_t path; /* index in the body's paths */
	uint32_t idx;  /* of the entry in that file's scan */
};

/* An answer: kept once per distinct content, for the memo's life. */
struct memo_body {
	struct memo_body *next; /* another body of the same content hash */
	int status;
	char *why;
	struct memo_entry *entries;
	size_t n;
	char **paths; /* the distinct files the entries are in */
	size_t n_paths;
};

struct memo_read {
	char *name;    /* a path, or a module name when missing */
	char blob[41]; /* "" for a module that was missing */
};

struct oplist_memo {
	const struct memo_body *body;
	struct memo_read *reads;
	size_t n_reads;
};

bool catalog__internal_path(const char *path)
{
	return strncmp(path, INTERNAL_DIR, sizeof(INTERNAL_DIR) - 1) == 0;
}

static void body_free(struct memo_body *b)
{
	while (b) {
		struct memo_body *next = b->next;
		free(b->why);
		free(b->entries);
		for (size_t i = 0; i < b->n_paths; i++)
			free(b->paths[i]);
		free(b->paths);
		free(b);
		b = next;
	}
}

static void memo_free(struct oplist_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_reads; i++)
		free(m->reads[i].name);
	free(m->reads);
	free(m);
}

/* Frees a map's keys and, through `f`, its values. */
static void map_free(struct strmap *m, void (*f)(void *))
{
	for (size_t k = 0; k < m->cap; k++) {
		if (!m->slots[k].key)
			continue;
		if (f)
			f((void *)m->slots[k].value);
		free((char *)m->slots[k].key);
	}
	strmap_free(m);
}

static void memo_free_v(void *p)
{
	memo_free(p);
}

static void body_free_v(void *p)
{
	body_free(p);
}

void catalog__oplist_memo_clear(struct catalog_cache *c)
{
	map_free(&c->oplist_memo, memo_free_v);
	map_free(&c->oplist_bodies, body_free_v);
	map_free(&c->internal_sets, NULL);
	c->memo_generation++;
}

/* The number of the catalog's set of internal files in the cache (from 1), 0 on ERR_NOMEM. */
static intptr_t internal_set(const struct catalog *cat)
{
	struct catalog_priv *priv = cat->priv_;
	struct catalog_cache *c = priv->cache;
	if (priv->internal_set && priv->internal_generation == c->memo_generation)
		return priv->internal_set;
	size_t len = 1;
	for (size_t f = 0; f < cat->n_files; f++)
		if (catalog__internal_path(cat->files[f].path))
			len += strlen(cat->files[f].path) + 43;
	char *s = malloc(len), *w = s;
	if (!s)
		return 0;
	for (size_t f = 0; f < cat->n_files; f++) /* files are sorted by path: one text per set */
		if (catalog__internal_path(cat->files[f].path))
			w += sprintf(w, "%s %s\n", cat->files[f].path, cat->files[f].blob_id);
	*w = '\0';
	intptr_t id;
	if (strmap_get(&c->internal_sets, s, &id)) {
		free(s);
	} else {
		id = (intptr_t)c->internal_sets.n + 1;
		if (strmap_put(&c->internal_sets, s, id)) {
			free(s);
			return 0;
		}
	}
	priv->internal_set = id;
	priv->internal_generation = c->memo_generation;
	return id;
}

static char *memo_key(const struct catalog *cat, const struct catalog_file *test_file, int cls,
		      const char *arg)
{
	intptr_t set = internal_set(cat);
	if (!set)
		return NULL;
	size_t n = strlen(test_file->path) + strlen(arg) + 96;
	char *key = malloc(n);
	if (key)
		snprintf(key, n, "%ld|%s|%s|%d|%s", (long)set, test_file->path, test_file->blob_id,
			 cls, arg);
	return key;
}

/* Whether the modules an answer's evaluator read are the same in `cat`. */
static bool reads_hold(const struct catalog *cat, const struct oplist_memo *m)
{
	for (size_t i = 0; i < m->n_reads; i++) {
		const struct memo_read *r = &m->reads[i];
		if (!r->blob[0]) {
			if (catalog__file_of_module(cat, r->name))
				return false;
			continue;
		}
		const struct catalog_file *f = selector_catalog_file(cat, r->name);
		if (!f || !f->blob || !f->blob->scan || strcmp(f->blob_id, r->blob) != 0)
			return false;
	}
	return true;
}

static void list_free(struct catalog_op_list *l)
{
	if (l) {
		free(l->entries);
		free(l->why);
		free(l);
	}
}

int catalog__oplist_memo_get(const struct catalog *cat, const struct catalog_file *test_file,
			     int cls, const char *arg, struct catalog_op_list **out)
{
	*out = NULL;
	struct catalog_priv *priv = cat->priv_;
	if (!priv || !priv->cache || !test_file->path)
		return 0;
	char *key = memo_key(cat, test_file, cls, arg);
	if (!key)
		return err_set(ERR_NOMEM, "op lists");
	intptr_t v;
	int found = strmap_get(&priv->cache->oplist_memo, key, &v);
	free(key);
	const struct oplist_memo *m = found ? (const struct oplist_memo *)v : NULL;
	if (!m || !reads_hold(cat, m))
		return 0;
	const struct memo_body *b = m->body;
	const struct scan_file **scans = calloc(b->n_paths + 1, sizeof *scans);
	struct catalog_op_list *l = scans ? calloc(1, sizeof *l) : NULL;
	if (!l || (b->n && !(l->entries = calloc(b->n, sizeof *l->entries))) ||
	    (b->why && !(l->why = strdup(b->why)))) {
		list_free(l);
		free(scans);
		return err_set(ERR_NOMEM, "op lists");
	}
	for (size_t i = 0; i < b->n_paths; i++) {
		const struct catalog_file *f = selector_catalog_file(cat, b->paths[i]);
		scans[i] = f && f->blob ? f->blob->scan : NULL;
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct scan_file *sf = scans[b->entries[i].path];
		if (!sf || b->entries[i].idx >= sf->n_opinfos) { /* cannot be, given the reads */
			list_free(l);
			free(scans);
			return 0;
		}
		l->entries[l->n++] = &sf->opinfos[b->entries[i].idx];
	}
	free(scans);
	l->status = b->status;
	*out = l;
	return 1;
}

/* A new body of the answer (entries at `places`), or NULL (out of memory). */
static struct memo_body *body_make(const struct catalog_op_list *l,
				   const struct catalog__op_place *places)
{
	struct memo_body *b = calloc(1, sizeof *b);
	bool ok = b &&
		  (!l->n || ((b->entries = calloc(l->n, sizeof *b->entries)) &&
			     (b->paths = calloc(l->n, sizeof *b->paths)))) &&
		  (!l->why || (b->why = strdup(l->why)));
	for (size_t i = 0; ok && i < l->n; i++) {
		size_t k = b->n_paths;
		while (k > 0 && strcmp(b->paths[k - 1], places[i].path) != 0)
			k--;
		if (k == 0) {
			if (!(b->paths[b->n_paths] = strdup(places[i].path)))
				ok = false;
			k = ++b->n_paths;
		}
		b->entries[b->n++] = (struct memo_entry){ (uint32_t)(k - 1), places[i].idx };
	}
	if (!ok) {
		body_free(b);
		return NULL;
	}
	b->status = l->status;
	return b;
}

static bool body_same(const struct memo_body *a, const struct memo_body *b)
{
	if (a->status != b->status || a->n != b->n || a->n_paths != b->n_paths ||
	    !a->why != !b->why || (a->why && strcmp(a->why, b->why) != 0))
		return false;
	for (size_t i = 0; i < a->n_paths; i++)
		if (strcmp(a->paths[i], b->paths[i]) != 0)
			return false;
	return !a->n || memcmp(a->entries, b->entries, a->n * sizeof *a->entries) == 0;
}

/* The interned body equal to `b` (b freed), or b itself, now interned; NULL on ERR_NOMEM. */
static const struct memo_body *body_intern(struct catalog_cache *c, struct memo_body *b)
{
	uint64_t h = catalog__hash(b->entries, b->n * sizeof *b->entries, CATALOG_HASH_SEED);
	for (size_t i = 0; i < b->n_paths; i++)
		h = catalog__hash(b->paths[i], strlen(b->paths[i]) + 1, h);
	char hex[24];
	snprintf(hex, sizeof hex, "%016llx.%d", (unsigned long long)h, b->status);
	intptr_t v;
	if (strmap_get(&c->oplist_bodies, hex, &v)) {
		struct memo_body *first = (struct memo_body *)v;
		for (struct memo_body *x = first; x; x = x->next)
			if (body_same(x, b)) {
				body_free(b);
				return x;
			}
		b->next = first->next; /* same hash, other content: chained after the first */
		first->next = b;
		return b;
	}
	char *key = strdup(hex);
	if (!key || strmap_put(&c->oplist_bodies, key, (intptr_t)b)) {
		free(key);
		body_free(b);
		return NULL;
	}
	return b;
}

int catalog__oplist_memo_put(const struct catalog *cat, const struct catalog_file *test_file,
			     int cls, const char *arg, const struct catalog_op_list *l,
			     const struct catalog__op_place *places,
			     const struct catalog__op_read *reads, size_t n_reads)
{
	struct catalog_priv *priv = cat->priv_;
	if (!priv || !priv->cache || !test_file->path)
		return 0;
	struct catalog_cache *c = priv->cache;
	for (size_t i = 0; i < l->n; i++)
		if (!places[i].path)
			return 0; /* an entry of no module: cannot be; not kept */
	if (c->oplist_memo.n >= CATALOG_OPLIST_MEMO_MAX)
		catalog__oplist_memo_clear(c); /* start again: the sets' numbers too */
	char *key = memo_key(cat, test_file, cls, arg);
	struct oplist_memo *m = key ? calloc(1, sizeof *m) : NULL;
	struct memo_body *fresh = m ? body_make(l, places) : NULL;
	bool ok = fresh && (m->body = body_intern(c, fresh)) &&
		  (!n_reads || (m->reads = calloc(n_reads, sizeof *m->reads)));
	for (size_t i = 0; ok && i < n_reads; i++) {
		if (!(m->reads[i].name = strdup(reads[i].name))) {
			ok = false;
			break;
		}
		m->n_reads = i + 1;
		snprintf(m->reads[i].blob, sizeof m->reads[i].blob, "%s",
			 reads[i].blob ? reads[i].blob : "");
	}
	if (ok) {
		intptr_t old;
		if (strmap_get(&c->oplist_memo, key, &old)) { /* the same key, evaluated anew */
			if (strmap_put(&c->oplist_memo, key, (intptr_t)m) == 0) {
				memo_free((struct oplist_memo *)old);
				free(key); /* the map keeps its first copy of the key */
				return 0;
			}
		} else if (strmap_put(&c->oplist_memo, key, (intptr_t)m) == 0) {
			return 0;
		}
	}
	memo_free(m);
	free(key);
	return err_set(ERR_NOMEM, "op lists");
}
