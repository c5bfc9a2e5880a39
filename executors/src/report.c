/* The run's reports (report.h): JUnit XML, JSONL and the summary. */
#include "executors/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"

/* ---- names ---- */

/* "path::Class::method": the class (or "" when the id has one part) and the method. */
static void split_id(const char *id, char *path, size_t psize, char *cls, size_t csize,
		     const char **method)
{
	const char *first = strstr(id, "::");
	const char *last = first;
	for (const char *p = first; p && (p = strstr(p + 2, "::"));)
		last = p;
	*method = last ? last + 2 : id;
	snprintf(path, psize, "%.*s", first ? (int)(first - id) : 0, id);
	if (first && last != first)
		snprintf(cls, csize, "%.*s", (int)(last - first - 2), first + 2);
	else
		cls[0] = '\0';
}

static void shapes_text(char *buf, size_t size, const struct exec_case *c)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < c->nin && n < size; i++)
		for (int d = 0; d < c->ndims[i] && n < size; d++)
			n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "x" : (i ? "," : ""),
					      (long long)c->shapes[i][d]);
}

void exec_case_name(char *buf, size_t size, const struct exec_case *c)
{
	char path[EXEC_TEST_ID_MAX], cls[EXEC_TEST_ID_MAX], sh[256];
	const char *method;
	split_id(c->test_id, path, sizeof(path), cls, sizeof(cls), &method);
	shapes_text(sh, sizeof(sh), c);
	if (c->kind == SPEC_CASE_GRAPH) { /* the file and how it runs tell graph cases apart */
		const char *slash = strrchr(c->graph, '/');
		char cores[16] = "";
		if (c->cores)
			snprintf(cores, sizeof(cores), "-c%d", (int)c->cores);
		snprintf(buf, size, "%s[graph-%s-%s%s-%s-%s]", method, slash ? slash + 1 : c->graph,
			 testspecs_relayout_name(c->relayout), cores, sh,
			 testspecs_dtype_name((enum spec_dtype)c->dtype));
		return;
	}
	snprintf(buf, size, "%s[%s-%s-%s]", method, c->op, sh,
		 testspecs_dtype_name((enum spec_dtype)c->dtype));
}

static const char *file_of(const char *path)
{
	return strncmp(path, "test/", 5) == 0 ? path + 5 : path;
}

/* ---- JUnit ---- */

static int xml_text(struct buf *b, const char *s)
{
	int rc = 0;
	for (; *s && !rc; s++) {
		unsigned char ch = (unsigned char)*s;
		switch (ch) {
		case '&':
			rc = buf_append_str(b, "&amp;");
			break;
		case '<':
			rc = buf_append_str(b, "&lt;");
			break;
		case '>':
			rc = buf_append_str(b, "&gt;");
			break;
		case '"':
			rc = buf_append_str(b, "&quot;");
			break;
		case '\'':
			rc = buf_append_str(b, "&apos;");
			break;
		default:
			/* XML 1.0 allows no control characters but tab, newline, return */
			rc = buf_append_char(b, ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r'
						    ? '?'
						    : (char)ch);
		}
	}
	return rc;
}

/* The child element of a testcase by outcome: tag and type ("" tag: none). */
static void child_of(enum exec_outcome o, const char **tag, const char **type)
{
	*tag = "";
	*type = "";
	switch (o) {
	case EXEC_FAILED:
		*tag = "failure", *type = "AssertionError";
		break;
	case EXEC_ERROR:
		*tag = "error", *type = "EmulatorError";
		break;
	case EXEC_CRASHED:
		*tag = "error", *type = "crashed";
		break;
	case EXEC_TIMED_OUT:
		*tag = "error", *type = "timed_out";
		break;
	case EXEC_SKIPPED:
		*tag = "skipped", *type = "pytest.skip";
		break;
	case EXEC_XFAILED:
		*tag = "skipped", *type = "pytest.xfail";
		break;
	default:
		break;
	}
}

static int junit_case(struct buf *b, const struct exec_case *c, const struct exec_result *r)
{
	char path[EXEC_TEST_ID_MAX], cls[EXEC_TEST_ID_MAX], name[EXEC_TEST_ID_MAX + 320];
	const char *method, *tag, *type;
	split_id(c->test_id, path, sizeof(path), cls, sizeof(cls), &method);
	exec_case_name(name, sizeof(name), c);
	child_of((enum exec_outcome)r->outcome, &tag, &type);
	int rc = buf_append_str(b, "    <testcase classname=\"");
	rc = rc ? rc : xml_text(b, cls);
	rc = rc ? rc : buf_append_str(b, "\" name=\"");
	rc = rc ? rc : xml_text(b, name);
	rc = rc ? rc : buf_append_str(b, "\" file=\"");
	rc = rc ? rc : xml_text(b, file_of(path));
	rc = rc ? rc : buf_appendf(b, "\" time=\"%.3f\"", r->seconds);
	if (!rc && r->outcome == EXEC_PASSED && !r->message[0] && c->kind != SPEC_CASE_GRAPH)
		return buf_append_str(b, "/>\n");
	rc = rc ? rc : buf_append_str(b, ">\n");
	if (!rc && tag[0]) {
		rc = buf_appendf(b, "      <%s message=\"", tag);
		rc = rc ? rc : xml_text(b, r->message);
		rc = rc ? rc : buf_appendf(b, "\" type=\"%s\">", type);
		rc = rc ? rc : xml_text(b, r->message);
		rc = rc ? rc : buf_appendf(b, "</%s>\n", tag);
	}
	/* what a passing case has to say (flaky, xpassed, via adapter) and where it came from */
	rc = rc ? rc
		: buf_appendf(b, "      <system-out>case %s, %s, spec %s", c->id,
			      exec_outcome_name((enum exec_outcome)r->outcome), c->loc);
	if (!rc && !tag[0] && r->message[0]) {
		rc = buf_append_str(b, ": ");
		rc = rc ? rc : xml_text(b, r->message);
	}
	if (!rc && c->kind == SPEC_CASE_GRAPH) {
		rc = buf_append_str(b, "; graph ");
		rc = rc ? rc : xml_text(b, c->graph);
		rc = rc ? rc : buf_append_str(b, ": ");
		rc = rc ? rc : xml_text(b, r->steps);
	}
	rc = rc ? rc : buf_append_str(b, "</system-out>\n    </testcase>\n");
	return rc;
}

struct suite_counts {
	size_t tests, failures, errors, skipped;
	double time;
};

static void count_into(struct suite_counts *s, const struct exec_result *r)
{
	const char *tag, *type;
	child_of((enum exec_outcome)r->outcome, &tag, &type);
	s->tests++;
	s->time += r->seconds;
	s->failures += tag[0] == 'f';
	s->errors += tag[0] == 'e';
	s->skipped += tag[0] == 's';
}

static bool same_file(const struct exec_case *a, const struct exec_case *b)
{
	const char *ea = strstr(a->test_id, "::"), *eb = strstr(b->test_id, "::");
	size_t la = ea ? (size_t)(ea - a->test_id) : 0, lb = eb ? (size_t)(eb - b->test_id) : 0;
	return la == lb && memcmp(a->test_id, b->test_id, la) == 0;
}

static bool written_before(const struct exec_case *cases, const struct exec_result *res, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (res[k].outcome != EXEC_NOT_RUN && same_file(&cases[k], &cases[i]))
			return true;
	return false;
}

/* One <testsuite> with every case of the file of cases[i]. */
static int junit_suite(struct buf *b, const struct exec_case *cases, const struct exec_result *res,
		       size_t n, size_t i)
{
	struct suite_counts sc = { 0 };
	for (size_t k = i; k < n; k++)
		if (res[k].outcome != EXEC_NOT_RUN && same_file(&cases[k], &cases[i]))
			count_into(&sc, &res[k]);
	char path[EXEC_TEST_ID_MAX], cls[EXEC_TEST_ID_MAX];
	const char *method;
	split_id(cases[i].test_id, path, sizeof(path), cls, sizeof(cls), &method);
	int rc = buf_append_str(b, "  <testsuite name=\"");
	rc = rc ? rc : xml_text(b, file_of(path));
	rc = rc ? rc
		: buf_appendf(b,
			      "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
			      "skipped=\"%zu\" time=\"%.3f\">\n",
			      sc.tests, sc.failures, sc.errors, sc.skipped, sc.time);
	for (size_t k = i; !rc && k < n; k++)
		if (res[k].outcome != EXEC_NOT_RUN && same_file(&cases[k], &cases[i]))
			rc = junit_case(b, &cases[k], &res[k]);
	return rc ? rc : buf_append_str(b, "  </testsuite>\n");
}

char *exec_report_junit_str(const struct exec_case *cases, const struct exec_result *results,
			    size_t n)
{
	struct buf b;
	buf_init(&b, EXEC_REPORT_MAX);
	struct suite_counts all = { 0 };
	for (size_t i = 0; i < n; i++)
		if (results[i].outcome != EXEC_NOT_RUN)
			count_into(&all, &results[i]);
	int rc = buf_appendf(&b,
			     "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
			     "<testsuites name=\"spyre-ci\" tests=\"%zu\" failures=\"%zu\" "
			     "errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
			     all.tests, all.failures, all.errors, all.skipped, all.time);
	for (size_t i = 0; !rc && i < n; i++)
		if (results[i].outcome != EXEC_NOT_RUN && !written_before(cases, results, i))
			rc = junit_suite(&b, cases, results, n, i);
	rc = rc ? rc : buf_append_str(&b, "</testsuites>\n");
	if (rc) {
		buf_finish(&b);
		return NULL;
	}
	return buf_detach(&b);
}

/* ---- JSONL ---- */

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *case_json(const struct exec_case *c, const struct exec_result *r)
{
	char path[EXEC_TEST_ID_MAX], cls[EXEC_TEST_ID_MAX], name[EXEC_TEST_ID_MAX + 320];
	char sh[256];
	const char *method;
	split_id(c->test_id, path, sizeof(path), cls, sizeof(cls), &method);
	exec_case_name(name, sizeof(name), c);
	shapes_text(sh, sizeof(sh), c);
	enum exec_outcome o = (enum exec_outcome)r->outcome;
	json_t *j = json_object();
	jx_set_str(j, "name", name);
	jx_set_str(j, "classname", cls);
	jx_set_str(j, "file", file_of(path));
	jx_set_real(j, "time", round(r->seconds * 1000) / 1000);
	/* docs/contracts.md, outcomes: a flaky case passed (on its retry), and says so */
	jx_set_str(j, "outcome", exec_outcome_name(o == EXEC_FLAKY ? EXEC_PASSED : o));
	jx_set_bool(j, "flaky", o == EXEC_FLAKY);
	jx_set_str(j, "message", r->message);
	jx_set_str(j, "test_id", c->test_id);
	jx_set_str(j, "case_id", c->id);
	jx_set_str(j, "op", c->op);
	jx_set_str(j, "shapes", sh);
	jx_set_str(j, "dtype", testspecs_dtype_name((enum spec_dtype)c->dtype));
	jx_set_str(j, "mode", testspecs_mode_name((enum spec_mode)c->mode));
	jx_set_new(j, "device_us", real_or_null(r->device_us));
	jx_set_new(j, "max_abs_err", real_or_null(r->max_abs_err));
	jx_set_new(j, "max_rel_err", real_or_null(r->max_rel_err));
	jx_set_real(j, "atol", r->atol);
	jx_set_real(j, "rtol", r->rtol);
	jx_set_real(j, "util_pe", r->util_pe);
	jx_set_real(j, "util_vec", r->util_vec);
	jx_set_str(j, "plan", r->plan);
	jx_set_str(j, "adapter", r->adapter[0] ? r->adapter : NULL);
	jx_set_int(j, "attempts", r->attempts);
	jx_set_str(j, "first_outcome", exec_outcome_name((enum exec_outcome)r->first_outcome));
	jx_set_str(j, "spec", c->loc);
	if (c->kind == SPEC_CASE_GRAPH) { /* the file run and each kernel's plan */
		jx_set_str(j, "graph", c->graph);
		jx_set_str(j, "steps", r->steps);
	}
	return j;
}

char *exec_report_jsonl_str(const struct exec_case *cases, const struct exec_result *results,
			    size_t n)
{
	struct buf b;
	buf_init(&b, EXEC_REPORT_MAX);
	int rc = buf_append(&b, "", 0);
	for (size_t i = 0; !rc && i < n; i++) {
		if (results[i].outcome == EXEC_NOT_RUN)
			continue;
		json_t *j = case_json(&cases[i], &results[i]);
		char *line = j ? jx_dumps(j) : NULL;
		json_decref(j);
		rc = line ? buf_append_str(&b, line) : ERR_NOMEM;
		rc = rc ? rc : buf_append_char(&b, '\n');
		free(line);
	}
	if (rc) {
		buf_finish(&b);
		return NULL;
	}
	return buf_detach(&b);
}

/* ---- summary ---- */

void exec_summary_make(struct exec_summary *s, const struct exec_result *results, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->total = n;
	for (size_t i = 0; i < n; i++) {
		const struct exec_result *r = &results[i];
		if ((unsigned)r->outcome < EXEC_OUTCOME_COUNT)
			s->count[r->outcome]++;
		if (r->outcome == EXEC_NOT_RUN || !exec_outcome_ok((enum exec_outcome)r->outcome))
			s->mandatory_bad++;
		s->seconds += r->seconds;
		if (isfinite(r->device_us))
			s->device_us += r->device_us;
	}
}

void exec_summary_print(FILE *out, const struct exec_summary *s)
{
	fprintf(out, "%zu cases:", s->total);
	for (int o = EXEC_PASSED; o < EXEC_OUTCOME_COUNT; o++)
		fprintf(out, "%s %zu %s", o == EXEC_PASSED ? "" : ",", s->count[o],
			exec_outcome_name((enum exec_outcome)o));
	fprintf(out, " (%zu not run); modeled device time %.3f ms\n", s->count[EXEC_NOT_RUN],
		s->device_us / 1000);
}

static int write_str(const char *path, char *s)
{
	if (!s)
		return err_set(ERR_NOMEM, "%s: out of memory", path);
	int rc = fs_atomic_write(path, s, strlen(s), 0644);
	free(s);
	return rc ? err_prefix("%s: ", path) : 0;
}

int exec_report_junit(const char *path, const struct exec_case *cases,
		      const struct exec_result *results, size_t n)
{
	return write_str(path, exec_report_junit_str(cases, results, n));
}

int exec_report_jsonl(const char *path, const struct exec_case *cases,
		      const struct exec_result *results, size_t n)
{
	return write_str(path, exec_report_jsonl_str(cases, results, n));
}

int exec_report_summary(const char *path, const struct exec_summary *s)
{
	json_t *j = json_object();
	for (int o = EXEC_NOT_RUN; o < EXEC_OUTCOME_COUNT; o++)
		jx_set_int(j, exec_outcome_name((enum exec_outcome)o), (int64_t)s->count[o]);
	jx_set_int(j, "total", (int64_t)s->total);
	jx_set_bool(j, "ok", s->mandatory_bad == 0);
	jx_set_real(j, "seconds", s->seconds);
	jx_set_real(j, "device_us", s->device_us);
	char *text = jx_dumps(j);
	json_decref(j);
	if (text) {
		size_t l = strlen(text);
		char *t = realloc(text, l + 2);
		if (t) {
			t[l] = '\n', t[l + 1] = '\0';
			text = t;
		}
	}
	return write_str(path, text);
}
