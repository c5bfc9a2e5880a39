/* The report's writers: text (the funnel on one line, then the scheduled tests with their
 * reasons, the drift and the shard plan), JSON (`stages`, `tests`, `drift`, `fallback`,
 * `changed_files` (stage 1's count of files), `shards` when planned, `escaped` when a string had
 * bytes that are not UTF-8) and `--explain` (every
 * stage's decision for one test). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "changes_internal.h"
#include "common/err.h"
#include "common/jsonx.h"
#include "select_internal.h"
#include "testspecs/cases.h"

const char *selector_fmt_count(size_t n, char *buf, size_t size)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%zu", n);
	size_t o = 0;
	for (int i = 0; i < len && o + 1 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0 && o + 2 < size)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (size)
		buf[o < size ? o : size - 1] = '\0';
	return buf;
}

static void fmt_seconds(double s, char *buf, size_t size)
{
	snprintf(buf, size, s >= 10 ? "%.0f s" : "%.1f s", s);
}

static const char *drift_kind(enum select_drift_kind k)
{
	return k == SELECT_DRIFT_UNLISTED ? "unlisted" : "stale";
}

static void write_funnel(const struct select_report *rep, FILE *out)
{
	char a[32], b[32], c[32], d[32], s[32];
	fmt_seconds(rep->est_seconds, s, sizeof s);
	fprintf(out, "%s tests -> %s impacted -> %s eligible -> %s scheduled (est. %s)\n",
		selector_fmt_count(rep->stages[0].in, a, sizeof a),
		selector_fmt_count(rep->stages[1].out, b, sizeof b),
		selector_fmt_count(rep->stages[2].out, c, sizeof c),
		selector_fmt_count(rep->stages[3].out, d, sizeof d), s);
}

/* Under the fallback, the fallback's reason is said once above the tests, not on each. */
static void write_test(const struct select_test *t, bool fallback, FILE *out)
{
	fprintf(out, "%5zu. %s  score %.2f  %zu kernel case%s", t->rank, t->id, t->score,
		t->kernel_cases, t->kernel_cases == 1 ? "" : "s");
	if (t->shard >= 0)
		fprintf(out, "  shard %d", t->shard);
	fputc('\n', out);
	for (size_t i = 0; i < t->n_reasons; i++)
		if (!fallback || strcmp(t->reasons[i].kind, "fallback") != 0)
			fprintf(out, "         %s (%.2f): %s\n", t->reasons[i].kind,
				t->reasons[i].score, t->reasons[i].text);
	if (t->smoke)
		fprintf(out, "         smoke: always run\n");
}

int selector_report_write_text(const struct select_report *rep, FILE *out)
{
	write_funnel(rep, out);
	if (rep->fallback)
		fprintf(out, "fallback: every eligible test (%s)\n", rep->fallback_reason);
	for (size_t i = 0; i < rep->n_tests; i++)
		if (rep->tests[i].fate == SELECT_SCHEDULED)
			write_test(&rep->tests[i], rep->fallback, out);
	for (size_t i = 0; i < rep->n_drift; i++) {
		const struct select_drift *d = &rep->drift[i];
		if (d->kind == SELECT_DRIFT_UNLISTED)
			fprintf(out, "drift: new test %s falls under unlisted mode %s (%s)\n",
				d->test, testspecs_mode_name(d->mode), d->where);
		else
			fprintf(out, "drift: spec entry %s matches no upstream test (%s)\n",
				d->test, d->where);
	}
	for (size_t i = 0; i < rep->n_shards; i++) {
		char s[32];
		fmt_seconds(rep->shards[i].seconds, s, sizeof s);
		fprintf(out, "shard %zu: %zu tests, est. %s\n", i, rep->shards[i].n_tests, s);
	}
	return ferror(out) ? err_set(ERR_IO, "writing the report") : 0;
}

/* ---- JSON ---- */

/* Scores to 1e-6, so that goldens do not carry binary noise. */
static json_t *num(double v)
{
	return json_real(round(v * 1e6) / 1e6);
}

/* A string of the report (a test id, a path, a reason) as JSON: JSON strings are UTF-8, so one
 * with other bytes (a path git allows) is written as its printable text, bytes that are not
 * UTF-8 as \ooo escapes, and the document says so ("escaped": true). NULL: null. */
static json_t *text(const char *s, bool *escaped)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *t = changes__escape(s, strlen(s));
	j = t ? json_string(t) : NULL;
	free(t);
	*escaped = *escaped || j;
	return j;
}

static int add_stages(json_t *root, const struct select_report *rep)
{
	json_t *a = json_array();
	if (jx_set_new(root, "stages", a) < 0)
		return ERR_NOMEM;
	for (int i = 0; i < SELECT_STAGES; i++) {
		json_t *o = json_object();
		if (jx_append_new(a, o) < 0 || jx_set_str(o, "name", rep->stages[i].name) < 0 ||
		    jx_set_int(o, "in", (int64_t)rep->stages[i].in) < 0 ||
		    jx_set_int(o, "out", (int64_t)rep->stages[i].out) < 0)
			return ERR_NOMEM;
	}
	return 0;
}

/* "case_sources": {"OpInfo sample_inputs_func shapes": 12, ...} when any case has one. */
static int add_sources(json_t *o, const struct select_test *t)
{
	json_t *src = NULL;
	for (int s = 1; s < SPEC_SOURCE_COUNT; s++) {
		if (!t->kernel_by_source[s])
			continue;
		if (!src && jx_set_new(o, "case_sources", src = json_object()) < 0)
			return ERR_NOMEM;
		if (jx_set_int(src, testspecs_source_name((enum spec_case_source)s),
			       (int64_t)t->kernel_by_source[s]) < 0)
			return ERR_NOMEM;
	}
	return 0;
}

static int add_test(json_t *a, const struct select_test *t, bool *esc)
{
	json_t *o = json_object(), *rs = json_array();
	if (jx_append_new(a, o) < 0 || jx_set_new(o, "reasons", rs) < 0 ||
	    jx_set_new(o, "id", text(t->id, esc)) < 0 ||
	    jx_set_new(o, "score", num(t->score)) < 0 ||
	    jx_set_int(o, "kernel_cases", (int64_t)t->kernel_cases) < 0)
		return ERR_NOMEM;
	if (add_sources(o, t) < 0)
		return ERR_NOMEM;
	for (size_t i = 0; i < t->n_reasons; i++) {
		json_t *r = json_object();
		if (jx_append_new(rs, r) < 0 || jx_set_str(r, "kind", t->reasons[i].kind) < 0 ||
		    jx_set_new(r, "score", num(t->reasons[i].score)) < 0 ||
		    jx_set_new(r, "text", text(t->reasons[i].text, esc)) < 0)
			return ERR_NOMEM;
	}
	return 0;
}

static int add_drift(json_t *root, const struct select_report *rep, bool *esc)
{
	json_t *a = json_array();
	if (jx_set_new(root, "drift", a) < 0)
		return ERR_NOMEM;
	for (size_t i = 0; i < rep->n_drift; i++) {
		const struct select_drift *d = &rep->drift[i];
		json_t *o = json_object();
		if (jx_append_new(a, o) < 0 || jx_set_str(o, "kind", drift_kind(d->kind)) < 0 ||
		    jx_set_new(o, "test", text(d->test, esc)) < 0 ||
		    jx_set_new(o, "where", text(d->where, esc)) < 0 ||
		    jx_set_str(o, "mode",
			       d->kind == SELECT_DRIFT_UNLISTED ? testspecs_mode_name(d->mode)
								: NULL) < 0)
			return ERR_NOMEM;
	}
	return 0;
}

static int add_shards(json_t *root, const struct select_report *rep, bool *esc)
{
	json_t *a = json_array();
	if (jx_set_new(root, "shards", a) < 0)
		return ERR_NOMEM;
	for (size_t w = 0; w < rep->n_shards; w++) {
		json_t *o = json_object(), *ids = json_array();
		if (jx_append_new(a, o) < 0 || jx_set_new(o, "tests", ids) < 0 ||
		    jx_set_new(o, "seconds", num(rep->shards[w].seconds)) < 0)
			return ERR_NOMEM;
		for (size_t i = 0; i < rep->n_tests; i++)
			if (rep->tests[i].shard == (int)w &&
			    jx_append_new(ids, text(rep->tests[i].id, esc)) < 0)
				return ERR_NOMEM;
	}
	return 0;
}

static int build_json(json_t *root, const struct select_report *rep)
{
	bool esc = false;
	json_t *tests = json_array(), *fb = json_object();
	if (add_stages(root, rep) < 0 || jx_set_new(root, "tests", tests) < 0 ||
	    jx_set_new(root, "fallback", fb) < 0 || add_drift(root, rep, &esc) < 0)
		return ERR_NOMEM;
	if (jx_set_bool(fb, "active", rep->fallback) < 0 ||
	    jx_set_new(fb, "reason", text(rep->fallback ? rep->fallback_reason : NULL, &esc)) < 0)
		return ERR_NOMEM;
	for (size_t i = 0; i < rep->n_tests; i++)
		if (rep->tests[i].fate == SELECT_SCHEDULED &&
		    add_test(tests, &rep->tests[i], &esc) < 0)
			return ERR_NOMEM;
	if (jx_set_new(root, "estimate_seconds", num(rep->est_seconds)) < 0 ||
	    jx_set_int(root, "changed_files", (int64_t)rep->changed_files) < 0)
		return ERR_NOMEM;
	if (rep->n_shards && add_shards(root, rep, &esc) < 0)
		return ERR_NOMEM;
	return esc && jx_set_bool(root, "escaped", true) < 0 ? ERR_NOMEM : 0;
}

char *selector_report_json(const struct select_report *rep)
{
	json_t *root = json_object();
	char *s = NULL;
	if (root && build_json(root, rep) == 0)
		s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	json_decref(root);
	if (!s)
		err_set(ERR_NOMEM, "report: JSON");
	return s;
}

/* ---- explain ---- */

/* Variant by variant: what decided each of the catalog's variants of the test. */
static void explain_variants(const struct select_test *t, FILE *out)
{
	if (t->variants_open) {
		fprintf(out, "    variants: not statically known: %s\n",
			t->variants_why ? t->variants_why : "");
		return;
	}
	if (!t->n_variants_all)
		return;
	fprintf(out, "    %zu variant%s%s%s%s\n", t->n_variants_all,
		t->n_variants_all == 1 ? "" : "s", t->variants_why ? " (a superset: " : "",
		t->variants_why ? t->variants_why : "", t->variants_why ? ")" : "");
	for (size_t i = 0; i < t->n_variants; i++) {
		const struct select_variant *v = &t->variants[i];
		fprintf(out, "      %s: %s, mode %s, %s%s%s%s\n", v->name,
			v->eligible ? "eligible" : "not eligible", testspecs_mode_name(v->mode),
			v->entry ? "entry at " : "the file's unlisted mode",
			v->entry ? v->entry : "", v->why ? ": " : "", v->why ? v->why : "");
	}
	if (t->n_variants < t->n_variants_all)
		fprintf(out, "      ... %zu more\n", t->n_variants_all - t->n_variants);
}

/* Where an @ops test's cases came from, by source: "from OpInfo sample_inputs_func shapes 12,
 * the op's default samples 4". */
static void explain_sources(const struct select_test *t, FILE *out)
{
	size_t n = 0;
	for (int s = 1; s < SPEC_SOURCE_COUNT; s++) {
		if (!t->kernel_by_source[s])
			continue;
		fprintf(out, "%s%s %zu", n++ ? ", " : "      from ",
			testspecs_source_name((enum spec_case_source)s), t->kernel_by_source[s]);
	}
	if (n)
		fputc('\n', out);
}

static void explain_stage3(const struct select_test *t, FILE *out)
{
	if (t->fate < SELECT_ELIGIBLE) {
		fprintf(out, "  stage 3 eligibility: dropped: %s%s%s\n",
			t->spec_why ? t->spec_why : "not eligible", t->spec_entry ? " at " : "",
			t->spec_entry ? t->spec_entry : "");
		explain_variants(t, out);
		return;
	}
	fprintf(out, "  stage 3 eligibility: eligible, mode %s, %s%s%s (%s)\n",
		testspecs_mode_name(t->mode), t->listed ? "listed" : "unlisted",
		t->spec_entry ? " at " : "", t->spec_entry ? t->spec_entry : "",
		t->spec_why ? t->spec_why : "");
	fprintf(out, "    %zu kernel cases by rule %s (%zu unsupported)%s%s%s\n", t->kernel_cases,
		t->case_rule, t->kernel_unsupported, t->smoke ? "; smoke" : "",
		t->case_why ? ": " : "", t->case_why ? t->case_why : "");
	explain_sources(t, out);
	explain_variants(t, out);
}

static void explain_stage4(const struct select_report *rep, const struct select_test *t, FILE *out)
{
	if (t->fate < SELECT_ELIGIBLE)
		return;
	fprintf(out, "  stage 4 budget: rank %zu of %zu, score %.2f%s%s, cost %.2f s: %s%s\n",
		t->rank, rep->stages[3].in, t->score, t->failed_before ? " (failed before)" : "",
		t->flaky ? " (flaky)" : "", t->seconds,
		t->fate == SELECT_SCHEDULED ? "scheduled, " : "not scheduled, ", t->why4);
	if (t->shard >= 0)
		fprintf(out, "    shard %d of %zu\n", t->shard, rep->n_shards);
}

int selector_report_explain(const struct select_report *rep, const char *id, FILE *out)
{
	const struct select_test *t = selector_report_find(rep, id);
	fprintf(out, "%s\n  stage 1 changes: %zu file%s changed%s%s\n", id, rep->changed_files,
		rep->changed_files == 1 ? "" : "s", rep->fallback ? "; fallback: " : "",
		rep->fallback ? rep->fallback_reason : "");
	if (!t) {
		fprintf(out, "  stage 2 impact: not a candidate: no signal of the change reaches "
			     "it\n");
		return err_set(ERR_NOTFOUND, "'%s' is not a candidate", id);
	}
	fprintf(out, "  stage 2 impact: candidate%s, %zu reason%s\n", t->added ? " (new test)" : "",
		t->n_reasons, t->n_reasons == 1 ? "" : "s");
	for (size_t i = 0; i < t->n_reasons; i++)
		fprintf(out, "    %s (%.2f): %s\n", t->reasons[i].kind, t->reasons[i].score,
			t->reasons[i].text);
	explain_stage3(t, out);
	explain_stage4(rep, t, out);
	return 0;
}
