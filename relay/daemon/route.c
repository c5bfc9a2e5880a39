/* Request paths (route.h). */
#include "route.h"

#include <string.h>

#include "common/num.h"

const struct route_download route_downloads[2] = {
	{ "results.jsonl", "application/x-ndjson" },
	{ "junit.xml", "application/xml" },
};

size_t route_unescape(char *s)
{
	char *w = s;
	for (const char *r = s; *r; r++) {
		int hi, lo;
		if (r[0] == '%' && (hi = num_hexval(r[1])) >= 0 && (lo = num_hexval(r[2])) >= 0 &&
		    (hi | lo) != 0) {
			*w++ = (char)(hi << 4 | lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
	return (size_t)(w - s);
}

/* {id}[/{download}] after "/jobs/". */
static void job_path(struct route *r, const char *rest)
{
	char digits[24];
	size_t n = strspn(rest, "0123456789");
	if (n == 0 || n >= sizeof(digits) || (rest[n] && rest[n] != '/'))
		return;
	memcpy(digits, rest, n);
	digits[n] = 0;
	const struct route_download *dl = NULL;
	for (size_t i = 0; rest[n] && i < sizeof(route_downloads) / sizeof(route_downloads[0]); i++)
		if (!strcmp(rest + n + 1, route_downloads[i].name))
			dl = &route_downloads[i];
	if ((rest[n] && !dl) || (dl && r->api))
		return;
	if (num_parse_i64(&r->job_id, digits, 1, INT64_MAX) < 0)
		return;
	r->download = dl;
	r->page = dl ? ROUTE_DOWNLOAD : ROUTE_JOB;
}

void route_page(struct route *r, const char *url)
{
	*r = (struct route){ .api = !strncmp(url, "/api/dashboard", 14) };
	const char *p = r->api ? url + 14 : url;
	if (r->api ? !*p : !strcmp(p, "/"))
		r->page = ROUTE_INDEX;
	else if (!strncmp(p, "/jobs/", 6)) {
		r->page = ROUTE_NO_JOB; /* unless the rest is a job's path */
		job_path(r, p + 6);
	} else if (!strcmp(p, "/trends"))
		r->page = ROUTE_TRENDS;
	else if (!strcmp(p, "/specs"))
		r->page = ROUTE_SPECS;
}
