/* The op variants of an @ops(...) decorator, from the catalog's op database: the entries of
 * every op database file (common_methods_invocations.py, opinfo/definitions/), PythonRefInfo
 * kinds left out (they are python_ref_db's, not op_db's). The argument is evaluated where it is
 * statically evaluable:
 *   op_db | unary_ufuncs | binary_ufuncs | reduction_ops (by entry class, as PyTorch builds them)
 *   [op for op in SRC if COND], (op for ...), list(...), tuple(...), filter(lambda op: COND, SRC)
 *   SRC + SRC
 * with COND made of `op.name in (...)`, `not in`, `==`, `!=`, `op.variant_test_name == ...`,
 * `isinstance(op, K)`, and/or/not. Anything else (another list name, an attribute the database
 * does not give) is over-approximated: an unknown condition keeps the entry, an unknown list
 * name keeps its family (by the words "unary", "binary", "reduction" in it) or the whole
 * database, and the result says so. Each entry is named as OpInfo.formatted_name: the name with
 * '.' as '_', then '_' and variant_test_name when there is one. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"

#define OPV_DEPTH_MAX 8 /* nested comprehensions and parentheses looked through */

struct opv_entry {
	const char *kind, *name, *vtn;
};

struct opv {
	struct opv_entry *e;
	size_t n;
	bool approx;
	const char *why;
};

enum tri { T_FALSE, T_TRUE, T_UNKNOWN };

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* The closing bracket matching s[0], or n when none. */
static size_t close_of(const char *s, size_t n)
{
	int depth = 0;
	char q = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (q) {
			q = c == q ? 0 : q;
			continue;
		}
		if (c == '"' || c == '\'')
			q = c;
		else if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && --depth == 0)
			return i;
	}
	return n;
}

/* Removes parentheses around the whole text. */
static void unparen(const char **s, size_t *n)
{
	trim(s, n);
	while (*n >= 2 && (*s)[0] == '(' && close_of(*s, *n) == *n - 1) {
		(*s)++;
		*n -= 2;
		trim(s, n);
	}
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The offset of the first top-level occurrence (outside brackets and strings) of `tok`, or n;
 * with `word`, only where it stands between non-identifier characters. */
static size_t find_top(const char *s, size_t n, const char *tok, bool word)
{
	size_t m = strlen(tok);
	int depth = 0;
	char q = 0;
	for (size_t i = 0; i + m <= n; i++) {
		char c = s[i];
		if (q) {
			q = c == q ? 0 : q;
			continue;
		}
		if (c == '"' || c == '\'')
			q = c;
		else if (c == '(' || c == '[' || c == '{')
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

/* Whether `lit` (a quoted string literal) equals v (NULL as ""). */
static bool lit_eq(const char *lit, size_t n, const char *v)
{
	if (n < 2 || (lit[0] != '"' && lit[0] != '\'') || lit[n - 1] != lit[0])
		return false;
	v = v ? v : "";
	return strlen(v) == n - 2 && memcmp(lit + 1, v, n - 2) == 0;
}

/* `v in (lits)`: T/F, or unknown when the container is not a literal of strings. */
static enum tri in_literal(const char *s, size_t n, const char *v)
{
	unparen(&s, &n);
	if (n >= 2 && s[0] == '[' && close_of(s, n) == n - 1) {
		s++;
		n -= 2;
	}
	bool any = false;
	while (n) {
		size_t c = find_op(s, n, ","), k = c;
		const char *it = s;
		trim(&it, &k);
		if (k) {
			if (it[0] != '"' && it[0] != '\'')
				return T_UNKNOWN;
			any |= lit_eq(it, k, v);
		}
		if (c == n)
			break;
		s += c + 1;
		n -= c + 1;
	}
	return any ? T_TRUE : T_FALSE;
}

static const char *attr_of(const struct opv_entry *e, const char *s, size_t n, const char *var,
			   bool *known)
{
	size_t vl = strlen(var);
	*known = false;
	if (n <= vl + 1 || memcmp(s, var, vl) != 0 || s[vl] != '.')
		return NULL;
	s += vl + 1;
	n -= vl + 1;
	*known = true;
	if (is_word(s, n, "name"))
		return e->name;
	if (is_word(s, n, "variant_test_name"))
		return e->vtn ? e->vtn : "";
	*known = false;
	return NULL;
}

static enum tri cond_eval(const struct opv_entry *e, const char *s, size_t n, const char *var,
			  int depth);

/* `A not in B`, `A in B`, `A == B`, `A != B` with A an attribute of the entry. */
static enum tri compare_eval(const struct opv_entry *e, const char *s, size_t n, const char *var)
{
	size_t at = n, skip = 0;
	bool negate = false, member = true;
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
				negate = true;
			}
		}
	} else if ((at = find_op(s, n, "==")) < n || (at = find_op(s, n, "!=")) < n) {
		skip = 2;
		member = false;
		negate = s[at] == '!';
	} else {
		return T_UNKNOWN;
	}
	const char *l = s, *r = s + at + skip;
	size_t ln = at, rn = n - at - skip;
	trim(&l, &ln);
	trim(&r, &rn);
	bool known;
	const char *v = attr_of(e, l, ln, var, &known);
	if (!known)
		return T_UNKNOWN;
	enum tri t;
	if (member)
		t = in_literal(r, rn, v);
	else if (rn >= 2 && (r[0] == '"' || r[0] == '\''))
		t = lit_eq(r, rn, v) ? T_TRUE : T_FALSE;
	else
		return T_UNKNOWN;
	if (t == T_UNKNOWN || !negate)
		return t;
	return t == T_TRUE ? T_FALSE : T_TRUE;
}

/* isinstance(var, K) or isinstance(var, (K1, K2)). */
static enum tri isinstance_eval(const struct opv_entry *e, const char *s, size_t n, const char *var)
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
	while (kn) {
		size_t cc = find_op(k, kn, ","), w = cc;
		const char *it = k;
		trim(&it, &w);
		const char *dot = memchr(it, '.', w);
		while (dot) { /* the last name of a dotted class */
			w -= (size_t)(dot + 1 - it);
			it = dot + 1;
			dot = memchr(it, '.', w);
		}
		if (w && strlen(e->kind) == w && memcmp(e->kind, it, w) == 0)
			return T_TRUE;
		if (cc == kn)
			break;
		k += cc + 1;
		kn -= cc + 1;
	}
	return T_FALSE;
}

static enum tri cond_eval(const struct opv_entry *e, const char *s, size_t n, const char *var,
			  int depth)
{
	unparen(&s, &n);
	if (depth > OPV_DEPTH_MAX || !n)
		return T_UNKNOWN;
	size_t at = find_kw(s, n, "or");
	if (at < n) {
		enum tri a = cond_eval(e, s, at, var, depth + 1);
		enum tri b = cond_eval(e, s + at + 2, n - at - 2, var, depth + 1);
		return a == T_TRUE || b == T_TRUE     ? T_TRUE
		       : a == T_FALSE && b == T_FALSE ? T_FALSE
						      : T_UNKNOWN;
	}
	if ((at = find_kw(s, n, "and")) < n) {
		enum tri a = cond_eval(e, s, at, var, depth + 1);
		enum tri b = cond_eval(e, s + at + 3, n - at - 3, var, depth + 1);
		return a == T_FALSE || b == T_FALSE ? T_FALSE
		       : a == T_TRUE && b == T_TRUE ? T_TRUE
						    : T_UNKNOWN;
	}
	if (find_kw(s, n, "not") == 0) {
		enum tri a = cond_eval(e, s + 3, n - 3, var, depth + 1);
		return a == T_UNKNOWN ? a : a == T_TRUE ? T_FALSE : T_TRUE;
	}
	if (n > 11 && memcmp(s, "isinstance(", 11) == 0)
		return isinstance_eval(e, s, n, var);
	return compare_eval(e, s, n, var);
}

static int eval_src(struct opv *o, const char *s, size_t n, uint8_t *keep, int depth);

/* SRC filtered by COND over variable `var`, into keep. */
static int eval_filtered(struct opv *o, const char *var, size_t vn, const char *src, size_t sn,
			 const char *cond, size_t cn, uint8_t *keep, int depth)
{
	char v[64];
	if (!vn || vn >= sizeof v)
		return 0;
	memcpy(v, var, vn);
	v[vn] = '\0';
	uint8_t *in = calloc(o->n + 1, 1);
	if (!in)
		return err_set(ERR_NOMEM, "op variants");
	int ok = eval_src(o, src, sn, in, depth + 1);
	for (size_t i = 0; ok > 0 && i < o->n; i++) {
		if (!in[i])
			continue;
		enum tri t = cond ? cond_eval(&o->e[i], cond, cn, v, 0) : T_TRUE;
		if (t == T_UNKNOWN && !o->approx) {
			o->approx = true;
			o->why = "a condition over the op list that is not statically evaluable: "
				 "every entry it might keep";
		}
		keep[i] |= t != T_FALSE;
	}
	free(in);
	return ok;
}

/* [X for V in SRC if COND] (brackets already removed). */
static int eval_comprehension(struct opv *o, const char *s, size_t n, uint8_t *keep, int depth)
{
	size_t f = find_kw(s, n, "for");
	if (f == n)
		return 0;
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
		return 0; /* the comprehension yields something else than the entries */
	return eval_filtered(o, v, vn, src, sn, cond, cn, keep, depth);
}

/* filter(lambda V: COND, SRC) (the text inside the parentheses). */
static int eval_filter(struct opv *o, const char *s, size_t n, uint8_t *keep, int depth)
{
	trim(&s, &n);
	if (n < 7 || memcmp(s, "lambda", 6) != 0 || !isspace((unsigned char)s[6]))
		return 0;
	size_t comma = find_op(s, n, ","), colon = find_op(s, comma, ":");
	if (comma == n || colon == comma)
		return 0;
	const char *v = s + 6;
	size_t vn = colon - 6;
	trim(&v, &vn);
	return eval_filtered(o, v, vn, s + comma + 1, n - comma - 1, s + colon + 1,
			     comma - colon - 1, keep, depth);
}

static void family(struct opv *o, const char *kind, uint8_t *keep)
{
	for (size_t i = 0; i < o->n; i++)
		keep[i] |= !kind || strcmp(o->e[i].kind, kind) == 0;
}

/* A list by name: the database's own lists exactly, any other over-approximated. */
static int eval_name(struct opv *o, const char *s, size_t n, uint8_t *keep)
{
	const char *dot;
	while ((dot = memchr(s, '.', n)) != NULL) {
		n -= (size_t)(dot + 1 - s);
		s = dot + 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	static const char *const lists[][2] = { { "op_db", NULL },
						{ "unary_ufuncs", "UnaryUfuncInfo" },
						{ "binary_ufuncs", "BinaryUfuncInfo" },
						{ "reduction_ops", "ReductionOpInfo" } };
	for (size_t k = 0; k < 4; k++)
		if (is_word(s, n, lists[k][0])) {
			family(o, lists[k][1], keep);
			return 1;
		}
	char w[128];
	snprintf(w, sizeof w, "%.*s", (int)n, s);
	const char *kind = strstr(w, "unary")       ? "UnaryUfuncInfo"
			   : strstr(w, "binary")    ? "BinaryUfuncInfo"
			   : strstr(w, "reduction") ? "ReductionOpInfo"
						    : NULL;
	family(o, kind, keep);
	o->approx = true;
	o->why = kind ? "an op list defined outside the op database's own lists: every entry "
			"of its family"
		      : "an op list defined outside the op database's own lists: every entry";
	return 1;
}

static int eval_src(struct opv *o, const char *s, size_t n, uint8_t *keep, int depth)
{
	unparen(&s, &n);
	if (n && s[n - 1] == ',') { /* a call's trailing comma, a one-element tuple's */
		n--;
		unparen(&s, &n);
	}
	if (!n || depth > OPV_DEPTH_MAX)
		return 0;
	if (find_kw(s, n, "for") < n) /* a generator expression, its parentheses gone */
		return eval_comprehension(o, s, n, keep, depth);
	size_t plus = find_op(s, n, "+");
	if (plus < n) {
		int a = eval_src(o, s, plus, keep, depth + 1);
		return a <= 0 ? a : eval_src(o, s + plus + 1, n - plus - 1, keep, depth + 1);
	}
	size_t c = close_of(s, n);
	if ((s[0] == '[' || s[0] == '(') && c == n - 1)
		return eval_comprehension(o, s + 1, n - 2, keep, depth);
	for (size_t k = 0; k < 3; k++) {
		static const char *const calls[] = { "list(", "tuple(", "filter(" };
		size_t cl = strlen(calls[k]);
		if (n > cl && memcmp(s, calls[k], cl) == 0 &&
		    close_of(s + cl - 1, n - cl + 1) == n - cl) {
			if (k == 2)
				return eval_filter(o, s + cl, n - cl - 1, keep, depth);
			const char *in = s + cl;
			size_t inn = n - cl - 1;
			trim(&in, &inn);
			if (find_kw(in, inn, "for") < inn)
				return eval_comprehension(o, in, inn, keep, depth);
			return eval_src(o, in, inn, keep, depth + 1);
		}
	}
	return eval_name(o, s, n, keep);
}

static bool python_ref(const char *kind)
{
	return strstr(kind, "PythonRef") != NULL;
}

static int collect(const struct catalog *cat, struct opv *o)
{
	size_t cap = 0;
	for (size_t f = 0; f < cat->n_files; f++) {
		const struct catalog_file *cf = &cat->files[f];
		if (!cf->opdb || !cf->blob || !cf->blob->scan)
			continue;
		const struct scan_file *sf = cf->blob->scan;
		for (size_t i = 0; i < sf->n_opinfos; i++) {
			const struct scan_opinfo *oi = &sf->opinfos[i];
			if (!oi->name || !oi->kind || python_ref(oi->kind))
				continue;
			if (o->n == cap) {
				cap = cap ? 2 * cap : 256;
				struct opv_entry *e = realloc(o->e, cap * sizeof *e);
				if (!e)
					return err_set(ERR_NOMEM, "op variants");
				o->e = e;
			}
			o->e[o->n++] =
			    (struct opv_entry){ oi->kind, oi->name, oi->variant_test_name };
		}
	}
	return 0;
}

static char *formatted_name(const struct opv_entry *e)
{
	size_t a = strlen(e->name), b = e->vtn ? strlen(e->vtn) : 0;
	char *s = malloc(a + b + 2);
	if (!s)
		return NULL;
	memcpy(s, e->name, a + 1);
	if (b) {
		s[a] = '_';
		memcpy(s + a + 1, e->vtn, b + 1);
	}
	for (char *p = s; *p; p++)
		*p = *p == '.' ? '_' : *p;
	return s;
}

int catalog__op_variants(const struct catalog *cat, const char *arg, char ***names, size_t *n,
			 const char **why)
{
	*names = NULL;
	*n = 0;
	*why = NULL;
	struct opv o = { 0 };
	int rc = collect(cat, &o);
	if (!rc && !o.n) { /* no op database in this tree: nothing to evaluate against */
		free(o.e);
		return 0;
	}
	uint8_t *keep = rc ? NULL : calloc(o.n + 1, 1);
	if (!rc && !keep)
		rc = err_set(ERR_NOMEM, "op variants");
	int ok = rc ? rc : eval_src(&o, arg, strlen(arg), keep, 0);
	char **out = ok > 0 ? calloc(o.n + 1, sizeof *out) : NULL;
	if (ok > 0 && !out)
		ok = err_set(ERR_NOMEM, "op variants");
	size_t k = 0;
	for (size_t i = 0; ok > 0 && i < o.n; i++) {
		if (!keep[i])
			continue;
		char *s = formatted_name(&o.e[i]);
		if (!s) {
			ok = err_set(ERR_NOMEM, "op variants");
			break;
		}
		bool dup = false;
		for (size_t j = 0; j < k && !dup; j++)
			dup = strcmp(out[j], s) == 0;
		if (dup)
			free(s);
		else
			out[k++] = s;
	}
	if (ok > 0) {
		*names = out;
		*n = k;
		*why = o.approx ? o.why : NULL;
		ok = o.approx ? 2 : 1;
	} else {
		for (size_t j = 0; j < k; j++)
			free(out[j]);
		free(out);
	}
	free(keep);
	free(o.e);
	return ok;
}
