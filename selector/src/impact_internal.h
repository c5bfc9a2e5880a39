/* Private to stage 2 (impact.c, impact_graph.c, impact_message.c): the run's context. */
#ifndef SELECTOR_IMPACT_INTERNAL_H
#define SELECTOR_IMPACT_INTERNAL_H

#include <jansson.h>

#include "catalog_internal.h"
#include "common/limits.h"
#include "selector/impact.h"

/* One caller of a callee: its qualified name and the index of its file in the source graph's
 * files (IMPACT_FILE_NONE in an overlay). */
struct caller {
	const char *name;
	uint32_t file;
};
#define IMPACT_FILE_NONE UINT32_MAX

struct callers {
	struct caller *v;
	size_t n, cap;
};

/* The resolved uses of each function of one test file's blob, with those of the file's helpers,
 * globals and decorators it reaches (impact_local.c): names[off[f] .. off[f + 1] - 1] index the
 * source graph's names; via[k] is the node of the file whose use names[k] is (the function
 * itself, a helper it reaches, or n_functions + a global's index). */
struct use_block {
	uint32_t *off; /* n_functions + 1 */
	uint32_t *names;
	uint32_t *via;
};

/* One name filed under one of its dotted prefixes; next: the prefix's next link, or UINT32_MAX. */
struct name_link {
	uint32_t name, next;
};

struct source_file {
	const char *path, *blob_id;      /* copies */
	const struct catalog_blob *blob; /* the cache's: kept while the graph lives (its sweep
					  * marks what source graphs hold) */
	const struct scan_file *scan;    /* blob->scan; NULL: unscanned */
};

/* What stage 2 derives from the torch/ sources of one catalog: the import aliases, the call
 * graph, and (lazily) the resolved uses of test files by blob. Reference counted: the graphs of
 * later catalogs whose sources differ a little share it (struct impact_graph). Grows as test
 * blobs are resolved; not thread-safe. */
struct impact_source {
	size_t refs;
	struct arena arena;
	struct source_file *files; /* the catalog's source files, sorted by path */
	size_t n_files;
	struct strmap alias; /* "pkg.name" -> the target it re-exports */
	struct strmap rev;   /* callee -> index in callers */
	struct callers *callers;
	size_t n_callers, callers_cap;
	const char **names; /* distinct resolved uses of tests */
	size_t n_names, names_cap;
	struct strmap by_use;    /* a use as written -> index in names */
	struct strmap by_name;   /* a resolved name -> index in names */
	struct strmap blocks;    /* test blob id -> struct use_block * */
	struct strmap by_prefix; /* a dotted prefix of names -> its first link */
	struct name_link *links;
	size_t n_links, links_cap;
	uint32_t *computed; /* names that are computed names ("!torch.special", "!*") */
	size_t n_computed, computed_cap;
};

/* What stage 2 derives from one head catalog, kept with the catalog (catalog_priv.graph) so that
 * every run at that head shares it. */
struct impact_graph {
	struct impact_source *src;  /* shared */
	uint8_t *gone;              /* per src file: changed or absent at this head; NULL: none */
	struct impact_source *over; /* edges of the head's changed and added sources, or NULL */
	const struct use_block **blocks; /* per head file: its tests' uses (test files only) */
	bool shared;                     /* src was built for another catalog */
	size_t n_over_files;             /* changed or added source files in over */
};

struct ictx {
	const struct change_set *cs;
	const struct catalog *base, *head;
	const struct impact_config *cfg;
	struct impact_result *res;
	struct strmap cand; /* test id -> candidate index */
	size_t cand_cap;
	struct strmap ops;   /* changed op name -> why (static string) */
	struct strmap seeds; /* changed symbol -> why (arena string) */
	json_t *coverage;
	struct arena arena;
	const struct impact_graph *graph; /* the head catalog's (built on first need) */
	struct strmap impacted;           /* symbol -> distance */
	struct strmap via;                /* symbol -> the callee that put it in the closure (the
					   * smallest of that distance: the same however built) */
};

/* A test file's own definitions as a graph (impact_local.c): nodes are its functions, then its
 * globals. */
struct local_index {
	const struct scan_file *sf;
	uint32_t n_fn, n_nodes;
	struct strmap fn, cls, glob; /* module-level name -> function, class, global node */
	struct strmap meth;          /* method or class-level global name -> first node */
	uint32_t *next;              /* per node: the next of the same member name */
	uint32_t *stamp, *parent, *queue;
	uint32_t epoch;
	char last_root[256]; /* the root looked up last, and what it stood for */
	size_t last_len;
	uint32_t last_fn, last_glob;
	int last_cls;
};
int impact__local_init(struct local_index *li, const struct scan_file *sf);
void impact__local_finish(struct local_index *li);
/* The nodes function `from` reaches, breadth first (li->queue, `from` first; li->parent). */
size_t impact__local_walk(struct local_index *li, uint32_t from);
const char *const *impact__local_uses(const struct local_index *li, uint32_t node, size_t *n);
/* " -> helper (path) -> helper2 (path)" from function `from` to node `to` into buf (empty when
 * to is from); its length. */
size_t impact__local_chain(struct local_index *li, uint32_t from, uint32_t to, char *buf, size_t n);
/* Fills a block's off, names and via (off allocated by the caller, the rest in g's arena). */
int impact__block_fill(struct impact_source *g, const struct scan_file *sf, struct use_block *b);
/* The source graph's index of `use` resolved as a test's use is (impact_graph.c). */
int impact__name_index(struct impact_source *g, const char *use, uint32_t *out);

int impact__add(struct ictx *x, const char *id, enum impact_signal sig, double score,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A torch/ source file changed: seeds its changed functions, classes and registrations. */
int impact__source_changed(struct ictx *x, const struct catalog_file *hf,
			   const struct catalog_file *bf, const struct file_change *fc);
/* Builds the call graph, closes the seeds and the changed ops over it, adds the tests. */
int impact__symbols_to_tests(struct ictx *x);
/* The tests whose resolved uses reach the closure, each with its chain (impact_tests.c). */
int impact__tests_signal(struct ictx *x);
/* Op database entries whose arguments reach the closure: their ops count as changed. */
int impact__opdb_entries(struct ictx *x);
/* A use as a file of `module` wrote it, resolved through its module-level names `local` and
 * the re-exports `alias`, in buf (impact_graph.c). */
const char *impact__resolve(const struct strmap *alias, const char *module,
			    const struct strmap *local, const char *use, char *buf, size_t n);
/* The module-level functions and classes of a file, as `local` for impact__resolve. */
int impact__local_names(struct strmap *m, const struct scan_file *sf);
/* Tests named in the commit messages of the range (impact_message.c). */
int impact__messages_to_tests(struct ictx *x);
void impact__ctx_finish(struct ictx *x);

/* The function of `o` that stands for function i of `a`: the same qualname and the same rank
 * among the functions of that qualname (the two `def f` of an if and its else are two
 * functions), or NULL. The same for classes. (impact_graph.c) */
const struct scan_function *impact__counterpart_fn(const struct scan_file *a, size_t i,
						   const struct scan_file *o);
const struct scan_class *impact__counterpart_class(const struct scan_file *a, size_t i,
						   const struct scan_file *o);

#endif
