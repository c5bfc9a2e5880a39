/* The YAML tree builder: libyaml events in, located nodes out, limits checked per event. */
#include "ytree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "arena.h"
#include "common/err.h"
#include "common/limits.h"

struct frame {
	struct ynode *node;
	struct ynode **kids;
	size_t n, cap;
	char *anchor; /* malloc'd; registered when the collection ends */
};

struct anchor {
	char *name;
	struct ynode *node;
};

struct builder {
	struct spec_arena *arena;
	const char *file;
	const char *text;
	size_t len;
	struct spec_diag_list *diags;
	struct frame stack[YAML_DEPTH_MAX + 1];
	size_t depth;
	struct anchor *anchors;
	size_t n_anchors;
	size_t nodes;   /* expanded node count */
	size_t aliases; /* alias expansions */
	struct ynode *root;
};

static int fail(struct builder *b, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct builder *b, uint32_t line, uint32_t col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct spec_loc loc = {.file = b->file, .line = line, .col = col};
	if (b->diags && testspecs_diags_add(b->diags, SPEC_ERROR, &loc, "", "%s", msg))
		return ERR_NOMEM;
	return err_set(ERR_INVAL, "%s:%u:%u: %s", b->file, line, col, msg);
}

static uint32_t ln(yaml_mark_t m)
{
	return (uint32_t)m.line + 1;
}

static uint32_t cl(yaml_mark_t m)
{
	return (uint32_t)m.column + 1;
}

/* libyaml's reader errors carry a byte offset, not a mark: count lines up to it. */
static void offset_to_mark(const char *text, size_t len, size_t off, uint32_t *line, uint32_t *col)
{
	uint32_t l = 1, c = 1;
	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static int parser_error(struct builder *b, yaml_parser_t *p)
{
	uint32_t line = ln(p->problem_mark), col = cl(p->problem_mark);
	if (p->error == YAML_READER_ERROR)
		offset_to_mark(b->text, b->len, p->problem_offset, &line, &col);
	if (p->error == YAML_MEMORY_ERROR)
		return err_set(ERR_NOMEM, "libyaml ran out of memory");
	const char *problem = p->problem ? p->problem : "unknown problem";
	if (p->error == YAML_READER_ERROR && p->problem_value != -1)
		return fail(b, line, col, "invalid input: %s (byte 0x%02x)", problem,
			    (unsigned)p->problem_value & 0xFFu);
	if (p->context)
		return fail(b, line, col, "YAML syntax: %s %s", problem, p->context);
	return fail(b, line, col, "YAML syntax: %s", problem);
}

static int count_node(struct builder *b, yaml_mark_t m, size_t weight)
{
	if (weight > YAML_NODES_MAX || b->nodes > YAML_NODES_MAX - weight)
		return fail(b, ln(m), cl(m), "too many nodes (more than %d, aliases expanded)",
			    YAML_NODES_MAX);
	b->nodes += weight;
	return 0;
}

static int attach(struct builder *b, struct ynode *node, yaml_mark_t m)
{
	if (b->depth == 0) {
		b->root = node;
		return 0;
	}
	struct frame *f = &b->stack[b->depth - 1];
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct ynode **k = realloc(f->kids, cap * sizeof(*k));
		if (!k)
			return err_set(ERR_NOMEM, "out of memory building the YAML tree");
		f->kids = k;
		f->cap = cap;
	}
	f->kids[f->n++] = node;
	(void)m;
	return 0;
}

static int add_anchor(struct builder *b, const char *name, struct ynode *node, yaml_mark_t m)
{
	if (b->n_anchors >= YAML_ALIAS_MAX)
		return fail(b, ln(m), cl(m), "too many anchors (more than %d)", YAML_ALIAS_MAX);
	if (b->n_anchors % 16 == 0) {
		struct anchor *a = realloc(b->anchors, (b->n_anchors + 16) * sizeof(*a));
		if (!a)
			return err_set(ERR_NOMEM, "out of memory for anchors");
		b->anchors = a;
	}
	char *copy = strdup(name);
	if (!copy)
		return err_set(ERR_NOMEM, "out of memory for anchors");
	b->anchors[b->n_anchors].name = copy;
	b->anchors[b->n_anchors].node = node;
	b->n_anchors++;
	return 0;
}

static bool tag_ok(const yaml_char_t *tag)
{
	/* safe_load knows only the core tags; "!" is the non-specific tag of quoted scalars */
	return !tag || strcmp((const char *)tag, "!") == 0 ||
	       strncmp((const char *)tag, "tag:yaml.org,2002:", 18) == 0;
}

static struct ynode *new_node(struct builder *b, enum ynode_kind kind, yaml_mark_t m)
{
	struct ynode *n = spec_arena_calloc(b->arena, 1, sizeof(*n));
	if (n) {
		n->kind = kind;
		n->line = ln(m);
		n->col = cl(m);
		n->height = 1;
		n->weight = 1;
	}
	return n;
}

static int on_scalar(struct builder *b, yaml_event_t *e)
{
	if (!tag_ok(e->data.scalar.tag))
		return fail(b, ln(e->start_mark), cl(e->start_mark), "unsupported tag '%s'",
			    (const char *)e->data.scalar.tag);
	if (e->data.scalar.length > YAML_SCALAR_MAX)
		return fail(b, ln(e->start_mark), cl(e->start_mark),
			    "scalar too long (%zu bytes, more than %zu)", e->data.scalar.length,
			    (size_t)YAML_SCALAR_MAX);
	int rc = count_node(b, e->start_mark, 1);
	if (rc)
		return rc;
	struct ynode *n = new_node(b, YN_SCALAR, e->start_mark);
	if (!n)
		return err_set(ERR_NOMEM, "out of memory building the YAML tree");
	n->plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !e->data.scalar.tag;
	n->text = spec_arena_strndup(b->arena, (const char *)e->data.scalar.value,
				     e->data.scalar.length);
	if (!n->text)
		return err_set(ERR_NOMEM, "out of memory building the YAML tree");
	n->len = e->data.scalar.length;
	if (e->data.scalar.anchor) {
		rc = add_anchor(b, (const char *)e->data.scalar.anchor, n, e->start_mark);
		if (rc)
			return rc;
	}
	return attach(b, n, e->start_mark);
}

static int on_start(struct builder *b, yaml_event_t *e, enum ynode_kind kind)
{
	const yaml_char_t *tag = kind == YN_SEQ ? e->data.sequence_start.tag
						: e->data.mapping_start.tag;
	const yaml_char_t *anchor = kind == YN_SEQ ? e->data.sequence_start.anchor
						   : e->data.mapping_start.anchor;
	if (!tag_ok(tag))
		return fail(b, ln(e->start_mark), cl(e->start_mark), "unsupported tag '%s'",
			    (const char *)tag);
	if (b->depth >= YAML_DEPTH_MAX)
		return fail(b, ln(e->start_mark), cl(e->start_mark),
			    "nesting too deep (more than %d levels)", YAML_DEPTH_MAX);
	int rc = count_node(b, e->start_mark, 1);
	if (rc)
		return rc;
	struct ynode *n = new_node(b, kind, e->start_mark);
	if (!n)
		return err_set(ERR_NOMEM, "out of memory building the YAML tree");
	struct frame *f = &b->stack[b->depth++];
	memset(f, 0, sizeof(*f));
	f->node = n;
	if (anchor) {
		f->anchor = strdup((const char *)anchor);
		if (!f->anchor)
			return err_set(ERR_NOMEM, "out of memory for anchors");
	}
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct ynode *x = *(struct ynode *const *)a, *y = *(struct ynode *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, n);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : (x->col > y->col);
}

/* Duplicate scalar keys of one mapping: sorted by text, then by position, so that the second
 * occurrence (the one to report) follows the first. */
static int check_duplicates(struct builder *b, struct ynode *map)
{
	size_t pairs = map->n / 2, k = 0;
	if (pairs < 2)
		return 0;
	struct ynode **keys = malloc(pairs * sizeof(*keys));
	if (!keys)
		return err_set(ERR_NOMEM, "out of memory checking keys");
	for (size_t i = 0; i < pairs; i++)
		if (map->kids[2 * i]->kind == YN_SCALAR)
			keys[k++] = map->kids[2 * i];
	qsort(keys, k, sizeof(*keys), key_cmp);
	int rc = 0;
	for (size_t i = 1; i < k && !rc; i++) {
		const struct ynode *x = keys[i - 1], *y = keys[i];
		if (x->len == y->len && memcmp(x->text, y->text, x->len) == 0)
			rc = fail(b, y->line, y->col, "duplicate key '%s' (first at line %u)",
				  y->text, x->line);
	}
	free(keys);
	return rc;
}

static int on_end(struct builder *b, yaml_event_t *e)
{
	struct frame *f = &b->stack[b->depth - 1];
	struct ynode *n = f->node;
	int rc = 0;
	if (f->n) {
		n->kids = spec_arena_calloc(b->arena, f->n, sizeof(*n->kids));
		if (!n->kids)
			rc = err_set(ERR_NOMEM, "out of memory building the YAML tree");
		else
			memcpy(n->kids, f->kids, f->n * sizeof(*n->kids));
	}
	n->n = f->n;
	for (size_t i = 0; i < f->n && !rc; i++) {
		if (f->kids[i]->height + 1 > n->height)
			n->height = f->kids[i]->height + 1;
		n->weight += f->kids[i]->weight;
	}
	free(f->kids);
	f->kids = NULL;
	if (!rc && n->kind == YN_MAP)
		rc = check_duplicates(b, n);
	if (!rc && f->anchor)
		rc = add_anchor(b, f->anchor, n, e->start_mark);
	free(f->anchor);
	f->anchor = NULL;
	b->depth--;
	if (!rc)
		rc = attach(b, n, e->start_mark);
	return rc;
}

static int on_alias(struct builder *b, yaml_event_t *e)
{
	const char *name = (const char *)e->data.alias.anchor;
	struct ynode *target = NULL;
	for (size_t i = b->n_anchors; i-- > 0;)
		if (strcmp(b->anchors[i].name, name) == 0) {
			target = b->anchors[i].node;
			break;
		}
	if (!target)
		return fail(b, ln(e->start_mark), cl(e->start_mark),
			    "alias '*%s' names no finished anchor", name);
	if (++b->aliases > YAML_ALIAS_MAX)
		return fail(b, ln(e->start_mark), cl(e->start_mark),
			    "too many alias expansions (more than %d)", YAML_ALIAS_MAX);
	if (b->depth + target->height > YAML_DEPTH_MAX)
		return fail(b, ln(e->start_mark), cl(e->start_mark),
			    "alias '*%s' nests too deep (more than %d levels)", name,
			    YAML_DEPTH_MAX);
	int rc = count_node(b, e->start_mark, target->weight);
	if (rc)
		return rc;
	return attach(b, target, e->start_mark);
}

static int on_event(struct builder *b, yaml_event_t *e, int *docs, bool *done)
{
	switch (e->type) {
	case YAML_STREAM_END_EVENT:
		*done = true;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1)
			return fail(b, ln(e->start_mark), cl(e->start_mark),
				    "a second YAML document (expected one)");
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(b, e);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, e, YN_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, e, YN_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b, e);
	case YAML_ALIAS_EVENT:
		return on_alias(b, e);
	default:
		return 0;
	}
}

static void builder_finish(struct builder *b)
{
	for (size_t i = 0; i < b->depth; i++) {
		free(b->stack[i].kids);
		free(b->stack[i].anchor);
	}
	for (size_t i = 0; i < b->n_anchors; i++)
		free(b->anchors[i].name);
	free(b->anchors);
}

int ytree_parse(struct spec_arena *arena, const char *file, const char *text, size_t len,
		struct spec_diag_list *diags, struct ynode **root)
{
	struct builder b = {.arena = arena, .file = file, .text = text, .len = len, .diags = diags};
	*root = NULL;
	if (len > YAML_DOC_MAX)
		return fail(&b, 1, 1, "document too large (%zu bytes, more than %zu)", len,
			    (size_t)YAML_DOC_MAX);
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return err_set(ERR_NOMEM, "libyaml could not start");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	int rc = 0, docs = 0;
	bool done = false;
	while (!rc && !done) {
		yaml_event_t e;
		if (!yaml_parser_parse(&p, &e)) {
			rc = parser_error(&b, &p);
			break;
		}
		rc = on_event(&b, &e, &docs, &done);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	builder_finish(&b);
	if (!rc)
		*root = b.root;
	return rc;
}

bool ynode_is_null(const struct ynode *n)
{
	if (!n || n->kind != YN_SCALAR || !n->plain)
		return false;
	return n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0 ||
	       strcmp(n->text, "Null") == 0 || strcmp(n->text, "NULL") == 0;
}

struct flowbuf {
	char *p;
	size_t n, cap;
	bool over;
};

static void fb_put(struct flowbuf *f, const char *s, size_t len)
{
	if (f->over)
		return;
	if (f->n + len + 1 > YAML_SCALAR_MAX) {
		f->over = true;
		return;
	}
	if (f->n + len + 1 > f->cap) {
		size_t cap = f->cap ? f->cap : 64;
		while (cap < f->n + len + 1)
			cap *= 2;
		char *p = realloc(f->p, cap);
		if (!p) {
			f->over = true;
			return;
		}
		f->p = p;
		f->cap = cap;
	}
	memcpy(f->p + f->n, s, len);
	f->n += len;
	f->p[f->n] = '\0';
}

static void fb_scalar(struct flowbuf *f, const struct ynode *n)
{
	if (n->plain) {
		fb_put(f, n->text, n->len);
		return;
	}
	fb_put(f, "\"", 1);
	for (size_t i = 0; i < n->len; i++) {
		char c = n->text[i];
		if (c == '"' || c == '\\')
			fb_put(f, "\\", 1);
		if (c == '\n')
			fb_put(f, "\\n", 2);
		else
			fb_put(f, &c, 1);
	}
	fb_put(f, "\"", 1);
}

/* Depth is bounded by YAML_DEPTH_MAX (checked when the tree was built). */
static void fb_node(struct flowbuf *f, const struct ynode *n)
{
	if (n->kind == YN_SCALAR) {
		fb_scalar(f, n);
		return;
	}
	bool map = n->kind == YN_MAP;
	fb_put(f, map ? "{" : "[", 1);
	for (size_t i = 0; i < n->n && !f->over; i++) {
		if (i)
			fb_put(f, map && i % 2 ? ": " : ", ", 2);
		fb_node(f, n->kids[i]);
	}
	fb_put(f, map ? "}" : "]", 1);
}

char *ynode_flow_text(struct spec_arena *arena, const struct ynode *n, size_t *len)
{
	struct flowbuf f = {0};
	fb_put(&f, "", 0);
	fb_node(&f, n);
	char *out = NULL;
	if (!f.over) {
		out = spec_arena_strndup(arena, f.p, f.n);
		if (out && len)
			*len = f.n;
	}
	free(f.p);
	return out;
}
