/* The schema walker's state and helpers, shared by load.c (documents, files, tests, edits)
 * and load_values.c (tensors, kernels, global). Private to testspecs. */
#ifndef TESTSPECS_WALK_H
#define TESTSPECS_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include "testspecs/spec.h"
#include "ytree.h"

#define WALK_PATH_MAX 512

/* One document's result, before it is merged into a set. */
struct spec_doc {
	struct spec_strs labels;
	struct spec_file *files;
	size_t n_files;
	struct spec_global global;
};

struct walk {
	struct spec_arena *arena;
	const char *file; /* arena-owned */
	const struct spec_load_opts *opts;
	struct spec_diag_list *diags;
	char path[WALK_PATH_MAX];
	size_t plen;
	size_t errors;
	bool nomem;
};

struct spec_loc walk_loc(const struct walk *w, const struct ynode *n);
void walk_error(struct walk *w, const struct ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void walk_warn(struct walk *w, const struct ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An unknown key: a warning, an error with opts->strict. */
void walk_unknown_key(struct walk *w, const struct ynode *key, const char *where);

size_t walk_push_key(struct walk *w, const char *key);
size_t walk_push_index(struct walk *w, size_t i);
void walk_pop(struct walk *w, size_t saved);

bool walk_is_map(struct walk *w, const struct ynode *n, const char *what);
bool walk_is_seq(struct walk *w, const struct ynode *n, const char *what);
bool walk_key_is(const struct ynode *key, const char *name);
/* The key of pair i of a mapping; reports and returns NULL when it is not a scalar. */
const struct ynode *walk_key(struct walk *w, const struct ynode *map, size_t i);

bool walk_str(struct walk *w, const struct ynode *n, struct spec_str *out, const char *what);
/* A list of strings; with `single`, one string is taken as a list of one. */
bool walk_strs(struct walk *w, const struct ynode *n, struct spec_strs *out, bool single,
	       const char *what);
bool walk_bool(struct walk *w, const struct ynode *n, bool *out);
bool walk_tri(struct walk *w, const struct ynode *n, enum spec_tri *out);
bool walk_double(struct walk *w, const struct ynode *n, double *out);
bool walk_i64(struct walk *w, const struct ynode *n, int64_t *out);
bool walk_ints(struct walk *w, const struct ynode *n, struct spec_ints *out, bool nonneg);
bool walk_mode(struct walk *w, const struct ynode *n, enum spec_mode *out, const char *what);
bool walk_dtype(struct walk *w, const struct ynode *n, struct spec_str *name, enum spec_dtype *out,
		bool torch_prefix);
bool walk_text(struct walk *w, const struct ynode *n, struct spec_str *out);
void *walk_calloc(struct walk *w, size_t n, size_t size);

/* load_values.c */
void walk_tensor(struct walk *w, const struct ynode *n, struct spec_tensor *t);
void walk_sample_inputs(struct walk *w, const struct ynode *n, struct spec_sample_inputs *s);
/* kwargs of a call: under sample_inputs_func, or beside it in an op include item (torch-spyre's
 * model-op configs write both); either way they land in s->kwargs. */
void walk_kwargs(struct walk *w, const struct ynode *v, struct spec_sample_inputs *s);
void walk_kernels(struct walk *w, const struct ynode *n, struct spec_test *t);
/* load_graph.c: a kernel case's `graph:` (read and parsed now) and `relayout:` */
void walk_kernel_graph(struct walk *w, const struct ynode *v, struct spec_kernel *kc);
void walk_kernel_relayout(struct walk *w, const struct ynode *v, struct spec_kernel *kc);
void walk_global(struct walk *w, const struct ynode *n, struct spec_global *g);
void walk_dtype_items(struct walk *w, const struct ynode *n, struct spec_dtype_items *out,
		      bool full);
void walk_precision(struct walk *w, const struct ynode *n, struct spec_precision *p);

/* load.c: one parsed tree into a document. Returns the number of errors. */
size_t walk_document(struct walk *w, const struct ynode *root, struct spec_doc *doc);

#endif
