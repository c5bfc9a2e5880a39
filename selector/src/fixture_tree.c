/* The synthetic upstream's tree, kept in memory between commits: every blob is written once to
 * the object database, and a commit rewrites (with git_treebuilder) only the directories that a
 * change touched since the previous commit, so a 3,000-commit history costs a few trees per
 * commit rather than a full index write. */
#include <git2/sys/commit.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fixture_int.h"

static int git_fail(const char *what)
{
	const git_error *e = git_error_last();
	return err_set(ERR_IO, "fixture: %s: %s", what,
		       e && e->message ? e->message : "libgit2 error");
}

static struct fx_ent *dir_find(struct fx_dir *d, const char *name, size_t len)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (strlen(d->e[i].name) == len && !memcmp(d->e[i].name, name, len))
			return &d->e[i];
	return NULL;
}

static struct fx_ent *dir_add(struct fx_dir *d, const char *name, size_t len)
{
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 8;
		struct fx_ent *e = realloc(d->e, (size_t)cap * sizeof(*e));
		if (!e)
			return NULL;
		d->e = e;
		d->cap = cap;
	}
	struct fx_ent *e = &d->e[d->n];
	memset(e, 0, sizeof(*e));
	e->name = strndup(name, len);
	if (!e->name)
		return NULL;
	d->n++;
	return e;
}

/* Walks to the directory holding `path`'s last component, creating directories on the way
 * when `create`, marking each one dirty; returns it and points *base at the file name. */
static struct fx_dir *walk(struct fx_gen *g, const char *path, const char **base, int create)
{
	struct fx_dir *d = &g->root;
	const char *p = path;
	for (;;) {
		d->dirty = 1;
		const char *slash = strchr(p, '/');
		if (!slash) {
			*base = p;
			return d;
		}
		struct fx_ent *e = dir_find(d, p, (size_t)(slash - p));
		if (!e) {
			if (!create)
				return NULL;
			e = dir_add(d, p, (size_t)(slash - p));
			if (!e)
				return NULL;
			e->mode = GIT_FILEMODE_TREE;
			e->sub = calloc(1, sizeof(*e->sub));
			if (!e->sub)
				return NULL;
		}
		if (!e->sub)
			return NULL;
		d = e->sub;
		p = slash + 1;
	}
}

static int path_record(struct fx_gen *g, const char *path)
{
	if (!g->record_paths)
		return 0;
	for (uint32_t i = 0; i < g->npaths; i++)
		if (!strcmp(g->paths[i], path))
			return 0;
	if (g->npaths == g->cappaths) {
		uint32_t cap = g->cappaths ? g->cappaths * 2 : 16;
		char **p = realloc(g->paths, (size_t)cap * sizeof(*p));
		if (!p)
			return err_set(ERR_NOMEM, "fixture: out of memory for paths");
		g->paths = p;
		g->cappaths = cap;
	}
	g->paths[g->npaths] = strdup(path);
	if (!g->paths[g->npaths])
		return err_set(ERR_NOMEM, "fixture: out of memory for a path");
	g->npaths++;
	return 0;
}

void fixture__paths_clear(struct fx_gen *g)
{
	for (uint32_t i = 0; i < g->npaths; i++)
		free(g->paths[i]);
	g->npaths = 0;
}

/* Remembers an object written, so that the pack can list each one without walking trees. */
int fixture__oid_note(struct fx_gen *g, const git_oid *oid)
{
	if (g->noids == g->capoids) {
		size_t cap = g->capoids ? g->capoids * 2 : 4096;
		git_oid *o = realloc(g->oids, cap * sizeof(*o));
		if (!o)
			return err_set(ERR_NOMEM, "fixture: out of memory for %zu object ids", cap);
		g->oids = o;
		g->capoids = cap;
	}
	g->oids[g->noids++] = *oid;
	g->objects++;
	return 0;
}

/* Writes the blob and puts it at `path`; records the path when its content changed. */
int fixture__file_set(struct fx_gen *g, const char *path, const void *data, size_t len)
{
	git_oid oid;
	if (git_odb_write(&oid, g->odb, data, len, GIT_OBJECT_BLOB))
		return git_fail(path);
	if (fixture__oid_note(g, &oid))
		return ERR_NOMEM;
	const char *base;
	struct fx_dir *d = walk(g, path, &base, 1);
	if (!d)
		return err_set(ERR_NOMEM, "fixture: cannot place %s in the tree", path);
	struct fx_ent *e = dir_find(d, base, strlen(base));
	if (e && e->sub)
		return err_set(ERR_EXISTS, "fixture: %s is a directory", path);
	if (e && git_oid_equal(&e->oid, &oid))
		return 0;
	if (!e && !(e = dir_add(d, base, strlen(base))))
		return err_set(ERR_NOMEM, "fixture: out of memory adding %s", path);
	e->oid = oid;
	e->mode = GIT_FILEMODE_BLOB;
	return path_record(g, path);
}

int fixture__file_set_text(struct fx_gen *g, const char *path)
{
	return fixture__file_set(g, path, buf_str(&g->text), g->text.len);
}

int fixture__file_del(struct fx_gen *g, const char *path)
{
	const char *base;
	struct fx_dir *d = walk(g, path, &base, 0);
	struct fx_ent *e = d ? dir_find(d, base, strlen(base)) : NULL;
	if (!e || e->sub)
		return err_set(ERR_NOTFOUND, "fixture: no file %s to delete", path);
	free(e->name);
	uint32_t i = (uint32_t)(e - d->e);
	memmove(d->e + i, d->e + i + 1, (size_t)(d->n - i - 1) * sizeof(*d->e));
	d->n--;
	return path_record(g, path);
}

/* Writes the dirty directories bottom-up; an empty directory is left out of its parent. */
static int tree_write(struct fx_gen *g, struct fx_dir *d)
{
	if (!d->dirty)
		return 0;
	for (uint32_t i = 0; i < d->n; i++)
		if (d->e[i].sub) {
			int rc = tree_write(g, d->e[i].sub);
			if (rc)
				return rc;
		}
	git_treebuilder *tb = NULL;
	if (git_treebuilder_new(&tb, g->repo, NULL))
		return git_fail("treebuilder");
	int rc = 0;
	for (uint32_t i = 0; !rc && i < d->n; i++) {
		const struct fx_ent *e = &d->e[i];
		if (e->sub && e->sub->n == 0)
			continue;
		const git_oid *oid = e->sub ? &e->sub->oid : &e->oid;
		if (git_treebuilder_insert(NULL, tb, e->name, oid, (git_filemode_t)e->mode))
			rc = git_fail(e->name);
	}
	if (!rc && git_treebuilder_write(&d->oid, tb))
		rc = git_fail("writing a tree");
	git_treebuilder_free(tb);
	rc = rc ? rc : fixture__oid_note(g, &d->oid);
	d->dirty = 0;
	return rc;
}

int fixture__commit(struct fx_gen *g, git_oid *out, const char *msg, const git_oid *parents,
		    size_t nparents, uint32_t index)
{
	int rc = tree_write(g, &g->root);
	if (rc)
		return rc;
	git_signature *sig = NULL;
	/* a fixed clock: one hour per commit from 2024-01-01, so the ids depend on the seed only */
	if (git_signature_new(&sig, "Upstream Dev", "dev@upstream.invalid",
			      1704067200 + (git_time_t)index * 3600, 0))
		return git_fail("signature");
	const git_oid *pp[2] = { nparents > 0 ? &parents[0] : NULL,
				 nparents > 1 ? &parents[1] : NULL };
	if (git_commit_create_from_ids(out, g->repo, NULL, sig, sig, NULL, msg, &g->root.oid,
				       nparents, pp))
		rc = git_fail("creating a commit");
	git_signature_free(sig);
	return rc ? rc : fixture__oid_note(g, out);
}

void fixture__tree_free(struct fx_dir *d)
{
	for (uint32_t i = 0; i < d->n; i++) {
		free(d->e[i].name);
		if (d->e[i].sub) {
			fixture__tree_free(d->e[i].sub);
			free(d->e[i].sub);
		}
	}
	free(d->e);
	memset(d, 0, sizeof(*d));
}

size_t fixture__tree_files(const struct fx_dir *d)
{
	size_t n = 0;
	for (uint32_t i = 0; i < d->n; i++)
		n += d->e[i].sub ? fixture__tree_files(d->e[i].sub) : 1;
	return n;
}
