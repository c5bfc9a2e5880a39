/* The synthetic upstream's model: source modules with functions and classes in call levels
 * (a function of level L calls functions of level L-1 in other modules; level 0 calls a native
 * op), native ops, test files and their tests. The ground truth of an edit is computed here by
 * walking the reverse call graph from what was edited to the tests that use it. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fixture_int.h"

int fixture__vec_push(struct fx_vec *a, uint32_t x)
{
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 4;
		uint32_t *v = realloc(a->v, (size_t)cap * sizeof(*v));
		if (!v)
			return err_set(ERR_NOMEM, "fixture: out of memory growing a list");
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

void fixture__vec_remove(struct fx_vec *a, uint32_t x)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (a->v[i] == x) {
			memmove(a->v + i, a->v + i + 1, (size_t)(a->n - i - 1) * sizeof(*a->v));
			a->n--;
			return;
		}
}

void fixture__vec_free(struct fx_vec *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}

uint64_t fixture__rand(struct fx_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t fixture__below(struct fx_rng *r, uint32_t n)
{
	return (uint32_t)(fixture__rand(r) % n);
}

/* 0..n-1, low values far more likely (density ~ 1/sqrt(x)): a few popular functions that many
 * others call, as in a real code base, rather than a uniform web. */
static uint32_t skewed(struct fx_rng *r, uint32_t n)
{
	double u = (double)(fixture__rand(r) >> 11) / 9007199254740992.0;
	uint32_t x = (uint32_t)(u * u * u * n);
	return x < n ? x : n - 1;
}

static const char *const pkgs[] = {
	"nn",         "optim",       "utils",  "distributed", "fx",           "_inductor",
	"_dynamo",    "ao",          "jit",    "onnx",        "autograd",     "cuda",
	"sparse",     "special",     "linalg", "fft",         "profiler",     "export",
	"func",       "masked",      "nested", "signal",      "amp",          "backends",
	"_functorch", "_subclasses", "_prims", "_refs",       "quantization", "multiprocessing",
};
static const char *const subs[] = { "core", "passes", "impl", "codegen", "runtime", "graph" };
static const char *const words[] = { "scale", "pad",   "norm",  "fold",  "mask",  "pool",
				     "blend", "warp",  "merge", "split", "shard", "fuse",
				     "trace", "lower", "pack",  "cast",  "tile",  "remap" };
static const char *const real_ops[] = {
	"add",        "sub",         "mul",       "div",     "mm",        "bmm",        "matmul",
	"addmm",      "exp",         "log",       "sqrt",    "rsqrt",     "abs",        "neg",
	"sin",        "cos",         "tanh",      "sigmoid", "relu",      "gelu",       "silu",
	"softmax",    "log_softmax", "sum",       "mean",    "amax",      "amin",       "prod",
	"var",        "std",         "clamp",     "pow",     "where",     "cat",        "stack",
	"layer_norm", "erf",         "floor",     "ceil",    "maximum",   "minimum",    "eq",
	"ne",         "lt",          "logsumexp", "cumsum",  "argmax",    "reciprocal", "expm1",
	"log1p",      "atan2",       "hypot",     "fmod",    "remainder", "norm",       "any",
	"all",        "nansum",
};
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t real_op_kind(const char *n)
{
	static const char *const bin[] = { "add",     "sub",     "mul",  "div",      "pow",
					   "maximum", "minimum", "eq",   "ne",       "lt",
					   "atan2",   "hypot",   "fmod", "remainder" };
	static const char *const red[] = { "sum", "mean", "amax",      "amin",   "prod",
					   "var", "std",  "logsumexp", "argmax", "norm",
					   "any", "all",  "nansum" };
	static const char *const una[] = { "exp",  "log",        "sqrt",  "rsqrt", "abs",
					   "neg",  "sin",        "cos",   "tanh",  "sigmoid",
					   "relu", "gelu",       "silu",  "erf",   "floor",
					   "ceil", "reciprocal", "expm1", "log1p" };
	for (size_t i = 0; i < NELEMS(bin); i++)
		if (!strcmp(n, bin[i]))
			return FX_OP_BINARY;
	for (size_t i = 0; i < NELEMS(red); i++)
		if (!strcmp(n, red[i]))
			return FX_OP_REDUCTION;
	for (size_t i = 0; i < NELEMS(una); i++)
		if (!strcmp(n, una[i]))
			return FX_OP_UNARY;
	return FX_OP_OTHER;
}

static void build_ops(struct fx_gen *g)
{
	struct fx_rng *r = &g->rng;
	for (uint32_t i = 0; i < g->nops; i++) {
		struct fx_op *o = &g->ops[i];
		if (i < NELEMS(real_ops)) {
			snprintf(o->name, sizeof(o->name), "%s", real_ops[i]);
			o->kind = real_op_kind(o->name);
		} else {
			snprintf(o->name, sizeof(o->name), "%s_op%u", words[i % NELEMS(words)], i);
			o->kind = (uint8_t)fixture__below(r, 4);
		}
		o->has_info = fixture__below(r, 10) < 8;
		o->has_decomp = fixture__below(r, 10) < 3;
		o->info_file =
		    (uint16_t)(fixture__below(r, 2) ? 0 : 1 + fixture__below(r, g->sc.def_files));
		o->cpp_file = (uint16_t)(i / g->sc.ops_per_cpp);
		o->v_yaml = o->v_cpp = o->v_info = o->v_decomp = 1;
	}
	g->ncpp = (g->nops + g->sc.ops_per_cpp - 1) / g->sc.ops_per_cpp;
}

static void module_place(struct fx_gen *g, uint32_t i)
{
	struct fx_module *m = &g->mods[i];
	if (i == 0) {
		snprintf(m->path, sizeof(m->path), "torch/nn/functional.py");
		snprintf(m->dotted, sizeof(m->dotted), "torch.nn.functional");
		m->functional = 1;
		return;
	}
	uint32_t ndirs = (g->sc.modules + 39) / 40;
	uint32_t d = i % ndirs, np = NELEMS(pkgs), ns = NELEMS(subs);
	const char *pkg = pkgs[d % np], *sub = subs[(d / np) % ns];
	uint32_t gen = d / (np * ns);
	char subname[32];
	if (gen)
		snprintf(subname, sizeof(subname), "%s%u", sub, gen);
	else
		snprintf(subname, sizeof(subname), "%s", sub);
	const char *w = words[i % NELEMS(words)];
	snprintf(m->path, sizeof(m->path), "torch/%s/%s/%s_%u.py", pkg, subname, w, i);
	snprintf(m->dotted, sizeof(m->dotted), "torch.%s.%s.%s_%u", pkg, subname, w, i);
}

static int build_modules(struct fx_gen *g)
{
	struct fx_rng *r = &g->rng;
	uint32_t fn_cap = g->sc.modules * (g->sc.funcs_per_module + 3) + 200;
	g->nodes = calloc(fn_cap, sizeof(*g->nodes));
	if (!g->nodes)
		return err_set(ERR_NOMEM, "fixture: out of memory for %u nodes", fn_cap);
	for (uint32_t i = 0; i < g->nmods; i++) {
		struct fx_module *m = &g->mods[i];
		module_place(g, i);
		m->version = 1;
		m->orphan = i > 0 && fixture__below(r, 100) < 3;
		m->first = g->nnodes;
		/* one call level per module: imports then only go down (level L to L-1), so that
		 * importing torch nests at most FX_LEVELS modules deep, cycles or not */
		uint8_t level =
		    m->functional ? FX_LEVELS - 1 : (uint8_t)fixture__below(r, FX_LEVELS);
		uint32_t nf = m->functional ? g->sc.funcs_per_module * 5 : g->sc.funcs_per_module;
		for (uint32_t k = 0; k < nf; k++) {
			struct fx_node *n = &g->nodes[g->nnodes];
			n->kind = FX_FUNC;
			n->mod = i;
			n->cls = FX_NONE;
			n->op = FX_NONE;
			n->version = 1;
			n->level = level;
			snprintf(n->name, sizeof(n->name), "%s_%u",
				 words[(g->nnodes / 7) % NELEMS(words)], g->nnodes);
			n->api = g->shapes_all && !m->functional && g->nnodes % 8 == 3;
			if (!m->orphan && fixture__vec_push(&g->by_level[n->level], g->nnodes))
				return ERR_NOMEM;
			g->nnodes++;
		}
		if (!m->functional && fixture__below(r, 10) < 3) {
			uint32_t c = g->nnodes;
			struct fx_node *n = &g->nodes[c];
			n->kind = FX_CLASS;
			n->mod = i;
			n->cls = FX_NONE;
			n->op = FX_NONE;
			n->version = 1;
			n->level = FX_LEVELS;
			const char *w = words[c % NELEMS(words)];
			snprintf(n->name, sizeof(n->name), "%c%s%u", w[0] - 32, w + 1, c);
			g->nnodes++;
			static const char *const meth[] = { "__init__", "forward" };
			for (int k = 0; k < 2; k++) {
				struct fx_node *mm = &g->nodes[g->nnodes];
				mm->kind = FX_METHOD;
				mm->mod = i;
				mm->cls = c;
				mm->op = FX_NONE;
				mm->version = 1;
				mm->level = (uint8_t)(k ? level : 0);
				snprintf(mm->name, sizeof(mm->name), "%s", meth[k]);
				g->nodes[c].calls[g->nodes[c].ncalls++] = g->nnodes;
				g->nnodes++;
			}
		}
		m->n = g->nnodes - m->first;
	}
	return 0;
}

/* Calls of every node: a function of level L calls one or two functions of level L-1 (never
 * in its own module); level 0 calls a native op; a class calls its methods. */
static int build_calls(struct fx_gen *g)
{
	struct fx_rng *r = &g->rng;
	for (uint32_t i = 0; i < g->nnodes; i++) {
		struct fx_node *n = &g->nodes[i];
		if (n->kind == FX_CLASS) {
			for (int k = 0; k < n->ncalls; k++)
				if (fixture__vec_push(&g->nodes[n->calls[k]].callers, i))
					return ERR_NOMEM;
			continue;
		}
		if (n->kind == FX_METHOD && !strcmp(n->name, "__init__"))
			continue;
		uint32_t lv = n->level;
		if (lv == 0 || g->by_level[lv - 1].n == 0 || fixture__below(r, 10) < 3) {
			n->op = fixture__below(r, g->nops);
			if (fixture__vec_push(&g->ops[n->op].nodes, i))
				return ERR_NOMEM;
		}
		if (lv == 0 || g->by_level[lv - 1].n == 0)
			continue;
		uint32_t want = 1 + fixture__below(r, 2);
		for (uint32_t k = 0; k < want * 4 && n->ncalls < want; k++) {
			const struct fx_vec *pool = &g->by_level[lv - 1];
			uint32_t c = pool->v[skewed(r, pool->n)];
			if (g->nodes[c].mod == n->mod)
				continue;
			int dup = 0;
			for (int j = 0; j < n->ncalls; j++)
				dup |= n->calls[j] == c;
			if (dup)
				continue;
			n->calls[n->ncalls++] = c;
			if (fixture__vec_push(&g->nodes[c].callers, i))
				return ERR_NOMEM;
		}
	}
	return 0;
}

static int node_usable(const struct fx_gen *g, uint32_t i)
{
	const struct fx_node *n = &g->nodes[i];
	const struct fx_module *m = &g->mods[n->mod];
	return n->kind != FX_METHOD && !m->orphan && !m->deleted;
}

/* The shape through which a test reaches node c, in rough proportion to PyTorch's tests: most
 * calls are direct, helpers in the test file come next, the rarer shapes after them. Per mille. */
static uint8_t pick_via(struct fx_gen *g, uint32_t c)
{
	static const uint16_t w[FX_VIA_COUNT] = {
		[FX_VIA_DIRECT] = 480,    [FX_VIA_HELPER] = 140,   [FX_VIA_INTERNAL] = 50,
		[FX_VIA_ALIAS_FROM] = 50, [FX_VIA_ALIAS_MOD] = 40, [FX_VIA_REEXPORT] = 40,
		[FX_VIA_METHOD] = 60,     [FX_VIA_DECORATOR] = 20, [FX_VIA_PARTIAL] = 20,
		[FX_VIA_LAMBDA] = 30,     [FX_VIA_NESTED] = 30,    [FX_VIA_CONST] = 20,
		[FX_VIA_GETATTR] = 20,
	};
	uint32_t x = fixture__below(&g->rng, 1000), acc = 0;
	uint8_t v = FX_VIA_DIRECT;
	for (uint8_t k = 0; k < FX_VIA_COUNT; k++) {
		acc += w[k];
		if (x < acc) {
			v = k;
			break;
		}
	}
	if (v == FX_VIA_REEXPORT && !g->nodes[c].api)
		v = FX_VIA_DIRECT; /* only what torch/__init__.py re-exports */
	return v;
}

/* Chooses what test t uses (functions, classes, ops, @ops set) and records it in the reverse
 * lists. Called for new tests and when a test's body is rewritten. */
int fixture__test_set_uses(struct fx_gen *g, uint32_t ti)
{
	struct fx_test *t = &g->tests[ti];
	struct fx_rng *r = &g->rng;
	for (int k = 0; k < t->nuses; k++)
		fixture__vec_remove(&g->nodes[t->uses[k]].users, ti);
	for (int k = 0; k < t->nops; k++)
		fixture__vec_remove(&g->ops[t->ops[k]].users, ti);
	t->nuses = t->nops = 0;
	uint32_t want = t->kind == FX_TEST_OPS ? fixture__below(r, 2) : 1 + fixture__below(r, 3);
	for (uint32_t k = 0; k < want * 8 && t->nuses < want; k++) {
		uint32_t c = fixture__below(r, g->nnodes);
		if (!node_usable(g, c))
			continue;
		const struct fx_module *m = &g->mods[g->nodes[c].mod];
		uint32_t s = fixture__below(r, 4);
		t->style[t->nuses] = m->functional ? FX_STYLE_F
				     : s < 2       ? FX_STYLE_TORCH
				     : s == 2      ? FX_STYLE_FROM
						   : FX_STYLE_DOTTED;
		t->via[t->nuses] = g->shapes_all ? pick_via(g, c) : FX_VIA_DIRECT;
		t->uses[t->nuses++] = c;
		if (fixture__vec_push(&g->nodes[c].users, ti))
			return ERR_NOMEM;
	}
	if (t->kind != FX_TEST_OPS) {
		uint32_t nops = fixture__below(r, 3);
		for (uint32_t k = 0; k < nops; k++) {
			uint32_t o = fixture__below(r, g->nops);
			if (t->nops && t->ops[0] == o)
				continue;
			t->ops[t->nops++] = o;
			if (fixture__vec_push(&g->ops[o].users, ti))
				return ERR_NOMEM;
		}
		t->method_style = (uint8_t)fixture__below(r, 2);
	}
	return 0;
}

int fixture__test_add(struct fx_gen *g, uint32_t file, uint8_t cls, uint8_t kind, uint32_t *out)
{
	if (g->ntests == g->captests) {
		uint32_t cap = g->captests ? g->captests * 2 : 1024;
		struct fx_test *t = realloc(g->tests, (size_t)cap * sizeof(*t));
		uint32_t *mk = realloc(g->test_mark, (size_t)cap * sizeof(*mk));
		uint32_t *sl = realloc(g->test_slot, (size_t)cap * sizeof(*sl));
		char **ids = realloc(g->test_ids, (size_t)cap * sizeof(*ids));
		if (t)
			g->tests = t;
		if (mk)
			g->test_mark = mk;
		if (sl)
			g->test_slot = sl;
		if (ids)
			g->test_ids = ids;
		if (!t || !mk || !sl || !ids)
			return err_set(ERR_NOMEM, "fixture: out of memory for %u tests", cap);
		memset(g->test_mark + g->captests, 0, (size_t)(cap - g->captests) * sizeof(*mk));
		memset(g->test_ids + g->captests, 0, (size_t)(cap - g->captests) * sizeof(*ids));
		g->captests = cap;
	}
	uint32_t ti = g->ntests++;
	struct fx_test *t = &g->tests[ti];
	memset(t, 0, sizeof(*t));
	struct fx_rng *r = &g->rng;
	struct fx_tfile *f = &g->tfiles[file];
	t->file = file;
	t->cls = cls;
	t->kind = kind;
	t->version = 1;
	t->dtypes = kind != FX_TEST_PLAIN && fixture__below(r, 2);
	t->inherited = g->shapes_all && fixture__below(r, 100) < 8;
	snprintf(t->name, sizeof(t->name), "test_%s_%u", words[fixture__below(r, NELEMS(words))],
		 f->tests.n);
	if (kind == FX_TEST_OPS) {
		uint32_t s = fixture__below(r, 100);
		t->opset = s < 8    ? FX_SET_OP_DB
			   : s < 35 ? FX_SET_UNARY
			   : s < 62 ? FX_SET_BINARY
			   : s < 80 ? FX_SET_REDUCTION
				    : FX_SET_LIST;
		if (t->opset == FX_SET_LIST) {
			for (uint32_t k = 0; k < 40 && t->nlist < 2; k++) {
				uint32_t o = fixture__below(r, g->nops);
				if (g->ops[o].has_info && (t->nlist == 0 || t->list_ops[0] != o))
					t->list_ops[t->nlist++] = o;
			}
			if (t->nlist == 0)
				t->opset = FX_SET_OP_DB;
		}
		if (fixture__vec_push(&g->ops_tests, ti))
			return ERR_NOMEM;
	}
	if (fixture__test_set_uses(g, ti) || fixture__vec_push(&f->tests, ti))
		return ERR_NOMEM;
	if (out)
		*out = ti;
	return 0;
}

static const char *const tfile_words[] = { "nn",
					   "ops",
					   "linalg",
					   "sparse",
					   "autograd",
					   "optim",
					   "jit",
					   "fx",
					   "inductor",
					   "dynamo",
					   "quant",
					   "cuda",
					   "dataloader",
					   "reductions",
					   "unary_ufuncs",
					   "binary_ufuncs",
					   "tensor_creation",
					   "indexing",
					   "serialization",
					   "distributions" };
static const char *const tdirs[] = { "",           "nn/",           "inductor/",
				     "dynamo/",    "distributed/",  "export/",
				     "functorch/", "quantization/", "jit/",
				     "fx/",        "onnx/",         "profiler/",
				     "optim/",     "autograd/",     "cpp_extensions/" };

static int build_tests(struct fx_gen *g)
{
	struct fx_rng *r = &g->rng;
	for (uint32_t i = 0; i < g->ntfiles; i++) {
		struct fx_tfile *f = &g->tfiles[i];
		const char *w = tfile_words[i % NELEMS(tfile_words)];
		const char *dir = tdirs[(i / NELEMS(tfile_words)) % NELEMS(tdirs)];
		snprintf(f->path, sizeof(f->path), "test/%stest_%s_%u.py", dir, w, i);
		char *s = f->stem;
		int up = 1;
		for (const char *p = w; *p && s < f->stem + 30; p++) {
			if (*p == '_') {
				up = 1;
				continue;
			}
			*s++ = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 32) : *p;
			up = 0;
		}
		snprintf(s, sizeof(f->stem) - (size_t)(s - f->stem), "%u", i);
		f->version = 1;
		f->nclasses = (uint8_t)(1 + fixture__below(r, 3));
		for (int c = 0; c < f->nclasses; c++)
			f->device[c] = fixture__below(r, 100) < 45;
		uint32_t n = g->sc.tests_per_file / 2 + fixture__below(r, g->sc.tests_per_file + 1);
		for (uint32_t k = 0; k < n; k++) {
			uint8_t c = (uint8_t)(k * f->nclasses / n);
			uint8_t kind = !f->device[c]                 ? FX_TEST_PLAIN
				       : fixture__below(r, 100) < 22 ? FX_TEST_OPS
								     : FX_TEST_DEVICE;
			int rc = fixture__test_add(g, i, c, kind, NULL);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int fixture__model_build(struct fx_gen *g)
{
	g->nmods = g->sc.modules;
	g->nops = g->sc.ops;
	g->ntfiles = g->sc.test_files;
	g->mods = calloc(g->nmods, sizeof(*g->mods));
	g->ops = calloc(g->nops, sizeof(*g->ops));
	g->tfiles = calloc(g->ntfiles, sizeof(*g->tfiles));
	if (!g->mods || !g->ops || !g->tfiles)
		return err_set(ERR_NOMEM, "fixture: out of memory for the model");
	build_ops(g);
	int rc = build_modules(g);
	if (!rc)
		rc = build_calls(g);
	if (!rc) {
		g->node_mark = calloc(g->nnodes, sizeof(*g->node_mark));
		if (!g->node_mark)
			return err_set(ERR_NOMEM, "fixture: out of memory for marks");
		rc = build_tests(g);
	}
	return rc;
}

void fixture__model_free(struct fx_gen *g)
{
	for (uint32_t i = 0; i < g->nnodes; i++) {
		fixture__vec_free(&g->nodes[i].callers);
		fixture__vec_free(&g->nodes[i].users);
	}
	for (uint32_t i = 0; i < g->nops; i++) {
		fixture__vec_free(&g->ops[i].nodes);
		fixture__vec_free(&g->ops[i].users);
	}
	for (uint32_t i = 0; g->tfiles && i < g->ntfiles; i++)
		fixture__vec_free(&g->tfiles[i].tests);
	for (int i = 0; i < FX_LEVELS; i++)
		fixture__vec_free(&g->by_level[i]);
	fixture__vec_free(&g->ops_tests);
	fixture__vec_free(&g->affected);
	free(g->nodes);
	free(g->mods);
	free(g->ops);
	free(g->tests);
	free(g->tfiles);
	free(g->node_mark);
	free(g->test_mark);
	free(g->test_slot);
	fixture__vec_free(&g->affected_via);
}

/* ---- ground truth ---- */

void fixture__truth_begin(struct fx_gen *g)
{
	if (++g->epoch == 0) {
		memset(g->node_mark, 0, g->nnodes * sizeof(*g->node_mark));
		memset(g->test_mark, 0, g->captests * sizeof(*g->test_mark));
		g->epoch = 1;
	}
	g->affected.n = 0;
	g->affected_via.n = 0;
	g->affected_all = 0;
}

uint32_t fixture__test_bits(const struct fx_test *t)
{
	return t->inherited ? FX_BIT_INHERITED : 0;
}

/* Test t is affected through the shapes `bits` (ORed into what it had in this epoch). */
int fixture__truth_test_via(struct fx_gen *g, uint32_t t, uint32_t bits)
{
	bits |= fixture__test_bits(&g->tests[t]);
	if (g->test_mark[t] == g->epoch) {
		g->affected_via.v[g->test_slot[t]] |= bits;
		return 0;
	}
	g->test_mark[t] = g->epoch;
	g->test_slot[t] = g->affected.n;
	if (fixture__vec_push(&g->affected, t))
		return ERR_NOMEM;
	return fixture__vec_push(&g->affected_via, bits);
}

int fixture__truth_test(struct fx_gen *g, uint32_t t)
{
	return fixture__truth_test_via(g, t, FX_BIT_TEST);
}

/* The shape bits of test ti's uses of node n (a test may use one node twice). */
static uint32_t use_bits(const struct fx_gen *g, uint32_t ti, uint32_t n)
{
	const struct fx_test *t = &g->tests[ti];
	uint32_t bits = 0;
	for (int k = 0; k < t->nuses; k++)
		if (t->uses[k] == n)
			bits |= 1u << t->via[k];
	return bits ? bits : 1u << FX_VIA_DIRECT;
}

static const char *const shape_names[FX_SHAPE_BITS] = {
	"direct",        "helper",    "internal_helper", "alias_from",   "alias_module", "reexport",
	"helper_method", "decorator", "partial",         "lambda_table", "nested",       "constant",
	"computed_name", "inherited", "native_op",       "test_edit",
};

const char *fixture__shape_name(unsigned bit)
{
	return bit < FX_SHAPE_BITS ? shape_names[bit] : "?";
}

int fixture__shapes_append(struct buf *b, uint32_t mask, char sep)
{
	int rc = 0, first = 1;
	for (unsigned k = 0; !rc && k < FX_SHAPE_BITS; k++)
		if (mask & (1u << k)) {
			rc = first ? 0 : buf_append_char(b, sep);
			rc = rc ? rc : buf_append_str(b, shape_names[k]);
			first = 0;
		}
	return rc;
}

/* Every test that reaches `node` through calls (callers, their callers, ...). */
int fixture__truth_node(struct fx_gen *g, uint32_t node)
{
	if (g->node_mark[node] == g->epoch)
		return 0;
	struct fx_vec stack = { 0 };
	int rc = fixture__vec_push(&stack, node);
	g->node_mark[node] = g->epoch;
	while (!rc && stack.n) {
		uint32_t ni = stack.v[--stack.n];
		const struct fx_node *n = &g->nodes[ni];
		for (uint32_t k = 0; !rc && k < n->users.n; k++)
			rc = fixture__truth_test_via(g, n->users.v[k],
						     use_bits(g, n->users.v[k], ni));
		for (uint32_t k = 0; !rc && k < n->callers.n; k++) {
			uint32_t c = n->callers.v[k];
			if (g->node_mark[c] != g->epoch) {
				g->node_mark[c] = g->epoch;
				rc = fixture__vec_push(&stack, c);
			}
		}
	}
	fixture__vec_free(&stack);
	return rc;
}

int fixture__test_covers_op(const struct fx_gen *g, const struct fx_test *t, uint32_t op)
{
	const struct fx_op *o = &g->ops[op];
	if (!o->has_info)
		return 0;
	switch (t->opset) {
	case FX_SET_OP_DB:
		return 1;
	case FX_SET_UNARY:
		return o->kind == FX_OP_UNARY;
	case FX_SET_BINARY:
		return o->kind == FX_OP_BINARY;
	case FX_SET_REDUCTION:
		return o->kind == FX_OP_REDUCTION;
	case FX_SET_LIST:
		return t->list_ops[0] == op || (t->nlist > 1 && t->list_ops[1] == op);
	default:
		return 0;
	}
}

/* A native op changed (its YAML entry, its kernel, its decomposition): the tests that call it,
 * the tests that reach a function calling it, and the @ops tests parametrised over it. */
int fixture__truth_op(struct fx_gen *g, uint32_t op)
{
	const struct fx_op *o = &g->ops[op];
	int rc = 0;
	for (uint32_t k = 0; !rc && k < o->users.n; k++)
		rc = fixture__truth_test_via(g, o->users.v[k], FX_BIT_NATIVE);
	for (uint32_t k = 0; !rc && k < o->nodes.n; k++)
		rc = fixture__truth_node(g, o->nodes.v[k]);
	for (uint32_t k = 0; !rc && k < g->ops_tests.n; k++)
		if (fixture__test_covers_op(g, &g->tests[g->ops_tests.v[k]], op))
			rc = fixture__truth_test_via(g, g->ops_tests.v[k], FX_BIT_NATIVE);
	return rc;
}

int fixture__truth_file(struct fx_gen *g, uint32_t tfile)
{
	const struct fx_tfile *f = &g->tfiles[tfile];
	int rc = 0;
	for (uint32_t k = 0; !rc && k < f->tests.n; k++)
		rc = fixture__truth_test(g, f->tests.v[k]);
	return rc;
}

const char *fixture__opset_name(uint8_t set)
{
	static const char *const n[] = {
		NULL, "op_db", "unary_ufuncs", "binary_ufuncs", "reduction_ops", "list"
	};
	return set < NELEMS(n) ? n[set] : NULL;
}

/* Test ids never change (test files are not renamed), so each is formatted once. */
int fixture__test_id(struct fx_gen *g, struct buf *b, uint32_t ti)
{
	if (!g->test_ids[ti]) {
		const struct fx_test *t = &g->tests[ti];
		const struct fx_tfile *f = &g->tfiles[t->file];
		char id[FX_PATH_MAX + 2 * FX_NAME_MAX + 16];
		if (t->cls)
			snprintf(id, sizeof(id), "%s::Test%s_%u::%s", f->path, f->stem, t->cls,
				 t->name);
		else
			snprintf(id, sizeof(id), "%s::Test%s::%s", f->path, f->stem, t->name);
		g->test_ids[ti] = strdup(id);
		if (!g->test_ids[ti])
			return err_set(ERR_NOMEM, "fixture: out of memory for a test id");
	}
	return buf_append_str(b, g->test_ids[ti]);
}
