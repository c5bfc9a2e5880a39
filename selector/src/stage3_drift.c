/* Stale spec entries (drift): a plain spec name (`method` or `Class::method`, identifiers only:
 * regular expressions are patterns, not claims that a test exists) that no test of the head
 * catalog matches, neither as its name nor as `<name>_...` (a variant: torch-spyre's rule). Every
 * catalog id is resolved once; the names the resolver notes as deciding, shadowed or dropped for
 * their labels are marked used, in a set of the names' addresses (the set owns the names, so an
 * address is an identity). File entries under ${TORCH_DEVICE_ROOT} name torch-spyre's own tests,
 * not upstream ones, and are left out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "common/limits.h"
#include "select_internal.h"

struct ptrset {
	const void **slot;
	size_t mask, n;
};

static size_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* Open addressing with linear probing, sized once for at most `n` members at half load. */
static int ptrset_init(struct ptrset *s, size_t n)
{
	size_t cap = 64;
	while (cap < 2 * n && cap < ((size_t)1 << 40))
		cap <<= 1;
	s->slot = calloc(cap, sizeof *s->slot);
	s->mask = cap - 1;
	s->n = 0;
	return s->slot ? 0 : err_set(ERR_NOMEM, "stage 3: name set of %zu", cap);
}

static void ptrset_add(struct ptrset *s, const void *p)
{
	if (2 * s->n >= s->mask) /* sized for the spec set's names: only foreign ones get here */
		return;
	for (size_t i = ptr_hash(p) & s->mask;; i = (i + 1) & s->mask) {
		if (s->slot[i] == p)
			return;
		if (!s->slot[i]) {
			s->slot[i] = p;
			s->n++;
			return;
		}
	}
}

static bool ptrset_has(const struct ptrset *s, const void *p)
{
	for (size_t i = ptr_hash(p) & s->mask; s->slot[i]; i = (i + 1) & s->mask)
		if (s->slot[i] == p)
			return true;
	return false;
}

/* `name` or `Class::name` made of word characters only. */
static bool plain_name(const char *s)
{
	int seps = 0;
	if (!*s)
		return false;
	for (const char *p = s; *p; p++) {
		if (p[0] == ':' && p[1] == ':' && p != s && p[2] && seps == 0) {
			seps++;
			p++;
			continue;
		}
		if (!(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return false;
	}
	return true;
}

static size_t count_names(const struct spec_set *set)
{
	size_t n = 0;
	for (size_t f = 0; f < set->n_files; f++)
		for (size_t t = 0; t < set->files[f].n_tests; t++)
			n += set->files[f].tests[t].names.n;
	return n;
}

/* The memo works a group of ids at a time: the ids that share a file ("path::"), consecutive
 * as a catalog lists them. A group is looked up by its path and used only when its ids are
 * exactly the remembered ones, in order; then the names it marked are marked again without
 * resolving anything. One lookup a file, the ids compared in sequence: the per-id lookups of
 * 60,000 ids were bound by memory latency. */
struct select_drift_memo {
	const struct spec_set *set;
	const struct spec_resolver *resolver;
	struct strmap groups; /* path (arena copy) -> struct memo_group * */
	struct arena arena;
	size_t kept; /* ids stored since the last clear */
	size_t resolved, hits;
};

struct memo_group {
	size_t n_ids;
	const char *ids; /* n_ids NUL-terminated ids, end to end */
	size_t ids_len;
	size_t n_names;
	const void *names[]; /* distinct spec names the group's ids mark used */
};

int selector_drift_memo_create(struct select_drift_memo **out, const struct spec_set *set,
			       const struct spec_resolver *resolver)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return err_set(ERR_NOMEM, "drift memo");
	(*out)->set = set;
	(*out)->resolver = resolver;
	return 0;
}

static void memo_clear(struct select_drift_memo *m)
{
	strmap_free(&m->groups);
	scan__arena_free(&m->arena);
	m->kept = 0;
}

void selector_drift_memo_destroy(struct select_drift_memo *m)
{
	if (!m)
		return;
	memo_clear(m);
	free(m);
}

void selector_drift_memo_counts(const struct select_drift_memo *m, size_t *resolved, size_t *hits)
{
	*resolved = m ? m->resolved : 0;
	*hits = m ? m->hits : 0;
}

static bool marks(enum spec_role r)
{
	return r == SPEC_ROLE_ENTRY || r == SPEC_ROLE_SHADOWED || r == SPEC_ROLE_LABEL_DROPPED;
}

/* The length of ids[i]'s "path::" prefix (0 when it has none: a group of its own). */
static size_t group_prefix(const char *id)
{
	const char *sep = strstr(id, "::");
	return sep ? (size_t)(sep - id) + 2 : 0;
}

/* True when ids[0..n) are the group's ids, in order. */
static bool same_ids(const struct memo_group *g, const char *const *ids, size_t n)
{
	if (g->n_ids != n)
		return false;
	const char *p = g->ids;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(ids[i]);
		if ((size_t)(p - g->ids) + l + 1 > g->ids_len || memcmp(p, ids[i], l + 1) != 0)
			return false;
		p += l + 1;
	}
	return true;
}

/* Remembers a group; a failure only loses the memo's help. */
/* The distinct spec names one group of ids marks used (few: a list, searched linearly). */
struct name_list {
	const void **v;
	size_t n, cap;
};

static void memo_put(struct select_drift_memo *m, const char *const *ids, size_t n, size_t plen,
		     const struct name_list *names)
{
	size_t n_names = names->n;
	if (m->kept + n > SELECT_DRIFT_MEMO_MAX)
		memo_clear(m);
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(ids[i]) + 1;
	struct memo_group *g = scan__alloc(&m->arena, sizeof(*g) + n_names * sizeof(g->names[0]));
	char *text = scan__alloc(&m->arena, len ? len : 1);
	const char *key = scan__strndup(&m->arena, ids[0], plen ? plen : strlen(ids[0]));
	if (!g || !text || !key)
		return;
	g->n_ids = n;
	g->ids = text;
	g->ids_len = len;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(ids[i]) + 1;
		memcpy(text, ids[i], l);
		text += l;
	}
	for (size_t k = 0; k < n_names; k++)
		g->names[g->n_names++] = names->v[k];
	m->kept += n;
	(void)strmap_put(&m->groups, key, (intptr_t)g);
}

/* Marks one name used (and lists it in `mine` for the memo). */
static int mark(struct ptrset *used, struct name_list *mine, const void *what)
{
	ptrset_add(used, what);
	size_t k = 0;
	while (mine && k < mine->n && mine->v[k] != what)
		k++;
	if (!mine || k < mine->n)
		return 0;
	void *p = scan__grow(mine->v, mine->n, &mine->cap, sizeof(*mine->v));
	if (!p)
		return err_set(ERR_NOMEM, "stage 3: drift names");
	mine->v = p;
	mine->v[mine->n++] = what;
	return 0;
}

struct variant_marks {
	struct ptrset *used;
	struct name_list *mine;
	int rc;
};

/* torch-spyre's config checker counts a name that starts with a collectable test's name plus
 * `_` as live (an @ops op or @parametrize value of that test). */
static void mark_variant(void *ctx, const struct spec_str *name)
{
	struct variant_marks *vm = ctx;
	if (vm->rc == 0)
		vm->rc = mark(vm->used, vm->mine, name->s);
}

/* Resolves ids[0..n) and marks the names they use in `used` (and, for the memo, lists them in
 * `mine`): the names that decide, are shadowed or dropped, and the names of their variants. */
static int resolve_group(struct ptrset *used, struct name_list *mine,
			 const struct spec_resolver *resolver, const char *const *ids, size_t n,
			 struct spec_decision *d)
{
	struct spec_resolve_opts exact = { .exact = true };
	for (size_t i = 0; i < n; i++) {
		int rc = testspecs_resolver_resolve(resolver, ids[i], &exact, d);
		if (rc == ERR_INVAL)
			continue; /* not a test id: matches nothing */
		if (rc < 0)
			return err_prefix("stage 3: drift, resolving '%s': ", ids[i]);
		for (size_t e = 0; e < d->n_entries && rc == 0; e++)
			if (marks(d->entries[e].role))
				rc = mark(used, mine, d->entries[e].what);
		struct variant_marks vm = { used, mine, rc };
		int nv =
		    testspecs_resolver_variant_names(resolver, ids[i], NULL, mark_variant, &vm);
		if (vm.rc < 0)
			return vm.rc;
		if (nv < 0 && nv != ERR_INVAL)
			return err_prefix("stage 3: drift, variants of '%s': ", ids[i]);
	}
	return 0;
}

static int mark_used(struct ptrset *used, const struct spec_set *set,
		     const struct spec_resolver *resolver, const struct select_stage3_opts *o,
		     struct spec_decision *d)
{
	const char *const *ids = o->catalog_ids;
	size_t n = o->n_catalog;
	struct select_drift_memo *m = o->drift_memo;
	if (m && (m->set != set || m->resolver != resolver))
		m = NULL; /* bound to other specs: of no use here */
	struct name_list mine = { 0 };
	int rc = 0;
	for (size_t i = 0, j; !rc && i < n; i = j) {
		size_t plen = group_prefix(ids[i]);
		for (j = i + 1; plen && j < n && strncmp(ids[j], ids[i], plen) == 0; j++)
			;
		if (o->progress &&
		    (j / SELECT_PROGRESS_EVERY != i / SELECT_PROGRESS_EVERY || j == n))
			o->progress(o->progress_ctx, "spec drift", j, n);
		if (!m) {
			rc = resolve_group(used, NULL, resolver, ids + i, j - i, d);
			continue;
		}
		char key[PATH_TEXT_MAX + 2];
		size_t kl = plen ? plen : strlen(ids[i]);
		intptr_t v;
		if (kl < sizeof(key)) {
			memcpy(key, ids[i], kl);
			key[kl] = 0;
			if (strmap_get(&m->groups, key, &v) &&
			    same_ids((const struct memo_group *)v, ids + i, j - i)) {
				const struct memo_group *g = (const struct memo_group *)v;
				for (size_t k = 0; k < g->n_names; k++)
					ptrset_add(used, g->names[k]);
				m->hits += j - i;
				continue;
			}
		}
		mine.n = 0;
		rc = resolve_group(used, &mine, resolver, ids + i, j - i, d);
		m->resolved += j - i;
		if (!rc && kl < sizeof(key))
			memo_put(m, ids + i, j - i, plen, &mine);
	}
	free(mine.v);
	return rc;
}

static int add_stale(struct select_report *rep, const struct spec_str *name)
{
	if (select__grow((void **)&rep->drift, &rep->cap_drift, rep->n_drift + 1,
			 sizeof *rep->drift) < 0)
		return ERR_NOMEM;
	struct select_drift *dr = &rep->drift[rep->n_drift];
	char where[1200];
	snprintf(where, sizeof where, "%s:%u", name->loc.file ? name->loc.file : "?",
		 (unsigned)name->loc.line);
	dr->kind = SELECT_DRIFT_STALE;
	dr->mode = SPEC_MODE_UNSET;
	dr->test = strdup(name->s);
	dr->where = strdup(where);
	if (!dr->test || !dr->where) {
		free(dr->test);
		free(dr->where);
		return err_set(ERR_NOMEM, "stage 3: stale drift record");
	}
	rep->n_drift++;
	return 0;
}

int select__stale_drift(struct select_report *rep, const struct spec_set *set,
			const struct spec_resolver *resolver, const struct select_stage3_opts *opts,
			struct spec_decision *d)
{
	struct ptrset used;
	int rc = ptrset_init(&used, count_names(set));
	if (rc < 0)
		return rc;
	rc = mark_used(&used, set, resolver, opts, d);
	for (size_t f = 0; f < set->n_files && rc == 0; f++) {
		const struct spec_file *file = &set->files[f];
		if (strstr(file->path.s, "${TORCH_DEVICE_ROOT}"))
			continue;
		for (size_t t = 0; t < file->n_tests && rc == 0; t++)
			for (size_t k = 0; k < file->tests[t].names.n && rc == 0; k++) {
				const struct spec_str *name = &file->tests[t].names.v[k];
				if (plain_name(name->s) && !ptrset_has(&used, name->s))
					rc = add_stale(rep, name);
			}
	}
	free(used.slot);
	return rc;
}
