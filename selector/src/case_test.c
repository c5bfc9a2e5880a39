/* The one place where what is known of an upstream test becomes kernel-case expansion's input
 * (select.h: selector_case_test_init). Stage 3 expands every eligible candidate through it, and
 * `specs explain` through the same call, so a test gets the same cases wherever it is asked
 * about. */
#include <string.h>

#include "catalog_internal.h"
#include "common/err.h"
#include "selector/catalog.h"
#include "selector/scan.h"
#include "selector/select.h"

/* The body of a catalog test as the scanner saw it, or NULL. */
static const struct scan_function *body_of(const struct catalog *cat, const struct catalog_test *t)
{
	const struct catalog_file *cf = &cat->files[t->file];
	if (!cf->blob || !cf->blob->scan || t->function < 0 ||
	    (size_t)t->function >= cf->blob->scan->n_functions)
		return NULL;
	return &cf->blob->scan->functions[t->function];
}

int selector_case_test_init(struct selector_case_test *x, const char *id, const struct catalog *cat,
			    const struct select_candidate *c, const struct spec_decision *d,
			    const struct spec_resolve_opts *ropts)
{
	memset(x, 0, sizeof *x);
	int rc = selector_opdb_for(&x->db, cat, id);
	if (rc < 0)
		return err_prefix("kernel cases of '%s': ", id);
	struct spec_case_test *t = &x->ct;
	t->test_id = id;
	if (ropts) {
		t->tier = ropts->tier;
		t->device = ropts->device;
		t->is_test = ropts->is_test;
		t->is_test_ctx = ropts->is_test_ctx;
	}
	testspecs_case_test_from_specs(t, d);
	if (x->db.test) {
		const struct scan_function *fn = body_of(cat, x->db.test);
		t->opinfo = x->db.test->opset != CATALOG_OPSET_NONE;
		t->body_ops = fn ? fn->uses : NULL;
		t->n_body_ops = fn ? fn->n_uses : 0;
		t->no_case_why = selector_opdb_no_case_why(&x->db);
		if (fn)
			catalog__test_tolerances(fn, t->atol, t->rtol);
		t->list_ops = (const char *const *)x->db.list_;
		t->n_list_ops = x->db.n_list_;
	} else if (c) {
		t->opinfo = c->opinfo;
		t->body_ops = c->body_ops;
		t->n_body_ops = c->n_body_ops;
	}
	t->source_unread = !cat && !c;
	if (cat) {
		t->opinfo_of = selector_opinfo_of;
		t->runs_op = selector_runs_op;
		t->opinfo_ctx = &x->db;
	}
	return 0;
}

void selector_case_test_finish(struct selector_case_test *x)
{
	selector_opdb_finish(&x->db);
	memset(x, 0, sizeof *x);
}
