/* Fuzz target: the spec loader (libyaml events, the located tree, the schema walk, paths and
 * merge) and lint on whatever loaded. Invariants: no crash, no leak; an error always comes
 * with at least one error diagnostic; a clean load merged at least one source. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fuzz.h"
#include "testspecs/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct spec_roots roots = { "/src/pytorch", "/src/torch-spyre" };
	struct spec_set *set = NULL;
	if (testspecs_set_create(&set))
		return 0;
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_load_opts opts = { .strict = size % 2 == 1, .roots = &roots, .diags = &diags };
	int rc = testspecs_load_text(set, "fuzz.yaml", (const char *)data, size, &opts);
	if (rc == ERR_INVAL && diags.n_errors == 0)
		abort();
	if (rc == 0 && set->n_sources != 1)
		abort();
	if (rc == 0 && testspecs_lint(set, &diags) < 0)
		abort();
	for (size_t i = 0; i < set->n_files; i++)
		if (set->files[i].resolved)
			(void)testspecs_glob_match(set->files[i].resolved,
						   "/src/pytorch/test/x.py");
	testspecs_diags_finish(&diags);
	testspecs_set_destroy(set);
	return 0;
}
