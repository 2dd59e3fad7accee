/*
 * TCP: one vsock stream becomes a byte pipe to a port on the guest's own
 * loopback (the host's `mvm browser` relay reaches Chromium's DevTools and
 * noVNC this way, with or without a network device). Loopback only: the
 * host names a port, never an address, so this reaches nothing the guest's
 * network policy governs. Runs in the per-connection process; bounded
 * buffers, and back-pressure by not reading a side whose peer is full.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/agent.h"

#define PIPE_BUF_SIZE (64u << 10)

static void pipe_loop(int a, int b)
{
	static uint8_t ub[PIPE_BUF_SIZE], db[PIPE_BUF_SIZE];	/* not on the stack */
	struct ap_half up = { .from = a, .to = b, .buf = ub, .cap = sizeof(ub) };
	struct ap_half down = { .from = b, .to = a, .buf = db, .cap = sizeof(db) };

	while (!(up.done && down.done)) {
		struct pollfd p[2] = { { .fd = a }, { .fd = b } };

		/* a: read when up's buffer is empty, write when down holds bytes; b likewise. */
		p[0].events = (ap_half_wants_read(&up) ? POLLIN : 0) | (down.len ? POLLOUT : 0);
		p[1].events = (ap_half_wants_read(&down) ? POLLIN : 0) | (up.len ? POLLOUT : 0);
		/* Nothing wanted from a socket: leave it out, or its POLLHUP would spin us. */
		for (int i = 0; i < 2; i++)
			if (!p[i].events)
				p[i].fd = -1;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		/* An error on either socket ends both directions: nothing can be delivered. */
		if (ap_half_step(&up, p[0].revents & (POLLIN | POLLHUP | POLLERR)) ||
		    ap_half_step(&down, p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			return;
	}
}

void agent_tcp(int conn, const uint8_t *p, size_t len)
{
	struct ap_rd r = { .p = p, .len = len };
	unsigned port = ap_get_u16(&r);
	int fd;

	if (r.err || r.off != len || port == 0) {
		agent_error(conn, "malformed tcp request");
		return;
	}
	fd = ap_connect_loopback(port);
	if (fd < 0) {
		agent_error(conn, "127.0.0.1:%u: %s", port, strerror(-fd));
		return;
	}
	if (ap_write_frame(conn, AP_OK, NULL, 0) == 0)
		pipe_loop(conn, fd);
	close(fd);
}
