/* What the specs alone tell of an upstream test (cases.h: testspecs_case_test_from_specs), for a
 * caller that has not read the test's source: the nightly run over every entry, `specs list`
 * and `specs explain` without an upstream checkout. A caller with a catalog starts here too and
 * then overrides these guesses with what the scanner found (selector_case_test_init). */
#include <string.h>

#include "testspecs/cases.h"
#include "testspecs/resolve.h"

static bool has_ops_tag(const struct spec_test *entry)
{
	for (size_t i = 0; entry && i < entry->tags.n; i++)
		if (strncmp(entry->tags.v[i].s, "ops__", 5) == 0)
			return true;
	return false;
}

/* test_ops.py: every test of TestCommon iterates the op database. */
static bool in_test_ops(const struct spec_file *file)
{
	if (!file)
		return false;
	const char *base = strrchr(file->path.s, '/');
	return strcmp(base ? base + 1 : file->path.s, "test_ops.py") == 0;
}

void testspecs_case_test_from_specs(struct spec_case_test *t, const struct spec_decision *d)
{
	t->opinfo = d && (has_ops_tag(d->entry) || in_test_ops(d->file));
	t->family = d && d->file ? testspecs_family_for_path(d->file->path.s) : SPEC_FAMILY_ANY;
}
