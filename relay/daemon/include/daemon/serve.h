/* The daemon's public entry points: all that the rest of the program (the command line's `serve`
 * and `demo`) may reach of relay/daemon/. Everything else of the daemon (its threads, store,
 * HTTP server, pages) is private to it, and none of it includes the command line.
 *
 * A daemon is configured by one YAML file (docs/configuration.md). serve_run() is `spyre-ci
 * serve`: it owns the process's signals and returns when told to stop. serve_start() embeds a
 * daemon in a process that keeps its own signals and main loop (`spyre-ci demo`), and lets it
 * look at the jobs as the dashboard shows them. */
#ifndef DAEMON_SERVE_H
#define DAEMON_SERVE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* Loads and validates the configuration file, reading the webhook secret as a start would. 0,
 * or ERR_INVAL / ERR_LIMIT / ERR_IO with "file:line:col: key: what" in err_last(). */
int serve_config_check(const char *path);

/* Every configuration key (type, default, reloadable by SIGHUP, meaning) as Markdown rows. */
void serve_config_reference(FILE *out);

/* Runs the daemon configured by `path` until SIGTERM or SIGINT, then drains (stops accepting,
 * commits what was accepted, lets the workers finish or release their jobs) and returns 0.
 * SIGHUP reloads the file (a bad one is logged and the running configuration stays). The log
 * level comes from the file unless the caller set another than the default. ERR_INVAL and
 * friends when the file is bad (err_last() says where), another negative code when the daemon
 * could not start. */
int serve_run(const char *path);

/* ---- an embedded daemon ---- */

struct serve;

/* Starts the daemon configured by `path` in this process; its signals stay the caller's. */
int serve_start(struct serve **out, const char *path);
/* The port it listens on. */
int serve_port(const struct serve *s);
/* The newest job made for commit `head` (40 hex digits): its id, and its event in `event`
 * (24 bytes). 0 when there is none yet, or a negative code. */
int64_t serve_job_for_head(struct serve *s, const char *head, char event[24]);
/* The job as the dashboard's /api/dashboard/jobs/ID shows it: state, detail, funnel, cases,
 * the reports the dashboard received. NEW reference; json_null() when there is no such job;
 * NULL with err_last() set when the store failed. */
json_t *serve_job_view(struct serve *s, int64_t id);
/* Stops and frees it, as serve_run does at SIGTERM. NULL is a no-op. */
void serve_stop(struct serve *s);

#endif
