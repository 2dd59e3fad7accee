/* One DNS query to the upstream resolver for virtio-net's NET_RESOLVE
 * (devices/virtio_net.c). Each query gets its own UDP socket, so its own
 * source port (picked at random by the kernel, RFC 6056), and a random id
 * from getrandom(): an off-path attacker must guess both (RFC 5452). */
#ifndef MVM_DNS_UPSTREAM_H
#define MVM_DNS_UPSTREAM_H

#include <stdint.h>
#include <sys/socket.h>

/* Send an A/AAAA (@qtype) query for @name to @sa from a fresh non-blocking
 * socket connected to it (only @sa's replies reach it). Returns the socket
 * (the caller reads the answer from it and closes it) with the query id in
 * *id, or -errno. */
int dns_upstream_send(const struct sockaddr *sa, socklen_t salen, const char *name, uint16_t qtype,
		      uint16_t *id) __attribute__((warn_unused_result));

#endif
