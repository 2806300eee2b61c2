/*
 * The `disagent encrypt` command (main.c dispatches to it).
 */
#ifndef DISAGENT_CREDCMD_H
#define DISAGENT_CREDCMD_H

/*
 * `disagent encrypt [--key-file FILE]` (argv[0] is "encrypt"): the value
 * from stdin (without echo on a terminal; one trailing newline dropped),
 * the key from FILE or a prompt on the terminal (twice); prints the
 * encrypted value.  Returns the exit code (0, 1 on error, 2 on usage).
 */
int	credcmd_encrypt(int argc, char **argv);

#endif
