/* The host's own addresses (net_filter.h): every address on its interfaces.
 * slirp connects from the host, so a guest that names one of them reaches
 * services the host binds to it, as through the gateway. */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>

#include "devices/netpolicy/net_filter.h"

int net_host_addrs_read(struct net_addr *out, size_t cap)
{
	struct ifaddrs *ifa, *i;
	size_t n = 0;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && n < cap; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;

		if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].family = sa->sa_family;
		if (sa->sa_family == AF_INET)
			memcpy(out[n].b, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		else
			memcpy(out[n].b, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		n++;
	}
	freeifaddrs(ifa);
	return (int)n;
}

void net_policy_set_host_addrs(struct net_policy *p, const struct net_addr *a, size_t n)
{
	if (n > NET_HOST_ADDRS_MAX)
		n = NET_HOST_ADDRS_MAX;
	memcpy(p->host_addrs, a, n * sizeof(*a));
	p->n_host_addrs = n;
}
