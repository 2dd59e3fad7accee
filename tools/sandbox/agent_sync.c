/* The host side of the agent's SYNC (guest/agent/snap_sync.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/sandbox.h"

int agent_sync(const char *name, int timeout_ms)
{
	return agent_sync_as(name, NULL, timeout_ms);
}

int agent_sync_as(const char *name, const char *hostname, int timeout_ms)
{
	uint8_t req[AP_SYNC_LEN + AP_SYNC_HOST_MAX];
	size_t hl = hostname ? strlen(hostname) : 0;
	struct timespec t;
	int fd, ret;
	uint64_t sec;
	uint32_t nsec;

	if (hl > AP_SYNC_HOST_MAX)
		return -ENAMETOOLONG;
	fd = agent_connect(name, timeout_ms);
	if (fd < 0)
		return fd;
	memcpy(req + AP_SYNC_LEN, hostname ? hostname : "", hl);
	if (getrandom(req + 12, AP_SYNC_SEED, 0) != AP_SYNC_SEED) {
		close(fd);
		return -EIO;
	}
	/* The time last, right before it leaves. */
	clock_gettime(CLOCK_REALTIME, &t);
	sec = (uint64_t)t.tv_sec;
	nsec = (uint32_t)t.tv_nsec;
	memcpy(req, &sec, 8);
	memcpy(req + 8, &nsec, 4);
	ret = agent_request(fd, AP_SYNC, req, AP_SYNC_LEN + hl, timeout_ms);
	memset(req, 0, sizeof(req));
	return ret;
}

int agent_set_mac(const char *name, const uint8_t *mac, int timeout_ms)
{
	int fd = agent_connect(name, timeout_ms);

	return fd < 0 ? fd : agent_request(fd, AP_MAC, mac, 6, timeout_ms);
}

int agent_new_identity(const char *name, int timeout_ms, char *err, size_t errlen)
{
	static const uint8_t zero[6];
	char host[AP_SYNC_HOST_MAX + 1];
	struct sb_config c;
	int ret = sb_config_load(name, &c);

	if (ret) {
		snprintf(err, errlen, "config.json of %s: %s", name, strerror(-ret));
		return ret;
	}
	/* Hostnames take [A-Za-z0-9.-]: a sandbox name's '_' becomes '-'. */
	snprintf(host, sizeof(host), "%s", name);
	for (char *p = host; *p; p++)
		if (*p == '_')
			*p = '-';
	ret = agent_sync_as(name, host, timeout_ms);
	if (ret)
		snprintf(err, errlen, "the guest agent did not take its new identity: %s",
			 strerror(-ret));
	else if (!c.net_off && memcmp(c.mac, zero, 6) &&
		 (ret = agent_set_mac(name, c.mac, timeout_ms)))
		snprintf(err, errlen, "the guest agent did not take its new MAC address: %s "
			 "(a template made before mvm gave each sandbox its own must be made again)",
			 strerror(-ret));
	sb_config_free(&c);
	return ret;
}
