/* Op database entries of a Python file (struct scan_opinfo): the calls `XxxInfo("name", ...)`
 * that build them, where the file builds them. Three shapes of module- or class-level code make
 * entries, as PyTorch's op database writes them:
 *
 *   UnaryUfuncInfo('exp', ...)                         one entry, as written
 *   *(UnaryUfuncInfo('polygamma', variant_test_name=f'polygamma_n_{n_}', ...)
 *     for n_ in (1, 2, 3, 4))                          one entry per literal the loop runs over
 *   make_mvlgamma_opinfo(variant_test_name='mvlgamma_p_1', ...)
 *                                                      one entry per entry call in the body of
 *                                                      the module-level function it calls
 *
 * The last two are instances: the entry call's text with the loop variable, or the function's
 * parameters, replaced by the literal or by the call's argument (default) text, f-string fields
 * included, then read as if written at the call. An instance so has its own name, variant,
 * arguments and uses, its lines are the call's, and its hash changes when the call's arguments
 * or the function's body do. An entry call in a function's body is such a template, never an
 * entry itself. What cannot be instantiated (a loop over a computed iterable, a call passing
 * *args) makes no entry and stays module-level code, so that an edit of it still counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

#define SITE_ENV_MAX  64   /* loop literals or parameters one instance site substitutes */
#define SITE_ARGS_MAX 4096 /* arguments of one call read (as scan__args keeps) */

static const char *const opinfo_kinds[] = {
	"OpInfo",        "UnaryUfuncInfo",  "BinaryUfuncInfo",  "ReductionOpInfo",
	"ShapeFuncInfo", "ForeachFuncInfo", "SpectralFuncInfo", NULL,
};

static bool known_kind(const char *s, size_t n)
{
	for (int i = 0; opinfo_kinds[i]; i++)
		if (strlen(opinfo_kinds[i]) == n && memcmp(opinfo_kinds[i], s, n) == 0)
			return true;
	return false;
}

/* A plain string literal ("x", r'x', u"x"): not bytes nor an f-string, whose value is not
 * known before the program runs. */
static bool plain_string(const struct scan_state *st, const struct tok *t)
{
	if (!t || t->kind != TOK_STRING)
		return false;
	for (const char *s = st->d + t->off; *s != '\'' && *s != '"'; s++)
		if ((*s | 0x20) != 'r' && (*s | 0x20) != 'u')
			return false;
	return true;
}

/* The arguments of a call `XxxInfo(...)` that matter to the op database. */
struct entry_args {
	const struct tok *first, *name_kw, *aten, *variant, *sfunc, *dt0, *dt1;
};

/* Reads the arguments of the call at token i (closing at `close`); true when it is an entry:
 * its name is a plain string, first or (for a known kind) `name=`. */
static bool entry_args(const struct scan_state *st, const struct lline *ll, size_t i, size_t close,
		       struct entry_args *e)
{
	memset(e, 0, sizeof(*e));
	static _Thread_local size_t starts[SITE_ARGS_MAX], ends[SITE_ARGS_MAX];
	size_t n = scan__split_args(st, ll, i + 1, close, starts, ends, SITE_ARGS_MAX);
	for (size_t j = 0; j < n && j < SITE_ARGS_MAX; j++) {
		size_t a = starts[j], k = ends[j];
		const struct tok *h = &ll->toks[a];
		bool kw = k - a >= 3 && h->kind == TOK_NAME && tok_op(&ll->toks[a + 1], '=');
		const struct tok *v = kw && k - a == 3 ? &ll->toks[a + 2] : NULL;
		if (j == 0 && !kw && k - a == 1 && h->kind == TOK_STRING)
			e->first = h;
		else if (v && v->kind == TOK_STRING && TOK_IS(st, h, "name"))
			e->name_kw = v;
		else if (v && v->kind == TOK_STRING && TOK_IS(st, h, "aten_name"))
			e->aten = v;
		else if (v && v->kind == TOK_STRING && TOK_IS(st, h, "variant_test_name"))
			e->variant = v;
		else if (v && v->kind == TOK_STRING && !e->variant &&
			 TOK_IS(st, h, "torch_opinfo_variant_name"))
			e->variant = v; /* a reference entry's variant is its entry's */
		else if (v && v->kind == TOK_NAME && TOK_IS(st, h, "sample_inputs_func"))
			e->sfunc = v;
		else if (kw && TOK_IS(st, h, "dtypes")) {
			e->dt0 = &ll->toks[a + 2];
			e->dt1 = &ll->toks[k - 1];
		}
	}
	/* an f-string name is no name: an edit of the entry then counts as outside any entry */
	e->first = plain_string(st, e->first) ? e->first : NULL;
	e->name_kw = plain_string(st, e->name_kw) ? e->name_kw : NULL;
	const struct tok *t = &ll->toks[i];
	return e->first || (known_kind(st->d + t->off, t->len) && e->name_kw);
}

/* The call at token i: `XxxInfo(` not after `def` or `class`; its closing parenthesis or 0. */
static size_t info_call(const struct scan_state *st, const struct lline *ll, size_t i)
{
	if (i + 1 >= ll->n)
		return 0;
	const struct tok *t = &ll->toks[i];
	if (t->kind != TOK_NAME || t->len < 4 || !tok_op(&ll->toks[i + 1], '(') ||
	    ll->toks[i + 1].match < 0)
		return 0;
	if (memcmp(st->d + t->off + t->len - 4, "Info", 4) != 0)
		return 0;
	if (i > 0 && ll->toks[i - 1].kind == TOK_NAME &&
	    (TOK_IS(st, &ll->toks[i - 1], "def") || TOK_IS(st, &ll->toks[i - 1], "class")))
		return 0;
	return (size_t)ll->toks[i + 1].match;
}

/* The entry's name as PyTorch builds it: ForeachFuncInfo("add") is `_foreach_add`. */
static const char *entry_name(struct scan_state *st, const struct tok *kind, const struct tok *nt)
{
	const char *name = scan__string_value(st, nt);
	if (!name) /* unterminated: as written */
		name = scan__strndup(st->arena, st->d + nt->off, nt->len);
	static const char foreach[] = "ForeachFuncInfo", prefix[] = "_foreach_";
	if (!name || kind->len != sizeof(foreach) - 1 ||
	    memcmp(st->d + kind->off, foreach, kind->len) != 0)
		return name;
	size_t n = strlen(name);
	char *full = scan__alloc(st->arena, sizeof(prefix) + n);
	if (full) {
		memcpy(full, prefix, sizeof(prefix) - 1);
		memcpy(full + sizeof(prefix) - 1, name, n + 1);
	}
	return full;
}

static int opinfo_at(struct scan_state *st, const struct lline *ll, size_t i, size_t close)
{
	const struct tok *t = &ll->toks[i];
	struct entry_args e;
	if (!entry_args(st, ll, i, close, &e))
		return 0;
	struct scan_opinfo *o =
	    scan__grow(st->f->opinfos, st->f->n_opinfos, &st->cap_opinfo, sizeof(*o));
	if (!o)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	st->f->opinfos = o;
	o = &o[st->f->n_opinfos++];
	memset(o, 0, sizeof(*o));
	o->kind = scan__strndup(st->arena, st->d + t->off, t->len);
	o->name = entry_name(st, t, e.first ? e.first : e.name_kw);
	o->aten_name = e.aten ? scan__string_value(st, e.aten) : NULL;
	o->variant_test_name = e.variant ? scan__string_value(st, e.variant) : NULL;
	o->first_line = t->line;
	o->last_line = ll->toks[close].line;
	o->hash = scan__tokens_hash(st, ll, i, close + 1);
	if (scan__args(st, ll, i + 1, close, &o->args, &o->n_args))
		return st->err;
	if (e.sfunc &&
	    !(o->sample_func = scan__strndup(st->arena, st->d + e.sfunc->off, e.sfunc->len)))
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	if (e.dt0 && scan__dtypes_eval(st->arena, st->d + e.dt0->off,
				       e.dt1->off + e.dt1->len - e.dt0->off, &o->dtypes))
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	if (!o->kind || !o->name)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	return scan__collect_uses_of(st, ll, i + 2, close,
				     SCAN_USE_OPINFO - 1 - (int)(st->f->n_opinfos - 1));
}

/* ---- instances: the text of a template with names replaced ---- */

struct sbuf {
	char *p;
	size_t n, cap;
	bool nomem;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->nomem)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->nomem = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* What an instance replaces: a loop variable or a parameter, by source text. */
struct env_binding {
	const char *name, *value;
	size_t name_len, value_len;
};

struct env {
	struct env_binding b[SITE_ENV_MAX];
	size_t n;
};

static void env_put(struct env *e, const char *name, size_t nl, const char *v, size_t vl)
{
	while (vl && (v[0] == ' ' || v[0] == '\t' || v[0] == '\n' || v[0] == '\r'))
		v++, vl--;
	while (vl &&
	       (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\n' || v[vl - 1] == '\r'))
		vl--;
	if (e->n < SITE_ENV_MAX && vl)
		e->b[e->n++] = (struct env_binding){ name, v, nl, vl };
}

static int env_find(const struct env *e, const char *s, size_t n)
{
	for (size_t k = 0; k < e->n; k++)
		if (e->b[k].name_len == n && memcmp(e->b[k].name, s, n) == 0)
			return (int)k;
	return -1;
}

/* The value of a literal's text, for an f-string field: a plain one-line string without
 * escapes (its content) or a number (as written). */
static bool literal_value(const char *s, size_t n, const char **v, size_t *vn)
{
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0] &&
	    !memchr(s + 1, s[0], n - 2) && !memchr(s, '\\', n) && !memchr(s, '\n', n)) {
		*v = s + 1;
		*vn = n - 2;
		return true;
	}
	size_t k = s[0] == '-' ? 1 : 0;
	if (k >= n || s[k] < '0' || s[k] > '9')
		return false;
	for (; k < n; k++)
		if (!(s[k] == '.' || s[k] == '_' || (s[k] >= '0' && s[k] <= '9') ||
		      ((s[k] | 0x20) >= 'a' && (s[k] | 0x20) <= 'z')))
			return false;
	*v = s;
	*vn = n;
	return true;
}

/* An f-string whose every field is a replaced name with a literal value, as a plain string
 * (f'polygamma_n_{n_}' with n_ = 1: 'polygamma_n_1'); false when it is anything else. */
static bool fstring_subst(const char *s, size_t n, const struct env *e, struct sbuf *out)
{
	size_t p = 0;
	bool f = false, r = false;
	for (; p < n && s[p] != '\'' && s[p] != '"'; p++) {
		char c = (char)(s[p] | 0x20);
		if (c == 'f')
			f = true;
		else if (c == 'r')
			r = true;
		else
			return false;
	}
	if (!f || p + 2 > n || s[n - 1] != s[p] || (p + 2 < n && s[p + 1] == s[p]))
		return false; /* not an f-string, or a triple-quoted one */
	char q = s[p];
	struct sbuf b = { 0 };
	sb_put(&b, r ? "r" : "", r);
	sb_put(&b, &q, 1);
	bool ok = true;
	for (size_t k = p + 1; ok && k < n - 1; k++) {
		if ((s[k] == '{' || s[k] == '}') && k + 1 < n - 1 && s[k + 1] == s[k]) {
			sb_put(&b, s + k, 1);
			k++;
			continue;
		}
		if (s[k] == '}') {
			ok = false;
			break;
		}
		if (s[k] != '{') {
			sb_put(&b, s + k, 1);
			continue;
		}
		const char *end = memchr(s + k, '}', n - 1 - k);
		if (!end) {
			ok = false;
			break;
		}
		const char *a = s + k + 1;
		size_t an = (size_t)(end - a);
		while (an && *a == ' ')
			a++, an--;
		while (an && a[an - 1] == ' ')
			an--;
		int at = env_find(e, a, an);
		const char *v;
		size_t vn;
		if (at < 0 || !literal_value(e->b[at].value, e->b[at].value_len, &v, &vn) ||
		    memchr(v, q, vn) || memchr(v, '{', vn) || memchr(v, '}', vn)) {
			ok = false;
			break;
		}
		sb_put(&b, v, vn);
		k = (size_t)(end - s);
	}
	sb_put(&b, &q, 1);
	if (ok && !b.nomem)
		sb_put(out, b.p, b.n);
	out->nomem |= b.nomem;
	free(b.p);
	return ok;
}

/* Whether a replacement's text stands alone where a name stood: a dotted name or a literal. */
static bool one_term(const char *v, size_t n)
{
	const char *lv;
	size_t ln;
	if (literal_value(v, n, &lv, &ln))
		return true;
	for (size_t k = 0; k < n; k++)
		if (!(v[k] == '_' || v[k] == '.' || (v[k] >= '0' && v[k] <= '9') ||
		      ((v[k] | 0x20) >= 'a' && (v[k] | 0x20) <= 'z')))
			return false;
	return true;
}

/* The template's tokens (a space only between two names, numbers or strings), each replaced name by
 * its value (in parentheses unless it is one term); a keyword argument's keyword and an attribute
 * stay. */
static int subst(struct scan_state *st, const char *t, size_t tn, const struct env *e,
		 struct sbuf *out)
{
	struct lexer lx = { .d = t, .len = tn, .pos = 0, .line = 1, .st = st };
	struct lline ll = { 0 };
	int rc = scan__lex_next(&lx, &ll);
	for (size_t k = 0; rc == 1 && k < ll.n; k++) {
		const struct tok *x = &ll.toks[k];
		const char *s = t + x->off;
		if (k && x->kind != TOK_OP && ll.toks[k - 1].kind != TOK_OP)
			sb_put(out, " ", 1);
		int at = x->kind == TOK_NAME ? env_find(e, s, x->len) : -1;
		if (at >= 0 && ((k > 0 && tok_op(&ll.toks[k - 1], '.')) ||
				(k + 1 < ll.n && tok_op(&ll.toks[k + 1], '='))))
			at = -1;
		if (at >= 0) {
			bool one = one_term(e->b[at].value, e->b[at].value_len);
			sb_put(out, "(", !one);
			sb_put(out, e->b[at].value, e->b[at].value_len);
			sb_put(out, ")", !one);
		} else if (x->kind != TOK_STRING || !fstring_subst(s, x->len, e, out)) {
			sb_put(out, s, x->len);
		}
	}
	free(ll.toks);
	if (rc < 0 || out->nomem)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	return 0;
}

/* One instance of a template as an entry at lines [line0, line1]; *made when it is one. */
static int instantiate(struct scan_state *st, const char *t, size_t tn, const struct env *e,
		       uint32_t line0, uint32_t line1, uint64_t salt, bool *made)
{
	struct sbuf b = { 0 };
	*made = false;
	if (subst(st, t, tn, e, &b))
		return st->err;
	struct lexer lx = { .d = b.p, .len = b.n, .pos = 0, .line = line0, .st = st };
	struct lline ll = { 0 };
	int rc = b.p ? scan__lex_next(&lx, &ll) : 0;
	const char *d = st->d;
	size_t len = st->len, before = st->f->n_opinfos;
	st->d = b.p;
	st->len = b.n;
	size_t close = rc == 1 ? info_call(st, &ll, 0) : 0;
	if (close && close + 1 == ll.n)
		rc = opinfo_at(st, &ll, 0, close);
	else
		rc = rc < 0 ? err_set(ERR_NOMEM, "scan: out of memory for op entries") : 0;
	st->d = d;
	st->len = len;
	free(ll.toks);
	free(b.p);
	if (!rc && st->f->n_opinfos > before) {
		struct scan_opinfo *o = &st->f->opinfos[st->f->n_opinfos - 1];
		o->first_line = line0;
		o->last_line = line1;
		o->hash = scan__mix(o->hash, salt);
		*made = true;
	}
	return rc ? (st->err = rc) : 0;
}

/* ---- the three shapes ---- */

static int push_site(struct scan_state *st, size_t from, size_t to, size_t first)
{
	struct scan_site *s = scan__grow(st->sites, st->n_sites, &st->cap_sites, sizeof(*s));
	if (!s)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	st->sites = s;
	s[st->n_sites++] = (struct scan_site){ from, to, first, st->f->n_opinfos - first };
	return 0;
}

static const char *tok_end(const struct lline *ll, size_t k, const char *d)
{
	return d + ll->toks[k].off + ll->toks[k].len;
}

/* `(XxxInfo(...) for NAME in (LITERAL, ...))` at token i (a bracket): its closing bracket. */
static size_t loop_at(const struct scan_state *st, const struct lline *ll, size_t i,
		      size_t *entry_close)
{
	const struct tok *t = &ll->toks[i];
	if (!(tok_op(t, '(') || tok_op(t, '[')) || t->match <= (int32_t)i)
		return 0;
	size_t m = (size_t)t->match, c = info_call(st, ll, i + 1);
	if (!c || c + 5 >= m || !TOK_IS(st, &ll->toks[c + 1], "for") ||
	    ll->toks[c + 2].kind != TOK_NAME || !TOK_IS(st, &ll->toks[c + 3], "in"))
		return 0;
	const struct tok *it = &ll->toks[c + 4];
	if (!(tok_op(it, '(') || tok_op(it, '[')) || it->match != (int32_t)(m - 1))
		return 0;
	for (size_t k = c + 5; k < m - 1; k++) { /* literals, commas, signs */
		const struct tok *x = &ll->toks[k];
		if (x->kind == TOK_OP && !tok_op(x, ',') && !tok_op(x, '-'))
			return 0;
		if (x->kind == TOK_NAME)
			return 0;
	}
	*entry_close = c;
	return m;
}

static int loop_instances(struct scan_state *st, const struct lline *ll, size_t i, size_t c,
			  size_t m)
{
	const char *t = st->d + ll->toks[i + 1].off;
	size_t tn = (size_t)(tok_end(ll, c, st->d) - t);
	const struct tok *var = &ll->toks[c + 2];
	size_t a = c + 5;
	for (size_t k = c + 5; k <= m - 1; k++) {
		if (k < m - 1 && !tok_op(&ll->toks[k], ','))
			continue;
		if (k > a) {
			struct env e = { 0 };
			const char *v = st->d + ll->toks[a].off;
			env_put(&e, st->d + var->off, var->len, v,
				(size_t)(tok_end(ll, k - 1, st->d) - v));
			bool made;
			if (instantiate(st, t, tn, &e, ll->toks[i].line, ll->toks[m].line, 0,
					&made))
				return st->err;
		}
		a = k + 1;
	}
	return 0;
}

/* The module-level function a name at token i calls, when its body holds templates: its
 * index, else -1. */
static int maker_at(const struct scan_state *st, const struct lline *ll, size_t i)
{
	const struct tok *t = &ll->toks[i];
	if (t->kind != TOK_NAME || !tok_op(&ll->toks[i + 1], '(') ||
	    ll->toks[i + 1].match <= (int32_t)(i + 1) || (i > 0 && tok_op(&ll->toks[i - 1], '.')))
		return -1;
	for (size_t k = st->n_templates; k > 0; k--) {
		const struct scan_function *fn = &st->f->functions[st->templates[k - 1].function];
		if (strlen(fn->name) == t->len && memcmp(fn->name, st->d + t->off, t->len) == 0)
			return st->templates[k - 1].function;
	}
	return -1;
}

static int maker_instances(struct scan_state *st, const struct lline *ll, size_t i, int f,
			   size_t close)
{
	const struct scan_function *fn = &st->f->functions[f];
	struct env e = { 0 };
	const char *val[SITE_ENV_MAX] = { 0 };
	size_t vlen[SITE_ENV_MAX] = { 0 }, pos = 0;
	bool starred = false;
	static _Thread_local size_t starts[SITE_ARGS_MAX], ends[SITE_ARGS_MAX];
	size_t n = scan__split_args(st, ll, i + 1, close, starts, ends, SITE_ARGS_MAX);
	if (n > SITE_ARGS_MAX)
		return 0;
	for (size_t j = 0; j < n; j++) { /* the call's arguments */
		size_t a = starts[j], k = ends[j];
		const struct tok *h = &ll->toks[a];
		const char *end = tok_end(ll, k - 1, st->d);
		if (h->kind == TOK_OP && h->op == '*') {
			starred = true; /* *args, **kwargs: what they bind is not known */
		} else if (k - a >= 3 && h->kind == TOK_NAME && tok_op(&ll->toks[a + 1], '=')) {
			for (size_t p = 0; p < fn->n_params && p < SITE_ENV_MAX; p++)
				if (strlen(fn->params[p].keyword) == h->len &&
				    memcmp(fn->params[p].keyword, st->d + h->off, h->len) == 0) {
					val[p] = st->d + ll->toks[a + 2].off;
					vlen[p] = (size_t)(end - val[p]);
				}
		} else if (!starred && pos < fn->n_params && pos < SITE_ENV_MAX &&
			   fn->params[pos].keyword[0] != '*') {
			val[pos] = st->d + h->off;
			vlen[pos] = (size_t)(end - val[pos]);
			pos++;
		} else {
			starred = true;
		}
	}
	for (size_t p = 0; p < fn->n_params && p < SITE_ENV_MAX; p++) {
		const struct scan_arg *pa = &fn->params[p];
		if (pa->keyword[0] == '*')
			continue;
		if (!val[p] && starred)
			return 0; /* a parameter *args may bind: no instance */
		if (val[p])
			env_put(&e, pa->keyword, strlen(pa->keyword), val[p], vlen[p]);
		else if (pa->text)
			env_put(&e, pa->keyword, strlen(pa->keyword), pa->text, strlen(pa->text));
	}
	for (size_t k = 0; k < st->n_templates; k++) {
		if (st->templates[k].function != f)
			continue;
		bool made;
		if (instantiate(st, st->templates[k].text, strlen(st->templates[k].text), &e,
				ll->toks[i].line, ll->toks[close].line, fn->body_hash, &made))
			return st->err;
	}
	return 0;
}

/* An entry call in the body of function fn: a template when fn is a module-level function
 * and the call names its entry by a literal or by one of fn's parameters. */
static int template_at(struct scan_state *st, const struct lline *ll, size_t i, size_t close,
		       int fn)
{
	const struct scan_function *f = &st->f->functions[fn];
	if (f->parent_function >= 0 || f->class_index >= 0 ||
	    TOK_IS(st, &ll->toks[i], "DecorateInfo"))
		return 0;
	struct entry_args e;
	bool ok = entry_args(st, ll, i, close, &e);
	for (size_t p = 0; !ok && p < f->n_params; p++) { /* XxxInfo(name, ...), name=name */
		const char *pn = f->params[p].keyword;
		size_t pl = strlen(pn);
		const struct tok *a = &ll->toks[i + 2], *b = &ll->toks[i + 3];
		ok = (a->kind == TOK_NAME && a->len == pl && memcmp(st->d + a->off, pn, pl) == 0 &&
		      (tok_op(b, ',') || tok_op(b, ')')));
		for (size_t k = i + 2; !ok && k + 2 < close; k++) {
			const struct tok *x = &ll->toks[k];
			if (x->match > (int32_t)k) {
				k = (size_t)x->match;
				continue;
			}
			ok = TOK_IS(st, x, "name") && tok_op(&ll->toks[k + 1], '=') &&
			     ll->toks[k + 2].kind == TOK_NAME && ll->toks[k + 2].len == pl &&
			     memcmp(st->d + ll->toks[k + 2].off, pn, pl) == 0;
		}
	}
	if (!ok)
		return 0;
	struct scan_template *t =
	    scan__grow(st->templates, st->n_templates, &st->cap_templates, sizeof(*t));
	if (!t)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	st->templates = t;
	const char *s = st->d + ll->toks[i].off;
	t[st->n_templates].function = fn;
	t[st->n_templates].text =
	    scan__strndup(st->arena, s, (size_t)(tok_end(ll, close, st->d) - s));
	if (!t[st->n_templates++].text)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for op entries");
	return 0;
}

int scan__opinfos(struct scan_state *st, const struct lline *ll)
{
	st->n_sites = 0;
	int fn = scan__in_function(st);
	for (size_t i = 0; i + 1 < ll->n; i++) {
		size_t close = info_call(st, ll, i), first = st->f->n_opinfos, c;
		int maker;
		if (fn >= 0) { /* a function's body: templates, no entries */
			if (close && template_at(st, ll, i, close, fn))
				return st->err;
			if (close)
				i = close;
			continue;
		}
		if (close) {
			if (opinfo_at(st, ll, i, close))
				return st->err;
		} else if ((close = loop_at(st, ll, i, &c))) {
			if (loop_instances(st, ll, i, c, close))
				return st->err;
		} else if ((maker = maker_at(st, ll, i)) >= 0) {
			close = (size_t)ll->toks[i + 1].match;
			if (maker_instances(st, ll, i, maker, close))
				return st->err;
		}
		if (st->f->n_opinfos == first)
			continue; /* no entry: look inside (an entry may be an argument of a call)
				   */
		if (push_site(st, i, close, first))
			return st->err;
		i = close; /* an entry inside an entry is its argument, not an entry */
	}
	return 0;
}

const struct scan_site *scan__site(const struct scan_state *st, size_t i)
{
	for (size_t k = 0; k < st->n_sites; k++)
		if (st->sites[k].from == i)
			return &st->sites[k];
	return NULL;
}
