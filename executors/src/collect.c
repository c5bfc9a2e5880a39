/* The cases of a whole spec set (collect.h). */
#include "executors/collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/regex.h"

/* A set of test ids already expanded: open addressing on FNV-1a, grown at half full. */
struct seen {
	char **slots;
	size_t cap, n;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int seen_grow(struct seen *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return err_set(ERR_NOMEM, "out of memory collecting cases");
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i])
			continue;
		size_t k = hash(s->slots[i]) & (cap - 1);
		while (slots[k])
			k = (k + 1) & (cap - 1);
		slots[k] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

/* 1 when `id` was seen before; else 0 and remembers it. */
static int seen_add(struct seen *s, const char *id)
{
	if (s->n >= EXEC_COLLECT_TESTS_MAX)
		return err_set(ERR_LIMIT, "more than %d tests", EXEC_COLLECT_TESTS_MAX);
	if ((s->n + 1) * 2 > s->cap && seen_grow(s) != 0)
		return ERR_NOMEM;
	size_t k = hash(id) & (s->cap - 1);
	for (; s->slots[k]; k = (k + 1) & (s->cap - 1))
		if (strcmp(s->slots[k], id) == 0)
			return 1;
	if (!(s->slots[k] = strdup(id)))
		return err_set(ERR_NOMEM, "out of memory collecting cases");
	s->n++;
	return 0;
}

static void seen_finish(struct seen *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i]);
	free(s->slots);
}

static bool name_is_plain(const char *name)
{
	const char *sep = strstr(name, "::");
	if (!sep)
		return testspecs_name_is_plain(name);
	char cls[SPEC_TESTID_MAX];
	size_t n = (size_t)(sep - name);
	if (n >= sizeof(cls))
		return false;
	memcpy(cls, name, n);
	cls[n] = '\0';
	return testspecs_name_is_plain(cls) && testspecs_name_is_plain(sep + 2);
}

static const char *id_path(const struct spec_file *f)
{
	static const char tok[] = "${TORCH_ROOT}/";
	const char *p = f->path.s;
	return strncmp(p, tok, sizeof(tok) - 1) == 0 ? p + sizeof(tok) - 1 : p;
}

static int expand_id(struct spec_case_list *list, const struct spec_resolver *r,
		     const struct spec_set *set, const char *id, const char *tier)
{
	struct spec_decision *d = malloc(sizeof(*d));
	if (!d)
		return err_set(ERR_NOMEM, "out of memory collecting cases");
	struct spec_resolve_opts o = { .tier = tier };
	int rc = testspecs_resolver_resolve(r, id, &o, d);
	struct spec_case_test t = { .test_id = id, .tier = tier };
	if (!rc)
		testspecs_case_test_from_specs(&t, d);
	free(d);
	struct spec_expand_result res;
	if (!rc)
		rc = testspecs_cases_expand(list, r, set, &t, &res);
	return rc ? err_prefix("test '%s': ", id) : 0;
}

static int collect_name(struct spec_case_list *list, const struct spec_set *set,
			const struct spec_resolver *r, const char *tier, struct seen *seen,
			const struct spec_file *f, const struct spec_test *t, const char *name)
{
	char id[SPEC_TESTID_MAX];
	snprintf(id, sizeof(id), "%s::%s", id_path(f), name);
	if (f->is_glob || !name_is_plain(name)) {
		struct spec_expand_result res;
		int rc = testspecs_cases_expand_entry(list, set, f, t, id, tier, &res);
		return rc ? err_prefix("pattern '%s': ", id) : 0;
	}
	int rc = seen_add(seen, id);
	if (rc)
		return rc < 0 ? rc : 0;
	return expand_id(list, r, set, id, tier);
}

int exec_collect_cases(struct spec_case_list *list, const struct spec_set *set,
		       const struct spec_resolver *r, const char *tier)
{
	struct seen seen = { 0 };
	int rc = 0;
	for (size_t i = 0; !rc && i < set->n_files; i++) {
		const struct spec_file *f = &set->files[i];
		for (size_t j = 0; !rc && j < f->n_tests; j++)
			for (size_t k = 0; !rc && k < f->tests[j].names.n; k++)
				rc = collect_name(list, set, r, tier, &seen, f, &f->tests[j],
						  f->tests[j].names.v[k].s);
	}
	seen_finish(&seen);
	return rc;
}
