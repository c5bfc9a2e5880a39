/* Shared by the catalog tests that read a fixture of ours under tests/fixtures/python/ whose
 * ground truth is the comment line written right above each test. */
#ifndef TESTS_UNIT_SELECTOR_TRUTH_COMMENT_H
#define TESTS_UNIT_SELECTOR_TRUTH_COMMENT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"

#define FIX SELECTOR_TEST_FIXTURES "/python/"

static inline char *read_fixture(const char *name)
{
	char path[512], *data = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, FIX "%s", name);
	cr_assert_eq(fs_read_file(&data, &len, path, PYTHON_FILE_MAX), 0, "%s", err_last());
	return data;
}

/* The ground truth: the comment line right above a test's first decorator or def. */
static inline void truth_of(const char *text, const char *test, char *out, size_t size)
{
	char key[128];
	snprintf(key, sizeof key, "def %s(", test);
	const char *def = strstr(text, key);
	cr_assert_not_null(def, "%s", test);
	const char *p = def;
	while (p > text) { /* back over the decorator lines to the comment */
		const char *line = p - 1;
		while (line > text && line[-1] != '\n')
			line--;
		const char *s = line;
		while (*s == ' ')
			s++;
		p = line;
		if (*s == '#') {
			const char *e = strchr(s, '\n');
			snprintf(out, size, "%.*s", (int)(e - s - 2), s + 2);
			return;
		}
	}
	cr_assert_fail("no ground truth for %s", test);
}

#endif
