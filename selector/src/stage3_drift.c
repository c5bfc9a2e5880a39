/* Stale spec entries (drift): a plain spec name (`method` or `Class::method`, identifiers only:
 * regular expressions are patterns, not claims that a test exists) that no test of the head
 * catalog matches. Every catalog id is resolved once; the names the resolver notes as deciding,
 * shadowed or dropped for their labels are marked used, in a set of the names' addresses (the
 * set owns the names, so an address is an identity). File entries under ${TORCH_DEVICE_ROOT}
 * name torch-spyre's own tests, not upstream ones, and are left out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "select_internal.h"

struct ptrset {
	const void **slot;
	size_t mask;
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
	return s->slot ? 0 : err_set(ERR_NOMEM, "stage 3: name set of %zu", cap);
}

static void ptrset_add(struct ptrset *s, const void *p)
{
	for (size_t i = ptr_hash(p) & s->mask;; i = (i + 1) & s->mask) {
		if (s->slot[i] == p)
			return;
		if (!s->slot[i]) {
			s->slot[i] = p;
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

struct select_drift_memo {
	const struct spec_set *set;
	const struct spec_resolver *resolver;
	struct strmap ids; /* id (arena copy) -> struct memo_entry * */
	struct arena arena;
	size_t resolved, hits;
};

/* The spec names one id marks used. */
struct memo_entry {
	size_t n;
	const void *names[];
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
	strmap_free(&m->ids);
	scan__arena_free(&m->arena);
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

/* Remembers the names `d` marked for `id`; a failure only loses the memo's help. */
static void memo_put(struct select_drift_memo *m, const char *id, const struct spec_decision *d)
{
	if (m->ids.n >= SELECT_DRIFT_MEMO_MAX)
		memo_clear(m);
	size_t n = 0;
	for (size_t e = 0; e < d->n_entries; e++) {
		enum spec_role r = d->entries[e].role;
		n +=
		    r == SPEC_ROLE_ENTRY || r == SPEC_ROLE_SHADOWED || r == SPEC_ROLE_LABEL_DROPPED;
	}
	struct memo_entry *me = scan__alloc(&m->arena, sizeof(*me) + n * sizeof(me->names[0]));
	const char *key = scan__strndup(&m->arena, id, strlen(id));
	if (!me || !key)
		return;
	for (size_t e = 0; e < d->n_entries; e++) {
		enum spec_role r = d->entries[e].role;
		if (r == SPEC_ROLE_ENTRY || r == SPEC_ROLE_SHADOWED || r == SPEC_ROLE_LABEL_DROPPED)
			me->names[me->n++] = d->entries[e].what;
	}
	(void)strmap_put(&m->ids, key, (intptr_t)me);
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
	for (size_t i = 0; i < n; i++) {
		if (o->progress && ((i + 1) % SELECT_PROGRESS_EVERY == 0 || i + 1 == n))
			o->progress(o->progress_ctx, "spec drift", i + 1, n);
		intptr_t v;
		if (m && strmap_get(&m->ids, ids[i], &v)) {
			const struct memo_entry *me = (const struct memo_entry *)v;
			for (size_t k = 0; k < me->n; k++)
				ptrset_add(used, me->names[k]);
			m->hits++;
			continue;
		}
		int rc = testspecs_resolver_resolve(resolver, ids[i], NULL, d);
		if (rc == ERR_INVAL) {
			d->n_entries = 0; /* not a test id: matches nothing */
		} else if (rc < 0) {
			return err_prefix("stage 3: drift, resolving '%s': ", ids[i]);
		}
		for (size_t e = 0; e < d->n_entries; e++) {
			enum spec_role r = d->entries[e].role;
			if (r == SPEC_ROLE_ENTRY || r == SPEC_ROLE_SHADOWED ||
			    r == SPEC_ROLE_LABEL_DROPPED)
				ptrset_add(used, d->entries[e].what);
		}
		if (m) {
			m->resolved++;
			memo_put(m, ids[i], d);
		}
	}
	return 0;
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
