/* The host side of the agent's SYNC (guest/agent/snap_sync.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/start_trace.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/agent_sync.h"
#include "tools/sandbox/sandbox.h"

int agent_sync(const char *name, int timeout_ms)
{
	return agent_sync_as(name, NULL, timeout_ms);
}

/* Send @type with a SYNC-shaped payload: @extra (@elen bytes) after the
 * time and fresh entropy, the time filled in last, right before it leaves. */
static int send_synced(const char *name, uint16_t type, const void *extra, size_t elen,
		       int timeout_ms)
{
	uint8_t req[AP_IDENTITY_LEN + AP_SYNC_HOST_MAX];
	struct timespec t;
	int fd, ret;
	uint64_t sec;
	uint32_t nsec;

	if (elen > sizeof(req) - AP_SYNC_LEN)
		return -ENAMETOOLONG;
	fd = agent_connect(name, timeout_ms);
	start_trace("sync: connected");
	if (fd < 0)
		return fd;
	memcpy(req + AP_SYNC_LEN, extra, elen);
	if (getrandom(req + 12, AP_SYNC_SEED, 0) != AP_SYNC_SEED) {
		close(fd);
		return -EIO;
	}
	clock_gettime(CLOCK_REALTIME, &t);
	sec = (uint64_t)t.tv_sec;
	nsec = (uint32_t)t.tv_nsec;
	memcpy(req, &sec, 8);
	memcpy(req + 8, &nsec, 4);
	ret = agent_request(fd, type, req, (uint32_t)(AP_SYNC_LEN + elen), timeout_ms);
	start_trace("sync: answered");
	memset(req, 0, sizeof(req));
	return ret;
}

int agent_sync_as(const char *name, const char *hostname, int timeout_ms)
{
	size_t hl = hostname ? strlen(hostname) : 0;

	if (hl > AP_SYNC_HOST_MAX)
		return -ENAMETOOLONG;
	return send_synced(name, AP_SYNC, hostname ? hostname : "", hl, timeout_ms);
}

int agent_set_mac(const char *name, const uint8_t *mac, int timeout_ms)
{
	int fd = agent_connect(name, timeout_ms);

	return fd < 0 ? fd : agent_request(fd, AP_MAC, mac, 6, timeout_ms);
}

/* The older way, two round trips: an agent from before IDENTITY (a template
 * made by an older mvm) answers that with an error; these say which step. */
static int identity_in_steps(const char *name, const char *host, const uint8_t *mac,
			     int timeout_ms, char *err, size_t errlen)
{
	int ret = agent_sync_as(name, host, timeout_ms);

	if (ret)
		snprintf(err, errlen, "the guest agent did not take its new identity: %s",
			 strerror(-ret));
	else if (mac && (ret = agent_set_mac(name, mac, timeout_ms)))
		snprintf(err, errlen, "the guest agent did not take its new MAC address: %s "
			 "(a template made before mvm gave each sandbox its own must be made again)",
			 strerror(-ret));
	return ret;
}

int agent_new_identity(const char *name, int timeout_ms, char *err, size_t errlen)
{
	static const uint8_t zero[6];
	uint8_t extra[6 + AP_SYNC_HOST_MAX];
	char host[AP_SYNC_HOST_MAX + 1];
	bool mac;
	struct sb_config c;
	size_t hl;
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
	hl = strlen(host);
	/* One round trip: clock, entropy, hostname and MAC (zero: none). */
	mac = !c.net_off && memcmp(c.mac, zero, 6);
	memcpy(extra, mac ? c.mac : zero, 6);
	memcpy(extra + 6, host, hl);
	ret = send_synced(name, AP_IDENTITY, extra, 6 + hl, timeout_ms);
	/* An agent from before IDENTITY drops the connection at the unknown type. */
	if (ret == -EPROTO || ret == -ECONNRESET)
		ret = identity_in_steps(name, host, mac ? c.mac : NULL, timeout_ms, err, errlen);
	else if (ret)
		snprintf(err, errlen, "the guest agent did not take its new identity: %s",
			 strerror(-ret));
	sb_config_free(&c);
	return ret;
}
