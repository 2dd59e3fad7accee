/* libFuzzer target: the DNS message parsers and the reply builders on
 * arbitrary bytes (what a guest or an upstream resolver can send). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "devices/netpolicy/dns_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	struct dns_answer a;
	uint8_t out[DNS_UDP_MAX], again[DNS_UDP_MAX];
	size_t olen, alen;
	const uint8_t *msg;
	size_t mlen;

	if (dns_parse_query(data, size, &q) == 0) {
		/* Anything we parse, we must be able to answer and re-parse. */
		if (dns_build_error(data, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out), &olen) == 0 &&
		    dns_parse_answer(out, olen, &a) != 0 && q.name[0])
			__builtin_trap();
		if (dns_build_query(q.id, q.name, q.qtype, again, sizeof(again), &alen) == 0 &&
		    (dns_parse_query(again, alen, &q) != 0))
			__builtin_trap();
	}
	(void)dns_parse_answer(data, size, &a);
	if (dns_tcp_unframe(data, size, &msg, &mlen) > 0)
		(void)dns_parse_query(msg, mlen, &q);
	return 0;
}
