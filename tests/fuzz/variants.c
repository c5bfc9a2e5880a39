/* Fuzz target: a test's variants (selector/src/catalog_variants.c, catalog_opvariants.c), the
 * input scanned once and used both as the op database and as the test file, so that every
 * @ops / @parametrize / @dtypes argument it holds is evaluated against the OpInfo entries it
 * holds. Invariants: it never crashes, an open list has no names, every name is non-empty,
 * no list is longer than SELECTOR_VARIANTS_MAX, an over-approximation says why. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "selector/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan_file *f = NULL;
	if (selector_scan(&f, "torch/testing/_internal/common_methods_invocations.py",
			  "torch.testing._internal.common_methods_invocations", (const char *)data,
			  size) != 0)
		return 0;
	struct catalog_blob blob = { .scan = f };
	struct catalog_file file = { .path =
					 "torch/testing/_internal/common_methods_invocations.py",
				     .kind = CATALOG_SOURCE,
				     .opdb = true,
				     .blob = &blob };
	struct catalog cat = { .files = &file, .n_files = 1 };
	for (size_t k = 0; k < f->n_functions && k < 512; k++) {
		struct catalog_test t = { .id = "x", .file = 0, .function = (int)k };
		struct catalog_variants v;
		if (selector_catalog_variants(&v, &cat, &t) != 0)
			continue; /* out of memory: nothing to check */
		if ((v.open && v.n) || v.n > SELECTOR_VARIANTS_MAX || (v.approx && !v.why) ||
		    v.n_dtypes > CATALOG_DTYPES_MAX)
			abort();
		for (size_t i = 0; i < v.n; i++)
			if (!v.names[i] || !v.names[i][0])
				abort();
		for (size_t i = 0; i < v.n_dtypes; i++)
			if (!v.dtypes[i] || !v.dtypes[i][0])
				abort();
		selector_catalog_variants_finish(&v);
	}
	scan_file_destroy(f);
	return 0;
}
