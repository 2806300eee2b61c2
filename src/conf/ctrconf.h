/*
 * source = containers: which files of containerLogDirectory are a flow's
 * containers, and what a record says about the container it came from.
 * The files are kubelet's, DIR/NAMESPACE_POD_UID/CONTAINER/RESTART.log,
 * or Docker's, DIR/ID/ID-json.log; a container flow reads them as a files
 * flow with the pattern DIR/ ** /ANY.log (ctrconf_pattern) whose files
 * ctrconf_picks narrows to the containers containerMatch names and
 * containerExclude does not.  Rotated files are followed by identity as
 * for any flow.  A Docker container's name and image are in
 * DIR/ID/config.v2.json, read once for each file.
 */
#ifndef DISAGENT_CTRCONF_H
#define DISAGENT_CTRCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct conf_flow;

/* The words of containerStreams, containerFormat, containerRecord. */
extern const char *const ctrconf_streams[];
extern const char *const ctrconf_formats[];
extern const char *const ctrconf_records[];

/* What a container log file says of its container (all NUL-ended). */
struct ctrconf_meta {
	bool		 docker;	/* Docker's layout, else kubelet's */
	char		 ns[256];	/* namespace ("docker" for Docker) */
	char		 pod[256];	/* pod (Docker: the name) */
	char		 uid[256];	/* pod uid (Docker: the id) */
	char		 ctr[256];	/* container (Docker: the name) */
	char		 image[512];	/* Docker: Config.Image */
};

/* For the key table: NULL when value is a list of N/P/C globs, else why. */
const char *ctrconf_check_globs(const char *value);

/* The flow's filePattern, from containerLogDirectory (new). */
char	*ctrconf_pattern(const char *dir);

/*
 * What the path of a log file under dir says of its container (Docker:
 * with config.v2.json read).  false: the path is not a container log file
 * of either layout.
 */
bool	ctrconf_meta_of(const char *dir, const char *path,
	    struct ctrconf_meta *out);

/* Whether the container of m is the flow's (containerMatch, Exclude). */
bool	ctrconf_wants(const struct conf_flow *, const struct ctrconf_meta *);

/* Whether path is a log file of one of the flow's containers. */
bool	ctrconf_picks(const struct conf_flow *, const char *path);
/* The same, and in *stable whether the answer rests on path alone, as
 * kubelet's names do (not Docker's: a container's config names it). */
bool	ctrconf_picks_path(const struct conf_flow *, const char *path,
	    bool *stable);

/*
 * The metadata members of a json record, appended to b: ,"kubernetes":{
 * "namespace_name","pod_name","pod_id","container_name"} or ,"docker":{
 * "container_id","container_name","image"}, at most CTRLOG_META_MAX
 * bytes (longer values are cut).
 */
void	ctrconf_meta_json(const struct ctrconf_meta *, struct buf *b);

/*
 * disagent -t: every container under the container flows' directories
 * that two enabled flows read.  0, or -1 with "[flow:A] and [flow:B] both
 * read container N/P/C (PATH)" in err.
 */
int	ctrconf_check_overlap(const struct conf_flow *flows, size_t n,
	    char *err, size_t errlen);

#endif
