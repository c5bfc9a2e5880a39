/* The funnel's last step (funnel.h: funnel_report_messages, funnel_report_queue): a job's
 * results directory becomes the dashboard's messages (dashboard-client's encoders), queued in
 * an outbox. The daemon's jobs, `spyre-ci run --post` and `spyre-ci report` all go through
 * here, so a job's messages and their keys are made one way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "dashboard-client/job.h"
#include "funnel/funnel.h"

static int replace(char **field, const char *value)
{
	if (!value)
		return 0;
	char *copy = strdup(value);
	if (!copy)
		return err_set(ERR_NOMEM, "out of memory");
	free(*field);
	*field = copy;
	return 0;
}

static void messages_free(struct dc_message *ms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dc_message_finish(&ms[i]);
	free(ms);
}

int funnel_report_messages(struct dc_message **out, size_t *n, const struct funnel_report *r,
			   enum dc_format format)
{
	char path[PATH_TEXT_MAX];
	struct dc_job job;
	struct dc_results res = { 0 };
	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/job.json", r->dir);
	int rc = dc_job_load(&job, path);
	if (rc)
		return rc;
	rc = replace(&job.conclusion, r->conclusion);
	if (rc == 0)
		rc = replace(&job.completed_at, r->completed_at);
	snprintf(path, sizeof(path), "%s/results.jsonl", r->dir);
	if (rc == 0 && r->with_results)
		rc = dc_results_load(&res, path);
	struct dc_message *ms = NULL;
	size_t all = 0, k = 0;
	if (rc == 0)
		rc = dc_job_messages(&ms, &all, &job, &res, format);
	for (size_t i = 0; rc == 0 && i < all; i++) {
		if (r->statuses && !(r->statuses & FUNNEL_STATUS(ms[i].status))) {
			dc_message_finish(&ms[i]);
			continue;
		}
		ms[k++] = ms[i];
	}
	dc_results_finish(&res);
	dc_job_finish(&job);
	if (rc) {
		messages_free(ms, all);
		return rc;
	}
	*out = ms;
	*n = k;
	return 0;
}

int funnel_report_queue(struct dc_outbox *ob, const char *target, enum dc_format format,
			const struct funnel_report *r, size_t *added)
{
	struct dc_message *ms = NULL;
	size_t n = 0, count = 0;
	int rc = funnel_report_messages(&ms, &n, r, format);
	if (rc == 0 && n)
		rc = ob->ops->enqueue_many(ob, target, ms, n, &count);
	messages_free(ms, n);
	if (added)
		*added = rc == 0 ? count : 0;
	return rc;
}
