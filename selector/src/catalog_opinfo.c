/* The op database entry of an op as the specs and the test names spell it, and what stage 3's
 * kernel-case expansion learns from it (testspecs' spec_opinfo): its class, dtypes, sample
 * function and that function's literal shapes, all read by the scanner (scan_opsamples.c).
 * The index is built with the catalog's test index, from every op database file in path order;
 * Python reference entries (PythonRefInfo kinds) are python_ref_db's, not op_db's, and left out. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "selector/select.h"
#include "testspecs/cases.h"

struct opinfo_at {
	const struct scan_opinfo *o;
	const char *path;
};

/* Keeps the first entry of a key, except that an entry without variant_test_name takes a bare
 * name from one with it ("div" is the plain division, not "div.floor_rounding"). */
static int put(struct catalog_priv *priv, const char *key, struct opinfo_at *at)
{
	intptr_t v;
	if (strmap_get(&priv->op_infos, key, &v)) {
		const struct opinfo_at *old = (const struct opinfo_at *)v;
		if (!(old->o->variant_test_name && !at->o->variant_test_name))
			return 0;
	}
	return strmap_put(&priv->op_infos, key, (intptr_t)at) ? ERR_NOMEM : 0;
}

/* name, "name.variant" and the formatted name ("div_floor_rounding", "nn_functional_gelu"). */
static int index_one(struct catalog_priv *priv, const struct scan_opinfo *o, const char *path)
{
	struct opinfo_at *at = scan__alloc(&priv->arena, sizeof *at);
	if (!at)
		return ERR_NOMEM;
	*at = (struct opinfo_at){ o, path };
	int rc = put(priv, o->name, at);
	if (rc || !o->variant_test_name || !o->variant_test_name[0])
		return rc;
	char buf[512];
	int n = snprintf(buf, sizeof buf, "%s.%s", o->name, o->variant_test_name);
	if (n < 0 || (size_t)n >= sizeof buf)
		return 0; /* no spec spells so long a name */
	char *dotted = scan__strndup(&priv->arena, buf, (size_t)n);
	char *formatted = scan__strndup(&priv->arena, buf, (size_t)n);
	if (!dotted || !formatted)
		return ERR_NOMEM;
	for (char *p = formatted; *p; p++)
		*p = *p == '.' ? '_' : *p;
	rc = put(priv, dotted, at);
	return rc ? rc : put(priv, formatted, at);
}

int catalog__index_opinfos(struct catalog *cat, const struct catalog_file *cf)
{
	struct catalog_priv *priv = cat->priv_;
	const struct scan_file *sf = cf->blob->scan;
	for (size_t i = 0; i < sf->n_opinfos; i++) {
		const struct scan_opinfo *o = &sf->opinfos[i];
		if (!o->name || !o->kind || strstr(o->kind, "PythonRef"))
			continue;
		if (index_one(priv, o, cf->path))
			return err_set(ERR_NOMEM, "op database index");
	}
	return 0;
}

const struct scan_opinfo *selector_catalog_opinfo(const struct catalog *cat, const char *name,
						  const char **path)
{
	const struct catalog_priv *priv = cat->priv_;
	intptr_t v;
	if (!strmap_get(&priv->op_infos, name, &v))
		return NULL;
	const struct opinfo_at *at = (const struct opinfo_at *)v;
	if (path)
		*path = at->path;
	return at->o;
}

/* The thread-local text of the last answer's "path:line" (the expansion copies what it keeps). */
static _Thread_local char where_buf[1100];
static _Thread_local char dtypes_buf[160];

/* The names of comma list `a` that comma list `b` also has, in a's order ("" for none). */
static const char *common_dtypes(const char *a, const char *b)
{
	size_t k = 0, blen = strlen(b);
	dtypes_buf[0] = '\0';
	while (*a) {
		size_t n = strcspn(a, ",");
		for (const char *p = b; p < b + blen;) {
			size_t m = strcspn(p, ",");
			if (m == n && strncmp(p, a, n) == 0 && k + n + 2 < sizeof dtypes_buf) {
				k += (size_t)snprintf(dtypes_buf + k, sizeof dtypes_buf - k,
						      "%s%.*s", k ? "," : "", (int)n, a);
				break;
			}
			p += m + (p[m] == ',');
		}
		a += n + (a[n] == ',');
	}
	return dtypes_buf;
}

/* The test's @ops(..., allowed_dtypes=...) as canonical names into o->allowed_, when the
 * scanner can evaluate it: PyTorch instantiates the test only for those dtypes. */
static int allowed_dtypes(struct selector_opdb *o)
{
	const struct catalog_file *f = &o->cat->files[o->test->file];
	if (!f->blob || !f->blob->scan || o->test->function < 0)
		return 0;
	const struct scan_function *fn = &f->blob->scan->functions[o->test->function];
	for (size_t k = 0; k < fn->n_decorators; k++) {
		const struct scan_decorator *d = &fn->decorators[k];
		const char *partial;
		if (!catalog__ops_decorator(f->blob->scan, d, &partial))
			continue;
		const char *text = NULL;
		size_t n = 0;
		for (size_t i = 0; i < d->argc && !text; i++) {
			const struct scan_arg *a = &d->argv[i];
			if (a->keyword && strcmp(a->keyword, "allowed_dtypes") == 0 && a->text)
				text = a->text, n = strlen(a->text);
		}
		const char *p = !text && partial ? strstr(partial, "allowed_dtypes=") : NULL;
		if (p) { /* partial(ops, ..., allowed_dtypes=(...)): up to its closing bracket */
			text = p + 15;
			int depth = 0;
			for (n = 0; text[n] && !(depth == 0 && (text[n] == ',' || text[n] == ')'));
			     n++)
				depth += text[n] == '(' || text[n] == '['   ? 1
					 : text[n] == ')' || text[n] == ']' ? -1
									    : 0;
		}
		if (!text)
			return 0;
		struct arena ar = { 0 };
		const char *names = NULL;
		int rc = scan__dtypes_eval(&ar, text, n, &names);
		if (rc == 0 && names)
			snprintf(o->allowed_, sizeof o->allowed_, "%s", names);
		scan__arena_free(&ar);
		return rc;
	}
	return 0;
}

int selector_opdb_for(struct selector_opdb *o, const struct catalog *cat, const char *id)
{
	o->cat = cat;
	o->test = cat ? selector_catalog_test(cat, id) : NULL;
	o->ops_ = NULL;
	o->allowed_[0] = '\0';
	if (!o->test || o->test->opset == CATALOG_OPSET_NONE)
		return 0;
	if (allowed_dtypes(o) < 0)
		return err_set(ERR_NOMEM, "allowed dtypes of '%s'", id);
	struct catalog_variants *v = calloc(1, sizeof *v);
	if (!v)
		return err_set(ERR_NOMEM, "op variants of '%s'", id);
	int rc = selector_catalog_variants(v, cat, o->test);
	if (rc < 0 || v->open) {
		if (rc >= 0)
			selector_catalog_variants_finish(v);
		free(v);
		return rc < 0 ? rc : 0;
	}
	o->ops_ = v;
	return 0;
}

void selector_opdb_finish(struct selector_opdb *o)
{
	if (o->ops_) {
		selector_catalog_variants_finish(o->ops_);
		free(o->ops_);
	}
	o->ops_ = NULL;
}

static const struct scan_opinfo *entry_of(const struct catalog *cat, const char *op,
					  const char **path)
{
	const struct scan_opinfo *o = cat ? selector_catalog_opinfo(cat, op, path) : NULL;
	if (!o && cat) {
		/* an emulator or call spelling of an upstream op ("F.gelu", "torch.add") */
		const struct spec_op_map *m = testspecs_opmap_find(op);
		if (m && strcmp(m->upstream, op) != 0)
			o = selector_catalog_opinfo(cat, m->upstream, path);
	}
	return o;
}

int selector_opinfo_of(void *opdb, const char *op, struct spec_opinfo *out)
{
	const struct selector_opdb *db = opdb;
	const char *path = NULL;
	const struct scan_opinfo *o = db ? entry_of(db->cat, op, &path) : NULL;
	if (!o)
		return 0;
	snprintf(where_buf, sizeof where_buf, "%s:%u", path ? path : "?", (unsigned)o->first_line);
	*out = (struct spec_opinfo){ o->kind, o->dtypes, o->samples, o->sample_func, where_buf };
	if (db->allowed_[0])
		out->dtypes = o->dtypes ? common_dtypes(o->dtypes, db->allowed_) : db->allowed_;
	return 1;
}

/* Whether a variant name is the entry's formatted name, alone or with a @parametrize suffix. */
static bool variant_of(const struct catalog_variants *v, const char *formatted)
{
	size_t n = strlen(formatted);
	for (size_t i = 0; i < v->n; i++)
		if (strncmp(v->names[i], formatted, n) == 0 &&
		    (v->names[i][n] == '\0' || v->names[i][n] == '_'))
			return true;
	return false;
}

int selector_runs_op(void *opdb, const char *op)
{
	const struct selector_opdb *db = opdb;
	if (!db || !db->test || !db->ops_)
		return -1;
	const struct scan_opinfo *o = entry_of(db->cat, op, NULL);
	/* @ops names OpInfo entries: an op with none is in no list but op_db's over-approximation
	 */
	if (!o)
		return db->test->opset == CATALOG_OPSET_ALL ? 1 : 0;
	char formatted[512];
	snprintf(formatted, sizeof formatted, "%s%s%s", o->name, o->variant_test_name ? "_" : "",
		 o->variant_test_name ? o->variant_test_name : "");
	for (char *p = formatted; *p; p++)
		*p = *p == '.' ? '_' : *p;
	return variant_of(db->ops_, formatted);
}
