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

static const char *join(struct ictx *x, const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = scan__alloc(&x->arena, n);
	if (s)
		snprintf(s, n, "%s.%s", a, b);
	return s;
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

/* ---- the graph ---- */

static int build_aliases(struct ictx *x)
{
	for (size_t f = 0; f < x->head->n_files; f++) {
		const struct catalog_file *cf = &x->head->files[f];
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
			const char *key = join(x, cf->module, im->local);
			if (!key)
				return ERR_NOMEM;
			if (strcmp(key, im->target) != 0 &&
			    strmap_put(&x->alias, key, (intptr_t)im->target))
				return ERR_NOMEM;
		}
	}
	return 0;
}

/* Resolves `use` (as the scanner wrote it in a file of `module`, with `local` its module-level
 * names) to a canonical symbol in `buf`. */
static const char *resolve(struct ictx *x, const char *module, const struct strmap *local,
			   const char *use, char *buf, size_t n)
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
			if (strmap_get(&x->alias, buf, &t)) {
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

static int edge(struct ictx *x, const char *callee, const char *caller)
{
	intptr_t idx;
	if (!strmap_get(&x->rev, callee, &idx)) {
		const char *k = scan__strndup(&x->arena, callee, strlen(callee));
		void *p =
		    scan__grow(x->callers, x->n_callers, &x->callers_cap, sizeof(*x->callers));
		if (!k || !p)
			return err_set(ERR_NOMEM, "call graph");
		x->callers = p;
		idx = (intptr_t)x->n_callers;
		x->callers[x->n_callers++] = (struct callers){ 0 };
		if (strmap_put(&x->rev, k, idx))
			return ERR_NOMEM;
	}
	struct callers *c = &x->callers[idx];
	if (c->n && c->v[c->n - 1] == caller)
		return 0;
	void *p = scan__grow(c->v, c->n, &c->cap, sizeof(*c->v));
	if (!p)
		return err_set(ERR_NOMEM, "call graph edges");
	c->v = p;
	c->v[c->n++] = caller;
	return 0;
}

static int file_edges(struct ictx *x, const struct catalog_file *cf)
{
	const struct scan_file *sf = cf->blob->scan;
	struct strmap local = { 0 };
	int rc = local_names(&local, sf);
	char buf[1024];
	for (size_t i = 0; !rc && i < sf->n_functions; i++) {
		const struct scan_function *f = &sf->functions[i];
		const char *caller = join(x, cf->module, outer_qualname(sf, i));
		if (!caller) {
			rc = ERR_NOMEM;
			break;
		}
		if (f->class_index >= 0 && f->parent_function < 0)
			rc = edge(x, caller,
				  join(x, cf->module, sf->classes[f->class_index].qualname));
		for (size_t u = 0; !rc && u < f->n_uses; u++)
			rc = edge(x, resolve(x, cf->module, &local, f->uses[u], buf, sizeof(buf)),
				  caller);
	}
	strmap_free(&local);
	return rc;
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
		if (d >= x->max_depth || !strmap_get(&x->rev, queue[qi], &idx))
			continue;
		const struct callers *c = &x->callers[idx];
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

/* What one use resolves to and its distance from a change (-1: none), memoised per run: the
 * same dotted names recur across tens of thousands of tests. */
struct use_hit {
	long d;
	const char *what; /* the resolved name when d >= 0 */
};

static const struct use_hit *use_hit(struct ictx *x, struct strmap *memo, const char *use)
{
	intptr_t v;
	if (strmap_get(memo, use, &v))
		return (const struct use_hit *)v;
	char buf[1024];
	struct strmap none = { 0 };
	resolve(x, NULL, &none, use, buf, sizeof(buf));
	struct use_hit *h = scan__alloc(&x->arena, sizeof(*h));
	if (!h)
		return NULL;
	h->d = hit(x, buf);
	h->what = NULL;
	if (h->d >= 0) {
		char *w = scan__alloc(&x->arena, 251);
		if (!w)
			return NULL;
		snprintf(w, 251, "%.250s", buf);
		h->what = w;
	}
	return strmap_put(memo, use, (intptr_t)h) ? NULL : h;
}

static int tests_signal(struct ictx *x)
{
	struct strmap memo = { 0 };
	int rc = 0;
	for (size_t i = 0; i < x->head->n_tests && !rc; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		const struct scan_function *f =
		    &x->head->files[t->file].blob->scan->functions[t->function];
		const struct use_hit *best = NULL;
		for (size_t u = 0; u < f->n_uses && !rc; u++) {
			const struct use_hit *h = use_hit(x, &memo, f->uses[u]);
			if (!h)
				rc = err_set(ERR_NOMEM, "impact: uses");
			else if (h->d >= 0 && (!best || h->d < best->d))
				best = h;
		}
		if (!rc && best)
			rc = impact__add(x, t->id, IMPACT_SYMBOL, 1.0 / (1.0 + (double)best->d),
					 "uses %s (distance %ld from a change)", best->what,
					 best->d);
	}
	strmap_free(&memo);
	return rc;
}

int impact__symbols_to_tests(struct ictx *x)
{
	if (!x->seeds.n && !x->ops.n)
		return 0;
	int rc = build_aliases(x);
	for (size_t f = 0; !rc && f < x->head->n_files; f++)
		if (x->head->files[f].kind == CATALOG_SOURCE && x->head->files[f].blob->scan)
			rc = file_edges(x, &x->head->files[f]);
	if (!rc)
		rc = closure(x);
	if (!rc)
		rc = tests_signal(x);
	return rc;
}

void impact__ctx_finish(struct ictx *x)
{
	for (size_t i = 0; i < x->n_callers; i++)
		free(x->callers[i].v);
	free(x->callers);
	strmap_free(&x->cand);
	strmap_free(&x->ops);
	strmap_free(&x->seeds);
	strmap_free(&x->alias);
	strmap_free(&x->rev);
	strmap_free(&x->impacted);
	scan__arena_free(&x->arena);
}
