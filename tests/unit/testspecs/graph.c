/* Graph cases of the `kernels:` extension (testspecs/src/load_graph.c, cases.c): the graph is
 * found beside the spec file, read and parsed at load; a missing, oversized or malformed graph
 * and a case that mixes op and graph keys are errors at file:line:col; expansion gives one case
 * per entry with the graph's input shapes, its dtype's tolerance and an id that tells apart the
 * same graph run two ways. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "helpers.h"
#include "spyre-emu/graph.h"
#include "spyre-emu/run.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"

#define GRAPH_SPEC SPYRE_TEST_FIXTURES "/executors/graph/spec.yaml"

/* A spec whose only test has the given kernels: block (indented 12). */
static void load_kernels(struct loaded *l, const char *kernels)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "test_suite_config:\n"
		 "  files:\n"
		 "    - path: ${TORCH_ROOT}/test/x.py\n"
		 "      tests:\n"
		 "        - names: [TestX::test_g]\n"
		 "          kernels:\n"
		 "%s",
		 kernels);
	loaded_text(l, text, true);
}

/* The first error diagnostic, formatted "file:line:col: error: ...". */
static const char *first_error(const struct loaded *l)
{
	static char line[1024];
	line[0] = '\0';
	for (size_t i = 0; i < l->diags.n; i++)
		if (l->diags.v[i].severity == SPEC_ERROR) {
			testspecs_diag_format(&l->diags.v[i], line, sizeof(line));
			break;
		}
	return line;
}

Test(graph_case, loads_the_graph_beside_the_spec)
{
	struct loaded l;
	loaded_path(&l, GRAPH_SPEC, true);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	const struct spec_test *t = &l.set->files[0].tests[0];
	cr_assert_eq(t->n_kernels, 2);
	const struct spec_kernel *k = &t->kernels[0];
	cr_assert_not_null(k->g);
	cr_expect_str_eq(k->graph.s, "graphs/mlp.yaml");
	cr_expect_str_eq(k->graph_path, SPYRE_TEST_FIXTURES "/executors/graph/graphs/mlp.yaml");
	cr_expect_eq(k->g->nops, 5);
	cr_expect_eq(k->g->ninputs, 4);
	cr_expect_null(k->op.s);
	cr_expect_eq(t->kernels[1].cores, 4);
	cr_expect_eq(t->kernels[1].dtype, SPEC_DTYPE_FLOAT32);
	const struct spec_kernel *r = &l.set->files[0].tests[1].kernels[1];
	cr_expect_eq(r->relayout, SPYRE_RELAYOUT_DEVMEM);
	cr_expect_str_eq(testspecs_relayout_name(r->relayout), "devmem");
	cr_expect_str_eq(testspecs_relayout_name(7), "?");
	loaded_finish(&l);
}

static void expand(struct spec_case_list *list, const struct loaded *l, const char *method)
{
	struct spec_resolver *r;
	cr_assert_eq(testspecs_resolver_create(&r, l->set), 0);
	char id[256];
	snprintf(id, sizeof(id), "test/test_graph_fixture.py::TestGraph::%s", method);
	struct spec_case_test t = { .test_id = id };
	struct spec_expand_result res;
	testspecs_cases_init(list);
	cr_assert_eq(testspecs_cases_expand(list, r, l->set, &t, &res), 0, "%s", err_last());
	cr_expect_eq(res.rule, SPEC_RULE_KERNELS);
	testspecs_resolver_destroy(r);
}

Test(graph_case, expands_to_one_case_per_entry)
{
	struct loaded l;
	loaded_path(&l, GRAPH_SPEC, true);
	cr_assert_eq(l.rc, 0, "%s", diags_text(&l.diags));
	struct spec_case_list list;
	expand(&list, &l, "test_mlp");
	cr_assert_eq(list.n, 2);
	const struct spec_case *c = &list.v[0];
	cr_expect_eq(c->kind, SPEC_CASE_GRAPH);
	cr_expect_str_eq(c->op, "graph");
	cr_expect_not(c->unsupported, "%s", c->why);
	cr_expect_eq(c->nin, 4);
	cr_expect_eq(c->shapes[3][0], 1600);
	cr_expect_eq(c->shapes[3][1], 512);
	cr_expect_eq(c->dtype, SPEC_DTYPE_FLOAT16); /* the default */
	double atol, rtol;
	spyre_run_default_tol(SPYRE_DTYPE_FLOAT16, "", &atol, &rtol);
	cr_expect_float_eq(c->atol, atol, 1e-12); /* the emulator's, not the spec's default */
	cr_expect_eq(list.v[1].dtype, SPEC_DTYPE_FLOAT32);
	cr_expect_str_neq(c->id, list.v[1].id);
	cr_expect_eq(c->mode, SPEC_MODE_MANDATORY_SUCCESS);
	testspecs_cases_finish(&list);

	/* the same graph, ring and devmem: two ids; explicit atol 0 wins; bfloat16 refused */
	expand(&list, &l, "test_relayout");
	cr_assert_eq(list.n, 2);
	cr_expect_str_neq(list.v[0].id, list.v[1].id);
	testspecs_cases_finish(&list);
	expand(&list, &l, "test_exact");
	cr_assert_eq(list.n, 1);
	cr_expect_eq(list.v[0].atol, 0);
	cr_expect_eq(list.v[0].mode, SPEC_MODE_XFAIL);
	testspecs_cases_finish(&list);
	expand(&list, &l, "test_bf16");
	cr_assert_eq(list.n, 1);
	cr_expect(list.v[0].unsupported);
	cr_expect_str_eq(list.v[0].why, "an op graph runs in float16 or float32");
	cr_expect_eq(list.n_unsupported, 1);
	testspecs_cases_finish(&list);
	loaded_finish(&l);
}

Test(graph_case, a_missing_graph_is_an_error_at_its_node)
{
	struct loaded l;
	loaded_path(&l, SPYRE_TEST_FIXTURES "/executors/graph/bad_path.yaml", true);
	cr_expect_neq(l.rc, 0);
	const char *e = first_error(&l);
	cr_expect(strstr(e, "bad_path.yaml:9:22: error: graph 'graphs/no_such_graph.yaml'") != NULL,
		  "%s", e);
	cr_expect(strstr(e, "No such file") != NULL, "%s", e);
	loaded_finish(&l);
}

Test(graph_case, a_malformed_graph_names_its_own_line)
{
	struct loaded l;
	load_kernels(&l,
		     "            - graph: " SPYRE_TEST_FIXTURES "/graph/bad/unknown_op.yaml\n");
	cr_expect_neq(l.rc, 0);
	const char *e = first_error(&l);
	cr_expect(strstr(e, "t.yaml:7:22: error: graph '") != NULL, "%s", e);
	cr_expect(strstr(e, "unknown_op.yaml:") != NULL, "the graph's own place: %s", e);
	loaded_finish(&l);
}

Test(graph_case, an_oversized_graph_is_refused)
{
	char path[] = "/tmp/spyre-graph-big-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	static char big[70 * 1024]; /* more than the graph reader's 64 KiB */
	memset(big, '#', sizeof(big));
	cr_assert_eq(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	close(fd);
	char kernels[256];
	snprintf(kernels, sizeof(kernels), "            - graph: %s\n", path);
	struct loaded l;
	load_kernels(&l, kernels);
	unlink(path);
	cr_expect_neq(l.rc, 0);
	cr_expect(strstr(first_error(&l), "t.yaml:7:22: error: graph '") != NULL, "%s",
		  first_error(&l));
	loaded_finish(&l);
}

/* Each wrong shape of a graph case, and the message it gets. */
Test(graph_case, wrong_keys_are_refused)
{
	static const struct {
		const char *kernels, *msg;
	} bad[] = {
		{ "            - {graph: " SPYRE_TEST_FIXTURES "/graph/small.yaml, op: add}\n",
		  "names an 'op' or a 'graph', not both" },
		{ "            - {graph: " SPYRE_TEST_FIXTURES
		  "/graph/small.yaml, inputs: [\"4\"]}\n",
		  "takes its inputs and parameters from the graph" },
		{ "            - {graph: " SPYRE_TEST_FIXTURES "/graph/small.yaml, cores: 33}\n",
		  "cores must be 1..32" },
		{ "            - {graph: " SPYRE_TEST_FIXTURES
		  "/graph/small.yaml, relayout: fast}\n",
		  "relayout 'fast': expected best, ring or devmem" },
		{ "            - {op: add, inputs: [\"4\", \"4\"], cores: 2}\n",
		  "'cores' and 'relayout' are for graph cases" },
		{ "            - {graph: \"\"}\n", "is empty or longer than" },
		{ "            - {dtype: float16}\n", "missing 'op' (or 'graph')" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct loaded l;
		load_kernels(&l, bad[i].kernels);
		cr_expect_neq(l.rc, 0, "case %zu", i);
		cr_expect(strstr(first_error(&l), bad[i].msg) != NULL, "case %zu: %s", i,
			  first_error(&l));
		cr_expect(strstr(first_error(&l), "t.yaml:7:") != NULL, "case %zu: %s", i,
			  first_error(&l));
		loaded_finish(&l);
	}
}

Test(graph_case, a_long_path_is_refused_before_any_read)
{
	char kernels[1024], name[600];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(kernels, sizeof(kernels), "            - graph: /%s.yaml\n", name);
	struct loaded l;
	load_kernels(&l, kernels);
	cr_expect_neq(l.rc, 0);
	cr_expect(strstr(first_error(&l), "is empty or longer than 479 bytes") != NULL, "%s",
		  first_error(&l));
	loaded_finish(&l);
}
