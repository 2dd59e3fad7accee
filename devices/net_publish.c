/* Parsing --publish and --dns-server (net_publish.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/net_publish.h"

int net_publish_parse(const char *str, struct net_publish *out, char *err, size_t errlen)
{
	char buf[128], *parts[3], *save = NULL, *tok;
	int n = 0;
	long v[2];

	memset(out, 0, sizeof(*out));
	out->host_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (strlen(str) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", str);
	for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (n == 3)
			goto bad;
		parts[n++] = tok;
	}
	if (n < 2)
		goto bad;
	if (n == 3 && inet_pton(AF_INET, parts[0], &out->host_addr) != 1) {
		snprintf(err, errlen, "--publish %s: '%s' is not an IPv4 address", str, parts[0]);
		return -EINVAL;
	}
	for (int i = 0; i < 2; i++) {
		char *end;

		errno = 0;
		v[i] = strtol(parts[n - 2 + i], &end, 10);
		if (errno || *end || end == parts[n - 2 + i] || v[i] < 1 || v[i] > 65535) {
			snprintf(err, errlen, "--publish %s: '%s' is not a port (1-65535)", str,
				 parts[n - 2 + i]);
			return -EINVAL;
		}
	}
	out->host_port = (uint16_t)v[0];
	out->guest_port = (uint16_t)v[1];
	return 0;
bad:
	snprintf(err, errlen, "--publish %s: expected [HOST_IP:]HOST_PORT:GUEST_PORT", str);
	return -EINVAL;
}

int net_dns_server_parse(const char *s, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[64];
	const char *port = NULL;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	long p = 53;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || (size_t)(e - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(e - s - 1), s + 1);
		if (e[1] == ':')
			port = e + 2;
		else if (e[1])
			return -EINVAL;
	} else if (strchr(s, ':') && strchr(s, ':') == strrchr(s, ':')) {
		snprintf(host, sizeof(host), "%.*s", (int)(strchr(s, ':') - s), s);
		port = strchr(s, ':') + 1;
	} else {
		snprintf(host, sizeof(host), "%s", s);
	}
	if (port) {
		char *end;

		p = strtol(port, &end, 10);
		if (*end || end == port || p < 1 || p > 65535)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*sl = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*sl = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}
