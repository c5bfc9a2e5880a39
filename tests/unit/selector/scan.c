/* Unit tests of the Python scanner: one check per hard case of the corpus in
 * tests/fixtures/python/ (each file exercises one), golden checks of the PyTorch-style test file,
 * op database and decompositions file written for these tests, the hashes' normalization, and
 * the limits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/log.h"
#include "selector/scan.h"

static struct scan_file *scan_fixture(const char *name, const char *module)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/python/%s", SELECTOR_TEST_FIXTURES, name);
	char *data = NULL;
	size_t len = 0;
	cr_assert_eq(fs_read_file(&data, &len, path, PYTHON_FILE_MAX), 0, "%s", err_last());
	struct scan_file *f = NULL;
	log_set_level(LOG_ERROR);
	cr_assert_eq(selector_scan(&f, name, module, data, len), 0, "%s", err_last());
	free(data);
	return f;
}

static const struct scan_function *fn(const struct scan_file *f, const char *qualname)
{
	for (size_t k = 0; k < f->n_functions; k++)
		if (strcmp(f->functions[k].qualname, qualname) == 0)
			return &f->functions[k];
	cr_assert_fail("no function %s", qualname);
	return NULL;
}

static void range(const struct scan_file *f, const char *qualname, uint32_t first, uint32_t last)
{
	const struct scan_function *x = fn(f, qualname);
	cr_assert_eq(x->first_line, first, "%s starts at %u", qualname, x->first_line);
	cr_assert_eq(x->last_line, last, "%s ends at %u", qualname, x->last_line);
}

static bool uses(const struct scan_function *x, const char *name)
{
	for (size_t k = 0; k < x->n_uses; k++)
		if (strcmp(x->uses[k], name) == 0)
			return true;
	return false;
}

static const char *names(const struct scan_file *f)
{
	static char buf[1024];
	buf[0] = '\0';
	for (size_t k = 0; k < f->n_functions; k++) {
		strncat(buf, f->functions[k].qualname, sizeof(buf) - strlen(buf) - 2);
		strncat(buf, " ", sizeof(buf) - strlen(buf) - 1);
	}
	return buf;
}

#define EXPECT_NAMES(f, want) cr_assert_str_eq(names(f), want)

Test(scan_corpus, triple_quotes)
{
	struct scan_file *f = scan_fixture("01_triple_quotes.py", NULL);
	EXPECT_NAMES(f, "real ");
	range(f, "real", 6, 9);
	cr_assert_eq(f->n_classes, 0);
	cr_assert_eq(f->n_warnings, 0);
	scan_file_destroy(f);
}

Test(scan_corpus, string_prefixes)
{
	struct scan_file *f = scan_fixture("02_string_prefixes.py", NULL);
	EXPECT_NAMES(f, "real ");
	range(f, "real", 9, 9);
	scan_file_destroy(f);
}

Test(scan_corpus, fstring_nested)
{
	struct scan_file *f = scan_fixture("03_fstring_nested.py", NULL);
	EXPECT_NAMES(f, "real after ");
	range(f, "real", 1, 6);
	range(f, "after", 7, 7);
	cr_assert_eq(f->n_warnings, 0);
	scan_file_destroy(f);
}

Test(scan_corpus, continuations)
{
	struct scan_file *f = scan_fixture("04_continuations.py", NULL);
	cr_assert_eq(f->n_imports, 2);
	cr_assert_str_eq(f->imports[1].module, "sys");
	range(f, "f", 3, 6);
	range(f, "g", 7, 7);
	scan_file_destroy(f);
}

Test(scan_corpus, comments)
{
	struct scan_file *f = scan_fixture("05_comments.py", NULL);
	EXPECT_NAMES(f, "f g ");
	range(f, "f", 2, 4);
	cr_assert_eq(f->n_warnings, 0);
	scan_file_destroy(f);
}

Test(scan_corpus, brackets_span_lines)
{
	struct scan_file *f = scan_fixture("06_brackets_span.py", NULL);
	EXPECT_NAMES(f, "f g ");
	range(f, "f", 1, 7);
	scan_file_destroy(f);
}

Test(scan_corpus, multiline_decorators)
{
	struct scan_file *f = scan_fixture("07_multiline_decorators.py", NULL);
	const struct scan_function *t = fn(f, "T.test_a");
	cr_assert_eq(t->deco_line, 4);
	cr_assert_eq(t->first_line, 12);
	cr_assert_eq(t->n_decorators, 2);
	cr_assert_str_eq(t->decorators[0].name, "dtypes");
	cr_assert_eq(t->decorators[0].argc, 2);
	cr_assert_str_eq(t->decorators[0].argv[1].value, "torch.float32");
	cr_assert_eq(t->decorators[1].argv[0].kind, SCAN_ARG_OTHER);
	cr_assert(strstr(t->decorators[1].argv[0].text, "op_db") != NULL);
	scan_file_destroy(f);
}

Test(scan_corpus, tabs)
{
	struct scan_file *f = scan_fixture("08_tabs.py", NULL);
	EXPECT_NAMES(f, "T.a T.b top ");
	range(f, "T.b", 4, 7);
	cr_assert_eq(f->classes[0].last_line, 7);
	scan_file_destroy(f);
}

Test(scan_corpus, mixed_indentation)
{
	struct scan_file *f = scan_fixture("09_mixed_indent.py", NULL);
	EXPECT_NAMES(f, "T.a T.b ");
	range(f, "T.a", 2, 3);
	cr_assert_eq(fn(f, "T.b")->class_index, 0);
	scan_file_destroy(f);
}

Test(scan_corpus, crlf)
{
	struct scan_file *f = scan_fixture("10_crlf.py", NULL);
	range(f, "f", 2, 3);
	range(f, "g", 5, 8);
	cr_assert(uses(fn(f, "f"), "torch.mm"));
	scan_file_destroy(f);
}

Test(scan_corpus, cr_only)
{
	struct scan_file *f = scan_fixture("11_cr_only.py", NULL);
	range(f, "f", 1, 2);
	range(f, "g", 3, 4);
	scan_file_destroy(f);
}

Test(scan_corpus, bom)
{
	struct scan_file *f = scan_fixture("12_bom.py", NULL);
	cr_assert_eq(f->n_imports, 1);
	cr_assert_str_eq(f->imports[0].local, "torch");
	cr_assert(uses(fn(f, "f"), "torch.add"));
	scan_file_destroy(f);
}

Test(scan_corpus, lambda)
{
	struct scan_file *f = scan_fixture("13_lambda.py", NULL);
	EXPECT_NAMES(f, "g ");
	range(f, "g", 2, 4);
	cr_assert_eq(f->n_classes, 1);
	scan_file_destroy(f);
}

Test(scan_corpus, walrus)
{
	struct scan_file *f = scan_fixture("14_walrus.py", NULL);
	range(f, "f", 1, 5);
	range(f, "g", 6, 6);
	scan_file_destroy(f);
}

Test(scan_corpus, match_soft_keyword)
{
	struct scan_file *f = scan_fixture("15_match.py", NULL);
	range(f, "f", 3, 10);
	cr_assert(!uses(fn(f, "f"), "match"), "the match statement is no use of `match`");
	cr_assert(uses(fn(f, "g"), "match"), "the variable `match` is");
	scan_file_destroy(f);
}

Test(scan_corpus, annotations_and_type_params)
{
	struct scan_file *f = scan_fixture("16_annotations.py", NULL);
	range(f, "f", 3, 5);
	range(f, "g", 6, 7);
	cr_assert_eq(f->n_classes, 1);
	cr_assert_eq(f->classes[0].n_bases, 2);
	cr_assert_str_eq(f->classes[0].bases[0].text, "Base[T]");
	cr_assert_str_eq(f->classes[0].bases[1].keyword, "metaclass");
	scan_file_destroy(f);
}

Test(scan_corpus, semicolons)
{
	struct scan_file *f = scan_fixture("17_semicolons.py", NULL);
	cr_assert_eq(f->n_imports, 3);
	cr_assert_str_eq(f->imports[1].local, "system");
	cr_assert_str_eq(f->imports[2].target, "a.b");
	cr_assert_eq(f->n_instantiates, 1);
	cr_assert_str_eq(f->instantiates[0].class_name, "C");
	range(f, "f", 2, 2);
	scan_file_destroy(f);
}

Test(scan_corpus, one_line_classes)
{
	struct scan_file *f = scan_fixture("18_oneline_class.py", NULL);
	cr_assert_eq(f->n_classes, 4);
	cr_assert_str_eq(f->classes[3].qualname, "C.D");
	cr_assert_eq(f->classes[3].parent_class, 2);
	cr_assert_eq(f->classes[2].last_line, 5);
	cr_assert_eq(fn(f, "C.m")->class_index, 2);
	cr_assert_eq(fn(f, "z")->class_index, -1);
	scan_file_destroy(f);
}

Test(scan_corpus, async)
{
	struct scan_file *f = scan_fixture("19_async.py", NULL);
	cr_assert(fn(f, "main")->is_async);
	cr_assert(fn(f, "S.method")->is_async);
	range(f, "main", 2, 6);
	cr_assert(uses(fn(f, "main"), "asyncio.sleep"));
	scan_file_destroy(f);
}

Test(scan_corpus, relative_imports)
{
	struct scan_file *f = scan_fixture("20_relative_imports.py", "pkg.sub.mod");
	cr_assert_eq(f->n_imports, 9);
	cr_assert_str_eq(f->imports[0].target, "pkg.sub.sibling");
	cr_assert_str_eq(f->imports[1].target, "pkg.parent_mod");
	cr_assert_str_eq(f->imports[2].target, "pkg.pkg.mod.thing");
	cr_assert_eq(f->imports[2].level, 2);
	cr_assert_str_eq(f->imports[3].module, "....toofar", "too many dots stay relative");
	cr_assert_eq(f->n_warnings, 1);
	cr_assert_str_eq(f->imports[4].local, "a");
	cr_assert_str_eq(f->imports[5].target, "a.b");
	cr_assert_str_eq(f->imports[6].local, "d");
	cr_assert_str_eq(f->imports[7].name, "e");
	cr_assert_str_eq(f->imports[8].local, "*");
	const struct scan_function *x = fn(f, "f");
	cr_assert(uses(x, "pkg.pkg.mod.thing.run"));
	cr_assert(uses(x, "a.b.x"));
	cr_assert(uses(x, "a.b.c.y"));
	cr_assert(uses(x, "a.b.c.w"));
	scan_file_destroy(f);
}

Test(scan_corpus, relative_import_in_package)
{
	struct scan_file *f = NULL;
	const char *text = "from . import a\nfrom .b import c\n";
	cr_assert_eq(selector_scan(&f, "pkg/sub/__init__.py", "pkg.sub", text, strlen(text)), 0);
	cr_assert_str_eq(f->imports[0].target, "pkg.sub.a");
	cr_assert_str_eq(f->imports[1].target, "pkg.sub.b.c");
	scan_file_destroy(f);
}

Test(scan_corpus, unclosed_bracket_resyncs)
{
	struct scan_file *f = scan_fixture("21_unclosed_bracket.py", NULL);
	EXPECT_NAMES(f, "f g C.m ");
	range(f, "f", 1, 2);
	range(f, "C.m", 6, 7);
	cr_assert_eq(f->n_warnings, 1);
	cr_assert_eq(f->warnings[0].line, 2);
	scan_file_destroy(f);
}

Test(scan_corpus, unterminated_strings)
{
	struct scan_file *f = scan_fixture("22_unterminated_string.py", NULL);
	EXPECT_NAMES(f, "f g ");
	range(f, "f", 1, 3);
	range(f, "g", 4, 6);
	cr_assert_eq(f->n_warnings, 2);
	cr_assert_eq(f->warnings[0].line, 2);
	cr_assert_eq(f->warnings[1].line, 5);
	scan_file_destroy(f);
}

Test(scan_corpus, stray_closers)
{
	struct scan_file *f = scan_fixture("23_stray_closers.py", NULL);
	EXPECT_NAMES(f, "f g h ");
	range(f, "g", 3, 5);
	cr_assert_eq(f->n_warnings, 2);
	scan_file_destroy(f);
}

Test(scan_corpus, nested_functions)
{
	struct scan_file *f = scan_fixture("24_nested_functions.py", NULL);
	EXPECT_NAMES(f, "outer outer.inner outer.inner.innermost outer.Local.meth after ");
	range(f, "outer", 2, 10);
	cr_assert_eq(fn(f, "outer.inner.innermost")->parent_function, 1);
	cr_assert(uses(fn(f, "outer"), "torch.sin"), "an outer body holds the inner ones");
	cr_assert(!uses(fn(f, "outer.inner"), "torch.cos"));
	cr_assert_eq(f->classes[0].parent_function, 0);
	scan_file_destroy(f);
}

Test(scan_corpus, uses_through_aliases)
{
	struct scan_file *f = scan_fixture("25_uses_aliases.py", NULL);
	const struct scan_function *x = fn(f, "f");
	static const char *const want[] = {
		".add",
		".assertEqual",
		".contiguous",
		".join",
		".relu",
		".t",
		"helper",
		"torch.mm",
		"torch.nn.functional.gelu",
		"torch.nn.functional.softmax",
		"torch.ops.aten.add.Tensor",
	};
	cr_assert_eq(x->n_uses, sizeof(want) / sizeof(want[0]));
	for (size_t k = 0; k < x->n_uses; k++)
		cr_assert_str_eq(x->uses[k], want[k]);
	scan_file_destroy(f);
}

Test(scan_corpus, decorator_forms)
{
	struct scan_file *f = scan_fixture("26_decorators_forms.py", NULL);
	const struct scan_function *x = fn(f, "test_many");
	cr_assert_eq(x->n_decorators, 6);
	cr_assert_eq(x->deco_line, 2);
	cr_assert_str_eq(x->decorators[0].name, "unittest.skipIf");
	cr_assert_str_eq(x->decorators[0].argv[1].value, "reason");
	cr_assert(!x->decorators[2].called);
	cr_assert_str_eq(x->decorators[3].argv[2].keyword, "name_fn");
	cr_assert_str_eq(x->decorators[5].text, "deco[0]");
	cr_assert_eq(f->classes[0].n_decorators, 1);
	scan_file_destroy(f);
}

Test(scan_corpus, numbers_eof_formfeed_docstrings)
{
	struct scan_file *f = scan_fixture("27_numbers.py", NULL);
	range(f, "f", 2, 3);
	scan_file_destroy(f);
	f = scan_fixture("28_eof_no_newline.py", NULL);
	range(f, "C.m", 4, 5);
	cr_assert_eq(f->n_lines, 5);
	scan_file_destroy(f);
	f = scan_fixture("29_formfeed.py", NULL);
	range(f, "g", 4, 5);
	scan_file_destroy(f);
	f = scan_fixture("30_docstrings.py", NULL);
	EXPECT_NAMES(f, "f C.m ");
	range(f, "C.m", 7, 9);
	scan_file_destroy(f);
}

Test(scan_corpus, not_utf8_skipped)
{
	struct scan_file *f = scan_fixture("31_not_utf8.py", NULL);
	cr_assert(f->skipped);
	cr_assert_eq(f->n_functions, 0);
	cr_assert(strstr(f->warnings[0].message, "byte offset 21") != NULL);
	scan_file_destroy(f);
	f = scan_fixture("32_latin1_comment.py", NULL);
	cr_assert(f->skipped);
	cr_assert(strstr(f->warnings[0].message, "byte offset 5") != NULL);
	scan_file_destroy(f);
}

Test(scan_corpus, decorator_expressions)
{
	struct scan_file *f = scan_fixture("33_decorator_expressions.py", NULL);
	cr_assert_str_eq(fn(f, "lam")->decorators[0].name, "(lambda fn: fn)");
	cr_assert_str_eq(fn(f, "conditional")->decorators[0].name, "plain if flag else other",
			 "a conditional expression is not the decorator `plain`");
	cr_assert_str_eq(fn(f, "either")->decorators[0].name, "(first or second)");
	cr_assert_str_eq(fn(f, "chained")->decorators[0].name, "table");
	cr_assert_str_eq(fn(f, "spaced_out")->decorators[0].name, "spaced.out");
	cr_assert(fn(f, "spaced_out")->decorators[0].called);
	cr_assert_eq(f->n_warnings, 0);
	scan_file_destroy(f);
	f = scan_fixture("34_class_arguments.py", NULL);
	cr_assert_eq(f->classes[0].n_bases, 4);
	cr_assert_str_eq(f->classes[0].bases[1].keyword, "flavour");
	cr_assert_str_eq(f->classes[0].bases[2].text, "*extra_bases");
	range(f, "Called.method", 6, 7);
	scan_file_destroy(f);
}

Test(scan_corpus, opinfo_names)
{
	struct scan_file *f = scan_fixture("35_opinfo_names.py", NULL);
	static const char *const want[] = { "in_decorator", "in_default", "by_keyword", "raw.name",
					    "dotted" };
	cr_assert_eq(f->n_opinfos, 5, "no entry for f-strings, bytes or concatenations");
	for (size_t k = 0; k < 5; k++)
		cr_assert_str_eq(f->opinfos[k].name, want[k]);
	cr_assert_eq(selector_scan_opinfo_at(f, 11), -1, "the f-string entry is no entry");
	cr_assert_str_eq(f->opinfos[4].aten_name, "total");
	cr_assert_eq(f->opinfos[4].last_line, 16);
	scan_file_destroy(f);
}

/* A sample's arguments (args=(1,), dim=(0,), {'dim': (0,)}) are no tensor shapes, a repeated
 * tuple (2 * (S,), (S,) * 3) is the shape it builds, a product by an unknown factor none. */
Test(scan_corpus, opinfo_sample_arguments)
{
	struct scan_file *f = scan_fixture("39_opinfo_sample_args.py", NULL);
	cr_assert_eq(f->n_opinfos, 2);
	cr_assert_str_eq(f->opinfos[0].samples,
			 "(5, 5);(10, 2);(4, 0);(5, 5, 5);();(5, 1, 5, 1, 5, "
			 "1);(6, 7);(5,);(10, 1)");
	cr_assert_str_eq(f->opinfos[1].samples, "(5, 5)");
	scan_file_destroy(f);
}
