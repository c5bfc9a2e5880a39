/* Stage 2's symbol signal: changed functions and classes of torch/ ** .py (by body hash and by
 * hunk), a call graph by qualified name over the head catalog's source (uses resolved through
 * the file's module-level names and the re-exports of every module: `from x import y` in
 * package P makes P.y stand for x.y), the reverse closure of the changed symbols with its
 * distance, and the tests whose bodies use a symbol of that closure. Changed native ops enter
 * the closure as `torch.op` and `.op` (method calls matched by name). Never module import
 * closure: a module is a symbol only when its module-level code changed, and then only the
 * names under it count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "impact_internal.h"

#define ALIAS_HOPS_MAX 8

static const char *join_in(struct arena *arena, const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = scan__alloc(arena, n);
	if (s)
		snprintf(s, n, "%s.%s", a, b);
	return s;
}

static const char *join(struct ictx *x, const char *a, const char *b)
{
	return join_in(&x->arena, a, b);
}

static int seed(struct ictx *x, const char *sym, const char *why)
{
	if (!sym)
		return err_set(ERR_NOMEM, "impact seed");
	return strmap_put(&x->seeds, sym, (intptr_t)why);
}

/* The top-level function or the method holding function i: its qualname. */
static const char *outer_qualname(const struct scan_file *sf, size_t i)
{
	const struct scan_function *f = &sf->functions[i];
	for (int hops = 0; f->parent_function >= 0 && hops < 100; hops++)
		f = &sf->functions[f->parent_function];
	return f->qualname;
}

const struct scan_function *impact__counterpart_fn(const struct scan_file *a, size_t i,
						   const struct scan_file *o)
{
	const char *q = a->functions[i].qualname;
	size_t rank = 0;
	for (size_t k = 0; k < i; k++)
		rank += strcmp(a->functions[k].qualname, q) == 0;
	for (size_t k = 0; o && k < o->n_functions; k++)
		if (strcmp(o->functions[k].qualname, q) == 0 && rank-- == 0)
			return &o->functions[k];
	return NULL;
}

const struct scan_class *impact__counterpart_class(const struct scan_file *a, size_t i,
						   const struct scan_file *o)
{
	const char *q = a->classes[i].qualname;
	size_t rank = 0;
	for (size_t k = 0; k < i; k++)
		rank += strcmp(a->classes[k].qualname, q) == 0;
	for (size_t k = 0; o && k < o->n_classes; k++)
		if (strcmp(o->classes[k].qualname, q) == 0 && rank-- == 0)
			return &o->classes[k];
	return NULL;
}

static int seed_function(struct ictx *x, const char *module, const struct scan_file *sf, size_t i)
{
	const struct scan_function *f = &sf->functions[i];
	const char *q = outer_qualname(sf, i);
	int rc = seed(x, join(x, module, q), "changed");
	if (!rc && f->class_index >= 0)
		rc = seed(x, join(x, module, sf->classes[f->class_index].qualname),
			  "method changed");
	for (size_t r = 0; !rc && r < f->n_registers; r++) {
		char op[256];
		snprintf(op, sizeof(op), "%s", f->registers[r]);
		char *dot = strchr(op, '.');
		if (dot)
			*dot = 0;
		const char *k = scan__strndup(&x->arena, op, strlen(op));
		rc = k ? strmap_put(&x->ops, k, (intptr_t) "registration changed") : ERR_NOMEM;
	}
	return rc;
}

/* Functions whose hash differs between the sides, or that exist on one side only. */
static int seed_by_hash(struct ictx *x, const char *module, const struct scan_file *a,
			const struct scan_file *o)
{
	for (size_t i = 0; a && i < a->n_functions; i++) {
		const struct scan_function *other = impact__counterpart_fn(a, i, o);
		if (other && other->body_hash == a->functions[i].body_hash)
			continue;
		int rc = seed_function(x, module, a, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* Classes whose own statements (decorators, the class line and bases, class attributes: not
 * their methods) differ between the sides, or that exist on one side only: the class itself. */
static int seed_classes(struct ictx *x, const char *module, const struct scan_file *a,
			const struct scan_file *o)
{
	for (size_t i = 0; a && i < a->n_classes; i++) {
		const struct scan_class *other = impact__counterpart_class(a, i, o);
		if (other && other->body_hash == a->classes[i].body_hash)
			continue;
		int rc = seed(x, join(x, module, a->classes[i].qualname), "class changed");
		if (rc)
			return rc;
	}
	return 0;
}

int impact__source_changed(struct ictx *x, const struct catalog_file *hf,
			   const struct catalog_file *bf, const struct file_change *fc)
{
	const struct scan_file *hs = hf ? hf->blob->scan : NULL, *bs = bf ? bf->blob->scan : NULL;
	const char *module = hf ? hf->module : bf->module;
	int rc = seed_by_hash(x, module, hs, bs);
	if (!rc)
		rc = seed_by_hash(x, module, bs, hs);
	if (!rc)
		rc = seed_classes(x, module, hs, bs);
	if (!rc)
		rc = seed_classes(x, module, bs, hs);
	if (!rc && (!hs || !bs || hs->module_hash != bs->module_hash))
		rc = seed(x, module, "module-level code changed");
	return rc;
}

/* ---- the graph (per head catalog) ----
 *
 * A full source graph (struct impact_source) is built from one catalog's torch/ files: the
 * re-export aliases, the reverse call graph (callee -> callers, each caller with the index of
 * the source file it is in) and, lazily, every test file's resolved uses (one block per blob,
 * by function). A later catalog whose source files differ from it in a few files, none of whose
 * versions re-export anything differently, shares it: its graph marks the source's edges of those
 * files as gone and adds an overlay with the edges of their new versions. Shortest distances are
 * the same as a full build's (breadth-first, whatever the order of the callers). */

/* `from x import y` / `import a.b as c` at module level that re-exports a name. */
static bool alias_import(const struct scan_import *im)
{
	if (im->function >= 0 || !im->local || strcmp(im->local, "*") == 0 || !im->target ||
	    (!im->name && !strchr(im->target, '.')))
		return false;
	size_t ll = strlen(im->local);
	if (!im->name && strncmp(im->target, im->local, ll) == 0 && im->target[ll] == '.')
		return false; /* `import a.b.c` binds a: nothing re-exported */
	return true;
}

static int file_aliases(struct impact_source *g, const char *module, const struct scan_file *sf)
{
	for (size_t i = 0; sf && i < sf->n_imports; i++) {
		const struct scan_import *im = &sf->imports[i];
		if (!alias_import(im))
			continue;
		const char *key = join_in(&g->arena, module, im->local);
		if (!key)
			return ERR_NOMEM;
		if (strcmp(key, im->target) != 0 &&
		    strmap_put(&g->alias, key, (intptr_t)im->target))
			return ERR_NOMEM;
	}
	return 0;
}

/* True when two versions of a file (either may be NULL) re-export exactly the same names. */
static bool same_aliases(const struct scan_file *a, const struct scan_file *b)
{
	size_t i = 0, j = 0;
	for (;;) {
		while (a && i < a->n_imports && !alias_import(&a->imports[i]))
			i++;
		while (b && j < b->n_imports && !alias_import(&b->imports[j]))
			j++;
		bool ea = !a || i >= a->n_imports, eb = !b || j >= b->n_imports;
		if (ea || eb)
			return ea && eb;
		if (strcmp(a->imports[i].local, b->imports[j].local) != 0 ||
		    strcmp(a->imports[i].target, b->imports[j].target) != 0)
			return false;
		i++;
		j++;
	}
}

/* Resolves `use` (as the scanner wrote it in a file of `module`, with `local` its module-level
 * names) to a canonical symbol in `buf`. */
const char *impact__resolve(const struct strmap *alias, const char *module,
			    const struct strmap *local, const char *use, char *buf, size_t n)
{
	if (use[0] == '.') {
		snprintf(buf, n, "%s", use);
		return buf;
	}
	const char *dot = strchr(use, '.');
	size_t first = dot ? (size_t)(dot - use) : strlen(use);
	char head[256];
	snprintf(head, sizeof(head), "%.*s", (int)(first < 255 ? first : 255), use);
	if (module && strmap_get(local, head, NULL))
		snprintf(buf, n, "%s.%s", module, use);
	else
		snprintf(buf, n, "%s", use);
	for (int hop = 0; hop < ALIAS_HOPS_MAX; hop++) {
		bool replaced = false;
		size_t len = strlen(buf);
		for (size_t cut = len; cut > 0 && !replaced; cut--) {
			if (cut != len && buf[cut] != '.')
				continue;
			char save = buf[cut];
			buf[cut] = 0;
			intptr_t t;
			if (strmap_get(alias, buf, &t)) {
				char tmp[1024];
				buf[cut] = save;
				snprintf(tmp, sizeof(tmp), "%s%s", (const char *)t, buf + cut);
				snprintf(buf, n, "%s", tmp);
				replaced = true;
			} else {
				buf[cut] = save;
			}
		}
		if (!replaced)
			break;
	}
	return buf;
}

int impact__local_names(struct strmap *m, const struct scan_file *sf)
{
	for (size_t i = 0; i < sf->n_functions; i++)
		if (sf->functions[i].class_index < 0 && sf->functions[i].parent_function < 0 &&
		    strmap_put(m, sf->functions[i].name, 1))
			return ERR_NOMEM;
	for (size_t i = 0; i < sf->n_classes; i++)
		if (sf->classes[i].parent_class < 0 && sf->classes[i].parent_function < 0 &&
		    strmap_put(m, sf->classes[i].name, 1))
			return ERR_NOMEM;
	return 0;
}

static int edge(struct impact_source *g, const char *callee, const char *caller, uint32_t file)
{
	intptr_t idx;
	if (!caller)
		return err_set(ERR_NOMEM, "call graph");
	if (!strmap_get(&g->rev, callee, &idx)) {
		const char *k = scan__strndup(&g->arena, callee, strlen(callee));
		void *p =
		    scan__grow(g->callers, g->n_callers, &g->callers_cap, sizeof(*g->callers));
		if (!k || !p)
			return err_set(ERR_NOMEM, "call graph");
		g->callers = p;
		idx = (intptr_t)g->n_callers;
		g->callers[g->n_callers++] = (struct callers){ 0 };
		if (strmap_put(&g->rev, k, idx))
			return ERR_NOMEM;
	}
	struct callers *c = &g->callers[idx];
	if (c->n && c->v[c->n - 1].name == caller)
		return 0;
	void *p = scan__grow(c->v, c->n, &c->cap, sizeof(*c->v));
	if (!p)
		return err_set(ERR_NOMEM, "call graph edges");
	c->v = p;
	c->v[c->n++] = (struct caller){ caller, file };
	return 0;
}

/* The edges of one source file into `g` (callers tagged with `file`), its uses resolved
 * through `alias`. */
static int file_edges(struct impact_source *g, const struct strmap *alias,
		      const struct catalog_file *cf, uint32_t file)
{
	const struct scan_file *sf = cf->blob->scan;
	struct strmap local = { 0 };
	int rc = impact__local_names(&local, sf);
	char buf[1024];
	for (size_t i = 0; !rc && i < sf->n_functions; i++) {
		const struct scan_function *f = &sf->functions[i];
		const char *caller = join_in(&g->arena, cf->module, outer_qualname(sf, i));
		if (!caller) {
			rc = ERR_NOMEM;
			break;
		}
		if (f->class_index >= 0 && f->parent_function < 0)
			rc = edge(
			    g, caller,
			    join_in(&g->arena, cf->module, sf->classes[f->class_index].qualname),
			    file);
		for (size_t u = 0; !rc && u < f->n_uses; u++)
			rc = edge(g,
				  impact__resolve(alias, cf->module, &local, f->uses[u], buf,
						  sizeof(buf)),
				  caller, file);
	}
	strmap_free(&local);
	return rc;
}

/* Files name `idx` under each of its dotted prefixes (itself included): "a.b.c" under "a",
 * "a.b" and "a.b.c", so that a run finds the names a changed symbol reaches by looking the
 * symbol up, rather than every name's prefixes in the run's closure. */
static int prefix_index(struct impact_source *g, const char *name, uint32_t idx)
{
	size_t len = strlen(name);
	char buf[1024];
	for (size_t cut = 1; cut <= len; cut++) {
		if (cut != len && name[cut] != '.')
			continue;
		const char *key = name;
		if (cut != len) {
			if (cut >= sizeof(buf))
				continue; /* names come from impact__resolve()'s 1,024-byte buffer
					   */
			memcpy(buf, name, cut);
			buf[cut] = 0;
			key = buf;
		}
		intptr_t head = -1;
		bool known = strmap_get(&g->by_prefix, key, &head);
		if (!known && key == buf && !(key = scan__strndup(&g->arena, buf, cut)))
			return ERR_NOMEM; /* a prefix seen first: copied once */
		void *p = scan__grow(g->links, g->n_links, &g->links_cap, sizeof(*g->links));
		if (!p)
			return ERR_NOMEM;
		g->links = p;
		g->links[g->n_links] =
		    (struct name_link){ idx, known ? (uint32_t)head : UINT32_MAX };
		if (strmap_put(&g->by_prefix, key, (intptr_t)g->n_links++))
			return ERR_NOMEM;
	}
	return 0;
}

/* The index of `use` resolved (without module-level names, as a test's use is), memoised by
 * the use as written: the same dotted names recur across tens of thousands of tests. */
int impact__name_index(struct impact_source *g, const char *use, uint32_t *out)
{
	intptr_t v;
	if (strmap_get(&g->by_use, use, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	char buf[1024];
	struct strmap none = { 0 };
	impact__resolve(&g->alias, NULL, &none, use, buf, sizeof(buf));
	if (!strmap_get(&g->by_name, buf, &v)) {
		const char *k = scan__strndup(&g->arena, buf, strlen(buf));
		void *p = scan__grow(g->names, g->n_names, &g->names_cap, sizeof(*g->names));
		if (!k || !p)
			return err_set(ERR_NOMEM, "impact: resolved uses");
		g->names = p;
		v = (intptr_t)g->n_names;
		g->names[g->n_names++] = k;
		if (strmap_put(&g->by_name, k, v) || prefix_index(g, k, (uint32_t)v))
			return ERR_NOMEM;
		if (k[0] == '!') {
			p = scan__grow(g->computed, g->n_computed, &g->computed_cap,
				       sizeof(*g->computed));
			if (!p)
				return err_set(ERR_NOMEM, "impact: computed names");
			g->computed = p;
			g->computed[g->n_computed++] = (uint32_t)v;
		}
	}
	const char *ku = scan__strndup(&g->arena, use, strlen(use));
	if (!ku)
		return err_set(ERR_NOMEM, "impact: resolved uses");
	*out = (uint32_t)v;
	return strmap_put(&g->by_use, ku, v);
}

/* The resolved uses of every function of test file `cf`, made once per blob and source graph. */
static int uses_block(struct impact_source *g, const struct catalog_file *cf,
		      const struct use_block **out)
{
	intptr_t v;
	if (strmap_get(&g->blocks, cf->blob_id, &v)) {
		*out = (const struct use_block *)v;
		return 0;
	}
	const struct scan_file *sf = cf->blob->scan;
	struct use_block *b = scan__alloc(&g->arena, sizeof(*b));
	char *key = scan__strndup(&g->arena, cf->blob_id, strlen(cf->blob_id));
	if (!b || !key ||
	    !(b->off = scan__alloc(&g->arena, (sf->n_functions + 1) * sizeof(*b->off))))
		return err_set(ERR_NOMEM, "impact: uses of %s", cf->path);
	int rc = impact__block_fill(g, sf, b);
	if (rc)
		return rc;
	if (strmap_put(&g->blocks, key, (intptr_t)b))
		return ERR_NOMEM;
	*out = b;
	return 0;
}

void impact__source_release(struct impact_source *g)
{
	if (!g || --g->refs)
		return;
	for (size_t i = 0; i < g->n_callers; i++)
		free(g->callers[i].v);
	free(g->callers);
	free(g->files);
	free(g->names);
	strmap_free(&g->alias);
	strmap_free(&g->rev);
	strmap_free(&g->by_use);
	strmap_free(&g->by_name);
	strmap_free(&g->blocks);
	strmap_free(&g->by_prefix);
	free(g->links);
	free(g->computed);
	scan__arena_free(&g->arena);
	free(g);
}

void impact__graph_destroy(struct impact_graph *g)
{
	if (!g)
		return;
	impact__source_release(g->src);
	impact__source_release(g->over);
	free(g->gone);
	free(g->blocks);
	free(g);
}

static int source_build(struct impact_source **out, const struct catalog *head)
{
	struct impact_source *g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(ERR_NOMEM, "impact call graph");
	g->refs = 1;
	size_t cap = 0;
	int rc = 0;
	/* Every file's aliases first (a use anywhere may go through any of them), then the edges.
	 * Paths and blob ids are copied: the catalog may be freed first. */
	for (size_t f = 0; !rc && f < head->n_files; f++) {
		const struct catalog_file *cf = &head->files[f];
		if (cf->kind != CATALOG_SOURCE)
			continue;
		void *p = scan__grow(g->files, g->n_files, &cap, sizeof(*g->files));
		struct source_file sf = { scan__strndup(&g->arena, cf->path, strlen(cf->path)),
					  scan__strndup(&g->arena, cf->blob_id,
							strlen(cf->blob_id)),
					  cf->blob, cf->blob->scan };
		if (p)
			g->files = p;
		if (!p || !sf.path || !sf.blob_id) {
			rc = err_set(ERR_NOMEM, "impact: source files");
			break;
		}
		g->files[g->n_files++] = sf;
		rc = file_aliases(g, cf->module, cf->blob->scan);
	}
	for (size_t f = 0, k = 0; !rc && f < head->n_files; f++) {
		const struct catalog_file *cf = &head->files[f];
		if (cf->kind != CATALOG_SOURCE)
			continue;
		if (cf->blob->scan)
			rc = file_edges(g, &g->alias, cf, (uint32_t)k);
		k++;
	}
	if (rc) {
		impact__source_release(g);
		return rc;
	}
	*out = g;
	return 0;
}

/* Shares `src` with `head` when the head's source files differ from it in at most
 * IMPACT_OVERLAY_FILES_MAX files that re-export nothing differently: fills g->gone and builds
 * g->over from the changed files. 1 when shared, 0 when a full build is needed, or an error. */
static int overlay_build(struct impact_graph *g, struct impact_source *src,
			 const struct catalog *head)
{
	uint8_t *gone = calloc(src->n_files ? src->n_files : 1, 1);
	const struct catalog_file **changed = NULL;
	size_t n_changed = 0, cap = 0, k = 0;
	int rc = gone ? 1 : err_set(ERR_NOMEM, "impact overlay");
	for (size_t f = 0; rc == 1 && f <= head->n_files; f++) {
		const struct catalog_file *cf = f < head->n_files ? &head->files[f] : NULL;
		if (cf && cf->kind != CATALOG_SOURCE)
			continue;
		/* Source files of src before cf's path are gone at head. */
		int c = -1;
		while (rc == 1 && k < src->n_files &&
		       (!cf || (c = strcmp(src->files[k].path, cf->path)) < 0)) {
			if (!same_aliases(src->files[k].scan, NULL))
				rc = 0;
			gone[k++] = 1;
		}
		if (!cf || rc != 1)
			break;
		bool present = k < src->n_files && c == 0;
		if (present && strcmp(src->files[k].blob_id, cf->blob_id) == 0) {
			k++;
			continue;
		}
		if (!same_aliases(present ? src->files[k].scan : NULL, cf->blob->scan) ||
		    n_changed >= IMPACT_OVERLAY_FILES_MAX) {
			rc = 0;
			break;
		}
		if (present)
			gone[k++] = 1;
		void *p = scan__grow(changed, n_changed, &cap, sizeof(*changed));
		if (!p) {
			rc = err_set(ERR_NOMEM, "impact overlay");
			break;
		}
		changed = p;
		changed[n_changed++] = cf;
	}
	if (rc == 1 && n_changed) {
		if (!(g->over = calloc(1, sizeof(*g->over)))) {
			rc = err_set(ERR_NOMEM, "impact overlay");
		} else {
			g->over->refs = 1;
			for (size_t i = 0; rc == 1 && i < n_changed; i++)
				if (changed[i]->blob->scan &&
				    file_edges(g->over, &src->alias, changed[i], IMPACT_FILE_NONE))
					rc = ERR_NOMEM;
		}
	}
	free(changed);
	if (rc == 1) {
		g->src = src;
		src->refs++;
		g->gone = gone;
		g->shared = true;
		g->n_over_files = n_changed;
		return 1;
	}
	free(gone);
	impact__source_release(g->over);
	g->over = NULL;
	return rc;
}

/* The head catalog's graph, built on the first call for that catalog: on the base's source
 * graph when the head's sources differ from it a little, else from scratch. */
static int graph_of(const struct catalog *head, const struct catalog *base,
		    const struct impact_graph **out)
{
	struct catalog_priv *priv = head->priv_;
	if (priv->graph) {
		*out = priv->graph;
		return 0;
	}
	struct impact_graph *g = calloc(1, sizeof(*g));
	if (!g || !(g->blocks = calloc(head->n_files ? head->n_files : 1, sizeof(*g->blocks)))) {
		free(g);
		return err_set(ERR_NOMEM, "impact graph");
	}
	/* Laid over the base's source graph, else over one the cache keeps (the base's own graph
	 * is never built when no run at the base needed it). */
	const struct catalog_priv *bp = base->priv_;
	struct impact_source *under[1 + CATALOG_SOURCES_MAX] = { bp->graph ? bp->graph->src
									   : NULL };
	for (size_t i = 0; priv->cache && i < CATALOG_SOURCES_MAX; i++)
		under[1 + i] = catalog__cache_source(priv->cache, i);
	int rc = 0;
	/* A source graph keeps the resolved uses of every test blob of every head laid over it:
	 * past twice what this head needs, it is built anew rather than grown. */
	size_t test_files = 0;
	for (size_t f = 0; f < head->n_files; f++)
		test_files += head->files[f].kind == CATALOG_TEST;
	for (size_t i = 0; i < 1 + CATALOG_SOURCES_MAX && rc == 0; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= under[j] == under[i];
		if (under[i] && !seen && under[i]->blocks.n <= 2 * test_files + 256)
			rc = overlay_build(g, under[i], head);
	}
	if (rc == 1 && priv->cache) {
		g->src->refs++; /* the one laid over is the cache's latest now */
		catalog__cache_set_source(priv->cache, g->src);
		catalog__cache_drop_graphs(priv->cache, priv);
	}
	if (rc == 0) {
		rc = source_build(&g->src, head);
		if (!rc && priv->cache) {
			g->src->refs++;
			catalog__cache_set_source(priv->cache, g->src);
			catalog__cache_drop_graphs(priv->cache, priv);
		}
	} else if (rc == 1) {
		rc = 0;
	}
	for (size_t f = 0; !rc && f < head->n_files; f++)
		if (head->files[f].kind == CATALOG_TEST && head->files[f].blob->scan)
			rc = uses_block(g->src, &head->files[f], &g->blocks[f]);
	if (rc) {
		impact__graph_destroy(g);
		return rc;
	}
	priv->graph = g;
	*out = g;
	return 0;
}

/* ---- closure and tests ---- */

static int closure(struct ictx *x)
{
	const char **queue = NULL;
	size_t qn = 0, qcap = 0, qi = 0;
	int rc = 0;
	for (size_t pass = 0; pass < 2 && !rc; pass++) {
		const struct strmap *m = pass ? &x->ops : &x->seeds;
		for (size_t s = 0; s < m->cap && !rc; s++) {
			if (!m->slots[s].key)
				continue;
			const char *syms[2] = { m->slots[s].key, NULL };
			if (pass) {
				syms[0] = join(x, "torch", m->slots[s].key);
				char *dot = scan__alloc(&x->arena, strlen(m->slots[s].key) + 2);
				if (dot)
					sprintf(dot, ".%s", m->slots[s].key);
				syms[1] = dot;
				if (!syms[0] || !dot)
					rc = ERR_NOMEM;
			}
			for (int k = 0; k < 2 && syms[k] && !rc; k++) {
				if (strmap_get(&x->impacted, syms[k], NULL))
					continue;
				void *p = scan__grow(queue, qn, &qcap, sizeof(*queue));
				if (!p || strmap_put(&x->impacted, syms[k], 0)) {
					free(p ? p : queue);
					return err_set(ERR_NOMEM, "closure");
				}
				queue = p;
				queue[qn++] = syms[k];
			}
		}
	}
	for (; qi < qn && !rc; qi++) {
		intptr_t d, idx;
		strmap_get(&x->impacted, queue[qi], &d);
		const struct impact_graph *g = x->graph;
		for (int layer = 0; layer < 2 && !rc; layer++) {
			const struct impact_source *s = layer ? g->over : g->src;
			if (!s || !strmap_get(&s->rev, queue[qi], &idx))
				continue;
			const struct callers *c = &s->callers[idx];
			for (size_t k = 0; k < c->n && !rc; k++) {
				const char *who = c->v[k].name;
				intptr_t dw, prev;
				if (!layer && g->gone && g->gone[c->v[k].file])
					continue;
				if (strmap_get(&x->impacted, who, &dw)) {
					/* the smallest callee of the same distance: one chain,
					 * whatever the order of the callers */
					if (dw == d + 1 && strmap_get(&x->via, who, &prev) &&
					    strcmp(queue[qi], (const char *)prev) < 0)
						rc = strmap_put(&x->via, who, (intptr_t)queue[qi]);
					continue;
				}
				const char *cur = queue[qi];
				void *p = scan__grow(queue, qn, &qcap, sizeof(*queue));
				if (!p || strmap_put(&x->impacted, who, d + 1) ||
				    strmap_put(&x->via, who, (intptr_t)cur)) {
					free(p ? p : queue);
					return err_set(ERR_NOMEM, "closure");
				}
				queue = p;
				queue[qn++] = who;
			}
		}
	}
	free(queue);
	return rc;
}

int impact__symbols_to_tests(struct ictx *x)
{
	if (!x->seeds.n && !x->ops.n)
		return 0;
	int rc = graph_of(x->head, x->base, &x->graph);
	if (!rc)
		rc = closure(x);
	if (!rc)
		rc = impact__tests_signal(x);
	if (!rc)
		rc = impact__opdb_entries(x);
	return rc;
}

const struct impact_source *impact__graph_source(const struct impact_graph *g)
{
	return g ? g->src : NULL;
}

size_t impact__source_files(const struct impact_source *s)
{
	return s->n_files;
}

const struct catalog_blob *impact__source_blob(const struct impact_source *s, size_t i)
{
	return s->files[i].blob;
}

int selector_impact_graph_reused(const struct catalog *head, size_t *overlay_files)
{
	const struct impact_graph *g = ((const struct catalog_priv *)head->priv_)->graph;
	if (overlay_files)
		*overlay_files = g ? g->n_over_files : 0;
	return !g ? -1 : g->shared ? 1 : 0;
}

void impact__ctx_finish(struct ictx *x)
{
	strmap_free(&x->cand);
	strmap_free(&x->ops);
	strmap_free(&x->seeds);
	strmap_free(&x->impacted);
	strmap_free(&x->via);
	scan__arena_free(&x->arena);
}
