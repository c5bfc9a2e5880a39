/* The located YAML reader: one pass over libyaml's events with an explicit stack. */
#include "yconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/err.h"
#include "common/limits.h"

struct reader {
	const char *file;
	struct yconf_node *stack[YAML_DEPTH_MAX + 1];
	size_t cap[YAML_DEPTH_MAX + 1];
	size_t depth;
	size_t nodes;
	struct yconf_node *root;
	int docs;
};

static int fail(const struct reader *r, yaml_mark_t m, int code, const char *what)
{
	return err_set(code, "%s:%zu:%zu: %s", r->file, m.line + 1, m.column + 1, what);
}

void yconf_free(struct yconf_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		yconf_free(n->kids[i]);
	free(n->kids);
	free(n->text);
	free(n);
}

static int add_kid(struct reader *r, struct yconf_node *kid, yaml_mark_t m)
{
	if (r->depth == 0) {
		if (r->root) {
			yconf_free(kid);
			return fail(r, m, ERR_INVAL, "more than one root node");
		}
		r->root = kid;
		return 0;
	}
	struct yconf_node *p = r->stack[r->depth - 1];
	size_t *cap = &r->cap[r->depth - 1];
	if (p->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct yconf_node **k = realloc(p->kids, nc * sizeof(*k));
		if (!k) {
			yconf_free(kid);
			return err_set(ERR_NOMEM, "out of memory");
		}
		p->kids = k;
		*cap = nc;
	}
	p->kids[p->n++] = kid;
	return 0;
}

static struct yconf_node *node_new(enum yconf_kind kind, yaml_mark_t m)
{
	struct yconf_node *n = calloc(1, sizeof(*n));
	if (n) {
		n->kind = kind;
		n->line = (uint32_t)m.line + 1;
		n->col = (uint32_t)m.column + 1;
	}
	return n;
}

static int on_scalar(struct reader *r, const yaml_event_t *ev)
{
	if (ev->data.scalar.anchor || (ev->data.scalar.tag && !ev->data.scalar.plain_implicit &&
				       !ev->data.scalar.quoted_implicit))
		return fail(r, ev->start_mark, ERR_INVAL, "anchors and tags are not allowed here");
	if (ev->data.scalar.length > YAML_SCALAR_MAX)
		return fail(r, ev->start_mark, ERR_LIMIT, "scalar longer than YAML_SCALAR_MAX");
	if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length))
		return fail(r, ev->start_mark, ERR_INVAL, "NUL byte in a scalar");
	struct yconf_node *n = node_new(YCONF_SCALAR, ev->start_mark);
	if (!n)
		return err_set(ERR_NOMEM, "out of memory");
	n->text = malloc(ev->data.scalar.length + 1);
	if (!n->text) {
		yconf_free(n);
		return err_set(ERR_NOMEM, "out of memory");
	}
	memcpy(n->text, ev->data.scalar.value, ev->data.scalar.length);
	n->text[ev->data.scalar.length] = 0;
	n->len = ev->data.scalar.length;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	return add_kid(r, n, ev->start_mark);
}

static int on_start(struct reader *r, const yaml_event_t *ev, enum yconf_kind kind)
{
	const yaml_char_t *anchor =
	    kind == YCONF_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
	if (anchor)
		return fail(r, ev->start_mark, ERR_INVAL, "anchors are not allowed here");
	if (r->depth >= YAML_DEPTH_MAX)
		return fail(r, ev->start_mark, ERR_LIMIT, "nesting deeper than YAML_DEPTH_MAX");
	struct yconf_node *n = node_new(kind, ev->start_mark);
	if (!n)
		return err_set(ERR_NOMEM, "out of memory");
	int rc = add_kid(r, n, ev->start_mark);
	if (rc < 0)
		return rc;
	r->cap[r->depth] = 0;
	r->stack[r->depth++] = n;
	return 0;
}

static int on_event(struct reader *r, const yaml_event_t *ev)
{
	if (++r->nodes > YAML_NODES_MAX)
		return fail(r, ev->start_mark, ERR_LIMIT, "more than YAML_NODES_MAX nodes");
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++r->docs > 1)
			return fail(r, ev->start_mark, ERR_INVAL, "a second YAML document");
		return 0;
	case YAML_ALIAS_EVENT:
		return fail(r, ev->start_mark, ERR_INVAL, "aliases are not allowed here");
	case YAML_SCALAR_EVENT:
		return on_scalar(r, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(r, ev, YCONF_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(r, ev, YCONF_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (r->depth > 0)
			r->depth--;
		return 0;
	default:
		return 0;
	}
}

static int parser_error(const struct reader *r, const yaml_parser_t *p)
{
	yaml_mark_t m = p->problem_mark;
	if (p->error == YAML_READER_ERROR) {
		m.line = 0;
		m.column = p->problem_offset;
	}
	char what[256];
	snprintf(what, sizeof(what), "%s", p->problem ? p->problem : "YAML syntax error");
	return fail(r, m, ERR_INVAL, what);
}

int yconf_parse(struct yconf_node **out, const char *file, const char *text, size_t len)
{
	*out = NULL;
	struct reader r = { .file = file };
	if (len > YAML_DOC_MAX)
		return err_set(ERR_LIMIT, "%s: larger than YAML_DOC_MAX", file);
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return err_set(ERR_NOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int rc = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = parser_error(&r, &p);
			break;
		}
		int done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&r, &ev);
		yaml_event_delete(&ev);
		if (rc < 0 || done)
			break;
	}
	yaml_parser_delete(&p);
	if (rc < 0) {
		yconf_free(r.root);
		return rc;
	}
	*out = r.root;
	return 0;
}
