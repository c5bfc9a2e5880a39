/* The op lists as PyTorch builds them (catalog_internal.h: catalog__op_variants): which op
 * database entries an @ops(...) argument selects. The lists are not named by hand here; they
 * are the module-level binding statements of the op database's files and of the test file
 * (struct scan_binding), evaluated in source order the way Python would:
 *
 *   op_db: List[OpInfo] = [@0, @1, ...]            entries, by their place in the file
 *   op_db += opinfo.definitions.op_db               names through the file's imports
 *   op_db: List[OpInfo] = [*fft.op_db, ...]         unpacking
 *   unary_ufuncs = [op for op in ops_and_refs if isinstance(op, UnaryUfuncInfo)]
 *   reference_filtered_ops = list(filter(lambda op: op.ref is not None, unary_ufuncs))
 *   A + B, tuple(...), list(...), sorted(...)
 *
 * Conditions: isinstance over the entry classes' real hierarchy (the `class X(Y)` statements of
 * the files), `op.ATTR` (truth, `is None`, `is not None`, `==`, `!=`, `in`, `not in`) with the
 * attribute taken from the entry's own arguments, else (a Python reference entry) from the
 * entry it refers to (`torch_opinfo_name`), else from its class's constructor defaults and the
 * dataclass fields up its bases; `op.name.startswith(...)`; `"x" in str(op)` (taken as: the
 * text is in the entry's name); and/or/not. What cannot be evaluated statically keeps every
 * entry it might keep, and the answer says so, quoting the expression: it widens, never cuts. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"

#define OL_DEPTH_MAX 12  /* nested expressions looked through */
#define OL_WHY_MAX   240 /* bytes of the reason of an over-approximation */

enum tri { T_FALSE, T_TRUE, T_UNKNOWN };

struct ol_entry {
	const struct scan_opinfo *o;
	const struct scan_file *sf;
};

/* A list value: global entry indexes in order (duplicates allowed, as Python's). */
struct olv {
	uint32_t *v;
	size_t n, cap;
};

/* Modules outside torch/testing/_internal/ read (names owned): what an answer kept across
 * catalogs depends on besides those files (catalog_oplist_memo.c). */
struct readset {
	struct catalog__op_read *v;
	size_t n, cap;
};

struct ol_module {
	struct readset deps; /* what its bindings' values were made from */
	bool partial;        /* deps not all known (nested too deep): its uses are not kept */
	const struct catalog_file *cf;
	const char *module;
	const struct scan_file *sf;
	size_t base;             /* global index of the file's entry 0 */
	int state;               /* 0: not evaluated, 1: being evaluated, 2: done */
	int cls;                 /* a class body's scope (its class index): its bindings; else -1 */
	struct ol_module *outer; /* a class body's module */
	struct strmap env;
};

struct ol {
	const struct catalog *cat;
	struct ol_entry *e;
	size_t n_e, cap_e;
	struct ol_module **mods; /* every module evaluated so far, each allocated once */
	size_t n_mods, cap_mods;
	struct olv *vals; /* every bound value (env maps names to indexes here) */
	size_t n_vals, cap_vals;
	struct strmap classes; /* class name -> (file << 20 | class index) + 1 */
	struct ol_module *cur; /* the module whose comprehension a condition is of */
	/* the read sets being made (a module's being evaluated, the evaluation's): every read
	 * goes to each of them */
	struct readset *collect[2 * OL_DEPTH_MAX + 4];
	int n_collect;
	bool uncollected; /* the evaluation read what no read set holds: its answer is not kept */
	/* conditions' values per entry ("var\x1fcond" -> struct cond_memo *): the same filter in
	 * thousands of test files is worked out once per entry; `scoped` says a value read a
	 * module's bindings (then it is not kept: another module may bind the name otherwise) */
	struct strmap conds;
	bool scoped;
	bool approx;
	char why[OL_WHY_MAX];
	int err;
};

/* A condition's values, 1 + enum tri per evaluator entry (0: not worked out yet). */
struct cond_memo {
	unsigned char *v;
	size_t n;
};

/* ---- text ---- */

static void readset_free(struct readset *r)
{
	for (size_t i = 0; i < r->n; i++)
		free((char *)r->v[i].name);
	free(r->v);
	memset(r, 0, sizeof *r);
}

static void readset_add(struct ol *o, struct readset *r, const char *name, const char *blob)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0 && !r->v[i].blob == !blob)
			return;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4;
		struct catalog__op_read *p = realloc(r->v, cap * sizeof *p);
		if (!p) {
			o->err = err_set(ERR_NOMEM, "op lists");
			return;
		}
		r->v = p;
		r->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy) {
		o->err = err_set(ERR_NOMEM, "op lists");
		return;
	}
	r->v[r->n++] = (struct catalog__op_read){ copy, blob };
}

/* Notes that the evaluation read module file `path` (blob id `blob`, the catalog's), or found
 * module `path` missing (blob NULL). The internal files are every answer's inputs anyway. */
static void note_read(struct ol *o, const char *path, const char *blob)
{
	if (blob && catalog__internal_path(path))
		return;
	for (int k = 0; k < o->n_collect; k++)
		readset_add(o, o->collect[k], path, blob);
}

/* A value of module m is used: what it was made from is read too. */
static void note_module(struct ol *o, const struct ol_module *m)
{
	if (m->partial)
		o->uncollected = true;
	if (m->cf->module)
		note_read(o, m->cf->path, m->cf->blob_id);
	for (size_t i = 0; i < m->deps.n; i++)
		note_read(o, m->deps.v[i].name, m->deps.v[i].blob);
}

static bool collect_push(struct ol *o, struct readset *r)
{
	if (o->n_collect == (int)(sizeof o->collect / sizeof o->collect[0]))
		return false;
	o->collect[o->n_collect++] = r;
	return true;
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* The offset after the string literal starting at s[0] (a quote, or a prefix before it). */
static size_t skip_string(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] != '\'' && s[i] != '"')
		i++;
	if (i >= n)
		return n;
	char q = s[i];
	bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
	for (i += triple ? 3 : 1; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q)))
			return i + (triple ? 3 : 1);
	}
	return n;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The closing bracket matching s[0], or n. */
static size_t close_of(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '"' || c == '\'') {
			i = skip_string(s + i, n - i) + i - 1;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && --depth == 0)
			return i;
	}
	return n;
}

static size_t find_op(const char *s, size_t n, const char *op);

/* Drops parentheses that only group (a tuple's stay). */
static void unparen(const char **s, size_t *n)
{
	trim(s, n);
	while (*n >= 2 && (*s)[0] == '(' && close_of(*s, *n) == *n - 1 &&
	       find_op(*s + 1, *n - 2, ",") == *n - 2) {
		(*s)++;
		*n -= 2;
		trim(s, n);
	}
}

/* The first top-level (outside brackets and strings) occurrence of `tok`, or n; with `word`,
 * only between non-identifier characters. */
static size_t find_top(const char *s, size_t n, const char *tok, bool word)
{
	size_t m = strlen(tok);
	int depth = 0;
	for (size_t i = 0; i + m <= n; i++) {
		char c = s[i];
		if (c == '"' || c == '\'' ||
		    ((c == 'r' || c == 'f' || c == 'b' || c == 'u') && i + 1 < n &&
		     (s[i + 1] == '"' || s[i + 1] == '\'') && (i == 0 || !ident_char(s[i - 1])))) {
			i += skip_string(s + i, n - i) - 1;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (depth == 0 && memcmp(s + i, tok, m) == 0 &&
			 (!word || ((i == 0 || !ident_char(s[i - 1])) &&
				    (i + m == n || !ident_char(s[i + m])))))
			return i;
	}
	return n;
}

static size_t find_kw(const char *s, size_t n, const char *kw)
{
	return find_top(s, n, kw, true);
}

static size_t find_op(const char *s, size_t n, const char *op)
{
	return find_top(s, n, op, false);
}

static bool is_word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

static bool starts_with(const char *s, size_t n, const char *w)
{
	size_t m = strlen(w);
	return n >= m && memcmp(s, w, m) == 0;
}

static bool is_dotted_name(const char *s, size_t n)
{
	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ident_char(s[i]) && s[i] != '.')
			return false;
	return true;
}

/* A plain string literal's value (no escapes in it) into buf; false when it is none. */
static bool lit_value(const char *s, size_t n, char *buf, size_t size)
{
	if (n < 2 || (s[0] != '"' && s[0] != '\'') || s[n - 1] != s[0] || n - 2 >= size ||
	    memchr(s + 1, '\\', n - 2))
		return false;
	memcpy(buf, s + 1, n - 2);
	buf[n - 2] = '\0';
	return true;
}

/* A literal's canonical text into buf (at *w): a string as ' and its value, None, True,
 * False, a number as written, a tuple or list of literals as (a,b); false when s is no
 * literal. Two literals are equal when their canonical texts are. */
static bool lit_canon(const char *s, size_t n, char *buf, size_t size, size_t *w, int depth)
{
	trim(&s, &n);
	char lit[256];
	if (lit_value(s, n, lit, sizeof lit)) {
		int k = snprintf(buf + *w, size - *w, "'%s", lit);
		return k >= 0 && (*w += (size_t)k) < size;
	}
	if (n >= 2 && (s[0] == '(' || s[0] == '[') && close_of(s, n) == n - 1 &&
	    depth < OL_DEPTH_MAX) {
		const char *in = s + 1;
		size_t inn = n - 2;
		if (*w + 1 >= size)
			return false;
		buf[(*w)++] = '(';
		bool first = true;
		while (inn) {
			size_t c = find_op(in, inn, ","), k = c;
			const char *it = in;
			trim(&it, &k);
			if (k) {
				if (!first && *w + 1 < size)
					buf[(*w)++] = ',';
				if (!lit_canon(it, k, buf, size, w, depth + 1))
					return false;
				first = false;
			}
			if (c == inn)
				break;
			in += c + 1;
			inn -= c + 1;
		}
		if (*w + 1 >= size)
			return false;
		buf[(*w)++] = ')';
		buf[*w] = '\0';
		return true;
	}
	size_t k = s[0] == '-' ? 1 : 0;
	bool num = k < n && isdigit((unsigned char)s[k]);
	for (size_t i = k; num && i < n; i++)
		num = isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_';
	if (!(num || is_word(s, n, "None") || is_word(s, n, "True") || is_word(s, n, "False")) ||
	    *w + n + 1 >= size)
		return false;
	memcpy(buf + *w, s, n);
	*w += n;
	buf[*w] = '\0';
	return true;
}

/* Text without comments (a `#` outside strings to the end of its line). */
static char *strip_comments(const char *s)
{
	size_t n = strlen(s), w = 0;
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\'') {
			size_t e = skip_string(s + i, n - i) + i;
			memcpy(out + w, s + i, e - i);
			w += e - i;
			i = e - 1;
		} else if (s[i] == '#') {
			while (i < n && s[i] != '\n')
				i++;
			out[w++] = ' ';
		} else {
			out[w++] = s[i];
		}
	}
	out[w] = '\0';
	return out;
}

/* ---- values ---- */

static void widen(struct ol *o, const char *what, const char *s, size_t n)
{
	if (o->approx)
		return;
	o->approx = true;
	snprintf(o->why, sizeof o->why, "%s `%.*s`: every entry it might keep", what,
		 (int)(n > 120 ? 120 : n), s);
}

static int push(struct ol *o, struct olv *v, uint32_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		uint32_t *p = realloc(v->v, cap * sizeof *p);
		if (!p)
			return o->err = err_set(ERR_NOMEM, "op lists");
		v->v = p;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

static int append(struct ol *o, struct olv *dst, const struct olv *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (push(o, dst, src->v[i]))
			return o->err;
	return 0;
}

static int all_entries(struct ol *o, struct olv *out)
{
	for (size_t i = 0; i < o->n_e; i++)
		if (push(o, out, (uint32_t)i))
			return o->err;
	return 0;
}

/* ---- modules, names and classes ---- */

/* The module of catalog file `cf`, or NULL when it has none. */
static struct ol_module *module_of_file(struct ol *o, const struct catalog_file *cf)
{
	for (size_t m = 0; m < o->n_mods; m++)
		if (o->mods[m]->cf == cf)
			return o->mods[m];
	struct ol_module **mods = scan__grow(o->mods, o->n_mods, &o->cap_mods, sizeof *mods);
	struct ol_module *m = mods ? calloc(1, sizeof *m) : NULL;
	if (mods)
		o->mods = mods;
	if (!m) {
		o->err = err_set(ERR_NOMEM, "op lists");
		return NULL;
	}
	o->mods[o->n_mods++] = m;
	m->cf = cf;
	m->module = cf->module;
	m->sf = cf->blob->scan;
	m->cls = -1;
	m->base = o->n_e;
	for (size_t i = 0; i < m->sf->n_opinfos; i++) {
		if (o->n_e == o->cap_e) {
			size_t cap = o->cap_e ? 2 * o->cap_e : 512;
			struct ol_entry *p = realloc(o->e, cap * sizeof *p);
			if (!p) {
				o->err = err_set(ERR_NOMEM, "op lists");
				return NULL;
			}
			o->e = p;
			o->cap_e = cap;
		}
		o->e[o->n_e++] = (struct ol_entry){ &m->sf->opinfos[i], m->sf };
	}
	return m;
}

static const struct catalog_file *file_of_module(struct ol *o, const char *module, size_t n)
{
	char name[512];
	if (n >= sizeof name)
		return NULL;
	memcpy(name, module, n);
	name[n] = '\0';
	const struct catalog_file *cf = catalog__file_of_module(o->cat, name);
	if (!cf)
		note_read(o, name, NULL);
	return cf;
}

const struct catalog_file *catalog__file_of_module(const struct catalog *cat, const char *module)
{
	struct catalog_priv *priv = cat->priv_;
	if (priv && !priv->modules.cap) { /* the catalog's map, by its first need */
		for (size_t f = 0; f < cat->n_files; f++) {
			const struct catalog_file *cf = &cat->files[f];
			if (cf->module && cf->blob && cf->blob->scan &&
			    !strmap_get(&priv->modules, cf->module, NULL) &&
			    strmap_put(&priv->modules, cf->module, (intptr_t)f)) {
				strmap_free(&priv->modules);
				priv = NULL; /* out of memory: the slow way */
				break;
			}
		}
	}
	if (priv) {
		intptr_t f;
		return strmap_get(&priv->modules, module, &f) ? &cat->files[f] : NULL;
	}
	for (size_t f = 0; f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		if (cf->module && strcmp(cf->module, module) == 0 && cf->blob && cf->blob->scan)
			return cf;
	}
	return NULL;
}

static int eval_value(struct ol *o, struct ol_module *m, const char *s, size_t n, struct olv *out,
		      int depth);

/* Evaluates a module's bindings in source order (once). */
static int eval_module(struct ol *o, struct ol_module *m)
{
	if (m->state)
		return 0; /* done, or an import cycle: what it has so far */
	m->state = 1;
	/* what its values are made from (an evaluation too deep to collect for is not kept) */
	bool pushed = collect_push(o, &m->deps);
	for (size_t b = 0; b < m->sf->n_bindings && !o->err; b++) {
		const struct scan_binding *bnd = &m->sf->bindings[b];
		if (bnd->class_index != m->cls)
			continue;
		struct olv v = { 0 };
		bool was = o->approx;
		o->approx = false;
		int rc = eval_value(o, m, bnd->value, strlen(bnd->value), &v, 0);
		bool approx = o->approx;
		o->approx = was;
		if (rc < 0) {
			free(v.v);
			o->err = o->err ? o->err : rc;
			break;
		}
		if (rc == 0 || approx) { /* not a list of entries, or not exactly known */
			free(v.v);
			if (rc == 0)
				continue;
		}
		intptr_t idx;
		if (bnd->augmented && strmap_get(&m->env, bnd->name, &idx)) {
			if (append(o, &o->vals[idx], &v)) {
				free(v.v);
				break;
			}
			free(v.v);
			continue;
		}
		if (approx) /* a list not exactly known: its name stands for the whole database */
			continue;
		if (o->n_vals == o->cap_vals) {
			size_t cap = o->cap_vals ? 2 * o->cap_vals : 64;
			struct olv *p = realloc(o->vals, cap * sizeof *p);
			if (!p) {
				free(v.v);
				o->err = err_set(ERR_NOMEM, "op lists");
				break;
			}
			o->vals = p;
			o->cap_vals = cap;
		}
		o->vals[o->n_vals] = v;
		if (strmap_put(&m->env, bnd->name, (intptr_t)o->n_vals++)) {
			o->err = err_set(ERR_NOMEM, "op lists");
			break;
		}
	}
	if (pushed)
		o->n_collect--;
	else
		m->partial = true;
	m->state = 2;
	return o->err;
}

/* A dotted name of module `m` as a list: a binding of the module, or a name it imports. 1 when
 * found, 0 when not. */
static int eval_name(struct ol *o, struct ol_module *m, const char *s, size_t n, struct olv *out,
		     int depth)
{
	char name[256];
	if (n >= sizeof name || depth > OL_DEPTH_MAX)
		return 0;
	memcpy(name, s, n);
	name[n] = '\0';
	intptr_t idx;
	if (!strchr(name, '.') && strmap_get(&m->env, name, &idx))
		return append(o, out, &o->vals[idx]) ? o->err : 1;
	if (m->outer) /* a class body sees its module's names */
		return eval_name(o, m->outer, s, n, out, depth + 1);
	/* through the imports: the local name of the first component */
	size_t first = strcspn(name, ".");
	for (size_t i = 0; i < m->sf->n_imports; i++) {
		const struct scan_import *im = &m->sf->imports[i];
		if (im->function >= 0 || !im->local || !im->target || strlen(im->local) != first ||
		    memcmp(im->local, name, first) != 0)
			continue;
		char full[512];
		snprintf(full, sizeof full, "%s%s", im->target, name + first);
		/* full = a.b.c.NAME: the module a.b.c and its binding NAME */
		const char *dot = strrchr(full, '.');
		if (!dot)
			return 0;
		const struct catalog_file *cf = file_of_module(o, full, (size_t)(dot - full));
		struct ol_module *mm = cf ? module_of_file(o, cf) : NULL;
		if (!mm)
			return o->err ? o->err : 0;
		if (eval_module(o, mm) < 0)
			return o->err;
		note_module(o, mm);
		return eval_name(o, mm, dot + 1, strlen(dot + 1), out, depth + 1);
	}
	return 0;
}

/* The class named `name` (its last dotted component) of the catalog's op database classes. */
static const struct scan_class *class_named(struct ol *o, const char *name, size_t n,
					    const struct scan_file **sf)
{
	const char *dot;
	while ((dot = memchr(name, '.', n)) != NULL) {
		n -= (size_t)(dot + 1 - name);
		name = dot + 1;
	}
	char key[128];
	if (n >= sizeof key)
		return NULL;
	memcpy(key, name, n);
	key[n] = '\0';
	intptr_t v;
	if (!strmap_get(&o->classes, key, &v))
		return NULL;
	size_t file = (size_t)(v - 1) >> 20, c = (size_t)(v - 1) & 0xfffff;
	*sf = o->cat->files[file].blob->scan;
	return &(*sf)->classes[c];
}

/* PyTorch's op database classes and their bases (opinfo/core.py, opinfo/refs.py): what a tree
 * without those files is taken to have. */
static const char *const known_bases[][2] = {
	{ "UnaryUfuncInfo", "OpInfo" },
	{ "BinaryUfuncInfo", "OpInfo" },
	{ "ReductionOpInfo", "OpInfo" },
	{ "ShapeFuncInfo", "OpInfo" },
	{ "SpectralFuncInfo", "OpInfo" },
	{ "ForeachFuncInfo", "OpInfo" },
	{ "PythonRefInfo", "OpInfo" },
	{ "ReductionPythonRefInfo", "ReductionOpInfo" },
	{ "ElementwiseUnaryPythonRefInfo", "UnaryUfuncInfo" },
	{ "ElementwiseBinaryPythonRefInfo", "BinaryUfuncInfo" },
	{ "SpectralFuncPythonRefInfo", "SpectralFuncInfo" },
};

/* Whether class `kind` is `want` or inherits from it, through the classes' bases. */
static bool kind_is(struct ol *o, const char *kind, const char *want, int hops)
{
	if (!strcmp(kind, want))
		return true;
	const struct scan_file *sf;
	const struct scan_class *c = class_named(o, kind, strlen(kind), &sf);
	for (size_t k = 0; !c && hops < 32 && k < sizeof known_bases / sizeof *known_bases; k++)
		if (!strcmp(known_bases[k][0], kind))
			return kind_is(o, known_bases[k][1], want, hops + 1);
	for (size_t b = 0; c && hops < 32 && b < c->n_bases; b++) {
		const char *t = c->bases[b].text;
		if (c->bases[b].keyword || !t)
			continue;
		const char *last = strrchr(t, '.');
		if (kind_is(o, last ? last + 1 : t, want, hops + 1))
			return true;
	}
	return false;
}

/* ---- attributes ---- */

static const struct scan_arg *arg_named(const struct scan_opinfo *e, const char *name, size_t n)
{
	for (size_t i = 0; i < e->n_args; i++)
		if (e->args[i].keyword && strlen(e->args[i].keyword) == n &&
		    memcmp(e->args[i].keyword, name, n) == 0)
			return &e->args[i];
	return NULL;
}

static const struct ol_entry *entry_by_name(struct ol *o, const char *name, const char *variant)
{
	for (size_t i = 0; i < o->n_e; i++) {
		const struct scan_opinfo *x = o->e[i].o;
		if (x->name && !strcmp(x->name, name) && !strstr(x->kind, "PythonRef") &&
		    !strcmp(x->variant_test_name ? x->variant_test_name : "", variant))
			return &o->e[i];
	}
	return NULL;
}

static const char *class_attr(struct ol *o, const char *kind, const char *a, size_t an,
			      const char *given, bool passed, int hops);
static const struct scan_function *init_of(const struct scan_file *sf, size_t ci);

/* What entry e passes its class's constructor for attribute `a`, as text, or NULL: its own
 * argument; for a Python reference entry (torch_opinfo_name=), what _inherit_constructor_args
 * makes of it: autograd flags forced off, aliases and variants cleared, else what the entry it
 * refers to recorded: the arguments its dataclass OpInfo received (_original_opinfo_args, for
 * a PythonRefInfo) or those of its own class's constructor (_original_unary_ufunc_args...). */
static const char *given_text(struct ol *o, const struct ol_entry *e, const char *a, size_t an,
			      int hops)
{
	static const char *const forced[][2] = {
		{ "supports_autograd", "False" },      { "supports_gradgrad", "False" },
		{ "supports_fwgrad_bwgrad", "False" }, { "supports_inplace_autograd", "False" },
		{ "supports_forward_ad", "False" },
	};
	static const char *const common[][2] = {
		{ "aliases", "None" },
		{ "method_variant", "None" },
		{ "inplace_variant", "None" },
		{ "supports_scripting", "False" },
	};
	const struct scan_arg *ref = arg_named(e->o, "torch_opinfo_name", 17);
	for (size_t k = 0; ref && k < sizeof forced / sizeof *forced; k++)
		if (strlen(forced[k][0]) == an && !memcmp(forced[k][0], a, an))
			return forced[k][1];
	const struct scan_arg *x = arg_named(e->o, a, an);
	if (x && x->text)
		return x->text;
	if (!ref)
		return NULL;
	for (size_t k = 0; k < sizeof common / sizeof *common; k++)
		if (strlen(common[k][0]) == an && !memcmp(common[k][0], a, an))
			return common[k][1];
	if (is_word(a, an, "skips") || is_word(a, an, "decorators") ||
	    ref->kind != SCAN_ARG_STRING || hops >= 4)
		return NULL;
	const struct scan_arg *rv = arg_named(e->o, "torch_opinfo_variant_name", 25);
	const struct ol_entry *t =
	    entry_by_name(o, ref->value, rv && rv->kind == SCAN_ARG_STRING ? rv->value : "");
	if (!t)
		return NULL;
	const char *g = given_text(o, t, a, an, hops + 1);
	const struct scan_file *sf;
	const struct scan_class *c = class_named(o, e->o->kind, strlen(e->o->kind), &sf);
	const char *base = c && c->n_bases && c->bases[0].text ? c->bases[0].text : NULL;
	const struct scan_class *bc = base ? class_named(o, base, strlen(base), &sf) : NULL;
	if (bc && !init_of(sf, (size_t)(bc - sf->classes))) /* recorded by the dataclass */
		return class_attr(o, t->o->kind, a, an, g, true, 0);
	return g;
}

static const struct scan_function *init_of(const struct scan_file *sf, size_t ci)
{
	for (size_t f = 0; f < sf->n_functions; f++)
		if (sf->functions[f].class_index == (int)ci &&
		    strcmp(sf->functions[f].name, "__init__") == 0)
			return &sf->functions[f];
	return NULL;
}

static const struct scan_arg *param_named(const struct scan_function *fn, const char *a, size_t an)
{
	for (size_t p = 0; fn && p < fn->n_params; p++)
		if (strlen(fn->params[p].keyword) == an && !memcmp(fn->params[p].keyword, a, an))
			return &fn->params[p];
	return NULL;
}

/* Attribute `a` of an instance of class `kind` constructed with `given` (NULL: not passed), as
 * text: a constructor that takes `a` keeps it, or computes what it passes its base from it
 * (`super().__init__(error_inputs_func=make_...(error_inputs_func))`: that call); one that does
 * not take it passes it on through **kwargs; a dataclass field's default when nothing passed
 * it. With `passed`: what reaches the dataclass at the root instead, which a constructor that
 * keeps `a` to itself (sets self.a after super().__init__) does not pass: its default. */
static const char *class_attr(struct ol *o, const char *kind, const char *a, size_t an,
			      const char *given, bool passed, int hops)
{
	const struct scan_file *sf;
	const struct scan_class *c = class_named(o, kind, strlen(kind), &sf);
	if (!c || hops > 32)
		return given;
	size_t ci = (size_t)(c - sf->classes);
	const struct scan_function *init = init_of(sf, ci);
	const struct scan_arg *p = param_named(init, a, an);
	bool forwarded = false;
	if (p) {
		const char *v = given ? given : p->text;
		for (size_t k = 0; k < init->n_super_args; k++) {
			const struct scan_arg *sa = &init->super_args[k];
			if (!sa->keyword || strlen(sa->keyword) != an || memcmp(sa->keyword, a, an))
				continue;
			if (!sa->text || !is_word(sa->text, strlen(sa->text), sa->keyword))
				return sa->text; /* computed from the parameters */
			forwarded = true;
			break;
		}
		if (!passed)
			return v;
		given = forwarded ? v : NULL; /* kept to itself: the root's default */
	}
	if (!init && !given) /* a dataclass: its field's default */
		for (size_t b = 0; b < sf->n_bindings; b++)
			if (sf->bindings[b].class_index == (int)ci &&
			    strlen(sf->bindings[b].name) == an &&
			    !memcmp(sf->bindings[b].name, a, an))
				return sf->bindings[b].value;
	for (size_t b = 0; b < c->n_bases; b++) {
		const char *t = c->bases[b].text;
		if (c->bases[b].keyword || !t)
			continue;
		const char *last = strrchr(t, '.');
		const char *d = class_attr(o, last ? last + 1 : t, a, an, given, passed, hops + 1);
		if (d)
			return d;
	}
	return given;
}

/* The text of entry e's attribute `a`, or NULL when not known. */
static const char *attr_text(struct ol *o, const struct ol_entry *e, const char *a, size_t an,
			     int hops)
{
	(void)hops;
	return class_attr(o, e->o->kind, a, an, given_text(o, e, a, an, 0), false, 0);
}

/* Whether text is a call of a module-level function of the op database's modules that returns
 * one of its own nested functions (make_error_inputs_elementwise_binary(f)): never None. */
static bool call_gives_function(const struct ol *o, const char *t)
{
	size_t n = strlen(t), open = strcspn(t, "(");
	if (open == n || t[n - 1] != ')' || close_of(t + open, n - open) != n - open - 1 ||
	    !is_dotted_name(t, open))
		return false;
	const char *name = t, *dot;
	while ((dot = memchr(name, '.', open - (size_t)(name - t))) != NULL)
		name = dot + 1;
	size_t nl = open - (size_t)(name - t);
	for (size_t f = 0; f < o->cat->n_files; f++) {
		const struct catalog_file *cf = &o->cat->files[f];
		const struct scan_file *sf = cf->blob ? cf->blob->scan : NULL;
		if (!sf || strncmp(cf->path, "torch/testing/_internal/", 24) != 0)
			continue;
		for (size_t k = 0; k < sf->n_functions; k++) {
			const struct scan_function *fn = &sf->functions[k];
			if (fn->class_index < 0 && fn->parent_function < 0 &&
			    fn->returns_function && strlen(fn->name) == nl &&
			    !memcmp(fn->name, name, nl))
				return true;
		}
	}
	return false;
}

/* The flags of PyTorch's common_utils and common_cuda a conditional expression may test, as on
 * the host spyre-ci assumes of a torch-spyre CI run: a CPU, numpy and scipy installed. Any other
 * ALL_CAPS name (TEST_CUDA, IS_WINDOWS, TEST_WITH_ROCM, ...) is false there. */
static enum tri flag_value(const struct scan_file *sf, const char *s, size_t n)
{
	static const char *const on[] = { "TEST_NUMPY", "TEST_SCIPY", "TEST_MKL",
					  "TEST_OPT_EINSUM" };
	for (size_t k = 0; k < sizeof on / sizeof *on; k++)
		if (is_word(s, n, on[k]))
			return T_TRUE;
	/* a version check of numpy or scipy: a current one */
	if (starts_with(s, n, "np.lib.NumpyVersion(") || starts_with(s, n, "scipy.__version__"))
		return T_TRUE;
	bool caps = n > 2;
	for (size_t k = 0; k < n; k++)
		caps &= isupper((unsigned char)s[k]) || isdigit((unsigned char)s[k]) || s[k] == '_';
	if (caps)
		return T_FALSE;
	/* a module-level flag of the entry's file (`has_scipy_fft = False`, then `True` once its
	 * optional import succeeded): True when any binding makes it so, the imports being there */
	enum tri f = T_UNKNOWN;
	for (size_t b = 0; sf && is_dotted_name(s, n) && b < sf->n_bindings; b++) {
		const struct scan_binding *x = &sf->bindings[b];
		if (x->class_index >= 0 || strlen(x->name) != n || memcmp(x->name, s, n) != 0)
			continue;
		if (!strcmp(x->value, "True"))
			return T_TRUE;
		if (strcmp(x->value, "False"))
			return T_UNKNOWN;
		f = T_FALSE;
	}
	return f;
}

/* Whether an attribute's text is None: None is, a literal, a name, a lambda, a container or a
 * call of a function that returns a function is not, `A if FLAG else B` is what its branch is. */
static enum tri none_of(const struct ol *o, const struct scan_file *sf, const char *t, size_t n,
			int depth)
{
	unparen(&t, &n);
	if (starts_with(t, n, "lambda") && n > 6 && !ident_char(t[6]))
		return T_FALSE;
	size_t i = find_kw(t, n, "if"), e = i < n ? find_kw(t, n, "else") : n;
	if (i < n && e < n && i < e && depth < OL_DEPTH_MAX) {
		const char *c = t + i + 2;
		size_t cn = e - i - 2;
		trim(&c, &cn);
		enum tri f = flag_value(sf, c, cn);
		enum tri a = f == T_FALSE ? T_UNKNOWN : none_of(o, sf, t, i, depth + 1);
		enum tri b =
		    f == T_TRUE ? T_UNKNOWN : none_of(o, sf, t + e + 4, n - e - 4, depth + 1);
		return f == T_TRUE ? a : f == T_FALSE ? b : a == b ? a : T_UNKNOWN;
	}
	unparen(&t, &n);
	char lit[256], buf[512];
	if (is_word(t, n, "None"))
		return T_TRUE;
	if (!n || n >= sizeof buf)
		return T_UNKNOWN;
	memcpy(buf, t, n);
	buf[n] = '\0';
	size_t w = 0;
	if (lit_canon(t, n, lit, sizeof lit, &w, 0) || is_dotted_name(t, n) || t[0] == '(' ||
	    t[0] == '[' || t[0] == '{' || starts_with(t, n, "partial(") ||
	    starts_with(t, n, "functools.partial(") || call_gives_function(o, buf))
		return T_FALSE;
	return T_UNKNOWN;
}

/* ---- conditions ---- */

static enum tri cond_eval(struct ol *o, const struct ol_entry *e, const char *s, size_t n,
			  const char *var, int depth);

/* A name attribute of the entry (name, variant_test_name, aten_name, formatted_name). */
static bool name_attr(const struct ol_entry *e, const char *s, size_t n, char *buf, size_t size)
{
	const char *v = NULL;
	if (is_word(s, n, "name"))
		v = e->o->name;
	else if (is_word(s, n, "variant_test_name"))
		v = e->o->variant_test_name ? e->o->variant_test_name : "";
	else if (is_word(s, n, "aten_name"))
		v = e->o->aten_name ? e->o->aten_name : e->o->name;
	else if (is_word(s, n, "formatted_name")) {
		snprintf(buf, size, "%s%s%s", e->o->name, e->o->variant_test_name ? "_" : "",
			 e->o->variant_test_name ? e->o->variant_test_name : "");
		for (char *p = buf; *p; p++)
			*p = *p == '.' ? '_' : *p;
		return true;
	} else
		return false;
	snprintf(buf, size, "%s", v ? v : "");
	return true;
}

static bool attr_of_var(const char *s, size_t n, const char *var, const char **a, size_t *an);

/* A name attribute, or its last dotted part (`op.name.rsplit('.', 1)[-1]`,
 * `op.name.split('.')[-1]`), into buf; false when s is neither. */
static bool name_expr(const struct ol_entry *e, const char *s, size_t n, const char *var, char *buf,
		      size_t size)
{
	static const char *const last[] = { ".rsplit('.',1)[-1]", ".split('.')[-1]",
					    ".rsplit('.')[-1]", ".rsplit(\".\",1)[-1]",
					    ".split(\".\")[-1]" };
	const char *a;
	size_t an;
	if (attr_of_var(s, n, var, &a, &an))
		return name_attr(e, a, an, buf, size);
	for (size_t k = 0; k < sizeof last / sizeof *last; k++) {
		size_t m = strlen(last[k]);
		if (n <= m || memcmp(s + n - m, last[k], m) != 0 ||
		    !attr_of_var(s, n - m, var, &a, &an) || !name_attr(e, a, an, buf, size))
			continue;
		const char *dot = strrchr(buf, '.');
		if (dot)
			memmove(buf, dot + 1, strlen(dot + 1) + 1);
		return true;
	}
	return false;
}

/* `LIT in (LITS)` and friends: the string `v` against a literal container. */
static enum tri in_literal(const char *s, size_t n, const char *v)
{
	unparen(&s, &n);
	if (n >= 2 && (s[0] == '[' || s[0] == '{' || s[0] == '(') && close_of(s, n) == n - 1) {
		s++;
		n -= 2;
	}
	bool any = false;
	while (n) {
		size_t c = find_op(s, n, ","), k = c;
		const char *it = s;
		trim(&it, &k);
		char lit[256];
		if (k) {
			if (!lit_value(it, k, lit, sizeof lit))
				return T_UNKNOWN;
			any |= strcmp(lit, v) == 0;
		}
		if (c == n)
			break;
		s += c + 1;
		n -= c + 1;
	}
	return any ? T_TRUE : T_FALSE;
}

/* `v in NAME` with NAME a module-level binding of m: a dict's keys (`dict(k=...)`, `{'k': ...}`),
 * a list's or tuple's string literals. */
static enum tri in_binding(struct ol *o, struct ol_module *m, const char *r, size_t rn,
			   const char *v)
{
	const struct scan_binding *b = NULL;
	for (size_t k = 0; k < m->sf->n_bindings; k++)
		if (m->sf->bindings[k].class_index < 0 && !m->sf->bindings[k].augmented &&
		    strlen(m->sf->bindings[k].name) == rn &&
		    !memcmp(m->sf->bindings[k].name, r, rn))
			b = &m->sf->bindings[k];
	if (!b || o->err)
		return T_UNKNOWN;
	const char *s = b->value;
	size_t n = strlen(s);
	bool kw = starts_with(s, n, "dict(") && close_of(s + 4, n - 4) == n - 5;
	bool braces = n >= 2 && s[0] == '{' && close_of(s, n) == n - 1;
	if (!kw && !braces)
		return in_literal(s, n, v);
	s += kw ? 5 : 1;
	n -= kw ? 6 : 2;
	while (n) {
		size_t c = find_op(s, n, ","), k;
		size_t lam = find_kw(s, c, "lambda");
		if (lam < c) /* a lambda's parameters: its item goes on after its ':' */
			c = lam + find_op(s + lam, n - lam, ":"),
			c = c < n ? c + find_op(s + c, n - c, ",") : n;
		k = c;
		const char *it = s;
		trim(&it, &k);
		if (k) {
			size_t sep = find_op(it, k, kw ? "=" : ":");
			const char *key = it;
			size_t kn = sep;
			trim(&key, &kn);
			char lit[256];
			if (sep == k ||
			    (kw ? !is_dotted_name(key, kn) : !lit_value(key, kn, lit, sizeof lit)))
				return T_UNKNOWN;
			if (kw ? is_word(key, kn, v) : strcmp(lit, v) == 0)
				return T_TRUE;
		}
		if (c == n)
			break;
		s += c + 1;
		n -= c + 1;
	}
	return T_FALSE;
}

/* The truth of an attribute's text: True, False, None, a number, a string; else unknown. */
static enum tri truth_of(const char *t)
{
	if (!t)
		return T_UNKNOWN;
	size_t n = strlen(t);
	if (is_word(t, n, "True"))
		return T_TRUE;
	if (is_word(t, n, "False") || is_word(t, n, "None") || is_word(t, n, "0"))
		return T_FALSE;
	if (isdigit((unsigned char)t[0]))
		return T_TRUE;
	if (n >= 2 && (t[0] == '"' || t[0] == '\''))
		return n > 2 ? T_TRUE : T_FALSE;
	return T_UNKNOWN;
}

static enum tri negate(enum tri t)
{
	return t == T_UNKNOWN ? t : t == T_TRUE ? T_FALSE : T_TRUE;
}

/* `var.A` at s: A into (a, an); false when s is not an attribute of var. */
static bool attr_of_var(const char *s, size_t n, const char *var, const char **a, size_t *an)
{
	size_t vl = strlen(var);
	if (n <= vl + 1 || memcmp(s, var, vl) != 0 || s[vl] != '.')
		return false;
	*a = s + vl + 1;
	*an = n - vl - 1;
	for (size_t i = 0; i < *an; i++)
		if (!ident_char((*a)[i]))
			return false;
	return true;
}

static enum tri compare_eval(struct ol *o, const struct ol_entry *e, const char *s, size_t n,
			     const char *var)
{
	/* `L is not None`, `L is None` */
	size_t is = find_kw(s, n, "is");
	if (is < n) {
		const char *l = s, *r = s + is + 2;
		size_t ln = is, rn = n - is - 2;
		trim(&l, &ln);
		trim(&r, &rn);
		bool neg = starts_with(r, rn, "not") && (rn == 3 || !ident_char(r[3]));
		if (neg) {
			r += 3;
			rn -= 3;
			trim(&r, &rn);
		}
		const char *a;
		size_t an;
		if (!is_word(r, rn, "None") || !attr_of_var(l, ln, var, &a, &an))
			return T_UNKNOWN;
		const char *t = attr_text(o, e, a, an, 0);
		if (!t)
			return T_UNKNOWN;
		enum tri none = none_of(o, e->sf, t, strlen(t), 0);
		return neg ? negate(none) : none;
	}
	/* `L in R`, `L not in R`, `L == R`, `L != R` */
	size_t at = n, skip = 0;
	bool neg = false, member = true;
	size_t inw = find_kw(s, n, "in");
	if (inw < n) {
		at = inw;
		skip = 2;
		size_t nt = find_kw(s, inw, "not");
		if (nt < inw) {
			const char *gap = s + nt + 3;
			size_t gn = inw - nt - 3;
			trim(&gap, &gn);
			if (!gn) {
				at = nt;
				skip = inw + 2 - nt;
				neg = true;
			}
		}
	} else if ((at = find_op(s, n, "==")) < n || (at = find_op(s, n, "!=")) < n) {
		skip = 2;
		member = false;
		neg = s[at] == '!';
	} else {
		return T_UNKNOWN;
	}
	const char *l = s, *r = s + at + skip;
	size_t ln = at, rn = n - at - skip;
	trim(&l, &ln);
	trim(&r, &rn);
	char buf[512], lit[256];
	const char *a;
	size_t an;
	enum tri t = T_UNKNOWN;
	if (member && lit_value(l, ln, lit, sizeof lit) && rn > 6 && starts_with(r, rn, "str(") &&
	    r[rn - 1] == ')') {
		/* "x" in str(op): the entry's repr starts with its name */
		const char *in = r + 4;
		size_t inn = rn - 5;
		trim(&in, &inn);
		if (!is_word(in, inn, var))
			return T_UNKNOWN;
		t = e->o->name && strstr(e->o->name, lit) ? T_TRUE : T_FALSE;
	} else if (name_expr(e, l, ln, var, buf, sizeof buf)) {
		t = !member
			? (lit_value(r, rn, lit, sizeof lit) ? (strcmp(lit, buf) ? T_FALSE : T_TRUE)
							     : T_UNKNOWN)
		    : is_dotted_name(r, rn) && o->cur
			? (o->scoped = true, in_binding(o, o->cur, r, rn, buf))
			: in_literal(r, rn, buf);
	} else if (attr_of_var(l, ln, var, &a, &an)) {
		if (name_attr(e, a, an, buf, sizeof buf)) {
			t = member ? in_literal(r, rn, buf)
			    : lit_value(r, rn, lit, sizeof lit)
				? (strcmp(lit, buf) ? T_FALSE : T_TRUE)
				: T_UNKNOWN;
		} else if (!member) {
			const char *v = attr_text(o, e, a, an, 0);
			char cv[256], cr[256];
			size_t wv = 0, wr = 0;
			if (v) /* the same text: the same value (`SpectralFuncType.ND`, 'omit') */
				t = strlen(v) == rn && !memcmp(v, r, rn) ? T_TRUE : T_UNKNOWN;
			if (v && t == T_UNKNOWN && lit_canon(v, strlen(v), cv, sizeof cv, &wv, 0) &&
			    lit_canon(r, rn, cr, sizeof cr, &wr, 0))
				t = strcmp(cv, cr) == 0 ? T_TRUE : T_FALSE;
			if (v && t == T_UNKNOWN && lit_value(r, rn, lit, sizeof lit)) {
				char lv[256];
				t = lit_value(v, strlen(v), lv, sizeof lv)
					? (strcmp(lv, lit) ? T_FALSE : T_TRUE)
					: T_UNKNOWN;
			}
			if (v && t == T_UNKNOWN && is_dotted_name(v, strlen(v)) &&
			    is_dotted_name(r, rn) && strchr(r, '.') && strchr(v, '.'))
				t = T_FALSE; /* two different enum members */
		}
	}
	return neg ? negate(t) : t;
}

/* isinstance(var, K) or isinstance(var, (K1, K2)). */
static enum tri isinstance_eval(struct ol *o, const struct ol_entry *e, const char *s, size_t n,
				const char *var)
{
	if (n < 12 || memcmp(s, "isinstance(", 11) != 0 || close_of(s + 10, n - 10) != n - 11)
		return T_UNKNOWN;
	s += 11;
	n -= 12;
	size_t c = find_op(s, n, ",");
	const char *a = s, *k = s + c + 1;
	size_t an = c, kn = c < n ? n - c - 1 : 0;
	trim(&a, &an);
	if (!is_word(a, an, var) || !kn)
		return T_UNKNOWN;
	unparen(&k, &kn);
	if (kn >= 2 && k[0] == '(' && close_of(k, kn) == kn - 1) { /* a tuple of classes */
		k++;
		kn -= 2;
	}
	bool unknown = false;
	while (kn) {
		size_t cc = find_op(k, kn, ","), w = cc;
		const char *it = k;
		trim(&it, &w);
		const char *dot = memchr(it, '.', w);
		while (dot) {
			w -= (size_t)(dot + 1 - it);
			it = dot + 1;
			dot = memchr(it, '.', w);
		}
		char want[128];
		if (w && w < sizeof want) {
			memcpy(want, it, w);
			want[w] = '\0';
			const struct scan_file *sf;
			if (kind_is(o, e->o->kind, want, 0))
				return T_TRUE;
			bool known =
			    class_named(o, want, w, &sf) != NULL || !strcmp(want, "OpInfo");
			for (size_t b = 0; b < sizeof known_bases / sizeof *known_bases; b++)
				known |= !strcmp(known_bases[b][0], want);
			unknown |= !known;
		}
		if (cc == kn)
			break;
		k += cc + 1;
		kn -= cc + 1;
	}
	return unknown ? T_UNKNOWN : T_FALSE;
}

static enum tri cond_eval(struct ol *o, const struct ol_entry *e, const char *s, size_t n,
			  const char *var, int depth)
{
	unparen(&s, &n);
	if (depth > OL_DEPTH_MAX || !n)
		return T_UNKNOWN;
	size_t at = find_kw(s, n, "or");
	if (at < n) {
		enum tri a = cond_eval(o, e, s, at, var, depth + 1);
		enum tri b = cond_eval(o, e, s + at + 2, n - at - 2, var, depth + 1);
		return a == T_TRUE || b == T_TRUE     ? T_TRUE
		       : a == T_FALSE && b == T_FALSE ? T_FALSE
						      : T_UNKNOWN;
	}
	if ((at = find_kw(s, n, "and")) < n) {
		enum tri a = cond_eval(o, e, s, at, var, depth + 1);
		enum tri b = cond_eval(o, e, s + at + 3, n - at - 3, var, depth + 1);
		return a == T_FALSE || b == T_FALSE ? T_FALSE
		       : a == T_TRUE && b == T_TRUE ? T_TRUE
						    : T_UNKNOWN;
	}
	if (find_kw(s, n, "not") == 0 && find_kw(s, n, "in") == n)
		return negate(cond_eval(o, e, s + 3, n - 3, var, depth + 1));
	if (starts_with(s, n, "isinstance("))
		return isinstance_eval(o, e, s, n, var);
	const char *a;
	size_t an;
	char buf[512];
	/* var.name.startswith('x') / endswith */
	for (int k = 0; k < 2; k++) {
		const char *m = k ? ".endswith(" : ".startswith(";
		size_t p = find_op(s, n, m);
		if (p < n && s[n - 1] == ')' && attr_of_var(s, p, var, &a, &an) &&
		    name_attr(e, a, an, buf, sizeof buf)) {
			char lit[256];
			const char *arg = s + p + strlen(m);
			size_t argn = n - p - strlen(m) - 1;
			trim(&arg, &argn);
			if (!lit_value(arg, argn, lit, sizeof lit))
				return T_UNKNOWN;
			size_t bl = strlen(buf), ll = strlen(lit);
			bool hit =
			    k ? bl >= ll && !strcmp(buf + bl - ll, lit) : !strncmp(buf, lit, ll);
			return hit ? T_TRUE : T_FALSE;
		}
	}
	if (attr_of_var(s, n, var, &a, &an))
		return truth_of(attr_text(o, e, a, an, 0));
	return compare_eval(o, e, s, n, var);
}

/* ---- lists ---- */

/* The values kept of condition `cond` over `var`, NULL when they cannot be (no memory). */
static struct cond_memo *cond_memo_of(struct ol *o, const char *var, const char *cond, size_t cn)
{
	size_t vn = strlen(var);
	char *key = malloc(vn + cn + 2);
	if (!key)
		return NULL;
	memcpy(key, var, vn);
	key[vn] = '\x1f';
	memcpy(key + vn + 1, cond, cn);
	key[vn + 1 + cn] = '\0';
	intptr_t v;
	if (strmap_get(&o->conds, key, &v)) {
		free(key);
		return (struct cond_memo *)v;
	}
	struct cond_memo *cm = calloc(1, sizeof *cm);
	if (cm && (cm->v = calloc(o->n_e + 1, 1)) && !strmap_put(&o->conds, key, (intptr_t)cm)) {
		cm->n = o->n_e + 1;
		return cm;
	}
	if (cm)
		free(cm->v);
	free(cm);
	free(key);
	return NULL;
}

/* Grows a condition's values to `n` entries (modules loaded since it was made); false: no
 * memory. */
static bool cond_memo_fit(struct cond_memo *cm, size_t n)
{
	unsigned char *p = realloc(cm->v, n);
	if (!p)
		return false;
	memset(p + cm->n, 0, n - cm->n);
	cm->v = p;
	cm->n = n;
	return true;
}

/* SRC filtered by COND over `var`. */
static int eval_filtered(struct ol *o, struct ol_module *m, const char *var, size_t vn,
			 const char *src, size_t sn, const char *cond, size_t cn, struct olv *out,
			 int depth)
{
	char v[64];
	if (!vn || vn >= sizeof v)
		return 0;
	memcpy(v, var, vn);
	v[vn] = '\0';
	struct olv in = { 0 };
	int ok = eval_value(o, m, src, sn, &in, depth + 1);
	o->cur = m;
	struct cond_memo *cm = ok > 0 && cond ? cond_memo_of(o, v, cond, cn) : NULL;
	for (size_t i = 0; ok > 0 && i < in.n; i++) {
		uint32_t g = in.v[i];
		if (cm && g >= cm->n && !cond_memo_fit(cm, o->n_e))
			cm = NULL; /* no memory: worked out without keeping */
		enum tri t = T_TRUE;
		if (cm && cm->v[g]) {
			t = (enum tri)(cm->v[g] - 1);
		} else if (cond) {
			o->scoped = false;
			t = cond_eval(o, &o->e[g], cond, cn, v, 0);
			if (cm && !o->scoped)
				cm->v[g] = (unsigned char)(t + 1);
		}
		if (t == T_UNKNOWN)
			widen(o, "a condition not statically evaluable", cond, cn);
		if (t != T_FALSE && push(o, out, in.v[i]))
			ok = o->err;
	}
	free(in.v);
	return ok;
}

/* [X for V in SRC if COND] (brackets removed). */
static int eval_comprehension(struct ol *o, struct ol_module *m, const char *s, size_t n,
			      struct olv *out, int depth)
{
	size_t f = find_kw(s, n, "for");
	const char *x = s, *v = s + f + 3;
	size_t xn = f, rest = n - f - 3;
	size_t in = find_kw(v, rest, "in");
	if (in == rest)
		return 0;
	size_t vn = in;
	const char *src = v + in + 2;
	size_t sn = rest - in - 2, iff = find_kw(src, sn, "if");
	const char *cond = iff < sn ? src + iff + 2 : NULL;
	size_t cn = iff < sn ? sn - iff - 2 : 0;
	sn = iff;
	trim(&x, &xn);
	trim(&v, &vn);
	if (xn != vn || memcmp(x, v, vn) != 0)
		return 0; /* it yields something else than the entries */
	return eval_filtered(o, m, v, vn, src, sn, cond, cn, out, depth);
}

/* filter(F, SRC): a lambda's condition, or any other function (not known: SRC whole). */
static int eval_filter(struct ol *o, struct ol_module *m, const char *s, size_t n, struct olv *out,
		       int depth)
{
	trim(&s, &n);
	size_t comma = find_op(s, n, ",");
	if (comma == n)
		return 0;
	if (n > 7 && starts_with(s, n, "lambda") && !ident_char(s[6])) {
		size_t colon = find_op(s, comma, ":");
		if (colon == comma)
			return 0;
		const char *v = s + 6;
		size_t vn = colon - 6;
		trim(&v, &vn);
		return eval_filtered(o, m, v, vn, s + comma + 1, n - comma - 1, s + colon + 1,
				     comma - colon - 1, out, depth);
	}
	widen(o, "a filter by a function", s, comma);
	return eval_value(o, m, s + comma + 1, n - comma - 1, out, depth + 1);
}

/* A list or tuple literal's items (brackets removed): entries `@N`, `*X` unpacked, values. */
static int eval_items(struct ol *o, struct ol_module *m, const char *s, size_t n, struct olv *out,
		      int depth)
{
	int found = 0;
	while (n) {
		size_t c = find_op(s, n, ","), k = c;
		const char *it = s;
		trim(&it, &k);
		if (k && it[0] == '*') {
			it++;
			k--;
		}
		if (k) {
			int rc = eval_value(o, m, it, k, out, depth + 1);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return 0; /* an item that is no entry: no list of entries */
			found = 1;
		}
		if (c == n)
			break;
		s += c + 1;
		n -= c + 1;
	}
	return found;
}

/* 1: a list of entries into out (o->approx when widened), 0: not a list of entries, or an
 * error. */
static int eval_value(struct ol *o, struct ol_module *m, const char *s, size_t n, struct olv *out,
		      int depth)
{
	unparen(&s, &n);
	if (n && s[n - 1] == ',') {
		n--;
		unparen(&s, &n);
	}
	if (!n || depth > OL_DEPTH_MAX)
		return 0;
	if (s[0] == '@' && n > 1) {
		char num[24];
		if (n - 1 >= sizeof num)
			return 0;
		memcpy(num, s + 1, n - 1);
		num[n - 1] = '\0';
		char *end;
		unsigned long k = strtoul(num, &end, 10);
		if (*end || k >= m->sf->n_opinfos)
			return 0;
		return push(o, out, (uint32_t)(m->base + k)) ? o->err : 1;
	}
	size_t plus = find_op(s, n, "+");
	if (plus < n) {
		struct olv save = *out;
		int a = eval_value(o, m, s, plus, out, depth + 1);
		int b = a > 0 ? eval_value(o, m, s + plus + 1, n - plus - 1, out, depth + 1) : a;
		if (b == 0)
			out->n = save.n;
		return b;
	}
	if (find_kw(s, n, "for") < n) /* a generator expression, its parentheses gone */
		return eval_comprehension(o, m, s, n, out, depth);
	size_t c = close_of(s, n);
	if ((s[0] == '[' || s[0] == '(') && c == n - 1) {
		if (find_kw(s + 1, n - 2, "for") < n - 2)
			return eval_comprehension(o, m, s + 1, n - 2, out, depth);
		return eval_items(o, m, s + 1, n - 2, out, depth);
	}
	static const char *const calls[] = { "list(", "tuple(", "sorted(", "filter(" };
	for (size_t k = 0; k < 4; k++) {
		size_t cl = strlen(calls[k]);
		if (n > cl && starts_with(s, n, calls[k]) &&
		    close_of(s + cl - 1, n - cl + 1) == n - cl) {
			const char *in = s + cl;
			size_t inn = n - cl - 1;
			if (k == 3)
				return eval_filter(o, m, in, inn, out, depth);
			if (k == 2) /* sorted(X, key=...): X's entries */
				inn = find_op(in, inn, ",");
			return eval_value(o, m, in, inn, out, depth + 1);
		}
	}
	if (is_dotted_name(s, n))
		return eval_name(o, m, s, n, out, depth);
	return 0;
}

/* ---- the answer ---- */

static const struct catalog_priv *priv_of(const struct catalog *cat)
{
	return cat->priv_;
}

static int load_classes(struct ol *o)
{
	for (size_t f = 0; f < o->cat->n_files && f < (1u << 11); f++) {
		const struct catalog_file *cf = &o->cat->files[f];
		if (!cf->path || strncmp(cf->path, "torch/testing/_internal/", 24) != 0 ||
		    !cf->blob || !cf->blob->scan)
			continue;
		const struct scan_file *sf = cf->blob->scan;
		for (size_t c = 0; c < sf->n_classes && c < (1u << 20); c++) {
			const struct scan_class *k = &sf->classes[c];
			if (k->parent_class >= 0 || k->parent_function >= 0 || !k->name)
				continue;
			if (strmap_put(&o->classes, k->name, (intptr_t)((f << 20 | c) + 1)))
				return o->err = err_set(ERR_NOMEM, "op lists");
		}
	}
	return 0;
}

static void ol_finish(struct ol *o)
{
	for (size_t m = 0; m < o->n_mods; m++) {
		strmap_free(&o->mods[m]->env);
		readset_free(&o->mods[m]->deps);
		free(o->mods[m]);
	}
	free(o->mods);
	for (size_t v = 0; v < o->n_vals; v++)
		free(o->vals[v].v);
	free(o->vals);
	free(o->e);
	strmap_free(&o->classes);
	for (size_t k = 0; k < o->conds.cap; k++) {
		if (!o->conds.slots[k].key)
			continue;
		free(((struct cond_memo *)o->conds.slots[k].value)->v);
		free((void *)o->conds.slots[k].value);
		free((char *)o->conds.slots[k].key);
	}
	strmap_free(&o->conds);
}

static char *formatted_name(const struct scan_opinfo *e)
{
	size_t a = strlen(e->name), b = e->variant_test_name ? strlen(e->variant_test_name) : 0;
	char *s = malloc(a + b + 2);
	if (!s)
		return NULL;
	memcpy(s, e->name, a + 1);
	if (b) {
		s[a] = '_';
		memcpy(s + a + 1, e->variant_test_name, b + 1);
	}
	for (char *p = s; *p; p++)
		*p = *p == '.' ? '_' : *p;
	return s;
}

/* The catalog's evaluator: the op database files' entries and classes, and every module
 * evaluated so far (their bindings stay evaluated for the catalog's life). */
static struct ol *ol_of(const struct catalog *cat)
{
	struct catalog_priv *priv = cat->priv_;
	if (priv && priv->oplists)
		return priv->oplists;
	struct ol *o = calloc(1, sizeof *o);
	if (!o) {
		err_set(ERR_NOMEM, "op lists");
		return NULL;
	}
	o->cat = cat;
	/* every op database file's entries, whether or not a list names them */
	for (size_t f = 0; f < cat->n_files && !o->err; f++)
		if (cat->files[f].opdb && cat->files[f].blob && cat->files[f].blob->scan)
			module_of_file(o, &cat->files[f]);
	if (o->err || load_classes(o)) {
		ol_finish(o);
		free(o);
		return NULL;
	}
	if (priv)
		priv->oplists = o;
	return o;
}

void catalog__oplists_free(struct catalog_priv *priv)
{
	if (priv->oplists) {
		ol_finish(priv->oplists);
		free(priv->oplists);
	}
	for (size_t k = 0; k < priv->op_lists.cap; k++) {
		struct catalog_op_list *l = (struct catalog_op_list *)priv->op_lists.slots[k].value;
		if (!priv->op_lists.slots[k].key)
			continue;
		if (l) {
			free(l->entries);
			free(l->why);
			free(l);
		}
		free((char *)priv->op_lists.slots[k].key);
	}
	strmap_free(&priv->op_lists);
	strmap_free(&priv->modules);
}

/* The file and index in its scan of the evaluator's entry gi. */
static struct catalog__op_place place_of(const struct ol *o, uint32_t gi)
{
	for (size_t m = 0; m < o->n_mods; m++) {
		const struct ol_module *om = o->mods[m];
		if (gi >= om->base && gi < om->base + om->sf->n_opinfos)
			return (struct catalog__op_place){ om->cf->path,
							   (uint32_t)(gi - om->base) };
	}
	return (struct catalog__op_place){ NULL, 0 }; /* cannot be: every entry is a module's */
}

/* One evaluation of an @ops argument in test_file (class cls or -1); for the memo, *places
 * (malloc'ed, may be NULL) where each entry of the answer is, and into `reads` what it read
 * (o->uncollected: not all of it). */
static int evaluate(struct ol *o, const struct catalog_file *test_file, int cls, const char *arg,
		    struct catalog_op_list *out, struct catalog__op_place **places,
		    struct readset *reads)
{
	*places = NULL;
	o->n_collect = 0;
	o->uncollected = false;
	collect_push(o, reads);
	o->approx = false;
	o->why[0] = '\0';
	o->cur = NULL;
	o->err = 0;
	if (!o->n_e) { /* no op database in this tree: nothing to evaluate against */
		out->status = 0;
		return 0;
	}
	struct ol_module *tm =
	    test_file->blob && test_file->blob->scan ? module_of_file(o, test_file) : NULL;
	int rc = o->err;
	if (!rc && !tm)
		return 0;
	if (!rc)
		rc = eval_module(o, tm);
	if (!rc)
		note_module(o, tm);
	/* a decorator in a class body sees the class's bindings before the module's */
	struct ol_module cm = { .cf = test_file,
				.module = tm ? tm->module : NULL,
				.sf = tm ? tm->sf : NULL,
				.base = tm ? tm->base : 0,
				.cls = cls,
				.outer = tm };
	struct ol_module *scope = cls >= 0 && tm ? &cm : tm;
	if (!rc && scope == &cm)
		rc = eval_module(o, &cm);
	if (!rc && scope == &cm)
		note_module(o, &cm);
	char *text = rc ? NULL : strip_comments(arg);
	if (!rc && !text)
		rc = err_set(ERR_NOMEM, "op lists");
	struct olv v = { 0 };
	int ok = rc ? rc : eval_value(o, scope, text, strlen(text), &v, 0);
	if (ok == 0) { /* not evaluable at all: every entry, saying so */
		widen(o, "an op list not statically evaluable", text, strlen(text));
		v.n = 0;
		ok = all_entries(o, &v) ? o->err : 1;
	}
	unsigned char *seen = NULL; /* a bit per evaluator entry: each entry once */
	if (ok > 0 && v.n &&
	    (!(out->entries = calloc(v.n, sizeof *out->entries)) ||
	     !(*places = calloc(v.n, sizeof **places)) || !(seen = calloc(o->n_e / 8 + 1, 1))))
		ok = err_set(ERR_NOMEM, "op lists");
	for (size_t i = 0; ok > 0 && i < v.n; i++) {
		uint32_t g = v.v[i];
		if (seen[g / 8] & 1u << g % 8)
			continue;
		seen[g / 8] |= (unsigned char)(1u << g % 8);
		(*places)[out->n] = place_of(o, g);
		out->entries[out->n++] = o->e[g].o;
	}
	free(seen);
	if (ok > 0 && o->approx && !(out->why = strdup(o->why)))
		ok = err_set(ERR_NOMEM, "op lists");
	if (ok > 0)
		out->status = o->approx ? 2 : 1;
	free(v.v);
	free(text);
	strmap_free(&cm.env);
	readset_free(&cm.deps);
	o->n_collect = 0;
	return ok < 0 ? ok : 0;
}

const char *catalog__entry_attr(const struct catalog *cat, const struct scan_opinfo *entry,
				const char *attr)
{
	struct ol *o = cat->priv_ ? ol_of(cat) : NULL;
	for (size_t i = 0; o && i < o->n_e; i++)
		if (o->e[i].o == entry)
			return attr_text(o, &o->e[i], attr, strlen(attr), 0);
	return NULL;
}

int catalog__op_list(const struct catalog *cat, const struct catalog_file *test_file, int cls,
		     const char *arg, const struct catalog_op_list **out)
{
	*out = NULL;
	struct catalog_priv *priv = cat->priv_;
	char *key = NULL;
	intptr_t v;
	if (priv) {
		size_t n = strlen(arg) + 48;
		if (!(key = malloc(n)))
			return err_set(ERR_NOMEM, "op lists");
		snprintf(key, n, "%zu:%d:%s", (size_t)(test_file - cat->files), cls, arg);
		if (strmap_get(&priv->op_lists, key, &v)) {
			free(key);
			*out = (const struct catalog_op_list *)v;
			return 0;
		}
	}
	/* an answer another catalog of the cache had for the same inputs */
	struct catalog_op_list *l = NULL;
	int rc = catalog__oplist_memo_get(cat, test_file, cls, arg, &l);
	if (rc < 0) {
		free(key);
		return rc;
	}
	struct catalog__op_place *places = NULL;
	struct ol *o = NULL;
	if (rc == 1) {
		priv->cache->oplist_memo_hits++;
		rc = 0;
	} else {
		o = ol_of(cat);
		l = o ? calloc(1, sizeof *l) : NULL;
		rc = !o ? ERR_NOMEM : !l ? err_set(ERR_NOMEM, "op lists") : 0;
		struct readset reads = { 0 };
		if (!rc)
			rc = evaluate(o, test_file, cls, arg, l, &places, &reads);
		if (!rc && !o->uncollected)
			rc = catalog__oplist_memo_put(cat, test_file, cls, arg, l, places, reads.v,
						      reads.n);
		readset_free(&reads);
	}
	free(places);
	/* The map keeps the key it was given: freed with the map. */
	if (!rc && priv && strmap_put(&priv->op_lists, key, (intptr_t)l))
		rc = err_set(ERR_NOMEM, "op lists");
	else if (!rc && priv)
		key = NULL;
	free(key);
	if (!priv && o) { /* a catalog without a private part (a test's): nothing kept */
		ol_finish(o);
		free(o);
	}
	if (rc) {
		if (l) {
			free(l->entries);
			free(l->why);
			free(l);
		}
		return rc;
	}
	*out = l;
	return 0;
}

int catalog__op_variants(const struct catalog *cat, const struct catalog_file *test_file, int cls,
			 const char *arg, char ***names, size_t *n, char **why)
{
	*names = NULL;
	*n = 0;
	*why = NULL;
	const struct catalog_op_list *l;
	int rc = catalog__op_list(cat, test_file, cls, arg, &l);
	if (rc)
		return rc;
	int ok = l->status;
	char **out = ok > 0 ? calloc(l->n + 1, sizeof *out) : NULL;
	if (ok > 0 && !out)
		ok = err_set(ERR_NOMEM, "op lists");
	size_t k = 0;
	struct strmap names_seen = { 0 }; /* keys: out's strings */
	for (size_t i = 0; ok > 0 && i < l->n; i++) {
		char *s = formatted_name(l->entries[i]);
		if (!s) {
			ok = err_set(ERR_NOMEM, "op lists");
			break;
		}
		if (strmap_get(&names_seen, s, NULL)) {
			free(s);
			continue;
		}
		out[k++] = s;
		if (strmap_put(&names_seen, s, 0))
			ok = err_set(ERR_NOMEM, "op lists");
	}
	strmap_free(&names_seen);
	if (ok == 2 && !(*why = strdup(l->why)))
		ok = err_set(ERR_NOMEM, "op lists");
	if (ok > 0) {
		*names = out;
		*n = k;
	} else {
		for (size_t j = 0; j < k; j++)
			free(out[j]);
		free(out);
	}
	if (!priv_of(cat)) { /* not kept: see catalog__op_list */
		free(((struct catalog_op_list *)l)->entries);
		free(((struct catalog_op_list *)l)->why);
		free((struct catalog_op_list *)l);
	}
	return ok;
}

int catalog__test_op_list(const struct catalog *cat, const struct catalog_test *t,
			  const struct catalog_op_list **out)
{
	*out = NULL;
	const struct catalog_file *f = &cat->files[t->file];
	const struct scan_file *sf = f->blob ? f->blob->scan : NULL;
	if (!sf || t->function < 0 || t->opset == CATALOG_OPSET_NONE)
		return 0;
	const struct scan_function *fn = &sf->functions[t->function];
	for (size_t k = 0; k < fn->n_decorators; k++) {
		const struct scan_decorator *d = &fn->decorators[k];
		if (catalog__ops_decorator(sf, d, NULL) && d->argc && d->argv[0].text &&
		    !d->argv[0].keyword)
			return priv_of(cat)
				   ? catalog__op_list(cat, f, fn->class_index, d->argv[0].text, out)
				   : 0;
	}
	return 0;
}
