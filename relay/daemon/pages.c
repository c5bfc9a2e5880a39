/* The dashboard's routes and its two main pages: / (recent upstream changes against outcomes)
 * and /jobs/{id} (the funnel, failures first, every scheduled test with its reasons, the
 * reports the receiver has, the outbox). Each is rendered from the JSON of pages_api.c, which
 * is also served under /api/dashboard. Every upstream-controlled text goes through html.c. */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/num.h"
#include "daemon.h"
#include "html.h"
#include "http_priv.h"
#include "pages.h"
#include "route.h"

static const char *s_or(const json_t *v, const char *path, const char *dflt)
{
	const char *s = jx_get_str(v, path);
	return s ? s : dflt;
}

static int badge(struct buf *b, const char *state)
{
	int rc = buf_append_str(b, "<span class=\"st st-");
	if (rc == 0)
		rc = html_attr(b, state);
	if (rc == 0)
		rc = buf_append_str(b, "\">");
	if (rc == 0)
		rc = html_text(b, state);
	return rc == 0 ? buf_append_str(b, "</span>") : rc;
}

/* A number cell: the integer at `path`, or "-" when the store does not have it. */
static int num_cell(struct buf *b, const json_t *v, const char *path)
{
	const json_t *x = jx_get(v, path);
	if (json_is_integer(x))
		return buf_appendf(b, "<td class=\"num\">%lld</td>",
				   (long long)json_integer_value(x));
	return buf_append_str(b, "<td class=\"num muted\">-</td>");
}

static int funnel_cells(struct buf *b, const json_t *j)
{
	static const char *const f[] = { "funnel.changed_files", "funnel.impacted",
					 "funnel.eligible", "funnel.scheduled" };
	int rc = 0;
	for (int i = 0; rc == 0 && i < 4; i++)
		rc = num_cell(b, j, f[i]);
	return rc;
}

static int cases_cells(struct buf *b, const json_t *j)
{
	const json_t *c = jx_get(j, "cases"), *r = jx_get(j, "report");
	int rc = 0;
	if (json_is_object(c)) {
		rc = buf_appendf(b,
				 "<td class=\"num\">%lld</td><td class=\"num\">%lld</td><td "
				 "class=\"num\">%lld</td><td class=\"num\">%.3f ms</td>",
				 (long long)json_integer_value(json_object_get(c, "passed")),
				 (long long)json_integer_value(json_object_get(c, "failed")),
				 (long long)json_integer_value(json_object_get(c, "other")),
				 json_number_value(json_object_get(c, "device_s")) * 1e3);
	} else if (json_is_object(r)) { /* only the dashboard's report has counts */
		rc = num_cell(b, r, "passed");
		if (rc == 0)
			rc = num_cell(b, r, "failed");
		if (rc == 0)
			rc = num_cell(b, r, "skipped");
		if (rc == 0)
			rc = buf_append_str(b, "<td class=\"muted\">-</td>");
	} else {
		rc = buf_append_str(b, "<td class=\"muted\" colspan=\"4\">no results</td>");
	}
	return rc;
}

static int index_row(struct buf *b, const json_t *j)
{
	char when[32];
	const char *state = s_or(j, "state", "?");
	long long id = (long long)json_integer_value(json_object_get(j, "id"));
	int rc = buf_appendf(b, "<tr><td><a href=\"/jobs/%lld\">#%lld</a></td><td>", id, id);
	if (rc == 0) /* the state second: on a phone it shows without scrolling */
		rc = badge(b, state);
	if (rc == 0)
		rc = buf_append_str(b, "</td><td class=\"commit\"><code>");
	if (rc == 0)
		rc = html_text(b, s_or(j, "short", ""));
	if (rc == 0)
		rc = buf_append_str(b, "</code> ");
	if (rc == 0)
		rc = html_text_cut(b, s_or(j, "commit.summary", ""), 120);
	if (rc == 0)
		rc = buf_append_str(b, "<br><span class=\"muted\">");
	if (rc == 0)
		rc = html_text(b, s_or(j, "commit.author", ""));
	html_time(when, json_integer_value(json_object_get(j, "created_ms")));
	if (rc == 0)
		rc = buf_appendf(b, " &middot; %s &middot; ", when);
	if (rc == 0)
		rc = html_text(b, s_or(j, "branch", ""));
	if (rc == 0)
		rc = buf_append_str(b, "</span></td><td>");
	if (rc == 0)
		rc = html_text(b, s_or(j, "trigger", ""));
	if (rc == 0)
		rc = buf_append_str(b, "</td>");
	if (rc == 0)
		rc = funnel_cells(b, j);
	if (rc == 0)
		rc = cases_cells(b, j);
	return rc == 0 ? buf_append_str(b, "</tr>\n") : rc;
}

/* The filter form: plain GET, no script. */
static int filters(struct buf *b, const json_t *v)
{
	const char *st = s_or(v, "filter.state", ""), *br = s_or(v, "filter.branch", "");
	int rc = buf_append_str(b, "<form method=\"get\" action=\"/\"><label>state <select "
				   "name=\"state\"><option value=\"\">any</option>");
	const char *k;
	json_t *x;
	json_object_foreach(json_object_get(v, "counts"), k, x)
	{
		if (rc == 0)
			rc = buf_appendf(b, "<option%s>%s</option>",
					 strcmp(k, st) ? "" : " selected", k);
	}
	if (rc == 0)
		rc = buf_append_str(b, "</select></label> <label>branch <select name=\"branch\">"
				       "<option value=\"\">any</option>");
	size_t i;
	json_array_foreach(json_object_get(v, "branches"), i, x)
	{
		const char *name = json_string_value(x);
		if (rc == 0)
			rc = buf_appendf(b, "<option%s value=\"",
					 strcmp(name, br) ? "" : " selected");
		if (rc == 0)
			rc = html_attr(b, name);
		if (rc == 0)
			rc = buf_append_str(b, "\">");
		if (rc == 0)
			rc = html_text(b, name);
		if (rc == 0)
			rc = buf_append_str(b, "</option>");
	}
	return rc == 0 ? buf_append_str(b, "</select></label> <button>show</button></form>\n") : rc;
}

int pages_index_html(struct buf *b, const json_t *v)
{
	bool running = json_is_true(json_object_get(v, "running"));
	int rc = html_begin(b, "jobs", running ? PAGES_REFRESH_S : 0);
	if (rc == 0)
		rc = buf_append_str(b, "<h1>Upstream changes and their outcomes</h1>\n<p>");
	const char *k;
	json_t *x;
	json_object_foreach(json_object_get(v, "counts"), k, x)
	{
		if (rc == 0)
			rc = buf_appendf(b, "%s: <b>%lld</b> &nbsp; ", k,
					 (long long)json_integer_value(x));
	}
	if (rc == 0 && running)
		rc = buf_appendf(b,
				 "<span class=\"muted\">(refreshes every %d s while jobs run)"
				 "</span>",
				 PAGES_REFRESH_S);
	if (rc == 0)
		rc = buf_append_str(b, "</p>\n");
	if (rc == 0)
		rc = filters(b, v);
	if (rc == 0)
		rc = buf_append_str(
		    b, "<div class=\"box\"><table><tr><th>job</th><th>state</th><th>commit</th>"
		       "<th>trigger</th><th>changed files</th><th>impacted</th><th>eligible</th>"
		       "<th>scheduled</th><th>passed</th><th>failed</th><th>other</th>"
		       "<th>device time</th></tr>\n");
	size_t i;
	json_array_foreach(json_object_get(v, "jobs"), i, x)
	{
		if (rc == 0)
			rc = index_row(b, x);
	}
	if (rc == 0 && json_array_size(json_object_get(v, "jobs")) == 0)
		rc = buf_append_str(b,
				    "<tr><td colspan=\"12\" class=\"muted\">no jobs yet</td></tr>");
	if (rc == 0)
		rc = buf_append_str(b, "</table></div>\n");
	return rc == 0 ? html_end(b) : rc;
}

static enum MHD_Result reply_html(struct MHD_Connection *c, json_t *v,
				  int (*render)(struct buf *, const json_t *))
{
	struct buf b;
	buf_init(&b, PAGES_HTML_MAX);
	int rc = render(&b, v);
	json_decref(v);
	enum MHD_Result r =
	    rc == 0 ? http__reply(c, 200, "text/html; charset=utf-8", buf_str(&b), b.len)
		    : http__error(c, 500, "the page did not fit");
	buf_finish(&b);
	return r;
}

/* A page's JSON as the twin (`html` false) or rendered (`html` true); NULL v: store failed. */
static enum MHD_Result page(struct MHD_Connection *c, json_t *v, bool html,
			    int (*render)(struct buf *, const json_t *))
{
	if (!v) {
		log_error("dashboard: %s", err_last());
		return http__error(c, 503, "store unavailable");
	}
	if (json_is_null(v)) {
		json_decref(v);
		return http__error(c, 404, "no such job");
	}
	return html ? reply_html(c, v, render) : http__reply_json(c, 200, v);
}

/* results.jsonl rebuilt from the store: a job whose run wrote no file (an older daemon's). */
static enum MHD_Result results_stored(struct daemon *d, struct MHD_Connection *c, int64_t id)
{
	json_t *v = pages_job_json(d, id);
	if (!v || json_is_null(v))
		return page(c, v, false, NULL);
	struct buf b;
	buf_init(&b, PAGES_HTML_MAX);
	size_t i;
	const json_t *r;
	int rc = 0;
	json_array_foreach(json_object_get(v, "results"), i, r)
	{
		const json_t *dt = json_object_get(r, "detail");
		char *line = json_is_object(dt) ? jx_dumps(dt) : jx_dumps(r);
		rc = rc == 0 && line ? buf_appendf(&b, "%s\n", line) : -1;
		free(line);
	}
	json_decref(v);
	enum MHD_Result ans =
	    rc == 0 ? http__reply(c, 200, "application/x-ndjson", b.len ? buf_str(&b) : "", b.len)
		    : http__error(c, 500, "the report did not fit");
	buf_finish(&b);
	return ans;
}

/* GET /jobs/{id}/{junit.xml,results.jsonl}: the file the job's run wrote, as it wrote it. */
static enum MHD_Result download(struct daemon *d, struct MHD_Connection *c, int64_t id,
				const struct route_download *dl)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	if (pages_report_path(d, path, sizeof(path), id, dl->name) < 0)
		return http__error(c, 404, "no such report");
	if (access(path, R_OK) != 0) {
		if (dl == &route_downloads[0])
			return results_stored(d, c, id);
		return http__error(c, 404, "no such report");
	}
	if (fs_read_file(&text, &len, path, PAGES_REPORT_MAX) < 0) {
		log_error("dashboard: %s", err_last());
		return http__error(c, 500, "the report cannot be read");
	}
	enum MHD_Result ans = http__reply(c, 200, dl->type, text, len);
	free(text);
	return ans;
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	return v && strlen(v) <= 256 ? v : NULL;
}

enum MHD_Result http__pages(struct daemon *d, struct MHD_Connection *c, const char *url,
			    bool *handled)
{
	*handled = true;
	struct route r;
	route_page(&r, url);
	int64_t limit = PAGES_JOBS_DEFAULT;
	const char *l = arg(c, "limit");
	switch (r.page) {
	case ROUTE_INDEX: {
		struct pages_filter f = { arg(c, "state"), arg(c, "branch"), PAGES_JOBS_DEFAULT };
		if (l && num_parse_i64(&f.limit, l, 1, PAGES_JOBS_MAX) < 0)
			return http__error(c, 400, "limit must be 1..200");
		return page(c, pages_index_json(d, &f), !r.api, pages_index_html);
	}
	case ROUTE_JOB:
		return page(c, pages_job_json(d, r.job_id), !r.api, pages_job_html);
	case ROUTE_DOWNLOAD:
		return download(d, c, r.job_id, r.download);
	case ROUTE_TRENDS:
		if (l && num_parse_i64(&limit, l, 2, PAGES_JOBS_MAX) < 0)
			return http__error(c, 400, "limit must be 2..200");
		return page(c, pages_trends_json(d, limit), !r.api, pages_trends_html);
	case ROUTE_SPECS:
		return page(c, pages_specs_json(d), !r.api, pages_specs_html);
	case ROUTE_NO_JOB:
		return http__error(c, 404, "no such job");
	case ROUTE_NONE:
		break;
	}
	*handled = false;
	return MHD_NO;
}
