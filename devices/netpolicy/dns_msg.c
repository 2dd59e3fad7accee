/* DNS wire format (RFC 1035 §4): parse queries and answers, build replies. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "dns_msg.h"

#define DNS_WIRE_NAME_MAX 255 /* RFC 1035 §3.1 */

#include "devices/netpolicy/net_bytes.h"

/* Append one label to the dotted name, lower-cased. Label bytes outside
 * [A-Za-z0-9_-] make the name unusable for policy: reject rather than escape. */
static int put_label(const uint8_t *lab, size_t n, char *out, size_t outlen, size_t *pos)
{
	if (*pos + n + 2 > outlen)
		return -EINVAL;
	if (*pos)
		out[(*pos)++] = '.';
	for (size_t i = 0; i < n; i++) {
		if (!isalnum(lab[i]) && lab[i] != '-' && lab[i] != '_')
			return -EINVAL;
		out[(*pos)++] = (char)tolower(lab[i]);
	}
	out[*pos] = '\0';
	return 0;
}

int dns_read_name(const uint8_t *msg, size_t len, size_t off, char *out, size_t outlen,
		  size_t *next)
{
	size_t pos = 0, wire = 0, lim = off; /* pointers must go below lim */
	bool jumped = false;

	if (!outlen)
		return -EINVAL;
	out[0] = '\0';
	for (;;) {
		if (off >= len)
			return -EINVAL;
		uint8_t c = msg[off];
		if ((c & 0xc0) == 0xc0) {
			if (off + 1 >= len)
				return -EINVAL;
			size_t ptr = (size_t)(c & 0x3f) << 8 | msg[off + 1];
			/* Only strictly backward pointers: each jump lowers the
			 * bound, so a loop cannot exist and the walk terminates. */
			if (ptr >= lim)
				return -EINVAL;
			if (!jumped)
				*next = off + 2;
			jumped = true;
			lim = ptr;
			off = ptr;
			continue;
		}
		if (c & 0xc0)
			return -EINVAL; /* 0x40/0x80: extended label types (RFC 6891 §5) */
		wire += 1u + c;
		if (wire > DNS_WIRE_NAME_MAX)
			return -EINVAL;
		if (c == 0) {
			if (!jumped)
				*next = off + 1;
			return 0;
		}
		if (off + 1 + c > len || put_label(msg + off + 1, c, out, outlen, &pos))
			return -EINVAL;
		off += 1u + c;
	}
}

static int check_counts(const uint8_t *msg)
{
	for (int i = 0; i < 4; i++)
		if (rd16(msg + 4 + 2 * i) > DNS_MAX_RECORDS)
			return -EINVAL;
	return 0;
}

struct rr {
	char owner[NET_NAME_MAX + 1];
	uint16_t type, class;
	uint32_t ttl;
	size_t rdoff, rdlen;
};

static int read_rr(const uint8_t *msg, size_t len, size_t *off, struct rr *rr)
{
	size_t p;

	if (dns_read_name(msg, len, *off, rr->owner, sizeof(rr->owner), &p) || p + 10 > len)
		return -EINVAL;
	rr->type = rd16(msg + p);
	rr->class = rd16(msg + p + 2);
	rr->ttl = rd32(msg + p + 4);
	rr->rdlen = rd16(msg + p + 8);
	rr->rdoff = p + 10;
	if (rr->rdoff + rr->rdlen > len)
		return -EINVAL;
	*off = rr->rdoff + rr->rdlen;
	return 0;
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q)
{
	size_t off;

	memset(q, 0, sizeof(*q));
	if (len < DNS_HDR_LEN || check_counts(msg))
		return -EINVAL;
	q->id = rd16(msg);
	q->flags = rd16(msg + 2);
	q->opcode = (q->flags >> 11) & 0xf;
	if ((q->flags & 0x8000) || rd16(msg + 4) != 1)
		return -EPROTO;
	if (dns_read_name(msg, len, DNS_HDR_LEN, q->name, sizeof(q->name), &off))
		return -EINVAL;
	if (off + 4 > len)
		return -EINVAL;
	q->qtype = rd16(msg + off);
	q->qclass = rd16(msg + off + 2);
	q->question_end = off + 4;
	/* What follows the question must be whole records (usually one EDNS
	 * OPT) that end with the message: trailing bytes are not ignored, they
	 * are what a smuggled second query would hide in. */
	off = q->question_end;
	for (unsigned i = 0, n = rd16(msg + 6) + rd16(msg + 8) + rd16(msg + 10); i < n; i++) {
		struct rr rr;

		if (read_rr(msg, len, &off, &rr))
			return -EINVAL;
	}
	if (off != len)
		return -EINVAL;
	/* Uncompressed, the name takes strlen + 2 octets (1 for the root); a
	 * pointer makes the wire form differ from that, never equal to it. */
	q->compressed = off - DNS_HDR_LEN != (q->name[0] ? strlen(q->name) + 2 : 1);
	return 0;
}

/* Is @owner the query name or one of the CNAME targets collected so far? */
static bool in_chain(char chain[][NET_NAME_MAX + 1], size_t n, const char *owner)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(chain[i], owner))
			return true;
	return false;
}

static void take_addr(struct dns_answer *a, const uint8_t *msg, const struct rr *rr)
{
	struct dns_addr_rec *r;
	size_t alen = rr->type == DNS_T_A ? 4 : 16;

	if (rr->rdlen != alen || a->n_addrs >= DNS_MAX_ADDRS)
		return;
	r = &a->addrs[a->n_addrs++];
	memset(r, 0, sizeof(*r));
	r->addr.family = rr->type == DNS_T_A ? AF_INET : AF_INET6;
	memcpy(r->addr.b, msg + rr->rdoff, alen);
	r->ttl = rr->ttl > 0x7fffffff ? 0 : rr->ttl; /* RFC 2181 §8: MSB set means 0 */
}

/* One pass over the answer section. Collecting: extend the CNAME chain and
 * report whether it grew; otherwise take the chain's A/AAAA records. */
static int answer_pass(const uint8_t *msg, size_t len, size_t start, unsigned count,
		       char chain[][NET_NAME_MAX + 1], size_t *n, bool collect,
		       struct dns_answer *a)
{
	size_t off = start, end, before = *n;
	struct rr rr;

	for (unsigned i = 0; i < count; i++) {
		if (read_rr(msg, len, &off, &rr))
			return -EINVAL;
		if (rr.class != DNS_C_IN || !in_chain(chain, *n, rr.owner))
			continue;
		if (collect && rr.type == DNS_T_CNAME && *n <= DNS_MAX_CNAMES) {
			if (dns_read_name(msg, len, rr.rdoff, chain[*n], NET_NAME_MAX + 1, &end) ==
				0 &&
			    !in_chain(chain, *n, chain[*n]))
				(*n)++;
		} else if (!collect && (rr.type == DNS_T_A || rr.type == DNS_T_AAAA)) {
			take_addr(a, msg, &rr);
		}
	}
	return collect && *n > before;
}

/* Records may come in any order, so grow the CNAME chain until it stops
 * changing (at most DNS_MAX_CNAMES passes), then collect addresses. */
static int walk_answers(const uint8_t *msg, size_t len, size_t start, unsigned count,
			struct dns_answer *a)
{
	char chain[DNS_MAX_CNAMES + 1][NET_NAME_MAX + 1];
	size_t n = 1;
	int rc;

	strcpy(chain[0], a->qname);
	for (int pass = 0; pass <= DNS_MAX_CNAMES; pass++) {
		rc = answer_pass(msg, len, start, count, chain, &n, true, a);
		if (rc <= 0)
			break;
	}
	if (rc < 0)
		return rc;
	return answer_pass(msg, len, start, count, chain, &n, false, a) < 0 ? -EINVAL : 0;
}

int dns_parse_answer(const uint8_t *msg, size_t len, struct dns_answer *a)
{
	size_t off;

	memset(a, 0, sizeof(*a));
	if (len < DNS_HDR_LEN || check_counts(msg) || !(rd16(msg + 2) & 0x8000) ||
	    rd16(msg + 4) != 1)
		return -EINVAL;
	a->id = rd16(msg);
	a->rcode = rd16(msg + 2) & 0xf;
	if (dns_read_name(msg, len, DNS_HDR_LEN, a->qname, sizeof(a->qname), &off) || off + 4 > len)
		return -EINVAL;
	a->qtype = rd16(msg + off);
	return walk_answers(msg, len, off + 4, rd16(msg + 6), a);
}

/* Dotted name to wire labels (RFC 1035 §3.1), uncompressed. */
static int encode_name(const char *name, uint8_t *out, size_t cap, size_t *len)
{
	size_t p = 0;
	const char *s = name;

	if (strlen(name) > NET_NAME_MAX)
		return -EINVAL;
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		if (l == 0 || l > 63)
			return -EINVAL;
		if (p + 1 + l + 1 > cap)
			return -ENOSPC;
		out[p++] = (uint8_t)l;
		memcpy(out + p, s, l);
		p += l;
		s += l + (dot ? 1 : 0);
	}
	if (p + 1 > cap)
		return -ENOSPC;
	out[p++] = 0;
	*len = p;
	return 0;
}

/* Header + question; flags: QR, same opcode and RD, RA (RFC 1035 §4.1.1).
 * The question is copied as sent (0x20-randomised case survives) unless it
 * was compressed: its pointers referred to the query's header, not ours. */
static int build_head(const uint8_t *query, const struct dns_query *q, unsigned rcode, uint8_t *out,
		      size_t cap, size_t *outlen)
{
	size_t qlen = q->question_end - DNS_HDR_LEN, nlen;

	if (q->question_end > DNS_UDP_MAX || q->question_end > cap)
		return -ENOSPC;
	memset(out, 0, DNS_HDR_LEN);
	wr16(out, q->id);
	wr16(out + 2, (uint16_t)(0x8000 | (q->flags & 0x7900) | 0x0080 | (rcode & 0xf)));
	wr16(out + 4, 1);
	if (!q->compressed) {
		memcpy(out + DNS_HDR_LEN, query + DNS_HDR_LEN, qlen);
		*outlen = q->question_end;
		return 0;
	}
	if (encode_name(q->name, out + DNS_HDR_LEN, cap - DNS_HDR_LEN, &nlen) ||
	    DNS_HDR_LEN + nlen + 4 > cap)
		return -ENOSPC;
	wr16(out + DNS_HDR_LEN + nlen, q->qtype);
	wr16(out + DNS_HDR_LEN + nlen + 2, q->qclass);
	*outlen = DNS_HDR_LEN + nlen + 4;
	return 0;
}

int dns_build_error(const uint8_t *query, const struct dns_query *q, unsigned rcode, uint8_t *out,
		    size_t cap, size_t *outlen)
{
	return build_head(query, q, rcode, out, cap, outlen);
}

int dns_build_answer(const uint8_t *query, const struct dns_query *q,
		     const struct dns_addr_rec *addrs, size_t n, uint8_t *out, size_t cap,
		     size_t *outlen)
{
	uint16_t count = 0;
	int rc = build_head(query, q, DNS_RCODE_NOERROR, out, cap, outlen);

	if (rc)
		return rc;
	if (cap > DNS_UDP_MAX)
		cap = DNS_UDP_MAX;
	for (size_t i = 0; i < n; i++) {
		bool v4 = addrs[i].addr.family == AF_INET;
		size_t alen = v4 ? 4 : 16, p = *outlen;
		if (q->qtype != (v4 ? DNS_T_A : DNS_T_AAAA) || p + 12 + alen > cap)
			continue;
		wr16(out + p, 0xc000 | DNS_HDR_LEN); /* pointer to the question name */
		wr16(out + p + 2, q->qtype);
		wr16(out + p + 4, DNS_C_IN);
		wr32(out + p + 6, addrs[i].ttl);
		wr16(out + p + 10, (uint16_t)alen);
		memcpy(out + p + 12, addrs[i].addr.b, alen);
		*outlen = p + 12 + alen;
		count++;
	}
	wr16(out + 6, count);
	return 0;
}

int dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *out, size_t cap,
		    size_t *outlen)
{
	size_t nlen;
	int rc;

	if (cap < DNS_HDR_LEN + 4)
		return -ENOSPC;
	rc = encode_name(name, out + DNS_HDR_LEN, cap - DNS_HDR_LEN - 4, &nlen);
	if (rc)
		return rc;
	memset(out, 0, DNS_HDR_LEN);
	wr16(out, id);
	wr16(out + 2, 0x0100); /* RD */
	wr16(out + 4, 1);
	wr16(out + DNS_HDR_LEN + nlen, qtype);
	wr16(out + DNS_HDR_LEN + nlen + 2, DNS_C_IN);
	*outlen = DNS_HDR_LEN + nlen + 4;
	return 0;
}

int dns_tcp_frame(const uint8_t *msg, size_t mlen, uint8_t *out, size_t cap, size_t *outlen)
{
	if (mlen == 0 || mlen > 0xffff)
		return -EINVAL;
	if (mlen + 2 > cap)
		return -ENOSPC;
	wr16(out, (uint16_t)mlen);
	memmove(out + 2, msg, mlen);
	*outlen = mlen + 2;
	return 0;
}

int dns_tcp_unframe(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *mlen)
{
	size_t n;

	if (len < 2)
		return 0;
	n = rd16(buf);
	if (n == 0)
		return -EINVAL;
	if (len - 2 < n)
		return 0;
	*msg = buf + 2;
	*mlen = n;
	return (int)(n + 2);
}
