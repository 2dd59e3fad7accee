/* Reaching a sandbox's guest agent through the VMM's hybrid vsock socket. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/api_client.h"

/* Read the VMM's "OK <port>\n" byte by byte: nothing after it is ours to take. */
static int read_ok_line(int fd, int timeout_ms)
{
	char line[32];
	size_t n = 0;

	while (n < sizeof(line) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);

		if (r <= 0)
			return r ? -errno : -ETIMEDOUT;
		if (read(fd, line + n, 1) != 1)
			return -ECONNREFUSED;	/* the guest refused (agent not up yet) */
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = 0;
	return strncmp(line, "OK ", 3) ? -EPROTO : 0;
}

static int connect_once(const char *name, int timeout_ms)
{
	int fd = sb_connect_unix(name, "vsock.sock"), ret;
	char req[32];

	if (fd < 0)
		return fd;
	snprintf(req, sizeof(req), "CONNECT %u\n", AP_PORT);
	ret = ap_write_all(fd, req, strlen(req));
	if (!ret)
		ret = read_ok_line(fd, timeout_ms);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int agent_connect(const char *name, int timeout_ms)
{
	const struct timespec pause_100ms = { 0, 100 * 1000000L };
	uint64_t deadline = mono_now_ms() + (uint64_t)timeout_ms;
	int fd;

	/* A refusal means no agent listens right now (booting, or being restarted by init). */
	while ((fd = connect_once(name, timeout_ms)) == -ECONNREFUSED && mono_now_ms() < deadline)
		nanosleep(&pause_100ms, NULL);
	return fd;
}

int agent_request(int fd, uint16_t type, const void *payload, uint32_t len, int timeout_ms)
{
	uint8_t buf[1025];
	struct ap_hdr h;
	struct pollfd p;
	int ret = ap_write_frame(fd, type, payload, len);

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

static int simple_op(const char *name, uint16_t type, int timeout_ms)
{
	int fd = agent_connect(name, timeout_ms);

	return fd < 0 ? fd : agent_request(fd, type, NULL, 0, timeout_ms);
}

int agent_ping(const char *name, int timeout_ms)
{
	return simple_op(name, AP_PING, timeout_ms);
}

int agent_shutdown(const char *name, int timeout_ms)
{
	return simple_op(name, AP_SHUTDOWN, timeout_ms);
}
