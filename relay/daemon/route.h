/* What a request's path names, decided before anything is read: the percent-decoding the HTTP
 * server applies to paths and query arguments, and the dashboard's page routes. Both take
 * bytes straight from the network. */
#ifndef RELAY_DAEMON_ROUTE_H
#define RELAY_DAEMON_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes %HH in place and returns the new length. An escape that would make a NUL (%00) or is
 * not two hex digits is left as it is: a decoded NUL would cut the C string the routes see, so
 * that "/jobs/2/junit.xml%00anything" would read as "/jobs/2/junit.xml". */
size_t route_unescape(char *s);

enum route_page {
	ROUTE_NONE = 0, /* not a dashboard page: 404 */
	ROUTE_INDEX,    /* / and /api/dashboard */
	ROUTE_JOB,      /* /jobs/{id} and /api/dashboard/jobs/{id} */
	ROUTE_DOWNLOAD, /* /jobs/{id}/{results.jsonl|junit.xml} (no JSON twin) */
	ROUTE_TRENDS,
	ROUTE_SPECS,
	ROUTE_NO_JOB, /* under /jobs/ (or its twin) but no job path: 404 "no such job" */
};

/* The reports a job's page links to: a fixed name each, served from the job's reports
 * directory; the request only picks one of these entries. */
struct route_download {
	const char *name, *type;
};
extern const struct route_download route_downloads[2];

struct route {
	enum route_page page;
	bool api;                              /* under /api/dashboard: the JSON twin */
	int64_t job_id;                        /* ROUTE_JOB, ROUTE_DOWNLOAD: >= 1 */
	const struct route_download *download; /* ROUTE_DOWNLOAD */
};

/* Reads a decoded path. A job id is digits only, 1 to INT64_MAX, nothing after it but one
 * of the download names; anything else under /jobs/ is ROUTE_NO_JOB, elsewhere ROUTE_NONE. */
void route_page(struct route *r, const char *url);

#endif
