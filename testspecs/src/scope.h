/* A config's scope, private to testspecs: torch-spyre runs one config at a time (one
 * PYTORCH_TEST_CONFIG), so a config's `global` section decides only that config's files. The
 * merged set keeps every document's global beside the entries it came with; the resolver and
 * the case expansion look at the set through a view whose global is the deciding entry's. */
#ifndef TESTSPECS_SCOPE_H
#define TESTSPECS_SCOPE_H

#include <stddef.h>

#include "arena.h"
#include "testspecs/spec.h"

/* Copies `g` into the arena and points every file of `files` and every test entry of theirs
 * at the copy. Called once per document, before its files are merged into a set. */
int testspecs__bind_doc_global(struct spec_arena *a, struct spec_file *files, size_t n_files,
			       const struct spec_global *g);

/* The global that decides for `entry` (when not NULL), else for the unlisted tests of `file`,
 * else the set's own. */
const struct spec_global *testspecs__global_for(const struct spec_set *set,
						const struct spec_test *entry,
						const struct spec_file *file);

/* `set` itself when `g` is its global, else `*view` filled as `set` with `g` as its global. */
const struct spec_set *testspecs__set_view(struct spec_set *view, const struct spec_set *set,
					   const struct spec_global *g);

#endif
