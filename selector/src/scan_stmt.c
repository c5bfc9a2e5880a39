/* The Python scanner's statement layer: one logical line at a time, it closes the def and class
 * scopes that the line's indentation ends, records decorators, defs, classes, imports and the
 * module-level instantiate_*_tests calls, feeds the line's hash to the open functions (or to the
 * module hash) and hands the tokens of function bodies to the use collector. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

int scan__in_function(const struct scan_state *st)
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
		st->f->classes[sc->index].body_hash = sc->hash;
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

/* One token into a hash: its bytes, line ends inside a string as one '\n' whatever their
 * bytes. */
static uint64_t tok_hash(const struct scan_state *st, uint64_t h, const struct tok *t)
{
	if (t->kind != TOK_STRING)
		return scan__hash_bytes(h, st->d + t->off, t->len);
	for (size_t p = t->off; p < (size_t)t->off + t->len; p++) {
		char c = st->d[p];
		if (c == '\r') {
			c = '\n';
			if (p + 1 < (size_t)t->off + t->len && st->d[p + 1] == '\n')
				p++;
		}
		h = scan__hash_bytes(h, &c, 1);
	}
	return h;
}

uint64_t scan__tokens_hash(const struct scan_state *st, const struct lline *ll, size_t from,
			   size_t to)
{
	uint64_t h = SCAN_HASH_INIT;
	for (size_t i = from; i < to; i++)
		h = tok_hash(st, scan__hash_bytes(h, "\x1f", 1), &ll->toks[i]);
	return h;
}

/* The same for a module-level line, without the sites of op database entries it holds (and
 * the comma after each, scan__opinfos): an entry is compared by its own hash, and the list
 * around it does not change when an entry is edited, added or removed. */
static uint64_t module_line_hash(const struct scan_state *st, const struct lline *ll)
{
	uint64_t h = SCAN_HASH_INIT;
	for (size_t i = 0; i < ll->n; i++) {
		const struct scan_site *site = scan__site(st, i);
		if (site) {
			size_t close = site->to;
			i = close;
			if (i + 1 < ll->n && tok_op(&ll->toks[i + 1], ','))
				i++;
			continue;
		}
		h = tok_hash(st, scan__hash_bytes(h, "\x1f", 1), &ll->toks[i]);
	}
	return h;
}

/* The block depth of a line of indentation `indent` (1 at the top level): hashes mix depths, not
 * columns, so that indenting by 2 or by 4 is the same program. */
static uint32_t block_depth(struct scan_state *st, uint32_t indent)
{
	while (st->n_blocks > 0 && st->blocks[st->n_blocks - 1] > indent)
		st->n_blocks--;
	if ((st->n_blocks == 0 || st->blocks[st->n_blocks - 1] < indent) &&
	    st->n_blocks < SCAN_BLOCK_DEPTH_MAX)
		st->blocks[st->n_blocks++] = indent;
	return (uint32_t)st->n_blocks;
}

/* Feeds a line's hash to every open function, to the innermost scope when it is a class and
 * `to_class` (its own statements; decorators and def lines of its methods are the methods'),
 * and to the module when no def or class is open and `module` says the line belongs to it
 * (decorators and def lines do not; a class's own statements are the class's hash). */
static void hash_line(struct scan_state *st, uint64_t lh, uint32_t depth, bool module,
		      bool to_class)
{
	for (size_t k = 0; k < st->n_scopes; k++) {
		struct scope *sc = &st->scopes[k];
		if (sc->is_class && (!to_class || k + 1 != st->n_scopes))
			continue;
		sc->hash = scan__mix(sc->hash, scan__mix(lh, (uint64_t)(depth - sc->depth)));
	}
	if (st->n_scopes == 0 && module) {
		st->module_hash = scan__mix(st->module_hash, scan__mix(lh, depth));
		st->module_lines++;
	}
}

/* A statement made of string literals only, first in a def's, a class's or the module's body:
 * the docstring, which no hash counts. */
static bool is_docstring(const struct scan_state *st, const struct lline *ll, uint32_t depth)
{
	for (size_t i = 0; i < ll->n; i++)
		if (ll->toks[i].kind != TOK_STRING)
			return false;
	if (st->n_scopes == 0)
		return st->module_first && depth == 1;
	const struct scope *sc = &st->scopes[st->n_scopes - 1];
	return sc->first && depth == sc->depth + 1;
}

/* A statement was seen: it is no longer the first of its body. */
static void seen_statement(struct scan_state *st)
{
	if (st->n_scopes)
		st->scopes[st->n_scopes - 1].first = false;
	else
		st->module_first = false;
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
	st->scopes[st->n_scopes++] =
	    (struct scope){ is_class, index, indent, st->line_depth, hash, true };
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

/* The parameters of the def whose '(' is token `open`: names (with their stars) and the
 * canonical text of their defaults. */
static int def_params(struct scan_state *st, const struct lline *ll, size_t open,
		      struct scan_function *fn)
{
	if (open >= ll->n || !tok_op(&ll->toks[open], '(') || ll->toks[open].match <= (int32_t)open)
		return 0;
	size_t close = (size_t)ll->toks[open].match, a = open + 1, n = 0;
	struct scan_arg tmp[64];
	for (size_t k = open + 1; k <= close && n < 64; k++) {
		const struct tok *t = &ll->toks[k];
		if (k < close && t->match > (int32_t)k && (size_t)t->match < close) {
			k = (size_t)t->match;
			continue;
		}
		if (k != close && !tok_op(t, ','))
			continue;
		size_t p = a, stars = 0;
		while (p < k && ll->toks[p].kind == TOK_OP && ll->toks[p].op == '*')
			stars += ll->toks[p++].len;
		if (p < k && ll->toks[p].kind == TOK_NAME) {
			size_t eq = p + 1;
			while (eq < k && !tok_op(&ll->toks[eq], '='))
				eq = ll->toks[eq].match > (int32_t)eq
					 ? (size_t)ll->toks[eq].match + 1
					 : eq + 1;
			char name[128];
			snprintf(name, sizeof(name), "%.*s%.*s", (int)(stars < 3 ? stars : 2), "**",
				 (int)ll->toks[p].len, st->d + ll->toks[p].off);
			tmp[n] = (struct scan_arg){
				.keyword = scan__strndup(st->arena, name, strlen(name)),
				.text = eq + 1 < k ? scan__canon(st, ll, eq + 1, k, -1) : NULL,
			};
			if (!tmp[n].keyword || (eq + 1 < k && !tmp[n].text))
				return st->err =
					   st->err ? st->err : err_set(ERR_NOMEM, "scan: params");
			n++;
		}
		a = k + 1;
	}
	if (!n)
		return 0;
	fn->params = scan__alloc(st->arena, n * sizeof(*fn->params));
	if (!fn->params)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for parameters");
	memcpy(fn->params, tmp, n * sizeof(*tmp));
	fn->n_params = n;
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
	hash_line(st, lh, st->line_depth, false, false);

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
	fn->parent_function = scan__in_function(st);
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
	if (decorator_uses(st, fn, idx) || def_params(st, ll, i + 2, fn))
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
	/* the decorators and the class line start the class's own hash; an enclosing function's
	 * body holds them too, the module's hash does not (the class has its own) */
	uint64_t own = scan__mix(st->pending_hash, lh);
	st->pending_hash = SCAN_HASH_INIT;
	hash_line(st, lh, st->line_depth, false, false);

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
	c->parent_function = scan__in_function(st);
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
	return push_scope(st, 1, idx, ll->indent, own, ll->first_line);
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
	hash_line(st, lh, st->line_depth, false, false);
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

/* Whether token t names an assertRaises of unittest or pytest (`self.assertRaisesRegex`,
 * `pytest.raises`). */
static bool raises_name(const struct scan_state *st, const struct tok *t)
{
	return t->kind == TOK_NAME &&
	       ((t->len >= 12 && memcmp(st->d + t->off, "assertRaises", 12) == 0) ||
		TOK_IS(st, t, "raises"));
}

/* Whether `op` at token i runs the entry's op: a call of it, of one of its variants
 * (`op.method_variant(...)`, `op.get_op()`), or op handed on whole (to a helper, a name); not
 * a look at its data (`op.sample_inputs(...)`, `op.name`, `op.dtypes`). */
static bool runs_op(const struct scan_state *st, const struct lline *ll, size_t i)
{
	static const char *const variants[] = {
		"op",       "method_variant",   "inplace_variant",
		"get_op",   "get_method",       "get_inplace",
		"__call__", "operator_variant", "inplace_operator_variant"
	};
	if (i + 2 >= ll->n || !tok_op(&ll->toks[i + 1], '.'))
		return true;
	const struct tok *a = &ll->toks[i + 2];
	for (size_t k = 0; k < sizeof variants / sizeof *variants; k++)
		if (a->len == strlen(variants[k]) && !memcmp(st->d + a->off, variants[k], a->len))
			return true;
	return false;
}

/* A statement of a function's body that runs `op` (runs_op): counted for every open function, as
 * raising when it is a `with` block's header expecting an error (its block is, too), a
 * `self.assertRaises...(...)` call, or inside such a block. */
static void op_statement(struct scan_state *st, const struct lline *ll)
{
	bool named = false, with_raises = false;
	for (size_t i = 0; i < ll->n; i++) {
		const struct tok *t = &ll->toks[i];
		if (raises_name(st, t) && TOK_IS(st, &ll->toks[0], "with"))
			with_raises = true;
		if (t->kind == TOK_NAME && TOK_IS(st, t, "op") &&
		    !(i > 0 && tok_op(&ll->toks[i - 1], '.')) &&
		    !(i + 1 < ll->n && tok_op(&ll->toks[i + 1], '=')))
			named |= runs_op(st, ll, i);
	}
	if (with_raises && st->n_raises < SCAN_BLOCK_DEPTH_MAX)
		st->raises[st->n_raises++] = ll->indent;
	if (!named)
		return;
	bool raising = with_raises || st->n_raises > (size_t)with_raises ||
		       (ll->n > 2 && TOK_IS(st, &ll->toks[0], "self") &&
			tok_op(&ll->toks[1], '.') && raises_name(st, &ll->toks[2]));
	for (size_t k = 0; k < st->n_scopes; k++) {
		if (st->scopes[k].is_class)
			continue;
		struct scan_function *fn = &st->f->functions[st->scopes[k].index];
		fn->op_statements++;
		fn->op_raising += raising;
	}
}

/* In a function's own body: an __init__'s `super().__init__(...)` and `return NAME` of one of
 * its nested functions (struct scan_function). */
static int function_facts(struct scan_state *st, const struct lline *ll)
{
	if (scan__in_function(st) >= 0)
		op_statement(st, ll);
	if (st->n_scopes == 0 || st->scopes[st->n_scopes - 1].is_class || ll->n < 2)
		return 0;
	int fi = st->scopes[st->n_scopes - 1].index;
	struct scan_function *fn = &st->f->functions[fi];
	const struct tok *t = ll->toks;
	if (ll->n == 2 && TOK_IS(st, &t[0], "return") && t[1].kind == TOK_NAME) {
		for (size_t k = (size_t)fi + 1; k < st->f->n_functions; k++) {
			const struct scan_function *g = &st->f->functions[k];
			if (g->parent_function == fi && strlen(g->name) == t[1].len &&
			    memcmp(g->name, st->d + t[1].off, t[1].len) == 0)
				fn->returns_function = true;
		}
		return 0;
	}
	if (strcmp(fn->name, "__init__") != 0 || !TOK_IS(st, &t[0], "super") ||
	    !tok_op(&t[1], '(') || t[1].match < 1)
		return 0;
	size_t m = (size_t)t[1].match;
	if (m + 3 >= ll->n || !tok_op(&t[m + 1], '.') || !TOK_IS(st, &t[m + 2], "__init__") ||
	    !tok_op(&t[m + 3], '(') || t[m + 3].match <= (int32_t)(m + 3))
		return 0;
	return scan__args(st, ll, m + 3, (size_t)t[m + 3].match, &fn->super_args,
			  &fn->n_super_args);
}

int scan__statement(struct scan_state *st, struct lline *ll)
{
	while (st->n_scopes > 0 && st->scopes[st->n_scopes - 1].indent >= ll->indent)
		close_scope(st);
	st->line_depth = block_depth(st, ll->indent);
	while (st->n_raises > 0 && st->raises[st->n_raises - 1] >= ll->indent)
		st->n_raises--;
	size_t first_entry = st->f->n_opinfos;
	if (scan__opinfos(st, ll))
		return st->err;
	uint64_t lh = scan__in_function(st) < 0 ? module_line_hash(st, ll)
						: scan__tokens_hash(st, ll, 0, ll->n);
	bool docstring = is_docstring(st, ll, st->line_depth);
	seen_statement(st);
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
				if (scan__in_function(st) < 0)
					st->module_hash =
					    scan__mix(st->module_hash, st->pending_hash);
				st->pending_hash = SCAN_HASH_INIT;
			}
			if (!docstring)
				hash_line(st, lh, st->line_depth, true, true);
			rc = scan__collect_uses(st, ll, 0, ll->n);
			if (!rc)
				rc = scan__simple(st, ll, scan__in_function(st));
			if (!rc && scan__in_function(st) < 0)
				rc = scan__global_line(st, ll);
			if (!rc)
				rc = function_facts(st, ll);
		}
	}
	st->prev_last_line = ll->last_line;
	return rc ? rc : scan__binding(st, ll, first_entry);
}
