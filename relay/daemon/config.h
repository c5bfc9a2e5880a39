/* The daemon's configuration: one YAML file, read through a table of keys (config.c) that says
 * each key's type, bounds, default and whether SIGHUP reloads it. An unknown key, a duplicate key
 * or a bad value is an error naming file:line:col. docs/configuration.md is the reference. */
#ifndef RELAY_DAEMON_CONFIG_H
#define RELAY_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct config_list {
	char **v;
	size_t n;
};

struct config {
	char *listen; /* host:port as written */
	char listen_host[64];
	int listen_port;
	int http_connections_max;
	char *state_dir;
	char *log_level;

	char *upstream_repo; /* owner/name: deliveries for any other repository are ignored */
	char *upstream_url;
	struct config_list branches;
	int poll_interval_s;
	int poll_backoff_max_s;

	char *webhook_secret_file;
	char *webhook_dispatch_repo;     /* "" accepts repository_dispatch from any repository */
	bool accept_tags, accept_ciflow; /* deleted refs never make a job */

	struct config_list specs;
	char *selection_budget;
	int selection_shards;

	int workers;
	int lease_s;
	int max_attempts;
	int executor_jobs;
	int executor_timeout_s;
	uint64_t executor_memory_max;

	char *crcr_url, *crcr_token_file;
	char *hud_url, *hud_token_file;
	char *receiver_token_file; /* read per request by the built-in receiver; never logged */
	int outbox_retry_max_s;

	int retention_jobs_days;
	int retention_reports_days;

	/* Read from webhook_secret_file when the file is loaded; never logged. */
	char *secret;
	size_t secret_len;
	char *path; /* the file this came from */
};

/* Fills every key with its default (no secret). */
int config_defaults(struct config *c);

/* Loads `path` over the defaults and reads the webhook secret. 0, or ERR_INVAL / ERR_LIMIT /
 * ERR_IO with err_last() "file:line:col: key: what" (or "file: what"). */
int config_load(struct config *c, const char *path);

/* The same from text in memory (the fuzz target and tests); reads no secret file. */
int config_parse(struct config *c, const char *file, const char *text, size_t len);

void config_finish(struct config *c);

/* Copies into `next` the keys of `cur` that SIGHUP cannot change, logging each one that the new
 * file tried to change ("needs a restart"). Returns how many were kept. */
int config_keep_fixed(struct config *next, const struct config *cur);

/* Writes the reference table (key, type, default, reloadable, meaning) as Markdown rows. */
void config_write_reference(FILE *out);

#endif
