/* The funnel's specs (funnel.h): the spec set, its resolver and stale drift's memo, made and
 * dropped together because each is valid only with the others. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/err.h"
#include "common/limits.h"
#include "funnel/funnel.h"
#include "testspecs/resolve.h"

void funnel_specs_destroy(struct funnel_specs *s)
{
	if (!s)
		return;
	selector_drift_memo_destroy(s->memo);
	testspecs_resolver_destroy(s->resolver);
	testspecs_set_destroy(s->set);
	free(s);
}

static int load_paths(struct funnel_specs *s, const struct funnel_specs_opts *o)
{
	struct spec_roots roots = { o->torch_root, o->device_root };
	struct spec_load_opts lo = { .roots = o->torch_root || o->device_root ? &roots : NULL,
				     .diags = o->diags };
	const char *what = o->what ? o->what : "specs";
	if (o->n_paths == 0 && o->default_repo) {
		char dflt[PATH_TEXT_MAX];
		snprintf(dflt, sizeof dflt, "%s/spyre/specs", o->default_repo);
		if (access(dflt, R_OK) != 0)
			return err_set(ERR_NOTFOUND, "no %s given and no %s", what, dflt);
		return testspecs_load_path(s->set, dflt, &lo);
	}
	for (size_t i = 0; i < o->n_paths; i++)
		if (testspecs_load_path(s->set, o->paths[i], &lo) < 0)
			return err_prefix("%s %s: ", what, o->paths[i]);
	return 0;
}

int funnel_specs_load(struct funnel_specs **out, const struct funnel_specs_opts *o)
{
	*out = NULL;
	struct funnel_specs *s = calloc(1, sizeof *s);
	if (!s)
		return err_set(ERR_NOMEM, "specs: out of memory");
	int rc = testspecs_set_create(&s->set);
	if (rc == 0)
		rc = load_paths(s, o);
	if (rc == 0)
		rc = testspecs_resolver_create(&s->resolver, s->set);
	if (rc == 0)
		rc = selector_drift_memo_create(&s->memo, s->set, s->resolver);
	if (rc < 0) {
		funnel_specs_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}
