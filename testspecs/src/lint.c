/* Lint of a loaded set: the problems one file alone does not show. Checks: a test name listed
 * twice for the same path with different modes (torch-spyre keeps the last entry, which is
 * rarely what the author meant), an op excluded in edits that no supported_ops lists, dtype
 * includes that duplicate an exclude of the same entry, a structured op's dtypes outside
 * global.supported_dtypes. The resolver's regex check runs through hooks->check_name: this
 * module does not compile regular expressions. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/spec.h"

struct lint {
	const struct spec_set *set;
	struct spec_diag_list *diags;
	size_t errors;
	int rc;
};

static void note(struct lint *l, enum spec_severity sev, const struct spec_loc *loc,
		 const char *path, const char *fmt, const char *a, const char *b)
	__attribute__((format(printf, 5, 0)));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void note(struct lint *l, enum spec_severity sev, const struct spec_loc *loc,
		 const char *path, const char *fmt, const char *a, const char *b)
{
	if (l->rc)
		return;
	if (sev == SPEC_ERROR)
		l->errors++;
	l->rc = testspecs_diags_add(l->diags, sev, loc, path, fmt, a, b);
}
#pragma GCC diagnostic pop

static void doc_path(char *buf, size_t size, const struct spec_test *t, const char *tail)
{
	snprintf(buf, size, "test_suite_config.files[%u].tests[%u]%s", t->doc_file, t->doc_test,
		 tail);
}

static bool op_supported(const struct spec_set *s, const char *name)
{
	for (size_t i = 0; i < s->global.n_supported_ops; i++)
		if (s->global.supported_ops[i].name.s &&
		    strcmp(s->global.supported_ops[i].name.s, name) == 0)
			return true;
	return false;
}

static bool dtype_supported(const struct spec_set *s, enum spec_dtype d)
{
	for (size_t i = 0; i < s->global.supported_dtypes.n; i++)
		if (s->global.supported_dtypes.v[i].dtype == d)
			return true;
	return false;
}

static void lint_test(struct lint *l, const struct spec_file *f, size_t ti,
		      const struct spec_lint_hooks *hooks)
{
	const struct spec_test *t = &f->tests[ti];
	char path[160];
	for (size_t n = 0; n < t->names.n; n++) {
		snprintf(path, sizeof(path), "test_suite_config.files[%u].tests[%u].names[%zu]",
			 t->doc_file, t->doc_test, n);
		if (hooks && hooks->check_name)
			hooks->check_name(hooks->ctx, &t->names.v[n], path, l->diags);
		/* the same name earlier for this path with another explicit mode */
		for (size_t pj = 0; pj < ti; pj++) {
			const struct spec_test *p = &f->tests[pj];
			for (size_t m = 0; m < p->names.n; m++)
				if (strcmp(p->names.v[m].s, t->names.v[n].s) == 0 &&
				    p->mode != t->mode) {
					char msg[96];
					snprintf(msg, sizeof(msg), "%s:%u", p->names.v[m].loc.file,
						 p->names.v[m].loc.line);
					note(l, SPEC_WARNING, &t->names.v[n].loc, path,
					     "test '%s' listed again with another mode (first at "
					     "%s); the last entry wins",
					     t->names.v[n].s, msg);
				}
		}
	}
	if (l->set->global.has_supported_ops)
		for (size_t i = 0; i < t->edits.ops_exclude.n; i++) {
			const struct spec_named *x = &t->edits.ops_exclude.v[i];
			if (x->name.s && !op_supported(l->set, x->name.s)) {
				doc_path(path, sizeof(path), t, ".edits.ops.exclude");
				note(l, SPEC_WARNING, &x->loc, path,
				     "op '%s' is excluded but no supported_ops lists it%s", x->name.s,
				     "");
			}
		}
	for (size_t i = 0; i < t->edits.dtypes_include.n; i++)
		for (size_t j = 0; j < t->edits.dtypes_exclude.n; j++)
			if (t->edits.dtypes_include.v[i].dtype == t->edits.dtypes_exclude.v[j].dtype) {
				doc_path(path, sizeof(path), t, ".edits.dtypes");
				note(l, SPEC_WARNING, &t->edits.dtypes_exclude.v[j].loc, path,
				     "dtype '%s' is both included and excluded (exclude wins)%s",
				     testspecs_dtype_name(t->edits.dtypes_exclude.v[j].dtype), "");
			}
}

static void lint_global(struct lint *l)
{
	const struct spec_global *g = &l->set->global;
	if (!g->has_supported_dtypes || g->supported_dtypes.n == 0)
		return;
	for (size_t i = 0; i < g->n_supported_ops; i++)
		for (size_t j = 0; j < g->supported_ops[i].dtypes.n; j++) {
			const struct spec_dtype_item *d = &g->supported_ops[i].dtypes.v[j];
			if (!dtype_supported(l->set, d->dtype))
				note(l, SPEC_WARNING, &d->loc, "test_suite_config.global.supported_ops",
				     "op '%s' lists dtype '%s', which supported_dtypes does not",
				     g->supported_ops[i].name.s, testspecs_dtype_name(d->dtype));
		}
}

int testspecs_lint_hooks(const struct spec_set *set, const struct spec_lint_hooks *hooks,
			 struct spec_diag_list *diags)
{
	struct lint l = {.set = set, .diags = diags};
	size_t before = diags->n_errors;
	for (size_t f = 0; f < set->n_files && !l.rc; f++)
		for (size_t t = 0; t < set->files[f].n_tests && !l.rc; t++)
			lint_test(&l, &set->files[f], t, hooks);
	if (!l.rc)
		lint_global(&l);
	if (l.rc)
		return l.rc;
	return (int)(diags->n_errors - before);
}

int testspecs_lint(const struct spec_set *set, struct spec_diag_list *diags)
{
	return testspecs_lint_hooks(set, NULL, diags);
}
