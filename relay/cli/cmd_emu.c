/* `spyre-ci emu`: the emulator from the command line, for kernel developers and spec authors:
 * `layout` prints a tensor's device layout, `run` runs one op and checks it against the host
 * reference, `plans` lists the candidate plans with their modeled times, `ops` the op table,
 * `hw` the hardware description with the label of every value. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/jsonx.h"
#include "common/num.h"
#include "emu_args.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/layout.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"

static const struct cli_command *self(void)
{
	return cli_find("emu");
}

static json_t *int_array(const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		jx_append_new(a, json_integer(v[i]));
	return a;
}

static void print_dims(const int64_t *v, int n)
{
	printf("[");
	for (int i = 0; i < n; i++)
		printf("%s%" PRId64, i ? ", " : "", v[i]);
	printf("]");
}

static int cmd_layout(struct emu_args *a)
{
	if (a->nshapes != 1)
		return cli_usage_error(self(), "layout takes exactly one --shape");
	if (!a->has_dtype)
		return cli_usage_error(self(),
				       "layout needs --dtype (float16, float32, int64, ...)");
	if (a->ndim_order && a->ndim_order != a->ndims[0])
		return cli_usage_error(
		    self(),
		    "--dim-order needs one entry per dimension of the shape (%d), "
		    "got %d",
		    a->ndims[0], a->ndim_order);
	struct spyre_layout l;
	int rc = a->ndim_order ? spyre_layout_with_order(&l, a->shapes[0], a->ndims[0], a->dtype,
							 a->dim_order)
			       : spyre_layout_default(&l, a->shapes[0], a->ndims[0], a->dtype);
	if (rc)
		return cli_usage_error(self(), "%s", err_last());
	if (a->json) {
		json_t *o = json_object();
		jx_set_new(o, "host_size", int_array(l.host_size, l.host_ndim));
		jx_set_new(o, "device_size", int_array(l.device_size, l.ndim));
		jx_set_new(o, "stride_map", int_array(l.stride_map, l.ndim));
		jx_set_str(o, "host_dtype", spyre_dtype_name(l.host_dtype));
		jx_set_str(o, "device_dtype", spyre_dtype_name(l.device_dtype));
		jx_set_int(o, "elems_per_stick", l.elems_per_stick);
		jx_set_int(o, "sticks", (int64_t)spyre_layout_sticks(&l));
		jx_set_int(o, "bytes", (int64_t)spyre_layout_bytes(&l));
		return cli_print_json(o);
	}
	printf("host_size    ");
	print_dims(l.host_size, l.host_ndim);
	printf(" %s\ndevice_size  ", spyre_dtype_name(l.host_dtype));
	print_dims(l.device_size, l.ndim);
	printf(" %s\nstride_map   ", spyre_dtype_name(l.device_dtype));
	print_dims(l.stride_map, l.ndim);
	printf("\nsticks       %" PRIu64 " of %d elements (%" PRIu64 " bytes on the device)\n",
	       spyre_layout_sticks(&l), l.elems_per_stick, spyre_layout_bytes(&l));
	return CLI_OK;
}

/* Exit code for a failed spyre_run()/spyre_run_plans(): what the user asked for is bad or too
 * big (usage, 2), or something broke underway (1). */
static int run_exit_code(int rc)
{
	return rc == ERR_INVAL || rc == ERR_LIMIT ? CLI_USAGE : CLI_FAILED;
}

static json_t *util_json(const struct spyre_timing *t)
{
	json_t *u = json_object();
	for (int k = 0; k < SPYRE_UNIT_COUNT; k++)
		if (k != SPYRE_UNIT_SYNC)
			jx_set_real(u, spyre_unit_name((enum spyre_unit)k), t->util_avg[k]);
	jx_set_real(u, "device_memory", t->dev_mem_util);
	return u;
}

static int cmd_run(struct emu_args *a)
{
	struct spyre_run_opts o;
	int rc = emu_args_to_opts(a, &o);
	if (rc)
		return cli_usage_error(self(), "%s", err_last());
	struct spyre_run_result r;
	rc = spyre_run(&o, &r);
	if (rc) {
		/* spyre_run() can fail after it filled r.timing (a trace it cannot write), and
		 * leaves that to us; finishing a zeroed result is a no-op. */
		spyre_run_result_finish(&r);
		fprintf(stderr, "spyre-ci emu run: %s\n", err_last());
		return run_exit_code(rc);
	}
	const struct spyre_timing *t = &r.timing;
	if (a->json) {
		json_t *j = json_object();
		jx_set_str(j, "op", a->op);
		jx_set_str(j, "dtype", spyre_dtype_name(a->dtype));
		jx_set_int(j, "cores", o.hw->cores);
		jx_set_bool(j, "passed", r.passed);
		jx_set_real(j, "max_abs_err", r.max_abs_err);
		jx_set_real(j, "max_rel_err", r.max_rel_err);
		jx_set_real(j, "atol", r.atol);
		jx_set_real(j, "rtol", r.rtol);
		jx_set_int(j, "mismatches", (int64_t)r.mismatches);
		jx_set_new(j, "output_shape", int_array(r.out_shape, r.out_ndim));
		jx_set_str(j, "output_digest", r.digest);
		jx_set_str(j, "plan", r.plan);
		jx_set_bool(j, "plan_cached", r.plan_cached);
		jx_set_real(j, "modeled_us", t->us);
		jx_set_int(j, "modeled_cycles", (int64_t)t->cycles);
		jx_set_new(j, "utilization", util_json(t));
		jx_set_int(j, "lx_peak_bytes", (int64_t)t->lx_peak_max);
		jx_set_int(j, "device_bytes_read", (int64_t)t->dev_bytes_read);
		jx_set_int(j, "device_bytes_written", (int64_t)t->dev_bytes_written);
		if (a->trace)
			jx_set_str(j, "trace", a->trace);
		rc = cli_print_json(j);
	} else {
		printf("%s %s on %d cores, plan %s\n", a->op, spyre_dtype_name(a->dtype),
		       o.hw->cores, r.plan);
		printf("numerics  %s: max abs err %.3g, max rel err %.3g (atol %g, rtol %g), "
		       "%" PRIu64 " mismatches\n",
		       r.passed ? "PASS" : "FAIL", r.max_abs_err, r.max_rel_err, r.atol, r.rtol,
		       r.mismatches);
		printf("output    ");
		print_dims(r.out_shape, r.out_ndim);
		printf(" digest %s\n", r.digest);
		printf("modeled   %.3f us (%" PRIu64 " cycles)\n", t->us, t->cycles);
		printf("busy      dma %.0f%%  pe %.0f%%  vector %.0f%%  ring %.0f%%  device memory "
		       "%.0f%%\n",
		       100 * t->util_avg[SPYRE_UNIT_DMA], 100 * t->util_avg[SPYRE_UNIT_PE],
		       100 * t->util_avg[SPYRE_UNIT_VEC], 100 * t->util_avg[SPYRE_UNIT_RING],
		       100 * t->dev_mem_util);
		printf("LX peak   %" PRIu64 " bytes on one core\n", t->lx_peak_max);
		if (a->trace)
			printf("trace     %s (open in https://ui.perfetto.dev)\n", a->trace);
		rc = CLI_OK;
	}
	int passed = r.passed;
	spyre_run_result_finish(&r);
	return rc != CLI_OK ? rc : passed ? CLI_OK : CLI_FAILED;
}

/* "(default)" beside the one fastest plan; when several tie, `emu run` takes one of them (not
 * necessarily the first listed), so each is marked as tied. */
static const char *fastest_mark(const struct spyre_plan_info *p, size_t n, size_t i)
{
	if (!p[i].valid || p[i].cycles != p[0].cycles)
		return "";
	size_t ties = 0;
	for (size_t k = 0; k < n; k++)
		ties += p[k].valid && p[k].cycles == p[0].cycles;
	return ties == 1 ? "  (default)" : "  (tied fastest)";
}

static int cmd_plans(struct emu_args *a)
{
	struct spyre_run_opts o;
	int rc = emu_args_to_opts(a, &o);
	if (rc)
		return cli_usage_error(self(), "%s", err_last());
	struct spyre_plan_info *p = NULL;
	size_t n = 0;
	rc = spyre_run_plans(&o, &p, &n);
	if (rc) {
		fprintf(stderr, "spyre-ci emu plans: %s\n", err_last());
		return run_exit_code(rc);
	}
	if (a->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_object();
			jx_set_str(e, "name", p[i].name);
			jx_set_bool(e, "valid", p[i].valid);
			if (!p[i].valid)
				jx_set_str(e, "why", p[i].why);
			jx_set_real(e, "modeled_us", p[i].modeled_us);
			jx_set_int(e, "cycles", (int64_t)p[i].cycles);
			jx_set_real(e, "util_pe", p[i].util_pe);
			jx_set_real(e, "util_vec", p[i].util_vec);
			jx_set_real(e, "util_dma", p[i].util_dma);
			jx_set_real(e, "util_ring", p[i].util_ring);
			jx_set_int(e, "lx_peak_bytes", (int64_t)p[i].lx_peak_bytes);
			jx_set_int(e, "device_bytes", (int64_t)p[i].dev_bytes);
			jx_set_int(e, "ring_bytes", (int64_t)p[i].ring_bytes);
			jx_append_new(arr, e);
		}
		json_t *o2 = json_object();
		jx_set_str(o2, "op", a->op);
		jx_set_int(o2, "cores", o.hw->cores);
		jx_set_new(o2, "plans", arr);
		free(p);
		return cli_print_json(o2);
	}
	printf("%-34s %12s %6s %6s %6s %10s\n", "plan", "modeled_us", "pe%", "vec%", "dma%",
	       "lx_peak");
	for (size_t i = 0; i < n; i++) {
		if (!p[i].valid) {
			printf("%-34s refused: %s\n", p[i].name, p[i].why);
			continue;
		}
		printf("%-34s %12.3f %6.1f %6.1f %6.1f %10" PRIu64 "%s\n", p[i].name,
		       p[i].modeled_us, 100 * p[i].util_pe, 100 * p[i].util_vec,
		       100 * p[i].util_dma, p[i].lx_peak_bytes, fastest_mark(p, n, i));
	}
	free(p);
	return CLI_OK;
}

static int cmd_ops(struct emu_args *a)
{
	if (a->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < spyre_ops_count; i++) {
			const struct spyre_op_info *op = &spyre_ops[i];
			json_t *e = json_object();
			jx_set_str(e, "name", op->name);
			jx_set_str(e, "inputs", op->inputs);
			jx_set_str(e, "dtypes", op->dtypes);
			jx_set_str(e, "samples", op->samples);
			jx_set_str(e, "doc", op->doc);
			jx_append_new(arr, e);
		}
		json_t *o = json_object();
		jx_set_new(o, "ops", arr);
		return cli_print_json(o);
	}
	for (size_t i = 0; i < spyre_ops_count; i++) {
		const struct spyre_op_info *op = &spyre_ops[i];
		printf("%-30s (%s)  %s\n    dtypes %s; samples %s\n", op->name, op->inputs, op->doc,
		       op->dtypes, op->samples);
	}
	return CLI_OK;
}

/* The value of a description key as a number (every key but "name"); 0 for a key this table
 * does not know, so that a new key still lists with its label. */
static double hw_value(const struct spyre_hw *hw, const char *key)
{
	const struct {
		const char *key;
		double v;
	} t[] = {
		{ "cores", hw->cores },
		{ "corelets_per_core", hw->corelets_per_core },
		{ "pe_rows", hw->pe_rows },
		{ "pe_cols", hw->pe_cols },
		{ "lx_bytes", (double)hw->lx_bytes },
		{ "stick_bytes", hw->stick_bytes },
		{ "ring_bytes_per_cycle", hw->ring_bytes_per_cycle },
		{ "ring_hop_cycles", hw->ring_hop_cycles },
		{ "dev_mem_bytes", (double)hw->dev_mem_bytes },
		{ "dev_mem_gbps", hw->dev_mem_gbps },
		{ "window_bytes", (double)hw->window_bytes },
		{ "clock_ghz", hw->clock_ghz },
		{ "vec_elems_per_cycle", hw->vec_elems_per_cycle },
		{ "transcendental_factor", hw->transcendental_factor },
		{ "dma_setup_cycles", hw->dma_setup_cycles },
		{ "pe_simd_lanes", hw->pe_simd_lanes },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i].key, key) == 0)
			return t[i].v;
	return 0;
}

static json_t *hw_param_json(const struct spyre_hw *hw, const struct spyre_hw_param *p)
{
	json_t *e = json_object();
	if (strcmp(p->key, "name") == 0)
		jx_set_str(e, "value", hw->name);
	else if (fabs(hw_value(hw, p->key)) < 9e15 &&
		 hw_value(hw, p->key) == (double)(int64_t)hw_value(hw, p->key))
		jx_set_int(e, "value", (int64_t)hw_value(hw, p->key));
	else
		jx_set_real(e, "value", hw_value(hw, p->key));
	jx_set_str(e, "label", p->label == SPYRE_HW_FACT ? "fact" : "estimate");
	jx_set_str(e, "source", p->source);
	return e;
}

static int cmd_hw(struct emu_args *a)
{
	struct spyre_hw hw;
	int rc = a->hw_path ? spyre_hw_load_file(&hw, a->hw_path) : spyre_hw_load_default(&hw);
	if (rc)
		return cli_usage_error(self(), "%s", err_last());
	json_t *o = a->json ? json_object() : NULL;
	if (!a->json)
		printf("%s\n", hw.name);
	for (size_t i = 0; i < hw.nparams; i++) {
		const struct spyre_hw_param *p = &hw.params[i];
		const char *label = p->label == SPYRE_HW_FACT ? "fact" : "estimate";
		if (o)
			jx_set_new(o, p->key, hw_param_json(&hw, p)); /* o owns it now */
		else if (strcmp(p->key, "name") != 0)
			printf("  %-22s %12.15g  %-8s %s\n", p->key, hw_value(&hw, p->key), label,
			       p->source);
		else
			printf("  %-22s %12s  %-8s %s\n", p->key, "(above)", label, p->source);
	}
	/* derived, so it carries the label of what it rests on */
	const char *peak_label = "estimate: corelets x pe_rows x pe_cols x pe_simd_lanes x 2 FLOP "
				 "x cores x clock_ghz";
	if (o) {
		json_t *e = json_object();
		jx_set_real(e, "value", spyre_hw_peak_tflops(&hw));
		jx_set_real(e, "flop_per_cycle_per_core", spyre_hw_peak_flops_per_cycle(&hw));
		jx_set_str(e, "label", "estimate");
		jx_set_str(e, "source", peak_label);
		jx_set_new(o, "peak_fp16_tflops", e); /* o owns it now */
	} else {
		printf("  %-22s %12.4g  %-8s %s (%.0f FLOP/cycle/core)\n", "peak_fp16_tflops",
		       spyre_hw_peak_tflops(&hw), "derived", peak_label,
		       spyre_hw_peak_flops_per_cycle(&hw));
	}
	return o ? cli_print_json(o) : CLI_OK;
}

static json_t *graph_json(const struct spyre_graph_result *r)
{
	json_t *o = json_object(), *ops = json_array(), *rel = json_array();
	jx_set_bool(o, "passed", r->passed);
	jx_set_real(o, "modeled_us", r->modeled_us);
	jx_set_real(o, "max_abs_err", r->max_abs_err);
	jx_set_int(o, "mismatches", (int64_t)r->mismatches);
	for (int i = 0; i < r->nsteps; i++) {
		const struct spyre_graph_step *st = &r->steps[i];
		json_t *e = json_object();
		if (st->relayout) {
			jx_set_str(e, "tensor", st->name);
			jx_set_str(e, "via", st->via);
			jx_set_int(e, "bytes", (int64_t)st->bytes);
			jx_set_real(e, "modeled_us", st->modeled_us);
			jx_set_real(e, "ring_us", st->ring_us);
			jx_set_real(e, "devmem_us", st->devmem_us);
			json_array_append_new(rel, e); /* rel owns e now */
			continue;
		}
		jx_set_str(e, "name", st->name);
		jx_set_str(e, "op", st->op);
		jx_set_str(e, "plan", st->plan);
		jx_set_real(e, "modeled_us", st->modeled_us);
		json_array_append_new(ops, e); /* ops owns e now */
	}
	jx_set_new(o, "ops", ops);       /* o owns ops now */
	jx_set_new(o, "relayouts", rel); /* and rel */
	return o;
}

static void graph_text(const struct spyre_graph_result *r)
{
	for (int i = 0; i < r->nsteps; i++) {
		const struct spyre_graph_step *st = &r->steps[i];
		if (st->relayout)
			printf(
			    "relayout %-12s via %-6s %10.3f us  (%llu bytes; ring %.3f us, device "
			    "memory %.3f us)\n",
			    st->name, st->via, st->modeled_us, (unsigned long long)st->bytes,
			    st->ring_us, st->devmem_us);
		else
			printf("op       %-12s %-12s %10.3f us  plan %s\n", st->name, st->op,
			       st->modeled_us, st->plan);
	}
	printf("total    %.3f us modeled\nnumerics  %s: max abs err %g (atol %g, rtol %g), %llu "
	       "mismatches\n",
	       r->modeled_us, r->passed ? "PASS" : "FAIL", r->max_abs_err, r->atol, r->rtol,
	       (unsigned long long)r->mismatches);
}

static int cmd_graph(struct emu_args *a)
{
	struct spyre_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return cli_usage_error(self(), "out of memory");
	int rc = spyre_graph_load_file(g, a->graph_path);
	if (!rc)
		rc = a->hw_path ? spyre_hw_load_file(&a->hw, a->hw_path)
				: spyre_hw_load_default(&a->hw);
	if (!rc && a->cores)
		rc = spyre_hw_set_cores(&a->hw, a->cores);
	if (rc) {
		free(g);
		return cli_usage_error(self(), "%s", err_last());
	}
	struct spyre_graph_opts o = { .dtype = a->dtype,
				      .hw = &a->hw,
				      .relayout = a->relayout,
				      .seed = a->seed,
				      .trace_path = a->trace };
	struct spyre_graph_result *r = calloc(1, sizeof(*r));
	rc = r ? spyre_graph_run(g, &o, r) : err_set(ERR_NOMEM, "out of memory");
	free(g);
	if (rc) {
		free(r);
		fprintf(stderr, "spyre-ci emu graph: %s\n", err_last());
		return rc == ERR_INVAL || rc == ERR_LIMIT ? CLI_USAGE : CLI_FAILED;
	}
	int code = r->passed ? CLI_OK : CLI_FAILED;
	if (a->json)
		code = cli_print_json(graph_json(r)) == CLI_OK ? code : CLI_FAILED;
	else
		graph_text(r);
	free(r);
	return code;
}

int cmd_emu_main(int argc, char **argv)
{
	struct emu_args a;
	if (emu_args_parse(&a, argc - 1, argv + 1) != 0)
		return cli_usage_error(self(), "%s", err_last());
	int rc = CLI_USAGE;
	switch (a.action) {
	case EMU_LAYOUT:
		rc = cmd_layout(&a);
		break;
	case EMU_RUN:
		rc = cmd_run(&a);
		break;
	case EMU_PLANS:
		rc = cmd_plans(&a);
		break;
	case EMU_OPS:
		rc = cmd_ops(&a);
		break;
	case EMU_HW:
		rc = cmd_hw(&a);
		break;
	case EMU_GRAPH:
		rc = cmd_graph(&a);
		break;
	}
	emu_args_finish(&a);
	return rc;
}

const char cmd_emu_summary[] =
    "run one op on spyre-emu, the Spyre emulator: numerics, modeled time, plans, layouts";

const char cmd_emu_help[] =
    "Usage: spyre-ci emu ACTION [OPTIONS]\n"
    "\n"
    "Runs things on spyre-emu, a CPU emulator of IBM's Spyre card: exact DLFloat16 numerics,\n"
    "128-byte sticks, 32 cores with 2 MiB LX scratchpads on a ring, and a timing model.\n"
    "\n"
    "Actions:\n"
    "  layout --shape S --dtype D [--dim-order 1,0,2] [--json]\n"
    "      the device layout of a host tensor: device_size and stride_map.\n"
    "  run --op OP --shape S [--shape S ...] --dtype D [--cores N] [--seed N]\n"
    "      [--plan NAME] [--hw FILE] [--trace FILE] [--plan-cache DIR] [--atol X] [--rtol X]\n"
    "      [--json]\n"
    "      [op options]\n"
    "      plans the op, runs it, and checks it against a float64 host reference.\n"
    "      Exit 0 when the numbers agree within tolerance, 1 when they do not.\n"
    "  plans --op OP --shape S ... --dtype D [--cores N] [--hw FILE] [--json] [op options]\n"
    "      every candidate plan with its modeled time; the fastest is the default (the\n"
    "      JSON lists {\"plans\": [{\"name\", \"valid\", \"modeled_us\", ...}]}, fastest first).\n"
    "  ops [--json]     the op table: inputs, dtypes and default sample shapes.\n"
    "  hw [--hw FILE] [--json]\n"
    "      the hardware description, each value labelled fact or estimate, and the\n"
    "      derived compute peak of the card.\n"
    "  graph FILE [--dtype D] [--cores N] [--relayout best|ring|devmem] [--seed N]\n"
    "      [--hw FILE] [--trace FILE] [--json]\n"
    "      runs a dataflow graph of ops from a YAML file (inputs, ops, outputs), the\n"
    "      intermediates kept on the device; a transpose of an op's result is a relayout,\n"
    "      over the ring or through device memory (best: the faster). Checked against a\n"
    "      reference of the whole graph; JSON: {\"passed\", \"modeled_us\", \"ops\": [{\"name\",\n"
    "      \"op\", \"plan\", \"modeled_us\"}], \"relayouts\": [{\"tensor\", \"via\", \"bytes\",\n"
    "      \"modeled_us\", \"ring_us\", \"devmem_us\"}]}. See docs/emu.md.\n"
    "\n"
    "Options:\n"
    "  --shape AxBxC     one per input, in the op's input order (see `emu ops`)\n"
    "  --dtype D         float16 (DLFloat16 on the device), float32, int64, int32\n"
    "  --cores N         1..32 (default: all cores of the description)\n"
    "  --seed N          input seed (default 0); the same seed gives the same inputs\n"
    "  --plan NAME       run this plan instead of the fastest (names from `emu plans`)\n"
    "  --hw FILE         a hardware description instead of the built-in one\n"
    "  --trace FILE      write the modeled schedule as Chrome trace-event JSON (Perfetto)\n"
    "  --plan-cache DIR  remember plan choices in DIR (one file per op, shapes, dtype,\n"
    "                    cores and hardware) and reuse them on later runs\n"
    "  --atol X --rtol X tolerance (default: 0.1/0.1 for float16, 1e-3/1e-3 for float32,\n"
    "                    0 for integers; the test passes where |out-ref| <= atol+rtol*|ref|)\n"
    "  --json            machine output: run gives passed, max_abs_err, max_rel_err,\n"
    "                    modeled_us, plan, utilization, lx_peak_bytes, output_digest\n"
    "Op options:\n"
    "  --dim N --keepdim          reductions, softmax, log_softmax\n"
    "  --exponent X               pow\n"
    "  --min X --max X            clamp\n"
    "  --perm 0,2,1               permute (transpose takes --perm D0,D1)\n"
    "  --approximate tanh|none    gelu\n"
    "  --causal                   scaled_dot_product_attention\n"
    "  --eps X                    layer_norm, rms_norm\n"
    "Each option fits only the actions shown above; another is a usage error.\n"
    "\n"
    "Exit codes: 0 ok; 1 the run happened and its numbers disagree with the reference, or\n"
    "it could not finish (a --trace file that cannot be written); 2 bad usage: an unknown\n"
    "action, op, option or plan, bad --shape/--dtype/--cores text, wrong number of shapes, a\n"
    "missing or broken --hw file, or an op on shapes the planner does not handle or that\n"
    "exceed the emulator's limits.\n"
    "\n"
    "Examples:\n"
    "  spyre-ci emu layout --shape 5x100x150 --dtype float16\n"
    "  spyre-ci emu run --op softmax --shape 67x2880 --dtype float16 --cores 8\n"
    "  spyre-ci emu plans --op mm --shape 1024x1024 --shape 1024x1024 --dtype float16\n"
    "  spyre-ci emu run --op swiglu_mlp --shape 64x256 --shape 256x1024 --shape 256x1024 \\\n"
    "      --shape 1024x256 --dtype float16 --trace mlp.json\n";
