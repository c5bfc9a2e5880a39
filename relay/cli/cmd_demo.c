/* `spyre-ci demo`: the whole flow on one machine. A sample upstream (demo_upstream.c), a
 * configuration in the state directory whose dashboard target is the daemon's own receiver,
 * the daemon started in this process on a free loopback port, two commits made on the upstream
 * (an ordinary change, then one that breaks a kernel case on purpose), and each job followed on
 * stdout: its delivery (the poller), its funnel, its results, the reports the dashboard
 * received, with the page to look at. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "common/log.h"
#include "common/num.h"
#include "daemon/serve.h"
#include "demo.h"

#define DEMO_TIMEOUT_S 110 /* --once gives up after this (the README promises two minutes) */
#define DEMO_STUCK_S   15  /* a job left `awaiting` this long has stopped: nothing moves it */
#define DEMO_TICK_MS   250

const char cmd_demo_summary[] = "the whole flow on one machine: upstream, daemon, dashboard";
const char cmd_demo_help[] =
    "Usage: spyre-ci demo [--state DIR] [--port N] [--once] [--timeout S]\n"
    "\n"
    "Generates a small sample upstream shaped like PyTorch (the fixture generator) in\n"
    "DIR/upstream, writes DIR/config.yaml (the daemon's own dashboard as its HUD target, with\n"
    "a token in DIR/hud-token), starts the daemon in this process on 127.0.0.1, and commits two\n"
    "changes to the sample upstream: an ordinary one, and one that breaks a kernel case on\n"
    "purpose (its spec entry asks float16 softmax for atol 0, rtol 0, which no float16\n"
    "softmax meets). Each job is followed: delivery, funnel, results, dashboard page.\n"
    "A second run on the same DIR reuses the upstream and the store, and commits again.\n"
    "\n"
    "  --state DIR   where everything goes (default ./spyre-ci-demo)\n"
    "  --port N      the port to listen on (default: a free one)\n"
    "  --once        exit 0 as soon as the first job's `completed` report reached the\n"
    "                dashboard; 1 with the reason when a job failed or stopped on the way\n"
    "  --timeout S   with --once, give up after S seconds (default 110)\n"
    "\n"
    "Without --once the daemon keeps serving until Ctrl-C, the dashboard URL on stdout.\n";

static const struct cli_command *self(void)
{
	return cli_find("demo");
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int free_port(int *out)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
	socklen_t len = sizeof(sa);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int rc = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
			 getsockname(fd, (struct sockaddr *)&sa, &len) == 0
		     ? 0
		     : err_set_errno(ERR_IO, "demo: no free port on 127.0.0.1");
	if (fd >= 0)
		close(fd);
	*out = ntohs(sa.sin_port);
	return rc;
}

/* A random token in `path` unless the file is there (a second run reuses it). */
static int token_file(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) == 0)
		return 0;
	unsigned char raw[24];
	char hex[sizeof(raw) * 2 + 2];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, raw, sizeof(raw)) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(raw))
		return err_set(ERR_IO, "demo: cannot read /dev/urandom");
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	strcat(hex, "\n");
	return fs_atomic_write(path, hex, strlen(hex), 0600);
}

static int write_config(const char *state, int port)
{
	char path[4400], text[16384];
	snprintf(path, sizeof(path), "%s/config.yaml", state);
	int n = snprintf(text, sizeof(text),
			 "# Written by `spyre-ci demo` at each run (the port may change).\n"
			 "listen: 127.0.0.1:%d\n"
			 "state_dir: %s/daemon\n"
			 "log_level: warn\n"
			 "upstream:\n  repo: demo/sample-upstream\n  url: %s/upstream\n"
			 "  branches: [main]\n  poll_interval_s: 1\n"
			 "webhook:\n  secret_file: %s/webhook-secret\n"
			 "specs: [%s/upstream/spyre/specs]\n"
			 "workers:\n  count: 1\n"
			 "dashboard:\n  hud_url: http://127.0.0.1:%d/api/crcr/results\n"
			 "  hud_token_file: %s/hud-token\n  receiver_token_file: %s/hud-token\n",
			 port, state, state, state, state, port, state, state);
	if (n >= (int)sizeof(text))
		return err_set(ERR_LIMIT, "demo: state path too long");
	return fs_atomic_write(path, text, (size_t)n, 0600);
}

/* What has been said about one job, so each step is printed once. */
struct watch {
	const char *label;
	char head[41];
	int64_t id;
	char state[16];
	char detail[512]; /* the job's last word */
	bool funnel, results;
	size_t reports;
	int64_t since_ms; /* when the state last changed */
	bool completed;   /* a `completed` report reached the dashboard */
	bool failed;
	char why[1024];
};

/* The dashboard's funnel: files changed -> tests impacted -> eligible -> scheduled. */
static void say_funnel(const struct watch *w, const json_t *f)
{
	long long files = (long long)json_integer_value(json_object_get(f, "changed_files"));
	printf("  job %lld: funnel: %lld changed file%s -> %lld impacted -> %lld eligible -> %lld "
	       "scheduled\n",
	       (long long)w->id, files, files == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(f, "impacted")),
	       (long long)json_integer_value(json_object_get(f, "eligible")),
	       (long long)json_integer_value(json_object_get(f, "scheduled")));
}

static void say_reports(struct watch *w, const json_t *reports, int port)
{
	size_t n = json_array_size(reports);
	for (size_t i = w->reports; i < n; i++) {
		const json_t *m = json_array_get(reports, n - 1 - i); /* oldest first */
		const char *status = jx_get_str(m, "status");
		printf("  job %lld: the dashboard received `%s`%s%s", (long long)w->id,
		       status ? status : "?", jx_get_str(m, "conclusion") ? ", " : "",
		       jx_get_str(m, "conclusion") ? jx_get_str(m, "conclusion") : "");
		if (status && !strcmp(status, "completed")) {
			printf(" (passed %lld, failed %lld, skipped %lld)",
			       (long long)json_integer_value(json_object_get(m, "passed")),
			       (long long)json_integer_value(json_object_get(m, "failed")),
			       (long long)json_integer_value(json_object_get(m, "skipped")));
			w->completed = true;
		}
		printf("\n    http://127.0.0.1:%d/jobs/%lld\n", port, (long long)w->id);
	}
	w->reports = n;
}

/* One look at the job: prints what is new. */
static void look(struct serve *d, struct watch *w, int port)
{
	json_t *v = w->id ? serve_job_view(d, w->id) : NULL;
	if (!json_is_object(v)) {
		json_decref(v);
		return;
	}
	const char *state = jx_get_str(v, "state");
	snprintf(w->detail, sizeof(w->detail), "%s",
		 jx_get_str(v, "detail") ? jx_get_str(v, "detail") : "");
	if (state && strcmp(state, w->state) != 0) {
		snprintf(w->state, sizeof(w->state), "%s", state);
		w->since_ms = clock_wall_ms();
		printf("  job %lld: %s%s%s\n", (long long)w->id, state,
		       jx_get_str(v, "detail") ? ": " : "",
		       jx_get_str(v, "detail") ? jx_get_str(v, "detail") : "");
		if (!strcmp(state, "failed")) {
			w->failed = true;
			snprintf(w->why, sizeof(w->why), "job %lld failed: %s", (long long)w->id,
				 jx_get_str(v, "detail") ? jx_get_str(v, "detail") : "(no detail)");
		}
	}
	if (!w->funnel && json_is_object(json_object_get(v, "funnel"))) {
		say_funnel(w, json_object_get(v, "funnel"));
		w->funnel = true;
	}
	const json_t *c = json_object_get(v, "cases");
	if (!w->results && json_is_object(c)) {
		printf("  job %lld: kernel cases: %lld passed, %lld failed, %lld other; modeled "
		       "device time %.3f ms\n",
		       (long long)w->id,
		       (long long)json_integer_value(json_object_get(c, "passed")),
		       (long long)json_integer_value(json_object_get(c, "failed")),
		       (long long)json_integer_value(json_object_get(c, "other")),
		       json_number_value(json_object_get(c, "device_s")) * 1e3);
		w->results = true;
	}
	say_reports(w, json_object_get(v, "reports"), port);
	json_decref(v);
	fflush(stdout);
}

/* The job the poller made for `w->head`, once there is one. */
static void find_job(struct serve *d, struct watch *w)
{
	char event[24];
	int64_t id = serve_job_for_head(d, w->head, event);
	if (id > 0) {
		w->id = id;
		printf("  job %lld: delivered by the poller (%s, %.10s)\n", (long long)w->id, event,
		       w->head);
	}
}

static int commit_and_wait(struct serve *d, struct demo_upstream *u, const struct demo_test *t,
			   const char *message, struct watch *w)
{
	printf("\n== %s\n   edits the body of %s::%s (%s)\n", w->label, t->cls, t->name, t->file);
	int rc = demo_upstream_commit(u, t, message, w->head);
	if (rc < 0)
		return rc;
	printf("  committed %.10s on main\n", w->head);
	for (int i = 0; i < 30000 / DEMO_TICK_MS && !w->id && !stop_signal; i++) {
		find_job(d, w);
		if (!w->id)
			clock_sleep_ms(DEMO_TICK_MS);
	}
	fflush(stdout);
	if (!w->id)
		return err_set(ERR_BADSTATE, "demo: the poller made no job for %.10s in 30 s",
			       w->head);
	return 0;
}

/* --once: 0 done, 1 failed (w->why), -1 keep waiting. */
static int verdict(struct watch *w, int64_t start_ms, int timeout_s)
{
	int64_t now = clock_wall_ms();
	if (w->completed)
		return 0;
	if (w->failed)
		return 1;
	bool settled = strcmp(w->state, "queued") && strcmp(w->state, "running") && w->state[0];
	if (settled && now - w->since_ms > DEMO_STUCK_S * 1000) {
		snprintf(w->why, sizeof(w->why),
			 "job %lld stopped at `%s` (%s) and no `completed` report reached the "
			 "dashboard in %d s",
			 (long long)w->id, w->state, w->detail[0] ? w->detail : "no detail",
			 DEMO_STUCK_S);
		return 1;
	}
	if (now - start_ms > (int64_t)timeout_s * 1000) {
		snprintf(w->why, sizeof(w->why), "gave up after %d s: job %lld is `%s`", timeout_s,
			 (long long)w->id, w->state[0] ? w->state : "not seen");
		return 1;
	}
	return -1;
}

static int follow(struct serve *d, struct watch *w, size_t n, int port, bool once, int timeout_s,
		  int64_t start_ms)
{
	if (!once)
		printf("\nthe dashboard: http://127.0.0.1:%d/ (serving until Ctrl-C)\n", port);
	fflush(stdout);
	while (!stop_signal) {
		size_t reports = w[0].reports;
		for (size_t i = 0; i < n; i++)
			look(d, &w[i], port);
		if (w[0].reports != reports)
			w[0].since_ms = clock_wall_ms();
		int v = once ? verdict(&w[0], start_ms, timeout_s) : -1;
		if (v >= 0)
			return v;
		clock_sleep_ms(DEMO_TICK_MS);
	}
	snprintf(w[0].why, sizeof(w[0].why), "stopped by signal %d", (int)stop_signal);
	return once ? 1 : 0;
}

struct demo_args {
	const char *state;
	int port;
	bool once;
	int timeout_s;
};

static int parse(struct demo_args *a, int argc, char **argv)
{
	*a = (struct demo_args){ "spyre-ci-demo", 0, false, DEMO_TIMEOUT_S };
	for (int i = 1; i < argc; i++) {
		bool more = i + 1 < argc;
		if (!strcmp(argv[i], "--state") && more)
			a->state = argv[++i];
		else if (!strcmp(argv[i], "--port") && more) {
			if (num_parse_int(&a->port, argv[++i], 0, 65535) < 0)
				return cli_usage_error(self(), "--port must be 0..65535");
		} else if (!strcmp(argv[i], "--timeout") && more) {
			if (num_parse_int(&a->timeout_s, argv[++i], 1, 86400) < 0)
				return cli_usage_error(self(),
						       "--timeout must be 1..86400 seconds");
		} else if (!strcmp(argv[i], "--once"))
			a->once = true;
		else
			return cli_usage_error(self(), "unknown or incomplete option '%s'",
					       argv[i]);
	}
	return 0;
}

/* Everything before the daemon runs: the state directory, the upstream, tokens, config. */
static int setup(char state[4096], struct demo_upstream *u, char config[4400], struct demo_args *a)
{
	if (mkdir(a->state, 0700) < 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "demo: cannot create %s", a->state);
	if (!realpath(a->state, state))
		return err_set_errno(ERR_IO, "demo: %s", a->state);
	char path[4400];
	int rc = demo_upstream_prepare(u, state);
	snprintf(path, sizeof(path), "%s/hud-token", state);
	if (rc == 0)
		rc = token_file(path);
	snprintf(path, sizeof(path), "%s/webhook-secret", state);
	if (rc == 0)
		rc = token_file(path);
	if (rc == 0 && a->port == 0)
		rc = free_port(&a->port);
	if (rc == 0)
		rc = write_config(state, a->port);
	snprintf(config, 4400, "%s/config.yaml", state);
	return rc;
}

static void signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_demo_main(int argc, char **argv)
{
	struct demo_args a;
	if (parse(&a, argc, argv) != 0)
		return CLI_USAGE;
	int64_t start_ms = clock_wall_ms();
	char state[4096];
	struct demo_upstream u;
	char config[4400];
	git_libgit2_init();
	if (log_get_level() == LOG_INFO)
		log_set_level(LOG_WARN); /* the demo's own lines tell the story */
	int rc = setup(state, &u, config, &a);
	struct serve *d = NULL;
	if (rc == 0) {
		signals();
		rc = serve_start(&d, config);
	}
	if (rc < 0) {
		fprintf(stderr, "spyre-ci demo: %s\n", err_last());
		git_libgit2_shutdown();
		return CLI_FAILED;
	}
	printf("the daemon listens on http://127.0.0.1:%d/ (state in %s)\n", a.port, state);
	struct watch w[2] = { { .label = "an ordinary change" },
			      { .label = "a change that breaks a kernel case on purpose" } };
	rc =
	    commit_and_wait(d, &u, &u.ordinary, "demo: an ordinary change to a test body\n", &w[0]);
	if (rc == 0)
		rc =
		    commit_and_wait(d, &u, &u.broken,
				    "demo: touch the test whose softmax case cannot pass\n", &w[1]);
	int out = CLI_FAILED;
	if (rc < 0)
		snprintf(w[0].why, sizeof(w[0].why), "%s", err_last());
	else
		out = follow(d, w, 2, a.port, a.once, a.timeout_s, start_ms) == 0 ? CLI_OK
										  : CLI_FAILED;
	serve_stop(d);
	git_libgit2_shutdown();
	if (a.once && out == CLI_OK)
		printf("\ndone in %.1f s: job %lld's `completed` report reached the dashboard at "
		       "http://127.0.0.1:%d/jobs/%lld\n",
		       (double)(clock_wall_ms() - start_ms) / 1e3, (long long)w[0].id, a.port,
		       (long long)w[0].id);
	else if (out != CLI_OK)
		fprintf(stderr, "spyre-ci demo: %s\n", w[0].why);
	return out;
}
