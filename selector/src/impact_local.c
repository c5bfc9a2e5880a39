/* Stage 2's view of a test file's own definitions: a test runs more than its body. It calls the
 * module-level helpers of its file (`_helper_x(...)`), helper methods of its class, its mixins
 * and its in-file bases (`self._check(...)`, `cls._make()`, `super().setUp()`), decorators
 * defined in the file, and it reads module-level and class-level tables of callables
 * (`_FNS = [torch.a.f]`, `OPS = {"x": lambda x: torch.b.g(x)}`, `partial(torch.c.h, 1)`). These
 * form a small graph per file (nodes: the scanner's functions, then its globals); a test's
 * resolved uses are those of every node it reaches, each with the node it came from, so that
 * `--explain` shows the chain. A method name (`.name`) reaches every method and class-level
 * global of that name in the file (any class: the receiver's type is not known), and through a
 * base class imported from another module (`class TestX(CommonBase)`) the name `Base.name`. All
 * of it depends on the file's blob alone: the blocks are kept per blob and reused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "impact_internal.h"

#define LOCAL_BASES_MAX 16 /* in-file base classes followed from one class */
#define NODE_NONE       UINT32_MAX

static bool is_method(const struct scan_function *f)
{
	return f->class_index >= 0 && f->parent_function < 0;
}

static int put_chain(struct local_index *li, const char *name, uint32_t node)
{
	intptr_t head;
	li->next[node] = strmap_get(&li->meth, name, &head) ? (uint32_t)head : NODE_NONE;
	return strmap_put(&li->meth, name, (intptr_t)node);
}

int impact__local_init(struct local_index *li, const struct scan_file *sf)
{
	memset(li, 0, sizeof(*li));
	li->last_len = SIZE_MAX;
	li->sf = sf;
	li->n_fn = (uint32_t)sf->n_functions;
	li->n_nodes = li->n_fn + (uint32_t)sf->n_globals;
	size_t n = li->n_nodes ? li->n_nodes : 1;
	li->next = malloc(n * sizeof(*li->next));
	li->stamp = calloc(n, sizeof(*li->stamp));
	li->parent = malloc(n * sizeof(*li->parent));
	li->queue = malloc(n * sizeof(*li->queue));
	int rc = li->next && li->stamp && li->parent && li->queue ? 0 : ERR_NOMEM;
	for (uint32_t i = 0; !rc && i < li->n_fn; i++) {
		const struct scan_function *f = &sf->functions[i];
		if (f->class_index < 0 && f->parent_function < 0)
			rc = strmap_put(&li->fn, f->name, i); /* the last def wins, as in Python */
		else if (is_method(f))
			rc = put_chain(li, f->name, i);
	}
	for (size_t i = 0; !rc && i < sf->n_classes; i++)
		if (sf->classes[i].parent_class < 0 && sf->classes[i].parent_function < 0)
			rc = strmap_put(&li->cls, sf->classes[i].name, (intptr_t)i);
	for (uint32_t g = 0; !rc && g < sf->n_globals; g++) {
		const struct scan_global *x = &sf->globals[g];
		rc = x->class_index < 0 ? strmap_put(&li->glob, x->name, li->n_fn + g)
					: put_chain(li, x->name, li->n_fn + g);
	}
	if (rc) {
		impact__local_finish(li);
		return err_set(ERR_NOMEM, "impact: the helpers of %s", sf->path);
	}
	return 0;
}

void impact__local_finish(struct local_index *li)
{
	strmap_free(&li->fn);
	strmap_free(&li->cls);
	strmap_free(&li->glob);
	strmap_free(&li->meth);
	free(li->next);
	free(li->stamp);
	free(li->parent);
	free(li->queue);
	memset(li, 0, sizeof(*li));
}

const char *const *impact__local_uses(const struct local_index *li, uint32_t node, size_t *n)
{
	if (node < li->n_fn) {
		*n = li->sf->functions[node].n_uses;
		return li->sf->functions[node].uses;
	}
	*n = li->sf->globals[node - li->n_fn].n_uses;
	return li->sf->globals[node - li->n_fn].uses;
}

static int owner_class(const struct local_index *li, uint32_t node)
{
	return node < li->n_fn ? li->sf->functions[node].class_index
			       : li->sf->globals[node - li->n_fn].class_index;
}

static void reach(struct local_index *li, uint32_t node, uint32_t from, size_t *qn)
{
	if (node >= li->n_nodes || li->stamp[node] == li->epoch)
		return;
	li->stamp[node] = li->epoch;
	li->parent[node] = from;
	li->queue[(*qn)++] = node;
}

/* Methods and class-level globals named `name`: of class `cls` only when cls >= 0. */
static void reach_members(struct local_index *li, const char *name, int cls, uint32_t from,
			  size_t *qn)
{
	intptr_t head;
	if (!strmap_get(&li->meth, name, &head))
		return;
	for (uint32_t k = (uint32_t)head; k != NODE_NONE; k = li->next[k])
		if (cls < 0 || owner_class(li, k) == cls)
			reach(li, k, from, qn);
}

/* The module-level function, global and class a root name stands for (NODE_NONE / -1 when
 * none), memoised for the last root: a function's uses are sorted, so most share the root of
 * the one before ("torch.a", "torch.b"). */
static void root_of(struct local_index *li, const char *use, size_t rl, uint32_t *fn,
		    uint32_t *glob, int *cls)
{
	if (!(li->last_len == rl && memcmp(li->last_root, use, rl) == 0)) {
		char root[sizeof(li->last_root)];
		memcpy(root, use, rl);
		root[rl] = 0;
		intptr_t v;
		li->last_fn = strmap_get(&li->fn, root, &v) ? (uint32_t)v : NODE_NONE;
		li->last_glob = strmap_get(&li->glob, root, &v) ? (uint32_t)v : NODE_NONE;
		li->last_cls = strmap_get(&li->cls, root, &v) ? (int)v : -1;
		memcpy(li->last_root, use, rl);
		li->last_len = rl;
	}
	*fn = li->last_fn;
	*glob = li->last_glob;
	*cls = li->last_cls;
}

/* What one use of `node` reaches in the file. */
static void reach_use(struct local_index *li, const char *use, uint32_t node, size_t *qn)
{
	static const char *const init[] = { "__init__", "__new__", "__call__", "__post_init__" };
	if (use[0] == '.') {
		reach_members(li, use + 1, -1, node, qn);
		return;
	}
	const char *dot = strchr(use, '.');
	size_t rl = dot ? (size_t)(dot - use) : strlen(use);
	if (rl >= sizeof(li->last_root) || use[0] == '!')
		return;
	uint32_t fn, glob;
	int cls;
	root_of(li, use, rl, &fn, &glob, &cls);
	if (!dot && fn != NODE_NONE)
		reach(li, fn, node, qn);
	if (glob != NODE_NONE)
		reach(li, glob, node, qn);
	if (cls < 0)
		return;
	if (!dot) {
		for (size_t k = 0; k < sizeof(init) / sizeof(*init); k++)
			reach_members(li, init[k], cls, node, qn);
		return;
	}
	char attr[256];
	const char *end = strchr(dot + 1, '.');
	size_t al = end ? (size_t)(end - dot - 1) : strlen(dot + 1);
	if (al < sizeof(attr)) {
		memcpy(attr, dot + 1, al);
		attr[al] = 0;
		reach_members(li, attr, cls, node, qn);
	}
}

/* A test method runs its class's fixtures (setUp, tearDown and their class forms) first: those
 * of its class and of the classes of the file it derives from. */
static void reach_fixtures(struct local_index *li, uint32_t from, size_t *qn)
{
	static const char *const fixtures[] = { "setUp", "tearDown", "setUpClass",
						"tearDownClass" };
	const struct scan_function *f = &li->sf->functions[from];
	if (!is_method(f) || strncmp(f->name, "test", 4) != 0 ||
	    (size_t)f->class_index >= li->sf->n_classes)
		return;
	int todo[LOCAL_BASES_MAX], nt = 0;
	todo[nt++] = f->class_index;
	for (int seen = 0; seen < nt; seen++) {
		const struct scan_class *c = &li->sf->classes[todo[seen]];
		for (size_t k = 0; k < sizeof(fixtures) / sizeof(*fixtures); k++)
			reach_members(li, fixtures[k], todo[seen], from, qn);
		for (size_t a = 0; a < c->n_bases; a++) {
			intptr_t in;
			bool dup = false;
			if (c->bases[a].keyword || c->bases[a].kind != SCAN_ARG_NAME ||
			    !strmap_get(&li->cls, c->bases[a].value, &in))
				continue;
			for (int k = 0; k < nt; k++)
				dup |= todo[k] == (int)in;
			if (!dup && nt < LOCAL_BASES_MAX)
				todo[nt++] = (int)in;
		}
	}
}

size_t impact__local_walk(struct local_index *li, uint32_t from)
{
	if (from >= li->n_fn)
		return 0;
	if (++li->epoch == 0) { /* wrapped: every stamp is stale */
		memset(li->stamp, 0, li->n_nodes * sizeof(*li->stamp));
		li->epoch = 1;
	}
	size_t qn = 0;
	reach(li, from, NODE_NONE, &qn);
	reach_fixtures(li, from, &qn);
	for (size_t qi = 0; qi < qn; qi++) {
		size_t n;
		const char *const *uses = impact__local_uses(li, li->queue[qi], &n);
		for (size_t u = 0; u < n; u++)
			reach_use(li, uses[u], li->queue[qi], &qn);
	}
	return qn;
}

static const char *node_name(const struct local_index *li, uint32_t node, char *buf, size_t n)
{
	if (node < li->n_fn)
		return li->sf->functions[node].qualname;
	const struct scan_global *g = &li->sf->globals[node - li->n_fn];
	if (g->class_index < 0 || (size_t)g->class_index >= li->sf->n_classes)
		return g->name;
	snprintf(buf, n, "%s.%s", li->sf->classes[g->class_index].qualname, g->name);
	return buf;
}

size_t impact__local_chain(struct local_index *li, uint32_t from, uint32_t to, char *buf, size_t n)
{
	if (to == from || to >= li->n_nodes || n == 0)
		return 0;
	impact__local_walk(li, from);
	uint32_t path[64];
	size_t len = 0;
	for (uint32_t k = to; k != from && k != NODE_NONE && len < 64; k = li->parent[k])
		path[len++] = k;
	size_t w = 0;
	buf[0] = 0;
	for (size_t i = len; i > 0 && w < n; i--) {
		char tmp[256];
		int r = snprintf(buf + w, n - w, " -> %s (%s)",
				 node_name(li, path[i - 1], tmp, sizeof(tmp)), li->sf->path);
		w += r > 0 ? (size_t)r : 0;
	}
	return w < n ? w : n - 1;
}

/* ---- a test file's blocks ---- */

/* The module an imported base class name stands for ("common.Base" -> "torch.x.common.Base"),
 * or NULL when no module-level import binds its root. */
static const char *base_target(const struct scan_file *sf, const char *base, char *buf, size_t n)
{
	const char *dot = strchr(base, '.');
	size_t rl = dot ? (size_t)(dot - base) : strlen(base);
	for (size_t i = sf->n_imports; i > 0; i--) {
		const struct scan_import *im = &sf->imports[i - 1];
		if (im->function < 0 && strlen(im->local) == rl &&
		    memcmp(im->local, base, rl) == 0) {
			snprintf(buf, n, "%s%s", im->target, dot ? dot : "");
			return buf;
		}
	}
	return NULL;
}

/* A block being built: names and their nodes, deduplicated per function by a stamp on the
 * source graph's name index. */
struct build {
	uint32_t *names, *via;
	uint32_t n, cap;
	uint32_t *seen; /* per name index: the stamp of the function that holds it */
	size_t seen_cap;
	uint32_t stamp;
	struct imported *imported; /* per class of the file */
};

static int block_add(struct impact_source *g, struct build *bb, const char *use, uint32_t via)
{
	uint32_t idx;
	int rc = impact__name_index(g, use, &idx);
	if (rc)
		return rc;
	if (idx >= bb->seen_cap) {
		size_t cap = 2 * (size_t)idx + 64;
		uint32_t *p = realloc(bb->seen, cap * sizeof(*p));
		if (!p)
			return err_set(ERR_NOMEM, "impact: resolved uses");
		memset(p + bb->seen_cap, 0, (cap - bb->seen_cap) * sizeof(*p));
		bb->seen = p;
		bb->seen_cap = cap;
	}
	if (bb->seen[idx] == bb->stamp)
		return 0;
	bb->seen[idx] = bb->stamp;
	if (bb->n == bb->cap) {
		uint32_t cap = bb->cap ? 2 * bb->cap : 64;
		uint32_t *p1 = realloc(bb->names, cap * sizeof(*p1));
		if (p1)
			bb->names = p1;
		uint32_t *p2 = p1 ? realloc(bb->via, cap * sizeof(*p2)) : NULL;
		if (p2)
			bb->via = p2;
		if (!p1 || !p2)
			return err_set(ERR_NOMEM, "impact: resolved uses");
		bb->cap = cap;
	}
	bb->names[bb->n] = idx;
	bb->via[bb->n++] = via;
	return 0;
}

#define IMPORTED_BASES_MAX 4 /* imported bases kept for one class (with its in-file bases') */

/* The bases of one class (and of its in-file bases) imported from another module, made once per
 * class and block. */
struct imported {
	bool done;
	int n;
	char target[IMPORTED_BASES_MAX][256];
};

static void imported_of(const struct local_index *li, int cls, struct imported *out)
{
	const struct scan_file *sf = li->sf;
	int todo[LOCAL_BASES_MAX], nt = 0, seen = 0;
	todo[nt++] = cls;
	out->done = true;
	while (seen < nt) {
		const struct scan_class *c = &sf->classes[todo[seen++]];
		for (size_t a = 0; a < c->n_bases; a++) {
			const struct scan_arg *arg = &c->bases[a];
			intptr_t in;
			if (arg->keyword || arg->kind != SCAN_ARG_NAME)
				continue;
			if (strmap_get(&li->cls, arg->value, &in)) {
				bool dup = false;
				for (int k = 0; k < nt; k++)
					dup |= todo[k] == (int)in;
				if (!dup && nt < LOCAL_BASES_MAX)
					todo[nt++] = (int)in;
			} else if (out->n < IMPORTED_BASES_MAX &&
				   base_target(sf, arg->value, out->target[out->n],
					       sizeof(out->target[0]))) {
				out->n++;
			}
		}
	}
}

/* "Base.m" for each `.m` use of method `fn` and each base of its class (or of its in-file bases)
 * imported from another module. */
static int imported_bases(struct impact_source *g, const struct local_index *li, uint32_t fn,
			  struct build *bb)
{
	const struct scan_function *f = &li->sf->functions[fn];
	struct imported *im = &bb->imported[f->class_index];
	if (!im->done)
		imported_of(li, f->class_index, im);
	for (int k = 0; k < im->n; k++)
		for (size_t u = 0; u < f->n_uses; u++) {
			if (f->uses[u][0] == '!')
				continue;
			if (f->uses[u][0] != '.')
				break; /* sorted: the `.attr` uses come after `!` ones only */
			char name[1024];
			snprintf(name, sizeof(name), "%s%s", im->target[k], f->uses[u]);
			int rc = block_add(g, bb, name, fn);
			if (rc)
				return rc;
		}
	return 0;
}

/* The names node `node` adds to the block of the function being built. */
static int node_names(struct impact_source *g, const struct local_index *li, uint32_t node,
		      struct build *bb)
{
	size_t nu;
	const char *const *uses = impact__local_uses(li, node, &nu);
	for (size_t u = 0; u < nu; u++) {
		int rc = block_add(g, bb, uses[u], node);
		if (rc)
			return rc;
	}
	const struct scan_function *f = node < li->n_fn ? &li->sf->functions[node] : NULL;
	if (f && is_method(f) && (size_t)f->class_index < li->sf->n_classes)
		return imported_bases(g, li, node, bb);
	return 0;
}

int impact__block_fill(struct impact_source *g, const struct scan_file *sf, struct use_block *b)
{
	struct local_index li;
	int rc = impact__local_init(&li, sf);
	if (rc)
		return rc;
	struct build bb = { 0 };
	if (sf->n_classes && !(bb.imported = calloc(sf->n_classes, sizeof(*bb.imported))))
		rc = err_set(ERR_NOMEM, "impact: bases of %s", sf->path);
	for (uint32_t i = 0; !rc && i < li.n_fn; i++) {
		b->off[i] = bb.n;
		bb.stamp = i + 1;
		size_t reached = impact__local_walk(&li, i);
		for (size_t q = 0; !rc && q < reached; q++)
			rc = node_names(g, &li, li.queue[q], &bb);
	}
	b->off[li.n_fn] = bb.n;
	if (!rc && bb.n) {
		b->names = scan__alloc(&g->arena, bb.n * sizeof(*b->names));
		b->via = scan__alloc(&g->arena, bb.n * sizeof(*b->via));
		if (!b->names || !b->via)
			rc = err_set(ERR_NOMEM, "impact: uses of %s", sf->path);
		else {
			memcpy(b->names, bb.names, bb.n * sizeof(*b->names));
			memcpy(b->via, bb.via, bb.n * sizeof(*b->via));
		}
	}
	free(bb.names);
	free(bb.via);
	free(bb.seen);
	free(bb.imported);
	impact__local_finish(&li);
	return rc;
}
