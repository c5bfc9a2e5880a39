/* selector_fixture_generate(): the synthetic upstream's driver. Builds the model, writes the
 * first commit, then the history (ordinary commits and merges of short side branches), the
 * ground truth (commits.jsonl, tests.jsonl), the branch `main` and, unless asked not to, the
 * working tree. See selector/fixture.h for what the repository and the truth contain. */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "fixture_history.h"
#include "fixture_variants.h"

static const struct fx_scale scales[] = {
	[SELECTOR_FIXTURE_SMALL] = { .modules = 100,
				     .funcs_per_module = 6,
				     .ops = 60,
				     .ops_per_cpp = 8,
				     .def_files = 3,
				     .test_files = 60,
				     .tests_per_file = 33,
				     .files_target = 400,
				     .commits = 100 },
	[SELECTOR_FIXTURE_PYTORCH] = { .modules = 6000,
				       .funcs_per_module = 5,
				       .ops = 600,
				       .ops_per_cpp = 10,
				       .def_files = 12,
				       .test_files = 1500,
				       .tests_per_file = 42,
				       .files_target = 21000,
				       .commits = 3000 },
};

int selector_fixture_scale_parse(enum selector_fixture_scale *out, const char *s)
{
	if (!strcmp(s, "small"))
		*out = SELECTOR_FIXTURE_SMALL;
	else if (!strcmp(s, "pytorch"))
		*out = SELECTOR_FIXTURE_PYTORCH;
	else
		return err_set(ERR_INVAL, "unknown scale '%s' (small, pytorch)", s);
	return 0;
}

static int git_fail(const char *what)
{
	const git_error *e = git_error_last();
	return err_set(ERR_IO, "fixture: %s: %s", what,
		       e && e->message ? e->message : "libgit2 error");
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int append_oid(struct buf *b, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof(hex), id);
	return buf_appendf(b, "\"%s\"", hex);
}

int fixture__hist_truth(struct fx_hist *h, const git_oid *id, const git_oid *parents,
			size_t nparents)
{
	struct fx_gen *g = h->g;
	struct buf *b = &h->line;
	buf_reset(b);
	int rc = buf_append_str(b, "{\"id\":");
	rc = rc ? rc : append_oid(b, id);
	rc = rc ? rc : buf_append_str(b, ",\"parents\":[");
	for (size_t i = 0; !rc && i < nparents; i++) {
		rc = i ? buf_append_char(b, ',') : 0;
		rc = rc ? rc : append_oid(b, &parents[i]);
	}
	rc = rc ? rc : buf_appendf(b, "],\"kind\":\"%s\",\"paths\":[", fixture__kind_name(h->kind));
	for (uint32_t i = 0; !rc && i < g->npaths; i++)
		rc = buf_appendf(b, "%s\"%s\"", i ? "," : "", g->paths[i]);
	rc = rc ? rc
		: buf_appendf(b,
			      "],\"edited\":[%s],\"fallback\":%s,\"affected_all\":%s,"
			      "\"affected\":[",
			      buf_str(&h->edited), h->fallback ? "true" : "false",
			      g->affected_all ? "true" : "false");
	if (g->affected.n > 1)
		qsort(g->affected.v, g->affected.n, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; !rc && i < g->affected.n; i++) {
		rc = buf_append_str(b, i ? ",\"" : "\"");
		rc = rc ? rc : fixture__test_id(g, b, g->affected.v[i]);
		rc = rc ? rc : buf_append_char(b, '"');
	}
	/* parallel to "affected": the shapes each test's dependency came through */
	rc = rc ? rc : buf_append_str(b, "],\"affected_shapes\":[");
	for (uint32_t i = 0; !rc && i < g->affected.n; i++) {
		rc = buf_append_str(b, i ? ",\"" : "\"");
		rc = rc ? rc
			: fixture__shapes_append(
			      b, g->affected_via.v[g->test_slot[g->affected.v[i]]], '+');
		rc = rc ? rc : buf_append_char(b, '"');
	}
	rc = rc ? rc : buf_append_str(b, "]}\n");
	if (rc)
		return err_set(rc, "fixture: a truth line is too long");
	if (fwrite(b->data, 1, b->len, g->truth) != b->len)
		return err_set_errno(ERR_IO, "fixture: writing commits.jsonl");
	h->fallbacks += h->fallback != 0;
	return 0;
}

/* After a side-branch commit: remember its truth for the merge. */
int fixture__hist_merge_collect(struct fx_hist *h)
{
	struct fx_gen *g = h->g;
	for (uint32_t i = 0; i < g->affected.n; i++)
		if (fixture__vec_push(&h->m_tests, g->affected.v[i]) ||
		    fixture__vec_push(&h->m_via, g->affected_via.v[i]))
			return ERR_NOMEM;
	for (uint32_t i = 0; i < g->npaths; i++) {
		int seen = 0;
		for (uint32_t k = 0; k < h->m_npaths && !seen; k++)
			seen = !strcmp(h->m_paths[k], g->paths[i]);
		if (seen)
			continue;
		if (h->m_npaths == h->m_cappaths) {
			uint32_t cap = h->m_cappaths ? h->m_cappaths * 2 : 16;
			char **p = realloc(h->m_paths, cap * sizeof(*p));
			if (!p)
				return err_set(ERR_NOMEM, "fixture: out of memory for merge paths");
			h->m_paths = p;
			h->m_cappaths = cap;
		}
		h->m_paths[h->m_npaths] = g->paths[i];
		g->paths[i] = NULL; /* owned by the merge collection now */
		h->m_npaths++;
	}
	int rc = 0;
	if (h->edited.len)
		rc = buf_appendf(&h->m_edited, "%s%s", h->m_edited.len ? "," : "",
				 buf_str(&h->edited));
	h->m_fallback |= h->fallback;
	h->m_all |= g->affected_all;
	return rc;
}

static int write_merge(struct fx_hist *h, const git_oid *main_head, const git_oid *side_tip,
		       git_oid *out)
{
	struct fx_gen *g = h->g;
	fixture__truth_begin(g);
	fixture__paths_clear(g);
	int rc = 0;
	for (uint32_t i = 0; !rc && i < h->m_tests.n; i++)
		rc = fixture__truth_test_via(g, h->m_tests.v[i], h->m_via.v[i]);
	free(g->paths);
	g->paths = h->m_paths; /* the merge's paths are the side's: ownership moves to g */
	g->npaths = h->m_npaths;
	g->cappaths = h->m_cappaths;
	h->m_paths = NULL;
	h->m_npaths = h->m_cappaths = 0;
	g->affected_all = (uint8_t)h->m_all;
	h->fallback = h->m_fallback;
	h->kind = K_MERGE;
	buf_reset(&h->edited);
	rc = rc ? rc : buf_append_str(&h->edited, buf_str(&h->m_edited));
	git_oid parents[2] = { *main_head, *side_tip };
	char msg[128];
	snprintf(msg, sizeof(msg), "Merge branch 'side-%zu'\n", h->merges + 1);
	rc = rc ? rc : fixture__commit(g, out, msg, parents, 2, h->index++);
	rc = rc ? rc : fixture__hist_truth(h, out, parents, 2);
	h->m_tests.n = h->m_via.n = 0;
	h->m_fallback = h->m_all = 0;
	buf_reset(&h->m_edited);
	h->merges++;
	return rc;
}

static int write_history(struct fx_hist *h, git_oid *head, uint32_t total)
{
	struct fx_gen *g = h->g;
	int rc = 0;
	while (!rc && h->index < total) {
		uint32_t left = total - h->index;
		if (left >= 5 && fixture__below(&g->rng, 15) == 0) {
			uint32_t side = 2 + fixture__below(&g->rng, 2);
			git_oid tip = *head, next;
			for (uint32_t k = 0; !rc && k < side; k++) {
				rc = fixture__hist_commit(h, &tip, &next, 1);
				if (!rc)
					tip = next;
			}
			git_oid merged;
			if (!rc)
				rc = write_merge(h, head, &tip, &merged);
			if (!rc) /* on an error *head keeps the last commit written */
				*head = merged;
		} else {
			git_oid next;
			rc = fixture__hist_commit(h, head, &next, 0);
			if (!rc)
				*head = next;
		}
	}
	return rc;
}

static int render_all(struct fx_gen *g)
{
	int rc = 0;
	char path[FX_PATH_MAX];
	for (uint32_t i = 0; !rc && i < g->nmods; i++) {
		rc = fixture__render_module(g, i);
		rc = rc ? rc : fixture__file_set_text(g, g->mods[i].path);
	}
	for (uint32_t i = 0; !rc && i < g->ntfiles; i++) {
		rc = fixture__write_tfile(g, i);
	}
	for (uint32_t i = 0; !rc && i < g->ncpp; i++) {
		fixture__cpp_path(path, sizeof(path), i);
		rc = fixture__render_cpp(g, i);
		rc = rc ? rc : fixture__file_set_text(g, path);
	}
	for (uint32_t i = 0; !rc && i <= g->sc.def_files; i++) {
		fixture__opinfo_path(g, path, sizeof(path), i);
		rc = fixture__render_opinfo(g, i);
		rc = rc ? rc : fixture__file_set_text(g, path);
	}
	rc = rc ? rc : fixture__render_yaml(g);
	rc = rc ? rc : fixture__file_set_text(g, "aten/src/ATen/native/native_functions.yaml");
	rc = rc ? rc : fixture__render_decomp(g);
	rc = rc ? rc : fixture__file_set_text(g, "torch/_decomp/decompositions.py");
	rc = rc ? rc : fixture__render_native(g);
	rc = rc ? rc : fixture__file_set_text(g, "torch/_C/_VariableFunctions.py");
	rc = rc ? rc : fixture__render_specs(g);
	rc = rc ? rc : fixture__file_set_text(g, "spyre/specs/upstream_tests.yaml");
	rc = rc ? rc : fixture__write_variants_file(g);
	return rc ? rc : fixture__write_static(g);
}

static int dir_usable(const char *out)
{
	DIR *d = opendir(out);
	if (!d) {
		if (errno != ENOENT)
			return err_set_errno(ERR_IO, "fixture: cannot open %s", out);
		if (mkdir(out, 0777))
			return err_set_errno(ERR_IO, "fixture: cannot create %s", out);
		return 0;
	}
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n ? err_set(ERR_EXISTS, "fixture: %s exists and is not empty", out) : 0;
}

static uint64_t du_total;
static int du_add(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)p;
	(void)f;
	if (flag == FTW_F)
		du_total += (uint64_t)st->st_size;
	return 0;
}

/* Writes every object of the in-memory store as one pack with its index. Each object is
 * inserted once by id (git_mempack_dump() would walk every commit's whole tree). */
static int write_pack(struct fx_gen *g)
{
	git_packbuilder *pb = NULL;
	char dir[PATH_TEXT_MAX];
	snprintf(dir, sizeof(dir), "%sobjects/pack", git_repository_path(g->repo));
	if (git_packbuilder_new(&pb, g->repo))
		return git_fail("creating a pack builder");
	int rc = 0;
	git_packbuilder_set_threads(pb, 1);
	for (size_t i = 0; !rc && i < g->noids; i++)
		if (git_packbuilder_insert(pb, &g->oids[i], NULL))
			rc = git_fail("adding an object to the pack");
	if (!rc && git_packbuilder_write(pb, dir, 0, NULL, NULL))
		rc = git_fail("writing the pack");
	git_packbuilder_free(pb);
	if (!rc && (git_mempack_reset(g->mempack) || git_odb_refresh(g->odb)))
		rc = git_fail("switching to the pack");
	return rc;
}

static int finish_repo(struct fx_gen *g, const struct selector_fixture_opts *o, const git_oid *head)
{
	git_reference *ref = NULL;
	if (git_reference_create(&ref, g->repo, "refs/heads/main", head, 1, "fixture: main"))
		return git_fail("creating refs/heads/main");
	git_reference_free(ref);
	if (git_repository_set_head(g->repo, "refs/heads/main"))
		return git_fail("pointing HEAD at main");
	/* the ground truth sits in the working directory but outside the history */
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof(path), "%sinfo/exclude", git_repository_path(g->repo));
	static const char excl[] =
	    "# the generator's ground truth, outside the history\n/.ground_truth/\n";
	int rc = fs_atomic_write(path, excl, sizeof(excl) - 1, 0644);
	if (rc)
		return rc;
	if (o->no_checkout)
		return 0;
	git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	if (git_checkout_head(g->repo, &co))
		return git_fail("checking out main");
	return 0;
}

static int run(struct fx_gen *g, struct fx_hist *h, const struct selector_fixture_opts *o,
	       struct selector_fixture_stats *st)
{
	char path[PATH_TEXT_MAX];
	int rc = dir_usable(o->out);
	if (rc)
		return rc;
	if (git_repository_init(&g->repo, o->out, 0) || git_repository_odb(&g->odb, g->repo))
		return git_fail(o->out);
	/* objects collect in memory and go to disk as one pack at the end: no loose files */
	if (git_mempack_new(&g->mempack))
		return git_fail("creating the in-memory object store");
	if (git_odb_add_backend(g->odb, g->mempack, 999)) {
		g->mempack->free(g->mempack);
		return git_fail("adding the in-memory object store");
	}
	rc = fixture__model_build(g);
	rc = rc ? rc : render_all(g);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/.ground_truth", o->out);
	if (mkdir(path, 0777))
		return err_set_errno(ERR_IO, "fixture: cannot create %s", path);
	snprintf(path, sizeof(path), "%s/.ground_truth/commits.jsonl", o->out);
	g->truth = fopen(path, "w");
	if (!g->truth)
		return err_set_errno(ERR_IO, "fixture: cannot create %s", path);
	git_oid head;
	fixture__truth_begin(g);
	fixture__paths_clear(g); /* the first commit adds every file: not listed */
	g->affected_all = 1;
	h->fallback = 1;
	h->kind = K_INITIAL;
	g->record_paths = 1;
	rc = fixture__commit(g, &head, "Initial import of the generated upstream\n", NULL, 0,
			     h->index++);
	rc = rc ? rc : fixture__hist_truth(h, &head, NULL, 0);
	uint32_t total = o->commits > 0 ? (uint32_t)o->commits : g->sc.commits;
	rc = rc ? rc : write_history(h, &head, total);
	if (fclose(g->truth) && !rc)
		rc = err_set_errno(ERR_IO, "fixture: closing commits.jsonl");
	g->truth = NULL;
	rc = rc ? rc : write_pack(g);
	snprintf(path, sizeof(path), "%s/.ground_truth/tests.jsonl", o->out);
	rc = rc ? rc : fixture__write_tests_jsonl(g, path);
	rc = rc ? rc : fixture__write_variants_truth(g, o->out);
	rc = rc ? rc : fixture__write_opinfos_truth(g, o->out);
	rc = rc ? rc : finish_repo(g, o, &head);
	if (rc || !st)
		return rc;
	st->files = fixture__tree_files(&g->root);
	st->test_files = g->ntfiles + (g->shapes_all ? 1 : 0); /* test_op_variants.py */
	st->tests = g->ntests + fixture__variants_tests(g);
	st->ops = g->nops;
	st->src_functions = g->nnodes;
	st->commits = h->index;
	st->merges = h->merges;
	st->fallback_commits = h->fallbacks;
	st->objects = g->objects;
	git_oid_tostr(st->head, sizeof(st->head), &head);
	snprintf(path, sizeof(path), "%s/.git", o->out);
	du_total = 0;
	nftw(path, du_add, 32, FTW_PHYS);
	st->repo_bytes = du_total;
	return 0;
}

int selector_fixture_generate(const struct selector_fixture_opts *o,
			      struct selector_fixture_stats *st)
{
	if (!o || !o->out ||
	    (o->scale != SELECTOR_FIXTURE_SMALL && o->scale != SELECTOR_FIXTURE_PYTORCH))
		return err_set(ERR_INVAL, "fixture: bad options");
	if (o->commits < 0 || o->commits > FIXTURE_COMMITS_MAX)
		return err_set(ERR_LIMIT, "fixture: %d commits (at most %d)", o->commits,
			       FIXTURE_COMMITS_MAX);
	if (strlen(o->out) > PATH_TEXT_MAX - 64)
		return err_set(ERR_LIMIT, "fixture: output path too long");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (st)
		memset(st, 0, sizeof(*st));
	git_libgit2_init();
	/* every object we reference was just written: skip libgit2's existence checks */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	struct fx_gen g = { .sc = scales[o->scale],
			    .rng = { o->seed ^ 0x5eed5eed5eedULL },
			    .shapes_all = !o->shapes_basic };
	g.v_init = g.v_conftest = g.v_run_test = g.v_common = 1;
	for (int i = 0; i < 4; i++)
		g.v_build[i] = g.v_docs[i] = 1;
	g.v_bin[0] = g.v_bin[1] = 1;
	buf_init(&g.text, FIXTURE_FILE_MAX);
	struct fx_hist h = { .g = &g };
	buf_init(&h.edited, 1 * MIB);
	buf_init(&h.line, FIXTURE_TRUTH_LINE_MAX);
	buf_init(&h.m_edited, 1 * MIB);
	int rc = run(&g, &h, o, st);
	if (g.truth)
		fclose(g.truth);
	fixture__paths_clear(&g);
	free(g.paths);
	for (uint32_t i = 0; i < h.m_npaths; i++)
		free(h.m_paths[i]);
	free(h.m_paths);
	fixture__vec_free(&h.m_tests);
	fixture__vec_free(&h.m_via);
	buf_finish(&h.edited);
	buf_finish(&h.line);
	buf_finish(&h.m_edited);
	buf_finish(&g.text);
	fixture__tree_free(&g.root);
	fixture__model_free(&g);
	for (uint32_t i = 0; g.test_ids && i < g.ntests; i++)
		free(g.test_ids[i]);
	free(g.test_ids);
	free(g.oids);
	git_odb_free(g.odb);
	git_repository_free(g.repo);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 1);
	git_libgit2_shutdown();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (st)
		st->seconds =
		    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return rc;
}
