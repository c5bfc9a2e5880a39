/* Fuzz target: the Python scanner. Invariants: it never crashes, every range it reports is
 * ordered and within the file, every index points into its array, and scanning the same bytes
 * twice gives the same hashes. */
#include <stdlib.h>

#include "fuzz.h"
#include "selector/scan.h"

static void check(const struct scan_file *f)
{
	for (size_t k = 0; k < f->n_functions; k++) {
		const struct scan_function *fn = &f->functions[k];
		if (fn->first_line > fn->last_line || fn->deco_line > fn->first_line ||
		    fn->last_line > f->n_lines + 1 || fn->class_index >= (int)f->n_classes ||
		    fn->parent_function >= (int)k || !fn->name || !fn->qualname)
			abort();
		for (size_t u = 0; u < fn->n_uses; u++)
			if (!fn->uses[u] || !fn->uses[u][0])
				abort();
	}
	for (size_t k = 0; k < f->n_classes; k++) {
		const struct scan_class *c = &f->classes[k];
		if (c->first_line > c->last_line || c->parent_class >= (int)k || !c->name)
			abort();
	}
	for (size_t k = 0; k < f->n_opinfos; k++)
		if (f->opinfos[k].first_line > f->opinfos[k].last_line || !f->opinfos[k].name)
			abort();
	for (size_t k = 0; k < f->n_imports; k++)
		if (!f->imports[k].module || !f->imports[k].local || !f->imports[k].target)
			abort();
	for (size_t k = 0; k < f->n_globals; k++) {
		const struct scan_global *g = &f->globals[k];
		if (!g->name || g->class_index >= (int)f->n_classes || g->line > f->n_lines + 1)
			abort();
		for (size_t u = 0; u < g->n_uses; u++)
			if (!g->uses[u] || !g->uses[u][0])
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan_file *a = NULL, *b = NULL;
	if (selector_scan(&a, "fuzz/mod.py", "fuzz.mod", (const char *)data, size) != 0)
		return 0;
	check(a);
	if (selector_scan(&b, "fuzz/mod.py", "fuzz.mod", (const char *)data, size) != 0)
		abort();
	if (a->module_hash != b->module_hash || a->n_functions != b->n_functions)
		abort();
	for (size_t k = 0; k < a->n_functions; k++)
		if (a->functions[k].body_hash != b->functions[k].body_hash)
			abort();
	scan_file_destroy(a);
	scan_file_destroy(b);
	return 0;
}
