/* Stage 2's symbol signal, last step: the tests whose resolved uses (their own, their helpers',
 * see impact_local.c) reach the closure of the changed symbols, each with the chain that
 * `--explain` shows: `test/test_x.py::TestX::test_a -> _helper_x (test/test_x.py) -> torch.a.g ->
 * torch.a.b.f (changed)`. A name's distance is the smallest of its dotted prefixes' (itself
 * included) in the closure, found through the source graph's prefix index; a computed name
 * (`getattr(torch.special, name)`, `exec`) reaches every symbol under its root, and its reason
 * says so. Ties are broken by name, so that a chain does not depend on how the graph was built.
 * Also the op database entries whose arguments reach the closure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "impact_internal.h"

#define CHAIN_STEPS_MAX 32

struct hits {
	uint8_t *reached; /* per name index: 1 when reached (dense: the loop over every test's
			   * names reads only this, and most tests reach nothing) */
	long *dist;       /* per name index: the distance; valid where reached */
	const char **by;  /* the closure symbol it was reached through */
};

static bool hit(struct hits *h, uint32_t name, long d, const char *sym)
{
	long *cur = &h->dist[name];
	if (h->reached[name] && (d > *cur || (d == *cur && strcmp(sym, h->by[name]) >= 0)))
		return true;
	h->reached[name] = 1;
	*cur = d;
	h->by[name] = sym;
	return true;
}

static bool prefix_of(const char *sym, const char *root)
{
	size_t n = strlen(root);
	return strncmp(sym, root, n) == 0 && (sym[n] == 0 || sym[n] == '.');
}

/* The test infrastructure (sample inputs, the op database, device-type machinery): a computed
 * name of the API (`getattr(torch, name)`, `exec`) does not reach into it; what reaches it is
 * an import of it, read statically, or the op database's entries. */
#define TEST_INFRA "torch.testing._internal"

/* True when `sym` is under the computed root `root` ("*": anything but the test
 * infrastructure, unless the root itself is in it). */
static bool under(const char *sym, const char *root)
{
	bool star = strcmp(root, "*") == 0;
	if (prefix_of(sym, TEST_INFRA) && (star || !prefix_of(root, TEST_INFRA)))
		return false;
	return star || prefix_of(sym, root);
}

static bool mark(const struct ictx *x, struct hits *h)
{
	const struct impact_source *s = x->graph->src;
	bool any = false;
	for (size_t k = 0; k < x->impacted.cap; k++) {
		const struct strmap_slot *sl = &x->impacted.slots[k];
		intptr_t head;
		if (!sl->key)
			continue;
		if (strmap_get(&s->by_prefix, sl->key, &head))
			for (uint32_t l = (uint32_t)head; l != UINT32_MAX; l = s->links[l].next)
				any |= hit(h, s->links[l].name, (long)sl->value, sl->key);
		for (size_t c = 0; c < s->n_computed; c++)
			if (under(sl->key, s->names[s->computed[c]] + 1))
				any |= hit(h, s->computed[c], (long)sl->value, sl->key);
	}
	return any;
}

static const char *why_of(const struct ictx *x, const char *sym)
{
	intptr_t why;
	if (strmap_get(&x->seeds, sym, &why))
		return (const char *)why;
	const char *op = sym[0] == '.' ? sym + 1 : strncmp(sym, "torch.", 6) == 0 ? sym + 6 : NULL;
	if (op && strmap_get(&x->ops, op, &why))
		return (const char *)why;
	return "changed";
}

/* " -> NAME -> callee -> ... -> SEED (why)" from the name a test uses to the change. */
static void symbol_chain(const struct ictx *x, const char *name, const char *sym, char *buf,
			 size_t n)
{
	size_t w = 0;
	int r = 0;
	if (name[0] == '!')
		r = snprintf(buf, n, " -> %s%s",
			     strcmp(name, "!*") == 0
				 ? "exec, eval or an import of a computed module"
				 : "a computed name under ",
			     strcmp(name, "!*") == 0 ? "" : name + 1);
	else if (strcmp(name, sym) != 0)
		r = snprintf(buf, n, " -> %s", name);
	w = r > 0 ? (size_t)r : 0;
	const char *cur = sym, *last = sym;
	for (int step = 0; cur && w < n && step < CHAIN_STEPS_MAX; step++) {
		r = snprintf(buf + w, n - w, " -> %s", cur);
		w += r > 0 ? (size_t)r : 0;
		last = cur;
		intptr_t next;
		cur = strmap_get(&x->via, cur, &next) ? (const char *)next : NULL;
	}
	if (w < n)
		snprintf(buf + w, n - w, " (%s)", cur ? "..." : why_of(x, last));
}

/* The reason of test t reached through name `what` of its block entry `u`. */
static int add_test(struct ictx *x, const struct catalog_test *t, const struct use_block *b,
		    size_t u, long d, const struct hits *h, struct local_index *li, size_t *li_file)
{
	const struct impact_source *s = x->graph->src;
	const char *name = s->names[b->names[u]];
	char hops[256] = "", tail[320];
	if (b->via[u] != (uint32_t)t->function) {
		const struct scan_file *sf = x->head->files[t->file].blob->scan;
		if (*li_file != t->file) {
			impact__local_finish(li);
			*li_file = SIZE_MAX;
			int rc = impact__local_init(li, sf);
			if (rc)
				return rc;
			*li_file = t->file;
		}
		impact__local_chain(li, (uint32_t)t->function, b->via[u], hops, sizeof(hops));
	}
	symbol_chain(x, name, h->by[b->names[u]], tail, sizeof(tail));
	return impact__add(x, t->id, IMPACT_SYMBOL, 1.0 / (1.0 + (double)d), "%s%s%s%s",
			   name[0] == '!' ? "reached through a computed name: " : "", t->id, hops,
			   tail);
}

int impact__tests_signal(struct ictx *x)
{
	const struct impact_graph *g = x->graph;
	const struct impact_source *s = g->src;
	struct hits h = { 0 };
	if (s->n_names && (!(h.reached = calloc(s->n_names, 1)) ||
			   !(h.dist = malloc(s->n_names * sizeof(*h.dist))) ||
			   !(h.by = malloc(s->n_names * sizeof(*h.by))))) {
		free(h.reached);
		free(h.dist);
		return err_set(ERR_NOMEM, "impact: %zu distances", s->n_names);
	}
	int rc = 0;
	struct local_index li = { 0 };
	size_t li_file = SIZE_MAX;
	if (!mark(x, &h))
		goto out;
	for (size_t i = 0; i < x->head->n_tests && !rc; i++) {
		const struct catalog_test *t = &x->head->tests[i];
		const struct use_block *b = g->blocks[t->file];
		long best = -1;
		size_t what = 0;
		for (size_t u = b->off[t->function]; u < b->off[t->function + 1]; u++) {
			if (!h.reached[b->names[u]])
				continue;
			long d = h.dist[b->names[u]];
			if (best < 0 || d < best) {
				best = d;
				what = u;
			}
		}
		if (best >= 0)
			rc = add_test(x, t, b, what, best, &h, &li, &li_file);
	}
out:
	impact__local_finish(&li);
	free(h.reached);
	free(h.dist);
	free(h.by);
	return rc;
}

/* The length of the longest dotted prefix of `name` (itself included) in the closure, or 0. */
static size_t impacted_prefix(const struct ictx *x, char *name)
{
	size_t len = strlen(name);
	for (size_t cut = len; cut > 0; cut--) {
		if (cut != len && name[cut] != '.')
			continue;
		char save = name[cut];
		name[cut] = 0;
		int k = strmap_get(&x->impacted, name, NULL);
		name[cut] = save;
		if (k)
			return cut;
	}
	return 0;
}

/* Op database entries whose arguments reach the closure (`op=lambda x: torch.a.f(x)`,
 * `sample_inputs_func=sample_inputs_foo` when either changed): their ops count as changed, so
 * that the @ops tests over them are selected (ops_to_tests, after this). */
int impact__opdb_entries(struct ictx *x)
{
	int rc = 0;
	for (size_t f = 0; !rc && f < x->head->n_files; f++) {
		const struct catalog_file *cf = &x->head->files[f];
		const struct scan_file *sf = cf->opdb ? cf->blob->scan : NULL;
		if (!sf || !sf->n_opinfos)
			continue;
		struct strmap local = { 0 };
		rc = impact__local_names(&local, sf);
		for (size_t e = 0; !rc && e < sf->n_opinfos; e++) {
			const struct scan_opinfo *o = &sf->opinfos[e];
			for (size_t u = 0; !rc && u < o->n_uses; u++) {
				char buf[1024];
				impact__resolve(&x->graph->src->alias, cf->module, &local,
						o->uses[u], buf, sizeof(buf));
				size_t cut = buf[0] != '.' ? impacted_prefix(x, buf) : 0;
				if (!cut || strmap_get(&x->ops, o->name, NULL))
					continue;
				buf[cut] = 0;
				size_t n = cut + 64;
				char *why = scan__alloc(&x->arena, n);
				if (!why)
					rc = err_set(ERR_NOMEM, "impact: op entries");
				else
					snprintf(why, n, "its entry uses %s (%s)", buf,
						 strmap_get(&x->seeds, buf, NULL)
						     ? "changed"
						     : "reaches a change");
				if (!rc)
					rc = strmap_put(&x->ops, o->name, (intptr_t)why);
				break;
			}
		}
		strmap_free(&local);
	}
	return rc;
}
