/* DNS message parser and builder (RFC 1035) for the network policy. Every
 * input is guest- or network-controlled: all reads are bounds-checked. */
#ifndef MVM_DNS_MSG_H
#define MVM_DNS_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_rules.h"

#define DNS_HDR_LEN 12
#define DNS_UDP_MAX 512	   /* RFC 1035 §4.2.1: we never send more without EDNS */
#define DNS_MAX_RECORDS 64 /* per section; more is an attack, not a resolver */
#define DNS_MAX_ADDRS 16   /* addresses collected from one answer */
#define DNS_MAX_CNAMES 8   /* CNAME chain hops followed from the query name */

enum { DNS_T_A = 1, DNS_T_CNAME = 5, DNS_T_TXT = 16, DNS_T_AAAA = 28, DNS_C_IN = 1 };
enum {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

struct dns_query {
	uint16_t id;
	uint16_t flags;
	unsigned opcode;
	char name[NET_NAME_MAX + 1]; /* lower case, no trailing dot; "" for the root */
	uint16_t qtype, qclass;
	size_t question_end; /* offset just past the question */
	bool compressed;     /* QNAME used a pointer: replies re-encode it */
};

struct dns_addr_rec {
	struct net_addr addr;
	uint32_t ttl;
};

struct dns_answer {
	uint16_t id;
	unsigned rcode;
	char qname[NET_NAME_MAX + 1];
	uint16_t qtype;
	size_t n_addrs;
	struct dns_addr_rec addrs[DNS_MAX_ADDRS]; /* only those reached from qname */
};

/* Read a possibly compressed name at @off (RFC 1035 §4.1.4). Pointers must
 * point strictly backwards (so loops are impossible) and the expanded name
 * must fit in 255 octets. *next is the offset after the name in the
 * original position. Returns 0 or -EINVAL. */
int dns_read_name(const uint8_t *msg, size_t len, size_t off, char *out, size_t outlen,
		  size_t *next) __attribute__((warn_unused_result));

/* Parse a query: QR=0, QDCOUNT=1, counts capped, the records after the
 * question whole and ending exactly at @len. Returns 0, -EINVAL
 * (malformed, or bytes after the last record) or -EPROTO (well formed but not a query we answer: QR set or
 * QDCOUNT != 1). For opcodes other than QUERY q->opcode tells the caller. */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q)
    __attribute__((warn_unused_result));

/* Parse a response for the A/AAAA addresses of the question name, following
 * CNAMEs that start at it. Records for other owners are ignored (they are
 * how cache-poisoning answers smuggle addresses in). Returns 0 or -EINVAL. */
int dns_parse_answer(const uint8_t *msg, size_t len, struct dns_answer *a)
    __attribute__((warn_unused_result));

/* Reply carrying only header and question with @rcode (NXDOMAIN, REFUSED...).
 * Returns 0 or -ENOSPC. */
int dns_build_error(const uint8_t *query, const struct dns_query *q, unsigned rcode, uint8_t *out,
		    size_t cap, size_t *outlen) __attribute__((warn_unused_result));

/* NOERROR reply with A/AAAA records for the question (only those matching
 * qtype); records that would exceed @cap (<= 512) are left out. */
int dns_build_answer(const uint8_t *query, const struct dns_query *q,
		     const struct dns_addr_rec *addrs, size_t n, uint8_t *out, size_t cap,
		     size_t *outlen) __attribute__((warn_unused_result));

/* A standard recursive query for (name, qtype). Returns 0, -EINVAL or -ENOSPC. */
int dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *out, size_t cap,
		    size_t *outlen) __attribute__((warn_unused_result));

/* DNS over TCP (RFC 1035 §4.2.2, RFC 7766 §8): 2-byte big-endian length
 * prefix. unframe returns the message in [*msg, *msg + *mlen) and the bytes
 * consumed, 0 if more bytes are needed, or -EINVAL for a zero length. */
int dns_tcp_frame(const uint8_t *msg, size_t mlen, uint8_t *out, size_t cap, size_t *outlen)
    __attribute__((warn_unused_result));
int dns_tcp_unframe(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *mlen);

#endif
