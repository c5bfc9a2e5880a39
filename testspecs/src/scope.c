/* Per-config global sections (see scope.h): the binding done at merge time and the views the
 * resolver and the case expansion decide through. */
#include "scope.h"

int testspecs__bind_doc_global(struct spec_arena *a, struct spec_file *files, size_t n_files,
			       const struct spec_global *g)
{
	if (!n_files)
		return 0;
	struct spec_global *copy = spec_arena_calloc(a, 1, sizeof(*copy));
	if (!copy)
		return -1;
	*copy = *g; /* its arrays already live in the same arena */
	for (size_t f = 0; f < n_files; f++) {
		files[f].doc_global = copy;
		for (size_t t = 0; t < files[f].n_tests; t++)
			files[f].tests[t].doc_global = copy;
	}
	return 0;
}

const struct spec_global *testspecs__global_for(const struct spec_set *set,
						const struct spec_test *entry,
						const struct spec_file *file)
{
	if (entry && entry->doc_global)
		return entry->doc_global;
	if (file && file->doc_global)
		return file->doc_global;
	return &set->global;
}

const struct spec_set *testspecs__set_view(struct spec_set *view, const struct spec_set *set,
					   const struct spec_global *g)
{
	if (g == &set->global)
		return set;
	*view = *set;
	view->global = *g;
	return view;
}
