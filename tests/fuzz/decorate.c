/* Fuzz target: the reader of what PyTorch's test does with an op (selector/src/
 * catalog_decorate.c): the input is scanned as an op database and a test file at once; every
 * entry's skips=/decorators= is read for every test function's class and name, and every
 * function's own tolerance decorators. Invariants: it never crashes, no tolerance is negative
 * or NaN, a skip reason exists exactly when a skip does and is a string of the buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "fuzz.h"
#include "selector/scan.h"
#include "testspecs/cases.h"

static void check(const double *v)
{
	for (int d = 0; d < SPEC_DTYPE_COUNT; d++)
		if (!(v[d] >= 0) || isinf(v[d]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan_file *f = NULL;
	if (selector_scan(&f, "test/test_x.py", "test.test_x", (const char *)data, size) != 0)
		return 0;
	char why[160];
	for (size_t k = 0; k < f->n_functions && k < 256; k++) {
		const struct scan_function *fn = &f->functions[k];
		const char *cls = fn->class_index >= 0 && (size_t)fn->class_index < f->n_classes
				      ? f->classes[fn->class_index].name
				      : NULL;
		double atol[SPEC_DTYPE_COUNT] = { 0 }, rtol[SPEC_DTYPE_COUNT] = { 0 };
		catalog__test_tolerances(fn, atol, rtol);
		check(atol);
		check(rtol);
		for (size_t i = 0; i < f->n_opinfos && i < 64; i++) {
			struct spec_opinfo o = { 0 };
			catalog__entry_decorations(&f->opinfos[i], cls, fn->name, &o, why,
						   sizeof why);
			check(o.atol);
			check(o.rtol);
			if ((o.skip != 0) != (o.skip_why != NULL) ||
			    (o.skip_why && o.skip_why != why) ||
			    (o.skip_why && strlen(o.skip_why) >= sizeof why))
				abort();
		}
	}
	scan_file_destroy(f);
	return 0;
}
