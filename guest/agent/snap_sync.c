/*
 * SYNC: after a rollback or a restore the guest runs on with the wall clock
 * of the snapshot and, in forks, the same RNG state as its siblings. The
 * host sends its time and fresh entropy; the agent steps CLOCK_REALTIME,
 * mixes the bytes into the kernel RNG (RNDADDENTROPY) and forces a reseed
 * (RNDRESEEDCRNG), then answers OK. `mvm rollback`, `restore` and `fork`
 * send it before they return, so no later exec sees a stale clock or a
 * shared RNG. A sandbox started from a template (or restored or forked
 * under a new name) also gets its own hostname: the bytes after the seed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/random.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

#ifndef RNDRESEEDCRNG
#define RNDRESEEDCRNG _IO('R', 0x07)
#endif

static int reseed(const uint8_t *seed)
{
	struct {
		struct rand_pool_info info;
		uint8_t bytes[AP_SYNC_SEED];
	} s;
	int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	memset(&s, 0, sizeof(s));
	memcpy(s.bytes, seed, AP_SYNC_SEED);
	s.info.entropy_count = AP_SYNC_SEED * 8;
	s.info.buf_size = AP_SYNC_SEED;
	if (ioctl(fd, RNDADDENTROPY, &s) || ioctl(fd, RNDRESEEDCRNG))
		ret = -errno;
	memset(&s, 0, sizeof(s));
	close(fd);
	return ret;
}

/* [A-Za-z0-9.-], 1 to AP_SYNC_HOST_MAX bytes, as the host checked it too. */
static bool hostname_ok(const uint8_t *h, size_t n)
{
	if (n == 0 || n > AP_SYNC_HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum(h[i]) && h[i] != '-' && h[i] != '.')
			return false;
	return true;
}

void agent_sync(int conn, const uint8_t *p, size_t len)
{
	struct timespec t;
	uint64_t sec;
	uint32_t nsec;

	if (len < AP_SYNC_LEN || (len > AP_SYNC_LEN && !hostname_ok(p + AP_SYNC_LEN, len - AP_SYNC_LEN))) {
		agent_error(conn, "malformed sync request");
		return;
	}
	memcpy(&sec, p, 8);
	memcpy(&nsec, p + 8, 4);
	if (nsec >= 1000000000u || sec > (uint64_t)1 << 40) {
		agent_error(conn, "sync: impossible time");
		return;
	}
	t.tv_sec = (time_t)sec;
	t.tv_nsec = (long)nsec;
	if (clock_settime(CLOCK_REALTIME, &t)) {
		agent_error(conn, "sync: clock_settime: %s", strerror(errno));
		return;
	}
	if (reseed(p + 12)) {
		agent_error(conn, "sync: reseeding the RNG: %s", strerror(errno));
		return;
	}
	if (len > AP_SYNC_LEN && sethostname((const char *)p + AP_SYNC_LEN, len - AP_SYNC_LEN)) {
		agent_error(conn, "sync: sethostname: %s", strerror(errno));
		return;
	}
	ap_write_frame(conn, AP_OK, NULL, 0);
}
