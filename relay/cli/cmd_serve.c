/* `spyre-ci serve`: the daemon's command line. The daemon itself is relay/daemon/, reached only
 * through its public entry points (daemon/serve.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/log.h"
#include "daemon/serve.h"

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
			serve_config_reference(stdout);
			return CLI_OK;
		} else
			return cli_usage_error(self(), "unknown or incomplete option '%s'",
					       argv[i]);
	}
	if (!path)
		return cli_usage_error(self(), "--config FILE is required");
	/* A bad file is bad input (2), found before anything starts. */
	if (serve_config_check(path) < 0) {
		fprintf(stderr, "spyre-ci serve: %s\n", err_last());
		return CLI_USAGE;
	}
	if (check) {
		printf("%s: ok\n", path);
		return CLI_OK;
	}
	if (serve_run(path) < 0) {
		log_error("serve: %s", err_last());
		return CLI_FAILED;
	}
	return CLI_OK;
}
