/* Tests a file adds at import time (setattr in a loop inside a module-level generator called
 * with a test class): the names the scanner lists, and the catalog's ids for them. Fixture:
 * tests/fixtures/python/generated_tests.py, which mirrors PyTorch's shapes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "selector/scan.h"

static struct scan_file *scan_generated_fixture(void)
{
	const char *path = SELECTOR_TEST_FIXTURES "/python/generated_tests.py";
	char *data = NULL;
	size_t len = 0;
	cr_assert_eq(fs_read_file(&data, &len, path, PYTHON_FILE_MAX), 0, "%s", err_last());
	struct scan_file *f = NULL;
	cr_assert_eq(selector_scan(&f, "test/generated_tests.py", NULL, data, len), 0, "%s",
		     err_last());
	free(data);
	return f;
}

Test(scan_generated, names_from_literal_lists)
{
	struct scan_file *f = scan_generated_fixture();
	static const char *const want[] = {
		"test___add___not_supported",
		"test___radd___not_supported",
		"test___iadd___not_supported",
		"test_layout_dense",
		"test_layout_sparse",
		"test_count_one",
		"test_count_two",
		"test_count_three",
	};
	size_t nw = sizeof want / sizeof *want, named = 0, dynamic = 0;
	for (size_t i = 0; i < f->n_generated; i++) {
		const struct scan_generated *g = &f->generated[i];
		cr_expect_str_eq(g->class_name, "TestGen");
		if (!g->name) {
			dynamic++;
			cr_expect_str_eq(g->generator, "add_dynamic_tests");
			continue;
		}
		cr_assert_lt(named, nw, "extra %s", g->name);
		cr_expect_str_eq(g->name, want[named], "#%zu", named);
		named++;
	}
	cr_expect_eq(named, nw);
	cr_expect_eq(dynamic, 1, "op_db is not static: one entry says the names come at run time");
	scan_file_destroy(f);
}

Test(scan_generated, no_setattr_no_cost)
{
	struct scan_file *f = NULL;
	static const char text[] = "def gen(cls):\n    pass\n\ngen(TestX)\n";
	cr_assert_eq(selector_scan(&f, "t.py", NULL, text, sizeof text - 1), 0);
	cr_expect_eq(f->n_generated, 0);
	scan_file_destroy(f);
}

/* Broken shapes never crash and list nothing they cannot name. */
Test(scan_generated, broken_shapes)
{
	static const char *const texts[] = {
		"def g(cls):\n    for x in [\"a\", b]:\n        setattr(cls, 'test_' + x, "
		"1)\ng(T)\n",
		"def g(cls):\n    for x in L:\n        setattr(cls, f\"test_{x}\"\ng(T)\nL = "
		"[\"a\"\n",
		"def g(cls):\n    setattr(cls, \"test_x\", 1)\ng(T)\n",
		"g(T)\nsetattr(\n",
	};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		struct scan_file *f = NULL;
		cr_assert_eq(selector_scan(&f, "t.py", NULL, texts[i], strlen(texts[i])), 0);
		for (size_t k = 0; k < f->n_generated; k++)
			cr_expect_null(f->generated[k].name, "text %zu: %s", i,
				       f->generated[k].name);
		scan_file_destroy(f);
	}
}
