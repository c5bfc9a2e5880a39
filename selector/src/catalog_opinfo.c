/* The op database entry of an op as the specs and the test names spell it, and what stage 3's
 * kernel-case expansion learns from it (testspecs' spec_opinfo): its class, dtypes, sample
 * function and that function's literal shapes, all read by the scanner (scan_opsamples.c).
 * The index is built with the catalog's test index, from every op database file in path order.
 * Python reference entries (python_ref_db's "_refs.add") are in it under their own names, which
 * no op_db entry shares; what they do not give themselves they take from the entry their
 * torch_opinfo_name names, as PyTorch's constructors do. */
#include <ctype.h>
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
		if (!o->name || !o->kind)
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
static _Thread_local char why_buf[160]; /* the skip an entry's DecorateInfo gives the test */

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

/* torch.testing._internal.common_device_type's _ANY_DTYPE_ORDER: the dtype OpDTypes.any_one
 * picks is the first of these an op supports. */
static const char *const any_order[] = { "float32", "float64",  "complex64", "complex128",
					 "float16", "bfloat16", "int64",     "int32",
					 "int16",   "int8",     "uint8",     "bool" };

/* Whether comma list `l` has name `d`. */
static bool has_dtype(const char *l, const char *d)
{
	size_t n = strlen(d);
	for (const char *p = l; *p;) {
		size_t m = strcspn(p, ",");
		if (m == n && strncmp(p, d, n) == 0)
			return true;
		p += m + (p[m] == ',');
	}
	return false;
}

/* The dtypes PyTorch instantiates the test at for an entry of dtypes `entry` (NULL: not
 * known), as the @ops decorator's modes do (common_device_type.ops), ∩ allowed_dtypes; NULL
 * when they are not known. The text lives until the next call in the thread. */
static const char *test_dtypes(const struct selector_opdb *db, const char *entry)
{
	switch (db->mode_) {
	case 'e': /* the list as given (allowed_dtypes applied), at most what the entry supports */
		return entry ? common_dtypes(db->explicit_, entry) : db->explicit_;
	case '1':
	case 'c':
	case 'n': {
		/* any_one: the first of _ANY_DTYPE_ORDER the op supports; none: the test makes its
		 * own tensors, in torch's default dtype float32 unless the op lacks it */
		const char *pool = entry;
		if (db->allowed_[0])
			pool = entry ? common_dtypes(entry, db->allowed_) : db->allowed_;
		if (db->mode_ == 'n' && (!pool || has_dtype(pool, "float32")))
			return "float32";
		if (!pool)
			return NULL;
		for (size_t k = 0; k < sizeof any_order / sizeof any_order[0]; k++)
			if (has_dtype(pool, any_order[k])) {
				snprintf(dtypes_buf, sizeof dtypes_buf, "%s", any_order[k]);
				return dtypes_buf;
			}
		return "";
	}
	default:
		break;
	}
	if (!db->allowed_[0])
		return entry;
	return entry ? common_dtypes(entry, db->allowed_) : db->allowed_;
}

const char *selector_opdb_no_case_why(const struct selector_opdb *o)
{
	if (!o->test || o->test->opset == CATALOG_OPSET_NONE)
		return NULL;
	if (o->mode_ == 'u')
		return "an error test: @ops(dtypes=OpDTypes.unsupported...) runs each op only at "
		       "dtypes it does not support";
	const struct catalog_file *f = &o->cat->files[o->test->file];
	if (!f->blob || !f->blob->scan || o->test->function < 0 ||
	    (size_t)o->test->function >= f->blob->scan->n_functions)
		return NULL;
	const struct scan_function *fn = &f->blob->scan->functions[o->test->function];
	/* the scanner follows the parameter by PyTorch's name for it; a test that names it
	 * otherwise is not read, and keeps its cases */
	bool op_param = false;
	for (size_t p = 0; p < fn->n_params; p++)
		op_param |= fn->params[p].keyword && strcmp(fn->params[p].keyword, "op") == 0;
	if (!op_param)
		return NULL;
	if (fn->op_statements == 0)
		return "its body runs no op of its @ops list (it reads the entries' data only)";
	if (fn->op_raising == fn->op_statements)
		return "its body only checks that its op raises an error (assertRaises)";
	return NULL;
}

/* The text of keyword `kw` of an @ops decorator: its own argument, else the one a partial(ops,
 * ..., kw=...) alias gives (up to the comma or bracket that ends it); NULL when absent. */
static const char *ops_keyword(const struct scan_decorator *d, const char *partial, const char *kw,
			       size_t *n)
{
	for (size_t i = 0; i < d->argc; i++) {
		const struct scan_arg *a = &d->argv[i];
		if (a->keyword && strcmp(a->keyword, kw) == 0 && a->text) {
			*n = strlen(a->text);
			return a->text;
		}
	}
	size_t kn = strlen(kw);
	const char *p = partial;
	while (p && (p = strstr(p, kw)) != NULL) {
		bool word = (p == partial || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
			    p[kn] == '=';
		if (!word) {
			p += kn;
			continue;
		}
		const char *text = p + kn + 1;
		int depth = 0;
		size_t k;
		for (k = 0; text[k] && !(depth == 0 && (text[k] == ',' || text[k] == ')')); k++)
			depth += text[k] == '(' || text[k] == '['   ? 1
				 : text[k] == ')' || text[k] == ']' ? -1
								    : 0;
		*n = k;
		return text;
	}
	return NULL;
}

/* What the test's @ops decorator says of dtypes, into o: allowed_dtypes= as canonical names
 * (PyTorch instantiates the test only for those), and dtypes=, an OpDTypes mode or an explicit
 * list. A value the scanner cannot evaluate leaves allowed_ empty (no bound) or mode_ '?'. */
static int ops_dtypes(struct selector_opdb *o)
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
		struct arena ar = { 0 };
		const char *names = NULL;
		size_t n = 0;
		const char *text = ops_keyword(d, partial, "allowed_dtypes", &n);
		int rc = text ? scan__dtypes_eval(&ar, text, n, &names) : 0;
		if (rc == 0 && names)
			snprintf(o->allowed_, sizeof o->allowed_, "%s", names);
		text = rc == 0 ? ops_keyword(d, partial, "dtypes", &n) : NULL;
		static const struct {
			const char *name;
			char mode;
		} modes[] = { { "supported", 's' },
			      { "unsupported", 'u' },
			      { "unsupported_backward", 'u' },
			      { "any_one", '1' },
			      { "any_common_cpu_cuda_one", 'c' },
			      { "none", 'n' } };
		if (text && n > 9 && strncmp(text, "OpDTypes.", 9) == 0) {
			o->mode_ = '?';
			for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
				if (strlen(modes[m].name) == n - 9 &&
				    strncmp(text + 9, modes[m].name, n - 9) == 0)
					o->mode_ = modes[m].mode;
		} else if (text) {
			names = NULL;
			rc = scan__dtypes_eval(&ar, text, n, &names);
			o->mode_ = names ? 'e' : '?';
			if (rc == 0 && names) /* ∩ allowed_dtypes once, here */
				snprintf(o->explicit_, sizeof o->explicit_, "%s",
					 o->allowed_[0] ? common_dtypes(names, o->allowed_)
							: names);
		}
		scan__arena_free(&ar);
		return rc;
	}
	return 0;
}

/* The entries of the test's @ops list as evaluated, by name, into o->list_ (one block). */
static int list_names(struct selector_opdb *o)
{
	const struct catalog_op_list *l;
	int rc = catalog__test_op_list(o->cat, o->test, &l);
	if (rc < 0)
		return rc;
	if (!l || l->status == 0)
		return 0;
	size_t bytes = (l->n + 1) * sizeof(char *);
	for (size_t i = 0; i < l->n; i++)
		bytes +=
		    strlen(l->entries[i]->name ? l->entries[i]->name : "") + 2 +
		    (l->entries[i]->variant_test_name ? strlen(l->entries[i]->variant_test_name)
						      : 0);
	char **v = malloc(bytes);
	if (!v)
		return ERR_NOMEM;
	char *p = (char *)(v + l->n + 1);
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct scan_opinfo *e = l->entries[i];
		if (!e->name)
			continue;
		const char *var = e->variant_test_name;
		v[n++] = p;
		p += sprintf(p, "%s%s%s", e->name, var && var[0] ? "." : "", var ? var : "") + 1;
	}
	v[n] = NULL;
	o->list_ = v;
	o->n_list_ = n;
	return 0;
}

int selector_opdb_for(struct selector_opdb *o, const struct catalog *cat, const char *id)
{
	o->cat = cat;
	o->test = cat ? selector_catalog_test(cat, id) : NULL;
	o->ops_ = NULL;
	o->allowed_[0] = '\0';
	o->explicit_[0] = '\0';
	o->mode_ = 's';
	o->list_ = NULL;
	o->n_list_ = 0;
	if (!o->test || o->test->opset == CATALOG_OPSET_NONE)
		return 0;
	if (ops_dtypes(o) < 0 || list_names(o) < 0)
		return err_set(ERR_NOMEM, "@ops list of '%s'", id);
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
	free(o->list_);
	o->list_ = NULL;
	o->n_list_ = 0;
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

/* The entry a Python reference entry names (torch_opinfo_name=, torch_opinfo_variant_name=),
 * or NULL. */
static const struct scan_opinfo *ref_target(const struct catalog *cat, const struct scan_opinfo *o)
{
	const char *name = NULL, *variant = NULL;
	for (size_t i = 0; i < o->n_args; i++) {
		const struct scan_arg *a = &o->args[i];
		if (a->keyword && a->kind == SCAN_ARG_STRING &&
		    strcmp(a->keyword, "torch_opinfo_name") == 0)
			name = a->value;
		if (a->keyword && a->kind == SCAN_ARG_STRING &&
		    strcmp(a->keyword, "torch_opinfo_variant_name") == 0)
			variant = a->value;
	}
	if (!name)
		return NULL;
	char key[512];
	snprintf(key, sizeof key, "%s%s%s", name, variant && variant[0] ? "." : "",
		 variant ? variant : "");
	const struct scan_opinfo *t = selector_catalog_opinfo(cat, key, NULL);
	return t && t != o ? t : NULL;
}

static _Thread_local char entry_dtypes_buf[160];

/* The dtypes an entry supports as PyTorch builds it: its own dtypes=, else the attribute as its
 * class or the entry a Python reference names makes it (ForeachFuncInfo's default,
 * _inherit_constructor_args); NULL when not statically known. */
static int entry_dtypes(const struct catalog *cat, const struct scan_opinfo *o,
			const struct scan_opinfo *target, const char **out)
{
	*out = o->dtypes;
	if (o->dtypes)
		return 0;
	const char *text = catalog__entry_attr(cat, o, "dtypes");
	if (!text && target && target->dtypes) {
		*out = target->dtypes;
		return 0;
	}
	if (!text)
		return 0;
	struct arena ar = { 0 };
	const char *names = NULL;
	int rc = scan__dtypes_eval(&ar, text, strlen(text), &names);
	if (rc == 0 && names) {
		snprintf(entry_dtypes_buf, sizeof entry_dtypes_buf, "%s", names);
		*out = entry_dtypes_buf;
	}
	scan__arena_free(&ar);
	return rc < 0 ? err_set(rc, "dtypes of op database entry '%s'", o->name) : 0;
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
	const struct scan_opinfo *t = ref_target(db->cat, o);
	if (t && !o->samples && !o->sample_func) {
		out->shapes = t->samples;
		out->sample_func = t->sample_func;
	}
	int rc = entry_dtypes(db->cat, o, t, &out->dtypes);
	if (rc < 0)
		return rc;
	out->dtypes = test_dtypes(db, out->dtypes);
	if (db->test) {
		const struct catalog_file *f = &db->cat->files[db->test->file];
		const struct scan_function *fn = f->blob && f->blob->scan && db->test->function >= 0
						     ? &f->blob->scan->functions[db->test->function]
						     : NULL;
		if (fn)
			catalog__entry_decorations(o, db->test->class_name, fn->name, out, why_buf,
						   sizeof why_buf);
	}
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
	if (!o) /* in no evaluated list; op_db's over-approximation may hold it */
		return db->test->opset == CATALOG_OPSET_ALL && db->ops_ &&
			       ((const struct catalog_variants *)db->ops_)->approx
			   ? 1
			   : 0;
	char formatted[512];
	snprintf(formatted, sizeof formatted, "%s%s%s", o->name, o->variant_test_name ? "_" : "",
		 o->variant_test_name ? o->variant_test_name : "");
	for (char *p = formatted; *p; p++)
		*p = *p == '.' ? '_' : *p;
	return variant_of(db->ops_, formatted);
}
