/* Reading an op graph (graph.h) from YAML. The document becomes a small tree of nodes (at most
 * GRAPH_NODES_MAX, nested at most GRAPH_DEPTH_MAX deep, scalars at most GRAPH_SCALAR_MAX bytes,
 * no anchors or aliases), then the tree is walked into struct spyre_graph. Every error names
 * the place: "origin:line:col: ...". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/num.h"
#include "spyre-emu/graph.h"

#define GRAPH_NODES_MAX  4096
#define GRAPH_DEPTH_MAX  6
#define GRAPH_SCALAR_MAX 64
#define GRAPH_DOC_MAX    (64 * 1024)

enum gkind { G_SCALAR, G_SEQ, G_MAP };

struct gnode {
	enum gkind kind;
	char text[GRAPH_SCALAR_MAX];
	int first, next; /* first child, next sibling (-1: none); a map's children alternate
			    key, value */
	int line, col;
};

struct gtree {
	struct gnode n[GRAPH_NODES_MAX];
	int count;
	const char *origin;
};

static int at(const struct gtree *t, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int at(const struct gtree *t, int i, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(ERR_INVAL, "%s:%d:%d: %s", t->origin, i >= 0 ? t->n[i].line : 1,
		       i >= 0 ? t->n[i].col : 1, msg);
}

static int new_node(struct gtree *t, enum gkind k, const yaml_mark_t *m)
{
	if (t->count == GRAPH_NODES_MAX)
		return err_set(ERR_LIMIT, "%s:%zu:%zu: more than %d YAML nodes", t->origin,
			       m->line + 1, m->column + 1, GRAPH_NODES_MAX);
	struct gnode *n = &t->n[t->count];
	memset(n, 0, sizeof(*n));
	n->kind = k;
	n->first = n->next = -1;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	return t->count++;
}

/* Reads one node (whose first event is `ev`) and its children; returns its index. */
static int read_node(struct gtree *t, yaml_parser_t *p, yaml_event_t *ev, int depth)
{
	const yaml_mark_t *m = &ev->start_mark;
	if (depth > GRAPH_DEPTH_MAX)
		return err_set(ERR_LIMIT, "%s:%zu:%zu: nested more than %d deep", t->origin,
			       m->line + 1, m->column + 1, GRAPH_DEPTH_MAX);
	if (ev->type == YAML_ALIAS_EVENT ||
	    (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor) ||
	    (ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor) ||
	    (ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor))
		return err_set(ERR_INVAL, "%s:%zu:%zu: anchors and aliases are not allowed",
			       t->origin, m->line + 1, m->column + 1);
	if (ev->type == YAML_SCALAR_EVENT) {
		if (ev->data.scalar.length >= GRAPH_SCALAR_MAX ||
		    memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
			return err_set(ERR_LIMIT, "%s:%zu:%zu: a scalar of %zu bytes (at most %d)",
				       t->origin, m->line + 1, m->column + 1,
				       ev->data.scalar.length, GRAPH_SCALAR_MAX - 1);
		int i = new_node(t, G_SCALAR, m);
		if (i >= 0)
			memcpy(t->n[i].text, ev->data.scalar.value, ev->data.scalar.length);
		return i;
	}
	enum gkind k = ev->type == YAML_SEQUENCE_START_EVENT ? G_SEQ : G_MAP;
	if (ev->type != YAML_SEQUENCE_START_EVENT && ev->type != YAML_MAPPING_START_EVENT)
		return err_set(ERR_INVAL, "%s:%zu:%zu: unexpected YAML event", t->origin,
			       m->line + 1, m->column + 1);
	int self = new_node(t, k, m);
	if (self < 0)
		return self;
	int last = -1;
	for (;;) {
		yaml_event_t c;
		if (!yaml_parser_parse(p, &c))
			return err_set(ERR_INVAL, "%s:%zu:%zu: %s", t->origin,
				       p->problem_mark.line + 1, p->problem_mark.column + 1,
				       p->problem ? p->problem : "bad YAML");
		if (c.type == YAML_SEQUENCE_END_EVENT || c.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&c);
			return self;
		}
		int ch = read_node(t, p, &c, depth + 1);
		yaml_event_delete(&c);
		if (ch < 0)
			return ch;
		if (last < 0)
			t->n[self].first = ch;
		else
			t->n[last].next = ch;
		last = ch;
	}
}

static int read_tree(struct gtree *t, const char *text, size_t len)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return err_set(ERR_NOMEM, "%s: cannot create a YAML parser", t->origin);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	int root = -1, rc = 0;
	for (int guard = 0; rc == 0 && guard < 4; guard++) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc =
			    err_set(ERR_INVAL, "%s:%zu:%zu: %s", t->origin, p.problem_mark.line + 1,
				    p.problem_mark.column + 1, p.problem ? p.problem : "bad YAML");
			break;
		}
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT) {
			root = read_node(t, &p, &ev, 0);
			rc = root < 0 ? root : 0;
			yaml_event_delete(&ev);
			break;
		}
		int end = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		if (end)
			break;
	}
	yaml_parser_delete(&p);
	if (rc == 0 && (root < 0 || t->n[root].kind != G_MAP))
		rc = at(t, root, "a graph is a mapping with inputs, ops and outputs");
	return rc ? rc : root;
}

/* ---- the walk ---- */

static int valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= SPYRE_GRAPH_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

const char *spyre_graph_tensor_name(const struct spyre_graph *g, int t)
{
	if (t < 0)
		return "?";
	if (t < g->ninputs)
		return g->input_name[t];
	return t - g->ninputs < g->nops ? g->ops[t - g->ninputs].name : "?";
}

static int find_tensor(const struct spyre_graph *g, int ntensors, const char *name)
{
	for (int t = 0; t < ntensors; t++)
		if (strcmp(spyre_graph_tensor_name(g, t), name) == 0)
			return t;
	return -1;
}

static int want(const struct gtree *t, int i, enum gkind k, const char *what)
{
	static const char *const kinds[] = { "a scalar", "a list", "a mapping" };
	if (i < 0 || t->n[i].kind != k)
		return at(t, i, "%s must be %s", what, kinds[k]);
	return 0;
}

static int read_int(const struct gtree *t, int i, int64_t *v, int64_t lo, int64_t hi,
		    const char *what)
{
	if (want(t, i, G_SCALAR, what) || num_parse_i64(v, t->n[i].text, lo, hi) != 0)
		return at(t, i, "%s: '%s' is not a whole number from %lld to %lld", what,
			  t->n[i].text, (long long)lo, (long long)hi);
	return 0;
}

static int new_name(const struct gtree *t, int i, const struct spyre_graph *g, int ntensors)
{
	if (want(t, i, G_SCALAR, "a name"))
		return ERR_INVAL;
	if (!valid_name(t->n[i].text))
		return at(t, i, "'%s' is not a name (1 to %d of A-Z, a-z, 0-9, _)", t->n[i].text,
			  SPYRE_GRAPH_NAME_MAX - 1);
	if (find_tensor(g, ntensors, t->n[i].text) >= 0)
		return at(t, i, "'%s' is defined twice", t->n[i].text);
	return 0;
}

/* Copies a name new_name() accepted (so shorter than SPYRE_GRAPH_NAME_MAX). */
static void name_copy(char dst[SPYRE_GRAPH_NAME_MAX], const char *src)
{
	size_t n = strnlen(src, SPYRE_GRAPH_NAME_MAX - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int read_inputs(const struct gtree *t, int m, struct spyre_graph *g)
{
	if (want(t, m, G_MAP, "inputs"))
		return ERR_INVAL;
	for (int k = t->n[m].first; k >= 0; k = t->n[t->n[k].next].next) {
		int v = t->n[k].next;
		if (g->ninputs == SPYRE_GRAPH_INPUTS_MAX)
			return at(t, k, "more than %d inputs", SPYRE_GRAPH_INPUTS_MAX);
		if (new_name(t, k, g, g->ninputs) || want(t, v, G_SEQ, "an input's shape"))
			return ERR_INVAL;
		int nd = 0;
		for (int d = t->n[v].first; d >= 0; d = t->n[d].next) {
			if (nd == SPYRE_DIMS_MAX)
				return at(t, d, "more than %d dimensions", SPYRE_DIMS_MAX);
			if (read_int(t, d, &g->input_shape[g->ninputs][nd++], 1, INT64_C(1) << 32,
				     "a size"))
				return ERR_INVAL;
		}
		if (nd == 0)
			return at(t, v, "an input needs at least one dimension");
		name_copy(g->input_name[g->ninputs], t->n[k].text);
		g->input_ndim[g->ninputs++] = nd;
	}
	return 0;
}

static int read_list(const struct gtree *t, int v, int *out, int cap, int lo, int hi,
		     const char *what)
{
	if (want(t, v, G_SEQ, what))
		return ERR_INVAL;
	int n = 0;
	for (int d = t->n[v].first; d >= 0; d = t->n[d].next) {
		int64_t x;
		if (n == cap)
			return at(t, d, "%s has more than %d entries", what, cap);
		if (read_int(t, d, &x, lo, hi, what))
			return ERR_INVAL;
		out[n++] = (int)x;
	}
	return n;
}

static int read_double(const struct gtree *t, int v, double *out, const char *what)
{
	if (want(t, v, G_SCALAR, what) || num_parse_double(out, t->n[v].text, -1e30, 1e30) != 0)
		return at(t, v, "%s: '%s' is not a number", what, t->n[v].text);
	return 0;
}

/* One op key other than name and op. */
static int read_op_key(const struct gtree *t, int k, int v, struct spyre_graph *g,
		       struct spyre_graph_op *op, int ntensors)
{
	const char *key = t->n[k].text;
	int64_t x;
	if (strcmp(key, "in") == 0) {
		if (want(t, v, G_SEQ, "in"))
			return ERR_INVAL;
		for (int d = t->n[v].first; d >= 0; d = t->n[d].next) {
			if (op->nin == SPYRE_OP_INPUTS_MAX || want(t, d, G_SCALAR, "an input name"))
				return at(t, d, "at most %d inputs, each a name",
					  SPYRE_OP_INPUTS_MAX);
			int ti = find_tensor(g, ntensors, t->n[d].text);
			if (ti < 0)
				return at(t, d, "'%s' is not an input or an earlier op",
					  t->n[d].text);
			op->in[op->nin++] = ti;
		}
		return 0;
	}
	if (strcmp(key, "dim") == 0) {
		if (read_int(t, v, &x, -SPYRE_DIMS_MAX, SPYRE_DIMS_MAX - 1, "dim"))
			return ERR_INVAL;
		op->p.dim = (int)x;
		return 0;
	}
	if (strcmp(key, "perm") == 0)
		return read_list(t, v, op->p.perm, SPYRE_DIMS_MAX, 0, SPYRE_DIMS_MAX - 1, "perm") <
			       0
			   ? ERR_INVAL
			   : 0;
	if (strcmp(key, "keepdim") == 0 || strcmp(key, "causal") == 0) {
		if (read_int(t, v, &x, 0, 1, key))
			return ERR_INVAL;
		*(key[0] == 'k' ? &op->p.keepdim : &op->p.causal) = (int)x;
		return 0;
	}
	if (strcmp(key, "eps") == 0)
		return read_double(t, v, &op->p.eps, key);
	if (strcmp(key, "exponent") == 0 || strcmp(key, "min") == 0)
		return (op->p.has_min = key[0] == 'm'), read_double(t, v, &op->p.scalar, key);
	if (strcmp(key, "max") == 0)
		return (op->p.has_max = 1), read_double(t, v, &op->p.scalar2, key);
	return at(t, k,
		  "unknown op key '%s' (name, op, in, dim, keepdim, perm, eps, exponent, "
		  "min, max, causal)",
		  key);
}

static int read_op(const struct gtree *t, int m, struct spyre_graph *g)
{
	if (want(t, m, G_MAP, "an op"))
		return ERR_INVAL;
	struct spyre_graph_op *op = &g->ops[g->nops];
	memset(op, 0, sizeof(*op));
	op->p.dim = -1;
	op->p.perm[1] = 1;
	op->line = t->n[m].line;
	int ntensors = g->ninputs + g->nops;
	for (int k = t->n[m].first; k >= 0; k = t->n[t->n[k].next].next) {
		int v = t->n[k].next;
		if (want(t, k, G_SCALAR, "an op key"))
			return ERR_INVAL;
		const char *key = t->n[k].text;
		if (strcmp(key, "name") == 0) {
			if (new_name(t, v, g, ntensors))
				return ERR_INVAL;
			name_copy(op->name, t->n[v].text);
		} else if (strcmp(key, "op") == 0) {
			if (want(t, v, G_SCALAR, "op") || !(op->op = spyre_op_find(t->n[v].text)))
				return at(t, v, "unknown op '%s' (see `spyre-ci emu ops`)",
					  t->n[v].text);
		} else if (read_op_key(t, k, v, g, op, ntensors)) {
			return ERR_INVAL;
		}
	}
	if (!op->name[0] || !op->op)
		return at(t, m, "an op needs a name and an op");
	if (op->nin != op->op->nin)
		return at(t, m, "%s takes %d inputs (%s), got %d", op->op->name, op->op->nin,
			  op->op->inputs, op->nin);
	g->nops++;
	return 0;
}

static int read_graph(const struct gtree *t, int root, struct spyre_graph *g)
{
	int ops = -1, outs = -1, ins = -1;
	for (int k = t->n[root].first; k >= 0; k = t->n[t->n[k].next].next) {
		int v = t->n[k].next;
		const char *key = t->n[k].kind == G_SCALAR ? t->n[k].text : "";
		int *slot = strcmp(key, "inputs") == 0    ? &ins
			    : strcmp(key, "ops") == 0     ? &ops
			    : strcmp(key, "outputs") == 0 ? &outs
							  : NULL;
		if (!slot)
			return at(t, k, "unknown key '%s' (inputs, ops, outputs)", key);
		if (*slot >= 0)
			return at(t, k, "'%s' given twice", key);
		*slot = v;
	}
	if (ins < 0 || ops < 0 || outs < 0)
		return at(t, root, "a graph needs inputs, ops and outputs");
	if (read_inputs(t, ins, g) || want(t, ops, G_SEQ, "ops"))
		return ERR_INVAL;
	for (int m = t->n[ops].first; m >= 0; m = t->n[m].next) {
		if (g->nops == SPYRE_GRAPH_OPS_MAX)
			return at(t, m, "more than %d ops", SPYRE_GRAPH_OPS_MAX);
		if (read_op(t, m, g))
			return ERR_INVAL;
	}
	if (want(t, outs, G_SEQ, "outputs"))
		return ERR_INVAL;
	for (int d = t->n[outs].first; d >= 0; d = t->n[d].next) {
		int ti = want(t, d, G_SCALAR, "an output")
			     ? -1
			     : find_tensor(g, g->ninputs + g->nops, t->n[d].text);
		if (ti < g->ninputs)
			return at(t, d, "'%s' is not the name of an op", t->n[d].text);
		if (g->noutputs == SPYRE_GRAPH_OUTPUTS_MAX)
			return at(t, d, "more than %d outputs", SPYRE_GRAPH_OUTPUTS_MAX);
		g->outputs[g->noutputs++] = ti;
	}
	if (g->nops == 0 || g->noutputs == 0)
		return at(t, root, "a graph needs at least one op and one output");
	return 0;
}

int spyre_graph_parse(struct spyre_graph *g, const char *text, size_t len, const char *origin)
{
	if (!origin)
		origin = "<graph>";
	if (!text)
		return err_set(ERR_INVAL, "%s: no text", origin);
	if (len > GRAPH_DOC_MAX)
		return err_set(ERR_LIMIT, "%s: %zu bytes, more than the %d a graph may have",
			       origin, len, GRAPH_DOC_MAX);
	struct gtree *t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(ERR_NOMEM, "%s: out of memory", origin);
	t->origin = origin;
	memset(g, 0, sizeof(*g));
	int root = read_tree(t, text, len);
	int rc = root < 0 ? root : read_graph(t, root, g);
	free(t);
	return rc;
}

int spyre_graph_load_file(struct spyre_graph *g, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	if (fs_read_file(&text, &len, path, GRAPH_DOC_MAX) != 0)
		return err_prefix("graph");
	int rc = spyre_graph_parse(g, text, len, path);
	free(text);
	return rc;
}
