/* The network options that name host addresses: --publish and --dns-server.
 * Pure parsers, shared by the VMM (a usage error is reported before the
 * network helper starts) and the helper (tools/nethelper/). */
#ifndef MVM_NET_PUBLISH_H
#define MVM_NET_PUBLISH_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct net_publish {
	struct in_addr host_addr; /* default 127.0.0.1 */
	uint16_t host_port, guest_port;
};

/* Parse "[HOST_IP:]HOST_PORT:GUEST_PORT" (TCP). 0 or -EINVAL (message in @err). */
int net_publish_parse(const char *s, struct net_publish *out, char *err, size_t errlen);

/* --dns-server: "ADDR", "ADDR:PORT" (IPv4), "[ADDR6]:PORT" or "ADDR6"; port 53
 * by default. 0 or -EINVAL. Pure, like net_publish_parse. */
int net_dns_server_parse(const char *s, struct sockaddr_storage *ss, socklen_t *sl);

#endif
