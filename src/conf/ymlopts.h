/*
 * --import-yml's part for dataProcessingOptions: the DIS Agent's YAML list
 * (each item a mapping with optionName and the option's own keys, as its
 * ProcessingUtilsFactory reads them; an optionParameters mapping inside an
 * item is read the same way) becomes agent.ini's dataProcessingOptions
 * plus OPTION.param keys, and ADDMETADATA's metadata, any YAML value,
 * becomes JSON with SnakeYAML's reading of plain scalars (YAML 1.1: yes is
 * true, 0x1F is 31, 1e3 is 1000.0) written as Jackson writes it.
 */
#ifndef DISAGENT_YMLOPTS_H
#define DISAGENT_YMLOPTS_H

#include <stddef.h>

#include <yaml.h>

/* One agent.ini line to write (checked by the caller), or a note. */
struct ymlopts_item {
	char	*key;		/* NULL: a note ("not carried over: ...") */
	char	*text;		/* the value, or the note */
	int	 line;		/* in the YAML file, from 1 */
};

struct ymlopts {
	struct ymlopts_item *v;
	size_t		 n;
};

/*
 * Convert the sequence node list of doc into out (appended; free with
 * ymlopts_free).  Never fails: what cannot be converted becomes a note.
 */
void	ymlopts_convert(yaml_document_t *doc, yaml_node_t *list,
	    struct ymlopts *out);
void	ymlopts_free(struct ymlopts *);

#endif
