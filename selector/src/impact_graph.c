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

static const struct scan_function *find_fn(const struct scan_file *sf, const char *q)
{
	for (size_t i = 0; sf && i < sf->n_functions; i++)
		if (strcmp(sf->functions[i].qualname, q) == 0)
			return &sf->functions[i];
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
		const struct scan_function *other = find_fn(o, a->functions[i].qualname);
		if (other && other->body_hash == a->functions[i].body_hash)
			continue;
		int rc = seed_function(x, module, a, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* Classes whose lines a hunk touches (class attributes, bases): the class itself. */
static int seed_by_hunks(struct ictx *x, const char *module, const struct scan_file *sf,
			 const struct file_change *fc, int side)
{
	for (size_t h = 0; sf && h < fc->n_hunks; h++) {
		uint32_t s = side ? fc->hunks[h].new_start : fc->hunks[h].old_start;
		uint32_t n = side ? fc->hunks[h].new_lines : fc->hunks[h].old_lines;
		for (uint32_t l = s; l < s + n && l < s + 10000; l++) {
			int c = selector_scan_class_at(sf, l);
			if (c >= 0 && selector_scan_function_at(sf, l) < 0) {
				int rc = seed(x, join(x, module, sf->classes[c].qualname),
					      "class changed");
				if (rc)
					return rc;
			}
		}
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
		rc = seed_by_hunks(x, module, hs, fc, 1);
	if (!rc)
		rc = seed_by_hunks(x, module, bs, fc, 0);
	if (!rc && (!hs || !bs || hs->module_hash != bs->module_hash))
		rc = seed(x, module, "module-level code changed");
	return rc;
}

/* ---- the graph (per head catalog) ---- */

static int build_aliases(struct impact_source *g, const struct catalog *head)
{
	for (size_t f = 0; f < head->n_files; f++) {
		const struct catalog_file *cf = &head->files[f];
		const struct scan_file *sf = cf->blob->scan;
		if (cf->kind != CATALOG_SOURCE || !sf)
			continue;
		for (size_t i = 0; i < sf->n_imports; i++) {
			const struct scan_import *im = &sf->imports[i];
			if (im->function >= 0 || !im->local || strcmp(im->local, "*") == 0 ||
			    !im->target || (!im->name && !strchr(im->target, '.')))
				continue;
			if (!im->name && strncmp(im->target, im->local, strlen(im->local)) == 0 &&
			    im->target[strlen(im->local)] == '.')
				continue; /* `import a.b.c` binds a: nothing re-exported */
			const char *key = join_in(&g->arena, cf->module, im->local);
			if (!key)
				return ERR_NOMEM;
			if (strcmp(key, im->target) != 0 &&
			    strmap_put(&g->alias, key, (intptr_t)im->target))
				return ERR_NOMEM;
		}
	}
	return 0;
}

/* Resolves `use` (as the scanner wrote it in a file of `module`, with `local` its module-level
 * names) to a canonical symbol in `buf`. */
static const char *resolve(const struct impact_source *g, const char *module,
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
			if (strmap_get(&g->alias, buf, &t)) {
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

static int local_names(struct strmap *m, const struct scan_file *sf)
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

static int edge(struct impact_source *g, const char *callee, const char *caller)
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
	if (c->n && c->v[c->n - 1] == caller)
		return 0;
	void *p = scan__grow(c->v, c->n, &c->cap, sizeof(*c->v));
	if (!p)
		return err_set(ERR_NOMEM, "call graph edges");
	c->v = p;
	c->v[c->n++] = caller;
	return 0;
}

static int file_edges(struct impact_source *g, const struct catalog_file *cf)
{
	const struct scan_file *sf = cf->blob->scan;
	struct strmap local = { 0 };
	int rc = local_names(&local, sf);
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
			    join_in(&g->arena, cf->module, sf->classes[f->class_index].qualname));
		for (size_t u = 0; !rc && u < f->n_uses; u++)
			rc = edge(g, resolve(g, cf->module, &local, f->uses[u], buf, sizeof(buf)),
				  caller);
	}
	strmap_free(&local);
	return rc;
}

/* The index of `use` resolved (without module-level names, as a test's use is), memoised by
 * the use as written: the same dotted names recur across tens of thousands of tests. */
static int name_index(struct impact_graph *g, struct strmap *by_use, struct strmap *by_name,
		      const char *use, uint32_t *out)
{
	intptr_t v;
	if (strmap_get(by_use, use, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	char buf[1024];
	struct strmap none = { 0 };
	resolve(g->src, NULL, &none, use, buf, sizeof(buf));
	if (!strmap_get(by_name, buf, &v)) {
		const char *k = scan__strndup(&g->arena, buf, strlen(buf));
		void *p = scan__grow(g->names, g->n_names, &g->names_cap, sizeof(*g->names));
		if (!k || !p)
			return err_set(ERR_NOMEM, "impact: resolved uses");
		g->names = p;
		v = (intptr_t)g->n_names;
		g->names[g->n_names++] = k;
		if (strmap_put(by_name, k, v))
			return ERR_NOMEM;
	}
	*out = (uint32_t)v;
	return strmap_put(by_use, use, v);
}

static int resolve_tests(struct impact_graph *g, const struct catalog *head)
{
	if (!(g->off = calloc(head->n_tests + 1, sizeof(*g->off))))
		return err_set(ERR_NOMEM, "impact: %zu tests' uses", head->n_tests);
	struct strmap by_use = { 0 }, by_name = { 0 };
	int rc = 0;
	for (size_t i = 0; i < head->n_tests && !rc; i++) {
		const struct catalog_test *t = &head->tests[i];
		const struct scan_function *f =
		    &head->files[t->file].blob->scan->functions[t->function];
		g->off[i] = g->n_uses;
		for (size_t u = 0; u < f->n_uses && !rc; u++) {
			uint32_t k;
			void *p = scan__grow(g->uses, g->n_uses, &g->uses_cap, sizeof(*g->uses));
			if (!p) {
				rc = err_set(ERR_NOMEM, "impact: tests' uses");
				break;
			}
			g->uses = p;
			rc = name_index(g, &by_use, &by_name, f->uses[u], &k);
			if (!rc)
				g->uses[g->n_uses++] = k;
		}
	}
	g->off[head->n_tests] = g->n_uses;
	strmap_free(&by_use);
	strmap_free(&by_name);
	return rc;
}

static void source_release(struct impact_source *g)
{
	if (!g || --g->refs)
		return;
	for (size_t i = 0; i < g->n_callers; i++)
		free(g->callers[i].v);
	free(g->callers);
	free(g->files);
	strmap_free(&g->alias);
	strmap_free(&g->rev);
	scan__arena_free(&g->arena);
	free(g);
}

void impact__graph_destroy(struct impact_graph *g)
{
	if (!g)
		return;
	source_release(g->src);
	free(g->names);
	free(g->uses);
	free(g->off);
	scan__arena_free(&g->arena);
	free(g);
}

/* True when `cat`'s source files are exactly those `src` was built from. */
static bool same_sources(const struct impact_source *src, const struct catalog *cat)
{
	size_t n = 0;
	for (size_t f = 0; f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		if (cf->kind != CATALOG_SOURCE)
			continue;
		const char *k = n < src->n_files ? src->files[n] : NULL;
		if (!k || strcmp(k, cf->path) != 0 || strcmp(k + strlen(k) + 1, cf->blob_id) != 0)
			return false;
		n++;
	}
	return n == src->n_files;
}

static int source_build(struct impact_source **out, const struct catalog *head)
{
	struct impact_source *g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(ERR_NOMEM, "impact call graph");
	g->refs = 1;
	size_t cap = 0;
	int rc = build_aliases(g, head);
	for (size_t f = 0; !rc && f < head->n_files; f++) {
		const struct catalog_file *cf = &head->files[f];
		if (cf->kind != CATALOG_SOURCE)
			continue;
		size_t pl = strlen(cf->path);
		char *k = scan__alloc(&g->arena, pl + 42);
		void *p = scan__grow(g->files, g->n_files, &cap, sizeof(*g->files));
		if (p)
			g->files = p;
		if (!k || !p) {
			rc = err_set(ERR_NOMEM, "impact: source files");
			break;
		}
		memcpy(k, cf->path, pl + 1);
		memcpy(k + pl + 1, cf->blob_id, 41);
		g->files[g->n_files++] = k;
		if (cf->blob->scan)
			rc = file_edges(g, cf);
	}
	if (rc) {
		source_release(g);
		return rc;
	}
	*out = g;
	return 0;
}

/* The head catalog's graph, built on the first call for that catalog; its source part is the
 * base's when the base has one built from the same source files. */
static int graph_of(const struct catalog *head, const struct catalog *base,
		    const struct impact_graph **out)
{
	struct catalog_priv *priv = head->priv_;
	if (priv->graph) {
		*out = priv->graph;
		return 0;
	}
	struct impact_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(ERR_NOMEM, "impact graph");
	const struct catalog_priv *bp = base->priv_;
	int rc = 0;
	if (bp->graph && same_sources(bp->graph->src, head)) {
		g->src = bp->graph->src;
		g->src->refs++;
	} else {
		rc = source_build(&g->src, head);
	}
	if (!rc)
		rc = resolve_tests(g, head);
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
		if (d >= x->max_depth || !strmap_get(&x->graph->src->rev, queue[qi], &idx))
			continue;
		const struct callers *c = &x->graph->src->callers[idx];
		for (size_t k = 0; k < c->n && !rc; k++) {
			if (strmap_get(&x->impacted, c->v[k], NULL))
				continue;
			void *p = scan__grow(queue, qn, &qcap, sizeof(*queue));
			if (!p || strmap_put(&x->impacted, c->v[k], d + 1)) {
				free(p ? p : queue);
				return err_set(ERR_NOMEM, "closure");
			}
			queue = p;
			queue[qn++] = c->v[k];
		}
	}
	free(queue);
	return rc;
}

/* The smallest distance of `sym` or of any of its dotted prefixes in the closure, or -1. */
static long hit(const struct ictx *x, char *sym)
{
	long best = -1;
	size_t len = strlen(sym);
	for (size_t cut = len; cut > 0; cut--) {
		if (cut != len && sym[cut] != '.')
			continue;
		char save = sym[cut];
		sym[cut] = 0;
		intptr_t d;
		if (strmap_get(&x->impacted, sym, &d) && (best < 0 || d < best))
			best = (long)d;
		sym[cut] = save;
	}
	return best;
}

/* The tests whose resolved uses reach the closure: the first use of the smallest distance. */
static int tests_signal(struct ictx *x)
{
	const struct impact_graph *g = x->graph;
	long *dist = NULL;
	if (g->n_names && !(dist = malloc(g->n_names * sizeof(*dist))))
		return err_set(ERR_NOMEM, "impact: %zu distances", g->n_names);
	char buf[1024];
	for (size_t k = 0; k < g->n_names; k++) {
		snprintf(buf, sizeof(buf), "%s", g->names[k]);
		dist[k] = hit(x, buf);
	}
	int rc = 0;
	for (size_t i = 0; i < x->head->n_tests && !rc; i++) {
		long best = -1;
		uint32_t what = 0;
		for (size_t u = g->off[i]; u < g->off[i + 1]; u++) {
			long d = dist[g->uses[u]];
			if (d >= 0 && (best < 0 || d < best)) {
				best = d;
				what = g->uses[u];
			}
		}
		if (best >= 0)
			rc = impact__add(
			    x, x->head->tests[i].id, IMPACT_SYMBOL, 1.0 / (1.0 + (double)best),
			    "uses %.250s (distance %ld from a change)", g->names[what], best);
	}
	free(dist);
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
		rc = tests_signal(x);
	return rc;
}

void impact__ctx_finish(struct ictx *x)
{
	strmap_free(&x->cand);
	strmap_free(&x->ops);
	strmap_free(&x->seeds);
	strmap_free(&x->impacted);
	scan__arena_free(&x->arena);
}
