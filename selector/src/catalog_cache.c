/* The blob cache of the catalogs: each blob of interest read (scanned, parsed) once per cache,
 * keyed by blob id and kind (and path for torch/ sources), optionally backed by a directory;
 * a test file's tests extracted once per path and blob; whole catalogs kept by tree id; the
 * stage 2 source graphs kept for later heads; and the sweep that drops what nothing uses. */
#include <errno.h>
#include <git2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"

#define CACHE_KEY_MAX 64 /* a blob cache key: 40 hex + kind + "-" + 16 hex (the path's hash) */

/* The tests of a test blob at one path (ids name the path), file index 0. */
struct test_block {
	struct test_block *next;
	const char *path; /* the entry's arena */
	struct catalog_test *tests;
	uint32_t *order; /* tests by id */
	size_t n;
};

struct cache_entry {
	char key[CACHE_KEY_MAX];   /* hex blob id + kind digit [+ "-" + path hash] */
	struct test_block *blocks; /* test files: their tests, by path */
	struct catalog_blob blob;
	struct arena arena;
	bool from_disk; /* blob.scan lives in arena (not scan_file_destroy's) */
	bool marked;    /* in use by a live catalog or source graph (during a sweep) */
};

static void entry_free(struct cache_entry *e)
{
	for (struct test_block *b = e->blocks; b; b = b->next) {
		free(b->tests);
		free(b->order);
	}
	if (!e->from_disk)
		scan_file_destroy(e->blob.scan);
	scan__arena_free(&e->arena);
	free(e);
}

int selector_catalog_cache_create(struct catalog_cache **out, size_t max_entries)
{
	struct catalog_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return err_set(ERR_NOMEM, "catalog cache");
	c->max = max_entries ? max_entries : CATALOG_CACHE_MAX;
	c->sweep_at = c->max < CATALOG_CACHE_SWEEP_MIN ? c->max : CATALOG_CACHE_SWEEP_MIN;
	c->max_trees = CATALOG_TREES_MAX;
	*out = c;
	return 0;
}

void selector_catalog_cache_destroy(struct catalog_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_trees; i++)
		selector_catalog_destroy(c->trees[i].cat);
	/* Catalogs a caller still holds forget the cache (their blobs are gone with it: such a
	 * catalog may only be destroyed). */
	for (struct catalog_priv *p = c->live, *next; p; p = next) {
		next = p->live_next;
		p->cache = NULL;
		p->live_prev = p->live_next = NULL;
	}
	for (size_t i = 0; i < c->n_sources; i++)
		impact__source_release(c->sources[i]);
	catalog__oplist_memo_clear(c);
	for (size_t i = 0; i < c->n; i++)
		entry_free(c->entries[i]);
	free(c->entries);
	strmap_free(&c->map);
	free(c->dir);
	free(c);
}

/* The entry a blob handed out by the cache belongs to. */
static struct cache_entry *entry_of(const struct catalog_blob *b)
{
	return (struct cache_entry *)(void *)((char *)b - offsetof(struct cache_entry, blob));
}

/* Drops the entries that no live catalog (nor the source graphs stage 2 keeps) uses: without
 * it a daemon's cache would grow by every blob it ever saw. Marks by pointer (what the
 * catalogs and graphs hold), indexes the survivors anew, and only then frees the others: out
 * of memory, nothing is freed. The next sweep comes when the cache has grown by a quarter. */
static void sweep(struct catalog_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		c->entries[i]->marked = false;
	for (const struct catalog_priv *p = c->live; p; p = p->live_next) {
		const struct catalog *cat = p->cat;
		for (size_t f = 0; f < cat->n_files; f++)
			entry_of(cat->files[f].blob)->marked = true;
		const struct impact_source *src = impact__graph_source(p->graph);
		for (size_t f = 0; src && f < impact__source_files(src); f++)
			entry_of(impact__source_blob(src, f))->marked = true;
	}
	for (size_t i = 0; i < c->n_sources; i++)
		for (size_t f = 0; f < impact__source_files(c->sources[i]); f++)
			entry_of(impact__source_blob(c->sources[i], f))->marked = true;
	struct strmap map = { 0 };
	for (size_t i = 0; i < c->n; i++)
		if (c->entries[i]->marked &&
		    strmap_put(&map, c->entries[i]->key, (intptr_t)c->entries[i])) {
			strmap_free(&map);
			err_clear();
			c->sweep_at = c->n + CATALOG_CACHE_SWEEP_MIN; /* out of memory: later */
			return;
		}
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->entries[i]->marked)
			c->entries[k++] = c->entries[i];
		else
			entry_free(c->entries[i]);
	}
	c->evicted += c->n - k;
	c->n = k;
	strmap_free(&c->map);
	c->map = map;
	size_t step =
	    c->n / 4 > CATALOG_CACHE_SWEEP_MIN / 4 ? c->n / 4 : CATALOG_CACHE_SWEEP_MIN / 4;
	size_t next = c->n + step > CATALOG_CACHE_SWEEP_MIN ? c->n + step : CATALOG_CACHE_SWEEP_MIN;
	c->sweep_at = next < c->max ? next : c->max;
}

size_t selector_catalog_cache_size(const struct catalog_cache *c)
{
	return c->n;
}

size_t selector_catalog_cache_evicted(const struct catalog_cache *c)
{
	return c->evicted;
}

int selector_catalog_cache_set_dir(struct catalog_cache *c, const char *dir)
{
	free(c->dir);
	c->dir = NULL;
	if (!dir)
		return 0;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "catalog cache: mkdir %s", dir);
	if (!(c->dir = strdup(dir)))
		return err_set(ERR_NOMEM, "catalog cache dir");
	return 0;
}

size_t selector_catalog_cache_disk_hits(const struct catalog_cache *c)
{
	return c->disk_hits;
}

size_t selector_catalog_cache_scans(const struct catalog_cache *c)
{
	return c->scans;
}

static bool kept_source(const struct catalog_cache *c, const struct impact_source *s)
{
	for (size_t i = 0; i < c->n_sources; i++)
		if (c->sources[i] == s)
			return true;
	return false;
}

void catalog__cache_drop_graphs(struct catalog_cache *c, const struct catalog_priv *keep)
{
	for (struct catalog_priv *p = c->live; p; p = p->live_next) {
		if (p == keep || !p->graph || kept_source(c, impact__graph_source(p->graph)))
			continue;
		impact__graph_destroy(p->graph);
		p->graph = NULL;
	}
}

struct impact_source *catalog__cache_source(const struct catalog_cache *c, size_t i)
{
	return i < c->n_sources ? c->sources[i] : NULL;
}

void catalog__cache_set_source(struct catalog_cache *c, struct impact_source *s)
{
	size_t i = 0;
	while (i < c->n_sources && c->sources[i] != s)
		i++;
	if (i == c->n_sources) { /* new: the least recently used one goes */
		if (c->n_sources == CATALOG_SOURCES_MAX)
			impact__source_release(c->sources[--c->n_sources]);
		i = c->n_sources++;
	} else {
		impact__source_release(s); /* kept already: the caller's reference is not needed */
	}
	memmove(c->sources + 1, c->sources, i * sizeof(*c->sources));
	c->sources[0] = s;
}

size_t selector_catalog_cache_tree_hits(const struct catalog_cache *c)
{
	return c->tree_hits;
}

size_t selector_catalog_cache_derived(const struct catalog_cache *c)
{
	return c->derived;
}

void selector_catalog_cache_set_trees(struct catalog_cache *c, size_t n)
{
	c->max_trees = n < CATALOG_TREES_MAX ? n : CATALOG_TREES_MAX;
	while (c->n_trees > c->max_trees) {
		selector_catalog_destroy(c->trees[0].cat);
		memmove(c->trees, c->trees + 1, (c->n_trees - 1) * sizeof(*c->trees));
		c->n_trees--;
	}
}

/* The cached catalog of tree `id` with one more reference, or NULL. */
struct catalog *catalog__tree_get(struct catalog_cache *c, const char *id)
{
	for (size_t i = 0; i < c->n_trees; i++) {
		if (strcmp(c->trees[i].id, id) == 0) {
			((struct catalog_priv *)c->trees[i].cat->priv_)->refs++;
			c->tree_hits++;
			return c->trees[i].cat;
		}
	}
	return NULL;
}

/* Keeps a reference to `cat` in the cache as the catalog of tree `id`, dropping the oldest one
 * when full. */
void catalog__tree_put(struct catalog_cache *c, const char *id, struct catalog *cat)
{
	if (!c->max_trees)
		return;
	selector_catalog_cache_set_trees(c, c->max_trees - 1);
	c->max_trees++;
	((struct catalog_priv *)cat->priv_)->refs++;
	memcpy(c->trees[c->n_trees].id, id, 41);
	c->trees[c->n_trees++].cat = cat;
}

static int blob_parse(struct cache_entry *e, enum catalog_file_kind kind, const char *path,
		      const char *module, const char *data, size_t len)
{
	switch (kind) {
	case CATALOG_TEST:
	case CATALOG_TEST_HELPER:
	case CATALOG_SOURCE:
		if (len > PYTHON_FILE_MAX) { /* left unscanned: too big to reason about */
			log_warn("scan: %s is %zu bytes, over the bound of %zu: not scanned", path,
				 len, (size_t)PYTHON_FILE_MAX);
			return 0;
		}
		return selector_scan(&e->blob.scan, path, module, data, len);
	case CATALOG_YAML:
		return catalog__parse_yaml(&e->blob, &e->arena, path, data, len);
	case CATALOG_CPP:
		return catalog__parse_cpp(&e->blob, &e->arena, data, len);
	}
	return err_set(ERR_INVAL, "%s: unknown kind", path);
}

/* Reads and parses the blob from the repository. */
static int blob_read(struct cache_entry *e, git_repository *repo, const git_oid *oid,
		     enum catalog_file_kind kind, const char *path, const char *module)
{
	git_blob *blob;
	if (git_blob_lookup(&blob, repo, oid) != 0)
		return err_set(ERR_GENERIC, "%s: %s", path, git_error_last()->message);
	int rc = blob_parse(e, kind, path, module, git_blob_rawcontent(blob),
			    (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return rc;
}

/* The cache key of a blob read as `kind`: its id and the kind, and for a torch/ source file the
 * hash of its path, which the scan depends on (relative imports resolve against its module and
 * whether it is a package's __init__.py: the same blob at torch/a/x.py, torch/b/x.py or
 * torch/x/__init__.py scans differently). */
static void cache_key(char key[CACHE_KEY_MAX], const git_oid *oid, enum catalog_file_kind kind,
		      const char *path)
{
	git_oid_tostr(key, 41, oid);
	key[40] = (char)('0' + kind);
	key[41] = 0;
	if (kind == CATALOG_SOURCE)
		snprintf(key + 41, CACHE_KEY_MAX - 41, "-%016llx",
			 (unsigned long long)catalog__hash(path, strlen(path), CATALOG_HASH_SEED));
}

int catalog__cache_get(const struct catalog_blob **out, struct catalog_cache *c,
		       git_repository *repo, const git_oid *oid, enum catalog_file_kind kind,
		       const char *path, const char *module)
{
	char key[CACHE_KEY_MAX];
	cache_key(key, oid, kind, path);
	intptr_t v;
	if (strmap_get(&c->map, key, &v)) {
		*out = &((struct cache_entry *)v)->blob;
		return 0;
	}
	if (c->n >= c->sweep_at)
		sweep(c);
	if (c->n >= c->max)
		return err_set(ERR_LIMIT, "catalog cache: more than %zu blobs in use", c->max);
	struct cache_entry *e = calloc(1, sizeof(*e));
	void *p = scan__grow(c->entries, c->n, &c->cap, sizeof(*c->entries));
	if (!e || !p) {
		free(e);
		return err_set(ERR_NOMEM, "catalog cache entry");
	}
	c->entries = p;
	memcpy(e->key, key, sizeof(key));
	int rc = c->dir ? catalog__disk_load(&e->blob, &e->arena, c->dir, e->key) : 0;
	e->from_disk = rc == 1;
	if (rc == 0)
		rc = blob_read(e, repo, oid, kind, path, module);
	if (rc == 0 && c->dir && c->disk_writes < CATALOG_DISK_WRITES_MAX) {
		c->disk_writes++;
		(void)catalog__disk_store(&e->blob, c->dir, e->key); /* an optimisation only */
	}
	if (rc >= 0)
		rc = strmap_put(&c->map, e->key, (intptr_t)e);
	if (rc) {
		if (!e->from_disk)
			scan_file_destroy(e->blob.scan);
		scan__arena_free(&e->arena);
		free(e);
		return rc;
	}
	c->entries[c->n++] = e;
	if (e->from_disk)
		c->disk_hits++;
	else
		c->scans++;
	*out = &e->blob;
	return 0;
}

static int cmp_by_id(const void *a, const void *b)
{
	return strcmp((*(const struct catalog_test *const *)a)->id,
		      (*(const struct catalog_test *const *)b)->id);
}

int catalog__cached_file_tests(struct catalog *cat, size_t *cap, size_t file,
			       const uint32_t **order)
{
	const struct catalog_file *cf = &cat->files[file];
	struct cache_entry *e = entry_of(cf->blob);
	struct test_block *b = e->blocks;
	while (b && strcmp(b->path, cf->path) != 0)
		b = b->next;
	if (!b) {
		b = scan__alloc(&e->arena, sizeof(*b));
		const char *path = scan__strndup(&e->arena, cf->path, strlen(cf->path));
		if (!b || !path)
			return err_set(ERR_NOMEM, "catalog tests of %s", cf->path);
		struct catalog one = { .files = (struct catalog_file *)cf, .n_files = 1 };
		size_t cap1 = 0;
		int rc = catalog__file_tests(&one, &cap1, &e->arena, 0);
		uint32_t *ord = NULL;
		const struct catalog_test **by = NULL;
		if (!rc && one.n_tests &&
		    (!(ord = malloc(one.n_tests * sizeof(*ord))) ||
		     !(by = malloc(one.n_tests * sizeof(*by)))))
			rc = err_set(ERR_NOMEM, "catalog tests of %s", cf->path);
		if (rc) {
			free(ord);
			free(one.tests);
			return rc;
		}
		for (size_t i = 0; i < one.n_tests; i++)
			by[i] = &one.tests[i];
		if (one.n_tests > 1)
			qsort(by, one.n_tests, sizeof(*by), cmp_by_id);
		for (size_t i = 0; i < one.n_tests; i++)
			ord[i] = (uint32_t)(by[i] - one.tests);
		free(by);
		*b = (struct test_block){ e->blocks, path, one.tests, ord, one.n_tests };
		e->blocks = b;
	}
	if (cat->n_tests + b->n > *cap) {
		size_t want = *cap ? *cap : 1024;
		while (want < cat->n_tests + b->n)
			want *= 2;
		void *p = realloc(cat->tests, want * sizeof(*cat->tests));
		if (!p)
			return err_set(ERR_NOMEM, "catalog: %zu tests", want);
		cat->tests = p;
		*cap = want;
	}
	for (size_t i = 0; i < b->n; i++) {
		cat->tests[cat->n_tests + i] = b->tests[i];
		cat->tests[cat->n_tests + i].file = file;
	}
	cat->n_tests += b->n;
	*order = b->order;
	return 0;
}

size_t selector_catalog_cache_oplist_hits(const struct catalog_cache *c)
{
	return c->oplist_memo_hits;
}

size_t selector_catalog_cache_oplists_kept(const struct catalog_cache *c)
{
	return c->oplist_memo.n;
}
