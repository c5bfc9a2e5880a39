/* The adapter table (adapters.h): its YAML loader, the expression parser, the lookup for a case,
 * and the run of a case through its adapter. */
#include "executors/adapters.h"

#include <ctype.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "adapters_priv.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/num.h"
#include "executors/inputs.h"

/* ---- expressions ---- */

struct parser {
	struct exec_adapter *a;
	const char *s, *p;
	int depth;
};

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static int new_node(struct parser *ps)
{
	if (ps->a->nnodes == EXEC_ADAPTER_NODES_MAX)
		return err_set(ERR_LIMIT, "more than %d terms", EXEC_ADAPTER_NODES_MAX);
	memset(&ps->a->nodes[ps->a->nnodes], 0, sizeof(struct node));
	return ps->a->nnodes++;
}

static int parse_expr(struct parser *ps);

static int parse_call(struct parser *ps, int id, const char *name)
{
	struct node *nd = &ps->a->nodes[id];
	nd->kind = N_CALL;
	if (!(nd->info = spyre_op_find(name)))
		return err_set(ERR_INVAL, "'%s' is not an op of the emulator", name);
	if (++ps->depth > EXEC_ADAPTER_DEPTH_MAX)
		return err_set(ERR_LIMIT, "calls nested deeper than %d", EXEC_ADAPTER_DEPTH_MAX);
	ps->p++; /* '(' */
	for (;;) {
		skip_ws(ps);
		if (nd->nargs == SPYRE_OP_INPUTS_MAX)
			return err_set(ERR_INVAL, "%s: more than %d arguments", name,
				       SPYRE_OP_INPUTS_MAX);
		int arg = parse_expr(ps);
		if (arg < 0)
			return arg;
		nd = &ps->a->nodes[id];
		nd->args[nd->nargs++] = arg;
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p != ')')
			return err_set(ERR_INVAL, "expected ',' or ')' at column %d",
				       (int)(ps->p - ps->s) + 1);
		ps->p++;
		break;
	}
	ps->depth--;
	return id;
}

static int parse_name(struct parser *ps, int id)
{
	char name[NAME_MAX_];
	size_t n = 0;
	while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
		if (n + 1 == sizeof(name))
			return err_set(ERR_INVAL, "a name longer than %d bytes", NAME_MAX_ - 1);
		name[n++] = *ps->p++;
	}
	name[n] = '\0';
	skip_ws(ps);
	if (*ps->p == '(')
		return parse_call(ps, id, name);
	struct node *nd = &ps->a->nodes[id];
	if (strcmp(name, "exponent") == 0) {
		nd->kind = N_EXPONENT;
		return id;
	}
	for (int i = 0; i < ps->a->nin; i++)
		if (strcmp(ps->a->inputs[i], name) == 0) {
			nd->kind = N_INPUT;
			nd->input = i;
			return id;
		}
	return err_set(ERR_INVAL, "'%s' is neither an input nor a call", name);
}

static int parse_expr(struct parser *ps)
{
	skip_ws(ps);
	int id = new_node(ps);
	if (id < 0)
		return id;
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_')
		return parse_name(ps, id);
	const char *start = ps->p;
	while (*ps->p && strchr("0123456789.eE+-", *ps->p))
		ps->p++;
	double v;
	if (ps->p == start ||
	    num_parse_doublen(&v, start, (size_t)(ps->p - start), -1e300, 1e300) != 0)
		return err_set(ERR_INVAL, "expected a call, a name or a number at column %d",
			       (int)(start - ps->s) + 1);
	ps->a->nodes[id].kind = N_NUM;
	ps->a->nodes[id].num = v;
	return id;
}

static int parse_expression(struct exec_adapter *a)
{
	struct parser ps = { a, a->expr, a->expr, 0 };
	a->nnodes = 0;
	int root = parse_expr(&ps);
	if (root < 0)
		return root;
	skip_ws(&ps);
	if (*ps.p)
		return err_set(ERR_INVAL, "trailing text at column %d", (int)(ps.p - ps.s) + 1);
	if (a->nodes[root].kind != N_CALL)
		return err_set(ERR_INVAL, "the expression must be a call");
	a->root = root;
	return 0;
}

/* ---- the YAML table ---- */

struct yctx {
	yaml_document_t *doc;
	const char *file;
};

static int yerr(const struct yctx *y, const yaml_node_t *n, const char *fmt, const char *what)
{
	return err_set(ERR_INVAL, "%s:%zu:%zu: %s%s", y->file, n->start_mark.line + 1,
		       n->start_mark.column + 1, fmt, what);
}

static const char *yscalar(const struct yctx *y, yaml_node_t *n, size_t max, const char *key)
{
	if (!n || n->type != YAML_SCALAR_NODE) {
		if (n)
			yerr(y, n, "want a scalar for ", key);
		return NULL;
	}
	if (n->data.scalar.length >= max) {
		yerr(y, n, "too long: ", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

/* A sequence of scalars into `out` (rows of `width` bytes). Count or a negative code. */
static int yseq(const struct yctx *y, yaml_node_t *n, char *out, size_t width, int cap,
		const char *key)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return yerr(y, n, "want a list for ", key);
	int count = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *c = yaml_document_get_node(y->doc, *it);
		if (count == cap)
			return yerr(y, c, "too many items in ", key);
		const char *s = yscalar(y, c, width, key);
		if (!s)
			return ERR_INVAL;
		snprintf(out + (size_t)count * width, width, "%s", s);
		count++;
	}
	return count;
}

static int take_dtypes(const struct yctx *y, struct exec_adapter *a, yaml_node_t *v)
{
	char names[SPEC_DTYPE_COUNT][16];
	int n = yseq(y, v, &names[0][0], sizeof(names[0]), SPEC_DTYPE_COUNT, "dtypes");
	for (int i = 0; i < n; i++) {
		enum spec_dtype d;
		if (testspecs_dtype_parse(names[i], false, &d) != 0)
			return yerr(y, v, "unknown dtype in ", "dtypes");
		a->dtypes |= (uint64_t)1 << d;
	}
	return n < 0 ? n : 0;
}

static int take_exponents(const struct yctx *y, struct exec_adapter *a, yaml_node_t *v)
{
	char vals[EXEC_ADAPTER_VALUES_MAX][32];
	int n = yseq(y, v, &vals[0][0], sizeof(vals[0]), EXEC_ADAPTER_VALUES_MAX, "exponent");
	for (int i = 0; i < n; i++)
		if (num_parse_double(&a->exponents[i], vals[i], -1e6, 1e6) != 0)
			return yerr(y, v, "not a number in ", "exponent");
	a->nexp = n < 0 ? 0 : n;
	return n < 0 ? n : 0;
}

static int take_key(const struct yctx *y, struct exec_adapter *a, const char *k, yaml_node_t *v)
{
	const char *s;
	int n = 0;
	if (!strcmp(k, "name") || !strcmp(k, "reference") || !strcmp(k, "expr")) {
		size_t max = k[0] == 'n'   ? sizeof(a->name)
			     : k[0] == 'r' ? NAME_MAX_
					   : sizeof(a->expr);
		if (!(s = yscalar(y, v, max, k)))
			return ERR_INVAL;
		snprintf(k[0] == 'n'   ? a->name
			 : k[0] == 'r' ? a->reference
				       : a->expr,
			 max, "%s", s);
	} else if (!strcmp(k, "ops")) {
		n = yseq(y, v, &a->ops[0][0], sizeof(a->ops[0]), EXEC_ADAPTER_OPS_MAX, k);
		a->nops = n < 0 ? 0 : n;
	} else if (!strcmp(k, "inputs")) {
		n = yseq(y, v, &a->inputs[0][0], sizeof(a->inputs[0]), SPYRE_OP_INPUTS_MAX, k);
		a->nin = n < 0 ? 0 : n;
	} else if (!strcmp(k, "init")) {
		n = yseq(y, v, &a->init[0][0], sizeof(a->init[0]), SPYRE_OP_INPUTS_MAX, k);
		a->ninit = n < 0 ? 0 : n;
	} else if (!strcmp(k, "dtypes")) {
		return take_dtypes(y, a, v);
	} else if (!strcmp(k, "exponent")) {
		return take_exponents(y, a, v);
	} else {
		return yerr(y, v, "unknown key ", k);
	}
	return n < 0 ? n : 0;
}

static int check_adapter(const struct yctx *y, struct exec_adapter *a, yaml_node_t *n)
{
	if (!a->name[0] || !a->nops || !a->reference[0] || !a->nin || !a->expr[0])
		return yerr(y, n, "an adapter needs name, ops, reference, inputs and expr", "");
	int want = exec_reference_nin(a->reference);
	if (!want)
		return yerr(y, n, "no float64 reference for ", a->reference);
	if (want != a->nin)
		return yerr(y, n, "the reference's input count differs from inputs: ", a->name);
	for (int i = 0; i < a->ninit; i++)
		if (!exec_init_known(a->init[i]))
			return yerr(y, n, "unknown init kind ", a->init[i]);
	if (parse_expression(a) != 0) {
		char why[256]; /* err_set formats into the buffer err_last() points at */
		snprintf(why, sizeof(why), "%s", err_last());
		return err_set(ERR_INVAL, "%s:%zu:%zu: adapter %s: expr: %s", y->file,
			       n->start_mark.line + 1, n->start_mark.column + 1, a->name, why);
	}
	return 0;
}

static int take_adapter(const struct yctx *y, struct exec_adapters *t, yaml_node_t *n)
{
	if (n->type != YAML_MAPPING_NODE)
		return yerr(y, n, "an adapter is a mapping", "");
	if (t->n == EXEC_ADAPTERS_MAX)
		return yerr(y, n, "too many adapters", "");
	struct exec_adapter *a = &t->v[t->n];
	memset(a, 0, sizeof(*a));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(y->doc, p->key);
		const char *k = yscalar(y, kn, 32, "a key");
		if (!k || take_key(y, a, k, yaml_document_get_node(y->doc, p->value)) != 0)
			return ERR_INVAL;
	}
	if (check_adapter(y, a, n) != 0)
		return ERR_INVAL;
	t->n++;
	return 0;
}

static int take_root(const struct yctx *y, struct exec_adapters *t)
{
	yaml_node_t *root = yaml_document_get_root_node(y->doc);
	if (!root || root->type != YAML_MAPPING_NODE ||
	    root->data.mapping.pairs.top - root->data.mapping.pairs.start != 1)
		return err_set(ERR_INVAL, "%s: want one key, `adapters:`", y->file);
	yaml_node_pair_t *p = root->data.mapping.pairs.start;
	const char *k = yscalar(y, yaml_document_get_node(y->doc, p->key), 32, "the root key");
	yaml_node_t *seq = yaml_document_get_node(y->doc, p->value);
	if (!k || strcmp(k, "adapters") != 0 || seq->type != YAML_SEQUENCE_NODE)
		return err_set(ERR_INVAL, "%s: want `adapters:` with a list", y->file);
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++)
		if (take_adapter(y, t, yaml_document_get_node(y->doc, *it)) != 0)
			return ERR_INVAL;
	return 0;
}

int exec_adapters_parse(struct exec_adapters **out, const char *data, size_t len, const char *name)
{
	*out = NULL;
	if (len > EXEC_ADAPTER_FILE_MAX)
		return err_set(ERR_LIMIT, "%s: more than %d bytes", name, EXEC_ADAPTER_FILE_MAX);
	struct exec_adapters *t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(ERR_NOMEM, "out of memory loading %s", name);
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	int rc;
	if (!yaml_parser_load(&parser, &doc)) {
		rc = err_set(ERR_INVAL, "%s:%zu:%zu: %s", name, parser.problem_mark.line + 1,
			     parser.problem_mark.column + 1,
			     parser.problem ? parser.problem : "YAML error");
	} else {
		struct yctx y = { &doc, name };
		rc = take_root(&y, t);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	if (rc == 0 && !(t->source = malloc(len + 1)))
		rc = err_set(ERR_NOMEM, "out of memory loading %s", name);
	if (rc) {
		free(t);
		return rc;
	}
	memcpy(t->source, data, len);
	t->source[len] = '\0';
	t->source_len = len;
	*out = t;
	return 0;
}

int exec_adapters_load(struct exec_adapters **out, const char *path)
{
	char *data = NULL;
	size_t len = 0;
	int rc = fs_read_file(&data, &len, path, EXEC_ADAPTER_FILE_MAX);
	if (rc)
		return err_prefix("adapters %s: ", path);
	rc = exec_adapters_parse(out, data, len, path);
	free(data);
	return rc;
}

void exec_adapters_destroy(struct exec_adapters *t)
{
	if (t)
		free(t->source);
	free(t);
}

const char *exec_adapters_source(const struct exec_adapters *t, size_t *len)
{
	*len = t ? t->source_len : 0;
	return t ? t->source : NULL;
}

size_t exec_adapters_count(const struct exec_adapters *t)
{
	return t ? t->n : 0;
}

const struct exec_adapter *exec_adapters_at(const struct exec_adapters *t, size_t i)
{
	return t && i < t->n ? &t->v[i] : NULL;
}

const char *exec_adapter_name(const struct exec_adapter *a)
{
	return a->name;
}

/* ---- lookup ---- */

static bool fits(const struct exec_adapter *a, const struct exec_case *c)
{
	if (a->nin != c->nin)
		return false;
	if (a->dtypes && (c->dtype < 0 || c->dtype >= 64 || !(a->dtypes >> c->dtype & 1)))
		return false;
	if (!a->nexp)
		return true;
	for (int i = 0; i < a->nexp; i++)
		if (a->exponents[i] == c->params.scalar)
			return true;
	return false;
}

/* Whether the case is unsupported only because the emulator lacks its op (testspecs' reasons
 * for that; a case the specs refuse is never adapted). */
static bool emulator_lacks_op(const struct exec_case *c)
{
	return !c->emu_op[0] && (!c->why[0] || strncmp(c->why, "no emulator op", 14) == 0 ||
				 strncmp(c->why, "the emulator lacks", 18) == 0);
}

const struct exec_adapter *exec_adapters_find(const struct exec_adapters *t,
					      const struct exec_case *c)
{
	if (!emulator_lacks_op(c))
		return NULL;
	for (size_t i = 0; t && i < t->n; i++)
		for (int j = 0; j < t->v[i].nops; j++)
			if (strcmp(t->v[i].ops[j], c->op) == 0 && fits(&t->v[i], c))
				return &t->v[i];
	return NULL;
}

int exec_adapters_load_beside(struct exec_adapters **out, const char *const *paths, size_t n)
{
	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		char copy[4096], path[4096 + 32];
		struct stat st;
		snprintf(copy, sizeof(copy), "%s", paths[i]);
		bool dir = stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode);
		snprintf(path, sizeof(path), "%s/adapters/adapters.yaml",
			 dir ? paths[i] : dirname(copy));
		if (access(path, R_OK) == 0)
			return exec_adapters_load(out, path);
	}
	return 0;
}

int exec_adapters_count_kinds(const struct exec_adapters *t, const struct spec_case *cases,
			      size_t n, struct exec_kind_counts *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (!cases[i].unsupported) {
			out->native++;
			continue;
		}
		struct exec_case c;
		if (exec_case_from_spec(&c, &cases[i]) != 0)
			return -1;
		if (c.kind != SPEC_CASE_GRAPH && exec_adapters_find(t, &c))
			out->adapted++;
		else
			out->unsupported++;
	}
	return 0;
}
