/* What PyTorch's test itself does with an op, read from source text: the DecorateInfos of an op
 * database entry's skips= and decorators= that apply to one test (unittest.skip,
 * unittest.expectedFailure, toleranceOverride, precisionOverride), and a test's own
 * toleranceOverride / precisionOverride decorators. Text that is not one of these shapes (a
 * name bound elsewhere, `unary_skips + (...)`, a device-only decorator) is passed over: the
 * test then keeps PyTorch's defaults, never a skip it does not have. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "scan_internal.h"
#include "testspecs/cases.h"
#include "testspecs/spec.h"

#define ITEMS_MAX 256 /* DecorateInfos of one entry's list; more are passed over */

struct span {
	const char *s;
	size_t n;
};

static struct span trim(struct span x)
{
	while (x.n && isspace((unsigned char)x.s[0]))
		x.s++, x.n--;
	while (x.n && isspace((unsigned char)x.s[x.n - 1]))
		x.n--;
	return x;
}

/* A copy of source text with its comments blanked (outside strings, '#' to the line's end),
 * so that items split cleanly; NULL when out of memory. */
static char *uncommented(const char *t)
{
	char *c = strdup(t);
	for (char *p = c; p && *p; p++) {
		if (*p == '\'' || *p == '"') {
			char q = *p;
			for (p++; *p && *p != q; p++)
				p += p[0] == '\\' && p[1];
			if (!*p)
				break;
		} else if (*p == '#') {
			while (*p && *p != '\n')
				*p++ = ' ';
			if (!*p)
				break;
		}
	}
	return c;
}

/* The position of the first top-level `sep` in x (outside brackets and strings), or x.n. */
static size_t find_top(struct span x, char sep)
{
	int depth = 0;
	for (size_t i = 0; i < x.n; i++) {
		char c = x.s[i];
		if (c == '\'' || c == '"') {
			for (i++; i < x.n && x.s[i] != c; i++)
				i += x.s[i] == '\\';
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == sep && depth == 0)
			return i;
	}
	return x.n;
}

/* Splits x at top-level commas (an empty last item, a trailing comma, dropped). */
static size_t split_top(struct span x, struct span *out, size_t cap)
{
	size_t n = 0;
	while (x.n && n < cap) {
		size_t k = find_top(x, ',');
		struct span item = trim((struct span){ x.s, k });
		if (item.n)
			out[n++] = item;
		if (k >= x.n)
			break;
		x.s += k + 1;
		x.n -= k + 1;
	}
	return n;
}

/* Whether x is a call `name(...)` (name compared by its last dotted component), with the text
 * between its outer parentheses in *inner. */
static bool call_of(struct span x, const char *name, struct span *inner)
{
	size_t open = 0;
	while (open < x.n && x.s[open] != '(')
		open++;
	if (open == x.n || x.s[x.n - 1] != ')')
		return false;
	struct span callee = trim((struct span){ x.s, open });
	size_t ln = strlen(name);
	if (callee.n < ln || memcmp(callee.s + callee.n - ln, name, ln) != 0 ||
	    (callee.n > ln && callee.s[callee.n - ln - 1] != '.'))
		return false;
	struct span rest = { x.s + open + 1, x.n - open - 2 };
	if (find_top(rest, ')') != rest.n) /* `f(a)(b)`: not one call */
		return false;
	*inner = rest;
	return true;
}

/* Whether x is the name `name`, or a dotted name ending in it. */
static bool name_is(struct span x, const char *name)
{
	size_t ln = strlen(name);
	return x.n >= ln && memcmp(x.s + x.n - ln, name, ln) == 0 &&
	       (x.n == ln || x.s[x.n - ln - 1] == '.');
}

/* A string literal's value into buf; false for anything else (None included). */
static bool string_of(struct span x, char *buf, size_t size)
{
	if (x.n < 2 || (x.s[0] != '\'' && x.s[0] != '"') || x.s[x.n - 1] != x.s[0])
		return false;
	snprintf(buf, size, "%.*s", (int)(x.n - 2), x.s + 1);
	return true;
}

/* The dtypes a torch dtype expression names (`torch.half`, `(torch.float16, torch.bfloat16)`,
 * `floating_types()`) as bits 1u << enum spec_dtype; 0 when not evaluable. */
static uint32_t dtype_mask(struct span x)
{
	struct arena ar = { 0 };
	const char *names = NULL;
	uint32_t m = 0;
	if (scan__dtypes_eval(&ar, x.s, x.n, &names) == 0 && names) {
		for (const char *p = names; *p;) {
			size_t k = strcspn(p, ",");
			char one[32];
			enum spec_dtype d;
			snprintf(one, sizeof one, "%.*s", (int)k, p);
			if (testspecs_dtype_parse(one, false, &d) == 0 && d < 32)
				m |= 1u << d;
			p += k + (p[k] == ',');
		}
	}
	scan__arena_free(&ar);
	return m;
}

static double number_of(struct span x, bool *ok)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s", (int)(x.n < 63 ? x.n : 63), x.s);
	char *end;
	double v = strtod(buf, &end);
	*ok = end != buf && *end == '\0' && v >= 0 && v <= 1e6; /* a tolerance, not inf */
	return v;
}

/* toleranceOverride({torch.X: tol(atol=a, rtol=r), ...}) or precisionOverride({torch.X: a,
 * ...}): each dtype of `within` the dict names gets its atol (and rtol), kept at the larger
 * where one is already given. */
static void tolerances(struct span dict, bool precision, uint32_t within, double *atol,
		       double *rtol)
{
	dict = trim(dict);
	if (dict.n < 2 || dict.s[0] != '{' || dict.s[dict.n - 1] != '}')
		return;
	struct span items[32];
	size_t n = split_top((struct span){ dict.s + 1, dict.n - 2 }, items, 32);
	for (size_t i = 0; i < n; i++) {
		size_t colon = find_top(items[i], ':');
		if (colon >= items[i].n)
			continue;
		uint32_t m = dtype_mask(trim((struct span){ items[i].s, colon })) & within;
		struct span v =
		    trim((struct span){ items[i].s + colon + 1, items[i].n - colon - 1 });
		double a = 0, r = 0;
		bool ok = false, ok2 = true;
		struct span inner;
		if (precision) {
			a = number_of(v, &ok);
		} else if (call_of(v, "tol", &inner)) {
			struct span args[2];
			size_t na = split_top(inner, args, 2);
			for (size_t k = 0; k < na; k++) {
				size_t eq = find_top(args[k], '=');
				struct span key = trim((struct span){ args[k].s, eq });
				struct span val = eq < args[k].n
						      ? trim((struct span){ args[k].s + eq + 1,
									    args[k].n - eq - 1 })
						      : args[k];
				bool is_r = eq < args[k].n ? name_is(key, "rtol") : k == 1;
				double x = number_of(val, is_r ? &ok2 : &ok);
				if (is_r)
					r = x;
				else
					a = x;
			}
		}
		if (!ok || !ok2)
			continue;
		for (int d = 0; d < SPEC_DTYPE_COUNT && d < 32; d++) {
			if (!(m & (1u << d)))
				continue;
			atol[d] = a > atol[d] ? a : atol[d];
			rtol[d] = r > rtol[d] ? r : rtol[d];
		}
	}
}

void catalog__test_tolerances(const struct scan_function *fn, double *atol, double *rtol)
{
	for (size_t k = 0; k < fn->n_decorators; k++) {
		const struct scan_decorator *d = &fn->decorators[k];
		char *text = d->text ? uncommented(d->text) : NULL;
		if (!text)
			continue;
		struct span x = trim((struct span){ text, strlen(text) }), inner;
		if (call_of(x, "toleranceOverride", &inner))
			tolerances(inner, false, ~0u, atol, rtol);
		else if (call_of(x, "precisionOverride", &inner))
			tolerances(inner, true, ~0u, atol, rtol);
		free(text);
	}
}

/* One DecorateInfo(decorator, cls_name, test_name, *, device_type, dtypes, active_if) applied
 * to test `cls`::`test` on the device under test (device_type None only). */
static void decorate_info(struct span args, const char *cls, const char *test,
			  struct spec_opinfo *out, char *why, size_t why_size)
{
	struct span a[8];
	size_t n = split_top(args, a, 8), pos = 0;
	struct span deco = { 0 };
	char want_cls[128] = "", want_test[128] = "", buf[128];
	uint32_t m = ~0u;
	for (size_t i = 0; i < n; i++) {
		size_t eq = find_top(a[i], '=');
		bool kw = eq < a[i].n && (eq + 1 >= a[i].n || a[i].s[eq + 1] != '=');
		struct span key = kw ? trim((struct span){ a[i].s, eq }) : (struct span){ 0 };
		struct span val =
		    kw ? trim((struct span){ a[i].s + eq + 1, a[i].n - eq - 1 }) : a[i];
		bool none = val.n == 4 && memcmp(val.s, "None", 4) == 0;
		if (!kw) {
			if (pos == 0)
				deco = val;
			else if (pos == 1 && !none && !string_of(val, want_cls, sizeof want_cls))
				return;
			else if (pos == 2 && !none && !string_of(val, want_test, sizeof want_test))
				return;
			pos++;
		} else if (name_is(key, "cls_name")) {
			if (!none && !string_of(val, want_cls, sizeof want_cls))
				return;
		} else if (name_is(key, "test_name")) {
			if (!none && !string_of(val, want_test, sizeof want_test))
				return;
		} else if (name_is(key, "device_type")) {
			if (!none) /* a device of its own: not the device under test */
				return;
		} else if (name_is(key, "dtypes")) {
			if (!none && !(m = dtype_mask(val)))
				return;
		} else if (name_is(key, "active_if")) {
			if (!(val.n == 4 && memcmp(val.s, "True", 4) == 0))
				return; /* a condition of the host it runs on: not known here */
		}
	}
	if (!deco.n || (want_cls[0] && (!cls || strcmp(want_cls, cls) != 0)) ||
	    (want_test[0] && strcmp(want_test, test) != 0))
		return;
	struct span inner;
	if (call_of(deco, "skip", &inner)) {
		out->skip |= m;
		if (!why[0]) {
			snprintf(buf, sizeof buf, "%.*s", (int)(deco.n < 120 ? deco.n : 120),
				 deco.s);
			snprintf(why, why_size, "%s", buf);
		}
	} else if (name_is(deco, "expectedFailure")) {
		out->xfail |= m;
	} else if (call_of(deco, "toleranceOverride", &inner)) {
		tolerances(inner, false, m, out->atol, out->rtol);
	} else if (call_of(deco, "precisionOverride", &inner)) {
		tolerances(inner, true, m, out->atol, out->rtol);
	}
}

void catalog__entry_decorations(const struct scan_opinfo *o, const char *cls, const char *test,
				struct spec_opinfo *out, char *why, size_t why_size)
{
	why[0] = '\0';
	for (size_t i = 0; i < o->n_args; i++) {
		const struct scan_arg *a = &o->args[i];
		if (!a->keyword || !a->text ||
		    (strcmp(a->keyword, "skips") != 0 && strcmp(a->keyword, "decorators") != 0))
			continue;
		char *text = uncommented(a->text);
		struct span list = trim((struct span){ text ? text : "", text ? strlen(text) : 0 });
		if (list.n < 2 || !strchr("([", list.s[0]) || !strchr(")]", list.s[list.n - 1])) {
			free(text);
			continue;
		}
		static _Thread_local struct span items[ITEMS_MAX];
		size_t n = split_top((struct span){ list.s + 1, list.n - 2 }, items, ITEMS_MAX);
		for (size_t k = 0; k < n; k++) {
			struct span inner;
			if (call_of(items[k], "DecorateInfo", &inner))
				decorate_info(inner, cls, test, out, why, why_size);
			else if (call_of(items[k], "toleranceOverride", &inner)) /* every test */
				tolerances(inner, false, ~0u, out->atol, out->rtol);
			else if (call_of(items[k], "precisionOverride", &inner))
				tolerances(inner, true, ~0u, out->atol, out->rtol);
		}
		free(text);
	}
	out->skip_why = why[0] ? why : NULL;
}
