/* bench-drain: how fast the outbox drains to a receiver, beside a floor measured in the same
 * run. N queued CRCR messages (N/2 jobs, in_progress and completed) go from the SQLite outbox
 * (WAL, synchronous=FULL, the attempt recorded before each batch is sent, the outcomes after)
 * to the loopback recorder (tests/support/) over one kept-alive connection; the floor posts the
 * same bodies with the same headers on one libcurl handle with no outbox at all. The ratio is
 * the price of durability. Target: at least 500 messages/s on loopback.
 * Never asserts a time: exits 1 when a message is not delivered exactly once or a figure is not
 * sane, 2 on bad usage. --smoke (the default test run) drains 200 messages.
 * Usage: bench-drain [--smoke] [--messages N] [--batch N] [--dir DIR] [--json] */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/num.h"
#include "dashboard-client/drain.h"
#include "dashboard-client/outbox_sqlite.h"
#include "recorder.h"

#define MESSAGES_FULL  10000
#define MESSAGES_SMOKE 200
#define TOKEN          "bench-token"

struct cfg {
	int messages, batch, json;
	const char *dir;
};

struct figs {
	double enqueue_s, drain_s, floor_s;
	long connects;
	uint64_t delivered;
};

static int job_messages(struct dc_message **ms, size_t *n, int i)
{
	char text[2048];
	snprintf(
	    text, sizeof(text),
	    "{\"event_type\":\"push\",\"delivery_id\":\"bench-%d\",\"payload\":{\"ref\":"
	    "\"refs/heads/main\",\"after\":\"0123456789abcdef0123456789abcdef01234567\","
	    "\"repository\":{\"full_name\":\"pytorch/pytorch\"}},\"workflow\":{\"name\":"
	    "\"spyre-ci\",\"url\":\"https://ci.example.invalid/r/%d\",\"run_id\":\"%d\","
	    "\"run_attempt\":\"1\",\"job_name\":\"shard-%d\",\"check_run_id\":\"%d\","
	    "\"started_at\":\"2026-10-01T12:00:00Z\",\"completed_at\":\"2026-10-01T12:01:00Z\","
	    "\"artifact_url\":\"https://ci.example.invalid/a/%d\"}}",
	    i, i, 100000 + i, i, 500000 + i, i);
	struct dc_job job;
	int rc = dc_job_parse(&job, "bench", text, strlen(text));
	if (rc)
		return rc;
	struct dc_results r = { .passed = 900, .failed = 0, .skipped = 100 };
	rc = dc_job_messages(ms, n, &job, &r, DC_FORMAT_CRCR);
	dc_job_finish(&job);
	return rc;
}

static int enqueue_all(struct dc_outbox *ob, const char *url, int messages)
{
	for (int i = 0; i < messages / 2; i++) {
		struct dc_message *ms;
		size_t n;
		int rc = job_messages(&ms, &n, i);
		size_t added = 0;
		if (rc == 0)
			rc = ob->ops->enqueue_many(ob, url, ms, n, &added);
		for (size_t k = 0; k < n; k++)
			dc_message_finish(&ms[k]);
		free(ms);
		if (rc)
			return rc;
	}
	return 0;
}

/* The bodies of `messages` messages, encoded before any clock starts. */
static int encode_all(struct dc_message **out, int messages)
{
	struct dc_message *all = calloc((size_t)messages, sizeof(*all));
	int rc = all ? 0 : err_set(ERR_NOMEM, "out of memory");
	for (int i = 0; rc == 0 && i < messages / 2; i++) {
		struct dc_message *ms;
		size_t n;
		rc = job_messages(&ms, &n, 1000000 + i);
		for (size_t k = 0; rc == 0 && k < n; k++)
			all[2 * i + (int)k] = ms[k]; /* `all` owns the bodies now */
		free(ms);
	}
	*out = all;
	return rc;
}

/* The floor: the same posts on one handle, nothing durable, nothing classified. */
static int floor_posts(const char *url, int messages, double *secs)
{
	struct dc_message *all = NULL;
	int rc = encode_all(&all, messages);
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Authorization: Bearer " TOKEN);
	h = curl_slist_append(h, "Expect:");
	h = curl_slist_append(h, "Idempotency-Key: floor");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fwrite);
	FILE *sink = fopen("/dev/null", "w");
	curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
	uint64_t t0 = clock_mono_ns();
	for (int i = 0; rc == 0 && i < messages; i++) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)all[i].body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, all[i].body);
		long status = 0;
		if (curl_easy_perform(c) != CURLE_OK ||
		    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK ||
		    status != 200)
			rc = err_set(ERR_IO, "a floor post failed (HTTP %ld)", status);
	}
	*secs = clock_elapsed_s(t0, clock_mono_ns());
	for (int i = 0; all && i < messages; i++)
		dc_message_finish(&all[i]);
	free(all);
	fclose(sink);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return rc;
}

static int run(const struct cfg *cfg, struct figs *f)
{
	char dir[4096], path[4200], url[256];
	snprintf(dir, sizeof(dir), "%s/bench-drain-XXXXXX", cfg->dir);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench-drain: cannot create a directory in %s\n", cfg->dir);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/outbox.sqlite", dir);
	struct recorder *rec = recorder_start();
	struct dc_outbox *ob = NULL;
	struct dc_transport *t = NULL;
	int rc = rec ? 0 : err_set(ERR_IO, "cannot start the recorder");
	if (rc == 0) {
		recorder_dedup(rec, false); /* the floor posts one key many times */
		recorder_url(rec, "/github/callback", url, sizeof(url));
		struct dc_target_opts to = { .url = url,
					     .format = DC_FORMAT_CRCR,
					     .token = TOKEN,
					     .user_agent = "spyre-ci/bench" };
		rc = dc_outbox_sqlite_open(&ob, path);
		if (rc == 0)
			rc = dc_transport_create(&t, &to);
	}
	uint64_t t0 = clock_mono_ns();
	if (rc == 0)
		rc = enqueue_all(ob, url, cfg->messages);
	f->enqueue_s = clock_elapsed_s(t0, clock_mono_ns());
	struct dc_drain_opts o = { .policy = dc_retry_policy_default(),
				   .clock = dc_clock_system(),
				   .batch = (size_t)cfg->batch };
	struct dc_drain_stats st = { 0 };
	t0 = clock_mono_ns();
	if (rc == 0)
		rc = dc_drain(ob, t, url, &o, &st);
	f->drain_s = clock_elapsed_s(t0, clock_mono_ns());
	struct dc_outbox_counts c = { 0 };
	if (rc == 0)
		rc = ob->ops->counts(ob, url, &c);
	f->delivered = c.delivered;
	f->connects = t ? dc_transport_connects(t) : 0;
	if (rc == 0)
		rc = floor_posts(url, cfg->messages, &f->floor_s);
	if (rc)
		fprintf(stderr, "bench-drain: %s\n", err_last());
	size_t accepted = rec ? recorder_count(rec) : 0;
	if (rc == 0 && (c.delivered != (uint64_t)cfg->messages || c.dead || c.pending ||
			accepted != 2 * (size_t)cfg->messages || st.posts != c.delivered)) {
		fprintf(stderr, "bench-drain: %llu delivered, %llu dead, %zu requests seen\n",
			(unsigned long long)c.delivered, (unsigned long long)c.dead, accepted);
		rc = -1;
	}
	dc_transport_destroy(t);
	dc_outbox_destroy(ob);
	recorder_stop(rec);
	const char *sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		char p[4300];
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
	rmdir(dir);
	return rc ? 1 : 0;
}

static int parse(struct cfg *cfg, int argc, char **argv)
{
	*cfg = (struct cfg){ .messages = MESSAGES_FULL, .batch = 64, .dir = "." };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--smoke"))
			cfg->messages = MESSAGES_SMOKE;
		else if (!strcmp(a, "--json"))
			cfg->json = 1;
		else if (!strcmp(a, "--messages") && v &&
			 !num_parse_int(&cfg->messages, v, 2, 10000000))
			i++;
		else if (!strcmp(a, "--batch") && v && !num_parse_int(&cfg->batch, v, 1, 4096))
			i++;
		else if (!strcmp(a, "--dir") && v)
			cfg->dir = argv[++i];
		else {
			fprintf(stderr, "usage: bench-drain [--smoke] [--messages N] [--batch N] "
					"[--dir DIR] [--json]\n");
			return 2;
		}
	}
	cfg->messages -= cfg->messages % 2;
	return 0;
}

int main(int argc, char **argv)
{
	struct cfg cfg;
	struct figs f = { 0 };
	if (parse(&cfg, argc, argv))
		return 2;
	if (dc_transport_global_init() != 0 || run(&cfg, &f) != 0)
		return 1;
	double rate = cfg.messages / f.drain_s, floor = cfg.messages / f.floor_s;
	if (cfg.json) {
		printf("{\"messages\":%d,\"batch\":%d,\"enqueue_per_s\":%.1f,\"drain_per_s\":%.1f,"
		       "\"floor_per_s\":%.1f,\"ratio\":%.3f,\"connections\":%ld}\n",
		       cfg.messages, cfg.batch, cfg.messages / f.enqueue_s, rate, floor,
		       rate / floor, f.connects);
	} else {
		printf("enqueue   %6d messages  %8.1f /s  (a job's two in one durable commit)\n",
		       cfg.messages, cfg.messages / f.enqueue_s);
		printf("drain     %6d messages  %8.1f /s  (outbox, batch %d, %ld connection%s)\n",
		       cfg.messages, rate, cfg.batch, f.connects, f.connects == 1 ? "" : "s");
		printf("floor     %6d posts     %8.1f /s  (one curl handle, no outbox)\n",
		       cfg.messages, floor);
		printf("ratio     drain / floor = %.2f; target >= 500 messages/s: %s\n",
		       rate / floor, rate >= 500 ? "met" : "NOT met");
	}
	return rate > 0 && floor > 0 ? 0 : 1;
}
