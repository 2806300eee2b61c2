/*
 * SDK-HMAC-SHA256 request signing for DIS (spec/dis-api.md section 6).
 * A pure function of its inputs: the caller passes the X-Sdk-Date value,
 * so tests reproduce the published vectors exactly.  Uses libcrypto.
 */
#ifndef DISAGENT_SIGNER_H
#define DISAGENT_SIGNER_H

#include <stddef.h>

#include "base/util.h"

enum sign_dialect {
	SIGN_DIS,	/* 6.2: Credential=AK/yyyyMMdd/region/dis/sdk_request */
	SIGN_APIG,	/* 6.3: Access=AK, HMAC(SK, ...) */
	SIGN_V11,	/* 6.3b: V11-HMAC-SHA256, HKDF-derived secret */
};

struct sign_header {
	const char	*name;	/* any case; lowercased when signed */
	const char	*value;	/* trimmed when signed */
};

struct sign_request {
	const char	*method;	/* "POST" */
	const char	*path;		/* "/v2/pid/records/" (unencoded) */
	const char	*query;		/* "a=1&b=2" (unencoded) or NULL */
	const struct sign_header *headers;	/* headers to sign */
	size_t		 nheaders;
	/* Either the body, or its precomputed hex SHA-256 (65 bytes). */
	const void	*body;
	size_t		 bodylen;
	const char	*body_sha256;
};

struct sign_key {
	const char	*ak;
	const char	*sk;		/* never logged */
	const char	*region;	/* "cn-north-1" */
	const char	*service;	/* "dis" */
};

/* Lowercase hex SHA-256 of buf into out[65]. */
void	signer_sha256_hex(const void *, size_t, char out[65]);

/*
 * The canonical request of 6.1 into *out (appended).  The URI always ends in
 * "/", query pairs are encoded and sorted ("k" alone becomes "k="), headers
 * lowercased, trimmed and sorted.  Header names must be unique.
 */
void	signer_canonical(const struct sign_request *, struct buf *out);

/*
 * The canonical query string of 6.1 into *out (appended): each "k=v" pair
 * of query (unencoded) percent-encoded, sorted and joined with "&".  Also
 * the query to put in the URL, so that what is sent is what is signed.
 */
void	signer_query(const char *query, struct buf *out);

/*
 * The full Authorization header value for the dialect, for the date
 * sdk_date ("20240101T000000Z"), appended to *out.  Returns 0, or -EINVAL
 * when sdk_date is malformed or a required field is NULL.
 */
int	signer_authorization(enum sign_dialect, const struct sign_key *,
	    const char *sdk_date, const struct sign_request *, struct buf *out)
	    WARN_UNUSED;

/* Format t (UTC seconds) as X-Sdk-Date into out[17]. */
void	signer_date(long long t, char out[17]);

#endif
