/* The demo's sample upstream (demo.h). The failure to show is made like this, on purpose and
 * in plain sight: the spec file of the generated upstream gets, under one test's entry, an
 * explicit kernel case (our `kernels:` extension) for float16 softmax with atol 0 and rtol 0.
 * No float16 softmax equals its float64 reference exactly, so whenever that test is scheduled
 * its case fails, with the greatest absolute and relative error on the job page. The demo's
 * second commit edits that test's body, which schedules it: a commit that breaks a kernel case.
 * The first commit edits another test listed as mandatory_success: an ordinary change. */
#include <errno.h>
#include <git2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "demo.h"
#include "fixture/fixture.h"

#define DEMO_SPEC      "spyre/specs/upstream_tests.yaml"
#define DEMO_MARK      "# spyre-ci demo: a tolerance no float16 softmax can meet"
#define DEMO_FILE_MAX  (16u << 20)
#define DEMO_SEED      1
#define DEMO_COMMITS   30
#define DEMO_EDIT_LINE "        _demo_edit = "

static int read_text(char **out, const struct demo_upstream *u, const char *rel)
{
	char path[4400];
	size_t n;
	snprintf(path, sizeof(path), "%s/%s", u->dir, rel);
	return fs_read_file(out, &n, path, DEMO_FILE_MAX);
}

static int write_text(const struct demo_upstream *u, const char *rel, const char *text)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", u->dir, rel);
	return fs_atomic_write(path, text, strlen(text), 0644);
}

/* Whether `file` defines `name` as a method (the line we edit after). */
static char *def_line(const char *text, const char *name)
{
	char want[160];
	snprintf(want, sizeof(want), "\n    def %s(self", name);
	return text ? strstr(text, want) : NULL;
}

/* Reads one `- names: [Class::test]` entry with mode mandatory_success at `p`, under the
 * file entry `path`; 0 when its test exists in the upstream. */
static int entry_test(struct demo_test *t, const struct demo_upstream *u, const char *path,
		      const char *p)
{
	if (sscanf(p, "        - names: [%127[A-Za-z0-9_]::%127[A-Za-z0-9_]]", t->cls, t->name) !=
		2 ||
	    !strstr(p, "]\n          mode: mandatory_success\n") ||
	    strstr(p, "]\n          mode: mandatory_success\n") != strchr(p, ']'))
		return -1;
	snprintf(t->file, sizeof(t->file), "%s", path);
	char *text = NULL;
	int rc = read_text(&text, u, t->file) == 0 && def_line(text, t->name) ? 0 : -1;
	free(text);
	return rc;
}

/* The file entry (`- path: ${TORCH_ROOT}/...`) that the line at `p` falls under. */
static void path_of(char path[256], const char *spec, const char *p)
{
	path[0] = 0;
	for (const char *q = spec; q && q < p; q = strchr(q, '\n'), q = q ? q + 1 : q)
		sscanf(q, "    - path: ${TORCH_ROOT}/%255[^\n]", path);
}

static bool same_test(const struct demo_test *a, const struct demo_test *b)
{
	return !strcmp(a->file, b->file) && !strcmp(a->cls, b->cls) && !strcmp(a->name, b->name);
}

/* The two tests. Once the spec file is marked, the broken one is the entry the mark follows;
 * the ordinary one is the first other mandatory_success entry whose method exists. Before,
 * they are the first two such entries. */
static int pick_tests(struct demo_upstream *u, const char *spec)
{
	char path[256];
	const char *mark = strstr(spec, DEMO_MARK);
	bool have_broken = false, have_ordinary = false;
	if (mark) {
		const char *e = NULL;
		for (const char *q = strstr(spec, "        - names: ["); q && q < mark;
		     q = strstr(q + 1, "        - names: ["))
			e = q;
		path_of(path, spec, e ? e : spec);
		have_broken = e && entry_test(&u->broken, u, path, e) == 0;
		if (!have_broken)
			return err_set(ERR_BADSTATE,
				       "demo: the marked spec entry in %s/%s is not "
				       "readable any more; remove %s to start afresh",
				       u->dir, DEMO_SPEC, u->dir);
	}
	for (const char *p = strstr(spec, "        - names: [");
	     p && !(have_ordinary && have_broken); p = strstr(p + 1, "        - names: [")) {
		struct demo_test t;
		path_of(path, spec, p);
		if (!path[0] || entry_test(&t, u, path, p) < 0 ||
		    (have_broken && same_test(&t, &u->broken)))
			continue;
		if (!have_ordinary) {
			u->ordinary = t;
			have_ordinary = true;
		} else {
			u->broken = t;
			have_broken = true;
		}
	}
	if (!have_ordinary || !have_broken)
		return err_set(
		    ERR_BADSTATE,
		    "demo: %s/%s has fewer than two mandatory_success entries whose test "
		    "exists",
		    u->dir, DEMO_SPEC);
	return 0;
}

static int commit_paths(const struct demo_upstream *u, const char *const *rel, size_t n,
			const char *message, char id[41])
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_reference *head = NULL;
	git_commit *parent = NULL;
	git_signature *sig = NULL;
	git_oid tid, cid;
	int rc = git_repository_open(&repo, u->dir);
	if (rc == 0)
		rc = git_repository_index(&idx, repo);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = git_index_add_bypath(idx, rel[i]);
	if (rc == 0)
		rc = git_index_write(idx);
	if (rc == 0)
		rc = git_index_write_tree(&tid, idx);
	if (rc == 0)
		rc = git_tree_lookup(&tree, repo, &tid);
	if (rc == 0)
		rc = git_repository_head(&head, repo);
	if (rc == 0)
		rc = git_commit_lookup(&parent, repo, git_reference_target(head));
	if (rc == 0)
		rc = git_signature_now(&sig, "spyre-ci demo", "demo@spyre-ci.invalid");
	if (rc == 0)
		rc = git_commit_create_v(&cid, repo, "HEAD", sig, sig, NULL, message, tree, 1,
					 parent);
	if (rc == 0)
		git_oid_tostr(id, 41, &cid);
	else
		rc = err_set(ERR_IO, "demo: commit in %s: %s", u->dir,
			     git_error_last() ? git_error_last()->message : "libgit2 failed");
	git_signature_free(sig);
	git_commit_free(parent);
	git_reference_free(head);
	git_tree_free(tree);
	git_index_free(idx);
	git_repository_free(repo);
	return rc;
}

/* Adds the impossible kernel case under the broken test's entry, in a commit of its own. */
static int break_spec(struct demo_upstream *u, const char *spec)
{
	char entry[400];
	snprintf(entry, sizeof(entry),
		 "        - names: [%s::%s]\n          mode: mandatory_success\n", u->broken.cls,
		 u->broken.name);
	const char *at = strstr(spec, entry);
	if (!at)
		return err_set(ERR_BADSTATE, "demo: the entry of %s vanished", u->broken.name);
	struct buf b;
	buf_init(&b, DEMO_FILE_MAX);
	size_t cut = (size_t)(at - spec) + strlen(entry);
	int rc = buf_append(&b, spec, cut);
	if (rc == 0)
		rc = buf_append_str(&b, "          " DEMO_MARK "\n"
					"          kernels:\n"
					"            - op: softmax\n"
					"              inputs: [\"67x256\"]\n"
					"              dtype: float16\n"
					"              atol: 0\n"
					"              rtol: 0\n"
					"              params: {dim: -1}\n");
	if (rc == 0)
		rc = buf_append_str(&b, spec + cut);
	if (rc == 0)
		rc = write_text(u, DEMO_SPEC, buf_str(&b));
	buf_finish(&b);
	char id[41];
	const char *rel[] = { DEMO_SPEC };
	if (rc == 0)
		rc = commit_paths(
		    u, rel, 1,
		    "demo setup: a kernel case whose tolerance no float16 softmax "
		    "meets\n\nspyre-ci demo adds it so that a failure is there to see.\n",
		    id);
	if (rc == 0)
		printf(
		    "  spec entry of %s::%s: float16 softmax with atol 0, rtol 0 (commit %.10s)\n",
		    u->broken.cls, u->broken.name, id);
	return rc;
}

static int generate(const struct demo_upstream *u)
{
	struct fixture_opts o = {
		.out = u->dir,
		.scale = FIXTURE_SMALL,
		.seed = DEMO_SEED,
		.commits = DEMO_COMMITS,
	};
	struct fixture_stats st;
	int rc = fixture_generate(&o, &st);
	if (rc == 0)
		printf(
		    "generated a sample upstream shaped like PyTorch in %s: %zu files, %zu tests, "
		    "%zu commits (%.1f s)\n",
		    u->dir, st.files, st.tests, st.commits, st.seconds);
	return rc;
}

int demo_upstream_prepare(struct demo_upstream *u, const char *state)
{
	memset(u, 0, sizeof(*u));
	if (snprintf(u->dir, sizeof(u->dir), "%s/upstream", state) >= (int)sizeof(u->dir))
		return err_set(ERR_LIMIT, "demo: state path too long");
	char git_dir[4200];
	snprintf(git_dir, sizeof(git_dir), "%s/.git", u->dir);
	struct stat sb;
	int rc = 0;
	if (stat(git_dir, &sb) == 0)
		printf("reusing the sample upstream in %s\n", u->dir);
	else
		rc = generate(u);
	char *spec = NULL;
	if (rc == 0)
		rc = read_text(&spec, u, DEMO_SPEC);
	if (rc == 0)
		rc = pick_tests(u, spec);
	if (rc == 0 && !strstr(spec, DEMO_MARK))
		rc = break_spec(u, spec);
	free(spec);
	return rc;
}

int demo_upstream_commit(struct demo_upstream *u, const struct demo_test *t, const char *message,
			 char id[41])
{
	char *text = NULL;
	int rc = read_text(&text, u, t->file);
	char *def = rc == 0 ? def_line(text, t->name) : NULL;
	char *eol = def ? strchr(def + 1, '\n') : NULL;
	if (rc == 0 && !eol)
		rc = err_set(ERR_BADSTATE, "demo: %s no longer defines %s", t->file, t->name);
	struct buf b;
	buf_init(&b, DEMO_FILE_MAX);
	if (rc == 0) {
		size_t head = (size_t)(eol + 1 - text);
		const char *rest = eol + 1;
		if (!strncmp(rest, DEMO_EDIT_LINE, strlen(DEMO_EDIT_LINE)))
			rest = strchr(rest, '\n') + 1; /* the previous run's edit goes */
		rc = buf_append(&b, text, head);
		if (rc == 0)
			rc = buf_appendf(&b, "%s%lld\n", DEMO_EDIT_LINE, (long long)time(NULL));
		if (rc == 0)
			rc = buf_append_str(&b, rest);
	}
	if (rc == 0)
		rc = write_text(u, t->file, buf_str(&b));
	const char *rel[] = { t->file };
	if (rc == 0)
		rc = commit_paths(u, rel, 1, message, id);
	buf_finish(&b);
	free(text);
	return rc;
}
