/* The catalog's non-Python readers: a string hash map, native_functions.yaml through libyaml's
 * event parser (entries: func -> dispatch kernel names, with a hash of every scalar of the
 * entry), and a line scan of C++ files for kernel definitions (`Tensor name(` at column 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "catalog_internal.h"
#include "common/err.h"

uint64_t catalog__hash(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* The maps' hash of a key: eight bytes a step (FNV's byte a step, a multiply each, is the
 * bottleneck of looking up tens of thousands of ids), then a full avalanche so that the low
 * bits that pick a slot depend on every byte. In memory only: never stored. */
static uint64_t key_hash(const char *key)
{
	size_t n = strlen(key);
	uint64_t h = CATALOG_HASH_SEED ^ (n * 0x9e3779b97f4a7c15ull), w;
	for (; n >= 8; n -= 8, key += 8) {
		memcpy(&w, key, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, key, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static int strmap_grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct strmap_slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return err_set(ERR_NOMEM, "strmap: %zu slots", cap);
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		size_t j = m->slots[i].hash & (cap - 1);
		while (s[j].key)
			j = (j + 1) & (cap - 1);
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

int strmap_put(struct strmap *m, const char *key, intptr_t value)
{
	if ((m->n + 1) * 2 > m->cap) {
		int rc = strmap_grow(m);
		if (rc)
			return rc;
	}
	uint64_t h = key_hash(key);
	size_t j = h & (m->cap - 1);
	while (m->slots[j].key) {
		if (m->slots[j].hash == h && strcmp(m->slots[j].key, key) == 0) {
			m->slots[j].value = value;
			return 0;
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->slots[j] = (struct strmap_slot){ key, h, value };
	m->n++;
	return 0;
}

int strmap_get(const struct strmap *m, const char *key, intptr_t *value)
{
	if (!m->cap)
		return 0;
	uint64_t h = key_hash(key);
	size_t j = h & (m->cap - 1);
	while (m->slots[j].key) {
		if (m->slots[j].hash == h && strcmp(m->slots[j].key, key) == 0) {
			if (value)
				*value = m->slots[j].value;
			return 1;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}

void strmap_free(struct strmap *m)
{
	free(m->slots);
	*m = (struct strmap){ 0 };
}

/* ---- native_functions.yaml ---- */

struct yaml_state {
	struct arena *a;
	struct catalog_native_op *ops;
	size_t n, cap;
	const char *kernels[64];
	size_t n_kernels;
	int depth;        /* 1: the top sequence, 2: an entry, 3: dispatch */
	bool expect_key;  /* at depth 2 or 3 */
	bool in_dispatch; /* the mapping at depth 3 is dispatch's */
	char key[32];     /* the current key at depth 2 */
	struct catalog_native_op cur;
};

static int yaml_entry_end(struct yaml_state *st)
{
	if (!st->cur.func)
		return 0;
	void *p = scan__grow(st->ops, st->n, &st->cap, sizeof(*st->ops));
	if (!p)
		return err_set(ERR_NOMEM, "native_functions.yaml: %zu entries", st->n);
	st->ops = p;
	st->cur.kernels = scan__alloc(st->a, sizeof(char *) * (st->n_kernels + 1));
	if (!st->cur.kernels)
		return err_set(ERR_NOMEM, "native_functions.yaml: kernels");
	memcpy(st->cur.kernels, st->kernels, sizeof(char *) * st->n_kernels);
	st->cur.n_kernels = st->n_kernels;
	const char *dot = strchr(st->cur.func, '.');
	const char *paren = strchr(st->cur.func, '(');
	size_t oplen = strlen(st->cur.func);
	if (paren)
		oplen = (size_t)(paren - st->cur.func);
	if (dot && (size_t)(dot - st->cur.func) < oplen)
		oplen = (size_t)(dot - st->cur.func);
	st->cur.op = scan__strndup(st->a, st->cur.func, oplen);
	if (!st->cur.op)
		return err_set(ERR_NOMEM, "native_functions.yaml: op");
	st->ops[st->n++] = st->cur;
	return 0;
}

static int yaml_scalar(struct yaml_state *st, const char *v, size_t len)
{
	st->cur.hash = catalog__hash(v, len + 1, st->cur.hash);
	if (st->depth == 2) {
		if (st->expect_key) {
			snprintf(st->key, sizeof(st->key), "%.*s", (int)(len < 31 ? len : 31), v);
		} else if (strcmp(st->key, "func") == 0) {
			const char *paren = memchr(v, '(', len);
			size_t n = paren ? (size_t)(paren - v) : len;
			if (!(st->cur.func = scan__strndup(st->a, v, n)))
				return err_set(ERR_NOMEM, "native_functions.yaml: func");
		}
		st->expect_key = !st->expect_key;
	} else if (st->depth == 3) {
		if (!st->expect_key && st->in_dispatch && st->n_kernels < 64) {
			const char *k = scan__strndup(st->a, v, len);
			if (!k)
				return err_set(ERR_NOMEM, "native_functions.yaml: kernel");
			st->kernels[st->n_kernels++] = k;
		}
		st->expect_key = !st->expect_key;
	}
	return 0;
}

static int yaml_event(struct yaml_state *st, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (st->depth == 1 && ev->type == YAML_MAPPING_START_EVENT) {
			st->cur = (struct catalog_native_op){ .hash = CATALOG_HASH_SEED };
			st->n_kernels = 0;
		}
		if (st->depth == 2) {
			st->in_dispatch = strcmp(st->key, "dispatch") == 0 &&
					  ev->type == YAML_MAPPING_START_EVENT;
			st->expect_key = true;
		}
		st->depth++;
		if (st->depth == 2)
			st->expect_key = true;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		st->depth--;
		if (st->depth == 2)
			st->expect_key = true; /* the value of the current key is done */
		if (st->depth == 1)
			return yaml_entry_end(st);
		return 0;
	case YAML_SCALAR_EVENT:
		return yaml_scalar(st, (const char *)ev->data.scalar.value, ev->data.scalar.length);
	default:
		return 0;
	}
}

int catalog__parse_yaml(struct catalog_blob *b, struct arena *a, const char *path, const char *data,
			size_t len)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return err_set(ERR_NOMEM, "%s: yaml parser", path);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	struct yaml_state st = { .a = a };
	int rc = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = err_set(ERR_INVAL, "%s:%zu: %s", path, parser.problem_mark.line + 1,
				     parser.problem ? parser.problem : "bad YAML");
			break;
		}
		bool end = ev.type == YAML_STREAM_END_EVENT;
		rc = yaml_event(&st, &ev);
		yaml_event_delete(&ev);
		if (rc || end)
			break;
	}
	yaml_parser_delete(&parser);
	if (rc) {
		free(st.ops);
		return rc;
	}
	b->native_ops = scan__alloc(a, sizeof(*st.ops) * (st.n + 1));
	if (!b->native_ops) {
		free(st.ops);
		return err_set(ERR_NOMEM, "%s: entries", path);
	}
	if (st.n)
		memcpy(b->native_ops, st.ops, sizeof(*st.ops) * st.n);
	b->n_native_ops = st.n;
	free(st.ops);
	return 0;
}

/* ---- C++ kernels ---- */

/* The kernel name when `line` starts a definition `Tensor[&] name(` not ending in ';'. */
static size_t cpp_def_name(const char *line, size_t len, const char **name)
{
	static const char *const types[] = { "at::Tensor& ", "at::Tensor ", "Tensor& ", "Tensor " };
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		size_t tl = strlen(types[t]);
		if (len <= tl || memcmp(line, types[t], tl) != 0)
			continue;
		size_t i = tl, s = tl;
		while (i < len &&
		       (line[i] == '_' || (line[i] >= 'a' && line[i] <= 'z') ||
			(line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= '0' && line[i] <= '9')))
			i++;
		if (i == s || i >= len || line[i] != '(')
			return 0;
		size_t e = len;
		while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '\r'))
			e--;
		if (e > 0 && line[e - 1] == ';')
			return 0;
		*name = line + s;
		return i - s;
	}
	return 0;
}

int catalog__parse_cpp(struct catalog_blob *b, struct arena *a, const char *data, size_t len)
{
	struct catalog_kernel *ks = NULL;
	size_t n = 0, cap = 0;
	int open = -1;
	uint32_t lineno = 0;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(data + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (data + off)) : len - off;
		const char *line = data + off;
		lineno++;
		const char *name;
		size_t nlen = cpp_def_name(line, ll, &name);
		if (nlen) {
			void *p = scan__grow(ks, n, &cap, sizeof(*ks));
			char *nm = scan__strndup(a, name, nlen);
			if (!p || !nm) {
				free(p ? p : ks);
				return err_set(ERR_NOMEM, "C++ kernels");
			}
			ks = p;
			ks[n] = (struct catalog_kernel){ nm, lineno, lineno, CATALOG_HASH_SEED };
			open = (int)n++;
		}
		if (open >= 0) {
			ks[open].hash = catalog__hash(line, ll, ks[open].hash);
			ks[open].last_line = lineno;
			if (ll >= 1 && line[0] == '}')
				open = -1;
		}
		off += ll + (nl ? 1 : 0);
	}
	b->kernels = scan__alloc(a, sizeof(*ks) * (n + 1));
	if (!b->kernels) {
		free(ks);
		return err_set(ERR_NOMEM, "C++ kernels");
	}
	if (n)
		memcpy(b->kernels, ks, sizeof(*ks) * n);
	b->n_kernels = n;
	free(ks);
	return 0;
}
