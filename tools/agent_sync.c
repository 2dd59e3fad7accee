/* The host side of the agent's SYNC (guest/agent/snap_sync.c). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tools/agent_client.h"
#include "tools/agent_sync.h"

int agent_sync(const char *name, int timeout_ms)
{
	uint8_t req[AP_SYNC_LEN], buf[1025];
	struct ap_hdr h;
	struct pollfd p;
	struct timespec t;
	int fd = agent_connect(name, timeout_ms), ret;
	uint64_t sec;
	uint32_t nsec;

	if (fd < 0)
		return fd;
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
	ret = ap_write_frame(fd, AP_SYNC, req, sizeof(req));
	memset(req, 0, sizeof(req));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (!ret && poll(&p, 1, timeout_ms) != 1)
		ret = -ETIMEDOUT;
	if (!ret) {
		ret = ap_read_frame(fd, &h, buf, sizeof(buf) - 1);
		ret = ret == 1 && h.type == AP_OK ? 0 : ret <= 0 ? (ret ? ret : -ECONNRESET) : -EPROTO;
	}
	close(fd);
	return ret;
}
