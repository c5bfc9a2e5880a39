/* What the generated op database says about each op's cases, with its ground truth
 * (.ground_truth/opinfos.jsonl): each entry's dtypes= (a common_dtype helper, a helper with
 * _and(...), or a literal tuple) and the shapes its sample_inputs_<op> function builds, written
 * as PyTorch's common_methods_invocations.py writes them, from the size constants S, M, L, XS
 * (bound in common_methods_invocations.py itself, imported from opinfo/core.py by the
 * definitions files) and integer literals; one op in four builds no literal shape (its samples
 * come from `make()` alone). Both are chosen by the op's index, so they hold at every commit
 * (the history edits only an entry's tolerance and its function's `rev`). */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "fixture_int.h"

/* A form the generator writes, and what it means (the truth's text). */
struct form {
	const char *code, *truth;
};

static const struct form dtype_forms[] = {
	{ "floating_types()", "float32,float64" },
	{ "floating_types_and(torch.half)", "float16,float32,float64" },
	{ "(torch.float16, torch.bfloat16, torch.float32)", "float16,bfloat16,float32" },
};

static const struct form shape_forms[] = {
	{ "((S, M), (XS,))", "(5, 10);(3,)" },
	{ "((M, M), (S, S, S))", "(10, 10);(5, 5, 5)" },
	{ "((L, 64), (2, S))", "(20, 64);(2, 5)" },
	{ NULL, NULL },
};

#define NFORMS(a) (sizeof(a) / sizeof((a)[0]))

void fixture__op_dtypes(uint32_t op, const char **expr, const char **truth)
{
	*expr = dtype_forms[op % NFORMS(dtype_forms)].code;
	*truth = dtype_forms[op % NFORMS(dtype_forms)].truth;
}

/* Ops of no ufunc or reduction family (mm, bmm, cat, ...) take square shapes that fit them. */
void fixture__op_shapes(const struct fx_op *o, uint32_t op, const char **code, const char **truth)
{
	size_t k = o->kind == FX_OP_OTHER ? 1 : op % NFORMS(shape_forms);
	*code = shape_forms[k].code;
	*truth = shape_forms[k].truth;
}

static int truth_line(struct fx_gen *g, struct buf *b, uint32_t i, const char *variant)
{
	const struct fx_op *o = &g->ops[i];
	char path[PATH_TEXT_MAX];
	const char *dexpr, *dtruth, *scode, *struth;
	fixture__opinfo_path(g, path, sizeof path, variant ? 0 : o->info_file);
	fixture__op_dtypes(i, &dexpr, &dtruth);
	fixture__op_shapes(o, i, &scode, &struth);
	(void)dexpr, (void)scode;
	int rc = buf_appendf(b, "{\"name\":\"%s\",\"variant\":", o->name);
	rc = rc ? rc : variant ? buf_appendf(b, "\"%s\"", variant) : buf_appendf(b, "null");
	rc = rc ? rc
		: buf_appendf(b,
			      ",\"file\":\"%s\",\"dtypes\":\"%s\",\"sample_func\":"
			      "\"sample_inputs_%s\",\"shapes\":",
			      path, dtruth, o->name);
	rc = rc ? rc : struth ? buf_appendf(b, "\"%s\"}\n", struth) : buf_appendf(b, "null}\n");
	return rc;
}

int fixture__write_opinfo_truth(struct fx_gen *g, const char *dir, uint32_t variant_op,
				const char *variant_name)
{
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof path, "%s/.ground_truth/opinfos.jsonl", dir);
	struct buf b;
	buf_init(&b, 4 * MIB);
	int rc = 0;
	for (uint32_t i = 0; !rc && i < g->nops; i++)
		if (g->ops[i].has_info)
			rc = truth_line(g, &b, i, NULL);
	if (!rc && variant_op != FX_NONE)
		rc = truth_line(g, &b, variant_op, variant_name);
	if (rc)
		rc = err_set(rc, "fixture: opinfos.jsonl is too large");
	else if ((rc = fs_atomic_write(path, b.data, b.len, 0644)) < 0)
		err_prefix("fixture: ");
	buf_finish(&b);
	return rc;
}
