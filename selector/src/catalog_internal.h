/* Private to the catalog and impact analysis: a string-keyed hash map (open addressing, keys not
 * owned), the parsers of native_functions.yaml and C++ kernels, and the catalog's private part. */
#ifndef SELECTOR_CATALOG_INTERNAL_H
#define SELECTOR_CATALOG_INTERNAL_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "common/limits.h"
#include "scan_internal.h"
#include "selector/catalog.h"

struct strmap_slot {
	const char *key;
	uint64_t hash;
	intptr_t value;
};

struct strmap {
	struct strmap_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

uint64_t catalog__hash(const void *data, size_t len, uint64_t h);
#define CATALOG_HASH_SEED 1469598103934665603ull

/* 0, or ERR_NOMEM. Replaces the value of an existing key. */
int strmap_put(struct strmap *m, const char *key, intptr_t value);
/* 1 and *value when found, else 0. `value` may be NULL. */
int strmap_get(const struct strmap *m, const char *key, intptr_t *value);
void strmap_free(struct strmap *m);

/* Whether a path is a file the catalog reads, and as what: test_*.py under test/ (other .py there
 * as test helpers), .py under torch/,
 * native_functions.yaml, aten/src/ATen/native/ C++ sources (catalog.c). */
bool catalog__file_kind(const char *path, enum catalog_file_kind *kind);

/* The tests of test file `file` of `cat` appended to cat->tests, ids and op name lists in `a`
 * (catalog_tests.c). */
int catalog__file_tests(struct catalog *cat, size_t *cap, struct arena *a, size_t file);
/* The same through the cache (catalog.c): a file's tests depend only on its path and blob, so
 * they are extracted once into the blob's cache entry and copied from there (their strings stay
 * the entry's: valid while a live catalog uses the blob). *order: the file's tests sorted by id
 * (indexes from the first one appended). */
int catalog__cached_file_tests(struct catalog *cat, size_t *cap, size_t file,
			       const uint32_t **order);

/* Whether decorator d (of a function of sf) is @ops(...): by its name, or by a module-level
 * alias `NAME = partial(ops, ...)` whose canonical text goes to *partial (else NULL). */
bool catalog__ops_decorator(const struct scan_file *sf, const struct scan_decorator *d,
			    const char **partial);

/* The formatted names of the op database entries an @ops argument (its source text) selects
 * in test_file (in the body of its class cls, or -1), evaluated as Python builds the op lists
 * (catalog_oplists.c), in a malloc'ed array of malloc'ed strings: 1 exact, 2 a superset (*why,
 * malloc'ed, says why), 0 not resolvable, or ERR_NOMEM. */
int catalog__op_variants(const struct catalog *cat, const struct catalog_file *test_file, int cls,
			 const char *arg, char ***names, size_t *n, char **why);

/* Parsers of one blob's bytes into arena memory. */
int catalog__parse_yaml(struct catalog_blob *b, struct arena *a, const char *path, const char *data,
			size_t len);
int catalog__parse_cpp(struct catalog_blob *b, struct arena *a, const char *data, size_t len);

/* The on-disk cache (catalog_disk.c): one file per blob and kind, DIR/xx/<rest of the key>.
 * load: 1 and the blob filled from arena memory, 0 when absent or not readable (a miss), or
 * ERR_NOMEM. store: 0, or a negative code (the caller may ignore it: the cache is an
 * optimisation). */
int catalog__disk_load(struct catalog_blob *b, struct arena *a, const char *dir, const char *key);
int catalog__disk_store(const struct catalog_blob *b, const char *dir, const char *key);

struct impact_graph;
struct impact_source;
struct impact_msg_index;
/* Frees the message signal's index of one catalog (impact_message.c). NULL: nothing. */
void impact__msg_index_destroy(struct impact_msg_index *k);
/* Frees stage 2's structures derived from one catalog (impact_graph.c). NULL: nothing. */
void impact__graph_destroy(struct impact_graph *g);
/* Drops a reference to a source graph (impact_graph.c). NULL: nothing. */
void impact__source_release(struct impact_source *s);
/* For the cache's sweep: a graph's source graph (NULL for NULL), and the blobs of the source
 * files whose scans a source graph points into. */
const struct impact_source *impact__graph_source(const struct impact_graph *g);
size_t impact__source_files(const struct impact_source *s);
const struct catalog_blob *impact__source_blob(const struct impact_source *s, size_t i);

/* The source graphs stage 2 built for catalogs of this cache, the CATALOG_SOURCES_MAX most
 * recently used (i = 0 the latest; NULL past them), so that a head whose base never needed a
 * graph can still share one, and heads on two bases (pull requests) each find theirs. set
 * takes a reference to `s` and makes it the latest (the least recently used one is dropped). */
struct impact_source *catalog__cache_source(const struct catalog_cache *c, size_t i);
void catalog__cache_set_source(struct catalog_cache *c, struct impact_source *s);
struct catalog_priv;
/* Frees the stage 2 graphs of the cache's live catalogs (but `keep`'s) that are not laid over
 * a source graph it keeps: derived data, rebuilt on demand, and each would keep an old source
 * graph (~100 MB at PyTorch scale) alive. */
void catalog__cache_drop_graphs(struct catalog_cache *c, const struct catalog_priv *keep);

struct catalog_priv {
	struct arena arena;
	size_t refs;      /* references: the caller's of selector_catalog_build, the cache's */
	char tree_id[41]; /* the root tree, "" for the empty tree */
	struct catalog_cache *cache; /* the cache it was built through (outlives it) */
	struct catalog *cat;         /* the catalog this is the private part of */
	struct catalog_priv *live_prev, *live_next; /* the cache's live catalogs */
	/* Stage 2's import aliases, call graph and tests' resolved uses, built lazily by the first
	 * impact run at this head (impact_graph.c), freed with the catalog or earlier when the
	 * cache moves to a newer source graph (catalog__cache_drop_graphs). Not thread-safe. */
	struct impact_graph *graph;
	struct impact_msg_index *msg_index; /* the message signal's, built by its first need */
	const struct catalog_test **by_id;  /* sorted by id */
	struct strmap
	    op_infos; /* op name, name.variant, formatted name -> its entry (catalog_opinfo.c) */
	struct ol *oplists;     /* the op lists' evaluator, built by its first need */
	struct strmap op_lists; /* "file:class:argument" -> struct catalog_op_list * */
	struct strmap modules;  /* module -> its file (the first of the catalog's), by first need */
	intptr_t internal_set;  /* its internal files' number in the cache's op list memo, 0 */
	size_t internal_generation; /* the memo's generation that number is of */
};

/* The op database entries an @ops argument selects (catalog_oplists.c). */
struct catalog_op_list {
	int status; /* 1 exact, 2 a superset (why says why), 0 not resolvable */
	const struct scan_opinfo **entries; /* in list order, each once */
	size_t n;
	char *why;
};

/* The entries of @ops(arg) in test_file's class cls (-1: at module level), evaluated as Python
 * builds the op lists; the answer is the catalog's (kept, for its life, per argument). 0 or
 * ERR_NOMEM. */
int catalog__op_list(const struct catalog *cat, const struct catalog_file *test_file, int cls,
		     const char *arg, const struct catalog_op_list **out);
void catalog__oplists_free(struct catalog_priv *priv);
/* The file of Python module `module` (its first, with a scan), NULL when the catalog has none. */
const struct catalog_file *catalog__file_of_module(const struct catalog *cat, const char *module);

/* The op lists' memo across a cache's catalogs (catalog_oplist_memo.c). Whether `path` is one of
 * the internal files (torch/testing/_internal/) every answer depends on. get: 1 and a new list
 * (the caller's) when an answer kept for the same inputs holds in `cat`, 0 when none does, or
 * ERR_NOMEM. put: keeps answer `l`, its entries' places (file path, index in the file's scan)
 * and the modules outside the internal files its evaluator read (blob NULL: found missing); 0
 * or ERR_NOMEM. clear: drops every answer. */
struct catalog__op_place {
	const char *path;
	uint32_t idx;
};
struct catalog__op_read {
	const char *name; /* a path, or a missing module's name */
	const char *blob; /* its blob id, NULL when missing */
};
bool catalog__internal_path(const char *path);
int catalog__oplist_memo_get(const struct catalog *cat, const struct catalog_file *test_file,
			     int cls, const char *arg, struct catalog_op_list **out);
int catalog__oplist_memo_put(const struct catalog *cat, const struct catalog_file *test_file,
			     int cls, const char *arg, const struct catalog_op_list *l,
			     const struct catalog__op_place *places,
			     const struct catalog__op_read *reads, size_t n_reads);
void catalog__oplist_memo_clear(struct catalog_cache *c);
/* Attribute `attr` of op database entry `entry` as PyTorch's constructors make it (its own
 * argument, what a Python reference inherits from the entry it names, its class's default), as
 * source text; NULL when not known or the catalog keeps no op lists. */
const char *catalog__entry_attr(const struct catalog *cat, const struct scan_opinfo *entry,
				const char *attr);
/* What an entry's skips= and decorators= DecorateInfos do to test `cls`::`test` on the device
 * under test (device_type None), into out's skip, xfail, atol and rtol (catalog_decorate.c);
 * out->skip_why points into `why` (the first skip's decorator), NULL when none. */
struct spec_opinfo;
void catalog__entry_decorations(const struct scan_opinfo *o, const char *cls, const char *test,
				struct spec_opinfo *out, char *why, size_t why_size);
/* A test function's own toleranceOverride / precisionOverride, per dtype (the larger kept). */
void catalog__test_tolerances(const struct scan_function *fn, double *atol, double *rtol);
/* The same for a catalog test's @ops decorator; *out NULL when it has none it can read. */
int catalog__test_op_list(const struct catalog *cat, const struct catalog_test *t,
			  const struct catalog_op_list **out);

/* Adds the op database file's entries to the catalog's index of them (catalog_opinfo.c). */
int catalog__index_opinfos(struct catalog *cat, const struct catalog_file *cf);

/* ---- the blob cache (catalog_cache.c), shared with the catalog builds (catalog.c) ---- */
struct cache_entry;
struct catalog_cache {
	struct strmap map; /* key -> struct cache_entry * */
	struct cache_entry **entries;
	size_t n, cap, max;
	size_t scans;
	size_t sweep_at; /* entries at which unused ones are dropped next */
	size_t evicted;
	struct catalog_priv *live; /* every catalog built through the cache and not yet freed */
	char *dir;                 /* the on-disk cache, or NULL */
	size_t disk_hits, disk_writes;
	struct tree_slot {
		char id[41];
		struct catalog *cat; /* a reference; two slots may hold the same catalog */
	} trees[CATALOG_TREES_MAX];  /* whole catalogs by root tree id, oldest first */
	size_t n_trees, max_trees;
	size_t tree_hits;
	size_t derived; /* catalogs made from a kept one and a tree diff, not a walk */
	/* stage 2's latest source graphs (references), most recently used first */
	struct impact_source *sources[CATALOG_SOURCES_MAX];
	size_t n_sources;
	/* the op lists' memo (catalog_oplist_memo.c): key -> answer, the internal file sets
	 * (text -> number), the answers by content, and the generation, one more at each clear */
	struct strmap oplist_memo, oplist_bodies, internal_sets;
	size_t memo_generation;
	size_t oplist_memo_hits;
};

/* The blob of `oid` read as `kind` at `path` (module: its module for a torch/ file) through
 * the cache: from memory, from the cache's directory, or read and parsed now. */
int catalog__cache_get(const struct catalog_blob **out, struct catalog_cache *c,
		       git_repository *repo, const git_oid *oid, enum catalog_file_kind kind,
		       const char *path, const char *module);
/* The kept catalog of tree `id` with one more reference, or NULL; put keeps a reference to
 * `cat` as the catalog of tree `id` (the oldest kept one goes when full). */
struct catalog *catalog__tree_get(struct catalog_cache *c, const char *id);
void catalog__tree_put(struct catalog_cache *c, const char *id, struct catalog *cat);
/* The tests of a catalog's test files, the op kinds, and the id index (catalog_tests.c). */
int catalog__extract_tests(struct catalog *cat, struct catalog_priv *priv);

#endif
