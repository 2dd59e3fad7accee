/* Reaching a sandbox's guest agent through the VMM's hybrid vsock socket. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/mono_time.h"
#include "common/start_trace.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/api_client.h"

static long now_ms(void)
{
	return (long)mono_now_ms();
}

/* Wait until @fd is readable or the CLOCK_MONOTONIC @deadline (ms) passes. 0 or -errno. */
static int wait_readable(int fd, long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* Exactly @n bytes by @deadline: a guest that sends half a frame and stalls cannot hold us. */
static int read_by(int fd, uint8_t *b, size_t n, long deadline)
{
	while (n) {
		int ret = wait_readable(fd, deadline);
		ssize_t r;

		if (ret)
			return ret;
		r = read(fd, b, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return r ? -errno : -ECONNRESET;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Read the VMM's "OK <port>\n" byte by byte: nothing after it is ours to take. */
static int read_ok_line(int fd, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	char line[32];
	size_t n = 0;

	while (n < sizeof(line) - 1) {
		int r = wait_readable(fd, deadline);

		if (r)
			return r;
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

int agent_wait_ms(void)
{
	const char *s = getenv("MVM_AGENT_TIMEOUT");
	long v;

	return s && !cli_parse_int(s, 1, 3600, &v) ? (int)v * 1000 : 10000;
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
	const struct timeval snd = { .tv_sec = timeout_ms / 1000, .tv_usec = timeout_ms % 1000 * 1000 };
	long deadline = now_ms() + timeout_ms;
	uint8_t hb[AP_HDR_SIZE], buf[1024];
	struct ap_hdr h;
	int ret;

	/* A guest that stops reading must not block the write either. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
	ret = ap_write_frame(fd, type, payload, len);
	if (ret == -EAGAIN)
		ret = -ETIMEDOUT;
	if (!ret)
		ret = read_by(fd, hb, sizeof(hb), deadline);
	if (!ret)
		ret = ap_hdr_decode(hb, sizeof(hb), &h);
	if (!ret && h.len > sizeof(buf))
		ret = -EPROTO;
	if (!ret)
		ret = read_by(fd, buf, h.len, deadline);
	if (!ret && h.type != AP_OK)
		ret = -EPROTO;
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
	int fd = agent_connect(name, timeout_ms);

	if (fd < 0)
		return fd;
	start_trace("stop: connected to the agent");
	return agent_request(fd, AP_SHUTDOWN, NULL, 0, timeout_ms);
}
