/* The subcommands' entry points and help texts, for the table in commands.c. */
#ifndef RELAY_COMMANDS_H
#define RELAY_COMMANDS_H

int cmd_emu_main(int argc, char **argv);
extern const char cmd_emu_summary[];
extern const char cmd_emu_help[];

int cmd_specs_main(int argc, char **argv);
extern const char cmd_specs_summary[];
extern const char cmd_specs_help[];
int cmd_fixture_main(int argc, char **argv);
extern const char cmd_fixture_summary[];
extern const char cmd_fixture_help[];

int cmd_select_main(int argc, char **argv);
extern const char cmd_select_summary[];
extern const char cmd_select_help[];

int cmd_demo_main(int argc, char **argv);
extern const char cmd_demo_summary[];
extern const char cmd_demo_help[];

int cmd_report_main(int argc, char **argv);
extern const char cmd_report_summary[];
extern const char cmd_report_help[];
int cmd_run_main(int argc, char **argv);
extern const char cmd_run_summary[];
extern const char cmd_run_help[];
int cmd_serve_main(int argc, char **argv);
extern const char cmd_serve_summary[];
extern const char cmd_serve_help[];

#endif
