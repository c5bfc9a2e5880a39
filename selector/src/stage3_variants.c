/* Stage 3, variant by variant: a candidate's variants from the head catalog (the @ops ops, the
 * @parametrize values, as PyTorch names them) are each resolved as the id `<test>_<variant>`,
 * exactly as written, so that --explain can say which entry decided each one (a variant entry,
 * the generic test's entry, or the file's unlisted mode). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "select_internal.h"
#include "selector/catalog.h"
#include "selector/select.h"

/* The variant's id: for an @ops variant of a device-generic test the instantiated method as the
 * runtime names it (`Class<SUFFIX>::test_x_<op>_<device>`, so that the resolver splits the op
 * off, checks it against the supported ops and a generic entry covers it); for any other
 * variant (a @parametrize value, whose suffix is no op) `Class::test_x_<variant>`, decided by
 * the variant rule. */
static char *variant_id(const char *id, const char *name, bool device_generic, const char *device)
{
	const char *m = strrchr(id, ':');
	if (!m || m == id || m[-1] != ':')
		return NULL;
	size_t n = strlen(id) + strlen(name) + 64;
	char *vid = malloc(n);
	if (!vid)
		return NULL;
	if (device_generic)
		snprintf(vid, n, "%.*sPRIVATEUSE1::%s_%s_%s", (int)(m - 1 - id), id, m + 1, name,
			 device ? device : "spyre");
	else
		snprintf(vid, n, "%s_%s", id, name);
	return vid;
}

static int decide_one(struct select_variant *v, const char *id, const char *name, bool dg,
		      const struct spec_resolver *r, const struct spec_resolve_opts *ropts,
		      struct spec_decision *d)
{
	char *vid = variant_id(id, name, dg, ropts->device);
	if (!vid || !(v->name = strdup(name))) {
		free(vid);
		return err_set(ERR_NOMEM, "stage 3: variants of '%s'", id);
	}
	struct spec_resolve_opts o = *ropts;
	o.exact = true; /* this variant as written */
	int rc = testspecs_resolver_resolve(r, vid, &o, d);
	free(vid);
	if (rc == ERR_INVAL)
		return 0; /* not an id the resolver parses: left not eligible */
	if (rc < 0)
		return err_prefix("stage 3: resolving a variant of '%s': ", id);
	v->eligible = d->eligible;
	v->mode = d->mode;
	if (!v->eligible && !(v->why = strdup(d->reason)))
		return err_set(ERR_NOMEM, "stage 3: variants of '%s'", id);
	if (d->entry) {
		char buf[1200];
		snprintf(buf, sizeof buf, "%s:%u", d->entry->loc.file ? d->entry->loc.file : "?",
			 (unsigned)d->entry->loc.line);
		if (!(v->entry = strdup(buf)))
			return err_set(ERR_NOMEM, "stage 3: variants of '%s'", id);
	}
	return 0;
}

int select__variants(struct select_test *t, const struct catalog *cat,
		     const struct spec_resolver *r, const struct spec_resolve_opts *ropts,
		     struct spec_decision *d)
{
	const struct catalog_test *ct = cat ? selector_catalog_test(cat, t->id) : NULL;
	if (!ct)
		return 0;
	struct catalog_variants cv;
	int rc = selector_catalog_variants(&cv, cat, ct);
	if (rc < 0)
		return rc;
	t->variants_open = cv.open;
	if (cv.why && !(t->variants_why = strdup(cv.why)))
		rc = err_set(ERR_NOMEM, "stage 3: variants of '%s'", t->id);
	t->n_variants_all = cv.n;
	size_t n = cv.n < SELECT_VARIANTS_SHOWN ? cv.n : SELECT_VARIANTS_SHOWN;
	if (rc == 0 && n && !(t->variants = calloc(n, sizeof *t->variants)))
		rc = err_set(ERR_NOMEM, "stage 3: variants of '%s'", t->id);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = decide_one(&t->variants[i], t->id, cv.names[i],
				ct->device_generic && ct->opset != CATALOG_OPSET_NONE, r, ropts, d);
		t->n_variants = i + 1;
	}
	selector_catalog_variants_finish(&cv);
	return rc;
}
