/* The subcommand table. Keep it sorted by name: main() checks that it is, and `--help` lists it
 * in this order. A subcommand enters this table only when it works. */
#include <stddef.h>

#include "cli.h"
#include "commands.h"

const struct cli_command cli_commands[] = {
	{ "demo", cmd_demo_main, cmd_demo_summary, cmd_demo_help },
	{ "emu", cmd_emu_main, cmd_emu_summary, cmd_emu_help },
	{ "fixture", cmd_fixture_main, cmd_fixture_summary, cmd_fixture_help },
	{ "report", cmd_report_main, cmd_report_summary, cmd_report_help },
	{ "run", cmd_run_main, cmd_run_summary, cmd_run_help },
	{ "select", cmd_select_main, cmd_select_summary, cmd_select_help },
	{ "serve", cmd_serve_main, cmd_serve_summary, cmd_serve_help },
	{ "specs", cmd_specs_main, cmd_specs_summary, cmd_specs_help },
	{ NULL, NULL, NULL, NULL },
};
