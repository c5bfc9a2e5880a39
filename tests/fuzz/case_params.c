/* Fuzz target: a model-op call's arguments as emulator parameters. The spec loads (as the spec
 * target loads it), every test entry expands into kernel cases (kernels: and
 * sample_inputs_func), and testspecs_case_params reads each case's values, py index tuples
 * and kwargs. Invariants: no crash, no leak; an argument it cannot read is ERR_INVAL with a
 * message, never a parameter set half-way and accepted. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fuzz.h"
#include "spyre-emu/ops.h"
#include "testspecs/cases.h"
#include "testspecs/spec.h"

static void params_of(const struct spec_case_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct spyre_op_params p;
		int rc = testspecs_case_params(&l->v[i], &p);
		if (rc != 0 && rc != ERR_INVAL && rc != ERR_NOMEM)
			abort();
		if (rc == ERR_INVAL && !err_last()[0])
			abort();
		if (rc == 0 && (p.shape_ndim < 0 || p.shape_ndim > SPYRE_DIMS_MAX ||
				p.n_index < 0 || p.n_index > SPYRE_INDEX_MAX))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec_set *set = NULL;
	if (testspecs_set_create(&set))
		return 0;
	struct spec_load_opts opts = { 0 };
	if (testspecs_load_text(set, "fuzz.yaml", (const char *)data, size, &opts) == 0) {
		struct spec_case_list list;
		testspecs_cases_init(&list);
		for (size_t f = 0; f < set->n_files; f++)
			for (size_t e = 0; e < set->files[f].n_tests; e++) {
				struct spec_expand_result res;
				if (testspecs_cases_expand_entry(&list, set, &set->files[f],
								 &set->files[f].tests[e], "fuzz",
								 NULL, &res) != 0)
					break;
			}
		params_of(&list);
		testspecs_cases_finish(&list);
	}
	testspecs_set_destroy(set);
	return 0;
}
