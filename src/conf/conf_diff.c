/*
 * What a reload compares (conf.h): two flows, or the [agent] parts of two
 * files, key by key, driven by the key table, so a key added to the table
 * is compared without a change here.  A key's KF_RELOAD_* flag says what
 * its change costs at a reload: the HTTP client (KF_RELOAD_CLIENT), only
 * the agent's own settings (KF_RELOAD_AGENT), or, unflagged, every flow
 * (the flows read it).
 */
#include "config.h"

#include <string.h>

#include "base/util.h"

#include "conf/conf.h"
#include "conf/conf_int.h"

/* The value of key k in base (struct conf or struct conf_flow). */
#define VAL(type, base, k) \
	(*(type const *)(const void *)((const char *)(base) + (k)->off))

/* Whether key k holds the same value in a and b (both of its section). */
static bool
same_value(const struct key *k, const void *a, const void *b)
{
	const char	*sa, *sb;

	switch (k->type) {
	case KT_STRING:
	case KT_WORD:
		sa = VAL(char *, a, k);
		sb = VAL(char *, b, k);
		return strcmp(sa != NULL ? sa : "", sb != NULL ? sb : "") == 0;
	case KT_INT:
		return VAL(long long, a, k) == VAL(long long, b, k);
	case KT_BOOL:
		return VAL(bool, a, k) == VAL(bool, b, k);
	case KT_ENUM:
		return VAL(int, a, k) == VAL(int, b, k);
	}
	return false;
}

const char *
conf_flow_diff(const struct conf_flow *a, const struct conf_flow *b)
{
	const struct key *k;

	if (strcmp(a->name, b->name) != 0)
		return "name";
	for (k = conf_keys; k < conf_keys + conf_nkeys; k++)
		if (k->sect == KS_FLOW && !same_value(k, a, b))
			return k->name;
	return NULL;
}

bool
conf_flow_same(const struct conf_flow *a, const struct conf_flow *b)
{
	return conf_flow_diff(a, b) == NULL;
}

unsigned
conf_agent_diff(const struct conf *a, const struct conf *b,
    const char **first)
{
	const struct key *k;
	unsigned	 d = 0, bit, top = 0;

	if (first != NULL)
		*first = NULL;
	for (k = conf_keys; k < conf_keys + conf_nkeys; k++) {
		if (k->sect != KS_AGENT || same_value(k, a, b))
			continue;
		if (k->flags & KF_RELOAD_CLIENT)
			bit = CONF_DIFF_CLIENT;
		else if (k->flags & KF_RELOAD_AGENT)
			bit = CONF_DIFF_AGENT;
		else
			bit = CONF_DIFF_FLOWS;
		/* The first key of the costliest change, for the log. */
		if (bit > top && first != NULL)
			*first = k->name;
		top = MAX(top, bit);
		d |= bit;
	}
	return d;
}

bool
conf_agent_same(const struct conf *a, const struct conf *b)
{
	return conf_agent_diff(a, b, NULL) == 0;
}

const struct conf_flow *
conf_flow_named(const struct conf *c, const char *name)
{
	size_t	 i;

	for (i = 0; i < c->nflows; i++)
		if (c->flows[i].enable && strcmp(c->flows[i].name, name) == 0)
			return &c->flows[i];
	return NULL;
}
