/* Shared helpers of the testspecs unit tests: load a file or text into a fresh set with
 * diagnostics collected, and the fixture directory. */
#ifndef TESTS_UNIT_TESTSPECS_HELPERS_H
#define TESTS_UNIT_TESTSPECS_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spyre-emu/ops.h"
#include "testspecs/spec.h"

#define SPECS_DIR SPYRE_TEST_FIXTURES "/specs"

static const struct spec_roots test_roots = { "/src/pytorch", "/src/torch-spyre" };

struct loaded {
	struct spec_set *set;
	struct spec_diag_list diags;
	int rc;
};

static inline void loaded_text(struct loaded *l, const char *text, bool strict)
{
	testspecs_diags_init(&l->diags);
	if (testspecs_set_create(&l->set))
		abort();
	struct spec_load_opts o = { .strict = strict, .roots = &test_roots, .diags = &l->diags };
	l->rc = testspecs_load_text(l->set, "t.yaml", text, strlen(text), &o);
}

static inline void loaded_path(struct loaded *l, const char *path, bool strict)
{
	testspecs_diags_init(&l->diags);
	if (testspecs_set_create(&l->set))
		abort();
	struct spec_load_opts o = { .strict = strict, .roots = &test_roots, .diags = &l->diags };
	l->rc = testspecs_load_path(l->set, path, &o);
}

static inline void loaded_finish(struct loaded *l)
{
	testspecs_diags_finish(&l->diags);
	testspecs_set_destroy(l->set);
}

/* All diagnostics as text, for assertion messages. */
static inline const char *diags_text(const struct spec_diag_list *d)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < d->n && n < sizeof(buf) - 1; i++) {
		char line[1024];
		testspecs_diag_format(&d->v[i], line, sizeof(line));
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\n", line);
	}
	return buf;
}

/* How many default samples the emulator's op table lists for `emu` (';'-separated). */
static inline size_t samples_of(const char *emu)
{
	const struct spyre_op_info *op = spyre_op_find(emu);
	size_t n = 1;
	for (const char *p = op->samples; *p; p++)
		n += *p == ';';
	return n;
}

#endif
