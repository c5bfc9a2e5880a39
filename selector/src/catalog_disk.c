/* The on-disk side of the catalog's blob cache: a blob's scan result (or its parsed YAML entries
 * or C++ kernels) serialised to DIR/xx/<blob id rest><kind>, written atomically
 * (fs_atomic_write_with), so that a second process re-reads instead of re-scanning. The format
 * is little-endian u32 counts and lengths, u64 hashes, strings as a length (NULL: 0xffffffff)
 * and bytes; it starts with a magic that names its version: change CATALOG_DISK_MAGIC whenever
 * the scanner's output changes. Every read is bounds-checked; a short or malformed file is a
 * miss, never an error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog_internal.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"

#define CATALOG_DISK_MAGIC "spyre-catalog-12\n"
#define NULL_LEN           0xffffffffu

/* ---- writing ---- */

static void w_u32(struct buf *b, int *rc, uint32_t v)
{
	unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };
	if (!*rc)
		*rc = buf_append(b, x, 4);
}

static void w_u64(struct buf *b, int *rc, uint64_t v)
{
	w_u32(b, rc, (uint32_t)v);
	w_u32(b, rc, (uint32_t)(v >> 32));
}

static void w_str(struct buf *b, int *rc, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	w_u32(b, rc, s ? (uint32_t)n : NULL_LEN);
	if (s && n && !*rc)
		*rc = buf_append(b, s, n);
}

static void w_args(struct buf *b, int *rc, const struct scan_arg *v, size_t n)
{
	w_u32(b, rc, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		w_str(b, rc, v[i].keyword);
		w_str(b, rc, v[i].text);
		w_u32(b, rc, (uint32_t)v[i].kind);
		w_str(b, rc, v[i].value);
	}
}

static void w_decos(struct buf *b, int *rc, const struct scan_decorator *v, size_t n)
{
	w_u32(b, rc, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		w_str(b, rc, v[i].name);
		w_str(b, rc, v[i].text);
		w_u32(b, rc, v[i].called);
		w_str(b, rc, v[i].args);
		w_args(b, rc, v[i].argv, v[i].argc);
		w_u32(b, rc, v[i].line);
	}
}

static void w_strs(struct buf *b, int *rc, const char *const *v, size_t n)
{
	w_u32(b, rc, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		w_str(b, rc, v[i]);
}

static void w_function(struct buf *b, int *rc, const struct scan_function *f)
{
	w_str(b, rc, f->name);
	w_str(b, rc, f->qualname);
	w_u32(b, rc, (uint32_t)f->class_index);
	w_u32(b, rc, (uint32_t)f->parent_function);
	w_u32(b, rc, f->is_async);
	w_u32(b, rc, f->first_line);
	w_u32(b, rc, f->last_line);
	w_u32(b, rc, f->deco_line);
	w_decos(b, rc, f->decorators, f->n_decorators);
	w_strs(b, rc, f->uses, f->n_uses);
	w_u64(b, rc, f->body_hash);
	w_strs(b, rc, f->registers, f->n_registers);
	w_args(b, rc, f->params, f->n_params);
	w_args(b, rc, f->super_args, f->n_super_args);
	w_u32(b, rc, f->returns_function);
	w_u32(b, rc, f->op_statements);
	w_u32(b, rc, f->op_raising);
}

static void w_scan(struct buf *b, int *rc, const struct scan_file *s)
{
	w_str(b, rc, s->path);
	w_str(b, rc, s->module_path);
	w_u32(b, rc, s->skipped);
	w_u32(b, rc, s->n_lines);
	w_u64(b, rc, s->module_hash);
	w_u32(b, rc, (uint32_t)s->n_classes);
	for (size_t i = 0; i < s->n_classes; i++) {
		const struct scan_class *c = &s->classes[i];
		w_str(b, rc, c->name);
		w_str(b, rc, c->qualname);
		w_u32(b, rc, (uint32_t)c->parent_class);
		w_u32(b, rc, (uint32_t)c->parent_function);
		w_u32(b, rc, c->first_line);
		w_u32(b, rc, c->last_line);
		w_u32(b, rc, c->deco_line);
		w_u64(b, rc, c->body_hash);
		w_args(b, rc, c->bases, c->n_bases);
		w_decos(b, rc, c->decorators, c->n_decorators);
	}
	w_u32(b, rc, (uint32_t)s->n_functions);
	for (size_t i = 0; i < s->n_functions; i++)
		w_function(b, rc, &s->functions[i]);
	w_u32(b, rc, (uint32_t)s->n_imports);
	for (size_t i = 0; i < s->n_imports; i++) {
		const struct scan_import *m = &s->imports[i];
		w_str(b, rc, m->module);
		w_str(b, rc, m->name);
		w_str(b, rc, m->local);
		w_str(b, rc, m->target);
		w_u32(b, rc, (uint32_t)m->level);
		w_u32(b, rc, (uint32_t)m->function);
		w_u32(b, rc, m->line);
	}
	w_u32(b, rc, (uint32_t)s->n_instantiates);
	for (size_t i = 0; i < s->n_instantiates; i++) {
		w_u32(b, rc, (uint32_t)s->instantiates[i].kind);
		w_str(b, rc, s->instantiates[i].class_name);
		w_args(b, rc, s->instantiates[i].argv, s->instantiates[i].argc);
		w_u32(b, rc, s->instantiates[i].line);
	}
	w_u32(b, rc, (uint32_t)s->n_opinfos);
	for (size_t i = 0; i < s->n_opinfos; i++) {
		const struct scan_opinfo *o = &s->opinfos[i];
		w_str(b, rc, o->kind);
		w_str(b, rc, o->name);
		w_str(b, rc, o->aten_name);
		w_str(b, rc, o->variant_test_name);
		w_str(b, rc, o->dtypes);
		w_str(b, rc, o->sample_func);
		w_str(b, rc, o->samples);
		w_u32(b, rc, o->first_line);
		w_u32(b, rc, o->last_line);
		w_u64(b, rc, o->hash);
		w_args(b, rc, o->args, o->n_args);
		w_strs(b, rc, o->uses, o->n_uses);
	}
	w_u32(b, rc, (uint32_t)s->n_globals);
	for (size_t i = 0; i < s->n_globals; i++) {
		const struct scan_global *g = &s->globals[i];
		w_str(b, rc, g->name);
		w_u32(b, rc, (uint32_t)g->class_index);
		w_u32(b, rc, g->line);
		w_strs(b, rc, g->uses, g->n_uses);
	}
	w_u32(b, rc, (uint32_t)s->n_bindings);
	for (size_t i = 0; i < s->n_bindings; i++) {
		const struct scan_binding *g = &s->bindings[i];
		w_str(b, rc, g->name);
		w_u32(b, rc, (uint32_t)g->class_index);
		w_u32(b, rc, g->augmented);
		w_str(b, rc, g->value);
		w_u32(b, rc, g->line);
	}
	w_u32(b, rc, (uint32_t)s->n_warnings);
	for (size_t i = 0; i < s->n_warnings; i++) {
		w_u32(b, rc, s->warnings[i].line);
		w_str(b, rc, s->warnings[i].message);
	}
	w_u32(b, rc, (uint32_t)s->n_generated);
	for (size_t i = 0; i < s->n_generated; i++) {
		w_str(b, rc, s->generated[i].class_name);
		w_str(b, rc, s->generated[i].name);
		w_str(b, rc, s->generated[i].generator);
		w_u32(b, rc, s->generated[i].line);
	}
}

static void w_blob(struct buf *b, int *rc, const struct catalog_blob *blob)
{
	w_u32(b, rc, blob->scan != NULL);
	if (blob->scan)
		w_scan(b, rc, blob->scan);
	w_u32(b, rc, (uint32_t)blob->n_native_ops);
	for (size_t i = 0; i < blob->n_native_ops; i++) {
		const struct catalog_native_op *o = &blob->native_ops[i];
		w_str(b, rc, o->func);
		w_str(b, rc, o->op);
		w_strs(b, rc, o->kernels, o->n_kernels);
		w_u64(b, rc, o->hash);
	}
	w_u32(b, rc, (uint32_t)blob->n_kernels);
	for (size_t i = 0; i < blob->n_kernels; i++) {
		w_str(b, rc, blob->kernels[i].name);
		w_u32(b, rc, blob->kernels[i].first_line);
		w_u32(b, rc, blob->kernels[i].last_line);
		w_u64(b, rc, blob->kernels[i].hash);
	}
}

static int write_buf(int fd, void *ctx)
{
	const struct buf *b = ctx;
	return fs_write_all(fd, b->data, b->len);
}

static void entry_path(char *out, size_t n, const char *dir, const char *key)
{
	snprintf(out, n, "%s/%.2s/%s", dir, key, key + 2);
}

int catalog__disk_store(const struct catalog_blob *blob, const char *dir, const char *key)
{
	struct buf b;
	buf_init(&b, CATALOG_DISK_ENTRY_MAX);
	int rc = buf_append_str(&b, CATALOG_DISK_MAGIC);
	w_blob(&b, &rc, blob);
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof(path), "%s/%.2s", dir, key);
	if (!rc && mkdir(path, 0755) != 0 && errno != EEXIST)
		rc = err_set_errno(ERR_IO, "catalog cache: mkdir %s", path);
	entry_path(path, sizeof(path), dir, key);
	if (!rc)
		rc = fs_atomic_write_with(path, 0644, write_buf, &b);
	buf_finish(&b);
	return rc;
}

/* ---- reading ---- */

struct rd {
	const unsigned char *p, *end;
	struct arena *a;
	bool bad; /* malformed: a miss */
	bool nomem;
};

static uint32_t r_u32(struct rd *r)
{
	if (r->bad || r->end - r->p < 4) {
		r->bad = true;
		return 0;
	}
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
		     (uint32_t)r->p[3] << 24;
	r->p += 4;
	return v;
}

static uint64_t r_u64(struct rd *r)
{
	uint64_t lo = r_u32(r);
	return lo | (uint64_t)r_u32(r) << 32;
}

static const char *r_str(struct rd *r)
{
	uint32_t n = r_u32(r);
	if (r->bad || n == NULL_LEN)
		return NULL;
	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	char *s = scan__strndup(r->a, (const char *)r->p, n);
	if (!s)
		r->bad = r->nomem = true;
	r->p += n;
	return s;
}

/* A count of elements of at least `min` serialised bytes each, and zeroed arena memory for them
 * (NULL for none). */
static void *r_array(struct rd *r, size_t *n, size_t elem, size_t min)
{
	*n = r_u32(r);
	if (r->bad || *n == 0)
		return (*n = 0), NULL;
	if (*n > (size_t)(r->end - r->p) / min) {
		r->bad = true;
		return (*n = 0), NULL;
	}
	void *v = scan__alloc(r->a, *n * elem);
	if (!v)
		r->bad = r->nomem = true, *n = 0;
	return v;
}

static struct scan_arg *r_args(struct rd *r, size_t *n)
{
	struct scan_arg *v = r_array(r, n, sizeof(*v), 16);
	for (size_t i = 0; i < *n && !r->bad; i++) {
		v[i].keyword = r_str(r);
		v[i].text = r_str(r);
		v[i].kind = (enum scan_arg_kind)r_u32(r);
		v[i].value = r_str(r);
	}
	return v;
}

static struct scan_decorator *r_decos(struct rd *r, size_t *n)
{
	struct scan_decorator *v = r_array(r, n, sizeof(*v), 24);
	for (size_t i = 0; i < *n && !r->bad; i++) {
		v[i].name = r_str(r);
		v[i].text = r_str(r);
		v[i].called = r_u32(r) != 0;
		v[i].args = r_str(r);
		v[i].argv = r_args(r, &v[i].argc);
		v[i].line = r_u32(r);
	}
	return v;
}

static const char **r_strs(struct rd *r, size_t *n)
{
	const char **v = r_array(r, n, sizeof(*v), 4);
	for (size_t i = 0; i < *n && !r->bad; i++)
		v[i] = r_str(r);
	return v;
}

static void r_function(struct rd *r, struct scan_function *f)
{
	f->name = r_str(r);
	f->qualname = r_str(r);
	f->class_index = (int)r_u32(r);
	f->parent_function = (int)r_u32(r);
	f->is_async = r_u32(r) != 0;
	f->first_line = r_u32(r);
	f->last_line = r_u32(r);
	f->deco_line = r_u32(r);
	f->decorators = r_decos(r, &f->n_decorators);
	f->uses = r_strs(r, &f->n_uses);
	f->body_hash = r_u64(r);
	f->registers = r_strs(r, &f->n_registers);
	f->params = r_args(r, &f->n_params);
	f->super_args = r_args(r, &f->n_super_args);
	f->returns_function = r_u32(r) != 0;
	f->op_statements = r_u32(r);
	f->op_raising = r_u32(r);
}

static void r_classes(struct rd *r, struct scan_file *s)
{
	s->classes = r_array(r, &s->n_classes, sizeof(*s->classes), 44);
	for (size_t i = 0; i < s->n_classes && !r->bad; i++) {
		struct scan_class *c = &s->classes[i];
		c->name = r_str(r);
		c->qualname = r_str(r);
		c->parent_class = (int)r_u32(r);
		c->parent_function = (int)r_u32(r);
		c->first_line = r_u32(r);
		c->last_line = r_u32(r);
		c->deco_line = r_u32(r);
		c->body_hash = r_u64(r);
		c->bases = r_args(r, &c->n_bases);
		c->decorators = r_decos(r, &c->n_decorators);
	}
}

static void r_rest(struct rd *r, struct scan_file *s)
{
	s->imports = r_array(r, &s->n_imports, sizeof(*s->imports), 28);
	for (size_t i = 0; i < s->n_imports && !r->bad; i++) {
		struct scan_import *m = &s->imports[i];
		m->module = r_str(r);
		m->name = r_str(r);
		m->local = r_str(r);
		m->target = r_str(r);
		m->level = (int)r_u32(r);
		m->function = (int)r_u32(r);
		m->line = r_u32(r);
	}
	s->instantiates = r_array(r, &s->n_instantiates, sizeof(*s->instantiates), 16);
	for (size_t i = 0; i < s->n_instantiates && !r->bad; i++) {
		s->instantiates[i].kind = (enum scan_instantiate_kind)r_u32(r);
		s->instantiates[i].class_name = r_str(r);
		s->instantiates[i].argv = r_args(r, &s->instantiates[i].argc);
		s->instantiates[i].line = r_u32(r);
	}
	s->opinfos = r_array(r, &s->n_opinfos, sizeof(*s->opinfos), 36);
	for (size_t i = 0; i < s->n_opinfos && !r->bad; i++) {
		struct scan_opinfo *o = &s->opinfos[i];
		o->kind = r_str(r);
		o->name = r_str(r);
		o->aten_name = r_str(r);
		o->variant_test_name = r_str(r);
		o->dtypes = r_str(r);
		o->sample_func = r_str(r);
		o->samples = r_str(r);
		o->first_line = r_u32(r);
		o->last_line = r_u32(r);
		o->hash = r_u64(r);
		o->args = r_args(r, &o->n_args);
		o->uses = r_strs(r, &o->n_uses);
	}
	s->globals = r_array(r, &s->n_globals, sizeof(*s->globals), 16);
	for (size_t i = 0; i < s->n_globals && !r->bad; i++) {
		struct scan_global *g = &s->globals[i];
		g->name = r_str(r);
		g->class_index = (int)r_u32(r);
		g->line = r_u32(r);
		g->uses = r_strs(r, &g->n_uses);
	}
	s->bindings = r_array(r, &s->n_bindings, sizeof(*s->bindings), 20);
	for (size_t i = 0; i < s->n_bindings && !r->bad; i++) {
		struct scan_binding *g = &s->bindings[i];
		g->name = r_str(r);
		g->class_index = (int)r_u32(r);
		g->augmented = r_u32(r) != 0;
		g->value = r_str(r);
		g->line = r_u32(r);
	}
	s->warnings = r_array(r, &s->n_warnings, sizeof(*s->warnings), 8);
	for (size_t i = 0; i < s->n_warnings && !r->bad; i++) {
		s->warnings[i].line = r_u32(r);
		s->warnings[i].message = r_str(r);
	}
	s->generated = r_array(r, &s->n_generated, sizeof(*s->generated), 16);
	for (size_t i = 0; i < s->n_generated && !r->bad; i++) {
		s->generated[i].class_name = r_str(r);
		s->generated[i].name = r_str(r);
		s->generated[i].generator = r_str(r);
		s->generated[i].line = r_u32(r);
	}
}

static struct scan_file *r_scan(struct rd *r)
{
	struct scan_file *s = scan__alloc(r->a, sizeof(*s));
	if (!s) {
		r->bad = r->nomem = true;
		return NULL;
	}
	s->path = r_str(r);
	s->module_path = r_str(r);
	s->skipped = r_u32(r) != 0;
	s->n_lines = r_u32(r);
	s->module_hash = r_u64(r);
	r_classes(r, s);
	s->functions = r_array(r, &s->n_functions, sizeof(*s->functions), 80);
	for (size_t i = 0; i < s->n_functions && !r->bad; i++)
		r_function(r, &s->functions[i]);
	r_rest(r, s);
	return s;
}

static void r_blob(struct rd *r, struct catalog_blob *b)
{
	if (r_u32(r))
		b->scan = r_scan(r);
	b->native_ops = r_array(r, &b->n_native_ops, sizeof(*b->native_ops), 20);
	for (size_t i = 0; i < b->n_native_ops && !r->bad; i++) {
		struct catalog_native_op *o = &b->native_ops[i];
		o->func = r_str(r);
		o->op = r_str(r);
		o->kernels = r_strs(r, &o->n_kernels);
		o->hash = r_u64(r);
	}
	b->kernels = r_array(r, &b->n_kernels, sizeof(*b->kernels), 20);
	for (size_t i = 0; i < b->n_kernels && !r->bad; i++) {
		b->kernels[i].name = r_str(r);
		b->kernels[i].first_line = r_u32(r);
		b->kernels[i].last_line = r_u32(r);
		b->kernels[i].hash = r_u64(r);
	}
	if (r->p != r->end)
		r->bad = true; /* trailing bytes: not what we wrote */
}

int catalog__disk_load(struct catalog_blob *b, struct arena *a, const char *dir, const char *key)
{
	char path[PATH_TEXT_MAX];
	entry_path(path, sizeof(path), dir, key);
	char *data = NULL;
	size_t len = 0;
	if (fs_read_file(&data, &len, path, CATALOG_DISK_ENTRY_MAX) != 0)
		return 0; /* absent, unreadable or too big: a miss */
	size_t ml = strlen(CATALOG_DISK_MAGIC);
	struct rd r = { (const unsigned char *)data + ml, (const unsigned char *)data + len, a };
	if (len < ml || memcmp(data, CATALOG_DISK_MAGIC, ml) != 0)
		r.bad = true;
	else
		r_blob(&r, b);
	free(data);
	if (r.nomem)
		return err_set(ERR_NOMEM, "catalog cache: %s", path);
	if (r.bad) {
		memset(b, 0, sizeof(*b)); /* the arena keeps what was read until the entry goes */
		return 0;
	}
	return 1;
}
