/* The spyre-ci command line: one table of subcommands, sorted by name, each with a handler,
 * a one-line summary and its full help. Handlers get argv with argv[0] the subcommand's name,
 * write machine output to stdout and logs to stderr, and return one of the exit codes below. */
#ifndef RELAY_CLI_H
#define RELAY_CLI_H

#include <stdio.h>

enum cli_exit {
	CLI_OK = 0,     /* success */
	CLI_FAILED = 1, /* the run or check ran and found a failure */
	CLI_USAGE = 2,  /* bad usage or bad input */
};

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary; /* one line, for `spyre-ci --help` */
	const char *help;    /* the whole page, for `spyre-ci help NAME` and `NAME --help` */
};

/* The table, sorted by name, ended by an entry whose name is NULL. */
extern const struct cli_command cli_commands[];

const struct cli_command *cli_find(const char *name);

/* Prints `cmd`'s help page to `out`. */
void cli_print_help(FILE *out, const struct cli_command *cmd);

/* For handlers: true when argv has -h or --help before any "--". */
int cli_wants_help(int argc, char **argv);

/* For handlers: reports a usage error on stderr, names the way to get help, returns CLI_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* For handlers: prints `o` (NULL allowed: out of memory) as one line of JSON on stdout and
 * releases it; CLI_OK, or CLI_FAILED when it could not be made. */
typedef struct json_t json_t;
int cli_print_json(json_t *o);

#endif
