/*
 * `disagent --import-yml agent.yml`: converts the official DIS Agent's
 * configuration into an agent.ini for this agent.  Keys with the same
 * meaning keep their names; the rest become "; not carried over:" comments
 * so nothing is silently lost.
 */
#ifndef DISAGENT_IMPORTYML_H
#define DISAGENT_IMPORTYML_H

#include <stdio.h>

/*
 * Read the DIS Agent configuration at yml_path and write the equivalent
 * agent.ini to out: [agent] with the top-level keys this agent knows (its
 * key table decides, and every value is checked by the same rules as
 * conf_load), then one [flow:NAME] per entry of flows, NAME made from the
 * stream name (characters outside [A-Za-z0-9_.-] become '_', duplicates
 * get "-2", "-3" ...).  YAML 1.1 booleans become true/false and numbers
 * lose '_' and '+'.  Every key that cannot be carried over becomes a
 * "; not carried over: KEY = VALUE (why)" comment in place, and keys that
 * are dead in the DIS Agent itself (useHttpGzip, maxConnections,
 * useTcpKeepAlive, log.level, log.file) a "; dropped:" comment; err gets
 * one "FILE:LINE: ..." line per such key and a count.  Values of secret
 * keys are never shown in comments or messages.
 *
 * Last on err, the command that carries the DIS Agent's positions over
 * to disagent's state file next (disagent import-state), with its
 * checkpoint file (importyml_checkpoint_path).
 *
 * Returns the exit code: 0 when converted (even with keys not carried
 * over); 1, with nothing written to out and "FILE:LINE:COLUMN: problem" or
 * "FILE: problem" on err, when the file cannot be read, is not valid YAML,
 * has not the DIS Agent's shape.  Encrypted values (168 characters or
 * more), encrypt.key and the proxy keys are carried over unchanged.
 */
int	importyml_main(const char *yml_path, FILE *out, FILE *err);

/*
 * Where the DIS Agent whose configuration is yml_path keeps its
 * checkpoints (SQLiteFileCheckpointStore): checkpoint (its checkpointFile,
 * NULL when unset) or conf/dis-agent_since.db, relative to the directory
 * it runs in, which its start script makes its installation directory:
 * the parent of conf/ when yml_path is conf/agent.yml, else unknown and
 * written DIS-AGENT-DIR.  New string; *how says how sure it is (static
 * text, "" when checkpointFile is absolute).  After a conversion,
 * importyml_main names it in the import-state command to run next.
 */
char	*importyml_checkpoint_path(const char *yml_path,
	    const char *checkpoint, const char **how);

#endif
