/* Tests of op graphs (graph.h): the parser (a good graph read whole, broken ones refused with
 * the place), and a run: the numbers agree with the reference of the whole graph, and the
 * relayout of an op's result over the ring beats the round trip through device memory. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "spyre-emu/graph.h"

#define FIX SPYRE_TEST_FIXTURES "/graph/"

Test(graph, parse_reads_the_whole_graph)
{
	static struct spyre_graph g;
	cr_assert_eq(spyre_graph_load_file(&g, FIX "small.yaml"), 0, "%s", err_last());
	cr_expect_eq(g.ninputs, 3);
	cr_expect_eq(g.nops, 5);
	cr_expect_eq(g.noutputs, 2);
	cr_expect_str_eq(spyre_graph_tensor_name(&g, g.outputs[1]), "m");
	cr_expect_eq(g.input_shape[1][1], 150);
	cr_expect_str_eq(g.ops[2].op->name, "rms_norm");
	cr_expect_float_eq(g.ops[2].p.eps, 1e-6, 1e-12);
	cr_expect_eq(g.ops[4].p.dim, 0);
	cr_expect_eq(g.ops[4].p.keepdim, 1);
	cr_expect_eq(g.ops[3].in[0], 3 + 2, "t reads n, the third op's result");
}

static const struct {
	const char *file;
	int line, col;
	const char *msg;
} broken[] = {
	{ "undefined_input.yaml", 3, 30, "'z' is not an input or an earlier op" },
	{ "defined_twice.yaml", 3, 12, "'x' is defined twice" },
	{ "unknown_op.yaml", 3, 19, "unknown op 'frobnicate'" },
	{ "zero_size.yaml", 1, 17, "'0' is not a whole number from 1" },
	{ "anchor.yaml", 1, 13, "anchors and aliases are not allowed" },
	{ "input_count.yaml", 3, 5, "add takes 2 inputs" },
	{ "unknown_key.yaml", 3, 34, "unknown op key 'colour'" },
};

Test(graph, broken_graphs_are_located)
{
	static struct spyre_graph g;
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		char path[512], where[600];
		snprintf(path, sizeof(path), FIX "bad/%s", broken[i].file);
		snprintf(where, sizeof(where), "%s:%d:%d: ", path, broken[i].line, broken[i].col);
		cr_expect_neq(spyre_graph_load_file(&g, path), 0, "%s accepted", path);
		cr_expect(strstr(err_last(), where) != NULL, "%s: %s", where, err_last());
		cr_expect(strstr(err_last(), broken[i].msg) != NULL, "%s", err_last());
	}
	cr_expect_eq(spyre_graph_parse(&g, "[1, 2]", 6, "t"), ERR_INVAL);
	cr_expect_eq(spyre_graph_parse(&g, "inputs: {}\nops: []\noutputs: []\n", 31, "t"),
		     ERR_INVAL, "no op");
}

static void run_graph(const char *file, int cores, enum spyre_relayout_mode m, const char *trace,
		      struct spyre_graph_result *r)
{
	static struct spyre_graph g;
	static struct spyre_hw hw;
	cr_assert_eq(spyre_graph_load_file(&g, file), 0, "%s", err_last());
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	cr_assert_eq(spyre_hw_set_cores(&hw, cores), 0);
	struct spyre_graph_opts o = { .dtype = SPYRE_DTYPE_FLOAT16,
				      .hw = &hw,
				      .relayout = m,
				      .seed = 3,
				      .trace_path = trace };
	cr_assert_eq(spyre_graph_run(&g, &o, r), 0, "%s", err_last());
	cr_expect(r->passed, "max abs err %g, %llu mismatches", r->max_abs_err,
		  (unsigned long long)r->mismatches);
}

Test(graph, small_graph_agrees_with_its_reference)
{
	static struct spyre_graph_result r;
	run_graph(FIX "small.yaml", 3, SPYRE_RELAYOUT_BEST, NULL, &r);
	cr_expect_eq(r.nsteps, 5);
	cr_expect(r.steps[3].relayout, "the transpose of n is a relayout");
	cr_expect_gt(r.modeled_us, 0);
}

Test(graph, relayout_over_the_ring_beats_the_device_memory_round_trip)
{
	static struct spyre_graph_result best, ring, dev;
	char trace[] = "/tmp/spyre-emu-graph-trace-XXXXXX";
	int fd = mkstemp(trace);
	cr_assert_geq(fd, 0);
	close(fd);
	run_graph(FIX "relayout.yaml", 32, SPYRE_RELAYOUT_BEST, trace, &best);
	run_graph(FIX "relayout.yaml", 32, SPYRE_RELAYOUT_RING, NULL, &ring);
	run_graph(FIX "relayout.yaml", 32, SPYRE_RELAYOUT_DEVMEM, NULL, &dev);
	const struct spyre_graph_step *t = &best.steps[2];
	cr_assert(t->relayout);
	printf("relayout of an 2048x2048 op result, 32 cores: ring %.3f us, device memory %.3f us, "
	       "ratio %.1f; graph %.1f us vs %.1f us\n",
	       t->ring_us, t->devmem_us, t->devmem_us / t->ring_us, ring.modeled_us,
	       dev.modeled_us);
	cr_expect_str_eq(t->via, "ring");
	cr_expect_gt(t->devmem_us / t->ring_us, 20.0);
	cr_expect_str_eq(dev.steps[2].via, "devmem");
	cr_expect_float_eq(dev.steps[2].modeled_us, t->devmem_us, 1e-9);
	cr_expect_lt(ring.modeled_us, dev.modeled_us);
	cr_expect_float_eq(best.modeled_us, ring.modeled_us, 1e-9);
	char *text = NULL;
	size_t len = 0;
	cr_assert_eq(fs_read_file(&text, &len, trace, 1 << 24), 0, "%s", err_last());
	cr_expect(strstr(text, "relayout t via ring") != NULL, "the trace shows the relayout");
	cr_expect(strstr(text, "\"core 31\"") != NULL, "one track per core");
	free(text);
	unlink(trace);
}
