/* The Python scanner's expression helpers: dotted names, string literal values, argument lists,
 * the aten ops of register_* decorators, op database entries (OpInfo(...) and kin), and the
 * names each function body uses, resolved at the end of the file through its imports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

static const char *const keywords[] = {
	"False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
	"class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
	"from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
	"or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",    NULL,
};

bool scan__is_keyword(const char *s, size_t n)
{
	if (n < 2 || n > 8)
		return false;
	for (int i = 0; keywords[i]; i++)
		if (strlen(keywords[i]) == n && memcmp(keywords[i], s, n) == 0)
			return true;
	return false;
}

static bool is_dot(const struct tok *t)
{
	return tok_op(t, '.');
}

const char *scan__dotted(struct scan_state *st, const struct lline *ll, size_t i, size_t *end)
{
	if (i >= ll->n || ll->toks[i].kind != TOK_NAME)
		return NULL;
	size_t j = i, total = ll->toks[i].len;
	while (j + 2 < ll->n && is_dot(&ll->toks[j + 1]) && ll->toks[j + 2].kind == TOK_NAME) {
		j += 2;
		total += 1 + ll->toks[j].len;
	}
	*end = j + 1;
	char *s = scan__alloc(st->arena, total + 1);
	if (!s) {
		st->err = err_set(ERR_NOMEM, "scan: out of memory for a name");
		return NULL;
	}
	size_t p = 0;
	for (size_t k = i; k <= j; k += 2) {
		if (k > i)
			s[p++] = '.';
		memcpy(s + p, st->d + ll->toks[k].off, ll->toks[k].len);
		p += ll->toks[k].len;
	}
	return s;
}

const char *scan__string_value(struct scan_state *st, const struct tok *t)
{
	const char *s = st->d + t->off;
	size_t n = t->len, p = 0;
	bool raw = false;
	while (p < n && s[p] != '\'' && s[p] != '"') {
		char c = (char)(s[p] | 0x20);
		if (c == 'r')
			raw = true;
		else if (c != 'u')
			return NULL; /* bytes, f-strings and t-strings have no plain value */
		p++;
	}
	if (p >= n)
		return NULL;
	char q = s[p];
	size_t ql = (n - p >= 6 && s[p + 1] == q && s[p + 2] == q) ? 3 : 1;
	if (n - p < 2 * ql)
		return NULL; /* unterminated */
	const char *b = s + p + ql;
	size_t bl = n - p - 2 * ql;
	char *out = scan__alloc(st->arena, bl + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t k = 0; k < bl; k++) {
		char c = b[k];
		if (c == '\\' && !raw && k + 1 < bl) {
			char e = b[++k];
			c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
			if (e != 'n' && e != 't' && e != '\\' && e != '\'' && e != '"') {
				out[o++] = '\\';
				c = e;
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

static char *text_of(struct scan_state *st, const struct lline *ll, size_t a, size_t b)
{
	if (b <= a)
		return scan__strndup(st->arena, "", 0);
	const struct tok *x = &ll->toks[a], *y = &ll->toks[b - 1];
	return scan__strndup(st->arena, st->d + x->off, y->off + y->len - x->off);
}

/* Splits (open, close) at commas of depth 0; calls fn for each non-empty [a, b). */
size_t scan__split_args(const struct scan_state *st, const struct lline *ll, size_t open,
			size_t close, size_t *starts, size_t *ends, size_t max)
{
	size_t n = 0, a = open + 1;
	for (size_t k = open + 1; k <= close; k++) {
		const struct tok *t = &ll->toks[k];
		if (k < close && t->match > (int32_t)k && (size_t)t->match < close) {
			k = (size_t)t->match;
			continue;
		}
		if (k < close && t->kind == TOK_NAME && TOK_IS(st, t, "lambda")) {
			/* its parameters' commas are its own: on to the ':' that ends them */
			while (k + 1 < close && !tok_op(&ll->toks[k + 1], ':'))
				k = ll->toks[k + 1].match > (int32_t)(k + 1) &&
					    (size_t)ll->toks[k + 1].match < close
					? (size_t)ll->toks[k + 1].match
					: k + 1;
			continue;
		}
		if (k == close || tok_op(t, ',')) {
			if (k > a) {
				if (n < max) {
					starts[n] = a;
					ends[n] = k;
				}
				n++;
			}
			a = k + 1;
		}
	}
	return n;
}

static int fill_arg(struct scan_state *st, const struct lline *ll, size_t a, size_t b,
		    struct scan_arg *arg)
{
	if (b - a >= 3 && ll->toks[a].kind == TOK_NAME && tok_op(&ll->toks[a + 1], '=')) {
		arg->keyword = scan__strndup(st->arena, st->d + ll->toks[a].off, ll->toks[a].len);
		if (!arg->keyword)
			return ERR_NOMEM;
		a += 2;
	}
	arg->text = text_of(st, ll, a, b);
	if (!arg->text)
		return ERR_NOMEM;
	const struct tok *t = &ll->toks[a];
	size_t end = a;
	if (b - a == 1 && t->kind == TOK_STRING) {
		arg->value = scan__string_value(st, t);
		arg->kind = arg->value ? SCAN_ARG_STRING : SCAN_ARG_OTHER;
	} else if (b - a == 1 && t->kind == TOK_NUMBER) {
		arg->kind = SCAN_ARG_NUMBER;
		arg->value = arg->text;
	} else if (t->kind == TOK_NAME) {
		const char *name = scan__dotted(st, ll, a, &end);
		if (!name)
			return ERR_NOMEM;
		if (end == b) {
			arg->kind = SCAN_ARG_NAME;
			arg->value = name;
		}
	}
	return 0;
}

#define ARGS_MAX 4096 /* arguments kept for one call; more are counted in a warning */

int scan__args(struct scan_state *st, const struct lline *ll, size_t open, size_t close,
	       struct scan_arg **out, size_t *n)
{
	static _Thread_local size_t starts[ARGS_MAX], ends[ARGS_MAX];
	size_t count = scan__split_args(st, ll, open, close, starts, ends, ARGS_MAX);
	if (count > ARGS_MAX) {
		scan__warn(st, ll->toks[open].line, "%zu arguments, only the first %d kept", count,
			   ARGS_MAX);
		count = ARGS_MAX;
	}
	*n = 0;
	*out = NULL;
	if (count == 0)
		return 0;
	struct scan_arg *args = scan__alloc(st->arena, count * sizeof(*args));
	if (!args)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for arguments");
	for (size_t k = 0; k < count; k++)
		if (fill_arg(st, ll, starts[k], ends[k], &args[k]))
			return st->err = err_set(ERR_NOMEM, "scan: out of memory for arguments");
	*out = args;
	*n = count;
	return 0;
}

static int push_reg(struct scan_state *st, const char *op)
{
	const char **r = scan__grow(st->regs, st->n_regs, &st->cap_regs, sizeof(*r));
	if (!r)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for registrations");
	st->regs = r;
	r[st->n_regs++] = op;
	return 0;
}

int scan__registers(struct scan_state *st, const struct lline *ll, size_t open, size_t close)
{
	for (size_t k = open + 1; k < close; k++) {
		if (ll->toks[k].kind != TOK_NAME || is_dot(&ll->toks[k - 1]))
			continue;
		size_t end = k;
		const char *chain = scan__dotted(st, ll, k, &end);
		if (!chain)
			return st->err;
		k = end - 1;
		const char *p = strncmp(chain, "aten.", 5) == 0 ? chain : strstr(chain, ".aten.");
		if (!p)
			continue;
		p = strchr(p + (*p == '.'), '.') + 1; /* after "aten." */
		const char *dot = strchr(p, '.');
		if (dot && strchr(dot + 1, '.'))
			continue; /* aten.x.overload.something: not an op */
		if (push_reg(st, p))
			return st->err;
	}
	return 0;
}

static size_t assign_at(const struct lline *ll);

/* Whether a space must stand between two tokens in canonical text: between two names,
 * numbers or strings (`not in`, `for op in`, `'a' 'b'`), nowhere else. */
static bool canon_space(const struct tok *a, const struct tok *b)
{
	return a->kind != TOK_OP && b->kind != TOK_OP;
}

const char *scan__canon(struct scan_state *st, const struct lline *ll, size_t a, size_t b,
			long first_entry)
{
	size_t n = 1;
	for (size_t i = a; i < b; i++)
		n += ll->toks[i].len + 24;
	for (size_t k = 0; first_entry >= 0 && k < st->n_sites; k++)
		n += 24 * st->sites[k].count;
	char *s = scan__alloc(st->arena, n);
	if (!s) {
		st->err = err_set(ERR_NOMEM, "scan: out of memory for bindings");
		return NULL;
	}
	size_t w = 0;
	const struct tok *prev = NULL;
	for (size_t i = a; i < b; i++) {
		const struct tok *t = &ll->toks[i];
		const struct scan_site *site = first_entry >= 0 ? scan__site(st, i) : NULL;
		if (site && site->to < b) {
			if (site->count == 1) {
				w += (size_t)snprintf(s + w, n - w, "%s@%zu",
						      prev && prev->kind != TOK_OP ? " " : "",
						      site->first);
			} else { /* a loop's or a maker's entries: a tuple of them */
				if (prev && prev->kind != TOK_OP)
					s[w++] = ' ';
				for (size_t k = 0; k < site->count; k++)
					w += (size_t)snprintf(s + w, n - w, "%c@%zu", k ? ',' : '(',
							      site->first + k);
				s[w++] = ')';
			}
			i = site->to;
			prev = &ll->toks[i];
			continue;
		}
		if (prev && canon_space(prev, t))
			s[w++] = ' ';
		memcpy(s + w, st->d + t->off, t->len);
		w += t->len;
		prev = t;
	}
	s[w] = '\0';
	return s;
}

int scan__binding(struct scan_state *st, const struct lline *ll, size_t first_entry)
{
	if (ll->n < 3 || ll->toks[0].kind != TOK_NAME)
		return 0;
	for (size_t k = 0; k < st->n_scopes; k++)
		if (!st->scopes[k].is_class)
			return 0;
	const struct tok *t = &ll->toks[0], *next = &ll->toks[1];
	if (scan__is_keyword(st->d + t->off, t->len))
		return 0;
	size_t eq;
	bool aug = false;
	if (tok_op(next, '='))
		eq = 1;
	else if (tok_op(next, ':'))
		eq = assign_at(ll);
	else if (next->kind == TOK_OP && next->len == 2 && next->op == '+' &&
		 st->d[next->off + 1] == '=')
		eq = 1, aug = true;
	else
		return 0;
	if (eq == 0 || eq + 1 >= ll->n)
		return 0;
	struct scan_binding *bnd =
	    scan__grow(st->f->bindings, st->f->n_bindings, &st->cap_bindings, sizeof(*bnd));
	if (!bnd)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for bindings");
	st->f->bindings = bnd;
	bnd = &bnd[st->f->n_bindings++];
	*bnd = (struct scan_binding){
		.name = scan__strndup(st->arena, st->d + t->off, t->len),
		.class_index = st->n_scopes ? st->scopes[st->n_scopes - 1].index : -1,
		.augmented = aug,
		.value = scan__canon(st, ll, eq + 1, ll->n, (long)first_entry),
		.line = ll->first_line,
	};
	if (!bnd->name || !bnd->value)
		return st->err = st->err ? st->err : err_set(ERR_NOMEM, "scan: out of memory");
	return 0;
}

#define EVERY_FUNCTION INT32_MIN /* push_use: every open function, innermost to outermost */

static int push_one(struct scan_state *st, int function, const char *name)
{
	struct rawuse *u = scan__grow(st->uses, st->n_uses, &st->cap_uses, sizeof(*u));
	if (!u)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for uses");
	st->uses = u;
	u[st->n_uses++] = (struct rawuse){ function, name };
	return 0;
}

static int push_use(struct scan_state *st, int target, const char *name)
{
	if (target != EVERY_FUNCTION)
		return push_one(st, target, name);
	for (size_t k = 0; k < st->n_scopes; k++)
		if (!st->scopes[k].is_class && push_one(st, st->scopes[k].index, name))
			return st->err;
	return 0;
}

static bool skips_name(const struct scan_state *st, const struct tok *prev)
{
	if (prev->kind != TOK_NAME)
		return false;
	return TOK_IS(st, prev, "def") || TOK_IS(st, prev, "class") || TOK_IS(st, prev, "import") ||
	       TOK_IS(st, prev, "from") || TOK_IS(st, prev, "as") || TOK_IS(st, prev, "global") ||
	       TOK_IS(st, prev, "nonlocal");
}

static const char *prefixed(struct scan_state *st, const char *mark, const char *a, const char *dot,
			    const char *b)
{
	size_t lm = strlen(mark), la = strlen(a), ld = dot ? 1 : 0, lb = b ? strlen(b) : 0;
	char *s = scan__alloc(st->arena, lm + la + ld + lb + 1);
	if (!s) {
		st->err = err_set(ERR_NOMEM, "scan: out of memory for uses");
		return NULL;
	}
	memcpy(s, mark, lm);
	memcpy(s + lm, a, la);
	if (dot)
		s[lm + la] = '.';
	if (b)
		memcpy(s + lm + la + ld, b, lb);
	return s;
}

/* The end of the argument that starts at k inside a call closing at `close`. */
static size_t arg_end(const struct lline *ll, size_t k, size_t close)
{
	for (; k < close && !tok_op(&ll->toks[k], ','); k++)
		if (ll->toks[k].match > (int32_t)k)
			k = (size_t)ll->toks[k].match;
	return k;
}

/* Names reached through a computed name, for the call `chain(` at token `open`: getattr, exec,
 * eval, import_module, __import__ (see struct scan_function's uses). */
static int computed_use(struct scan_state *st, const struct lline *ll, const char *chain,
			size_t open, int target)
{
	const char *last = strrchr(chain, '.');
	last = last ? last + 1 : chain;
	size_t close = (size_t)ll->toks[open].match, a = open + 1;
	bool getattr = strcmp(chain, "getattr") == 0;
	bool exec = strcmp(chain, "exec") == 0 || strcmp(chain, "eval") == 0;
	bool import = strcmp(last, "import_module") == 0 || strcmp(chain, "__import__") == 0;
	if ((!getattr && !exec && !import) || a >= close)
		return 0;
	const char *use = "!*";
	size_t e1 = arg_end(ll, a, close);
	if (getattr) {
		size_t end = a, b = e1 + 1, e2 = b < close ? arg_end(ll, b, close) : close;
		const char *obj = scan__dotted(st, ll, a, &end);
		if (!obj || end != e1 || b >= close)
			return st->err;
		bool literal = e2 == b + 1 && ll->toks[b].kind == TOK_STRING;
		const char *v = literal ? scan__string_value(st, &ll->toks[b]) : NULL;
		use = v ? prefixed(st, "", obj, ".", v) : prefixed(st, "!", obj, NULL, NULL);
	} else if (import && e1 == a + 1 && ll->toks[a].kind == TOK_STRING) {
		const char *v = scan__string_value(st, &ll->toks[a]);
		use = v && *v && v[0] != '.' ? prefixed(st, "!=", v, NULL, NULL) : "!*";
	}
	return use ? push_use(st, target, use) : st->err;
}

static int collect(struct scan_state *st, const struct lline *ll, size_t from, size_t to,
		   int target)
{
	for (size_t i = from; i < to; i++) {
		const struct tok *t = &ll->toks[i];
		const struct tok *prev = i > 0 ? &ll->toks[i - 1] : NULL;
		if (i == 0 && ll->n > 2 && tok_op(&ll->toks[ll->n - 1], ':') &&
		    (TOK_IS(st, t, "match") || TOK_IS(st, t, "case")) &&
		    !tok_op(&ll->toks[1], '=') && !tok_op(&ll->toks[1], '.'))
			continue; /* the soft keywords of a match statement */
		if (t->kind == TOK_NAME && !(prev && is_dot(prev)) &&
		    !scan__is_keyword(st->d + t->off, t->len) && !(prev && skips_name(st, prev))) {
			size_t end = i;
			const char *chain = scan__dotted(st, ll, i, &end);
			if (!chain)
				return st->err;
			bool kwarg = end < to && tok_op(&ll->toks[end], '=') && prev &&
				     (tok_op(prev, '(') || tok_op(prev, ','));
			if (!kwarg && push_use(st, target, chain))
				return st->err;
			if (end < to && tok_op(&ll->toks[end], '(') &&
			    ll->toks[end].match > (int32_t)end &&
			    computed_use(st, ll, chain, end, target))
				return st->err;
			i = end - 1;
		} else if (is_dot(t) && prev && i + 1 < to && ll->toks[i + 1].kind == TOK_NAME &&
			   (prev->kind == TOK_STRING || tok_op(prev, ')') || tok_op(prev, ']') ||
			    tok_op(prev, '}'))) {
			size_t end = i + 1;
			while (end + 2 <= to && end + 1 < to && is_dot(&ll->toks[end + 1]) &&
			       end + 2 < to && ll->toks[end + 2].kind == TOK_NAME)
				end += 2;
			const struct tok *last = &ll->toks[end];
			char *m = scan__alloc(st->arena, last->len + 2);
			if (!m)
				return st->err = err_set(ERR_NOMEM, "scan: out of memory for uses");
			m[0] = '.';
			memcpy(m + 1, st->d + last->off, last->len);
			if (push_use(st, target, m))
				return st->err;
			i = end;
		}
	}
	return 0;
}

int scan__collect_uses(struct scan_state *st, const struct lline *ll, size_t from, size_t to)
{
	bool any = false;
	for (size_t k = 0; k < st->n_scopes; k++)
		any |= !st->scopes[k].is_class;
	return any ? collect(st, ll, from, to, EVERY_FUNCTION) : 0;
}

int scan__collect_uses_of(struct scan_state *st, const struct lline *ll, size_t from, size_t to,
			  int function)
{
	return collect(st, ll, from, to, function);
}

/* ---- globals ---- */

static int global_find(const struct scan_state *st, const char *s, size_t n, int cls)
{
	for (size_t g = st->f->n_globals; g > 0; g--) {
		const struct scan_global *x = &st->f->globals[g - 1];
		if (x->class_index == cls && strlen(x->name) == n && memcmp(x->name, s, n) == 0)
			return (int)g - 1;
	}
	return -1;
}

static int global_add(struct scan_state *st, const struct tok *t, int cls, uint32_t line)
{
	struct scan_global *g =
	    scan__grow(st->f->globals, st->f->n_globals, &st->cap_globals, sizeof(*g));
	if (!g)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for globals");
	st->f->globals = g;
	g = &g[st->f->n_globals++];
	memset(g, 0, sizeof(*g));
	g->name = scan__strndup(st->arena, st->d + t->off, t->len);
	g->class_index = cls;
	g->line = line;
	if (!g->name)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for globals");
	return (int)st->f->n_globals - 1;
}

/* `+=`, `|=`, `**=`, `>>=`... but not `==`, `<=`, `>=`, `!=`. */
static bool aug_assign(const struct scan_state *st, const struct tok *t)
{
	if (t->kind != TOK_OP || t->len < 2 || st->d[t->off + t->len - 1] != '=')
		return false;
	return t->len == 3 || !strchr("=<>!", t->op);
}

/* The first plain '=' at bracket depth 0 after token 1 (an annotated assignment's), or 0. */
static size_t assign_at(const struct lline *ll)
{
	for (size_t k = 1; k < ll->n; k++) {
		const struct tok *t = &ll->toks[k];
		if (t->match > (int32_t)k)
			k = (size_t)t->match;
		else if (tok_op(t, '='))
			return k;
	}
	return 0;
}

int scan__global_line(struct scan_state *st, const struct lline *ll)
{
	if (ll->n < 3 || ll->toks[0].kind != TOK_NAME)
		return 0;
	int cls = -1;
	for (size_t k = 0; k < st->n_scopes; k++)
		if (!st->scopes[k].is_class)
			return 0; /* inside a function: its uses are the function's */
	if (st->n_scopes)
		cls = st->scopes[st->n_scopes - 1].index;
	const struct tok *t = &ll->toks[0], *next = &ll->toks[1];
	if (scan__is_keyword(st->d + t->off, t->len))
		return 0;
	int g = global_find(st, st->d + t->off, t->len, cls);
	size_t from = 0;
	if (tok_op(next, '=') || tok_op(next, ':') || aug_assign(st, next)) {
		size_t eq = tok_op(next, ':') ? assign_at(ll) : 1;
		if (eq == 0)
			return 0; /* `NAME: T` binds nothing */
		from = eq + 1;
		if (g < 0 && (g = global_add(st, t, cls, ll->first_line)) < 0)
			return st->err;
	} else if (g < 0 || !(tok_op(next, '.') || tok_op(next, '['))) {
		return 0;
	}
	return collect(st, ll, from, ll->n, -1 - g);
}
