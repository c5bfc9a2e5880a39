/* /jobs/{id}: one job from its JSON (pages_api.c): the commit, the funnel drawn as bars, the
 * kernel-case results with failures first, the reports the dashboard received (with every
 * failed test's message), the outbox messages, and every scheduled test with its reasons. */
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "html.h"
#include "pages.h"

#define PAGES_TESTS_SHOWN 500 /* scheduled tests listed; the JSON twin has them all */

static const char *s_or(const json_t *v, const char *path, const char *dflt)
{
	const char *s = jx_get_str(v, path);
	return s ? s : dflt;
}

/* <tag>text</tag> with the text escaped. */
static int el(struct buf *b, const char *open, const char *text, const char *close)
{
	int rc = buf_append_str(b, open);
	if (rc == 0)
		rc = html_text(b, text);
	return rc == 0 ? buf_append_str(b, close) : rc;
}

static int head(struct buf *b, const json_t *v, long long id)
{
	int rc = buf_appendf(b, "<h1>Job #%lld ", id);
	if (rc == 0)
		rc = el(b, "<span class=\"st st-", s_or(v, "state", "?"), "\">");
	if (rc == 0)
		rc = el(b, "", s_or(v, "state", "?"), "</span></h1>\n<p><code>");
	if (rc == 0)
		rc = html_text(b, s_or(v, "head", ""));
	if (rc == 0)
		rc =
		    el(b, "</code><br><b>", s_or(v, "commit.summary", "(commit not in the mirror)"),
		       "</b><br><span class=\"muted\">");
	if (rc == 0)
		rc = el(b, "", s_or(v, "commit.author", ""), " &middot; ");
	if (rc == 0)
		rc = el(b, "", s_or(v, "commit.time", ""), " &middot; ");
	if (rc == 0)
		rc = el(b, "", s_or(v, "event", ""), " (");
	if (rc == 0)
		rc = el(b, "", s_or(v, "trigger", ""), ") &middot; ");
	if (rc == 0)
		rc = el(b, "", s_or(v, "ref", ""), "</span></p>\n");
	if (rc == 0 && jx_get_str(v, "detail"))
		rc = el(b, "<p>", jx_get_str(v, "detail"), "</p>\n");
	if (rc == 0)
		rc = buf_appendf(
		    b,
		    "<p>Download <a href=\"/jobs/%lld/junit.xml\" download>junit.xml</a> "
		    "&middot; <a href=\"/jobs/%lld/results.jsonl\" download>"
		    "results.jsonl</a> &middot; <a href=\"/api/dashboard/jobs/%lld\">"
		    "JSON</a></p>\n",
		    id, id, id);
	return rc;
}

static int bar_row(struct buf *b, const char *name, const json_t *n, double top, const char *unit)
{
	if (!json_is_integer(n))
		return buf_appendf(b,
				   "<tr><th>%s</th><td class=\"muted\">-</td><td class=\"muted\">"
				   "not in this selection's report</td></tr>",
				   name);
	long long v = (long long)json_integer_value(n);
	double pct = top > 0 ? 100.0 * (double)v / top : 0;
	return buf_appendf(b,
			   "<tr><th>%s</th><td class=\"num\">%lld %s</td><td style=\"width:70%%\">"
			   "<div class=\"bar\" style=\"width:%.1f%%\"></div></td></tr>",
			   name, v, unit, pct > 100 ? 100 : pct);
}

/* Files changed -> tests impacted -> eligible -> scheduled. The changed files' bar is drawn
 * full (files and tests are different units); the tests' bars are shares of the impacted. */
static int funnel(struct buf *b, const json_t *f)
{
	static const char *const names[] = { "impacted", "eligible", "scheduled" };
	if (!json_is_object(f))
		return buf_append_str(b, "<h2>Funnel</h2><p class=\"muted\">no selection recorded "
					 "yet</p>\n");
	const json_t *files = json_object_get(f, "changed_files");
	double top = (double)json_integer_value(json_object_get(f, "impacted"));
	int rc = buf_appendf(b,
			     "<h2>Funnel</h2><p class=\"muted\">of %lld tests upstream</p><div "
			     "class=\"box\"><table>",
			     (long long)json_integer_value(json_object_get(f, "tests")));
	if (rc == 0)
		rc = bar_row(b, "changed files", files, (double)json_integer_value(files),
			     json_integer_value(files) == 1 ? "file" : "files");
	for (int i = 0; rc == 0 && i < 3; i++)
		rc = bar_row(b, names[i], json_object_get(f, names[i]), top, "tests");
	return rc == 0 ? buf_append_str(b, "</table></div>\n") : rc;
}

static int real_cell(struct buf *b, const json_t *r, const char *key)
{
	const json_t *x = json_object_get(r, key);
	if (!json_is_number(x))
		return buf_append_str(b, "<td class=\"muted\">-</td>");
	return buf_appendf(b, "<td class=\"num\">%.4g</td>", json_number_value(x));
}

static int result_row(struct buf *b, const json_t *r)
{
	int rc = el(b, "<tr><td><code>", s_or(r, "case", ""), "</code>");
	if (rc == 0 && jx_get_str(r, "test_id"))
		rc = el(b, "<br><span class=\"muted mono\">", jx_get_str(r, "test_id"), "</span>");
	if (rc == 0)
		rc = el(b, "</td><td><span class=\"st st-", s_or(r, "outcome", ""), "\">");
	if (rc == 0)
		rc = el(b, "", s_or(r, "outcome", ""), "</span></td>");
	if (rc == 0)
		rc = el(b, "<td>", s_or(r, "op", "-"), "</td>");
	if (rc == 0)
		rc = el(b, "<td class=\"mono\">", s_or(r, "shapes", "-"), "</td>");
	if (rc == 0)
		rc = el(b, "<td>", s_or(r, "dtype", "-"), "</td>");
	if (rc == 0)
		rc = real_cell(b, r, "max_abs_err");
	if (rc == 0)
		rc = real_cell(b, r, "max_rel_err");
	if (rc == 0)
		rc = el(b, "<td class=\"mono\">", s_or(r, "plan", "-"), "</td>");
	if (rc == 0)
		rc = el(b, "<td>", s_or(r, "message", ""), "");
	const char *trace = jx_get_str(r, "trace"); /* a Perfetto trace the executor kept */
	if (rc == 0 && trace && (trace[0] == '/' || !strncmp(trace, "https://", 8)))
		rc = el(b, " <a href=\"", trace, "\">trace</a>"); /* never a javascript: URL */
	return rc == 0 ? buf_append_str(b, "</td></tr>\n") : rc;
}

static int results(struct buf *b, const json_t *v)
{
	const json_t *rs = json_object_get(v, "results");
	if (json_array_size(rs) == 0)
		return buf_append_str(b, "<h2>Kernel cases</h2><p class=\"muted\">no results "
					 "stored for this job</p>\n");
	int rc = buf_append_str(
	    b, "<h2>Kernel cases (failures first)</h2><div class=\"box\"><table><tr><th>case"
	       "</th><th>outcome</th><th>op</th><th>shapes</th><th>dtype</th><th>max abs</th>"
	       "<th>max rel</th><th>plan</th><th>message</th></tr>\n");
	size_t i;
	const json_t *r;
	json_array_foreach(rs, i, r)
	{
		if (rc == 0)
			rc = result_row(b, r);
	}
	return rc == 0 ? buf_append_str(b, "</table></div>\n") : rc;
}

static int failed_test(struct buf *b, const json_t *t)
{
	int rc = el(b, "<div class=\"fail\"><b>", s_or(t, "name", "?"), "</b> ");
	if (rc == 0)
		rc = el(b, "<span class=\"st st-failed\">", s_or(t, "outcome", "failed"),
			"</span> ");
	if (rc == 0)
		rc = el(b, "<span class=\"muted\">", s_or(t, "classname", ""), " ");
	if (rc == 0)
		rc = el(b, "", s_or(t, "file", ""), "</span><br>");
	if (rc == 0)
		rc = el(b, "", s_or(t, "message", "(no message)"), "");
	if (rc == 0 && jx_get_str(t, "stacktrace"))
		rc = el(b, "<pre class=\"mono\">", jx_get_str(t, "stacktrace"), "</pre>");
	return rc == 0 ? buf_append_str(b, "</div>\n") : rc;
}

static int reports(struct buf *b, const json_t *v)
{
	const json_t *ms = json_object_get(v, "reports");
	int rc = buf_append_str(b, "<h2>Reports the dashboard received</h2>\n");
	if (rc == 0 && json_array_size(ms) == 0)
		rc = buf_append_str(b, "<p class=\"muted\">none yet</p>\n");
	size_t i, k;
	const json_t *m, *t;
	json_array_foreach(ms, i, m)
	{
		if (rc == 0)
			rc = el(b, "<p>", s_or(m, "job_name", ""), " ");
		if (rc == 0)
			rc = el(b, "<span class=\"st st-", s_or(m, "status", ""), "\">");
		if (rc == 0)
			rc = el(b, "", s_or(m, "status", ""), "</span> ");
		if (rc == 0 && jx_get_str(m, "conclusion"))
			rc = el(b, "<span class=\"st st-", jx_get_str(m, "conclusion"), "\">");
		if (rc == 0 && jx_get_str(m, "conclusion"))
			rc = el(b, "", jx_get_str(m, "conclusion"), "</span>");
		if (rc == 0)
			rc = buf_appendf(
			    b, " passed %lld, failed %lld, skipped %lld</p>\n",
			    (long long)json_integer_value(json_object_get(m, "passed")),
			    (long long)json_integer_value(json_object_get(m, "failed")),
			    (long long)json_integer_value(json_object_get(m, "skipped")));
		json_array_foreach(json_object_get(m, "failed_tests"), k, t)
		{
			if (rc == 0)
				rc = failed_test(b, t);
		}
	}
	return rc;
}

static int outbox(struct buf *b, const json_t *v)
{
	const json_t *ob = json_object_get(v, "outbox");
	int rc = buf_append_str(b, "<h2>Outbox</h2>\n");
	if (rc == 0 && json_array_size(ob) == 0)
		return buf_append_str(b, "<p class=\"muted\">no message queued for this job</p>\n");
	if (rc == 0)
		rc = buf_append_str(
		    b, "<div class=\"box\"><table><tr><th>message</th><th>target"
		       "</th><th>state</th><th>attempts</th><th>last answer</th></tr>\n");
	size_t i;
	const json_t *m;
	json_array_foreach(ob, i, m)
	{
		if (rc == 0)
			rc = buf_appendf(b, "<tr><td>%lld</td>",
					 (long long)json_integer_value(json_object_get(m, "id")));
		if (rc == 0)
			rc = el(b, "<td class=\"mono\">", s_or(m, "target", ""), "</td><td>");
		if (rc == 0)
			rc = el(b, "<span class=\"st st-", s_or(m, "state", ""), "\">");
		if (rc == 0)
			rc = el(b, "", s_or(m, "state", ""), "</span></td>");
		if (rc == 0)
			rc = buf_appendf(
			    b, "<td class=\"num\">%lld</td>",
			    (long long)json_integer_value(json_object_get(m, "attempts")));
		long long status = json_integer_value(json_object_get(m, "last_status"));
		if (rc == 0 && status)
			rc = buf_appendf(b, "<td>HTTP %lld", status);
		else if (rc == 0)
			rc = buf_append_str(b, "<td>");
		if (rc == 0)
			rc = el(b, status && s_or(m, "last_error", "")[0] ? ": " : "",
				s_or(m, "last_error", ""), "</td></tr>\n");
	}
	return rc == 0 ? buf_append_str(b, "</table></div>\n") : rc;
}

static int tests(struct buf *b, const json_t *v)
{
	const json_t *ts = json_object_get(v, "tests");
	size_t n = json_array_size(ts), i, k;
	int rc = buf_appendf(b, "<h2>Scheduled tests (%zu) and why</h2>\n", n);
	if (rc == 0 && jx_get_str(v, "fallback.reason"))
		rc = el(b, "<p><b>fallback:</b> ", jx_get_str(v, "fallback.reason"), "</p>\n");
	if (rc == 0 && n)
		rc = buf_append_str(b, "<div class=\"box\"><table><tr><th>test</th><th>cases</th>"
				       "<th>reasons</th></tr>\n");
	const json_t *t, *r;
	json_array_foreach(ts, i, t)
	{
		if (i >= PAGES_TESTS_SHOWN)
			break;
		if (rc == 0)
			rc = el(b, "<tr><td class=\"mono\">", s_or(t, "id", ""), "</td>");
		if (rc == 0)
			rc = buf_appendf(
			    b, "<td class=\"num\">%lld</td><td>",
			    (long long)json_integer_value(json_object_get(t, "kernel_cases")));
		json_array_foreach(json_object_get(t, "reasons"), k, r)
		{
			if (rc == 0)
				rc = el(b, "<div><b>", s_or(r, "kind", ""), "</b> ");
			if (rc == 0)
				rc = el(b, "", s_or(r, "text", ""), "</div>");
		}
		if (rc == 0)
			rc = buf_append_str(b, "</td></tr>\n");
	}
	if (rc == 0 && n)
		rc = buf_append_str(b, "</table></div>\n");
	if (rc == 0 && n > PAGES_TESTS_SHOWN)
		rc = buf_appendf(b, "<p class=\"muted\">and %zu more in the JSON</p>\n",
				 n - PAGES_TESTS_SHOWN);
	return rc;
}

int pages_job_html(struct buf *b, const json_t *v)
{
	long long id = (long long)json_integer_value(json_object_get(v, "id"));
	char title[48];
	snprintf(title, sizeof(title), "job %lld", id);
	bool running = json_is_true(json_object_get(v, "running"));
	int rc = html_begin(b, title, running ? PAGES_REFRESH_S : 0);
	if (rc == 0)
		rc = head(b, v, id);
	if (rc == 0)
		rc = funnel(b, json_object_get(v, "funnel"));
	if (rc == 0)
		rc = results(b, v);
	if (rc == 0)
		rc = reports(b, v);
	if (rc == 0)
		rc = outbox(b, v);
	if (rc == 0)
		rc = tests(b, v);
	return rc == 0 ? html_end(b) : rc;
}
