/* A --history file (funnel.h: funnel_history_load): stage 4's history of each test (failed
 * before, flaky, its mean duration) and the same durations for the shard plan. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "funnel/funnel.h"

void funnel_history_finish(struct funnel_history *h)
{
	free(h->h.v);
	free(h->durations);
	json_decref(h->json);
	memset(h, 0, sizeof *h);
}

/* {failed_before: bool, flaky: bool, mean_seconds: N >= 0}, each optional: a flag of another
 * type ("true", 1) would silently read as false, a negative duration would cost less than none. */
static bool good_entry(const json_t *e)
{
	const json_t *secs = json_object_get(e, "mean_seconds");
	const json_t *failed = json_object_get(e, "failed_before"),
		     *flaky = json_object_get(e, "flaky");
	return json_is_object(e) &&
	       (!secs || (json_is_number(secs) && json_number_value(secs) >= 0)) &&
	       (!failed || json_is_boolean(failed)) && (!flaky || json_is_boolean(flaky));
}

static int read_entries(struct funnel_history *out, const char *path)
{
	size_t n = json_object_size(out->json);
	out->h.v = calloc(n + 1, sizeof *out->h.v);
	out->durations = calloc(n + 1, sizeof *out->durations);
	if (!out->h.v || !out->durations)
		return err_set(ERR_NOMEM, "--history %s", path);
	const char *id;
	json_t *e;
	json_object_foreach(out->json, id, e)
	{
		json_t *secs = json_object_get(e, "mean_seconds");
		if (!good_entry(e))
			return err_set(ERR_INVAL,
				       "--history %s: '%s': want {\"failed_before\": bool, "
				       "\"flaky\": bool, \"mean_seconds\": N >= 0}",
				       path, id);
		double mean = secs ? json_number_value(secs) : 0;
		out->h.v[out->h.n++] = (struct select_history_entry){
			.id = id,
			.failed_before = jx_get_bool(e, "failed_before", false),
			.flaky = jx_get_bool(e, "flaky", false),
			.mean_seconds = mean,
		};
		out->durations[out->n_durations++] = (struct exec_duration){ id, mean };
	}
	selector_history_sort(&out->h);
	return 0;
}

int funnel_history_load(struct funnel_history *out, const char *path)
{
	memset(out, 0, sizeof *out);
	if (!path)
		return 0;
	char *data = NULL;
	size_t len = 0;
	int rc = fs_read_file(&data, &len, path, SELECT_HISTORY_MAX);
	if (rc < 0)
		return err_prefix("--history %s: ", path);
	out->json = jx_loadb(data, len, SELECT_HISTORY_MAX);
	free(data);
	if (!out->json)
		rc = err_prefix("--history %s", path);
	else if (!json_is_object(out->json))
		rc = err_set(ERR_INVAL, "--history %s: not a JSON object of test ids", path);
	else
		rc = read_entries(out, path);
	if (rc < 0)
		funnel_history_finish(out);
	return rc;
}
