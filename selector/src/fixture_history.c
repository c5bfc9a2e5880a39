/* The synthetic upstream's history: each commit makes one kind of edit to the model (a source
 * function body, a test body, an op entry, a kernel, a build file, a rename, ...), rewrites the
 * files it touches, and writes its ground truth as one JSON line. Every thirtieth commit or so is
 * a merge of a short side branch (two parents); its truth is the union of the side's commits.
 * Every eleventh ordinary commit or so also names a test in its message, as PyTorch's do, and
 * that test is in its truth (stage 2's message signal). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "fixture_history.h"

enum kind {
	K_SRC_BODY,
	K_FUNCTIONAL,
	K_METHOD,
	K_TEST_BODY,
	K_TEST_ADD,
	K_TEST_MODULE,
	K_OPINFO,
	K_YAML,
	K_CPP,
	K_DECOMP,
	K_DOCS,
	K_BINARY,
	K_BUILD,
	K_INIT,
	K_CONFTEST,
	K_RUN_TEST,
	K_COMMON,
	K_RENAME,
	K_DELETE,
	K_COUNT
};
static const char *const kind_names[K_COUNT] = {
	"src_body",    "functional",   "class_method",  "test_body",     "test_add",
	"test_module", "opinfo",       "native_yaml",   "native_cpp",    "decomp",
	"docs",        "binary",       "build",         "init",          "conftest",
	"run_test",    "common_utils", "rename_module", "delete_module",
};
/* per mille; fallback kinds (build .. delete) add up to about 10% */
static const uint16_t kind_weight[K_COUNT] = { 270, 60, 60, 150, 40, 40, 80, 40, 50, 30,
					       20,  15, 25, 10,  10, 10, 10, 20, 10 };

static int edited_add(struct fx_hist *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int edited_add(struct fx_hist *h, const char *fmt, ...)
{
	int rc = buf_appendf(&h->edited, "%s\"", h->edited.len ? "," : "");
	va_list ap;
	va_start(ap, fmt);
	rc = rc ? rc : buf_vappendf(&h->edited, fmt, ap);
	va_end(ap);
	return rc ? rc : buf_append_char(&h->edited, '"');
}

static int node_qualname(struct fx_gen *g, struct buf *b, uint32_t n)
{
	const struct fx_node *x = &g->nodes[n];
	const char *mod = g->mods[x->mod].dotted;
	if (x->kind == FX_METHOD)
		return buf_appendf(b, "%s.%s.%s", mod, g->nodes[x->cls].name, x->name);
	return buf_appendf(b, "%s.%s", mod, x->name);
}

static uint32_t pick_node(struct fx_gen *g, int kind)
{
	for (int tries = 0; tries < 10000; tries++) {
		uint32_t i = kind == K_FUNCTIONAL
				 ? g->mods[0].first + fixture__below(&g->rng, g->mods[0].n)
				 : fixture__below(&g->rng, g->nnodes);
		const struct fx_node *n = &g->nodes[i];
		if (g->mods[n->mod].deleted)
			continue;
		if ((kind == K_METHOD) == (n->kind == FX_METHOD) && n->kind != FX_CLASS)
			return i;
	}
	return FX_NONE;
}

static int edit_node(struct fx_hist *h, int kind)
{
	struct fx_gen *g = h->g;
	uint32_t i = pick_node(g, kind);
	if (i == FX_NONE)
		return err_set(ERR_NOTFOUND, "fixture: no node to edit");
	g->nodes[i].version++;
	uint32_t m = g->nodes[i].mod;
	int rc = buf_append_str(&h->edited, h->edited.len ? ",\"" : "\"");
	rc = rc ? rc : node_qualname(g, &h->edited, i);
	rc = rc ? rc : buf_append_char(&h->edited, '"');
	rc = rc ? rc : fixture__render_module(g, m);
	rc = rc ? rc : fixture__file_set_text(g, g->mods[m].path);
	return rc ? rc : fixture__truth_node(g, i);
}

static int test_edited(struct fx_hist *h, uint32_t t)
{
	int rc = buf_append_str(&h->edited, h->edited.len ? ",\"" : "\"");
	rc = rc ? rc : fixture__test_id(h->g, &h->edited, t);
	return rc ? rc : buf_append_char(&h->edited, '"');
}

static int edit_test(struct fx_hist *h, int kind)
{
	struct fx_gen *g = h->g;
	struct fx_rng *r = &g->rng;
	uint32_t t, f;
	int rc = 0;
	if (kind == K_TEST_MODULE) {
		f = fixture__below(r, g->ntfiles);
		g->tfiles[f].version++;
		rc = edited_add(h, "%s", g->tfiles[f].path);
		rc = rc ? rc : fixture__truth_file(g, f);
	} else if (kind == K_TEST_ADD) {
		f = fixture__below(r, g->ntfiles);
		struct fx_tfile *tf = &g->tfiles[f];
		uint8_t c = (uint8_t)fixture__below(r, tf->nclasses);
		uint8_t k = !tf->device[c]         ? FX_TEST_PLAIN
			    : fixture__below(r, 4) ? FX_TEST_DEVICE
						   : FX_TEST_OPS;
		rc = fixture__test_add(g, f, c, k, &t);
		rc = rc ? rc : fixture__truth_test(g, t);
		rc = rc ? rc : test_edited(h, t);
	} else {
		t = fixture__below(r, g->ntests);
		f = g->tests[t].file;
		g->tests[t].version++;
		if (fixture__below(r, 10) < 3)
			rc = fixture__test_set_uses(g, t);
		rc = rc ? rc : fixture__truth_test(g, t);
		rc = rc ? rc : test_edited(h, t);
	}
	return rc ? rc : fixture__write_tfile(g, f);
}

static int edit_op(struct fx_hist *h, int kind)
{
	struct fx_gen *g = h->g;
	uint32_t o = FX_NONE;
	for (int tries = 0; tries < 1000 && o == FX_NONE; tries++) {
		uint32_t c = fixture__below(&g->rng, g->nops);
		if ((kind != K_OPINFO || g->ops[c].has_info) &&
		    (kind != K_DECOMP || g->ops[c].has_decomp))
			o = c;
	}
	if (o == FX_NONE)
		return err_set(ERR_NOTFOUND, "fixture: no op for a %s edit", kind_names[kind]);
	struct fx_op *op = &g->ops[o];
	char path[FX_PATH_MAX];
	int rc = 0;
	if (kind == K_OPINFO) {
		op->v_info++;
		fixture__opinfo_path(g, path, sizeof(path), op->info_file);
		rc = fixture__render_opinfo(g, op->info_file);
		/* an OpInfo entry only matters to the tests parametrised over it */
		for (uint32_t k = 0; !rc && k < g->ops_tests.n; k++)
			if (fixture__test_covers_op(g, &g->tests[g->ops_tests.v[k]], o))
				rc = fixture__truth_test_via(g, g->ops_tests.v[k], FX_BIT_NATIVE);
	} else {
		if (kind == K_YAML) {
			op->v_yaml++;
			snprintf(path, sizeof(path), "aten/src/ATen/native/native_functions.yaml");
			rc = fixture__render_yaml(g);
		} else if (kind == K_CPP) {
			op->v_cpp++;
			fixture__cpp_path(path, sizeof(path), op->cpp_file);
			rc = fixture__render_cpp(g, op->cpp_file);
		} else {
			op->v_decomp++;
			snprintf(path, sizeof(path), "torch/_decomp/decompositions.py");
			rc = fixture__render_decomp(g);
		}
		rc = rc ? rc : fixture__truth_op(g, o);
	}
	rc = rc ? rc : edited_add(h, "aten.%s", op->name);
	return rc ? rc : fixture__file_set_text(g, path);
}

static int edit_infra(struct fx_hist *h, int kind)
{
	struct fx_gen *g = h->g;
	uint32_t i = fixture__below(&g->rng, 4);
	h->fallback = kind >= K_BUILD;
	g->affected_all = kind >= K_BUILD;
	switch (kind) {
	case K_DOCS:
		g->v_docs[i]++;
		return fixture__write_doc_or_bin(g, 0, (int)i);
	case K_BINARY:
		g->v_bin[i & 1]++;
		return fixture__write_doc_or_bin(g, 1, (int)i);
	case K_BUILD:
		g->v_build[i]++;
		return fixture__write_infra(g, FX_INFRA_SETUP + (int)i);
	case K_INIT:
		g->v_init++;
		return fixture__write_infra(g, FX_INFRA_INIT);
	case K_CONFTEST:
		g->v_conftest++;
		return fixture__write_infra(g, FX_INFRA_CONFTEST);
	case K_RUN_TEST:
		g->v_run_test++;
		return fixture__write_infra(g, FX_INFRA_RUN_TEST);
	default:
		g->v_common++;
		return fixture__write_infra(g, FX_INFRA_COMMON);
	}
}

/* Re-renders what names module m: its importers, torch/__init__.py, test files that import it. */
static int rerender_importers(struct fx_gen *g, uint32_t m)
{
	const struct fx_module *mod = &g->mods[m];
	int rc = fixture__write_infra(g, FX_INFRA_INIT);
	for (uint32_t i = mod->first; !rc && i < mod->first + mod->n; i++) {
		const struct fx_node *n = &g->nodes[i];
		for (uint32_t k = 0; !rc && k < n->callers.n; k++) {
			uint32_t cm = g->nodes[n->callers.v[k]].mod;
			if (cm != m && !g->mods[cm].deleted) {
				rc = fixture__render_module(g, cm);
				rc = rc ? rc : fixture__file_set_text(g, g->mods[cm].path);
			}
		}
		for (uint32_t k = 0; !rc && k < n->users.n; k++) {
			uint32_t f = g->tests[n->users.v[k]].file;
			rc = fixture__write_tfile(g, f);
		}
	}
	return rc;
}

static int edit_module(struct fx_hist *h, int kind)
{
	struct fx_gen *g = h->g;
	uint32_t m = FX_NONE;
	for (int tries = 0; tries < 10000 && m == FX_NONE; tries++) {
		uint32_t c = 1 + fixture__below(&g->rng, g->nmods - 1);
		if (!g->mods[c].deleted && (kind == K_RENAME || g->mods[c].orphan))
			m = c;
	}
	if (m == FX_NONE) {
		if (kind == K_DELETE)
			return edit_module(h, K_RENAME);
		return err_set(ERR_NOTFOUND, "fixture: no module to rename");
	}
	h->kind = kind;
	h->fallback = 1;
	struct fx_module *mod = &g->mods[m];
	int rc = edited_add(h, "%s", mod->dotted);
	for (uint32_t i = mod->first; !rc && i < mod->first + mod->n; i++)
		rc = fixture__truth_node(g, i);
	rc = rc ? rc : fixture__file_del(g, mod->path);
	if (rc || kind == K_DELETE) {
		mod->deleted = 1;
		return rc ? rc : fixture__write_infra(g, FX_INFRA_INIT);
	}
	g->renames++;
	size_t pl = strlen(mod->path) - 3, dl = strlen(mod->dotted);
	if (pl + 16 >= sizeof(mod->path) || dl + 16 >= sizeof(mod->dotted))
		return err_set(ERR_LIMIT, "fixture: module path too long to rename: %s", mod->path);
	snprintf(mod->path + pl, sizeof(mod->path) - pl, "_r%u.py", g->renames);
	snprintf(mod->dotted + dl, sizeof(mod->dotted) - dl, "_r%u", g->renames);
	rc = fixture__render_module(g, m);
	rc = rc ? rc : fixture__file_set_text(g, mod->path);
	return rc ? rc : rerender_importers(g, m);
}

static int pick_kind(struct fx_gen *g, int side)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t x = fixture__below(&g->rng, 1000), acc = 0;
		for (int k = 0; k < K_COUNT; k++) {
			acc += kind_weight[k];
			if (x < acc) {
				if (side && (k == K_RENAME || k == K_DELETE))
					break;
				return k;
			}
		}
	}
	return K_SRC_BODY;
}

static int do_edit(struct fx_hist *h, int kind)
{
	h->kind = kind;
	switch (kind) {
	case K_SRC_BODY:
	case K_FUNCTIONAL:
	case K_METHOD: {
		int rc = edit_node(h, kind);
		if (!rc && kind == K_SRC_BODY && fixture__below(&h->g->rng, 100) < 15)
			rc = edit_node(h, kind); /* sometimes two functions at once */
		return rc;
	}
	case K_TEST_BODY:
	case K_TEST_ADD:
	case K_TEST_MODULE:
		return edit_test(h, kind);
	case K_OPINFO:
	case K_YAML:
	case K_CPP:
	case K_DECOMP:
		return edit_op(h, kind);
	case K_RENAME:
	case K_DELETE:
		return edit_module(h, kind);
	default:
		return edit_infra(h, kind);
	}
}

const char *fixture__kind_name(int kind)
{
	return kind >= 0 && kind < K_COUNT ? kind_names[kind]
	       : kind == K_MERGE           ? "merge"
					   : "initial";
}

/* Every eleventh commit that is no fallback also names a test in its message, in one of the forms
 * PyTorch's messages use (Class.method, a full id, an instantiated device-generic name with its
 * class, a run_test -k line), and the test joins its truth. Chosen from the commit's index, with
 * no random draw, so that the rest of the history stays as it was. */
static int name_a_test(struct fx_hist *h, char *out, size_t n)
{
	struct fx_gen *g = h->g;
	out[0] = '\0';
	if (h->fallback || h->index % 11 != 5 || g->ntests == 0)
		return 0;
	uint32_t t = (uint32_t)(((uint64_t)h->index * 2654435761u) % g->ntests);
	struct buf b;
	buf_init(&b, FX_PATH_MAX + 2 * FX_NAME_MAX + 16);
	int rc = fixture__test_id(g, &b, t);
	const char *id = buf_str(&b), *c1 = strstr(id, "::"),
		   *c2 = c1 ? strstr(c1 + 2, "::") : NULL;
	if (!rc && c2) {
		int pl = (int)(c1 - id), cl = (int)(c2 - c1 - 2);
		const char *cls = c1 + 2, *name = c2 + 2;
		switch ((h->index / 11) % 4) {
		case 0:
			snprintf(out, n, "Fixes %.*s.%s.\n\n", cl, cls, name);
			break;
		case 1:
			snprintf(out, n, "Fixes %s.\n\n", id);
			break;
		case 2:
			if (g->tfiles[g->tests[t].file].device[g->tests[t].cls])
				snprintf(out, n, "Fixes %s_cpu_float32 in %.*sCPU.\n\n", name, cl,
					 cls);
			else
				snprintf(out, n, "Fixes `%.*s::%s`.\n\n", cl, cls, name);
			break;
		default:
			snprintf(out, n, "Repro: python %.*s -k %s\n\n", pl, id, name);
		}
		rc = fixture__truth_test(g, t);
	}
	buf_finish(&b);
	return rc;
}

/* One ordinary commit on top of `parent`: an edit, its commit and its truth line. */
int fixture__hist_commit(struct fx_hist *h, const git_oid *parent, git_oid *out, int side)
{
	struct fx_gen *g = h->g;
	fixture__truth_begin(g);
	fixture__paths_clear(g);
	buf_reset(&h->edited);
	h->fallback = 0;
	int rc = do_edit(h, pick_kind(g, side));
	if (rc)
		return rc;
	char msg[1024], named[FX_PATH_MAX + 2 * FX_NAME_MAX + 64];
	if ((rc = name_a_test(h, named, sizeof(named))))
		return rc;
	snprintf(msg, sizeof(msg), "%s: %s\n\n%sEdits %s.\n", fixture__kind_name(h->kind),
		 g->npaths ? g->paths[0] : "(nothing)", named, buf_str(&h->edited));
	rc = fixture__commit(g, out, msg, parent, 1, h->index++);
	rc = rc ? rc : fixture__hist_truth(h, out, parent, 1);
	if (!rc && side)
		rc = fixture__hist_merge_collect(h);
	return rc;
}
