/* `spyre-ci report`: posts (or re-posts) a finished job's results directory to the CRCR relay
 * or to HUD, through a durable outbox beside the results, so that an interrupted or failed
 * report resumes where it stopped and never sends a message twice to a receiver that dedups.
 * docs/report.md is the user's page; dashboard-client/ does the work. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "common/num.h"
#include "dashboard-client/drain.h"
#include "dashboard-client/encode.h"
#include "dashboard-client/outbox.h"
#include "dashboard-client/outbox_sqlite.h"
#include "dashboard-client/transport.h"
#include "funnel/funnel.h"

#define REPORT_PATH_MAX 4096

struct report_args {
	const char *to, *results, *token_file, *token_env, *outbox, *ca_file;
	enum dc_format format;
	long timeout_ms, connect_timeout_ms;
	int64_t horizon_s;
	bool repost, dry_run, json;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const struct cli_command *self(void)
{
	return cli_find("report");
}

static int parse_number(int64_t *out, const char *flag, const char *v, int64_t min, int64_t max)
{
	if (num_parse_i64(out, v, min, max) != 0)
		return cli_usage_error(self(), "%s: %s", flag, err_last());
	return 0;
}

/* One option with a value; 0, or the exit code of a usage error. */
static int parse_valued(struct report_args *a, const char *flag, const char *v)
{
	int64_t n = 0;
	int rc = 0;
	if (!strcmp(flag, "--to"))
		a->to = v;
	else if (!strcmp(flag, "--results"))
		a->results = v;
	else if (!strcmp(flag, "--token-file"))
		a->token_file = v;
	else if (!strcmp(flag, "--token-env"))
		a->token_env = v;
	else if (!strcmp(flag, "--outbox"))
		a->outbox = v;
	else if (!strcmp(flag, "--ca-file"))
		a->ca_file = v;
	else if (!strcmp(flag, "--format")) {
		if (dc_format_parse(&a->format, v) != 0)
			return cli_usage_error(self(), "--format: %s", err_last());
	} else if (!strcmp(flag, "--timeout")) {
		if (!(rc = parse_number(&n, flag, v, 1, 3600)))
			a->timeout_ms = (long)n * 1000;
	} else if (!strcmp(flag, "--connect-timeout")) {
		if (!(rc = parse_number(&n, flag, v, 1, 600)))
			a->connect_timeout_ms = (long)n * 1000;
	} else if (!strcmp(flag, "--horizon")) {
		rc = parse_number(&a->horizon_s, flag, v, 0, 7 * 86400);
	} else {
		return cli_usage_error(self(), "unknown option %s", flag);
	}
	return rc;
}

static int parse_args(struct report_args *a, int argc, char **argv)
{
	*a = (struct report_args){ .format = DC_FORMAT_CRCR,
				   .timeout_ms = 30000,
				   .connect_timeout_ms = 10000,
				   .horizon_s = 600 };
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i];
		if (!strcmp(f, "--repost"))
			a->repost = true;
		else if (!strcmp(f, "--dry-run"))
			a->dry_run = true;
		else if (!strcmp(f, "--json"))
			a->json = true;
		else if (i + 1 >= argc || f[0] != '-')
			return cli_usage_error(self(), "unknown option or missing value: %s", f);
		else if (parse_valued(a, f, argv[++i]) != 0)
			return CLI_USAGE;
	}
	if (!a->results)
		return cli_usage_error(self(), "--results DIR is required");
	if (a->dry_run)
		return 0;
	if (!a->to)
		return cli_usage_error(self(), "--to URL is required (or --dry-run)");
	if (!a->token_file == !a->token_env)
		return cli_usage_error(self(), "give the token with exactly one of --token-file "
					       "FILE and --token-env NAME");
	return 0;
}

/* The receiver's answer as one printable line: control bytes shown as '?', cut at 512. */
static void print_answer(FILE *out, const char *body)
{
	size_t n = 0;
	for (const char *p = body; p && *p && n < 512; p++, n++)
		fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, out);
	if (body && strlen(body) > 512)
		fputs("...", out);
}

static void print_dead(const struct dc_dead_letter *d, void *ctx)
{
	json_t *list = ctx;
	if (list) {
		json_t *o = json_pack("{s:s, s:s, s:i, s:I, s:s?, s:s?}", "key", d->key, "status",
				      d->seq ? "completed" : "in_progress", "attempts", d->attempts,
				      "http_status", (json_int_t)d->status, "error", d->error,
				      "answer", d->body);
		jx_append_new(list, o);
		return;
	}
	fprintf(stderr, "dead letter %s (%s, %d attempts): %s", d->key,
		d->seq ? "completed" : "in_progress", d->attempts, d->error ? d->error : "?");
	if (d->body) {
		fputs("; the receiver said: ", stderr);
		print_answer(stderr, d->body);
	}
	fputc('\n', stderr);
}

static int print_summary(struct dc_outbox *ob, const struct report_args *a,
			 const struct dc_drain_stats *st, const struct dc_outbox_counts *c)
{
	if (a->json) {
		json_t *dead = json_array();
		ob->ops->each_dead(ob, a->to, print_dead, dead);
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "to", a->to,
				      "format", dc_format_name(a->format), "posts",
				      (json_int_t)st->posts, "delivered", (json_int_t)c->delivered,
				      "already_recorded", (json_int_t)st->already, "retries",
				      (json_int_t)st->retries, "dead", (json_int_t)c->dead,
				      "pending", (json_int_t)c->pending, "dead_letters", dead);
		char *text = j ? jx_dumps(j) : NULL;
		json_decref(j);
		if (!text)
			return CLI_FAILED;
		puts(text);
		free(text);
	} else {
		ob->ops->each_dead(ob, a->to, print_dead, NULL);
		printf(
		    "%s: %" PRIu64 " delivered (%" PRIu64 " of them already recorded), %" PRIu64
		    " dead-lettered, %" PRIu64 " pending; %" PRIu64 " posts, %" PRIu64 " retried\n",
		    a->to, c->delivered, st->already, c->dead, c->pending, st->posts, st->retries);
	}
	return c->dead || c->pending ? CLI_FAILED : CLI_OK;
}

static int dry_run(const struct report_args *a)
{
	struct dc_message *ms = NULL;
	size_t n = 0;
	struct funnel_report r = { .dir = a->results, .with_results = true };
	if (funnel_report_messages(&ms, &n, &r, a->format) != 0) {
		fprintf(stderr, "spyre-ci report: %s\n", err_last());
		return CLI_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", ms[i].body);
		dc_message_finish(&ms[i]);
	}
	free(ms);
	return CLI_OK;
}

static int enqueue_all(struct dc_outbox *ob, const struct report_args *a)
{
	struct funnel_report r = { .dir = a->results, .with_results = true };
	int rc = funnel_report_queue(ob, a->to, a->format, &r, NULL);
	uint64_t again = 0;
	if (rc == 0 && a->repost)
		rc = ob->ops->requeue(ob, a->to, &again);
	return rc;
}

static int create_transport(struct dc_transport **t, const struct report_args *a, const char *token)
{
	struct dc_target_opts to = { .url = a->to,
				     .format = a->format,
				     .token = token,
				     .ca_file = a->ca_file,
				     .user_agent = "spyre-ci/" SPYRE_CI_VERSION,
				     .connect_timeout_ms = a->connect_timeout_ms,
				     .timeout_ms = a->timeout_ms };
	if (dc_transport_create(t, &to) != 0) {
		fprintf(stderr, "spyre-ci report: --to %s: %s\n", a->to, err_last());
		return CLI_USAGE;
	}
	return 0;
}

static int send_all(struct dc_outbox *ob, struct dc_transport *t, const struct report_args *a)
{
	struct dc_drain_opts o = { .policy = dc_retry_policy_default(),
				   .clock = dc_clock_system(),
				   .stop = &stop_requested };
	o.policy.horizon_ms = a->horizon_s * 1000;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct dc_drain_stats st = { 0 };
	int rc = dc_drain(ob, t, a->to, &o, &st);
	if (rc && rc != ERR_BADSTATE) {
		fprintf(stderr, "spyre-ci report: %s\n", err_last());
		return CLI_FAILED;
	}
	if (rc == ERR_BADSTATE)
		fprintf(stderr, "spyre-ci report: stopped; run the same command again to resume\n");
	struct dc_outbox_counts c;
	if (ob->ops->counts(ob, a->to, &c) != 0) {
		fprintf(stderr, "spyre-ci report: %s\n", err_last());
		return CLI_FAILED;
	}
	return print_summary(ob, a, &st, &c);
}

int cmd_report_main(int argc, char **argv)
{
	struct report_args a;
	if (parse_args(&a, argc, argv) != 0)
		return CLI_USAGE;
	if (a.dry_run)
		return dry_run(&a);
	char *token = NULL;
	int rc = a.token_file ? dc_token_read_file(&token, a.token_file)
			      : dc_token_read_env(&token, a.token_env);
	if (rc) {
		fprintf(stderr, "spyre-ci report: %s\n", err_last());
		return CLI_USAGE;
	}
	/* The URL and the token are checked before anything is queued for them. */
	struct dc_transport *t = NULL;
	int exit_code = create_transport(&t, &a, token);
	dc_token_free(token); /* the transport holds its own copy in its header */
	if (exit_code)
		return exit_code;
	char outbox_path[REPORT_PATH_MAX];
	snprintf(outbox_path, sizeof(outbox_path), "%s/outbox.sqlite", a.results);
	struct dc_outbox *ob = NULL;
	if (dc_outbox_sqlite_open(&ob, a.outbox ? a.outbox : outbox_path) != 0) {
		fprintf(stderr, "spyre-ci report: %s\n", err_last());
		exit_code = CLI_FAILED;
	} else if (enqueue_all(ob, &a) != 0) {
		fprintf(stderr, "spyre-ci report: %s\n", err_last());
		exit_code = err_last_code() == ERR_IO ? CLI_FAILED : CLI_USAGE;
	} else {
		exit_code = send_all(ob, t, &a);
	}
	dc_outbox_destroy(ob);
	dc_transport_destroy(t);
	return exit_code;
}

const char cmd_report_summary[] =
    "post a finished job's results to the CRCR relay or to HUD, exactly once, resumable";

const char cmd_report_help[] =
    "Usage: spyre-ci report --to URL --results DIR (--token-file FILE | --token-env NAME)\n"
    "                       [--format crcr|hud] [--outbox FILE] [--ca-file FILE] [--repost]\n"
    "                       [--timeout S] [--connect-timeout S] [--horizon S] [--json]\n"
    "       spyre-ci report --results DIR --dry-run [--format crcr|hud]\n"
    "\n"
    "Reads a finished job's results directory and posts what the dashboard must know:\n"
    "  crcr  the CRCR callback (schema version 1) to the relay's /github/callback: in_progress,\n"
    "        then completed (a nightly or periodic run: completed only); Authorization: Bearer\n"
    "  hud   the same callbacks inside HUD's envelope (trusted / untrusted) to\n"
    "        /api/crcr/results, with the x-hud-internal-bot header\n"
    "The completed message carries test_results (passed / failed / skipped) and\n"
    "failed_tests_json (at most 1,000 failures, message 1 KiB, stack trace 4 KiB).\n"
    "\n"
    "The results directory (docs/report.md has every field):\n"
    "  DIR/job.json        the job: event_type, delivery_id, payload (the dispatch payload to\n"
    "                      echo), workflow {name, url, run_id, run_attempt, job_name,\n"
    "                      check_run_id, started_at, completed_at, artifact_url, conclusion?},\n"
    "                      hud {verified_repo, downstream_repo_level, queue_time?, ...}\n"
    "  DIR/results.jsonl   one object per test: name, classname, file, time, outcome (passed,\n"
    "                      failed, error, skipped, xfailed, xpassed, crashed, timed_out),\n"
    "                      message, stacktrace\n"
    "  DIR/outbox.sqlite   written by this command: what was sent, what is left\n"
    "\n"
    "Every message goes through the outbox first and carries an Idempotency-Key derived from\n"
    "the job and the transition, so running the command again resumes an interrupted report\n"
    "and sends nothing that was delivered. 5xx, 408, 429 (Retry-After honoured), timeouts and\n"
    "connection errors are retried with exponential backoff and jitter for up to --horizon\n"
    "seconds; other 4xx are permanent: the message (and the rest of its job) is dead-lettered\n"
    "and printed with the receiver's answer. A 400 saying the transition was already recorded,\n"
    "after an earlier send of the same message, counts as delivered.\n"
    "\n"
    "Options:\n"
    "  --to URL              the endpoint, http:// or https:// (no user@ in it)\n"
    "  --results DIR         the results directory\n"
    "  --token-file FILE     the token: the file's one line (never printed, never logged)\n"
    "  --token-env NAME      the token from the environment variable NAME instead\n"
    "  --format F            crcr (default) or hud\n"
    "  --outbox FILE         the outbox (default DIR/outbox.sqlite)\n"
    "  --ca-file FILE        trust this CA bundle too (TLS verification is always on)\n"
    "  --repost              send delivered and dead-lettered messages again (same keys)\n"
    "  --timeout S           the whole of one post (default 30)\n"
    "  --connect-timeout S   connecting (default 10)\n"
    "  --horizon S           stop retrying a message S seconds after its first try (default\n"
    "                        600); 0 tries each message once\n"
    "  --dry-run             print the message bodies, one per line; send nothing\n"
    "  --json                print the outcome as JSON\n"
    "Proxies come from the environment (https_proxy, no_proxy, ...), as libcurl reads them.\n"
    "\n"
    "Exit codes: 0 every message delivered; 1 a message was dead-lettered or is still pending\n"
    "(interrupted: run again), or the outbox failed; 2 bad usage or a bad results directory,\n"
    "token file or URL (the error names the file, and the line or the field).\n"
    "\n"
    "Example:\n"
    "  spyre-ci report --to https://relay.example/github/callback --results out/job-0 \\\n"
    "      --token-file ~/.config/spyre-ci/relay-token\n";
