/*
 * The read-back commands: `disagent describe`, `disagent read`,
 * `disagent verify` and `disagent apps` (cmd_describe.c, cmd_read.c,
 * cmd_verify.c, cmd_apps.c).  Each
 * takes the command line from its own name on (argv[0] is "read", ...),
 * parses its options (-c FILE among them; conf_path is the default), and
 * returns the process exit status: 0, 1 (an error, said in one line on
 * stderr; for verify also: records missing) or 2 (usage).
 */
#ifndef DISAGENT_CMD_H
#define DISAGENT_CMD_H

int	cmd_describe_main(int argc, char **argv, const char *conf_path);
int	cmd_read_main(int argc, char **argv, const char *conf_path);
int	cmd_verify_main(int argc, char **argv, const char *conf_path);
int	cmd_apps_main(int argc, char **argv, const char *conf_path);

#endif
