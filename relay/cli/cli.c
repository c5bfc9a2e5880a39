/* Shared helpers for subcommand handlers; see cli.h. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsonx.h"

const struct cli_command *cli_find(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void cli_print_help(FILE *out, const struct cli_command *cmd)
{
	fputs(cmd->help, out);
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "spyre-ci %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see 'spyre-ci help %s')\n", cmd->name);
	return CLI_USAGE;
}

int cli_print_json(json_t *o)
{
	char *s = o ? jx_dumps(o) : NULL;
	json_decref(o);
	if (!s)
		return CLI_FAILED;
	puts(s);
	free(s);
	return CLI_OK;
}
