/* `spyre-ci serve`: load the configuration, start the daemon, and wait for signals in the main
 * thread. A handler (run by whichever thread the kernel picks, including threads that
 * libraries start before main(), such as OpenBLAS's pool) only writes the signal's number to a
 * pipe; the main thread reads it: SIGTERM and SIGINT drain and exit 0, SIGHUP reloads the
 * configuration (a bad file is logged and the running one stays). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/log.h"
#include "config.h"
#include "daemon.h"
#include <git2.h>

const char cmd_serve_summary[] = "run the daemon: webhooks, poller, durable job queue, workers";
const char cmd_serve_help[] =
    "Usage: spyre-ci serve --config FILE [--check-config]\n"
    "       spyre-ci serve --config-reference\n"
    "\n"
    "Runs the spyre-ci daemon: POST /github/webhook takes GitHub deliveries (signed with\n"
    "X-Hub-Signature-256), a poller fetches upstream into a mirror in state_dir, workers\n"
    "select tests for each job, run their kernel cases and queue the results for the\n"
    "dashboard, which a sender posts; GET /healthz, /readyz, /metrics and /api/jobs show\n"
    "its state.\n"
    "docs/configuration.md lists every key.\n"
    "\n"
    "  --config FILE    the YAML configuration (required)\n"
    "  --check-config   validate FILE (and read the webhook secret) and exit: 0 if valid,\n"
    "                   2 with file:line:col and the problem if not\n"
    "  --config-reference  print every key (type, default, SIGHUP) as a Markdown table\n"
    "\n"
    "Signals: SIGTERM or SIGINT stop accepting, commit what was accepted, let workers finish\n"
    "or release their jobs, and exit 0. SIGHUP reloads the keys marked reloadable.\n";

static const struct cli_command *self(void)
{
	return cli_find("serve");
}

static int reload(struct daemon *d, const char *path)
{
	struct config next;
	if (config_load(&next, path) < 0) {
		log_error("reload refused, the running configuration stays: %s", err_last());
		return -1;
	}
	daemon_reload(d, &next);
	return 0;
}

static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	if (write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: a signal of each kind is already waiting */
	}
	errno = saved;
}

static int signals_install(void)
{
	if (pipe(sig_pipe) < 0)
		return err_set_errno(ERR_IO, "serve: pipe");
	fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
	fcntl(sig_pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(sig_pipe[1], F_SETFD, FD_CLOEXEC);
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void wait_signals(struct daemon *d, const char *path)
{
	for (;;) {
		unsigned char sig;
		ssize_t r = read(sig_pipe[0], &sig, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		if (sig == SIGHUP) {
			reload(d, path);
			continue;
		}
		log_info("signal %d: draining", sig);
		return;
	}
}

int cmd_serve_main(int argc, char **argv)
{
	const char *path = NULL;
	int check = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--check-config"))
			check = 1;
		else if (!strcmp(argv[i], "--config-reference")) {
			config_write_reference(stdout);
			return CLI_OK;
		} else
			return cli_usage_error(self(), "unknown or incomplete option '%s'",
					       argv[i]);
	}
	if (!path)
		return cli_usage_error(self(), "--config FILE is required");
	struct config cfg;
	if (config_load(&cfg, path) < 0) {
		fprintf(stderr, "spyre-ci serve: %s\n", err_last());
		return CLI_USAGE;
	}
	if (check) {
		printf("%s: ok\n", path);
		config_finish(&cfg);
		return CLI_OK;
	}
	enum log_level lvl;
	if (log_level_parse(&lvl, cfg.log_level) == 0 && log_get_level() == LOG_INFO)
		log_set_level(lvl);
	if (signals_install() < 0) {
		log_error("%s", err_last());
		config_finish(&cfg);
		return CLI_FAILED;
	}
	git_libgit2_init();
	struct daemon *d;
	if (daemon_start(&d, &cfg, NULL) < 0) { /* cfg is the daemon's (or freed) from here */
		log_error("serve: %s", err_last());
		git_libgit2_shutdown();
		return CLI_FAILED;
	}
	wait_signals(d, path);
	daemon_stop(d);
	git_libgit2_shutdown();
	log_info("stopped");
	return CLI_OK;
}
