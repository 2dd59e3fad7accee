/*
 * The relay's owner check, pure part (tools/sandbox/relay_peer.c): the
 * NETLINK_SOCK_DIAG request names the client's own socket, and an answer
 * yields a uid only when it describes exactly that live socket; errors,
 * other sockets, TIME_WAIT and truncated answers never do. The live lookup
 * against the kernel is tests/unit/test_relay.c's
 * another_users_connections_are_refused_and_take_no_slot.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "tools/sandbox/relay.h"

static const struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = 0x3930,
					 .sin_addr.s_addr = 0x0100007f };
static const struct sockaddr_in local = { .sin_family = AF_INET, .sin_port = 0xd204,
					  .sin_addr.s_addr = 0x0100007f };

struct answer {
	struct nlmsghdr nh;
	struct inet_diag_msg m;
};

static struct answer reply(uint32_t seq, uint8_t state, uint32_t uid)
{
	struct answer a = {
		.nh = { .nlmsg_len = sizeof(a), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_seq = seq },
		.m = { .idiag_family = AF_INET, .idiag_state = state, .idiag_uid = uid },
	};

	a.m.id.idiag_sport = peer.sin_port;
	a.m.id.idiag_src[0] = peer.sin_addr.s_addr;
	a.m.id.idiag_dport = local.sin_port;
	a.m.id.idiag_dst[0] = local.sin_addr.s_addr;
	return a;
}

Test(relay_peer, the_request_names_the_clients_own_socket)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} q;
	char small[8];

	cr_assert_eq(relay_peer_req(small, sizeof(small), &peer, &local, 1), 0u);
	cr_assert_eq(relay_peer_req(&q, sizeof(q), &peer, &local, 7), sizeof(q));
	cr_assert_eq(q.nh.nlmsg_type, SOCK_DIAG_BY_FAMILY);
	cr_assert_eq(q.nh.nlmsg_flags, NLM_F_REQUEST, "an exact lookup, no dump");
	cr_assert_eq(q.nh.nlmsg_seq, 7u);
	cr_assert_eq(q.r.sdiag_family, AF_INET);
	cr_assert_eq(q.r.sdiag_protocol, IPPROTO_TCP);
	cr_assert_eq(q.r.id.idiag_sport, peer.sin_port, "the client's port is the socket's own");
	cr_assert_eq(q.r.id.idiag_src[0], peer.sin_addr.s_addr);
	cr_assert_eq(q.r.id.idiag_dport, local.sin_port);
	cr_assert_eq(q.r.id.idiag_dst[0], local.sin_addr.s_addr);
	cr_assert_eq(q.r.id.idiag_cookie[0], INET_DIAG_NOCOOKIE);
}

Test(relay_peer, a_matching_live_socket_gives_its_uid)
{
	struct answer a = reply(5, TCP_ESTABLISHED, 1000);
	uint32_t uid = 0;

	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), 0);
	cr_assert_eq(uid, 1000u);
	a = reply(5, TCP_FIN_WAIT2, 0);
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), 0, "a client that half-closed");
	cr_assert_eq(uid, 0u);
	/* A dual-stack client's AF_INET6 socket: its addresses as ::ffff:a.b.c.d. */
	a = reply(5, TCP_ESTABLISHED, 1001);
	a.m.idiag_family = AF_INET6;
	a.m.id.idiag_src[0] = a.m.id.idiag_dst[0] = 0;
	a.m.id.idiag_src[2] = a.m.id.idiag_dst[2] = htonl(0xffff);
	a.m.id.idiag_src[3] = peer.sin_addr.s_addr;
	a.m.id.idiag_dst[3] = local.sin_addr.s_addr;
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), 0);
	cr_assert_eq(uid, 1001u);
	a.m.id.idiag_src[2] = 0;	/* ::a.b.c.d is no IPv4 address */
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ESRCH);
}

Test(relay_peer, anything_else_gives_no_uid)
{
	struct answer a;
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr e;
	} err = { .nh = { .nlmsg_len = sizeof(err), .nlmsg_type = NLMSG_ERROR, .nlmsg_seq = 5 },
		  .e = { .error = -ENOENT } };
	uint32_t uid = 4242;

	/* A TIME_WAIT or request socket reports uid 0: never taken for root's. */
	a = reply(5, TCP_TIME_WAIT, 0);
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ESRCH);
	a = reply(5, 12 /* TCP_NEW_SYN_RECV */, 0);
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ESRCH);
	/* A listener the lookup fell back to (no remote end). */
	a = reply(5, TCP_LISTEN, 1000);
	a.m.id.idiag_dport = 0;
	a.m.id.idiag_dst[0] = 0;
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ESRCH);
	/* Another connection's socket. */
	a = reply(5, TCP_ESTABLISHED, 1000);
	a.m.id.idiag_sport ^= 1;
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ESRCH);
	a = reply(5, TCP_ESTABLISHED, 1000);
	a.m.id.idiag_dst[0] = htonl(0x7f000002);
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ESRCH);
	/* An answer to another request, a truncated one, the kernel's error. */
	a = reply(4, TCP_ESTABLISHED, 1000);
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ENOENT);
	a = reply(5, TCP_ESTABLISHED, 1000);
	cr_assert_eq(relay_peer_parse(&a, sizeof(a) - 1, 5, &peer, &local, &uid), -ENOENT);
	a.nh.nlmsg_len = sizeof(struct nlmsghdr) + 4;
	cr_assert_eq(relay_peer_parse(&a, sizeof(a), 5, &peer, &local, &uid), -ENOENT);
	cr_assert_eq(relay_peer_parse(&err, sizeof(err), 5, &peer, &local, &uid), -ENOENT);
	err.e.error = 0;
	cr_assert_eq(relay_peer_parse(&err, sizeof(err), 5, &peer, &local, &uid), -EPROTO);
	cr_assert_eq(relay_peer_parse(&err, 0, 5, &peer, &local, &uid), -ENOENT);
	cr_assert_eq(uid, 4242u, "no answer touched the uid");
}

Test(relay_http_upgrade, only_a_websocket_upgrade_header_counts)
{
	static const struct {
		const char *head;
		bool up;
	} cases[] = {
		{ "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n", true },
		{ "GET / HTTP/1.1\r\nupgrade:WebSocket \r\nHost: a\r\n\r\n", true },
		{ "GET / HTTP/1.1\r\nUpgrade: h2c, websocket\r\n\r\n", true },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nUpgrade: websockets\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nX-Upgrade: websocket\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\nUpgrade: websocket\r\n\r\n", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *h = cases[i].head;
		size_t n = (size_t)((const char *)memmem(h, strlen(h), "\r\n\r\n", 4) - h) + 4;

		cr_assert_eq(relay_http_upgrade(h, n), cases[i].up, "case %zu: %s", i, h);
	}
}
