/* spyre-ci: the one program. Global options, then a subcommand from the table in commands.c.
 * Exit codes: 0 ok, 1 a run or check failed, 2 bad usage or bad input. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/check.h"
#include "common/err.h"
#include "common/log.h"
#include "executors/pool.h"

static void print_main_help(FILE *out)
{
	fprintf(
	    out,
	    "spyre-ci %s: a cross-repository CI relay for out-of-tree PyTorch backends.\n"
	    "It selects the upstream PyTorch tests a change can affect, maps them through\n"
	    "torch-spyre's YAML test specs onto Spyre kernel tests, runs those on spyre-emu\n"
	    "(a CPU emulator of IBM's Spyre card), and reports back to the CI dashboard.\n"
	    "\n"
	    "Usage: spyre-ci [--log-level LEVEL] [--log-format logfmt|json] SUBCOMMAND [ARGS...]\n"
	    "       spyre-ci help SUBCOMMAND       the full help of one subcommand\n"
	    "       spyre-ci --version\n"
	    "\n",
	    SPYRE_CI_VERSION);
	if (cli_commands[0].name) {
		fprintf(out, "Subcommands:\n");
		for (const struct cli_command *c = cli_commands; c->name; c++)
			fprintf(out, "  %-10s %s\n", c->name, c->summary);
	} else {
		fprintf(out, "Subcommands: none are built into this version yet.\n");
	}
	fprintf(out, "\n"
		     "Global options:\n"
		     "  --log-level LEVEL    error, warn, info (default), debug, trace or silent\n"
		     "  --log-format FORMAT  logfmt (default) or json (one JSON object per line)\n"
		     "  -h, --help           this page\n"
		     "  --version            the version\n"
		     "\n"
		     "Machine output goes to stdout, logs to stderr.\n"
		     "Exit codes: 0 ok, 1 a run or check failed, 2 bad usage or bad input.\n");
}

static int table_is_sorted(void)
{
	for (const struct cli_command *c = cli_commands; c->name && c[1].name; c++)
		if (strcmp(c->name, c[1].name) >= 0)
			return 0;
	return 1;
}

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "spyre-ci: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see 'spyre-ci --help')\n");
	return CLI_USAGE;
}

static int run_help(int argc, char **argv)
{
	if (argc < 2) {
		print_main_help(stdout);
		return CLI_OK;
	}
	const struct cli_command *c = cli_find(argv[1]);
	if (!c)
		return usage("no subcommand '%s'", argv[1]);
	cli_print_help(stdout, c);
	return CLI_OK;
}

int main(int argc, char **argv)
{
	/* a case worker of this program's own pool (executors/pool.h: worker_exe); not a command */
	if (argc == 2 && strcmp(argv[1], EXEC_WORKER_ARG) == 0)
		exec_pool_worker_main(EXEC_WORKER_FD, EXEC_WORKER_FD + 1);
	if (!CHECK(table_is_sorted()))
		return CLI_USAGE;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			print_main_help(stdout);
			return CLI_OK;
		} else if (strcmp(a, "--version") == 0) {
			printf("spyre-ci %s\n", SPYRE_CI_VERSION);
			return CLI_OK;
		} else if (strcmp(a, "--log-level") == 0 && i + 1 < argc) {
			enum log_level lvl;
			if (log_level_parse(&lvl, argv[++i]) != 0)
				return usage("%s", err_last());
			log_set_level(lvl);
		} else if (strcmp(a, "--log-format") == 0 && i + 1 < argc) {
			const char *f = argv[++i];
			if (strcmp(f, "json") == 0)
				log_set_format(LOG_FORMAT_JSON);
			else if (strcmp(f, "logfmt") == 0)
				log_set_format(LOG_FORMAT_LOGFMT);
			else
				return usage("unknown log format '%s' (expected logfmt or json)",
					     f);
		} else {
			return usage("unknown or incomplete global option '%s'", a);
		}
	}
	if (i == argc) {
		print_main_help(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[i], "help") == 0)
		return run_help(argc - i, argv + i);
	const struct cli_command *c = cli_find(argv[i]);
	if (!c)
		return usage("no subcommand '%s'", argv[i]);
	if (cli_wants_help(argc - i, argv + i)) {
		cli_print_help(stdout, c);
		return CLI_OK;
	}
	return c->run(argc - i, argv + i);
}
