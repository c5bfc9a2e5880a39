/* The spec loader: every real torch-spyre config loads clean, loaded values and their
 * locations are the ones in the file, every broken file of the corpus gives its expected
 * located error (tests/fixtures/specs/broken/EXPECTED), limits hold, aliases work. */
#include <criterion/criterion.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/limits.h"
#include "helpers.h"

static const char *const real_files[] = {
	"example_test_config.yaml",
	"test_building_blocks_config.yaml",
	"test_inductor_ops_lx_matmul_config.yaml",
	"test_torch.yaml",
};

Test(load, real_configs_load_clean)
{
	for (size_t i = 0; i < sizeof(real_files) / sizeof(*real_files); i++) {
		char path[512];
		snprintf(path, sizeof(path), SPECS_DIR "/real/%s", real_files[i]);
		struct loaded l;
		loaded_path(&l, path, true);
		cr_expect_eq(l.rc, 0, "%s: %s", path, diags_text(&l.diags));
		cr_expect_eq(l.diags.n, 0, "%s: %s", path, diags_text(&l.diags));
		cr_expect_eq(l.set->n_files, 1, "%s", path);
		struct spec_diag_list lint;
		testspecs_diags_init(&lint);
		cr_expect_eq(testspecs_lint(l.set, &lint), 0, "%s", diags_text(&lint));
		testspecs_diags_finish(&lint);
		loaded_finish(&l);
	}
}

Test(load, example_values_and_locations)
{
	struct loaded l;
	loaded_path(&l, SPECS_DIR "/real/example_test_config.yaml", false);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	const struct spec_set *s = l.set;
	cr_assert_eq(s->labels.n, 1);
	cr_expect_str_eq(s->labels.v[0].s, "regression");
	const struct spec_file *f = &s->files[0];
	cr_expect_str_eq(f->path.s, "${TORCH_ROOT}/test/test_binary_ufuncs.py");
	cr_expect_str_eq(f->resolved, "/src/pytorch/test/test_binary_ufuncs.py");
	cr_expect_eq(f->path.loc.line, 5);
	cr_expect_eq(f->path.loc.col, 13);
	cr_expect_eq(f->unlisted, SPEC_MODE_SKIP);
	cr_expect_eq(f->unlisted_loc.line, 6);
	cr_assert_eq(f->n_tests, 1);
	const struct spec_test *t = &f->tests[0];
	cr_assert_eq(t->names.n, 2);
	cr_expect_str_eq(t->names.v[1].s, "TestBinaryUfuncs::test_contig_vs_transposed");
	cr_expect_eq(t->names.v[1].loc.line, 10);
	cr_expect_eq(t->names.v[1].loc.col, 15);
	cr_expect_eq(t->mode, SPEC_MODE_MANDATORY_SUCCESS);
	cr_expect_eq(t->mode_loc.line, 11);
	cr_assert_eq(t->tags.n, 2);
	cr_expect_str_eq(t->tags.v[1].s, "model_2");
	cr_assert_eq(t->edits.cpu_move.n, 2);
	cr_expect_str_eq(t->edits.cpu_move.v[1].name.s, "assertTrue");
	cr_expect_eq(t->edits.cpu_move.v[1].loc.line, 19);
	/* global */
	const struct spec_global *g = &s->global;
	cr_assert_eq(g->supported_dtypes.n, 3);
	cr_expect_eq(g->supported_dtypes.v[2].dtype, SPEC_DTYPE_FLOAT32);
	cr_expect_eq(g->supported_dtypes.v[2].force_xfail, SPEC_TRI_TRUE);
	cr_expect_eq(g->supported_dtypes.v[0].force_xfail, SPEC_TRI_UNSET);
	cr_assert_eq(g->n_supported_ops, 4);
	cr_expect_str_eq(g->supported_ops[0].name.s, "add");
	cr_assert_eq(g->supported_ops[0].dtypes.n, 2);
	const struct spec_dtype_item *d = &g->supported_ops[0].dtypes.v[0];
	cr_expect_eq(d->dtype, SPEC_DTYPE_FLOAT16);
	cr_expect(d->precision.has_atol && d->precision.has_rtol);
	cr_expect_float_eq(d->precision.atol, 1e-3, 1e-12);
	cr_expect_eq(d->precision.loc.line, 31); /* the mapping starts at its first key */
	cr_expect_str_eq(g->supported_ops[3].name.s, "gcd");
	cr_expect_eq(g->supported_ops[3].loc.line, 37);
	cr_expect_eq(g->supported_ops[3].loc.col, 9);
	loaded_finish(&l);
}

Test(load, lx_matmul_regex_names_and_tags)
{
	struct loaded l;
	loaded_path(&l, SPECS_DIR "/real/test_inductor_ops_lx_matmul_config.yaml", false);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	const struct spec_file *f = &l.set->files[0];
	cr_expect_str_eq(f->resolved,
			 "/src/torch-spyre/tests/inductor/test_inductor_ops_lx_planning.py");
	cr_assert_eq(f->n_tests, 3);
	cr_expect_eq(f->tests[0].names.n, 12);
	cr_expect_eq(f->tests[0].mode, SPEC_MODE_XFAIL);
	cr_expect_str_eq(f->tests[1].names.v[0].s,
			 "LxPlanning.*::test_(addmm|mm|bmm|einsum|matmul|linear).*_lx_planning_"
			 "(pointwise|reduction)");
	cr_expect_eq(f->tests[2].tags.n, 3);
	cr_expect_str_eq(f->tests[2].tags.v[2].s, "slow__plat_s390x");
	cr_expect_eq(f->tests[2].doc_test, 2);
	cr_expect_eq(f->tests[2].suite_labels.n, 2);
	cr_expect_eq(l.set->global.present, false);
	loaded_finish(&l);
}

Test(load, torch_yaml_dtype_includes)
{
	struct loaded l;
	loaded_path(&l, SPECS_DIR "/real/test_torch.yaml", false);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	const struct spec_file *f = &l.set->files[0];
	cr_expect_eq(f->unlisted, SPEC_MODE_SKIP);
	cr_assert_geq(f->n_tests, 4);
	size_t big = 0;
	for (size_t i = 0; i < f->n_tests; i++)
		if (f->tests[i].edits.dtypes_include.n == 12)
			big = i;
	cr_assert(big > 0);
	cr_expect_eq(f->tests[big].edits.dtypes_include.v[0].dtype, SPEC_DTYPE_BFLOAT16);
	cr_expect_eq(f->tests[big].edits.dtypes_include.v[11].dtype, SPEC_DTYPE_UINT8);
	loaded_finish(&l);
}

Test(load, full_schema_values)
{
	static const char text[] =
	    "test_suite_config:\n"
	    "  labels: [smoke]\n"
	    "  files:\n"
	    "    - path: ${TORCH_ROOT}/test/test_x.py\n"
	    "      tests:\n"
	    "        - names: TestX::test_one\n"
	    "          labels: [trunk]\n"
	    "          no_grad: true\n"
	    "          edits:\n"
	    "            ops:\n"
	    "              include:\n"
	    "                - name: add\n"
	    "                  tags: [t1]\n"
	    "                  sample_inputs_func:\n"
	    "                    args:\n"
	    "                      - tensor: {shape: [67, 256], dtype: torch.float16, init: "
	    "randint,"
	    " init_args: {low: 0, high: 9}, stride: [256, 1], storage_offset: 3,"
	    " device_layout: {device_size: [4, 67, 64], stride_map: [64, 256, 1], device_dtype: "
	    "dl16}}\n"
	    "                      - tensor_list: [{shape: [2], dtype: half}, {shape: [3], dtype: "
	    "bool}]\n"
	    "                      - value: [1, 2]\n"
	    "                      - py: 'slice(0, 2)'\n"
	    "                    kwargs: {alpha: 2.5, out_dtype: float32}\n"
	    "              exclude: [{name: sub, description: why}]\n"
	    "            dtypes:\n"
	    "              include: [{name: float32, precision: {atol: 0.01, rtol: 0.02}, "
	    "force_xfail: yes}]\n"
	    "              exclude: [{name: float64}]\n"
	    "            modules: {include: [{name: torch.nn.Linear, module_path: "
	    "torch.nn.Linear}], exclude: [{name: x}]}\n"
	    "          kernels:\n"
	    "            - op: softmax\n"
	    "              inputs: [\"67x256\", [3, 64], {shape: [1], dtype: float32}]\n"
	    "              dtype: float16\n"
	    "              atol: 0.001\n"
	    "              mode: xfail\n"
	    "              seed: 7\n"
	    "              params: {dim: -1}\n"
	    "  global:\n"
	    "    supported_ops: [add, {name: mm, force_xfail: false}]\n"
	    "    supported_modules: [torch.nn.Linear]\n"
	    "    input_config: {seed: 123}\n";
	struct loaded l;
	loaded_text(&l, text, true);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	const struct spec_test *t = &l.set->files[0].tests[0];
	cr_expect_eq(t->names.n, 1);
	cr_expect_str_eq(t->labels.v[0].s, "trunk");
	cr_expect_eq(t->no_grad, SPEC_TRI_TRUE);
	cr_assert_eq(t->edits.n_ops_include, 1);
	const struct spec_sample_inputs *si = &t->edits.ops_include[0].sample_inputs;
	cr_assert_eq(si->n_args, 4);
	const struct spec_tensor *x = &si->args[0].tensor;
	cr_expect_eq(si->args[0].kind, SPEC_ARG_TENSOR);
	cr_expect_eq(x->dtype, SPEC_DTYPE_FLOAT16);
	cr_expect_str_eq(x->init_args.s, "{low: 0, high: 9}");
	cr_expect_eq(x->storage_offset, 3);
	cr_expect_eq(x->device_layout.device_size.n, 3);
	cr_expect_eq(x->device_layout.stride_map.v[1], 256);
	cr_expect_str_eq(x->device_layout.device_dtype.s, "dl16");
	cr_expect_eq(si->args[1].kind, SPEC_ARG_TENSOR_LIST);
	cr_expect_eq(si->args[1].n_list, 2);
	cr_expect_eq(si->args[1].list[0].dtype, SPEC_DTYPE_FLOAT16);
	cr_expect_str_eq(si->args[2].text.s, "[1, 2]");
	cr_expect_str_eq(si->args[3].text.s, "slice(0, 2)");
	cr_assert_eq(si->n_kwargs, 2);
	cr_expect_str_eq(si->kwargs[1].key.s, "out_dtype");
	cr_expect_str_eq(si->kwargs[1].arg.text.s, "float32");
	cr_expect_eq(t->edits.dtypes_include.v[0].force_xfail, SPEC_TRI_TRUE);
	cr_expect_float_eq(t->edits.dtypes_include.v[0].precision.rtol, 0.02, 1e-12);
	cr_expect_str_eq(t->edits.modules_include.v[0].module_path.s, "torch.nn.Linear");
	cr_assert_eq(t->n_kernels, 1);
	const struct spec_kernel *k = &t->kernels[0];
	cr_expect_str_eq(k->op.s, "softmax");
	cr_assert_eq(k->n_inputs, 3);
	cr_expect_eq(k->inputs[0].shape.n, 2);
	cr_expect_eq(k->inputs[0].shape.v[1], 256);
	cr_expect_eq(k->inputs[1].shape.v[0], 3);
	cr_expect(k->inputs[2].is_tensor);
	cr_expect_eq(k->mode, SPEC_MODE_XFAIL);
	cr_expect_eq(k->seed, 7);
	cr_expect_str_eq(k->params[0].value.s, "-1");
	cr_expect_eq(l.set->global.n_supported_ops, 2);
	cr_expect(!l.set->global.supported_ops[0].structured);
	cr_expect_eq(l.set->global.supported_ops[1].force_xfail, SPEC_TRI_FALSE);
	cr_expect_eq(l.set->global.n_supported_modules, 1);
	cr_expect_eq(l.set->global.seed, 123);
	loaded_finish(&l);
}

Test(load, aliases_are_expanded)
{
	static const char text[] = "x: &dt {name: float16, precision: {atol: 0.5}}\n"
				   "test_suite_config:\n"
				   "  files:\n"
				   "    - path: ${TORCH_ROOT}/t.py\n"
				   "  global:\n"
				   "    supported_dtypes: [*dt]\n";
	struct loaded l;
	loaded_text(&l, text, false);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	cr_expect_eq(l.diags.n, 1, "%s", diags_text(&l.diags)); /* 'x' is an unknown key */
	cr_expect_eq(l.set->global.supported_dtypes.v[0].precision.atol, 0.5);
	loaded_finish(&l);
}

Test(load, unknown_key_warns_unless_strict)
{
	static const char text[] = "test_suite_config:\n"
				   "  files:\n"
				   "    - path: ${TORCH_ROOT}/t.py\n"
				   "      colour: blue\n";
	struct loaded l;
	loaded_text(&l, text, false);
	cr_expect_eq(l.rc, 0);
	cr_assert_eq(l.diags.n, 1);
	cr_expect_eq(l.diags.v[0].severity, SPEC_WARNING);
	cr_expect_eq(l.diags.v[0].line, 4);
	cr_expect_eq(l.diags.v[0].col, 7);
	cr_expect_str_eq(l.diags.v[0].path, "test_suite_config.files[0].colour");
	cr_expect_eq(l.set->n_files, 1);
	loaded_finish(&l);
	loaded_text(&l, text, true);
	cr_expect_neq(l.rc, 0);
	cr_expect_eq(l.diags.n_errors, 1);
	cr_expect_eq(l.set->n_files, 0, "a file with errors adds nothing");
	loaded_finish(&l);
}

Test(load, document_size_limit)
{
	size_t len = YAML_DOC_MAX + 10;
	char *big = malloc(len + 1);
	cr_assert_not_null(big);
	memset(big, '#', len);
	big[len] = '\0';
	struct loaded l;
	testspecs_diags_init(&l.diags);
	cr_assert_eq(testspecs_set_create(&l.set), 0);
	struct spec_load_opts o = { .diags = &l.diags };
	cr_expect_neq(testspecs_load_text(l.set, "big.yaml", big, len, &o), 0);
	cr_assert_eq(l.diags.n, 1);
	cr_expect(strstr(l.diags.v[0].message, "document too large") != NULL);
	cr_expect_eq(l.diags.v[0].line, 1);
	free(big);
	loaded_finish(&l);
}

/* The regex hook as the resolver will supply it, here with PCRE2 directly. */
static void regex_hook(void *ctx, const struct spec_str *name, const char *doc_path,
		       struct spec_diag_list *diags)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)name->s, name->len, 0, &code, &off, NULL);
	if (re) {
		pcre2_code_free(re);
		return;
	}
	(*(int *)ctx)++;
	testspecs_diags_add(diags, SPEC_ERROR, &name->loc, doc_path,
			    "bad regular expression '%s' at offset %zu", name->s, (size_t)off);
}

struct expected {
	char file[128];
	unsigned line, col;
	char fragment[128];
};

static size_t read_expected(struct expected *v, size_t max)
{
	FILE *f = fopen(SPECS_DIR "/broken/EXPECTED", "r");
	cr_assert_not_null(f);
	char line[512];
	size_t n = 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\n")] = '\0';
		char *a = strtok(line, "\t"), *b = strtok(NULL, "\t"), *c = strtok(NULL, "\t");
		cr_assert(a && b && c, "bad EXPECTED line");
		snprintf(v[n].file, sizeof(v[n].file), "%s", a);
		cr_assert_eq(sscanf(b, "%u:%u", &v[n].line, &v[n].col), 2);
		snprintf(v[n].fragment, sizeof(v[n].fragment), "%s", c);
		n++;
	}
	fclose(f);
	return n;
}

static void check_broken(const struct expected *e)
{
	char path[512];
	snprintf(path, sizeof(path), SPECS_DIR "/broken/%s", e->file);
	struct loaded l;
	loaded_path(&l, path, strstr(e->file, ".strict.") != NULL);
	if (strstr(e->file, ".regex.")) {
		cr_expect_eq(l.rc, 0, "%s: %s", e->file, diags_text(&l.diags));
		int bad = 0;
		struct spec_lint_hooks hooks = { .check_name = regex_hook, .ctx = &bad };
		testspecs_lint_hooks(l.set, &hooks, &l.diags);
		cr_expect_eq(bad, 1, "%s", e->file);
	} else {
		cr_expect_neq(l.rc, 0, "%s loaded without error", e->file);
		cr_expect_eq(l.set->n_files, 0, "%s", e->file);
	}
	const struct spec_diag *first = NULL;
	for (size_t i = 0; i < l.diags.n && !first; i++)
		if (l.diags.v[i].severity == SPEC_ERROR)
			first = &l.diags.v[i];
	cr_assert_not_null(first, "%s: no error", e->file);
	cr_expect_eq(first->line, e->line, "%s: line %u, expected %u (%s)", e->file, first->line,
		     e->line, first->message);
	cr_expect_eq(first->col, e->col, "%s: col %u, expected %u (%s)", e->file, first->col,
		     e->col, first->message);
	cr_expect(strstr(first->message, e->fragment) != NULL, "%s: '%s' lacks '%s'", e->file,
		  first->message, e->fragment);
	cr_expect(strstr(first->file, e->file) != NULL);
	loaded_finish(&l);
}

Test(load, broken_corpus_gives_located_errors)
{
	static struct expected v[200];
	size_t n = read_expected(v, 200);
	cr_assert_geq(n, 30, "the broken corpus has %zu entries", n);
	for (size_t i = 0; i < n; i++)
		check_broken(&v[i]);
}
