/* The Python scanner's names: import statements (absolute, relative, aliased, star) with the
 * local name each binds, module-level assignments that alias a dotted name (`aten =
 * torch.ops.aten`), the module-level instantiate_*_tests calls, and at the end of the file the
 * resolution of every function's raw uses through those names. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

static char *join(struct scan_state *st, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = scan__alloc(st->arena, la + lb + 2);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	size_t p = la;
	if (la && lb)
		s[p++] = '.';
	memcpy(s + p, b, lb);
	return s;
}

/* The absolute module of a relative import with `level` dots and `rest`, or NULL to keep it
 * relative (no module path, or more dots than packages). */
static const char *resolve_relative(struct scan_state *st, int level, const char *rest,
				    uint32_t line)
{
	if (!st->module_path)
		return NULL;
	size_t n = strlen(st->module_path);
	int drop = level - (st->is_package ? 1 : 0);
	while (drop > 0) {
		const char *dot = NULL;
		for (size_t k = n; k > 0 && !dot; k--)
			if (st->module_path[k - 1] == '.')
				dot = st->module_path + k - 1;
		if (!dot) {
			if (drop == 1 && n > 0) {
				n = 0;
				drop = 0;
				break;
			}
			scan__warn(st, line, "relative import beyond the top-level package");
			return NULL;
		}
		n = (size_t)(dot - st->module_path);
		drop--;
	}
	char *base = scan__strndup(st->arena, st->module_path, n);
	return base ? join(st, base, rest) : NULL;
}

static int add_import(struct scan_state *st, const char *module, const char *name,
		      const char *local, const char *target, int level, int function, uint32_t line)
{
	struct scan_import *im =
	    scan__grow(st->f->imports, st->f->n_imports, &st->cap_imports, sizeof(*im));
	if (!im)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for imports");
	st->f->imports = im;
	im[st->f->n_imports++] =
	    (struct scan_import){ module, name, local, target, level, function, line };
	if (!module || !local || !target)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for imports");
	return 0;
}

static const char *tok_str(struct scan_state *st, const struct tok *t)
{
	return scan__strndup(st->arena, st->d + t->off, t->len);
}

/* `import a.b.c, d as e` over tokens [a, b). */
static int plain_import(struct scan_state *st, const struct lline *ll, size_t a, size_t b,
			int function)
{
	size_t i = a + 1;
	while (i < b) {
		size_t end = i;
		const char *mod = scan__dotted(st, ll, i, &end);
		if (!mod || end > b) {
			if (!st->err)
				scan__warn(st, ll->toks[i].line, "cannot parse import");
			return st->err;
		}
		const char *local, *target;
		if (end + 1 < b && TOK_IS(st, &ll->toks[end], "as") &&
		    ll->toks[end + 1].kind == TOK_NAME) {
			local = tok_str(st, &ll->toks[end + 1]);
			target = mod;
			end += 2;
		} else {
			const char *dot = strchr(mod, '.');
			local = dot ? scan__strndup(st->arena, mod, (size_t)(dot - mod)) : mod;
			target = local;
		}
		if (add_import(st, mod, NULL, local, target, 0, function, ll->toks[i].line))
			return st->err;
		i = end;
		if (i < b && !tok_op(&ll->toks[i], ',')) {
			scan__warn(st, ll->toks[i].line, "cannot parse import");
			return 0;
		}
		i++;
	}
	return 0;
}

/* `from ..a.b import (c as d, e)` over tokens [a, b). */
static int from_import(struct scan_state *st, const struct lline *ll, size_t a, size_t b,
		       int function)
{
	size_t i = a + 1;
	int level = 0;
	uint32_t line = ll->toks[a].line;
	for (; i < b && ll->toks[i].kind == TOK_OP && (ll->toks[i].op == '.'); i++)
		level += (int)ll->toks[i].len; /* '.' or '...' */
	const char *rest = "";
	if (i < b && ll->toks[i].kind == TOK_NAME && !TOK_IS(st, &ll->toks[i], "import")) {
		size_t end = i;
		rest = scan__dotted(st, ll, i, &end);
		if (!rest)
			return st->err;
		i = end;
	}
	if (i >= b || !TOK_IS(st, &ll->toks[i], "import")) {
		scan__warn(st, line, "cannot parse from-import");
		return 0;
	}
	const char *module = rest;
	if (level > 0) {
		module = resolve_relative(st, level, rest, line);
		if (!module && !st->err) {
			char *rel = scan__alloc(st->arena, (size_t)level + strlen(rest) + 1);
			if (!rel)
				return st->err = err_set(ERR_NOMEM, "scan: out of memory");
			memset(rel, '.', (size_t)level);
			memcpy(rel + level, rest, strlen(rest));
			module = rel;
		}
	}
	for (i++; i < b; i++) {
		const struct tok *t = &ll->toks[i];
		if (tok_op(t, '(') || tok_op(t, ')') || tok_op(t, ','))
			continue;
		if (tok_op(t, '*')) {
			if (add_import(st, module, "*", "*", module, level, function, t->line))
				return st->err;
			continue;
		}
		if (t->kind != TOK_NAME) {
			scan__warn(st, t->line, "cannot parse from-import");
			return 0;
		}
		const char *name = tok_str(st, t), *local = name;
		if (i + 2 < b && TOK_IS(st, &ll->toks[i + 1], "as") &&
		    ll->toks[i + 2].kind == TOK_NAME) {
			local = tok_str(st, &ll->toks[i + 2]);
			i += 2;
		}
		const char *target = name && module ? join(st, module, name) : NULL;
		if (add_import(st, module, name, local, target, level, function, t->line))
			return st->err;
	}
	return 0;
}

static int add_assign(struct scan_state *st, const char *local, const char *target)
{
	struct alias *a = scan__grow(st->assigns, st->n_assigns, &st->cap_assigns, sizeof(*a));
	if (!a)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for assignments");
	st->assigns = a;
	a[st->n_assigns++] = (struct alias){ local, target };
	return local ? 0 : (st->err = err_set(ERR_NOMEM, "scan: out of memory"));
}

static int instantiate(struct scan_state *st, const struct lline *ll, size_t a, size_t b)
{
	size_t end = a;
	const char *name = scan__dotted(st, ll, a, &end);
	if (!name)
		return st->err;
	const char *last = strrchr(name, '.');
	last = last ? last + 1 : name;
	enum scan_instantiate_kind kind;
	if (strcmp(last, "instantiate_device_type_tests") == 0)
		kind = SCAN_INSTANTIATE_DEVICE_TYPE;
	else if (strcmp(last, "instantiate_parametrized_tests") == 0)
		kind = SCAN_INSTANTIATE_PARAMETRIZED;
	else
		return 0;
	if (end >= b || !tok_op(&ll->toks[end], '(') || ll->toks[end].match < (int32_t)end)
		return 0;
	struct scan_instantiate *in =
	    scan__grow(st->f->instantiates, st->f->n_instantiates, &st->cap_inst, sizeof(*in));
	if (!in)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory");
	st->f->instantiates = in;
	in = &in[st->f->n_instantiates++];
	memset(in, 0, sizeof(*in));
	in->kind = kind;
	in->line = ll->toks[a].line;
	if (scan__args(st, ll, end, (size_t)ll->toks[end].match, &in->argv, &in->argc))
		return st->err;
	/* The class: the first positional argument, or the keyword PyTorch's signatures name it
	 * by (instantiate_device_type_tests(generic_test_class=...),
	 * instantiate_parametrized_tests(generic_cls=...)). */
	in->class_name = "";
	for (size_t i = 0; i < in->argc; i++) {
		const struct scan_arg *arg = &in->argv[i];
		if (!arg->keyword || strcmp(arg->keyword, "generic_test_class") == 0 ||
		    strcmp(arg->keyword, "generic_cls") == 0) {
			in->class_name = arg->text;
			break;
		}
	}
	return 0;
}

/* One simple statement [a, b), after any inline compound headers were stripped. */
static int simple_one(struct scan_state *st, const struct lline *ll, size_t a, size_t b,
		      int function)
{
	static const char *const headers[] = { "if",  "elif",   "else",    "for",   "while", "with",
					       "try", "except", "finally", "async", NULL };
	for (int guard = 0; a < b && guard < 8; guard++) {
		const struct tok *t = &ll->toks[a];
		bool header = false;
		for (int k = 0; t->kind == TOK_NAME && headers[k]; k++)
			header |= tok_is(st, t, headers[k], strlen(headers[k]));
		if (!header)
			break;
		size_t k = a;
		for (; k < b && !tok_op(&ll->toks[k], ':'); k++)
			if (ll->toks[k].match > (int32_t)k)
				k = (size_t)ll->toks[k].match;
		a = k + 1;
	}
	if (a >= b)
		return 0;
	const struct tok *t = &ll->toks[a];
	if (t->kind != TOK_NAME)
		return 0;
	if (TOK_IS(st, t, "import"))
		return plain_import(st, ll, a, b, function);
	if (TOK_IS(st, t, "from") && b - a >= 3)
		return from_import(st, ll, a, b, function);
	bool module_level = st->n_scopes == 0;
	if (!module_level)
		return 0;
	if (b - a >= 2 && (tok_op(&ll->toks[a + 1], '=') || tok_op(&ll->toks[a + 1], ':'))) {
		size_t end = a + 2;
		const char *target = NULL;
		if (tok_op(&ll->toks[a + 1], '=') && a + 2 < b) {
			target = scan__dotted(st, ll, a + 2, &end);
			if (st->err)
				return st->err;
			if (end != b)
				target = NULL;
		}
		return add_assign(st, tok_str(st, t), target);
	}
	return instantiate(st, ll, a, b);
}

int scan__simple(struct scan_state *st, const struct lline *ll, int function)
{
	size_t a = 0;
	for (size_t k = 0; k <= ll->n; k++) {
		if (k < ll->n && ll->toks[k].match > (int32_t)k) {
			k = (size_t)ll->toks[k].match;
			continue;
		}
		if (k == ll->n || tok_op(&ll->toks[k], ';')) {
			if (k > a && simple_one(st, ll, a, k, function))
				return st->err;
			a = k + 1;
		}
	}
	return 0;
}

/* ---- resolution ---- */

struct map {
	struct alias *slots;
	size_t cap; /* power of two */
};

static uint64_t str_hash(const char *s, size_t n)
{
	return scan__mix(scan__hash_bytes(SCAN_HASH_INIT, s, n), n);
}

static struct alias *map_find(const struct map *m, const char *s, size_t n)
{
	size_t i = str_hash(s, n) & (m->cap - 1);
	for (;; i = (i + 1) & (m->cap - 1)) {
		struct alias *a = &m->slots[i];
		if (!a->local || (strlen(a->local) == n && memcmp(a->local, s, n) == 0))
			return a;
	}
}

static void map_put(struct map *m, const char *local, const char *target)
{
	struct alias *a = map_find(m, local, strlen(local));
	a->local = local;
	a->target = target;
}

/* The resolved form of one raw use, or NULL to drop it. */
static const char *resolve(struct scan_state *st, const struct map *m, const char *raw)
{
	if (raw[0] == '.' || strcmp(raw, "!*") == 0)
		return raw;
	if (raw[0] == '!') { /* a computed name under what the rest names */
		const char *r = raw[1] == '=' ? raw + 2 : resolve(st, m, raw + 1);
		if (!r || r[0] == '.' || r == raw + 1)
			return NULL;  /* under no import: a local object, nothing of torch */
		size_t n = strlen(r); /* raw[1] == '=': a literal module, absolute */
		char *s = scan__alloc(st->arena, n + 2);
		if (s) {
			s[0] = '!';
			memcpy(s + 1, r, n);
		}
		return s;
	}
	const char *dot = strchr(raw, '.');
	size_t rootlen = dot ? (size_t)(dot - raw) : strlen(raw);
	const struct alias *a = map_find(m, raw, rootlen);
	if (a->local) {
		if (!a->target)
			return raw;
		return dot ? join(st, a->target, dot + 1) : a->target;
	}
	if (!dot)
		return NULL;
	return strrchr(raw, '.');
}

static int by_use(const void *x, const void *y)
{
	const struct rawuse *a = x, *b = y;
	if (a->function != b->function)
		return a->function < b->function ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int build_map(struct scan_state *st, struct map *m)
{
	size_t want =
	    16 + 2 * (st->f->n_imports + st->n_assigns + st->f->n_functions + st->f->n_classes);
	m->cap = 16;
	while (m->cap < want)
		m->cap *= 2;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots)
		return st->err = err_set(ERR_NOMEM, "scan: out of memory for names");
	for (size_t k = 0; k < st->f->n_functions; k++) {
		const struct scan_function *fn = &st->f->functions[k];
		if (fn->parent_function < 0 && fn->class_index < 0)
			map_put(m, fn->name, NULL);
	}
	for (size_t k = 0; k < st->f->n_classes; k++) {
		const struct scan_class *c = &st->f->classes[k];
		if (c->parent_function < 0 && c->parent_class < 0)
			map_put(m, c->name, NULL);
	}
	for (size_t k = 0; k < st->f->n_imports; k++) {
		const struct scan_import *im = &st->f->imports[k];
		if (strcmp(im->local, "*") != 0)
			map_put(m, im->local, im->target);
	}
	for (size_t k = 0; k < st->n_assigns; k++) {
		const char *t = st->assigns[k].target;
		if (t) {
			t = resolve(st, m, t);
			if (t && t[0] == '.')
				t = st->assigns[k].target;
		}
		if (!t && map_find(m, st->assigns[k].local, strlen(st->assigns[k].local))->local)
			continue; /* `F = something()` after `import ... as F`: keep the import */
		map_put(m, st->assigns[k].local, t);
	}
	return 0;
}

int scan__resolve_uses(struct scan_state *st)
{
	struct map m;
	if (build_map(st, &m))
		return st->err;
	size_t n = 0;
	for (size_t k = 0; k < st->n_uses; k++) {
		const char *r = resolve(st, &m, st->uses[k].name);
		if (r)
			st->uses[n++] = (struct rawuse){ st->uses[k].function, r };
	}
	free(m.slots);
	if (n > 0)
		qsort(st->uses, n, sizeof(*st->uses), by_use);
	size_t k = 0;
	while (k < n) {
		size_t e = k, distinct = 0;
		while (e < n && st->uses[e].function == st->uses[k].function) {
			if (e == k || strcmp(st->uses[e].name, st->uses[e - 1].name) != 0)
				distinct++;
			e++;
		}
		int who = st->uses[k].function;
		const char ***uses;
		size_t *n_uses;
		if (who >= 0) {
			uses = &st->f->functions[who].uses;
			n_uses = &st->f->functions[who].n_uses;
		} else if (who > SCAN_USE_OPINFO) {
			uses = &st->f->globals[-1 - who].uses;
			n_uses = &st->f->globals[-1 - who].n_uses;
		} else {
			uses = &st->f->opinfos[SCAN_USE_OPINFO - 1 - who].uses;
			n_uses = &st->f->opinfos[SCAN_USE_OPINFO - 1 - who].n_uses;
		}
		*uses = scan__alloc(st->arena, distinct * sizeof(**uses));
		if (!*uses)
			return st->err = err_set(ERR_NOMEM, "scan: out of memory for uses");
		for (size_t j = k; j < e; j++)
			if (j == k || strcmp(st->uses[j].name, st->uses[j - 1].name) != 0)
				(*uses)[(*n_uses)++] = st->uses[j].name;
		k = e;
	}
	return 0;
}
