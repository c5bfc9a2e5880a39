/* The Python scanner's statement layer: one logical line at a time, it closes the def and class
 * scopes that the line's indentation ends, records decorators, defs, classes, imports and the
 * module-level instantiate_*_tests calls, feeds the line's hash to the open functions (or to the
 * module hash) and hands the tokens of function bodies to the use collector. */
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

static int in_function(const struct scan_state *st)
{
	for (size_t k = st->n_scopes; k > 0; k--)
		if (!st->scopes[k - 1].is_class)
			return st->scopes[k - 1].index;
	return -1;
}

static void close_scope(struct scan_state *st)
{
	struct scope *sc = &st->scopes[--st->n_scopes];
	if (sc->is_class) {
		st->f->classes[sc->index].last_line = st->prev_last_line;
	} else {
		struct scan_function *fn = &st->f->functions[sc->index];
		fn->last_line = st->prev_last_line;
		fn->body_hash = sc->hash;
	}
}

void scan__close_all(struct scan_state *st)
{
	while (st->n_scopes > 0)
		close_scope(st);
}

/* A hash of tokens [from, to) of a logical line: each token's bytes, and between two tokens
 * either the exact spaces of the line or, where a line ends (brackets, a backslash), a newline
 * and the next line's indentation; comments and trailing whitespace are left out. Line ends
 * inside strings count as one '\n' whatever their bytes. */
static uint64_t line_hash(const struct scan_state *st, const struct lline *ll, size_t from,
			  size_t to)
{
	uint64_t h = SCAN_HASH_INIT;
	for (size_t i = from; i < to; i++) {
		const struct tok *t = &ll->toks[i];
		if (i > from) {
			size_t a = ll->toks[i - 1].off + ll->toks[i - 1].len, b = t->off;
			size_t nl = a;
			bool newline = false;
			for (size_t p = a; p < b; p++)
				if (st->d[p] == '\n' || st->d[p] == '\r') {
					newline = true;
					nl = p + 1;
				}
			if (newline)
				h = scan__hash_bytes(scan__hash_bytes(h, "\n", 1), st->d + nl,
						     b - nl);
			else
				h = scan__hash_bytes(h, st->d + a, b - a);
		}
		if (t->kind == TOK_STRING) {
			for (size_t p = t->off; p < (size_t)t->off + t->len; p++) {
				char c = st->d[p];
				if (c == '\r') {
					c = '\n';
					if (p + 1 < (size_t)t->off + t->len && st->d[p + 1] == '\n')
						p++;
				}
				h = scan__hash_bytes(h, &c, 1);
			}
		} else {
			h = scan__hash_bytes(h, st->d + t->off, t->len);
		}
	}
	return h;
}

/* Feeds a line's hash to every open function, or to the module when none is open and `module`
 * says the line belongs to it (decorators and def lines do not). */
static void hash_line(struct scan_state *st, uint64_t lh, uint32_t indent, bool module)
{
	bool any = false;
	for (size_t k = 0; k < st->n_scopes; k++) {
		struct scope *sc = &st->scopes[k];
		if (sc->is_class)
			continue;
		sc->hash = scan__mix(sc->hash, scan__mix(lh, (uint64_t)(indent - sc->indent)));
		any = true;
	}
	if (!any && module) {
		st->module_hash = scan__mix(st->module_hash, scan__mix(lh, indent));
		st->module_lines++;
	}
}

static const char *qualname(struct scan_state *st, const char *name)
{
	if (st->n_scopes == 0)
		return name;
	const struct scope *sc = &st->scopes[st->n_scopes - 1];
	const char *outer = sc->is_class ? st->f->classes[sc->index].qualname
					 : st->f->functions[sc->index].qualname;
	size_t a = strlen(outer), b = strlen(name);
	char *q = scan__alloc(st->arena, a + b + 2);
	if (!q)
		return NULL;
	memcpy(q, outer, a);
	q[a] = '.';
	memcpy(q + a + 1, name, b);
	return q;
}

/* The first ':' at bracket depth 0 in [from, to) that ends a header (not a lambda's), or to. */
static size_t header_colon(const struct scan_state *st, const struct lline *ll, size_t from,
			   size_t to)
{
	int lambdas = 0;
	for (size_t k = from; k < to; k++) {
		const struct tok *t = &ll->toks[k];
		if (t->match > (int32_t)k) {
			k = (size_t)t->match;
			continue;
		}
		if (t->kind == TOK_NAME && TOK_IS(st, t, "lambda"))
			lambdas++;
		else if (tok_op(t, ':')) {
			if (lambdas == 0)
				return k;
			lambdas--;
		}
	}
	return to;
}

static int push_scope(struct scan_state *st, int is_class, int index, uint32_t indent,
		      uint64_t hash, uint32_t line)
{
	if (st->n_scopes >= SCAN_SCOPE_DEPTH_MAX) {
		scan__warn(st, line, "def and class nested deeper than %d", SCAN_SCOPE_DEPTH_MAX);
		return 0;
	}
	st->scopes[st->n_scopes++] = (struct scope){ is_class, index, indent, hash };
	return 0;
}

static struct scan_decorator *take_pending(struct scan_state *st, size_t *n)
{
	*n = st->n_pending;
	if (st->n_pending == 0)
		return NULL;
	struct scan_decorator *d = scan__alloc(st->arena, st->n_pending * sizeof(*d));
	if (d)
		memcpy(d, st->pending, st->n_pending * sizeof(*d));
	st->n_pending = 0;
	return d;
}

static const char **take_registers(struct scan_state *st, size_t *n)
{
	*n = st->n_regs;
	if (st->n_regs == 0)
		return NULL;
	const char **r = scan__alloc(st->arena, st->n_regs * sizeof(*r));
	if (r)
		memcpy(r, st->regs, st->n_regs * sizeof(*r));
	st->n_regs = 0;
	return r;
}

/* A decorator's dotted name is a use of the function it decorates: running the test runs it. */
static int decorator_uses(struct scan_state *st, const struct scan_function *fn, int idx)
{
	for (size_t k = 0; k < fn->n_decorators; k++) {
		const char *n = fn->decorators[k].name;
		bool dotted = n && *n && n[0] != '.';
		for (const char *p = n; dotted && *p; p++)
			dotted = *p == '.' || *p == '_' || (*p >= 'a' && *p <= 'z') ||
				 (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
				 (unsigned char)*p >= 0x80;
		struct rawuse *u =
		    dotted ? scan__grow(st->uses, st->n_uses, &st->cap_uses, sizeof(*u)) : NULL;
		if (dotted && !u)
			return st->err = err_set(ERR_NOMEM, "scan: out of memory for uses");
		if (dotted) {
			st->uses = u;
			u[st->n_uses++] = (struct rawuse){ idx, n };
		}
	}
	return 0;
}

static int def_header(struct scan_state *st, struct lline *ll, size_t i, bool is_async, uint64_t lh)
{
	const struct tok *name = &ll->toks[i + 1];
	size_t colon = header_colon(st, ll, i + 2, ll->n);
	if (colon == ll->n)
		scan__warn(st, ll->first_line, "def without ':'");
	/* the header (defaults, annotations) belongs to the enclosing functions' bodies */
	if (scan__collect_uses(st, ll, 0, colon))
		return st->err;
	hash_line(st, lh, ll->indent, false);

	struct scan_function *fns =
	    scan__grow(st->f->functions, st->f->n_functions, &st->cap_functions, sizeof(*fns));
	if (!fns)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for functions");
	st->f->functions = fns;
	int idx = (int)st->f->n_functions;
	struct scan_function *fn = &fns[st->f->n_functions++];
	memset(fn, 0, sizeof(*fn));
	fn->name = scan__strndup(st->arena, st->d + name->off, name->len);
	fn->qualname = fn->name ? qualname(st, fn->name) : NULL;
	fn->class_index = -1;
	if (st->n_scopes > 0 && st->scopes[st->n_scopes - 1].is_class)
		fn->class_index = st->scopes[st->n_scopes - 1].index;
	fn->parent_function = in_function(st);
	fn->is_async = is_async;
	fn->first_line = ll->first_line;
	fn->last_line = ll->last_line;
	fn->deco_line = st->n_pending ? st->pending_line : ll->first_line;
	fn->decorators = take_pending(st, &fn->n_decorators);
	fn->registers = take_registers(st, &fn->n_registers);
	if (!fn->qualname || (fn->n_decorators && !fn->decorators) ||
	    (fn->n_registers && !fn->registers))
		return st->err = err_set(ERR_NOMEM, "scan: out of memory");
	uint64_t h = scan__mix(st->pending_hash, lh);
	st->pending_hash = SCAN_HASH_INIT;
	fn->body_hash = h;
	if (decorator_uses(st, fn, idx))
		return st->err;
	push_scope(st, 0, idx, ll->indent, h, ll->first_line);
	if (colon + 1 < ll->n)
		return scan__collect_uses(st, ll, colon + 1, ll->n);
	return 0;
}

static int class_header(struct scan_state *st, struct lline *ll, size_t i, uint64_t lh)
{
	const struct tok *name = &ll->toks[i + 1];
	size_t colon = header_colon(st, ll, i + 2, ll->n);
	if (colon == ll->n)
		scan__warn(st, ll->first_line, "class without ':'");
	if (scan__collect_uses(st, ll, 0, ll->n))
		return st->err;
	if (in_function(st) < 0 && st->n_pending)
		st->module_hash = scan__mix(st->module_hash, st->pending_hash);
	st->pending_hash = SCAN_HASH_INIT;
	hash_line(st, lh, ll->indent, true);

	struct scan_class *cls =
	    scan__grow(st->f->classes, st->f->n_classes, &st->cap_classes, sizeof(*cls));
	if (!cls)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for classes");
	st->f->classes = cls;
	int idx = (int)st->f->n_classes;
	struct scan_class *c = &cls[st->f->n_classes++];
	memset(c, 0, sizeof(*c));
	c->name = scan__strndup(st->arena, st->d + name->off, name->len);
	c->qualname = c->name ? qualname(st, c->name) : NULL;
	c->parent_class = -1;
	if (st->n_scopes > 0 && st->scopes[st->n_scopes - 1].is_class)
		c->parent_class = st->scopes[st->n_scopes - 1].index;
	c->parent_function = in_function(st);
	c->first_line = ll->first_line;
	c->last_line = ll->last_line;
	c->deco_line = st->n_pending ? st->pending_line : ll->first_line;
	c->decorators = take_pending(st, &c->n_decorators);
	size_t nregs;
	(void)take_registers(st, &nregs);
	if (!c->qualname || (c->n_decorators && !c->decorators))
		return st->err = err_set(ERR_NOMEM, "scan: out of memory");
	size_t k = i + 2;
	if (k < colon && tok_op(&ll->toks[k], '[') && ll->toks[k].match > 0)
		k = (size_t)ll->toks[k].match + 1; /* class C[T](Base): type parameters */
	if (k < colon && tok_op(&ll->toks[k], '(') && ll->toks[k].match > (int32_t)k &&
	    scan__args(st, ll, k, (size_t)ll->toks[k].match, &c->bases, &c->n_bases))
		return st->err;
	return push_scope(st, 1, idx, ll->indent, 0, ll->first_line);
}

/* True when tokens [k, n) of the line are trailers only: `.name`, `(...)`, `[...]`. A decorator
 * is named after the dotted name it starts with only then (`@a.b(c)[0]`, not `@x if y else z`
 * nor `@a + b`, whose name is their whole text). */
static bool trailers_only(const struct lline *ll, size_t k)
{
	while (k < ll->n) {
		const struct tok *t = &ll->toks[k];
		if ((tok_op(t, '(') || tok_op(t, '[')) && t->match > (int32_t)k)
			k = (size_t)t->match + 1;
		else if (tok_op(t, '.') && k + 1 < ll->n && ll->toks[k + 1].kind == TOK_NAME)
			k += 2;
		else
			return false;
	}
	return true;
}

/* `@expr`: kept until the def or class it decorates. */
static int decorator(struct scan_state *st, struct lline *ll, uint64_t lh)
{
	if (scan__collect_uses(st, ll, 0, ll->n))
		return st->err;
	hash_line(st, lh, ll->indent, false);
	if (ll->n < 2) {
		scan__warn(st, ll->first_line, "'@' without a decorator");
		return 0;
	}
	struct scan_decorator *p =
	    scan__grow(st->pending, st->n_pending, &st->cap_pending, sizeof(*p));
	if (!p)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for decorators");
	st->pending = p;
	if (st->n_pending == 0) {
		st->pending_line = ll->first_line;
		st->pending_hash = SCAN_HASH_INIT;
	}
	st->pending_hash = scan__mix(st->pending_hash, lh);
	struct scan_decorator *d = &p[st->n_pending++];
	memset(d, 0, sizeof(*d));
	d->line = ll->first_line;
	const struct tok *last = &ll->toks[ll->n - 1];
	d->text = scan__strndup(st->arena, st->d + ll->toks[1].off,
				last->off + last->len - ll->toks[1].off);
	size_t end = 1;
	d->name = scan__dotted(st, ll, 1, &end);
	if (!d->name && st->err)
		return st->err;
	if (!d->name || !trailers_only(ll, end))
		d->name = d->text;
	if (end < ll->n && tok_op(&ll->toks[end], '(') && ll->toks[end].match > (int32_t)end) {
		size_t close = (size_t)ll->toks[end].match;
		d->called = true;
		if (close > end + 1) {
			const struct tok *a = &ll->toks[end + 1];
			const struct tok *b = &ll->toks[close - 1];
			d->args =
			    scan__strndup(st->arena, st->d + a->off, b->off + b->len - a->off);
		} else {
			d->args = scan__strndup(st->arena, "", 0);
		}
		if (!d->args || scan__args(st, ll, end, close, &d->argv, &d->argc))
			return st->err =
				   st->err ? st->err : err_set(ERR_NOMEM, "scan: out of memory");
		const char *last_name = strrchr(d->name, '.');
		last_name = last_name ? last_name + 1 : d->name;
		if (strstr(last_name, "register") && scan__registers(st, ll, end, close))
			return st->err;
	}
	if (!d->text)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory");
	return 0;
}

int scan__statement(struct scan_state *st, struct lline *ll)
{
	while (st->n_scopes > 0 && st->scopes[st->n_scopes - 1].indent >= ll->indent)
		close_scope(st);
	uint64_t lh = line_hash(st, ll, 0, ll->n);
	const struct tok *t0 = &ll->toks[0];
	int rc = 0;
	if (tok_op(t0, '@')) {
		rc = decorator(st, ll, lh);
	} else {
		size_t i = 0;
		bool is_async = false;
		if (ll->n > 2 && TOK_IS(st, t0, "async") && TOK_IS(st, &ll->toks[1], "def")) {
			i = 1;
			is_async = true;
		}
		const struct tok *kw = &ll->toks[i];
		bool named = i + 1 < ll->n && ll->toks[i + 1].kind == TOK_NAME;
		if (kw->kind == TOK_NAME && TOK_IS(st, kw, "def") && named) {
			rc = def_header(st, ll, i, is_async, lh);
		} else if (kw->kind == TOK_NAME && TOK_IS(st, kw, "class") && named) {
			rc = class_header(st, ll, i, lh);
		} else {
			if (st->n_pending) {
				scan__warn(st, st->pending_line,
					   "decorator not followed by def or class");
				st->n_pending = 0;
				st->n_regs = 0;
				if (in_function(st) < 0)
					st->module_hash =
					    scan__mix(st->module_hash, st->pending_hash);
				st->pending_hash = SCAN_HASH_INIT;
			}
			hash_line(st, lh, ll->indent, true);
			rc = scan__collect_uses(st, ll, 0, ll->n);
			if (!rc)
				rc = scan__simple(st, ll, in_function(st));
			if (!rc && in_function(st) < 0)
				rc = scan__global_line(st, ll);
		}
	}
	st->prev_last_line = ll->last_line;
	return rc ? rc : scan__opinfos(st, ll);
}
