/* The schema walker's helpers: document paths, located diagnostics, and typed reads of
 * scalars and lists with the message that says what was expected. */
#include "walk.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct spec_loc walk_loc(const struct walk *w, const struct ynode *n)
{
	struct spec_loc l = {.file = w->file, .line = n ? n->line : 0, .col = n ? n->col : 0};
	return l;
}

static void walk_diag(struct walk *w, enum spec_severity sev, const struct ynode *n,
		      const char *fmt, va_list ap)
{
	char msg[768];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (sev == SPEC_ERROR)
		w->errors++;
	struct spec_loc l = walk_loc(w, n);
	if (w->diags && testspecs_diags_add(w->diags, sev, &l, w->path, "%s", msg))
		w->nomem = true;
}

void walk_error(struct walk *w, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	walk_diag(w, SPEC_ERROR, n, fmt, ap);
	va_end(ap);
}

void walk_warn(struct walk *w, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	walk_diag(w, SPEC_WARNING, n, fmt, ap);
	va_end(ap);
}

void walk_unknown_key(struct walk *w, const struct ynode *key, const char *where)
{
	if (w->opts && w->opts->strict)
		walk_error(w, key, "unknown key '%s' in %s", key->text, where);
	else
		walk_warn(w, key, "unknown key '%s' in %s (ignored)", key->text, where);
}

static size_t walk_append(struct walk *w, const char *s)
{
	size_t saved = w->plen, n = strlen(s);
	if (w->plen + n + 1 > sizeof(w->path))
		n = sizeof(w->path) - 1 - w->plen; /* a very deep path is cut, never overflows */
	memcpy(w->path + w->plen, s, n);
	w->plen += n;
	w->path[w->plen] = '\0';
	return saved;
}

size_t walk_push_key(struct walk *w, const char *key)
{
	size_t saved = w->plen;
	if (w->plen)
		walk_append(w, ".");
	walk_append(w, key);
	return saved;
}

size_t walk_push_index(struct walk *w, size_t i)
{
	char b[32];
	snprintf(b, sizeof(b), "[%zu]", i);
	return walk_append(w, b);
}

void walk_pop(struct walk *w, size_t saved)
{
	w->plen = saved;
	w->path[saved] = '\0';
}

static const char *kind_name(const struct ynode *n)
{
	if (ynode_is_null(n))
		return "nothing (null)";
	switch (n->kind) {
	case YN_MAP:
		return "a mapping";
	case YN_SEQ:
		return "a list";
	default:
		return "a scalar";
	}
}

bool walk_is_map(struct walk *w, const struct ynode *n, const char *what)
{
	if (n->kind == YN_MAP)
		return true;
	walk_error(w, n, "expected %s, found %s", what, kind_name(n));
	return false;
}

bool walk_is_seq(struct walk *w, const struct ynode *n, const char *what)
{
	if (n->kind == YN_SEQ)
		return true;
	walk_error(w, n, "expected %s, found %s", what, kind_name(n));
	return false;
}

bool walk_key_is(const struct ynode *key, const char *name)
{
	return key->kind == YN_SCALAR && strcmp(key->text, name) == 0;
}

const struct ynode *walk_key(struct walk *w, const struct ynode *map, size_t i)
{
	const struct ynode *k = map->kids[2 * i];
	if (k->kind != YN_SCALAR) {
		walk_error(w, k, "expected a plain key, found %s", kind_name(k));
		return NULL;
	}
	return k;
}

void *walk_calloc(struct walk *w, size_t n, size_t size)
{
	void *p = spec_arena_calloc(w->arena, n ? n : 1, size);
	if (!p)
		w->nomem = true;
	return p;
}

bool walk_str(struct walk *w, const struct ynode *n, struct spec_str *out, const char *what)
{
	if (n->kind != YN_SCALAR || ynode_is_null(n)) {
		walk_error(w, n, "expected %s, found %s", what, kind_name(n));
		return false;
	}
	out->s = n->text; /* the tree lives in the set's arena */
	out->len = n->len;
	out->loc = walk_loc(w, n);
	return true;
}

bool walk_strs(struct walk *w, const struct ynode *n, struct spec_strs *out, bool single,
	       const char *what)
{
	out->loc = walk_loc(w, n);
	if (single && n->kind == YN_SCALAR && !ynode_is_null(n)) {
		out->v = walk_calloc(w, 1, sizeof(*out->v));
		if (!out->v)
			return false;
		out->n = 1;
		return walk_str(w, n, &out->v[0], "a string");
	}
	if (n->kind != YN_SEQ) {
		walk_error(w, n, "expected %s, found %s", what, kind_name(n));
		return false;
	}
	out->v = walk_calloc(w, n->n, sizeof(*out->v));
	if (!out->v)
		return false;
	bool ok = true;
	for (size_t i = 0; i < n->n; i++) {
		size_t saved = walk_push_index(w, i);
		if (walk_str(w, n->kids[i], &out->v[out->n], "a string"))
			out->n++;
		else
			ok = false;
		walk_pop(w, saved);
	}
	return ok;
}

bool walk_bool(struct walk *w, const struct ynode *n, bool *out)
{
	static const char *yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
	static const char *no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
	if (n->kind == YN_SCALAR) {
		for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
			if (strcmp(n->text, yes[i]) == 0) {
				*out = true;
				return true;
			}
			if (strcmp(n->text, no[i]) == 0) {
				*out = false;
				return true;
			}
		}
	}
	walk_error(w, n, "expected true or false, found %s%s%s%s", kind_name(n),
		   n->kind == YN_SCALAR ? " '" : "", n->kind == YN_SCALAR ? n->text : "",
		   n->kind == YN_SCALAR ? "'" : "");
	return false;
}

bool walk_tri(struct walk *w, const struct ynode *n, enum spec_tri *out)
{
	bool b;
	if (!walk_bool(w, n, &b))
		return false;
	*out = b ? SPEC_TRI_TRUE : SPEC_TRI_FALSE;
	return true;
}

bool walk_double(struct walk *w, const struct ynode *n, double *out)
{
	if (n->kind == YN_SCALAR && n->len > 0 && n->len < 64) {
		char *end;
		errno = 0;
		double v = strtod(n->text, &end);
		if (end == n->text + n->len && errno == 0 && isfinite(v)) {
			*out = v;
			return true;
		}
	}
	walk_error(w, n, "expected a number, found %s%s%s%s", kind_name(n),
		   n->kind == YN_SCALAR ? " '" : "", n->kind == YN_SCALAR ? n->text : "",
		   n->kind == YN_SCALAR ? "'" : "");
	return false;
}

bool walk_i64(struct walk *w, const struct ynode *n, int64_t *out)
{
	if (n->kind == YN_SCALAR && n->len > 0 && n->len < 32) {
		char *end;
		errno = 0;
		long long v = strtoll(n->text, &end, 10);
		if (end == n->text + n->len && errno == 0) {
			*out = (int64_t)v;
			return true;
		}
	}
	walk_error(w, n, "expected an integer, found %s%s%s%s", kind_name(n),
		   n->kind == YN_SCALAR ? " '" : "", n->kind == YN_SCALAR ? n->text : "",
		   n->kind == YN_SCALAR ? "'" : "");
	return false;
}

bool walk_ints(struct walk *w, const struct ynode *n, struct spec_ints *out, bool nonneg)
{
	out->loc = walk_loc(w, n);
	out->present = true;
	if (n->kind != YN_SEQ) {
		walk_error(w, n, "expected a list of integers, found %s", kind_name(n));
		return false;
	}
	out->v = walk_calloc(w, n->n, sizeof(*out->v));
	if (!out->v)
		return false;
	bool ok = true;
	for (size_t i = 0; i < n->n; i++) {
		size_t saved = walk_push_index(w, i);
		int64_t v;
		if (!walk_i64(w, n->kids[i], &v)) {
			ok = false;
		} else if (nonneg && v < 0) {
			walk_error(w, n->kids[i], "expected a non-negative integer, found %" PRId64,
				   v);
			ok = false;
		} else {
			out->v[out->n++] = v;
		}
		walk_pop(w, saved);
	}
	return ok;
}

bool walk_mode(struct walk *w, const struct ynode *n, enum spec_mode *out, const char *what)
{
	if (n->kind == YN_SCALAR && testspecs_mode_parse(n->text, out) == 0)
		return true;
	walk_error(w, n,
		   "unknown %s '%s' (expected mandatory_success, xfail, xfail_strict or skip)",
		   what, n->kind == YN_SCALAR ? n->text : kind_name(n));
	return false;
}

bool walk_dtype(struct walk *w, const struct ynode *n, struct spec_str *name,
		enum spec_dtype *out, bool torch_prefix)
{
	if (!walk_str(w, n, name, "a dtype name"))
		return false;
	if (testspecs_dtype_parse(n->text, torch_prefix, out) == 0)
		return true;
	walk_error(w, n,
		   "unknown dtype '%s' (expected one of float16, float32, float64, bfloat16, "
		   "int8..int64, uint8..uint64, complex32/64/128, bool, half)",
		   n->text);
	return false;
}

bool walk_text(struct walk *w, const struct ynode *n, struct spec_str *out)
{
	size_t len = 0;
	char *t = ynode_flow_text(w->arena, n, &len);
	if (!t) {
		walk_error(w, n, "value too long to keep as text");
		return false;
	}
	out->s = t;
	out->len = len;
	out->loc = walk_loc(w, n);
	return true;
}
