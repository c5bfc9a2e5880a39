/* Tests of the dashboard's pages as pure rendering (pages*.c's HTML from the JSON twin): the
 * funnel from the changed files on the index and the job page, the job page's report downloads,
 * the queue and run time charts of /trends (a gap where a job has no value), and /specs' three
 * drift lists with upstream text escaped, and the flaky cases. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "pages.h"

static char *render(int (*fn)(struct buf *, const json_t *), const char *json)
{
	json_error_t e;
	json_t *v = json_loads(json, 0, &e);
	cr_assert_not_null(v, "%s", e.text);
	struct buf b;
	buf_init(&b, PAGES_HTML_MAX);
	cr_assert_eq(fn(&b, v), 0);
	json_decref(v);
	buf_append(&b, "", 0);
	return buf_detach(&b);
}

static void has(const char *html, const char *want)
{
	cr_assert_not_null(strstr(html, want), "missing %s in:\n%s", want, html);
}

/* The part of `html` from the chart titled `title` to its </svg>. */
static char *chart_of(const char *html, const char *title)
{
	char open[128];
	snprintf(open, sizeof(open), "<title>%s</title>", title);
	const char *a = strstr(html, open), *z = a ? strstr(a, "</svg>") : NULL;
	cr_assert(a && z, "no chart %s", title);
	return strndup(a, (size_t)(z - a));
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

Test(pages, job_funnel_starts_from_the_changed_files)
{
	char *h = render(pages_job_html,
			 "{\"id\":7,\"state\":\"reported\",\"funnel\":{\"tests\":100,"
			 "\"changed_files\":3,\"impacted\":40,\"eligible\":20,\"scheduled\":10}}");
	has(h, "<th>changed files</th><td class=\"num\">3 files</td>");
	has(h, "<th>impacted</th><td class=\"num\">40 tests</td><td style=\"width:70%\"><div "
	       "class=\"bar\" style=\"width:100.0%\">");
	has(h, "<th>eligible</th><td class=\"num\">20 tests</td><td style=\"width:70%\"><div "
	       "class=\"bar\" style=\"width:50.0%\">");
	has(h, "<th>scheduled</th><td class=\"num\">10 tests</td><td style=\"width:70%\"><div "
	       "class=\"bar\" style=\"width:25.0%\">");
	cr_assert_null(strstr(h, "candidates"));
	free(h);
	/* a report written before it carried the count: said so, not drawn as 0 */
	h = render(pages_job_html, "{\"id\":7,\"state\":\"reported\",\"funnel\":{\"tests\":9,"
				   "\"changed_files\":null,\"impacted\":1,\"eligible\":1,"
				   "\"scheduled\":1}}");
	has(h, "<th>changed files</th><td class=\"muted\">-</td><td class=\"muted\">not in this "
	       "selection's report</td>");
	free(h);
}

Test(pages, job_page_links_both_reports)
{
	char *h = render(pages_job_html, "{\"id\":42,\"state\":\"reported\"}");
	has(h, "<a href=\"/jobs/42/junit.xml\" download>junit.xml</a>");
	has(h, "<a href=\"/jobs/42/results.jsonl\" download>results.jsonl</a>");
	free(h);
}

Test(pages, index_funnel_columns_from_the_changed_files)
{
	char *h = render(pages_index_html,
			 "{\"jobs\":[{\"id\":5,\"state\":\"reported\",\"short\":\"abc\","
			 "\"funnel\":{\"tests\":9,\"changed_files\":2,\"impacted\":8,"
			 "\"eligible\":6,\"scheduled\":4}},{\"id\":4,\"state\":\"queued\","
			 "\"short\":\"def\",\"funnel\":null}]}");
	has(h, "<th>changed files</th><th>impacted</th><th>eligible</th><th>scheduled</th>");
	has(h, "<td class=\"num\">2</td><td class=\"num\">8</td><td class=\"num\">6</td>"
	       "<td class=\"num\">4</td>");
	has(h, "<td class=\"num muted\">-</td><td class=\"num muted\">-</td>");
	free(h);
}

Test(pages, trends_chart_queue_and_run_time_with_gaps)
{
	char *h = render(pages_trends_html,
			 "{\"jobs\":[{\"id\":1,\"queue_s\":0.5,\"run_s\":2.0},"
			 "{\"id\":2,\"queue_s\":1.0,\"run_s\":null},"
			 "{\"id\":3,\"queue_s\":2.5,\"run_s\":4.0}],\"flaky\":[{\"case\":"
			 "\"T::<x>\",\"jobs\":2},{\"case\":\"T::y\",\"jobs\":1}]}");
	char *q = chart_of(h, "Queue time (s)"), *r = chart_of(h, "Run time (s)");
	/* every job has a queue time: one line through three points, the top label its max */
	cr_assert_eq(count(q, "<polyline"), 1, "%s", q);
	cr_assert_eq(count(q, "<circle"), 3, "%s", q);
	has(q, ">2.5 s</text>");
	has(q, "<title>job #3: 2.5 s</title>");
	/* job 2 has not ended: a gap, two lines of one point each */
	cr_assert_eq(count(r, "<polyline"), 2, "%s", r);
	cr_assert_eq(count(r, "<circle"), 2, "%s", r);
	cr_assert_null(strstr(r, "job #2:"));
	has(h, "<code>T::&lt;x&gt;</code> flaky in 2 jobs</div>");
	has(h, "<code>T::y</code> flaky in 1 job</div>");
	free(q);
	free(r);
	free(h);
	h = render(pages_trends_html, "{\"jobs\":[{\"id\":1,\"queue_s\":null,\"run_s\":null}],"
				      "\"flaky\":[]}");
	q = chart_of(h, "Queue time (s)");
	has(q, "no data yet");
	cr_assert_null(strstr(q, "<polyline"));
	free(q);
	free(h);
}

Test(pages, specs_lists_the_three_kinds_of_drift_escaped)
{
	char *h = render(
	    pages_specs_html,
	    "{\"from_job\":9,\"unlisted\":[{\"kind\":\"unlisted\",\"test\":\"test/t.py::T::"
	    "test_<script>x</script>\",\"where\":\"s.yaml:3\",\"mode\":\"skip\"}],"
	    "\"stale\":[{\"kind\":\"stale\",\"test\":\"T::test_gone\",\"where\":\"s.yaml:9\","
	    "\"mode\":null},{\"kind\":\"stale\",\"test\":\"T::test_old\",\"where\":\"s.yaml:12\","
	    "\"mode\":null}],\"unsupported_ops\":[{\"op\":\"frob<b>\",\"cases\":1},"
	    "{\"op\":\"cumsum\",\"cases\":4}]}");
	has(h, "<a href=\"/jobs/9\">job #9</a>");
	has(h, "New upstream tests under an unlisted mode (1)");
	has(h, "test/t.py::T::test_&lt;script&gt;x&lt;/script&gt;</td><td class=\"mono\">s.yaml:3"
	       "</td><td class=\"mono\">skip</td>");
	has(h, "Spec entries that match no test any more (2)");
	has(h, "T::test_gone</td><td class=\"mono\">s.yaml:9</td><td class=\"mono\">-</td>");
	has(h, "<code>frob&lt;b&gt;</code>: 1 case (an adapter or an emulator op would run it)");
	has(h, "<code>cumsum</code>: 4 cases (an adapter or an emulator op would run them)");
	cr_assert_null(strstr(h, "<script>"));
	cr_assert_null(strstr(h, "frob<b>"));
	free(h);
	h = render(pages_specs_html,
		   "{\"from_job\":null,\"unlisted\":[],\"stale\":[],\"unsupported_ops\":[]}");
	has(h, "no selection recorded yet");
	has(h, "New upstream tests under an unlisted mode (0)");
	has(h, "no case was skipped for an op the device stack lacks");
	free(h);
}
