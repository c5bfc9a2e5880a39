/* torch-spyre's config checker on a real upstream (testspecs/lint_upstream.h): every
 * collectable id resolved against each config on its own, the names that decide it (or name
 * one of its variants) marked live, and what is left dead, decided twice or not named at all
 * reported where it was written. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/lint_upstream.h"
#include "testspecs/resolve.h"

/* A set of addresses (spec names are owned by their set: an address is an identity). */
struct addrset {
	const void **slot;
	size_t mask, n;
};

static size_t addr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return (size_t)(x ^ (x >> 33));
}

static int addrset_init(struct addrset *s, size_t n)
{
	size_t cap = 64;
	while (cap < 2 * n + 2 && cap < ((size_t)1 << 40))
		cap <<= 1;
	s->slot = calloc(cap, sizeof *s->slot);
	s->mask = cap - 1;
	s->n = 0;
	return s->slot ? 0 : err_set(ERR_NOMEM, "lint --upstream: %zu names", n);
}

static void addrset_add(struct addrset *s, const void *p)
{
	if (2 * s->n >= s->mask)
		return;
	size_t i = addr_hash(p) & s->mask;
	while (s->slot[i] && s->slot[i] != p)
		i = (i + 1) & s->mask;
	if (!s->slot[i]) {
		s->slot[i] = p;
		s->n++;
	}
}

static int addrset_has(const struct addrset *s, const void *p)
{
	for (size_t i = addr_hash(p) & s->mask; s->slot[i]; i = (i + 1) & s->mask)
		if (s->slot[i] == p)
			return 1;
	return 0;
}

static int upstream_file(const struct spec_file *f)
{
	return !f->path.s || !strstr(f->path.s, "${TORCH_DEVICE_ROOT}");
}

static size_t count_names(const struct spec_set *set)
{
	size_t n = 0;
	for (size_t f = 0; f < set->n_files; f++)
		for (size_t t = 0; t < set->files[f].n_tests; t++)
			n += set->files[f].tests[t].names.n;
	return n;
}

/* The variant names of one id: all live (torch-spyre's rule); the id counts as covered by one
 * only when no longer collectable test owns the name (test_a_b's entries are not test_a's). */
struct variant_ctx {
	struct addrset *live;
	const char *const *sorted; /* the ids, sorted */
	size_t n_ids;
	const char *id;
	bool covers;
};

static int cmp_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_id(const struct variant_ctx *v, const char *id)
{
	return bsearch(&id, v->sorted, v->n_ids, sizeof *v->sorted, cmp_id) != NULL;
}

static bool owned_by_longer(const struct variant_ctx *v, const char *method)
{
	char buf[SPEC_TESTID_MAX];
	const char *last = strrchr(v->id, ':');
	size_t head = last ? (size_t)(last - v->id) + 1 : 0, base = strlen(v->id) - head;
	size_t n = strlen(method);
	if (head + n >= sizeof buf)
		return false;
	memcpy(buf, v->id, head);
	for (size_t i = base + 1; i <= n; i++) {
		if (i < n && method[i] != '_')
			continue;
		memcpy(buf + head, method, i);
		buf[head + i] = '\0';
		if (is_id(v, buf))
			return true;
	}
	return false;
}

static void mark_variant(void *ctx, const struct spec_str *name)
{
	struct variant_ctx *v = ctx;
	addrset_add(v->live, name->s);
	const char *sep = strstr(name->s, "::");
	if (!v->covers && !owned_by_longer(v, sep ? sep + 2 : name->s))
		v->covers = true;
}

/* What one id got from one config: the name that decided it, if an entry did. */
struct verdict {
	const struct spec_str *name;
	size_t config;
};

static const struct spec_str *entry_name(const struct spec_test *t, const char *what)
{
	for (size_t k = 0; t && k < t->names.n; k++)
		if (t->names.v[k].s == what)
			return &t->names.v[k];
	return NULL;
}

/* Resolves every id against config `c`, marks the names it uses, and notes per id whether an
 * entry (or a variant entry) of this config names it. */
static int resolve_config(const struct spec_set *set, const char *const *ids, size_t n_ids,
			  const char *const *sorted, struct addrset *live, struct verdict *first,
			  bool *covered, struct spec_diag_list *diags, size_t c,
			  struct spec_upstream_counts *cnt, struct spec_decision *d)
{
	struct spec_resolver *r;
	int rc = testspecs_resolver_create(&r, set);
	if (rc)
		return rc;
	struct spec_resolve_opts exact = { .exact = true };
	for (size_t i = 0; rc == 0 && i < n_ids; i++) {
		rc = testspecs_resolver_resolve(r, ids[i], &exact, d);
		if (rc == ERR_INVAL) {
			rc = 0;
			continue;
		}
		const struct spec_str *decided = NULL;
		for (size_t e = 0; rc == 0 && e < d->n_entries; e++) {
			enum spec_role role = d->entries[e].role;
			if (role == SPEC_ROLE_ENTRY || role == SPEC_ROLE_SHADOWED ||
			    role == SPEC_ROLE_LABEL_DROPPED)
				addrset_add(live, d->entries[e].what);
			if (role == SPEC_ROLE_ENTRY)
				decided = entry_name(d->entry, d->entries[e].what);
		}
		struct variant_ctx vc = { live, sorted, n_ids, ids[i], false };
		int nv = testspecs_resolver_variant_names(r, ids[i], NULL, mark_variant, &vc);
		if (rc == 0 && nv < 0 && nv != ERR_INVAL)
			rc = nv;
		if (rc || (!decided && !vc.covers))
			continue;
		if (decided && first[i].name && first[i].config != c) {
			cnt->duplicates++;
			rc = testspecs_diags_add(diags, SPEC_WARNING, &decided->loc, "",
						 "'%s' is also decided by '%s' at %s:%u:%u: "
						 "covered by more than one config",
						 ids[i], first[i].name->s, first[i].name->loc.file,
						 first[i].name->loc.line, first[i].name->loc.col);
		} else if (decided && !first[i].name) {
			first[i] = (struct verdict){ decided, c };
		}
		covered[i] = true;
	}
	testspecs_resolver_destroy(r);
	return rc == ERR_INVAL ? 0 : rc;
}

static int report_dead(const struct spec_set *set, const struct addrset *live,
		       struct spec_diag_list *diags, struct spec_upstream_counts *cnt)
{
	int rc = 0;
	for (size_t f = 0; rc == 0 && f < set->n_files; f++) {
		if (!upstream_file(&set->files[f]))
			continue;
		for (size_t t = 0; rc == 0 && t < set->files[f].n_tests; t++) {
			const struct spec_strs *ns = &set->files[f].tests[t].names;
			for (size_t k = 0; rc == 0 && k < ns->n; k++) {
				cnt->names++;
				if (addrset_has(live, ns->v[k].s)) {
					cnt->live++;
					continue;
				}
				cnt->dead++;
				rc = testspecs_diags_add(
				    diags, SPEC_WARNING, &ns->v[k].loc, "",
				    "dead: '%s' matches no collectable test of %s "
				    "(nor one's name plus '_')",
				    ns->v[k].s, set->files[f].path.s);
			}
		}
	}
	return rc;
}

/* The id's path ("test/test_x.py"), into `buf`. */
static const char *id_path(const char *id, char *buf, size_t size)
{
	const char *sep = strstr(id, "::");
	size_t n = sep ? (size_t)(sep - id) : 0;
	if (n >= size)
		n = 0;
	memcpy(buf, id, n);
	buf[n] = '\0';
	return buf;
}

/* The first upstream file entry of any config for `path`, or NULL. */
static const struct spec_file *listed_file(struct spec_set *const *configs, size_t n,
					   const char *path)
{
	for (size_t c = 0; c < n; c++)
		for (size_t f = 0; f < configs[c]->n_files; f++) {
			const struct spec_file *e = &configs[c]->files[f];
			const char *p = e->path.s ? e->path.s : "";
			if (strncmp(p, "${TORCH_ROOT}/", 14) == 0)
				p += 14;
			if (upstream_file(e) && strcmp(p, path) == 0)
				return e;
		}
	return NULL;
}

static int report_uncovered(struct spec_set *const *configs, size_t n_configs,
			    const char *const *ids, size_t n_ids, const bool *covered,
			    struct spec_diag_list *diags, struct spec_upstream_counts *cnt)
{
	char path[1024];
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n_ids; i++) {
		const struct spec_file *f =
		    covered[i] ? NULL
			       : listed_file(configs, n_configs, id_path(ids[i], path, 1024));
		if (!f)
			continue;
		cnt->uncovered++;
		rc = testspecs_diags_add(
		    diags, SPEC_WARNING, &f->loc, "",
		    "not covered: '%s' is collectable and no config names it "
		    "(unlisted_test_mode %s decides)",
		    ids[i],
		    testspecs_mode_name(f->unlisted ? f->unlisted : SPEC_DEFAULT_UNLISTED_MODE));
	}
	return rc;
}

int testspecs_lint_upstream(struct spec_set *const *configs, size_t n_configs,
			    const char *const *ids, size_t n_ids, struct spec_diag_list *diags,
			    struct spec_upstream_counts *counts)
{
	struct spec_upstream_counts local = { 0 }, *cnt = counts ? counts : &local;
	*cnt = (struct spec_upstream_counts){ .tests = n_ids };
	struct verdict *first = calloc(n_ids + 1, sizeof *first);
	bool *covered = calloc(n_ids + 1, sizeof *covered);
	struct spec_decision *d = malloc(sizeof *d);
	const char **sorted = malloc((n_ids + 1) * sizeof *sorted);
	int rc = first && covered && d && sorted
		     ? 0
		     : err_set(ERR_NOMEM, "lint --upstream: %zu ids", n_ids);
	if (rc == 0 && n_ids) {
		memcpy(sorted, ids, n_ids * sizeof *ids);
		qsort(sorted, n_ids, sizeof *sorted, cmp_id);
	}
	for (size_t c = 0; rc == 0 && c < n_configs; c++) {
		struct addrset live;
		rc = addrset_init(&live, count_names(configs[c]));
		if (rc == 0)
			rc = resolve_config(configs[c], ids, n_ids, sorted, &live, first, covered,
					    diags, c, cnt, d);
		if (rc == 0)
			rc = report_dead(configs[c], &live, diags, cnt);
		free(live.slot);
	}
	if (rc == 0)
		rc = report_uncovered(configs, n_configs, ids, n_ids, covered, diags, cnt);
	free(first);
	free(covered);
	free(d);
	free(sorted);
	return rc;
}
