/* The catalog of an upstream revision: what stage 2 (impact) knows about one tree. Built through
 * libgit2 from the blobs of the tree (no checkout): every test file (test/ ** /test_*.py) scanned
 * into tests (`path::Class::method`), every torch/ ** .py source file scanned for its functions,
 * classes and the dotted names their bodies use, the op database files (OpInfo entries),
 * aten/src/ATen/native/native_functions.yaml (op -> dispatch kernels) and the C++ files under
 * aten/src/ATen/native/ (which kernels each defines, with a hash of each definition).
 *
 * Scan results are owned by a cache keyed by blob id, shared by every catalog built with it: a
 * second build at another revision scans only the blobs the cache has not seen. The cache must
 * outlive the use of the catalogs built with it (a catalog still held when its cache is
 * destroyed may only be destroyed).
 *
 * Whole catalogs are shared too: the cache keeps the last CATALOG_TREES_MAX catalogs it built,
 * keyed by root tree id, so a build of a revision whose tree was seen returns that same catalog
 * without walking the tree. A catalog is reference counted: selector_catalog_build hands the
 * caller one reference, the cache holds one while it keeps the catalog, and
 * selector_catalog_destroy drops one (the last frees it). A catalog is therefore read-only once
 * built (its private part grows stage 2's derived structures lazily, once); not thread-safe. */
#ifndef SELECTOR_CATALOG_H
#define SELECTOR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "selector/scan.h"

enum catalog_file_kind {
	CATALOG_TEST,        /* test/ ** /test_*.py */
	CATALOG_SOURCE,      /* torch/ ** .py (the op database files too) */
	CATALOG_YAML,        /* aten/src/ATen/native/native_functions.yaml */
	CATALOG_CPP,         /* aten/src/ATen/native/ ** .cpp / .cu */
	CATALOG_TEST_HELPER, /* test/ ** .py but test_*.py: no tests, only what it imports */
};

/* One native_functions.yaml entry. */
struct catalog_native_op {
	const char *func;     /* "add.Tensor" */
	const char *op;       /* "add" (the name before the overload) */
	const char **kernels; /* dispatch kernel names: "add_kernel" */
	size_t n_kernels;
	uint64_t hash; /* every scalar of the entry */
};

/* One C++ kernel definition (`Tensor name(` at the start of a line). */
struct catalog_kernel {
	const char *name;
	uint32_t first_line, last_line;
	uint64_t hash;
};

/* The result of reading one blob: exactly one of the members is set, by kind. */
struct catalog_blob {
	struct scan_file *scan;               /* TEST, SOURCE */
	struct catalog_native_op *native_ops; /* YAML */
	size_t n_native_ops;
	struct catalog_kernel *kernels; /* CPP */
	size_t n_kernels;
};

struct catalog_file {
	const char *path;   /* relative to the repository */
	const char *module; /* "torch.nn.functional", "torch.nn" for an __init__.py; tests: NULL */
	enum catalog_file_kind kind;
	bool opdb; /* an op database file (common_methods_invocations.py, opinfo/definitions/) */
	char blob_id[41];
	const struct catalog_blob *blob; /* owned by the cache */
};

/* Which OpInfo entries an @ops(...) decorator selects. */
enum catalog_opset {
	CATALOG_OPSET_NONE = 0,  /* not an @ops test */
	CATALOG_OPSET_ALL,       /* op_db, or an expression not understood: every op */
	CATALOG_OPSET_UNARY,     /* unary_ufuncs: UnaryUfuncInfo entries */
	CATALOG_OPSET_BINARY,    /* binary_ufuncs */
	CATALOG_OPSET_REDUCTION, /* reduction_ops */
	CATALOG_OPSET_NAMES,     /* string literals in the argument: exactly those op names */
};

struct catalog_test {
	const char *id;         /* "test/nn/test_x.py::TestX::test_y", "test/t.py::test_f" */
	size_t file;            /* index in catalog files */
	int function;           /* index in the file's scan functions (for an inherited test: the
				 * base class's method it runs) */
	const char *class_name; /* NULL for a module-level test */
	bool device_generic;    /* instantiate_device_type_tests applies to its class */
	bool parametrized;      /* instantiate_parametrized_tests applies */
	uint64_t body_hash;
	enum catalog_opset opset;
	const char **op_names; /* CATALOG_OPSET_NAMES */
	size_t n_op_names;
};

struct catalog {
	char commit_id[41]; /* the commit it was first built for (a shared catalog of the same tree
			     * built for another commit keeps the first one's) */
	struct catalog_file *files; /* sorted by path */
	size_t n_files;
	struct catalog_test *tests; /* in file order, then source order (a class's inherited
				     * tests right after its own) */
	size_t n_tests;
	void *priv_; /* private: memory and indexes */
};

struct catalog_cache;

/* An empty cache; `max_entries` bounds the blobs in use at once (0: CATALOG_CACHE_MAX). Blobs no
 * live catalog uses any more are dropped when the cache has grown by a quarter since its last
 * sweep (never below CATALOG_CACHE_SWEEP_MIN blobs, at most max_entries), so that a
 * long-running process holds about what its live catalogs need, not every blob it ever read. */
int selector_catalog_cache_create(struct catalog_cache **out, size_t max_entries);
/* Blobs held now, and blobs dropped by sweeps so far. */
size_t selector_catalog_cache_size(const struct catalog_cache *cache);
size_t selector_catalog_cache_evicted(const struct catalog_cache *cache);
void selector_catalog_cache_destroy(struct catalog_cache *cache);
/* Blobs read (scanned or parsed) through this cache since it was created. */
size_t selector_catalog_cache_scans(const struct catalog_cache *cache);

/* Keeps at most `n` whole catalogs (at most CATALOG_TREES_MAX, the default); 0 turns the sharing
 * off (every build walks its tree) and drops the cache's references. */
void selector_catalog_cache_set_trees(struct catalog_cache *cache, size_t n);
/* Builds that returned a whole catalog by tree id instead of walking the tree. */
size_t selector_catalog_cache_tree_hits(const struct catalog_cache *cache);
/* @ops answers taken from another catalog of the cache instead of evaluated again, and the
 * answers the cache keeps. */
size_t selector_catalog_cache_oplist_hits(const struct catalog_cache *cache);
size_t selector_catalog_cache_oplists_kept(const struct catalog_cache *cache);
/* Builds that started from the newest kept catalog and the paths where its tree and the new
 * one differ (at most a few thousand) instead of walking the tree; when no file of interest
 * differs, the kept catalog itself is returned (and kept under the new tree id too). */
size_t selector_catalog_cache_derived(const struct catalog_cache *cache);

/* Backs the cache with the directory `dir` (created when missing; its parent must exist), so
 * that another process re-scans only the blobs it has not seen: a blob missing from memory is
 * read from DIR/xx/<id><kind> when there, else scanned and written there atomically. Bounded:
 * an entry over CATALOG_DISK_ENTRY_MAX bytes is not written, nor more than
 * CATALOG_DISK_WRITES_MAX entries by one cache; nothing is evicted (delete the directory). A
 * failed write is ignored, an unreadable entry is a miss. NULL: memory only. */
int selector_catalog_cache_set_dir(struct catalog_cache *cache, const char *dir);
/* Blobs this cache read from its directory instead of scanning them. */
size_t selector_catalog_cache_disk_hits(const struct catalog_cache *cache);

/* Builds the catalog of revision `rev` (any revspec) of the repository at `repo_dir`, or returns
 * the cache's catalog of the same root tree with one more reference (the catalog may then be the
 * very object another build returned). A NULL or empty `rev` is the empty tree (never shared).
 * ERR_NOTFOUND for a revision that does not resolve, ERR_LIMIT when the tree holds more than
 * CATALOG_FILES_MAX files of interest. */
int selector_catalog_build(struct catalog **out, const char *repo_dir, const char *rev,
			   struct catalog_cache *cache);
/* One file of a catalog made from another: `blob` is the hex id of its content (an
 * unambiguous abbreviation of at least 4 digits will do, as a unified diff's `index` line
 * gives), or NULL or zeros to leave the file out. */
struct catalog_override {
	const char *path;
	const char *blob;
	bool found; /* out: false when the repository does not hold `blob` */
};

/* The catalog of `from` (of the same repository) with `n_ov` files replaced, added or left out:
 * what `--diff` needs to see both sides of a patch. A blob the repository does not hold is
 * left out too, marked not found and counted in *missing: the file then looks absent on this
 * side (for a caller building the base, every test of it looks added: the safe side). When a
 * path is overridden twice, the last one counts. Never kept by tree id. Same errors as
 * selector_catalog_build. */
int selector_catalog_build_overrides(struct catalog **out, const char *repo_dir,
				     const struct catalog *from, struct catalog_override *ov,
				     size_t n_ov, struct catalog_cache *cache, size_t *missing);

/* Drops the caller's reference: frees the catalog when no other (the cache's, another build's)
 * remains. */
void selector_catalog_destroy(struct catalog *cat);

/* The file at `path`, or NULL. Binary search. */
const struct catalog_file *selector_catalog_file(const struct catalog *cat, const char *path);
/* The test with this id, or NULL. */
const struct catalog_test *selector_catalog_test(const struct catalog *cat, const char *id);

#define SELECTOR_VARIANTS_MAX 1024 /* variant names of one test */

/* The variants of one test (selector/src/catalog_variants.c): the suffixes PyTorch's
 * instantiation appends to the test's name (`fn_name_amax` of @parametrize("fn_name", [...]),
 * `add` of @ops(["add"]), an op database entry's formatted_name for @ops(op_db)), without
 * device or dtype. `open`: the decorators name variants that are not statically known (`why`
 * says which); `names` is then empty. */
#define CATALOG_DTYPES_MAX 16
struct catalog_variants {
	char **names; /* owned */
	size_t n;
	bool open;
	bool approx;     /* names is a superset: an @ops list not statically evaluable */
	const char *why; /* why open or approx: static, or why_owned_ */
	char *why_owned_;
	char *dtypes[CATALOG_DTYPES_MAX]; /* @dtypes names ("float32"), owned; none: the default */
	size_t n_dtypes;
};

int selector_catalog_variants(struct catalog_variants *out, const struct catalog *cat,
			      const struct catalog_test *t);
void selector_catalog_variants_finish(struct catalog_variants *v);

/* The op database entry of op `name` as specs and test names spell it: its OpInfo name ("add"),
 * "name.variant_test_name" ("div.floor_rounding") or the formatted name ("div_floor_rounding");
 * the first entry of that name in path order, one without variant_test_name first for a bare
 * name; Python reference entries left out. NULL when none; *path (may be NULL) its file. */
const struct scan_opinfo *selector_catalog_opinfo(const struct catalog *cat, const char *name,
						  const char **path);

/* Whether @ops test t runs op `name`: 1 when its op list, as Python builds it, holds an entry of
 * that name or aten name (or the list cannot be read, and may), 0 when not, or ERR_NOMEM. */
int selector_catalog_test_runs_op(const struct catalog *cat, const struct catalog_test *t,
				  const char *name);

#endif
