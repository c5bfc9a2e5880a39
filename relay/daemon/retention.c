/* Retention (retention.h): the store's rows through store->retention, the report directories
 * here. A report directory is flat (the files job.c writes), so removing it is unlinking
 * its files and then the directory; anything else in it (a subdirectory someone put there)
 * makes the rmdir fail, and the directory is left with a warning. */
#include "retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "daemon.h"

#define DAY_MS ((int64_t)24 * 3600 * 1000)

/* The job of a report directory, when its name is a job id. */
static int64_t dir_job(const char *name)
{
	char *end;
	long long id = strtoll(name, &end, 10);
	return *name && !*end && id > 0 ? (int64_t)id : 0;
}

static bool job_busy(struct store *s, int64_t id)
{
	struct job_row j;
	return s->ops->job_get(s, &j, id) == 0 && j.state != JOB_REPORTED && j.state != JOB_FAILED;
}

static int remove_flat(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return err_set_errno(ERR_IO, "reports/%s", name);
	}
	struct dirent *e;
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(fd, e->d_name, 0);
	closedir(dir);
	if (unlinkat(parent, name, AT_REMOVEDIR) != 0)
		return err_set_errno(ERR_IO, "reports/%s", name);
	return 0;
}

static int sweep_reports(struct store *s, const char *state_dir, int64_t before_ms, int64_t *n)
{
	char path[PATH_TEXT_MAX];
	snprintf(path, sizeof(path), "%s/reports", state_dir);
	DIR *dir = opendir(path);
	if (!dir)
		return 0; /* no job has run yet */
	int dfd = dirfd(dir);
	struct dirent *e;
	while ((e = readdir(dir))) {
		int64_t id = dir_job(e->d_name);
		struct stat st;
		if (!id || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		int64_t mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
		if (mtime_ms >= before_ms || job_busy(s, id))
			continue;
		if (remove_flat(dfd, e->d_name) < 0)
			log_warn("retention: %s", err_last());
		else
			(*n)++;
	}
	closedir(dir);
	return 0;
}

int retention_run(struct store *s, const struct config *c, int64_t now_ms,
		  struct retention_stats *st, int64_t *reports)
{
	int64_t n = 0;
	int rc = s->ops->retention(s, now_ms - c->retention_jobs_days * DAY_MS, st);
	if (rc == 0)
		rc =
		    sweep_reports(s, c->state_dir, now_ms - c->retention_reports_days * DAY_MS, &n);
	if (reports)
		*reports = n;
	return rc;
}

void retention_sweep(struct daemon *d, struct store *s, const struct config *c, int64_t now_ms)
{
	struct retention_stats st;
	int64_t reports = 0;
	int rc = retention_run(s, c, now_ms, &st, &reports);
	if (rc < 0) {
		log_error("retention: %s", err_last());
		return;
	}
	atomic_fetch_add(&d->metrics.retention_jobs, (uint64_t)st.jobs);
	atomic_fetch_add(&d->metrics.retention_outbox, (uint64_t)st.outbox);
	if (st.jobs || st.outbox || st.deliveries || reports)
		log_info("retention: removed %lld jobs, %lld deliveries, %lld results, %lld "
			 "outbox messages, %lld report directories",
			 (long long)st.jobs, (long long)st.deliveries, (long long)st.results,
			 (long long)st.outbox, (long long)reports);
}
