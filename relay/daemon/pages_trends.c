/* /trends (inline SVG charts over the last N jobs: pass rate, selection size as a share of all
 * tests, queue and run time, flaky cases) and /specs (spec drift from the newest selection and
 * the ops the device stack lacks), rendered from pages_api.c's JSON. The charts are plain SVG
 * in the page: no script, no external asset. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonx.h"
#include "html.h"
#include "pages.h"

#define SVG_W   640
#define SVG_H   180
#define SVG_PAD 48

struct chart {
	const char *title; /* also the SVG's accessible title */
	const char *key;   /* the value in each job's point */
	const char *unit;  /* "%" scales 0..1 to percent */
};

static double max_of(const json_t *pts, const char *key)
{
	double m = 0;
	size_t i;
	const json_t *p;
	json_array_foreach(pts, i, p)
	{
		const json_t *x = json_object_get(p, key);
		if (json_is_number(x) && json_number_value(x) > m)
			m = json_number_value(x);
	}
	return m;
}

static int axes(struct buf *b, const struct chart *c, double top)
{
	int rc = buf_appendf(
	    b,
	    "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
	    "xmlns=\"http://www.w3.org/2000/svg\"><title>%s</title>"
	    "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"600\">%s</text>"
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#99a\"/>"
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#99a\"/>",
	    SVG_W, SVG_H, SVG_W, SVG_H, c->title, SVG_PAD, c->title, SVG_PAD, SVG_H - SVG_PAD,
	    SVG_W - 10, SVG_H - SVG_PAD, SVG_PAD, 28, SVG_PAD, SVG_H - SVG_PAD);
	if (rc == 0)
		rc = buf_appendf(
		    b,
		    "<text x=\"4\" y=\"36\" font-size=\"11\">%.3g%s</text><text x=\"4\" "
		    "y=\"%d\" font-size=\"11\">0</text>",
		    strcmp(c->unit, "%") ? top : top * 100, c->unit, SVG_H - SVG_PAD);
	return rc;
}

/* A point's marker, with its value as a tooltip. */
static int dots_add(struct buf *dots, double px, double py, double v, const char *unit,
		    json_int_t id)
{
	bool pct = !strcmp(unit, "%");
	return buf_appendf(dots,
			   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#4a7bd0\"><title>job "
			   "#%lld: %.3g%s</title></circle>",
			   px, py, (long long)id, pct ? v * 100 : v, unit);
}

/* One line chart; a job without the value leaves a gap. */
static int chart_draw(struct buf *b, const json_t *pts, const struct chart *c, struct buf *dots)
{
	double top = strcmp(c->unit, "%") ? max_of(pts, c->key) : 1.0;
	size_t n = json_array_size(pts), i;
	int rc = axes(b, c, top > 0 ? top : 1);
	if (top <= 0)
		top = 1;
	double span = (double)(SVG_W - SVG_PAD - 20), h = (double)(SVG_H - SVG_PAD - 32);
	bool open = false, any = false;
	const json_t *p;
	json_array_foreach(pts, i, p)
	{
		const json_t *x = json_object_get(p, c->key);
		if (!json_is_number(x)) {
			if (rc == 0 && open)
				rc = buf_append_str(b, "\"/>");
			open = false;
			continue;
		}
		double px = SVG_PAD + 10 + (n > 1 ? span * (double)i / (double)(n - 1) : span / 2);
		double py = (double)(SVG_H - SVG_PAD) - h * json_number_value(x) / top;
		if (rc == 0 && !open)
			rc = buf_append_str(b, "<polyline fill=\"none\" stroke=\"#4a7bd0\" "
					       "stroke-width=\"2\" points=\"");
		if (rc == 0)
			rc = buf_appendf(b, "%.1f,%.1f ", px, py);
		if (rc == 0)
			rc = dots_add(dots, px, py, json_number_value(x), c->unit,
				      json_integer_value(json_object_get(p, "id")));
		open = any = true;
	}
	if (rc == 0 && open)
		rc = buf_append_str(b, "\"/>");
	if (rc == 0 && dots->len)
		rc = buf_append(b, dots->data, dots->len);
	if (rc == 0 && !any)
		rc =
		    buf_appendf(b,
				"<text x=\"%d\" y=\"%d\" font-size=\"13\" fill=\"#5d6776\">no data "
				"yet</text>",
				SVG_W / 2 - 40, SVG_H / 2);
	if (rc == 0 && n)
		rc = buf_appendf(
		    b,
		    "<text x=\"%d\" y=\"%d\" font-size=\"11\">job #%lld</text><text "
		    "x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">job #%lld"
		    "</text>",
		    SVG_PAD, SVG_H - 12,
		    (long long)json_integer_value(jx_get(json_array_get(pts, 0), "id")), SVG_W - 10,
		    SVG_H - 12,
		    (long long)json_integer_value(jx_get(json_array_get(pts, n - 1), "id")));
	return rc == 0 ? buf_append_str(b, "</svg>\n") : rc;
}

static int chart(struct buf *b, const json_t *pts, const struct chart *c)
{
	struct buf dots;
	buf_init(&dots, PAGES_HTML_MAX);
	int rc = chart_draw(b, pts, c, &dots);
	buf_finish(&dots);
	return rc;
}

int pages_trends_html(struct buf *b, const json_t *v)
{
	static const struct chart charts[] = {
		{ "Pass rate", "pass_rate", "%" },
		{ "Selection size (share of all tests)", "selected_share", "%" },
		{ "Queue time (s)", "queue_s", " s" },
		{ "Run time (s)", "run_s", " s" },
	};
	const json_t *pts = json_object_get(v, "jobs");
	int rc = html_begin(b, "trends", 0);
	if (rc == 0)
		rc = buf_appendf(b, "<h1>Trends over the last %zu jobs</h1>\n",
				 json_array_size(pts));
	if (rc == 0)
		rc = buf_append_str(b, "<div class=\"charts\">\n");
	for (size_t i = 0; rc == 0 && i < sizeof(charts) / sizeof(charts[0]); i++)
		rc = chart(b, pts, &charts[i]);
	if (rc == 0)
		rc = buf_append_str(b, "</div>\n");
	if (rc == 0)
		rc = buf_append_str(b, "<h2>Flaky cases</h2>\n");
	const json_t *fl = json_object_get(v, "flaky"), *f;
	if (rc == 0 && json_array_size(fl) == 0)
		rc = buf_append_str(b, "<p class=\"muted\">no case passed only on its retry</p>\n");
	size_t i;
	json_array_foreach(fl, i, f)
	{
		if (rc == 0)
			rc = buf_append_str(b, "<div><code>");
		if (rc == 0)
			rc = html_text(b, jx_get_str(f, "case"));
		long long n = (long long)json_integer_value(json_object_get(f, "jobs"));
		if (rc == 0)
			rc = buf_appendf(b, "</code> flaky in %lld job%s</div>\n", n,
					 n == 1 ? "" : "s");
	}
	return rc == 0 ? html_end(b) : rc;
}

static int drift_table(struct buf *b, const json_t *list, const char *title, const char *empty,
		       const char *advice)
{
	int rc = buf_appendf(b, "<h2>%s (%zu)</h2>\n", title, json_array_size(list));
	if (rc == 0 && json_array_size(list) == 0)
		return buf_appendf(b, "<p class=\"muted\">%s</p>\n", empty);
	if (rc == 0)
		rc = buf_appendf(b,
				 "<p>%s</p><div class=\"box\"><table><tr><th>test</th><th>where"
				 "</th><th>mode</th></tr>\n",
				 advice);
	size_t i;
	const json_t *e;
	json_array_foreach(list, i, e)
	{
		const char *cols[] = { jx_get_str(e, "test"), jx_get_str(e, "where"),
				       jx_get_str(e, "mode") };
		if (rc == 0)
			rc = buf_append_str(b, "<tr>");
		for (int k = 0; rc == 0 && k < 3; k++) {
			rc = buf_append_str(b, "<td class=\"mono\">");
			if (rc == 0)
				rc = html_text(b, cols[k] ? cols[k] : "-");
			if (rc == 0)
				rc = buf_append_str(b, "</td>");
		}
		if (rc == 0)
			rc = buf_append_str(b, "</tr>\n");
	}
	return rc == 0 ? buf_append_str(b, "</table></div>\n") : rc;
}

int pages_specs_html(struct buf *b, const json_t *v)
{
	int rc = html_begin(b, "specs", 0);
	const json_t *from = json_object_get(v, "from_job");
	if (rc == 0 && json_is_integer(from))
		rc = buf_appendf(b,
				 "<h1>Spec drift</h1><p class=\"muted\">from the newest selection, "
				 "<a href=\"/jobs/%lld\">job #%lld</a></p>\n",
				 (long long)json_integer_value(from),
				 (long long)json_integer_value(from));
	else if (rc == 0)
		rc =
		    buf_append_str(b, "<h1>Spec drift</h1><p class=\"muted\">no selection recorded "
				      "yet</p>\n");
	if (rc == 0)
		rc = drift_table(b, json_object_get(v, "unlisted"),
				 "New upstream tests under an unlisted mode",
				 "every new test the selection saw is covered by a spec entry",
				 "Add a spec entry for each (or an explicit skip), so the decision "
				 "is written down.");
	if (rc == 0)
		rc = drift_table(
		    b, json_object_get(v, "stale"), "Spec entries that match no test any more",
		    "every spec entry still names a test",
		    "Rename or delete these entries: upstream renamed or removed the test.");
	if (rc == 0)
		rc = buf_append_str(b, "<h2>Unsupported ops by count</h2>\n");
	const json_t *ops = json_object_get(v, "unsupported_ops"), *o;
	if (rc == 0 && json_array_size(ops) == 0)
		rc =
		    buf_append_str(b, "<p class=\"muted\">no case was skipped for an op the device "
				      "stack lacks</p>\n");
	size_t i;
	json_array_foreach(ops, i, o)
	{
		long long n = (long long)json_integer_value(json_object_get(o, "cases"));
		if (rc == 0)
			rc = buf_append_str(b, "<div><code>");
		if (rc == 0)
			rc = html_text(b, jx_get_str(o, "op"));
		if (rc == 0)
			rc = buf_appendf(b,
					 "</code>: %lld case%s (an adapter or an emulator op would "
					 "run %s)</div>\n",
					 n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
	}
	return rc == 0 ? html_end(b) : rc;
}
