/* tests.jsonl: every test of the head commit with what it depends on, by construction: the
 * functions and classes it uses directly, every function it reaches through calls, the native
 * ops it calls or reaches, and the op set it is parametrised over. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "fixture_history.h"

static int qualname(struct fx_gen *g, struct buf *b, uint32_t n)
{
	const struct fx_node *x = &g->nodes[n];
	const char *mod = g->mods[x->mod].dotted;
	if (x->kind == FX_METHOD)
		return buf_appendf(b, "\"%s.%s.%s\"", mod, g->nodes[x->cls].name, x->name);
	return buf_appendf(b, "\"%s.%s\"", mod, x->name);
}

/* Appends the reach of test t (functions, then ops) to `fn` and `ops`. */
static int reach(struct fx_gen *g, const struct fx_test *t, struct buf *fn, struct buf *ops,
		 struct fx_vec *stack)
{
	fixture__truth_begin(g); /* a fresh epoch for the node marks; ops are marked in-line */
	int rc = 0;
	uint32_t nops = 0, seen_ops[64];
	stack->n = 0;
	for (int k = 0; !rc && k < t->nuses; k++)
		if (g->node_mark[t->uses[k]] != g->epoch) {
			g->node_mark[t->uses[k]] = g->epoch;
			rc = fixture__vec_push(stack, t->uses[k]);
		}
	for (int k = 0; k < t->nops && nops < 64; k++)
		seen_ops[nops++] = t->ops[k];
	int first = 1;
	while (!rc && stack->n) {
		uint32_t i = stack->v[--stack->n];
		const struct fx_node *n = &g->nodes[i];
		rc = first ? 0 : buf_append_char(fn, ',');
		first = 0;
		rc = rc ? rc : qualname(g, fn, i);
		if (n->op != FX_NONE && nops < 64) {
			int dup = 0;
			for (uint32_t k = 0; k < nops; k++)
				dup |= seen_ops[k] == n->op;
			if (!dup)
				seen_ops[nops++] = n->op;
		}
		for (int k = 0; !rc && k < n->ncalls; k++)
			if (g->node_mark[n->calls[k]] != g->epoch) {
				g->node_mark[n->calls[k]] = g->epoch;
				rc = fixture__vec_push(stack, n->calls[k]);
			}
	}
	for (uint32_t k = 0; !rc && k < nops; k++)
		rc = buf_appendf(ops, "%s\"%s\"", k ? "," : "", g->ops[seen_ops[k]].name);
	return rc;
}

static int test_line(struct fx_gen *g, uint32_t ti, struct buf *b, struct buf *fn, struct buf *ops,
		     struct fx_vec *stack)
{
	static const char *const kinds[] = { "plain", "device", "ops" };
	const struct fx_test *t = &g->tests[ti];
	buf_reset(b);
	buf_reset(fn);
	buf_reset(ops);
	int rc = buf_append_str(b, "{\"id\":\"");
	rc = rc ? rc : fixture__test_id(g, b, ti);
	rc = rc ? rc : buf_appendf(b, "\",\"kind\":\"%s\",\"uses\":[", kinds[t->kind % 3]);
	for (int k = 0; !rc && k < t->nuses; k++) {
		rc = k ? buf_append_char(b, ',') : 0;
		rc = rc ? rc : qualname(g, b, t->uses[k]);
	}
	rc = rc ? rc : reach(g, t, fn, ops, stack);
	rc = rc ? rc
		: buf_appendf(b, "],\"functions\":[%s],\"ops\":[%s],\"opset\":", buf_str(fn),
			      buf_str(ops));
	const char *set = fixture__opset_name(t->opset);
	if (!rc && set && t->opset == FX_SET_LIST)
		rc = buf_appendf(
		    b, "[\"%s\"%s%s%s]", g->ops[t->list_ops[0]].name, t->nlist > 1 ? ",\"" : "",
		    t->nlist > 1 ? g->ops[t->list_ops[1]].name : "", t->nlist > 1 ? "\"" : "");
	else if (!rc)
		rc = set ? buf_appendf(b, "\"%s\"", set) : buf_append_str(b, "null");
	/* the shapes through which it reaches what it uses ("helper", "inherited", ...) */
	uint32_t mask = fixture__test_bits(t);
	for (int k = 0; k < t->nuses; k++)
		mask |= 1u << t->via[k];
	rc = rc ? rc : buf_append_str(b, ",\"shapes\":[");
	for (unsigned k = 0, first = 1; !rc && k < FX_SHAPE_BITS; k++)
		if (mask & (1u << k)) {
			rc = buf_appendf(b, "%s\"%s\"", first ? "" : ",", fixture__shape_name(k));
			first = 0;
		}
	return rc ? rc : buf_append_str(b, "]}\n");
}

int fixture__write_tests_jsonl(struct fx_gen *g, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return err_set_errno(ERR_IO, "fixture: cannot create %s", path);
	struct buf b, fn, ops;
	buf_init(&b, 4 * MIB);
	buf_init(&fn, 4 * MIB);
	buf_init(&ops, 1 * MIB);
	struct fx_vec stack = { 0 };
	int rc = 0;
	/* in file order, then as the file lists them */
	for (uint32_t fi = 0; !rc && fi < g->ntfiles; fi++)
		for (uint32_t k = 0; !rc && k < g->tfiles[fi].tests.n; k++) {
			rc = test_line(g, g->tfiles[fi].tests.v[k], &b, &fn, &ops, &stack);
			if (rc)
				rc = err_set(rc, "fixture: a tests.jsonl line is too long");
			else if (fwrite(b.data, 1, b.len, f) != b.len)
				rc = err_set_errno(ERR_IO, "fixture: writing %s", path);
		}
	if (fclose(f) && !rc)
		rc = err_set_errno(ERR_IO, "fixture: closing %s", path);
	buf_finish(&b);
	buf_finish(&fn);
	buf_finish(&ops);
	fixture__vec_free(&stack);
	return rc;
}
