/* Graph cases in the runner (executors/src/case.c): a spec's graph case flattened and run whole
 * on the emulator, its outcome by mode, modeled time and each step's plan; the ring relayout
 * modeled cheaper than the device-memory one; a long graph's steps cut with "..."; refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "executors/case.h"
#include "spyre-emu/graph.h"
#include "testspecs/cases.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define GRAPH_SPEC SPYRE_TEST_FIXTURES "/executors/graph/spec.yaml"

/* The flattened cases of one test of the fixture spec. */
static size_t cases_of(struct exec_case *out, size_t max, const char *method)
{
	static const struct spec_roots roots = { "/src/pytorch", "/src/torch-spyre" };
	struct spec_set *set;
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	cr_assert_eq(testspecs_set_create(&set), 0);
	struct spec_load_opts o = { .strict = true, .roots = &roots, .diags = &diags };
	cr_assert_eq(testspecs_load_path(set, GRAPH_SPEC, &o), 0);
	struct spec_resolver *r;
	cr_assert_eq(testspecs_resolver_create(&r, set), 0);
	char id[256];
	snprintf(id, sizeof(id), "test/test_graph_fixture.py::TestGraph::%s", method);
	struct spec_case_test t = { .test_id = id };
	struct spec_expand_result res;
	struct spec_case_list list;
	testspecs_cases_init(&list);
	cr_assert_eq(testspecs_cases_expand(&list, r, set, &t, &res), 0);
	size_t n = list.n < max ? list.n : max;
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(exec_case_from_spec(&out[i], &list.v[i]), 0);
		cr_assert_eq(exec_case_check(&out[i]), 0);
	}
	testspecs_cases_finish(&list);
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
	testspecs_diags_finish(&diags);
	return n;
}

Test(graph_run, ring_and_devmem_relayouts_pass_with_their_steps)
{
	static struct exec_case c[2];
	cr_assert_eq(cases_of(c, 2, "test_relayout"), 2);
	cr_expect_eq(c[0].kind, SPEC_CASE_GRAPH);
	cr_expect_eq(c[0].relayout, SPYRE_RELAYOUT_RING);
	cr_expect_eq(c[1].cores, 8);
	cr_expect(strstr(c[0].graph, "/executors/graph/graphs/relayout.yaml") != NULL);
	struct exec_result ring, devmem;
	exec_case_run(&c[0], NULL, &ring);
	exec_case_run(&c[1], NULL, &devmem);
	cr_assert_eq(ring.outcome, EXEC_PASSED, "%s", ring.message);
	cr_assert_eq(devmem.outcome, EXEC_PASSED, "%s", devmem.message);
	cr_expect_eq(exec_result_check(&ring), 0);
	cr_expect_str_eq(ring.plan, "graph: 2 kernels, 1 relayouts");
	cr_expect(strncmp(ring.steps, "h mm ", 5) == 0, "%s", ring.steps);
	cr_expect(strstr(ring.steps, "; t relayout ring ") != NULL, "%s", ring.steps);
	cr_expect(strstr(ring.steps, "; s softmax ") != NULL, "%s", ring.steps);
	cr_expect(strstr(devmem.steps, "; t relayout devmem ") != NULL, "%s", devmem.steps);
	cr_expect_gt(ring.device_us, 0);
	/* modeled time, not wall time: the ring path is the cheaper one for this graph */
	cr_expect_lt(ring.device_us, devmem.device_us);
	cr_expect_lt(ring.max_abs_err, ring.atol + 1);
}

Test(graph_run, an_exact_tolerance_fails_into_xfailed)
{
	static struct exec_case c;
	cr_assert_eq(cases_of(&c, 1, "test_exact"), 1);
	struct exec_result r;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_XFAILED, "%s", r.message);
	cr_expect(strstr(r.message, "differ from the graph's float64 reference beyond atol 0") !=
		      NULL,
		  "%s", r.message);
	cr_expect_gt(r.mismatches, 0);
	cr_expect_str_eq(r.plan, "graph: 5 kernels, 0 relayouts");
	c.mode = SPEC_MODE_MANDATORY_SUCCESS;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_FAILED);
}

Test(graph_run, bfloat16_is_skipped_with_its_reason)
{
	static struct exec_case c;
	cr_assert_eq(cases_of(&c, 1, "test_bf16"), 1);
	struct exec_result r;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_SKIPPED);
	cr_expect_str_eq(r.message, "an op graph runs in float16 or float32");
}

Test(graph_run, a_graph_gone_since_loading_is_an_error)
{
	static struct exec_case c;
	cr_assert_eq(cases_of(&c, 1, "test_mlp"), 1);
	snprintf(c.graph, sizeof(c.graph), "/nonexistent/graph.yaml");
	struct exec_result r;
	exec_case_run(&c, NULL, &r);
	cr_expect_eq(r.outcome, EXEC_ERROR);
	cr_expect(strstr(r.message, "the graph did not run: ") != NULL, "%s", r.message);
}

Test(graph_run, malformed_graph_fields_are_refused)
{
	static struct exec_case c, bad;
	cr_assert_eq(cases_of(&c, 1, "test_mlp"), 1);
	bad = c, bad.kind = 2;
	cr_expect_neq(exec_case_check(&bad), 0);
	bad = c, bad.cores = 33;
	cr_expect_neq(exec_case_check(&bad), 0);
	bad = c, bad.relayout = SPYRE_RELAYOUT_DEVMEM + 1;
	cr_expect_neq(exec_case_check(&bad), 0);
	bad = c;
	memset(bad.graph, 'x', sizeof(bad.graph));
	cr_expect_neq(exec_case_check(&bad), 0);
}

/* 32 pointwise ops with long names: more steps than the text holds. */
Test(graph_run, a_long_graph_cuts_its_steps)
{
	char path[] = "/tmp/spyre-graph-long-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "inputs: {x: [8, 64]}\nops:\n");
	fprintf(f, "  - {name: a_rather_long_step_name_00, op: neg, in: [x]}\n");
	for (int i = 1; i < SPYRE_GRAPH_OPS_MAX; i++)
		fprintf(f,
			"  - {name: a_rather_long_step_name_%02d, op: neg, in: "
			"[a_rather_long_step_name_%02d]}\n",
			i, i - 1);
	fprintf(f, "outputs: [a_rather_long_step_name_%02d]\n", SPYRE_GRAPH_OPS_MAX - 1);
	fclose(f);
	static struct exec_case c;
	cr_assert_eq(cases_of(&c, 1, "test_mlp"), 1);
	snprintf(c.graph, sizeof(c.graph), "%s", path);
	struct exec_result r;
	exec_case_run(&c, NULL, &r);
	unlink(path);
	cr_assert_eq(r.outcome, EXEC_PASSED, "%s", r.message);
	size_t n = strlen(r.steps);
	cr_expect_lt(n, sizeof(r.steps));
	cr_expect_gt(n, sizeof(r.steps) / 2);
	cr_expect_str_eq(r.steps + n - 3, "...");
	cr_expect_str_eq(r.plan, "graph: 32 kernels, 0 relayouts");
	cr_expect_eq(exec_result_check(&r), 0);
}
