/*
 * agent.ini's dataProcessingOptions keys -> struct convert_opts, for the
 * programs that build chains from "KEY=VALUE" strings without an agent.ini
 * (tests/unit/records/check_convert.c, tests/golden/chain.c).
 * Header-only, static.
 */
#ifndef DISAGENT_CONVERT_KEYS_H
#define DISAGENT_CONVERT_KEYS_H

#include <stddef.h>
#include <string.h>

#include "records/convert.h"

static const struct {
	const char	*key;
	size_t		 off;
} convert_keys[] = {
	{ "dataProcessingOptions", offsetof(struct convert_opts, options) },
	{ "CSVTOJSON.customFieldNames",
	  offsetof(struct convert_opts, csv_fields) },
	{ "CSVTOJSON.delimiter", offsetof(struct convert_opts, csv_delimiter) },
	{ "CSVTOJSON.jsonFormat", offsetof(struct convert_opts, csv_json) },
	{ "LOGTOJSON.logFormat", offsetof(struct convert_opts, log_format) },
	{ "LOGTOJSON.matchPattern", offsetof(struct convert_opts, log_pattern) },
	{ "LOGTOJSON.customFieldNames",
	  offsetof(struct convert_opts, log_fields) },
	{ "LOGTOJSON.jsonFormat", offsetof(struct convert_opts, log_json) },
	{ "LOGTOJSON.unmatched", offsetof(struct convert_opts, log_unmatched) },
	{ "ADDMETADATA.metadata", offsetof(struct convert_opts, meta_metadata) },
	{ "ADDMETADATA.fields", offsetof(struct convert_opts, meta_fields) },
	{ "ADDMETADATA.jsonFormat", offsetof(struct convert_opts, meta_json) },
};

/*
 * o from the NULL-terminated "KEY=VALUE" strings kv (values borrowed from
 * them).  0, or -1 for a string that is not KEY=VALUE of a known key.
 */
static int
convert_opts_from(struct convert_opts *o, const char *const *kv)
{
	const char	*eq;
	size_t		 k, n;

	memset(o, 0, sizeof(*o));
	for (; *kv != NULL; kv++) {
		eq = strchr(*kv, '=');
		if (eq == NULL)
			return -1;
		n = (size_t)(eq - *kv);
		for (k = 0; k < sizeof(convert_keys) / sizeof(convert_keys[0]);
		    k++)
			if (strlen(convert_keys[k].key) == n &&
			    strncmp(convert_keys[k].key, *kv, n) == 0)
				break;
		if (k == sizeof(convert_keys) / sizeof(convert_keys[0]))
			return -1;
		*(const char **)(void *)((char *)o + convert_keys[k].off) =
		    eq + 1;
	}
	return 0;
}

#endif
