/* Tests of spyre-emu/hw: the shipped description loads with its labels, the test descriptions
 * in tests/fixtures/hw/ load with their values, and every broken document in
 * tests/fixtures/hw/bad/ is refused with a message that names the file, line and column. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/hw.h"

#define FIX SPYRE_TEST_FIXTURES "/hw/"

Test(hw, shipped_description)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	cr_expect_eq(hw.cores, 32);
	cr_expect_eq(hw.corelets_per_core, 2);
	cr_expect_eq(hw.pe_rows, 8);
	cr_expect_eq(hw.pe_cols, 8);
	cr_expect_eq(hw.lx_bytes, 2u << 20);
	cr_expect_eq(hw.stick_bytes, 128);
	cr_expect_eq(hw.ring_bytes_per_cycle, 128);
	cr_expect_eq(hw.dev_mem_bytes, (uint64_t)128 << 30);
	cr_expect_eq(hw.window_bytes, 256u << 20);
	cr_expect_float_eq(hw.clock_ghz, 1.0, 1e-12);
	cr_expect_float_eq(hw.dev_mem_gbps, 128.0, 1e-12);
	cr_expect_eq(hw.vec_elems_per_cycle, 64);
	cr_expect_eq(hw.transcendental_factor, 4);
	cr_expect_gt(hw.ring_hop_cycles, 0);
	cr_expect_gt(hw.dma_setup_cycles, 0);
	cr_expect(strstr(hw.name, "Spyre") != NULL, "%s", hw.name);
	cr_expect_float_eq(spyre_hw_dev_bytes_per_cycle(&hw), 128.0, 1e-9);
	cr_expect_eq(hw.nparams, 17);
	/* the calibrated peak: 2 corelets x 64 PEs x 4 lanes x 2 FLOP, 32 cores at 1 GHz */
	cr_expect_eq(hw.pe_simd_lanes, 4);
	cr_expect_float_eq(spyre_hw_peak_flops_per_cycle(&hw), 1024.0, 1e-9);
	cr_expect_float_eq(spyre_hw_peak_tflops(&hw), 32.768, 1e-9);
	cr_expect_str_eq(hw.params[0].key, "name");
}

Test(hw, labels)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	static const char *facts[] = {
		"cores",       "corelets_per_core",    "pe_rows",       "pe_cols",     "lx_bytes",
		"stick_bytes", "ring_bytes_per_cycle", "dev_mem_bytes", "window_bytes"
	};
	static const char *estimates[] = { "clock_ghz",           "dev_mem_gbps",
					   "vec_elems_per_cycle", "transcendental_factor",
					   "ring_hop_cycles",     "dma_setup_cycles" };
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		const struct spyre_hw_param *p = spyre_hw_param_find(&hw, facts[i]);
		cr_assert_not_null(p, "%s", facts[i]);
		cr_expect_eq(p->label, SPYRE_HW_FACT, "%s", facts[i]);
		cr_expect_gt(strlen(p->source), 10, "%s has no source", facts[i]);
	}
	for (size_t i = 0; i < sizeof(estimates) / sizeof(estimates[0]); i++) {
		const struct spyre_hw_param *p = spyre_hw_param_find(&hw, estimates[i]);
		cr_assert_not_null(p, "%s", estimates[i]);
		cr_expect_eq(p->label, SPYRE_HW_ESTIMATE, "%s", estimates[i]);
	}
	cr_expect(strstr(spyre_hw_param_find(&hw, "clock_ghz")->source, "ktir-cpu") != NULL);
	cr_expect_null(spyre_hw_param_find(&hw, "l2_bytes"));
}

Test(hw, set_cores)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0);
	cr_expect_eq(spyre_hw_set_cores(&hw, 4), 0);
	cr_expect_eq(hw.cores, 4);
	cr_expect_eq(spyre_hw_set_cores(&hw, 0), ERR_INVAL);
	cr_expect_eq(spyre_hw_set_cores(&hw, 33), ERR_INVAL);
	cr_expect_eq(hw.cores, 4);
}

Test(hw, test_descriptions)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_file(&hw, FIX "one_core.yaml"), 0, "%s", err_last());
	cr_expect_eq(hw.cores, 1);
	cr_expect_eq(hw.lx_bytes, 2u << 20);
	cr_expect_eq(hw.pe_simd_lanes, 1, "optional: one FMA per PE when the file has no width");
	cr_assert_eq(spyre_hw_load_file(&hw, FIX "eight_cores.yaml"), 0, "%s", err_last());
	cr_expect_eq(hw.cores, 8);
	cr_assert_eq(spyre_hw_load_file(&hw, FIX "small_lx.yaml"), 0, "%s", err_last());
	cr_expect_eq(hw.cores, 4);
	cr_expect_eq(hw.lx_bytes, 256u << 10);
	cr_expect_float_eq(hw.clock_ghz, 2.0, 1e-12);
	cr_expect_float_eq(spyre_hw_dev_bytes_per_cycle(&hw), 64.0, 1e-9);
	cr_expect_eq(spyre_hw_load_file(&hw, FIX "no_such_file.yaml"), ERR_NOTFOUND);
	cr_expect(strstr(err_last(), "hardware description: cannot open") != NULL, "%s",
		  err_last());
}

/* A broken document, where its error must point, and what it must say. */
static const struct {
	const char *file;
	int line, col;
	const char *says;
} broken[] = {
	{ "missing_key.yaml", 32, 1, "key 'dma_setup_cycles': missing" },
	{ "unknown_key.yaml", 34, 1, "unknown key 'l2_bytes'" },
	{ "wrong_type.yaml", 4, 16, "key 'cores': expected a scalar" },
	{ "plain_value.yaml", 4, 8, "key 'cores': expected a mapping" },
	{ "not_a_number.yaml", 26, 20, "key 'clock_ghz': 'fast' is not a number" },
	{ "cores_out_of_range.yaml", 4, 16, "key 'cores': 33 is out of range" },
	{ "lx_out_of_range.yaml", 12, 19, "key 'lx_bytes': 1KiB is below the minimum" },
	{ "stick_bytes.yaml", 14, 22, "key 'stick_bytes': 64 is out of range" },
	{ "bad_label.yaml", 26, 32, "label 'guess' is neither fact nor estimate" },
	{ "fact_without_source.yaml", 8, 32, "key 'pe_rows': a fact needs a source" },
	{ "tabs.yaml", 5, 1, "found character that cannot start any token" },
	{ "duplicate_key.yaml", 34, 1, "key 'cores': given twice" },
	{ "duplicate_subkey.yaml", 4, 20, "'value' given twice" },
	{ "alias.yaml", 8, 18, "anchors are not allowed" },
	{ "deep_nesting.yaml", 4, 16, "expected a scalar" },
	{ "huge_scalar.yaml", 5, 17, "a scalar of 71729 bytes" },
	{ "invalid_utf8.yaml", 9, 26, "invalid leading UTF-8 octet" },
	{ "empty.yaml", 1, 1, "the document is empty" },
	{ "two_documents.yaml", 34, 1, "one document only" },
	{ "window_too_big.yaml", 34, 1, "key 'window_bytes': larger than dev_mem_bytes" },
	{ "top_sequence.yaml", 2, 1, "expected a mapping of keys" },
	{ "nul_in_name.yaml", 2, 15, "key 'name': the value contains a NUL byte" },
};

Test(hw, broken_documents_are_located)
{
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		char path[512], where[600];
		snprintf(path, sizeof(path), FIX "bad/%s", broken[i].file);
		snprintf(where, sizeof(where), "%s:%d:%d: ", path, broken[i].line, broken[i].col);
		struct spyre_hw hw;
		memset(&hw, 0x5A, sizeof(hw));
		cr_expect_eq(spyre_hw_load_file(&hw, path), ERR_INVAL, "%s: %s", broken[i].file,
			     err_last());
		cr_expect(strncmp(err_last(), where, strlen(where)) == 0, "%s: want '%s', got '%s'",
			  broken[i].file, where, err_last());
		cr_expect(strstr(err_last(), broken[i].says) != NULL, "%s: want '%s' in '%s'",
			  broken[i].file, broken[i].says, err_last());
		cr_expect_eq(hw.cores, 0x5A5A5A5A, "%s: output written on error", broken[i].file);
	}
}

Test(hw, alias_refused)
{
	/* An alias without an anchor is refused before libyaml resolves it. */
	static const char doc[] = "cores: *x\n";
	struct spyre_hw hw;
	cr_expect_eq(spyre_hw_parse(&hw, doc, sizeof(doc) - 1, "t"), ERR_INVAL);
	cr_expect_str_eq(err_last(), "t:1:8: key 'cores': aliases are not allowed");
}

Test(hw, document_size_bounded)
{
	static char big[(8 << 20) + 2];
	struct spyre_hw hw;
	memset(big, ' ', sizeof(big));
	cr_expect_eq(spyre_hw_parse(&hw, big, sizeof(big), "big"), ERR_LIMIT);
	cr_expect(strstr(err_last(), "big: ") == err_last(), "%s", err_last());
}
