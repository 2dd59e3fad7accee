/* One direction of a raw byte pipe (TCP requests): see ap_half in proto.h. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/proto.h"

int ap_connect_loopback(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

bool ap_half_wants_read(const struct ap_half *h)
{
	return !h->eof && !h->len;
}

static bool transient(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

int ap_half_step(struct ap_half *h, bool readable)
{
	ssize_t n;

	if (readable && ap_half_wants_read(h)) {
		n = recv(h->from, h->buf, h->cap, MSG_DONTWAIT);
		if (n < 0 && !transient(errno))
			return -errno;
		if (n == 0)
			h->eof = true;
		if (n > 0) {
			h->off = 0;
			h->len = (size_t)n;
		}
	}
	while (h->len) {
		n = send(h->to, h->buf + h->off, h->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && transient(errno))
			break;
		if (n <= 0)
			return n ? -errno : -EIO;
		h->off += (size_t)n;
		h->len -= (size_t)n;
	}
	if (h->eof && !h->len && !h->done) {
		shutdown(h->to, SHUT_WR);
		h->done = true;
	}
	return 0;
}
