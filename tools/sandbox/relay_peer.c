/*
 * Who is at the other end of a loopback TCP connection (relay.h,
 * relay_peer_uid): loopback TCP has no SO_PEERCRED, but the kernel keeps
 * the owner of every socket and answers NETLINK_SOCK_DIAG's exact lookup
 * (inet_diag_req_v2 without NLM_F_DUMP) with the client socket's
 * inet_diag_msg, whose idiag_uid is the uid that created it. Stock clients
 * (puppeteer-core, Playwright, a browser running noVNC) need no change.
 * The netlink socket is opened before confinement (the relay's seccomp
 * table allows AF_UNIX sockets only) and before any user namespace, so the
 * uids it reports are the host's.
 */
#include <errno.h>
#include <string.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/sandbox/relay.h"

struct diag_req {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

int relay_peer_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	return fd < 0 ? -errno : fd;
}

size_t relay_peer_req(void *buf, size_t cap, const struct sockaddr_in *peer,
		      const struct sockaddr_in *local, uint32_t seq)
{
	struct diag_req q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = seq },
		.r = { .sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0u },
	};

	if (cap < sizeof(q))
		return 0;
	/* The client's own socket: its local end is the peer we accepted. */
	q.r.id.idiag_sport = peer->sin_port;
	q.r.id.idiag_src[0] = peer->sin_addr.s_addr;
	q.r.id.idiag_dport = local->sin_port;
	q.r.id.idiag_dst[0] = local->sin_addr.s_addr;
	q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	memcpy(buf, &q, sizeof(q));
	return sizeof(q);
}

/* Whether @a (as inet_diag reports a socket of @family) is IPv4 address
 * @v4: a dual-stack client's AF_INET6 socket reports ::ffff:a.b.c.d. */
static bool same_addr(const uint32_t a[4], uint8_t family, uint32_t v4)
{
	if (family == AF_INET)
		return a[0] == v4;
	return family == AF_INET6 && !a[0] && !a[1] && a[2] == htonl(0xffff) && a[3] == v4;
}

/* Whether @m describes exactly the socket asked about, in a state where it
 * still has an owner (a TIME_WAIT or request socket reports uid 0). */
static bool is_client(const struct inet_diag_msg *m, const struct sockaddr_in *peer,
		      const struct sockaddr_in *local)
{
	if (m->idiag_state == TCP_TIME_WAIT || m->idiag_state == TCP_LISTEN ||
	    m->idiag_state == TCP_CLOSE || m->idiag_state == 12 /* TCP_NEW_SYN_RECV */)
		return false;
	return m->id.idiag_sport == peer->sin_port && m->id.idiag_dport == local->sin_port &&
	       same_addr(m->id.idiag_src, m->idiag_family, peer->sin_addr.s_addr) &&
	       same_addr(m->id.idiag_dst, m->idiag_family, local->sin_addr.s_addr);
}

int relay_peer_parse(const void *buf, size_t n, uint32_t seq, const struct sockaddr_in *peer,
		     const struct sockaddr_in *local, uint32_t *uid)
{
	const struct nlmsghdr *h = buf;
	int len = n > 65536 ? 65536 : (int)n;

	for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_seq != seq)
			continue;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EPROTO;
			return e->error < 0 && e->error > -4096 ? e->error : -EPROTO;
		}
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
			continue;
		{
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (!is_client(m, peer, local))
				return -ESRCH;
			*uid = m->idiag_uid;
			return 0;
		}
	}
	return -ENOENT;
}

int relay_peer_uid(int nl, const struct sockaddr_in *peer, const struct sockaddr_in *local,
		   uint32_t *uid)
{
	static uint32_t seq;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr align;
		char b[8192];
	} rx;
	char req[sizeof(struct diag_req)];
	size_t qn = relay_peer_req(req, sizeof(req), peer, local, ++seq);
	ssize_t got;

	if (sendto(nl, req, qn, 0, (struct sockaddr *)&kernel, sizeof(kernel)) != (ssize_t)qn)
		return -errno;
	/* The kernel queues its answer before sendto returns: nothing to wait for. */
	got = recv(nl, rx.b, sizeof(rx.b), MSG_DONTWAIT);
	if (got < 0)
		return -errno;
	return relay_peer_parse(rx.b, (size_t)got, seq, peer, local, uid);
}
