/* `spyre-ci specs list`: the kernel cases the spec files give. Without --test, every plain name
 * of every entry becomes the test id `<path>::<name>` (path relative to TORCH_ROOT), resolved
 * and expanded (testspecs/cases.h); a name that is a regular expression, or an entry of a glob
 * path, names no concrete test without an upstream checkout: it is listed as a pattern, with
 * its mode and the cases its `kernels:`/`sample_inputs_func` give. With --test, exactly those
 * ids.
 *
 * With --upstream DIR the tests are those of DIR's revision (the selector's catalog), taken
 * through the funnel's stage 3 exactly as `select` takes them (funnel_tests_expand): an @ops
 * test's list is evaluated to its ops and their cases come from DIR's op database. Shown are
 * the tests an entry lists (by name, pattern or variant) and those that get cases anyway (their
 * file's unlisted_test_mode); spec names that no test of DIR matches are listed apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/err.h"
#include "executors/adapters.h"
#include "funnel/funnel.h"
#include "selector/catalog.h"
#include "specs_cmd.h"
#include "spyre-emu/graph.h"
#include "testspecs/regex.h"

#define LIST_TESTS_MAX 100000 /* distinct test ids one list expands */

struct list_state {
	const struct specs_args *a;
	const struct spec_set *set;
	const struct spec_resolver *r;
	struct spec_case_list cases;
	json_t *not_mappable, *patterns, *skipped;
	char **seen; /* test ids already expanded (a test may be named twice) */
	size_t n_seen, cap_seen;
	size_t n_tests;
	/* --upstream: the funnel's expansion (its report's cases moved to `cases`), and the
	 * names and ids that are no test of the revision */
	const struct funnel_expansion *x;
	json_t *absent;
};

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

/* 1 when `id` was seen already; else remembers it. */
static int seen_before(struct list_state *st, const char *id)
{
	for (size_t i = 0; i < st->n_seen; i++)
		if (strcmp(st->seen[i], id) == 0)
			return 1;
	if (st->n_seen >= LIST_TESTS_MAX)
		return err_set(ERR_LIMIT, "more than %d tests", LIST_TESTS_MAX);
	if (st->n_seen == st->cap_seen) {
		size_t cap = st->cap_seen ? st->cap_seen * 2 : 64;
		char **v = realloc(st->seen, cap * sizeof(*v));
		if (!v)
			return err_set(ERR_NOMEM, "list: out of memory");
		st->seen = v;
		st->cap_seen = cap;
	}
	if (!(st->seen[st->n_seen] = strdup(id)))
		return err_set(ERR_NOMEM, "list: out of memory");
	st->n_seen++;
	return 0;
}

static json_t *refusal_json(const char *test, const struct spec_expand_result *res)
{
	json_t *o = json_object();
	jx_set_str(o, "test", test);
	jx_set_str(o, "mode", testspecs_mode_name(res->mode));
	jx_set_str(o, "reason", res->why ? res->why : "");
	return o;
}

/* Expands one concrete test id. */
static int list_id(struct list_state *st, const char *id, bool from_entry)
{
	int rc = seen_before(st, id);
	if (rc)
		return rc < 0 ? rc : 0;
	struct spec_expand_result res;
	rc = specs_expand_id(&st->cases, st->r, st->set, id, st->a->label, NULL, &res);
	if (rc)
		return err_prefix("test '%s'", id);
	if (from_entry && st->a->label && !res.eligible && res.mode == SPEC_MODE_UNSET)
		return 0; /* listed only for other tiers: not part of this tier's list */
	st->n_tests++;
	if (!res.eligible)
		jx_append_new(st->skipped, refusal_json(id, &res));
	else if (res.rule == SPEC_RULE_NONE)
		jx_append_new(st->not_mappable, refusal_json(id, &res));
	return 0;
}

static int list_pattern(struct list_state *st, const struct spec_file *f, const struct spec_test *t,
			const struct spec_str *name)
{
	char label[SPEC_TESTID_MAX];
	snprintf(label, sizeof(label), "%s::%s", specs_id_path(f), name->s);
	struct spec_expand_result res;
	int rc = testspecs_cases_expand_entry(&st->cases, st->set, f, t, label, st->a->label, &res);
	if (rc)
		return err_prefix("pattern '%s'", label);
	if (!res.eligible && st->a->label && res.mode != SPEC_MODE_SKIP)
		return 0; /* an entry of another tier */
	json_t *o = json_object();
	jx_set_str(o, "pattern", label);
	char at[1024];
	snprintf(at, sizeof(at), "%s:%u:%u", name->loc.file, name->loc.line, name->loc.col);
	jx_set_str(o, "at", at);
	jx_set_str(o, "mode", testspecs_mode_name(res.mode));
	jx_set_bool(o, "eligible", res.eligible);
	jx_set_str(o, "rule", testspecs_rule_name(res.rule));
	jx_set_int(o, "cases", (int64_t)res.n_cases);
	if (res.why)
		jx_set_str(o, "reason", res.why);
	jx_append_new(st->patterns, o);
	return 0;
}

static int list_entries(struct list_state *st)
{
	for (size_t i = 0; i < st->set->n_files; i++) {
		const struct spec_file *f = &st->set->files[i];
		for (size_t j = 0; j < f->n_tests; j++) {
			const struct spec_test *t = &f->tests[j];
			for (size_t k = 0; k < t->names.n; k++) {
				const struct spec_str *name = &t->names.v[k];
				int rc;
				if (f->is_glob || !name_is_plain(name->s)) {
					rc = list_pattern(st, f, t, name);
				} else {
					char id[SPEC_TESTID_MAX];
					snprintf(id, sizeof(id), "%s::%s", specs_id_path(f),
						 name->s);
					rc = list_id(st, id, true);
				}
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

static void shapes_text(const struct spec_case *c, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < c->nin && n < size; i++) {
		n += (size_t)snprintf(buf + n, size - n, "%s", i ? "," : "");
		for (int d = 0; d < c->ndims[i] && n < size; d++)
			n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "x" : "",
					      (long long)c->shapes[i][d]);
	}
	if (!c->nin)
		snprintf(buf, size, "-");
}

static void print_refusals(const char *title, json_t *arr)
{
	if (!json_array_size(arr))
		return;
	printf("\n%s (%zu):\n", title, json_array_size(arr));
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		printf("  %s  [%s] %s\n", jx_get_str(v, "test"), jx_get_str(v, "mode"),
		       jx_get_str(v, "reason"));
	}
}

/* --upstream: the spec names (or --test ids) that no test of the revision matches. */
static void print_absent(const struct list_state *st)
{
	if (!json_array_size(st->absent))
		return;
	printf("\nnot in the upstream (%zu):\n", json_array_size(st->absent));
	size_t i;
	json_t *v;
	json_array_foreach(st->absent, i, v)
	{
		printf("  %s  (%s)\n", jx_get_str(v, "name"), jx_get_str(v, "at"));
	}
}

/* How the cases would run under `spyre-ci run`: natively, through the adapter table beside the
 * specs (executors/adapters.h), or not at all. */
static int kind_counts(const struct list_state *st, struct exec_kind_counts *k)
{
	struct exec_adapters *t = NULL;
	int rc = exec_adapters_load_beside(&t, st->a->paths, st->a->n_paths);
	if (!rc)
		rc = exec_adapters_count_kinds(t, st->cases.v, st->cases.n, k);
	exec_adapters_destroy(t);
	if (rc)
		fprintf(stderr, "spyre-ci specs list: %s\n", err_last());
	return rc;
}

static int print_text(struct list_state *st)
{
	struct exec_kind_counts k;
	if (kind_counts(st, &k))
		return CLI_USAGE;
	const struct spec_case_list *l = &st->cases;
	printf("%-16s %-20s %-22s %-9s %-8s %-8s %-17s %s\n", "id", "op", "shapes", "dtype", "atol",
	       "rtol", "mode", "test");
	for (size_t i = 0; i < l->n; i++) {
		const struct spec_case *c = &l->v[i];
		char sh[128];
		shapes_text(c, sh, sizeof(sh));
		printf("%-16s %-20s %-22s %-9s %-8g %-8g %-17s %s%s%s\n", c->id, c->op, sh,
		       c->dtype ? testspecs_dtype_name(c->dtype) : "none", c->atol, c->rtol,
		       testspecs_mode_name(c->mode), c->test_id,
		       c->unsupported ? "  UNSUPPORTED: " : "", c->unsupported ? c->why : "");
		if (c->kind == SPEC_CASE_GRAPH)
			printf("%-16s graph %s (%d ops, relayout %s)\n", "", c->kernel->graph_path,
			       c->kernel->g->nops, testspecs_relayout_name(c->kernel->relayout));
	}
	if (json_array_size(st->patterns)) {
		printf("\npatterns (%zu):\n", json_array_size(st->patterns));
		size_t i;
		json_t *v;
		json_array_foreach(st->patterns, i, v)
		{
			int64_t n = 0;
			jx_get_int(&n, v, "cases");
			printf("  %s  [%s] %s, %lld cases (%s)\n", jx_get_str(v, "pattern"),
			       jx_get_str(v, "mode"), jx_get_str(v, "rule"), (long long)n,
			       jx_get_str(v, "at"));
		}
	}
	print_refusals("not mappable", st->not_mappable);
	print_refusals("not eligible", st->skipped);
	print_absent(st);
	printf("\n%zu tests, %zu cases (%zu unsupported), %zu not mappable, %zu not eligible, "
	       "%zu patterns\n",
	       st->n_tests, l->n, l->n_unsupported, json_array_size(st->not_mappable),
	       json_array_size(st->skipped), json_array_size(st->patterns));
	printf("%zu native, %zu adapted, %zu unsupported\n", k.native, k.adapted, k.unsupported);
	if (st->x)
		printf("upstream %s at %s (commit %.12s): %zu tests, %zu not in it\n",
		       st->a->upstream, st->a->rev ? st->a->rev : "HEAD", st->x->catalog->commit_id,
		       st->x->catalog->n_tests, json_array_size(st->absent));
	return CLI_OK;
}

static int print_json(struct list_state *st)
{
	struct exec_kind_counts k;
	if (kind_counts(st, &k))
		return CLI_USAGE;
	json_t *o = json_object(), *cases = json_array(), *unsupported = json_array();
	for (size_t i = 0; i < st->cases.n; i++)
		jx_append_new(st->cases.v[i].unsupported ? unsupported : cases,
			      specs_case_json(&st->cases.v[i]));
	jx_set_new(o, "cases", cases);
	jx_set_new(o, "unsupported", unsupported);
	jx_set_new(o, "not_mappable", json_incref(st->not_mappable));
	jx_set_new(o, "not_eligible", json_incref(st->skipped));
	jx_set_new(o, "patterns", json_incref(st->patterns));
	json_t *sum = json_object();
	jx_set_int(sum, "tests", (int64_t)st->n_tests);
	jx_set_int(sum, "cases", (int64_t)st->cases.n);
	jx_set_int(sum, "unsupported", (int64_t)st->cases.n_unsupported);
	jx_set_int(sum, "native", (int64_t)k.native);
	jx_set_int(sum, "adapted", (int64_t)k.adapted);
	jx_set_int(sum, "unsupported_after_adapters", (int64_t)k.unsupported);
	if (st->x) {
		json_t *up = json_object();
		jx_set_str(up, "dir", st->a->upstream);
		jx_set_str(up, "rev", st->a->rev ? st->a->rev : "HEAD");
		jx_set_str(up, "commit", st->x->catalog->commit_id);
		jx_set_int(up, "tests", (int64_t)st->x->catalog->n_tests);
		jx_set_new(o, "upstream", up);
		jx_set_new(o, "not_in_upstream", json_incref(st->absent));
		jx_set_int(sum, "not_in_upstream", (int64_t)json_array_size(st->absent));
	}
	jx_set_new(o, "summary", sum);
	return cli_print_json(o);
}

static int list_run(struct list_state *st)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < st->a->n_tests; i++)
		rc = list_id(st, st->a->tests[i], false);
	if (rc == 0 && st->a->n_tests == 0)
		rc = list_entries(st);
	if (rc) {
		fprintf(stderr, "spyre-ci specs list: %s\n", err_last());
		return rc == ERR_INVAL ? CLI_USAGE : CLI_FAILED;
	}
	return st->a->json ? print_json(st) : print_text(st);
}

/* Without --upstream: the entries' names as tests, expanded without an upstream. */
static int list_plain(struct list_state *st)
{
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_set *set = NULL;
	struct spec_resolver *r = NULL;
	int out = CLI_USAGE;
	int rc = specs_load(&set, st->a, false, &diags);
	if (rc) {
		specs_print_diags(stderr, &diags, false);
		fprintf(stderr, "spyre-ci specs list: %s\n",
			rc == ERR_INVAL ? "the specs have errors (`spyre-ci specs lint` lists them)"
					: err_last());
		goto done;
	}
	if (testspecs_resolver_create(&r, set) != 0) {
		fprintf(stderr, "spyre-ci specs list: %s\n", err_last());
		goto done;
	}
	st->set = set;
	st->r = r;
	out = list_run(st);
	testspecs_cases_finish(&st->cases); /* they point into the set */
done:
	testspecs_resolver_destroy(r);
	testspecs_set_destroy(set);
	testspecs_diags_finish(&diags);
	return out;
}

/* ---- --upstream ---- */

/* A test of the revision that gets a line without --test: one an entry lists, or one that gets
 * cases (its file's unlisted_test_mode lets it run). */
static bool shown(const struct select_test *t)
{
	return t->listed || t->fate >= SELECT_ELIGIBLE;
}

static json_t *test_refusal(const struct select_test *t, const char *why)
{
	json_t *o = json_object();
	jx_set_str(o, "test", t->id);
	jx_set_str(o, "mode", testspecs_mode_name(t->mode));
	jx_set_str(o, "reason", why ? why : "");
	return o;
}

static json_t *absent_json(const char *name, const char *at)
{
	json_t *o = json_object();
	jx_set_str(o, "name", name);
	jx_set_str(o, "at", at);
	return o;
}

/* The expansion's tests into the list; its cases move to st->cases. */
static void take_expansion(struct list_state *st, struct funnel_expansion *x)
{
	const char *none = testspecs_rule_name(SPEC_RULE_NONE);
	bool asked = st->a->n_tests > 0;
	for (size_t i = 0; i < x->rep.n_tests; i++) {
		const struct select_test *t = &x->rep.tests[i];
		if (!asked && !shown(t))
			continue;
		st->n_tests++;
		if (t->fate < SELECT_ELIGIBLE)
			jx_append_new(st->skipped, test_refusal(t, t->spec_why));
		else if (strcmp(t->case_rule, none) == 0)
			jx_append_new(st->not_mappable, test_refusal(t, t->case_why));
	}
	for (size_t i = 0; i < x->n_absent; i++)
		jx_append_new(st->absent, absent_json(x->absent[i], "--test"));
	for (size_t i = 0; !asked && i < x->rep.n_drift; i++)
		if (x->rep.drift[i].kind == SELECT_DRIFT_STALE)
			jx_append_new(st->absent,
				      absent_json(x->rep.drift[i].test, x->rep.drift[i].where));
	st->cases = x->rep.cases; /* moved: st->cases owns them from here on */
	testspecs_cases_init(&x->rep.cases);
	st->x = x;
}

/* The --test ids, each once (a test named twice is listed once), into `ids`. */
static int unique_tests(struct list_state *st, const char **ids, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < st->a->n_tests; i++) {
		int rc = seen_before(st, st->a->tests[i]);
		if (rc < 0)
			return rc;
		if (rc == 0)
			ids[(*n)++] = st->a->tests[i];
	}
	return 0;
}

static int list_upstream(struct list_state *st)
{
	const struct specs_args *a = st->a;
	struct funnel_specs *specs = NULL;
	struct funnel_expansion x = { 0 };
	const char *ids[SPECS_ARGS_MAX];
	size_t n = 0;
	selector_report_init(&x.rep);
	int rc = specs_load_upstream(&specs, a);
	if (rc == 0)
		rc = unique_tests(st, ids, &n);
	if (rc == 0)
		rc = specs_expand_upstream(&x, a, specs, a->n_tests ? ids : NULL, n);
	int out;
	if (rc) {
		fprintf(stderr, "spyre-ci specs list: %s\n", err_last());
		out = rc == ERR_INVAL || rc == ERR_NOTFOUND ? CLI_USAGE : CLI_FAILED;
	} else {
		take_expansion(st, &x);
		out = a->json ? print_json(st) : print_text(st);
	}
	testspecs_cases_finish(&st->cases); /* they point into the specs */
	funnel_expansion_finish(&x);
	funnel_specs_destroy(specs);
	return out;
}

int specs_list_run(const struct specs_args *a)
{
	struct list_state st = { .a = a };
	testspecs_cases_init(&st.cases);
	st.not_mappable = json_array();
	st.patterns = json_array();
	st.skipped = json_array();
	st.absent = json_array();
	int out = CLI_FAILED;
	if (st.not_mappable && st.patterns && st.skipped && st.absent)
		out = a->upstream ? list_upstream(&st) : list_plain(&st);
	json_decref(st.not_mappable);
	json_decref(st.patterns);
	json_decref(st.skipped);
	json_decref(st.absent);
	for (size_t i = 0; i < st.n_seen; i++)
		free(st.seen[i]);
	free(st.seen);
	return out;
}
