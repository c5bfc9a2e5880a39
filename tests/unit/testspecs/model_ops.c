/* torch-spyre's model-op format (tests/configs/model_ops_tests/) in the loader, the
 * expansion and testspecs_case_params: xavier inits, kwargs beside sample_inputs_func, tensor
 * lists, `py:` index tuples, the dtype of a call, tensor-scalar and bias-less forms, and every
 * argument the Granite config passes read into emulator parameters. The text below is written
 * in that format for these tests (the shapes of Granite's calls, smaller where size does not
 * matter). */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "helpers.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"

#define T16(shape) "{tensor: {shape: " shape ", dtype: torch.float16}}"

static const char model_text[] = "test_suite_config:\n"
				 "  files:\n"
				 "    - path: "
				 "${TORCH_DEVICE_ROOT}/tests/models/test_model_ops_v2.py\n"
				 "      unlisted_test_mode: skip\n"
				 "      tests:\n"
				 "        - names: [TestSpyreModelOps::test_model_ops_db]\n"
				 "          mode: xfail\n"
				 "          edits:\n"
				 "            ops:\n"
				 "              include:\n"
				 "                - name: torch.nn.functional.embedding\n" /* 0 */
				 "                  sample_inputs_func:\n"
				 "                    args:\n"
				 "                      - {tensor: {shape: [1, 41], dtype: "
				 "torch.int64, init: randint,"
				 " init_args: {high: 1000}}}\n"
				 "                      - {tensor: {shape: [1000, 256], dtype: "
				 "torch.float16, init: rand}}\n"
				 "                      - {value: 0}\n"
				 "                      - {value: null}\n"
				 "                - name: torch.mul\n" /* 1 */
				 "                  sample_inputs_func: {args: [" T16("[1, 41, "
										      "256]") ", "
											      "{val"
											      "ue: "
											      "12."
											      "0}]}"
											      "\n"
											      "    "
											      "    "
											      "    "
											      "    "
											      "- "
											      "name"
											      ": "
											      "torc"
											      "h."
											      "geti"
											      "tem"
											      "\n" /* 2 */
											      "    "
											      "    "
											      "    "
											      "    "
											      "  "
											      "samp"
											      "le_"
											      "inpu"
											      "ts_"
											      "func"
											      ": "
											      "{arg"
											      "s: "
											      "[" T16("[64]") ","
													      " {py: \"(None, slice(None, None, None), None)\"}]}\n"
													      "                - name: torch.getitem\n" /* 3 */
													      "                  sample_inputs_func: {args: [" T16(
														  "[1, 8, 41, 128]") ","
																     " {py: \"(Ellipsis, slice(-1, 64, None))\"}]}\n"
																     "                - name: torch.matmul\n" /* 4 */
																     "                  sample_inputs_func:\n"
																     "                    args:\n"
																     "                      - {tensor: {shape: [1, 64, 1], dtype: torch.float16, init: xavier}}\n"
																     "                      - {tensor: {shape: [1, 1, 41], dtype: torch.float16, init: xavier}}\n"
																     "                - name: torch.cat\n" /* 5 */
																     "                  sample_inputs_func:\n"
																     "                    args:\n"
																     "                      - tensor_list:\n"
																     "                          - {shape: [1, 41, 64], dtype: torch.float16}\n"
																     "                          - {shape: [1, 41, 64], dtype: torch.float16}\n"
																     "                  kwargs: {dim: -1}\n"
																     "                - name: torch.to\n" /* 6 */
																     "                  sample_inputs_func: {args: [" T16("[1, 41, 256]") ","
																									  " {value: torch.bfloat16}]}\n"
																									  "                - name: torch.to\n" /* 7 */
																									  "                  sample_inputs_func: {args: [" T16("[1, 64, 1]") ", {value: \"cuda:0\"}]}\n"
																																	     "                - name: torch.float\n" /* 8 */
																																	     "                  sample_inputs_func: {args: [{tensor: {shape: [1, 1, 41], dtype: "
																																	     "torch.int64, init: randint, init_args: {high: 9}}}]}\n"
																																	     "                - name: torch.mean\n" /* 9 */
																																	     "                  sample_inputs_func: {args: [" T16("[1, 41, 256]") ", {value: -1}],"
																																										  " kwargs: {keepdim: true}}\n"
																																										  "                - name: torch.nn.functional.linear\n" /* 10 */
																																										  "                  sample_inputs_func: {args: [" T16("[1, 41, 256]") ", " T16(
																																										      "[64, 256]") ", {value: null}]}\n"
																																												   "                - name: torch.Tensor.view\n" /* 11 */
																																												   "                  sample_inputs_func:\n"
																																												   "                    args:\n"
																																												   "                      - " T16("[1, 41, 256]") "\n"
																																																		  "                      - value: (1, 41, -1, 128)\n"
																																																		  "                - name: torch.Tensor.expand\n" /* 12 */
																																																		  "                  sample_inputs_func: {args: [" T16("[1, 8, 1, 16, 128]") ", {value: 1},"
																																																											     " {value: 8}, {value: 4}, {value: 16}, {value: 128}]}\n"
																																																											     "                - name: torch.zeros\n" /* 13 */
																																																											     "                  sample_inputs_func: {args: [{value: \"(1, 8, 16, 128)\"}]}\n"
																																																											     "                  kwargs: {dtype: torch.float16, device: \"cuda:0\"}\n"
																																																											     "                - name: torch.index_copy_\n" /* 14 */
																																																											     "                  sample_inputs_func:\n"
																																																											     "                    args:\n"
																																																											     "                      - " T16("[1, 8, 64, 128]") "\n"
																																																																	       "                      - {value: 2}\n"
																																																																	       "                      - {tensor: {shape: [5], dtype: torch.int64, init: randint,"
																																																																	       " init_args: {high: 64}}}\n"
																																																																	       "                      - " T16("[1, 8, 5, 128]") "\n"
																																																																								"                - name: torch.nn.functional.scaled_dot_product_attention\n" /* 15 */
																																																																								"                  sample_inputs_func: {args: [" T16("[1, 4, 9, 128]") ", " T16(
																																																																								    "[1, 4, 64, 128]") ", " T16("[1, 4, 64, 128]") "]}\n"
																																																																														   "                  kwargs: {dropout_p: 0.0, scale: 0.0078125, is_causal: false}\n"
																																																																														   "                - name: torch.transpose\n" /* 16 */
																																																																														   "                  sample_inputs_func: {args: [" T16(
																																																																														       "[1, 41, 8, 128]") ", {value: 1},"
																																																																																	  " {value: 2}]}\n"
																																																																																	  "                - name: torch.nn.functional.scaled_dot_product_attention\n" /* 17 */
																																																																																	  "                  sample_inputs_func: {args: [" T16(
																																																																																	      "[1, 4, 9, 128]") ", " T16("[1, 4, 64, 128]") ", " T16("[1, 4, 64, 128]") "]}\n"
																																																																																											"                  kwargs: {dropout_p: 0.1}\n"
																																																																																											"                - name: torch.getitem\n" /* 18 */
																																																																																											"                  sample_inputs_func: {args: [" T16(
																																																																																											    "[4]") ", {py: \"(slice(1, None, 2),)\"}]}\n";

struct expanded {
	struct loaded l;
	struct spec_case_list list;
};

static void expand(struct expanded *x)
{
	loaded_text(&x->l, model_text, true);
	cr_assert_eq(x->l.rc, 0, "%s", diags_text(&x->l.diags));
	cr_expect_eq(x->l.diags.n, 0, "%s", diags_text(&x->l.diags)); /* strict: no warning */
	testspecs_cases_init(&x->list);
	struct spec_expand_result res;
	const struct spec_file *f = &x->l.set->files[0];
	cr_assert_eq(
	    testspecs_cases_expand_entry(&x->list, x->l.set, f, &f->tests[0], "m", NULL, &res), 0,
	    "%s", err_last());
	cr_assert_eq(x->list.n, 19, "one case per call, not crossed with dtypes");
}

static void finish(struct expanded *x)
{
	testspecs_cases_finish(&x->list);
	loaded_finish(&x->l);
}

Test(model_ops, calls_become_one_case_each_with_the_calls_dtype)
{
	struct expanded x;
	expand(&x);
	const struct spec_case *v = x.list.v;
	for (size_t i = 0; i < x.list.n; i++)
		cr_expect(!v[i].unsupported, "case %zu (%s): %s", i, v[i].op, v[i].why);
	cr_expect_eq(v[0].dtype, SPEC_DTYPE_FLOAT16, "embedding runs in its weight's dtype");
	cr_expect_str_eq(v[1].emu_op, "mul_scalar");
	cr_expect_str_eq(v[5].emu_op, "cat");
	cr_expect_eq(v[5].nin, 2, "a tensor list is one input per tensor");
	cr_expect_str_eq(v[8].emu_op, "to");
	cr_expect_eq(v[8].dtype, SPEC_DTYPE_INT64);
	cr_expect_str_eq(v[10].emu_op, "linear_nobias");
	cr_expect_str_eq(v[11].emu_op, "view");
	cr_expect_str_eq(v[12].emu_op, "expand");
	cr_expect_str_eq(v[13].emu_op, "zeros");
	cr_expect_eq(v[13].nin, 0);
	cr_expect_eq(v[13].dtype, SPEC_DTYPE_FLOAT16, "a creation op's dtype from its kwargs");
	cr_expect_eq(v[14].nin, 3);
	finish(&x);
}

Test(model_ops, arguments_become_parameters)
{
	struct expanded x;
	expand(&x);
	const struct spec_case *v = x.list.v;
	struct spyre_op_params p;
	cr_assert_eq(testspecs_case_params(&v[1], &p), 0, "%s", err_last());
	cr_expect_eq(p.scalar, 12.0);
	cr_assert_eq(testspecs_case_params(&v[2], &p), 0, "%s", err_last());
	cr_expect_eq(p.n_index, 3);
	cr_expect_eq(p.index[0].kind, SPYRE_INDEX_NONE);
	cr_expect_eq(p.index[1].kind, SPYRE_INDEX_SLICE);
	cr_expect(!p.index[1].has_start && !p.index[1].has_stop);
	cr_assert_eq(testspecs_case_params(&v[3], &p), 0, "%s", err_last());
	cr_expect_eq(p.index[0].kind, SPYRE_INDEX_ELLIPSIS);
	cr_expect(p.index[1].has_start && p.index[1].start == -1 && p.index[1].stop == 64);
	cr_assert_eq(testspecs_case_params(&v[5], &p), 0, "%s", err_last());
	cr_expect_eq(p.dim, -1, "cat's dim from the kwargs beside sample_inputs_func");
	cr_assert_eq(testspecs_case_params(&v[6], &p), 0, "%s", err_last());
	cr_expect(p.has_out_dtype && p.out_dtype == SPYRE_DTYPE_BFLOAT16);
	cr_assert_eq(testspecs_case_params(&v[7], &p), 0, "%s", err_last());
	cr_expect(!p.has_out_dtype, "to(device) moves, converts nothing");
	cr_assert_eq(testspecs_case_params(&v[8], &p), 0, "%s", err_last());
	cr_expect(p.has_out_dtype && p.out_dtype == SPYRE_DTYPE_FLOAT32);
	cr_assert_eq(testspecs_case_params(&v[9], &p), 0, "%s", err_last());
	cr_expect(p.dim == -1 && p.keepdim);
	cr_assert_eq(testspecs_case_params(&v[11], &p), 0, "%s", err_last());
	cr_expect(p.shape_ndim == 4 && p.shape[2] == -1 && p.shape[3] == 128);
	cr_assert_eq(testspecs_case_params(&v[12], &p), 0, "%s", err_last());
	cr_expect(p.shape_ndim == 5 && p.shape[2] == 4);
	cr_assert_eq(testspecs_case_params(&v[13], &p), 0, "%s", err_last());
	cr_expect(p.shape_ndim == 4 && p.shape[2] == 16, "a quoted tuple reads as the tuple");
	cr_assert_eq(testspecs_case_params(&v[14], &p), 0, "%s", err_last());
	cr_expect_eq(p.dim, 2);
	cr_assert_eq(testspecs_case_params(&v[15], &p), 0, "%s", err_last());
	cr_expect(p.has_scale && p.scale == 0.0078125 && !p.causal);
	cr_assert_eq(testspecs_case_params(&v[16], &p), 0, "%s", err_last());
	cr_expect(p.perm[0] == 1 && p.perm[1] == 2);
	cr_expect_eq(testspecs_case_params(&v[17], &p), ERR_INVAL, "a dropout is not emulated");
	cr_expect(strstr(err_last(), "dropout") != NULL, "%s", err_last());
	cr_expect_eq(testspecs_case_params(&v[18], &p), ERR_INVAL, "slice steps are not read");
	finish(&x);
}

Test(model_ops, unreadable_arguments_name_themselves)
{
	static const struct {
		const char *op, *arg;
	} bad[] = {
		{ "torch.getitem", "{py: \"(Ellipsis, foo)\"}" },
		{ "torch.getitem", "{py: \"(None, slice(None, None)\"}" },
		{ "torch.Tensor.view", "{value: \"(1, 2, x)\"}" },
		{ "torch.Tensor.view", "{value: \"(1, 2, 3, 4, 5, 6, 7, 8, 9)\"}" },
		{ "torch.mul", "{value: \"1e999\"}" },
		{ "torch.to", "{value: torch.complex64}" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "test_suite_config:\n"
			 "  files:\n"
			 "    - path: t.py\n"
			 "      tests:\n"
			 "        - names: [T::t]\n"
			 "          edits: {ops: {include: [{name: %s, sample_inputs_func: {args: "
			 "[{tensor: {shape: [4, 6], dtype: torch.float16}}, %s]}}]}}\n",
			 bad[i].op, bad[i].arg);
		struct loaded l;
		loaded_text(&l, text, false);
		cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
		struct spec_case_list list;
		testspecs_cases_init(&list);
		struct spec_expand_result res;
		const struct spec_file *f = &l.set->files[0];
		cr_assert_eq(
		    testspecs_cases_expand_entry(&list, l.set, f, &f->tests[0], "t", NULL, &res),
		    0);
		cr_assert_eq(list.n, 1);
		struct spyre_op_params p;
		cr_expect_eq(testspecs_case_params(&list.v[0], &p), ERR_INVAL, "%s %s", bad[i].op,
			     bad[i].arg);
		cr_expect(err_last()[0] != '\0');
		testspecs_cases_finish(&list);
		loaded_finish(&l);
	}
}
