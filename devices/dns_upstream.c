/* An upstream DNS query from its own socket with a random id (dns_upstream.h). */
#include <errno.h>
#include <sys/random.h>
#include <unistd.h>

#include "devices/dns_upstream.h"
#include "devices/netpolicy/dns_msg.h"

int dns_upstream_send(const struct sockaddr *sa, socklen_t salen, const char *name, uint16_t qtype,
		      uint16_t *id)
{
	uint8_t msg[DNS_HDR_LEN + NET_NAME_MAX + 2 + 4];
	size_t len;
	int fd, ret;

	if (getrandom(id, sizeof(*id), 0) != sizeof(*id))
		return -EIO; /* never a guessable id instead */
	ret = dns_build_query(*id, name, qtype, msg, sizeof(msg), &len);
	if (ret)
		return ret;
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* connect() binds an ephemeral port the kernel picks at random */
	if (connect(fd, sa, salen) || send(fd, msg, len, 0) != (ssize_t)len) {
		ret = errno ? -errno : -EIO;
		close(fd);
		return ret;
	}
	return fd;
}
