/* Fuzz target: request paths as the daemon reads them (relay/daemon/route.c): the
 * percent-decoding the HTTP server applies, then the dashboard's page routes. Invariants: the
 * decoding never lengthens, leaves no NUL inside and is a fixed point on text without '%'; a
 * route names a known page, a job route an id >= 1 written in the path's digits, a download
 * only one of the fixed names and never under /api. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "route.h"

static void must(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	size_t before = strlen(s);
	bool plain = !strchr(s, '%');
	size_t n = route_unescape(s);
	must(n <= before && strlen(s) == n);
	must(!plain || n == before);
	struct route r;
	route_page(&r, s);
	must(r.page >= ROUTE_NONE && r.page <= ROUTE_NO_JOB);
	must(r.page != ROUTE_NO_JOB || strstr(s, "/jobs/") != NULL);
	if (r.page == ROUTE_JOB || r.page == ROUTE_DOWNLOAD) {
		must(r.job_id >= 1);
		must(strstr(s, "/jobs/") != NULL);
	} else {
		must(r.job_id == 0);
	}
	must((r.page == ROUTE_DOWNLOAD) == (r.download != NULL));
	if (r.download) {
		must(!r.api);
		must(r.download == &route_downloads[0] || r.download == &route_downloads[1]);
		size_t k = strlen(r.download->name);
		must(n > k && !strcmp(s + n - k, r.download->name) && s[n - k - 1] == '/');
	}
	free(s);
	return 0;
}
