/* The variants of a catalog test, named the way PyTorch's instantiation names them, as far as
 * the decorators' text says statically:
 *  - @parametrize("n", [v, ...]) / @parametrize_test: `n_v` per value (common_utils'
 *    default subtest name: str(v) with '.' as '_'; a dtype is its name, None is `n<index>`);
 *    for "a,b" and tuples, `a_x_b_y`; subtest(v, name="s") is `s`; name_fn=lambda a: f"..."
 *    is evaluated over literal values; another name_fn or a value that is not a literal
 *    leaves the list open;
 *  - @ops(["add", "sub"]) (literal names): `add`, `sub`; @ops over the op database (op_db,
 *    its families, comprehensions and filter(lambda ...) over them): each selected entry's
 *    formatted_name, from the catalog's op database (catalog_opvariants.c), over-approximated
 *    where the list is not statically evaluable (`approx`, `why`);
 *  - @modules: open (module_db is not read);
 *  - @dtypes(torch.float32, ...): the dtype suffixes, kept apart in `dtypes`.
 * Several decorators multiply their suffixes. The names carry no device or dtype suffix. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"

#define VARIANT_VALUES_MAX 256
#define VARIANT_NAME_MAX   512

struct vlist {
	char *v[SELECTOR_VARIANTS_MAX];
	size_t n;
};

static void vlist_free(struct vlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
}

/* Splits the text inside a list or tuple at its top-level commas: the items' spans. */
static size_t split_items(const char *s, size_t n, const char **item, size_t *len, size_t cap)
{
	size_t k = 0, start = 0;
	int depth = 0;
	char quote = 0;
	for (size_t i = 0; i <= n && k < cap; i++) {
		char c = i < n ? s[i] : ',';
		if (quote) {
			quote = c == quote ? 0 : quote;
			continue;
		}
		if (c == '"' || c == '\'')
			quote = c;
		else if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == ',' && depth == 0) {
			size_t a = start, b = i;
			while (a < b && isspace((unsigned char)s[a]))
				a++;
			while (b > a && isspace((unsigned char)s[b - 1]))
				b--;
			if (b > a) {
				item[k] = s + a;
				len[k++] = b - a;
			}
			start = i + 1;
		}
	}
	return k;
}

/* The str() of a literal, with '.' as '_' (0 when not a plain literal). */
static int literal_text(const char *s, size_t n, char *out, size_t size)
{
	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		s++;
		n -= 2;
	} else {
		for (size_t i = 0; i < n; i++)
			if (!(isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '-' ||
			      s[i] == '_'))
				return 0;
	}
	if (n + 1 > size)
		return 0;
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] == '.' ? '_' : s[i];
	out[n] = '\0';
	return 1;
}

/* One value of a parametrize list, for argument names names[0..nn): its suffix. */
static int value_name(const char *s, size_t n, char names[][64], size_t nn, size_t idx, char *out,
		      size_t size)
{
	if (n > 8 && strncmp(s, "subtest(", 8) == 0) {
		const char *k = NULL;
		for (size_t i = 0; i + 5 < n && !k; i++)
			if (strncmp(s + i, "name=", 5) == 0)
				k = s + i + 5;
		if (!k)
			return 0; /* subtest without a name: named from its value, not handled */
		size_t rest = (size_t)(s + n - k), e = 1;
		while (e < rest && k[e] != k[0])
			e++;
		return e < rest && literal_text(k, e + 1, out, size);
	}
	const char *items[16];
	size_t lens[16], ni = 1;
	items[0] = s;
	lens[0] = n;
	if (nn > 1) {
		if (n < 2 || s[0] != '(' || s[n - 1] != ')')
			return 0;
		ni = split_items(s + 1, n - 2, items, lens, 16);
		if (ni != nn)
			return 0;
	}
	size_t used = 0;
	for (size_t i = 0; i < ni; i++) {
		char v[VARIANT_NAME_MAX];
		int w;
		if (lens[i] == 4 && memcmp(items[i], "None", 4) == 0) /* neither str nor number */
			w = snprintf(out + used, size - used, "%s%s%zu", i ? "_" : "", names[i],
				     idx);
		else if (lens[i] > 6 && memcmp(items[i], "torch.", 6) == 0 &&
			 literal_text(items[i] + 6, lens[i] - 6, v, sizeof v))
			w = snprintf(out + used, size - used, "%s%s", i ? "_" : "",
				     v); /* a dtype */
		else if (!literal_text(items[i], lens[i], v, sizeof v))
			return 0;
		else
			w = snprintf(out + used, size - used, "%s%s_%s", i ? "_" : "", names[i], v);
		if (w < 0 || (size_t)w >= size - used)
			return 0;
		used += (size_t)w;
	}
	return 1;
}

/* str() of a literal for a name_fn: a string's text, a bare word or integer as written. */
static int str_of(const char *s, size_t n, const char **out, size_t *len)
{
	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		*out = s + 1;
		*len = n - 2;
		return memchr(s + 1, '\\', n - 2) == NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (s[i] == '-' && i == 0)))
			return 0; /* floats and expressions: their str() is not the text */
	*out = s;
	*len = n;
	return n > 0;
}

/* name_fn=lambda a, b: f"...{a}...{b}..." applied to one value (a tuple for several names). */
static int lambda_name(const char *fn, const char *v, size_t vn, size_t nn, char *out, size_t size)
{
	if (strncmp(fn, "lambda", 6) != 0 || !isspace((unsigned char)fn[6]))
		return 0;
	const char *colon = strchr(fn, ':');
	if (!colon)
		return 0;
	const char *params[16], *vals[16];
	size_t plen[16], vlen[16];
	size_t np = split_items(fn + 6, (size_t)(colon - fn - 6), params, plen, 16);
	const char *items[16];
	size_t lens[16], ni = 1;
	items[0] = v;
	lens[0] = vn;
	if (nn > 1) {
		if (vn < 2 || v[0] != '(' || v[vn - 1] != ')')
			return 0;
		ni = split_items(v + 1, vn - 2, items, lens, 16);
	}
	if (np != ni)
		return 0;
	for (size_t i = 0; i < ni; i++)
		if (!str_of(items[i], lens[i], &vals[i], &vlen[i]))
			return 0;
	const char *b = colon + 1;
	while (isspace((unsigned char)*b))
		b++;
	size_t bl = strlen(b);
	while (bl && isspace((unsigned char)b[bl - 1]))
		bl--;
	if (bl < 3 || b[0] != 'f' || (b[1] != '"' && b[1] != '\'') || b[bl - 1] != b[1])
		return 0;
	size_t o = 0;
	for (size_t i = 2; i + 1 < bl; i++) {
		const char *piece = b + i;
		size_t pl = 1;
		if ((b[i] == '{' || b[i] == '}') && b[i + 1] == b[i]) {
			i++;
		} else if (b[i] == '{') {
			const char *e = memchr(b + i, '}', bl - i);
			size_t k = 0;
			while (e && k < np &&
			       !((size_t)(e - b - i - 1) == plen[k] &&
				 memcmp(b + i + 1, params[k], plen[k]) == 0))
				k++;
			if (!e || k == np)
				return 0; /* an expression, not a parameter */
			piece = vals[k];
			pl = vlen[k];
			i = (size_t)(e - b);
		} else if (b[i] == '}' || b[i] == '\\') {
			return 0;
		}
		if (o + pl + 1 > size)
			return 0;
		memcpy(out + o, piece, pl);
		o += pl;
	}
	out[o] = '\0';
	return o > 0;
}

/* The suffixes one @parametrize decorator gives, or 0 when not static. */
static int parametrize_suffixes(const struct scan_decorator *d, struct vlist *out)
{
	if (d->argc < 2 || d->argv[0].kind != SCAN_ARG_STRING)
		return 0;
	const char *name_fn = NULL;
	for (size_t i = 2; i < d->argc; i++)
		if (d->argv[i].keyword && strcmp(d->argv[i].keyword, "name_fn") == 0)
			name_fn = d->argv[i].text;
	char names[16][64];
	const char *items[16];
	size_t lens[16];
	const char *an = d->argv[0].value;
	size_t nn = split_items(an, strlen(an), items, lens, 16);
	if (nn == 0)
		return 0; /* no argument names: nothing to name the values by */
	for (size_t i = 0; i < nn; i++) {
		if (lens[i] >= 64)
			return 0;
		memcpy(names[i], items[i], lens[i]);
		names[i][lens[i]] = '\0';
	}
	const char *t = d->argv[1].text;
	size_t tl = t ? strlen(t) : 0;
	if (tl < 2 || (t[0] != '[' && t[0] != '(') || (t[tl - 1] != ']' && t[tl - 1] != ')'))
		return 0;
	const char *vals[VARIANT_VALUES_MAX];
	size_t vlens[VARIANT_VALUES_MAX];
	size_t nv = split_items(t + 1, tl - 2, vals, vlens, VARIANT_VALUES_MAX);
	for (size_t i = 0; i < nv && out->n < SELECTOR_VARIANTS_MAX; i++) {
		char name[VARIANT_NAME_MAX];
		bool sub = vlens[i] > 8 && strncmp(vals[i], "subtest(", 8) == 0;
		if (!(name_fn && !sub
			  ? lambda_name(name_fn, vals[i], vlens[i], nn, name, sizeof name)
			  : value_name(vals[i], vlens[i], names, nn, i, name, sizeof name)))
			return 0;
		if (!(out->v[out->n] = strdup(name)))
			return err_set(ERR_NOMEM, "variants");
		out->n++;
	}
	return 1;
}

/* The suffixes of an @ops list: literal names as written, else the op database's entries it
 * selects (2 when over-approximated, `why` set), 0 when not resolvable. */
static int ops_suffixes(const struct catalog *cat, const struct catalog_file *file, int cls,
			const struct scan_decorator *d, struct vlist *out, char **why)
{
	const char *t = d->argc ? d->argv[0].text : NULL;
	size_t tl = t ? strlen(t) : 0;
	if (!tl)
		return 0;
	const char *vals[VARIANT_VALUES_MAX];
	size_t vlens[VARIANT_VALUES_MAX];
	size_t nv = tl >= 2 && t[0] == '[' && t[tl - 1] == ']'
			? split_items(t + 1, tl - 2, vals, vlens, VARIANT_VALUES_MAX)
			: 0;
	bool literal = nv > 0;
	for (size_t i = 0; i < nv; i++)
		literal &= vals[i][0] == '"' || vals[i][0] == '\'';
	for (size_t i = 0; literal && i < nv && out->n < SELECTOR_VARIANTS_MAX; i++) {
		char name[VARIANT_NAME_MAX];
		if (!literal_text(vals[i], vlens[i], name, sizeof name))
			return 0;
		if (!(out->v[out->n] = strdup(name)))
			return err_set(ERR_NOMEM, "variants");
		out->n++;
	}
	if (literal)
		return 1;
	char **names;
	size_t n;
	int ok = catalog__op_variants(cat, file, cls, t, &names, &n, why);
	for (size_t i = 0; ok > 0 && i < n; i++) {
		if (out->n < SELECTOR_VARIANTS_MAX)
			out->v[out->n++] = names[i];
		else
			free(names[i]);
	}
	if (ok > 0)
		free(names);
	return ok;
}

/* The dtype names of @dtypes(torch.float32, ...): "float32". Anything but plain `torch.<name>`
 * arguments (`*floating_types()`, a variable) leaves the list empty: not statically known. */
static int dtype_names(const struct scan_decorator *d, struct catalog_variants *out)
{
	for (size_t i = 0; i < d->argc; i++) {
		const char *a = d->argv[i].text;
		bool plain = a && !d->argv[i].keyword && strncmp(a, "torch.", 6) == 0 && a[6];
		for (const char *p = a ? a + 6 : NULL; plain && *p; p++)
			plain = isalnum((unsigned char)*p) || *p == '_';
		if (!plain || out->n_dtypes == CATALOG_DTYPES_MAX) {
			for (size_t k = 0; k < out->n_dtypes; k++)
				free(out->dtypes[k]);
			out->n_dtypes = 0;
			return 0;
		}
		if (!(out->dtypes[out->n_dtypes] = strdup(a + 6)))
			return err_set(ERR_NOMEM, "variants");
		out->n_dtypes++;
	}
	return 0;
}

/* acc := acc x add (each name of acc followed by '_' and each of add). */
static int cross(struct vlist *acc, struct vlist *add)
{
	if (!acc->n) {
		*acc = *add;
		add->n = 0;
		return 0;
	}
	struct vlist r = { .n = 0 };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < acc->n; i++)
		for (size_t j = 0; rc == 0 && j < add->n && r.n < SELECTOR_VARIANTS_MAX; j++) {
			size_t n = strlen(acc->v[i]) + strlen(add->v[j]) + 2;
			if (!(r.v[r.n] = malloc(n)))
				rc = err_set(ERR_NOMEM, "variants");
			else
				snprintf(r.v[r.n++], n, "%s_%s", acc->v[i], add->v[j]);
		}
	vlist_free(acc);
	vlist_free(add);
	*acc = r;
	return rc;
}

static const char *last_name(const char *dotted)
{
	const char *p = strrchr(dotted, '.');
	return p ? p + 1 : dotted;
}

int selector_catalog_variants(struct catalog_variants *out, const struct catalog *cat,
			      const struct catalog_test *t)
{
	memset(out, 0, sizeof *out);
	const struct catalog_file *f = &cat->files[t->file];
	if (!f->blob || !f->blob->scan || t->function < 0)
		return 0;
	const struct scan_function *fn = &f->blob->scan->functions[t->function];
	struct vlist *acc = calloc(2, sizeof *acc), *one = acc ? acc + 1 : NULL;
	if (!acc)
		return err_set(ERR_NOMEM, "variants");
	int rc = 0;
	bool any = false, empty = false;
	/* Stacked decorators compose outermost first: test_bar_x_0_y_a for @parametrize("x")
	 * above @parametrize("y") (common_utils' documentation of parametrize). */
	for (size_t k = 0; rc == 0 && k < fn->n_decorators; k++) {
		const struct scan_decorator *d = &fn->decorators[k];
		const char *name = last_name(d->name), *why = NULL;
		char *owned = NULL; /* a reason made for this list (catalog__op_variants) */
		int ok;
		if (strcmp(name, "parametrize") == 0 || strcmp(name, "parametrize_test") == 0) {
			ok = parametrize_suffixes(d, one);
			why = "@parametrize with a name_fn or values that are not literals";
		} else if (catalog__ops_decorator(f->blob->scan, d, NULL)) {
			ok = ops_suffixes(cat, f, fn->class_index, d, one, &owned);
			why = ok == 0 ? "@ops over an op list that is not statically known" : owned;
		} else if (strcmp(name, "modules") == 0) {
			ok = 0;
			why = "@modules over the module database: resolved at run time";
		} else if (strcmp(name, "dtypes") == 0) {
			rc = dtype_names(d, out);
			continue;
		} else {
			continue;
		}
		any = true;
		if (ok < 0) {
			rc = ok;
		} else if (ok == 0) {
			vlist_free(one);
			out->open = true;
			out->why = why;
		} else {
			if (ok == 2 && !out->approx) {
				out->approx = true;
				out->why = why;
				if (why == owned) {
					out->why_owned_ = owned;
					owned = NULL;
				}
			}
			empty |= one->n == 0;
			rc = cross(acc, one);
		}
		free(owned);
	}
	if (empty)
		vlist_free(acc);
	if (rc == 0 && any && !out->open) {
		out->names = (char **)calloc(acc->n + 1, sizeof *out->names);
		if (!out->names)
			rc = err_set(ERR_NOMEM, "variants");
		for (size_t i = 0; rc == 0 && i < acc->n; i++) {
			out->names[i] = acc->v[i];
			acc->v[i] = NULL;
		}
		out->n = rc == 0 ? acc->n : 0;
		acc->n = 0;
	}
	vlist_free(acc);
	vlist_free(one);
	free(acc);
	return rc;
}

void selector_catalog_variants_finish(struct catalog_variants *v)
{
	for (size_t i = 0; v && i < v->n; i++)
		free(v->names[i]);
	for (size_t i = 0; v && i < v->n_dtypes; i++)
		free(v->dtypes[i]);
	if (v) {
		free(v->names);
		free(v->why_owned_);
	}
}
