/*
 * Inside --import-yml: importyml.c loads agent.yml and flattens it into
 * sections of dotted keys, then walks the sections; importyml_put.c writes
 * each key as agent.ini, a comment, or a note saying why it did not come
 * across.
 */
#ifndef DISAGENT_IMPORTYML_INT_H
#define DISAGENT_IMPORTYML_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <yaml.h>

#include "base/util.h"

#define INI_LINE_MAX	199	/* conf.c's line limit */

/* One key of a section, flattened. */
struct entry {
	char		*key;		/* new */
	yaml_node_t	*val;		/* borrowed from the document */
	int		 line;		/* of the key, from 1 */
};

struct section {
	struct entry	*v;
	size_t		 n;
};

struct imp {
	const char	*path;
	FILE		*err;
	yaml_document_t	 doc;
	struct buf	 ini;		/* the output, written last */
	struct buf	 notes;		/* lines for err, written last */
	size_t		 nskipped;
	size_t		 ndropped;
	size_t		 nkeys;		/* over all sections */
	char		**names;	/* flow names used so far */
	size_t		 nnames;
	bool		 has_sk;	/* a secret: sk, PROXY_PASSWORD, ... */
	bool		 has_key;	/* encrypt.key, beside what it opens */
	bool		 whole;		/* the flow: isFileAppendable = false */
	bool		 ignore_enabled;	/* ignoreNotUpdatedFileEnabled */
	bool		 recursive;	/* directoryRecursionEnabled */
	size_t		 flow_start;	/* where the flow's text begins */
	bool		 serialize_renamed;	/* [agent] has bodySerializeType */
	size_t		 ndiffer;	/* carried, with another meaning */
	char		*checkpoint;	/* checkpointFile, or NULL: new */
	bool		 links_noted;	/* followSymlinks said on err */
};

static inline const char *
scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* importyml_put.c */
bool	imp_is_null(const yaml_node_t *);
char	*imp_value_text(const yaml_node_t *);
char	*imp_shown(const char *, const char *);
void	imp_wrap(struct buf *, const char *);
void PRINTFLIKE(4, 5)
	imp_note(struct imp *, int, size_t *, const char *, ...);
void	imp_put_entry(struct imp *, const char *, size_t,
	    const struct entry *);

#endif
