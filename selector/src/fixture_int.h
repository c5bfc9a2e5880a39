/* The synthetic upstream generator's internals, shared by fixture*.c: the model (modules,
 * functions, classes, native ops, test files, tests), the in-memory git tree that commits are
 * written from, and the renderers that turn the model into file text. */
#ifndef SELECTOR_FIXTURE_INT_H
#define SELECTOR_FIXTURE_INT_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "selector/fixture.h"

#define FX_NONE      UINT32_MAX
#define FX_CALLS_MAX 3
#define FX_USES_MAX  3
#define FX_LEVELS    4
#define FX_NAME_MAX  48
#define FX_PATH_MAX  160

/* A growable array of indices. */
struct fx_vec {
	uint32_t *v;
	uint32_t n, cap;
};
int fixture__vec_push(struct fx_vec *a, uint32_t x);
void fixture__vec_remove(struct fx_vec *a, uint32_t x); /* first occurrence, order kept */
void fixture__vec_free(struct fx_vec *a);

/* splitmix64: small, fast, and the same on every platform. */
struct fx_rng {
	uint64_t s;
};
uint64_t fixture__rand(struct fx_rng *r);
uint32_t fixture__below(struct fx_rng *r, uint32_t n); /* 0..n-1; n > 0 */

enum fx_node_kind { FX_FUNC, FX_CLASS, FX_METHOD };

/* A function, a class or a method of a source module. A class "calls" its methods, so that a
 * test using the class reaches every method. */
struct fx_node {
	char name[FX_NAME_MAX];
	uint32_t mod;
	uint32_t cls; /* a method's class; FX_NONE otherwise */
	uint32_t calls[FX_CALLS_MAX];
	uint32_t op; /* the native op the body calls, FX_NONE for none */
	uint32_t version;
	uint8_t kind, level, ncalls;
	uint8_t api;           /* re-exported by torch/__init__.py as api_<index> */
	struct fx_vec callers; /* nodes that call this one (a method: its class) */
	struct fx_vec users;   /* tests that use this one directly */
};

struct fx_module {
	char path[FX_PATH_MAX];   /* torch/a/b.py */
	char dotted[FX_PATH_MAX]; /* torch.a.b */
	uint32_t first, n;        /* its nodes: first .. first+n-1 */
	uint32_t version;
	uint8_t deleted, orphan, functional;
};

enum fx_op_kind { FX_OP_OTHER, FX_OP_UNARY, FX_OP_BINARY, FX_OP_REDUCTION };

struct fx_op {
	char name[FX_NAME_MAX];
	uint8_t kind, has_info, has_decomp;
	uint16_t info_file; /* 0: common_methods_invocations.py, k: definitions file k-1 */
	uint16_t cpp_file;
	uint32_t v_yaml, v_cpp, v_info, v_decomp;
	struct fx_vec nodes; /* nodes whose body calls it */
	struct fx_vec users; /* tests that call it directly */
};

enum fx_test_kind { FX_TEST_PLAIN, FX_TEST_DEVICE, FX_TEST_OPS };
enum fx_opset {
	FX_SET_NONE,
	FX_SET_OP_DB,
	FX_SET_UNARY,
	FX_SET_BINARY,
	FX_SET_REDUCTION,
	FX_SET_LIST
};
enum fx_style { FX_STYLE_TORCH, FX_STYLE_F, FX_STYLE_FROM, FX_STYLE_DOTTED };

/* The way a test reaches a function it uses: directly in its body, or through one of the shapes
 * PyTorch's tests use (a helper in the test file or in torch/testing/_internal/, an aliased
 * import, a re-export of torch/__init__.py, a helper method, a decorator, a partial, a lambda in
 * a table, a nested function, a module-level constant, getattr with a computed name). */
enum fx_via {
	FX_VIA_DIRECT,
	FX_VIA_HELPER,
	FX_VIA_INTERNAL,
	FX_VIA_ALIAS_FROM,
	FX_VIA_ALIAS_MOD,
	FX_VIA_REEXPORT,
	FX_VIA_METHOD,
	FX_VIA_DECORATOR,
	FX_VIA_PARTIAL,
	FX_VIA_LAMBDA,
	FX_VIA_NESTED,
	FX_VIA_CONST,
	FX_VIA_GETATTR,
	FX_VIA_COUNT
};
/* Shape bits of a truth edge: 1 << via, and these. */
#define FX_BIT_INHERITED (1u << FX_VIA_COUNT)       /* the test is inherited from a mixin */
#define FX_BIT_NATIVE    (1u << (FX_VIA_COUNT + 1)) /* through a native op or an @ops set */
#define FX_BIT_TEST      (1u << (FX_VIA_COUNT + 2)) /* the test itself was edited or named */
#define FX_SHAPE_BITS    (FX_VIA_COUNT + 3)
const char *fixture__shape_name(unsigned bit); /* bit index 0 .. FX_SHAPE_BITS-1 */
int fixture__shapes_append(struct buf *b, uint32_t mask, char sep);

struct fx_test {
	char name[FX_NAME_MAX];
	uint32_t file;
	uint32_t uses[FX_USES_MAX];
	uint32_t ops[2];
	uint32_t list_ops[2];
	uint32_t version;
	uint8_t cls, kind, opset, nuses, nops, nlist, method_style, dtypes;
	uint8_t style[FX_USES_MAX];
	uint8_t via[FX_USES_MAX];
	uint8_t inherited; /* written in a mixin class the test class inherits from */
};

#define FX_CLASSES_MAX 4
struct fx_tfile {
	char path[FX_PATH_MAX];
	char stem[FX_NAME_MAX]; /* CamelCase, for class names */
	struct fx_vec tests;
	uint32_t version;
	uint8_t nclasses;
	uint8_t device[FX_CLASSES_MAX];
};

struct fx_scale {
	uint32_t modules, funcs_per_module, ops, ops_per_cpp, def_files, test_files;
	uint32_t tests_per_file, files_target, commits;
};

/* ---- the in-memory tree ---- */
struct fx_dir;
struct fx_ent {
	char *name;
	struct fx_dir *sub; /* NULL for a file */
	git_oid oid;
	uint32_t mode;
};
struct fx_dir {
	struct fx_ent *e;
	uint32_t n, cap;
	git_oid oid;
	uint8_t dirty;
};

struct fx_gen {
	struct fx_scale sc;
	struct fx_rng rng;
	int shapes_all; /* write every shape of enum fx_via, not only FX_VIA_DIRECT */
	struct fx_node *nodes;
	uint32_t nnodes;
	struct fx_module *mods;
	uint32_t nmods;
	struct fx_op *ops;
	uint32_t nops;
	struct fx_test *tests;
	uint32_t ntests, captests;
	char **test_ids; /* formatted once, on first use; parallel to tests */
	struct fx_tfile *tfiles;
	uint32_t ntfiles;
	struct fx_vec by_level[FX_LEVELS]; /* FUNC nodes of live, non-orphan modules */
	struct fx_vec ops_tests;           /* tests with an @ops decorator */
	uint32_t ncpp, added_tests, renames;
	uint32_t v_init, v_build[4], v_conftest, v_run_test, v_common, v_docs[4], v_bin[2];
	/* marks for the truth computations, stamped with an epoch to avoid clearing */
	uint32_t *node_mark, *test_mark, *test_slot, epoch;
	struct fx_vec affected;
	struct fx_vec affected_via; /* shape bits of each affected test, parallel */
	uint8_t affected_all;
	/* git */
	git_repository *repo;
	git_odb *odb;
	git_odb_backend *mempack; /* owned by odb */
	int record_paths;         /* off for the first commit, which adds everything */
	struct fx_dir root;
	struct buf text; /* scratch for rendering */
	size_t objects;
	git_oid *oids; /* every object written, for the pack */
	size_t noids, capoids;
	char **paths; /* paths changed by the commit being built */
	uint32_t npaths, cappaths;
	FILE *truth;
};

/* fixture_model.c */
int fixture__model_build(struct fx_gen *g);
void fixture__model_free(struct fx_gen *g);
int fixture__test_add(struct fx_gen *g, uint32_t file, uint8_t cls, uint8_t kind, uint32_t *out);
int fixture__test_set_uses(struct fx_gen *g, uint32_t t);
void fixture__truth_begin(struct fx_gen *g);
int fixture__truth_node(struct fx_gen *g, uint32_t node);
int fixture__truth_op(struct fx_gen *g, uint32_t op);
int fixture__truth_file(struct fx_gen *g, uint32_t tfile);
int fixture__truth_test(struct fx_gen *g, uint32_t t); /* FX_BIT_TEST */
int fixture__truth_test_via(struct fx_gen *g, uint32_t t, uint32_t bits);
uint32_t fixture__test_bits(const struct fx_test *t);
int fixture__test_id(struct fx_gen *g, struct buf *b, uint32_t t);
const char *fixture__opset_name(uint8_t set);
int fixture__test_covers_op(const struct fx_gen *g, const struct fx_test *t, uint32_t op);

/* fixture_render.c: each renders one file into g->text (reset first). */
int fixture__render_module(struct fx_gen *g, uint32_t m);
int fixture__render_init(struct fx_gen *g);
int fixture__render_tfile(struct fx_gen *g, uint32_t f);
int fixture__render_helpers(struct fx_gen *g, uint32_t f); /* its torch/testing/_internal/ part */
int fixture__helpers_path(const struct fx_gen *g, char *out, size_t cap, uint32_t f);
int fixture__write_tfile(struct fx_gen *g, uint32_t f); /* both, rendered and set */
int fixture__render_native(struct fx_gen *g);           /* torch/_C/_VariableFunctions.py */
int fixture__render_yaml(struct fx_gen *g);
int fixture__render_cpp(struct fx_gen *g, uint32_t file);
int fixture__render_decomp(struct fx_gen *g);
int fixture__render_opinfo(struct fx_gen *g, uint32_t file); /* 0: cmi, k: definitions k-1 */
int fixture__render_specs(struct fx_gen *g);
int fixture__cpp_path(char *out, size_t cap, uint32_t file);
int fixture__opinfo_path(const struct fx_gen *g, char *out, size_t cap, uint32_t file);
/* An op entry's dtypes= (its Python text and the scanner's canonical names) and the shapes its
 * sample function loops over (a tuple of shape tuples, or NULL code and truth for none), by
 * the op's index (fixture_opinfo.c). */
void fixture__op_dtypes(uint32_t op, const char **expr, const char **truth);
void fixture__op_shapes(const struct fx_op *o, uint32_t op, const char **code, const char **truth);
/* .ground_truth/opinfos.jsonl: every entry (and the variant entry of `variant_op`, FX_NONE for
 * none) with its file, dtypes, sample function and shapes. */
int fixture__write_opinfo_truth(struct fx_gen *g, const char *dir, uint32_t variant_op,
				const char *variant_name);
extern const char *const fixture__def_names[];
extern const size_t fixture__def_names_count;

/* fixture_tree.c */
int fixture__oid_note(struct fx_gen *g, const git_oid *oid);
int fixture__file_set(struct fx_gen *g, const char *path, const void *data, size_t len);
int fixture__file_set_text(struct fx_gen *g, const char *path); /* g->text */
int fixture__file_del(struct fx_gen *g, const char *path);
int fixture__commit(struct fx_gen *g, git_oid *out, const char *msg, const git_oid *parents,
		    size_t nparents, uint32_t index);
void fixture__tree_free(struct fx_dir *d);
size_t fixture__tree_files(const struct fx_dir *d);
void fixture__paths_clear(struct fx_gen *g);

/* fixture_files.c: the rest of the tree (build files, utilities, filler) */
int fixture__write_static(struct fx_gen *g);
int fixture__write_infra(struct fx_gen *g, int which); /* FX_INFRA_* */
int fixture__write_doc_or_bin(struct fx_gen *g, int bin, int i);
enum {
	FX_INFRA_INIT,
	FX_INFRA_SETUP,
	FX_INFRA_CMAKE,
	FX_INFRA_CMAKE_DEPS,
	FX_INFRA_ATEN_CMAKE,
	FX_INFRA_CONFTEST,
	FX_INFRA_RUN_TEST,
	FX_INFRA_COMMON,
	FX_INFRA_DOCS,
	FX_INFRA_BIN
};

#endif
