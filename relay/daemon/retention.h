/* Retention: on a timer (the outbox sender's thread), delete what is finished and old:
 * reported and failed jobs last changed more than retention.jobs_days ago, with their
 * deliveries, selections and results, delivered or dead outbox messages as old, and report
 * directories (state_dir/reports/JOB/) last written more than retention.reports_days ago.
 * Work in progress is never touched. */
#ifndef RELAY_DAEMON_RETENTION_H
#define RELAY_DAEMON_RETENTION_H

#include <stdint.h>

#include "config.h"
#include "store.h"

#define RETENTION_INTERVAL_MS (10 * 60 * 1000)

struct daemon;

/* One sweep as of `now_ms` (tests pass a time in the future). Deleted report directories are
 * counted in *reports when not NULL. */
int retention_run(struct store *s, const struct config *c, int64_t now_ms,
		  struct retention_stats *st, int64_t *reports);

/* retention_run() on the caller's store handle (the outbox thread's), its outcome logged and
 * counted in the daemon's metrics. */
void retention_sweep(struct daemon *d, struct store *s, const struct config *c, int64_t now_ms);

#endif
