/* Tests a file adds at import time. PyTorch's test files generate some test methods with a
 * module-level call such as `generate_not_implemented_tests(TestBinaryUfuncs)`, whose body
 * loops over a list and does `setattr(cls, name, fn)` with a name built from the loop value
 * ("test_{}_not_implemented".format(op), f"test_{op}_x", "test_" + op). Where the list is a
 * literal (written in the loop or bound to a module-level name), each generated name is listed;
 * where it is not, one entry without a name says that the call generates tests at run time.
 * Works on the raw text and the scanner's function ranges; called once at the end of a scan. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

#define GEN_LISTS_MAX  256  /* module-level literal lists looked at */
#define GEN_VALUES_MAX 1024 /* strings of one list */
#define GEN_TESTS_MAX  4096 /* generated tests of one file */
#define GEN_NAME_MAX   256

struct text {
	const char *d;
	size_t len;
	size_t *start; /* start[i]: offset of line i + 1 (1-based lines); start[n] = len */
	size_t n;
};

struct strlist {
	const char *name; /* module-level name, or NULL for a list written in the loop */
	size_t name_len;
	const char *v[GEN_VALUES_MAX];
	size_t vlen[GEN_VALUES_MAX];
	size_t n;
};

struct gen {
	struct scan_file *f;
	struct arena *a;
	struct text t;
	struct strlist *lists;
	size_t n_lists;
	struct scan_generated *out;
	size_t n_out, cap_out;
};

/* The first occurrence of needle[0..m) in hay[0..n), or NULL (memmem is a GNU extension). */
static const char *find(const char *hay, size_t n, const char *needle, size_t m)
{
	for (size_t i = 0; m && i + m <= n; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
			return hay + i;
	return NULL;
}

static bool ident_ch(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static const char *line_at(const struct text *t, uint32_t line, size_t *len)
{
	if (line < 1 || line > t->n) {
		*len = 0;
		return "";
	}
	size_t s = t->start[line - 1], e = t->start[line];
	while (e > s && (t->d[e - 1] == '\n' || t->d[e - 1] == '\r'))
		e--;
	*len = e - s;
	return t->d + s;
}

static size_t skip_ws(const char *p, size_t i, size_t n)
{
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return i;
}

static size_t ident_len(const char *p, size_t i, size_t n)
{
	size_t k = i;
	if (k < n && (isalpha((unsigned char)p[k]) || p[k] == '_'))
		while (k < n && ident_ch(p[k]))
			k++;
	return k - i;
}

/* Reads string literals separated by commas from p[i..n) into `l` until `close`; stops at the
 * first thing that is not one. Returns the offset after `close`, or 0 when the list is not a
 * plain list of strings (or does not close within the text). */
static size_t read_strings(const char *p, size_t i, size_t n, char close, struct strlist *l)
{
	for (;;) {
		while (i < n && (isspace((unsigned char)p[i]) || p[i] == ','))
			i++;
		if (i < n && p[i] == '#') {
			while (i < n && p[i] != '\n')
				i++;
			continue;
		}
		if (i >= n)
			return 0;
		if (p[i] == close)
			return i + 1;
		if ((p[i] != '"' && p[i] != '\'') || l->n >= GEN_VALUES_MAX)
			return 0;
		const char *e = memchr(p + i + 1, p[i], n - i - 1);
		if (!e || memchr(p + i + 1, '\n', (size_t)(e - p) - i - 1) ||
		    memchr(p + i + 1, '\\', (size_t)(e - p) - i - 1))
			return 0;
		l->v[l->n] = p + i + 1;
		l->vlen[l->n++] = (size_t)(e - p) - i - 1;
		i = (size_t)(e - p) + 1;
	}
}

/* Module-level `NAME = [ "a", "b", ... ]` (or a tuple). */
static void module_lists(struct gen *g)
{
	for (uint32_t ln = 1; ln <= g->t.n && g->n_lists < GEN_LISTS_MAX; ln++) {
		size_t len;
		const char *p = line_at(&g->t, ln, &len);
		size_t k = ident_len(p, 0, len);
		if (!k)
			continue;
		size_t i = skip_ws(p, k, len);
		if (i >= len || p[i] != '=' || (i + 1 < len && p[i + 1] == '='))
			continue;
		i = skip_ws(p, i + 1, len);
		if (i >= len || (p[i] != '[' && p[i] != '('))
			continue;
		struct strlist *l = &g->lists[g->n_lists];
		l->n = 0;
		size_t off = (size_t)(p - g->t.d);
		if (!read_strings(g->t.d, off + i + 1, g->t.len, p[i] == '[' ? ']' : ')', l))
			continue;
		l->name = p;
		l->name_len = k;
		g->n_lists++;
	}
}

static const struct strlist *list_named(const struct gen *g, const char *s, size_t n)
{
	const struct strlist *found = NULL;
	for (size_t i = 0; i < g->n_lists; i++)
		if (g->lists[i].name_len == n && memcmp(g->lists[i].name, s, n) == 0)
			found = &g->lists[i]; /* the last binding at module level */
	return found;
}

/* The name template of a setattr: text before and after the loop value. */
struct tmpl {
	char pre[GEN_NAME_MAX], post[GEN_NAME_MAX];
};

/* A string literal at p[i]: its content in *s, *sl; the offset after it, or 0. */
static size_t literal(const char *p, size_t i, size_t n, const char **s, size_t *sl)
{
	if (i >= n || (p[i] != '"' && p[i] != '\''))
		return 0;
	const char *e = find(p + i + 1, n - i - 1, p[i] == '"' ? "\"" : "'", 1);
	if (!e)
		return 0;
	*s = p + i + 1;
	*sl = (size_t)(e - *s);
	return (size_t)(e - p) + 1;
}

/* "pre" + var [+ "post"] */
static bool parse_concat(const char *p, size_t n, const char *var, size_t vn, struct tmpl *t)
{
	const char *pre, *post = "";
	size_t pl, ql = 0;
	size_t i = literal(p, skip_ws(p, 0, n), n, &pre, &pl);
	if (!i || pl >= GEN_NAME_MAX)
		return false;
	i = skip_ws(p, i, n);
	if (i >= n || p[i] != '+')
		return false;
	i = skip_ws(p, i + 1, n);
	if (ident_len(p, i, n) != vn || memcmp(p + i, var, vn) != 0)
		return false;
	i = skip_ws(p, i + vn, n);
	if (i < n && p[i] == '+') {
		i = literal(p, skip_ws(p, i + 1, n), n, &post, &ql);
		if (!i || ql >= GEN_NAME_MAX)
			return false;
		i = skip_ws(p, i, n);
	}
	if (i != n)
		return false;
	snprintf(t->pre, sizeof t->pre, "%.*s", (int)pl, pre);
	snprintf(t->post, sizeof t->post, "%.*s", (int)ql, post);
	return true;
}

/* "pre{}post".format(var) | f"pre{var}post" | "pre" + var + "post" (quotes ' or "). */
static bool parse_tmpl(const char *p, size_t n, const char *var, size_t vn, struct tmpl *t)
{
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	if (parse_concat(p, n, var, vn, t))
		return true;
	size_t i = skip_ws(p, 0, n);
	bool fstr = i < n && p[i] == 'f';
	i += fstr;
	if (i < n && (p[i] == '"' || p[i] == '\'')) {
		const char *e = memchr(p + i + 1, p[i], n - i - 1);
		if (!e)
			return false;
		const char *s = p + i + 1;
		size_t sl = (size_t)(e - s);
		char hole[GEN_NAME_MAX];
		int hl = snprintf(hole, sizeof hole, fstr ? "{%.*s}" : "{}", (int)vn, var);
		const char *h = find(s, sl, hole, (size_t)hl);
		const char *rest = e + 1;
		size_t rl = (size_t)(p + n - rest);
		char call[GEN_NAME_MAX];
		int cl = snprintf(call, sizeof call, ".format(%.*s)", (int)vn, var);
		if (!h || sl >= GEN_NAME_MAX ||
		    (fstr ? rl != 0 : (rl != (size_t)cl || memcmp(rest, call, rl) != 0)))
			return false;
		snprintf(t->pre, sizeof t->pre, "%.*s", (int)(h - s), s);
		snprintf(t->post, sizeof t->post, "%.*s", (int)(sl - (size_t)(h - s) - (size_t)hl),
			 h + hl);
		return true;
	}
	return false;
}

static int emit(struct gen *g, const char *cls, size_t cls_len, const char *name,
		const char *generator, uint32_t line)
{
	if (g->n_out >= GEN_TESTS_MAX)
		return 0; /* bounded: the rest is not listed */
	void *p = scan__grow(g->out, g->n_out, &g->cap_out, sizeof(*g->out));
	if (!p)
		return err_set(ERR_NOMEM, "scan: generated tests");
	g->out = p;
	struct scan_generated *o = &g->out[g->n_out];
	o->class_name = scan__strndup(g->a, cls, cls_len);
	o->name = name ? scan__strndup(g->a, name, strlen(name)) : NULL;
	o->generator = scan__strndup(g->a, generator, strlen(generator));
	o->line = line;
	if (!o->class_name || (name && !o->name) || !o->generator)
		return err_set(ERR_NOMEM, "scan: generated tests");
	g->n_out++;
	return 0;
}

static size_t indent_of(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return i;
}

/* The first parameter of the def on `line`: "cls" in `def f(cls):`. */
static size_t first_param(const char *p, size_t n, const char **out)
{
	const char *o = memchr(p, '(', n);
	if (!o)
		return 0;
	size_t i = skip_ws(p, (size_t)(o - p) + 1, n);
	*out = p + i;
	return ident_len(p, i, n);
}

/* A loop of the generator's body: its variable, its values (NULL when not static), and the
 * lines it spans. */
struct loop {
	const char *var;
	size_t var_len;
	const struct strlist *values;
	struct strlist local;
	size_t indent;
};

static bool parse_for(const struct gen *g, const char *p, size_t n, struct loop *l)
{
	size_t i = indent_of(p, n);
	if (n - i < 4 || memcmp(p + i, "for ", 4) != 0)
		return false;
	l->indent = i;
	i = skip_ws(p, i + 4, n);
	l->var = p + i;
	l->var_len = ident_len(p, i, n);
	if (!l->var_len)
		return false;
	i = skip_ws(p, i + l->var_len, n);
	if (n - i < 3 || memcmp(p + i, "in ", 3) != 0)
		return false;
	i = skip_ws(p, i + 3, n);
	size_t k = ident_len(p, i, n);
	l->values = NULL;
	if (k && skip_ws(p, i + k, n) < n && p[skip_ws(p, i + k, n)] == ':') {
		l->values = list_named(g, p + i, k);
	} else if (i < n && (p[i] == '[' || p[i] == '(')) {
		l->local.n = 0;
		size_t off = (size_t)(p - g->t.d);
		if (read_strings(g->t.d, off + i + 1, off + n, p[i] == '[' ? ']' : ')', &l->local))
			l->values = &l->local;
	}
	return true;
}

/* The expression bound to `name` by the last `name = ...` line in [from, to). */
static const char *assigned(const struct gen *g, uint32_t from, uint32_t to, const char *name,
			    size_t nl, size_t *len)
{
	const char *found = NULL;
	for (uint32_t ln = from; ln < to; ln++) {
		size_t n;
		const char *p = line_at(&g->t, ln, &n);
		size_t i = indent_of(p, n);
		if (ident_len(p, i, n) != nl || memcmp(p + i, name, nl) != 0)
			continue;
		i = skip_ws(p, i + nl, n);
		if (i >= n || p[i] != '=' || (i + 1 < n && p[i + 1] == '='))
			continue;
		found = p + i + 1;
		*len = n - i - 1;
	}
	return found;
}

/* setattr(<param>, X, ...) on one line: X's text. */
static const char *setattr_name(const char *p, size_t n, const char *param, size_t pl, size_t *xl)
{
	const char *s = find(p, n, "setattr(", 8);
	if (!s)
		return NULL;
	size_t i = skip_ws(p, (size_t)(s - p) + 8, n);
	if (ident_len(p, i, n) != pl || memcmp(p + i, param, pl) != 0)
		return NULL;
	i = skip_ws(p, i + pl, n);
	if (i >= n || p[i] != ',')
		return NULL;
	i = skip_ws(p, i + 1, n);
	size_t e = i;
	int depth = 0;
	while (e < n && (depth || p[e] != ',')) {
		depth += (p[e] == '(' || p[e] == '[') - (p[e] == ')' || p[e] == ']');
		e++;
	}
	*xl = e - i;
	return e < n ? p + i : NULL;
}

/* The names one setattr in a loop generates; one unnamed entry when they are not static. */
static int setattr_tests(struct gen *g, const char *cls, size_t cl, const char *fname,
			 uint32_t call_line, const struct loop *l, uint32_t loop_line, uint32_t at,
			 const char *x, size_t xl)
{
	struct tmpl t;
	size_t el = xl;
	const char *expr = x;
	if (ident_len(x, 0, xl) == xl)
		expr = assigned(g, loop_line, at, x, xl, &el);
	if (!l || !l->values || !expr || !parse_tmpl(expr, el, l->var, l->var_len, &t))
		return emit(g, cls, cl, NULL, fname, call_line);
	for (size_t v = 0; v < l->values->n; v++) {
		char name[3 * GEN_NAME_MAX];
		snprintf(name, sizeof name, "%s%.*s%s", t.pre, (int)l->values->vlen[v],
			 l->values->v[v], t.post);
		int rc = emit(g, cls, cl, name, fname, call_line);
		if (rc)
			return rc;
	}
	return 0;
}

/* The tests generator `fn` adds to class `cls` when called at `call_line`. */
static int generator_tests(struct gen *g, const struct scan_function *fn, const char *cls,
			   size_t cl, uint32_t call_line)
{
	size_t n;
	const char *param;
	const char *def = line_at(&g->t, fn->first_line, &n);
	size_t pl = first_param(def, n, &param);
	if (!pl)
		return 0;
	struct loop loop = { 0 };
	bool in_loop = false;
	uint32_t loop_line = 0;
	for (uint32_t ln = fn->first_line + 1; ln <= fn->last_line && ln <= g->t.n; ln++) {
		const char *p = line_at(&g->t, ln, &n);
		size_t ind = indent_of(p, n);
		if (ind < n && p[ind] != '#' && in_loop && ind <= loop.indent)
			in_loop = false;
		if (parse_for(g, p, n, &loop)) {
			in_loop = true;
			loop_line = ln;
			continue;
		}
		size_t xl;
		const char *x = setattr_name(p, n, param, pl, &xl);
		if (!x)
			continue;
		int rc = setattr_tests(g, cls, cl, fn->name, call_line, in_loop ? &loop : NULL,
				       loop_line, ln, x, xl);
		if (rc)
			return rc;
	}
	return 0;
}

/* Module-level `F(Class)` lines whose F is a module-level function of this file. */
static int calls(struct gen *g)
{
	for (uint32_t ln = 1; ln <= g->t.n; ln++) {
		size_t n;
		const char *p = line_at(&g->t, ln, &n);
		size_t k = ident_len(p, 0, n);
		if (!k || k >= n || p[k] != '(')
			continue;
		size_t i = skip_ws(p, k + 1, n);
		size_t cl = ident_len(p, i, n);
		size_t e = skip_ws(p, i + cl, n);
		if (!cl || e >= n || p[e] != ')')
			continue;
		for (size_t f = 0; f < g->f->n_functions; f++) {
			const struct scan_function *fn = &g->f->functions[f];
			if (fn->class_index >= 0 || fn->parent_function >= 0 ||
			    strlen(fn->name) != k || memcmp(fn->name, p, k) != 0)
				continue;
			int rc = generator_tests(g, fn, p + i, cl, ln);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int scan__generated(struct scan_file *f, struct arena *a, const char *d, size_t len)
{
	if (f->skipped || !find(d, len, "setattr(", 8))
		return 0;
	struct gen g = { .f = f, .a = a, .t = { .d = d, .len = len } };
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += d[i] == '\n';
	g.t.start = malloc(sizeof(*g.t.start) * (lines + 1));
	g.lists = malloc(sizeof(*g.lists) * GEN_LISTS_MAX);
	int rc = g.t.start && g.lists ? 0 : err_set(ERR_NOMEM, "scan: generated tests");
	if (rc == 0) {
		g.t.start[0] = 0;
		for (size_t i = 0; i < len; i++)
			if (d[i] == '\n')
				g.t.start[++g.t.n] = i + 1;
		if (len && d[len - 1] != '\n')
			g.t.start[++g.t.n] = len;
		module_lists(&g);
		rc = calls(&g);
	}
	if (rc == 0 && g.n_out) {
		f->generated = scan__alloc(a, sizeof(*g.out) * g.n_out);
		if (!f->generated)
			rc = err_set(ERR_NOMEM, "scan: generated tests");
		else
			memcpy(f->generated, g.out, sizeof(*g.out) * g.n_out);
		f->n_generated = rc ? 0 : g.n_out;
	}
	free(g.out);
	free(g.t.start);
	free(g.lists);
	return rc;
}
