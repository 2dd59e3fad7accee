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

/* The time and seed of a SYNC-shaped request: set both. 0, or -errno with
 * @why naming the step. */
static int sync_apply(const uint8_t *p, const char **why)
{
	struct timespec t;
	uint64_t sec;
	uint32_t nsec;

	memcpy(&sec, p, 8);
	memcpy(&nsec, p + 8, 4);
	*why = "impossible time";
	if (nsec >= 1000000000u || sec > (uint64_t)1 << 40)
		return -EINVAL;
	t.tv_sec = (time_t)sec;
	t.tv_nsec = (long)nsec;
	*why = "clock_settime";
	if (clock_settime(CLOCK_REALTIME, &t))
		return -errno;
	*why = "reseeding the RNG";
	return reseed(p + 12);
}

void agent_sync(int conn, const uint8_t *p, size_t len)
{
	const char *why;
	int ret;

	if (len < AP_SYNC_LEN || (len > AP_SYNC_LEN && !hostname_ok(p + AP_SYNC_LEN, len - AP_SYNC_LEN))) {
		agent_error(conn, "malformed sync request");
		return;
	}
	if ((ret = sync_apply(p, &why))) {
		agent_error(conn, "sync: %s: %s", why, strerror(-ret));
		return;
	}
	if (len > AP_SYNC_LEN && sethostname((const char *)p + AP_SYNC_LEN, len - AP_SYNC_LEN)) {
		agent_error(conn, "sync: sethostname: %s", strerror(errno));
		return;
	}
	ap_write_frame(conn, AP_OK, NULL, 0);
}

void agent_identity(int conn, const uint8_t *p, size_t len)
{
	static const uint8_t zero[6];
	const uint8_t *mac = p + AP_SYNC_LEN;
	bool new_mac;
	const char *why;
	int ret;

	if (len <= AP_IDENTITY_LEN || !hostname_ok(p + AP_IDENTITY_LEN, len - AP_IDENTITY_LEN)) {
		agent_error(conn, "malformed identity request");
		return;
	}
	new_mac = memcmp(mac, zero, 6) != 0;
	if (new_mac && !agent_mac_ok(mac)) {
		agent_error(conn, "malformed identity request: not a unicast MAC address");
		return;
	}
	if ((ret = sync_apply(p, &why))) {
		agent_error(conn, "identity: %s: %s", why, strerror(-ret));
		return;
	}
	if (sethostname((const char *)p + AP_IDENTITY_LEN, len - AP_IDENTITY_LEN)) {
		agent_error(conn, "identity: sethostname: %s", strerror(errno));
		return;
	}
	if (new_mac && (ret = agent_mac_apply(mac)) < 0) {
		agent_error(conn, "identity: setting the MAC address: %s", strerror(-ret));
		return;
	}
	ap_write_frame(conn, AP_OK, NULL, 0);
}
