/* The dashboard: each page is built as JSON first (pages_api.c: what the store has, nothing
 * invented) and then rendered to HTML from that JSON (pages.c, pages_trends.c), so every page
 * has its twin under /api/dashboard and the two cannot disagree. */
#ifndef RELAY_DAEMON_PAGES_H
#define RELAY_DAEMON_PAGES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct daemon;

#define PAGES_JOBS_MAX     200 /* jobs on / and in /trends */
#define PAGES_JOBS_DEFAULT 50
#define PAGES_ROWS_MAX     10000 /* results, outbox rows and reports of one job */
#define PAGES_HTML_MAX     (32u << 20)
#define PAGES_REPORT_MAX   (256u << 20) /* a stored selection report */
#define PAGES_REFRESH_S    5
#define PAGES_SVG_POINTS   PAGES_JOBS_MAX

/* Filters of the jobs list: state and branch names as given, or NULL. */
struct pages_filter {
	const char *state, *branch;
	int64_t limit;
};

/* JSON of each page; NULL with err_last() set when the store failed. NEW references. */
json_t *pages_index_json(struct daemon *d, const struct pages_filter *f);
json_t *pages_job_json(struct daemon *d, int64_t id); /* json_null() for no such job */
json_t *pages_trends_json(struct daemon *d, int64_t limit);
json_t *pages_specs_json(struct daemon *d);

/* state_dir/reports/{id}/{name}: where a job's run wrote its reports. `name` is one of the
 * fixed names the caller chose, never text from a request. */
int pages_report_path(struct daemon *d, char *path, size_t size, int64_t id, const char *name);

/* HTML of each page from its JSON. */
int pages_index_html(struct buf *b, const json_t *v);
int pages_job_html(struct buf *b, const json_t *v);
int pages_trends_html(struct buf *b, const json_t *v);
int pages_specs_html(struct buf *b, const json_t *v);

#endif
