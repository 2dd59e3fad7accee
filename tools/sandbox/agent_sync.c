/* The host side of the agent's SYNC (guest/agent/snap_sync.c). */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/agent_sync.h"

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
