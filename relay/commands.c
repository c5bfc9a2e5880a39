/* The subcommand table. Keep it sorted by name: main() checks that it is, and `--help` lists it
 * in this order. A subcommand enters this table only when it works. */
#include <stddef.h>

#include "cli.h"

const struct cli_command cli_commands[] = {
	{ NULL, NULL, NULL, NULL },
};
