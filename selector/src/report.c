/* The selection report (select.h): the four stages' counts, every candidate with the stage it
 * reached and why, drift and the fallback. Stages 3 and 4 fill it; report_write.c prints it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "select_internal.h"

static const char *const stage_names[SELECT_STAGES] = { "changes", "impact", "eligibility",
							"budget" };

void selector_report_init(struct select_report *rep)
{
	memset(rep, 0, sizeof *rep);
	testspecs_cases_init(&rep->cases);
	for (int i = 0; i < SELECT_STAGES; i++)
		rep->stages[i].name = stage_names[i];
}

static void reasons_free(struct select_reason *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].text);
	free(r);
}

void selector_report_finish(struct select_report *rep)
{
	for (size_t i = 0; i < rep->n_tests; i++) {
		struct select_test *t = &rep->tests[i];
		free(t->id);
		reasons_free(t->reasons, t->n_reasons);
		free(t->spec_why);
		free(t->case_why);
		free(t->variants_why);
		free(t->spec_entry);
		for (size_t k = 0; k < t->n_variants; k++) {
			free(t->variants[k].name);
			free(t->variants[k].entry);
			free(t->variants[k].why);
		}
		free(t->variants);
	}
	free(rep->tests);
	for (size_t i = 0; i < rep->n_drift; i++) {
		free(rep->drift[i].test);
		free(rep->drift[i].where);
	}
	free(rep->drift);
	free(rep->shards);
	testspecs_cases_finish(&rep->cases);
	selector_report_init(rep);
}

void selector_report_set_front(struct select_report *rep, size_t catalog_tests,
			       size_t changed_files, size_t candidates)
{
	rep->stages[0].in = catalog_tests;
	rep->stages[0].out = catalog_tests;
	rep->stages[1].in = catalog_tests;
	rep->stages[1].out = candidates;
	rep->changed_files = changed_files;
}

void selector_report_set_fallback(struct select_report *rep, const char *reason)
{
	rep->fallback = true;
	snprintf(rep->fallback_reason, sizeof rep->fallback_reason, "%s", reason ? reason : "");
}

const struct select_test *selector_report_find(const struct select_report *rep, const char *id)
{
	for (size_t i = 0; i < rep->n_tests; i++)
		if (strcmp(rep->tests[i].id, id) == 0)
			return &rep->tests[i];
	return NULL;
}

int select__grow(void **v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	if (need > SELECT_TESTS_MAX)
		return err_set(ERR_LIMIT, "selection: more than %d entries", SELECT_TESTS_MAX);
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *nv = realloc(*v, ncap * size);
	if (!nv)
		return err_set(ERR_NOMEM, "selection: %zu entries", ncap);
	*v = nv;
	*cap = ncap;
	return 0;
}

static int copy_reasons(struct select_test *t, const struct select_reason *r, size_t n)
{
	if (n == 0)
		return 0;
	t->reasons = calloc(n, sizeof *t->reasons);
	if (!t->reasons)
		return err_set(ERR_NOMEM, "selection: reasons of '%s'", t->id);
	for (size_t i = 0; i < n; i++) {
		t->reasons[i] = r[i];
		t->reasons[i].kind[SELECT_REASON_KIND - 1] = '\0';
		t->reasons[i].text = strdup(r[i].text ? r[i].text : "");
		t->n_reasons = i + 1;
		if (!t->reasons[i].text)
			return err_set(ERR_NOMEM, "selection: reason of '%s'", t->id);
	}
	return 0;
}

int select__add_test(struct select_report *rep, const char *id, const struct select_reason *reasons,
		     size_t n_reasons, struct select_test **out)
{
	int rc = select__grow((void **)&rep->tests, &rep->cap_tests, rep->n_tests + 1,
			      sizeof *rep->tests);
	if (rc < 0)
		return rc;
	struct select_test *t = &rep->tests[rep->n_tests];
	memset(t, 0, sizeof *t);
	t->fate = SELECT_IMPACTED;
	t->shard = -1;
	t->case_rule = "";
	t->why4 = "";
	t->id = strdup(id);
	if (!t->id)
		return err_set(ERR_NOMEM, "selection: id '%s'", id);
	rep->n_tests++; /* owned by the report from here, also on a failure below */
	*out = t;
	return copy_reasons(t, reasons, n_reasons);
}
