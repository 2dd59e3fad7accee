/* Upstream DNS queries (issue 15 item 5): each from its own socket, so its
 * own kernel-random source port, with an id from getrandom(), never from a
 * predictable sequence. A real UDP server on 127.0.0.1 receives them. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/dns_upstream.h"
#include "devices/netpolicy/dns_msg.h"

#define N 16

Test(net_upstream, random_id_and_source_port_per_query)
{
	struct sockaddr_in srv = {.sin_family = AF_INET}, from;
	socklen_t sl = sizeof(srv), fl;
	int s = socket(AF_INET, SOCK_DGRAM, 0), fds[N];
	uint16_t ids[N], ports[N];
	uint8_t msg[512];
	struct timeval tv = {.tv_sec = 5};
	int same_step = 0, same_id = 0;

	inet_pton(AF_INET, "127.0.0.1", &srv.sin_addr);
	cr_assert_eq(bind(s, (struct sockaddr *)&srv, sizeof(srv)), 0);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&srv, &sl), 0);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < N; i++) {
		struct dns_query q;
		ssize_t len;

		fds[i] = dns_upstream_send((struct sockaddr *)&srv, sizeof(srv), "example.com",
					   DNS_T_A, &ids[i]);
		cr_assert_geq(fds[i], 0, "send: %s", strerror(-fds[i]));
		fl = sizeof(from);
		len = recvfrom(s, msg, sizeof(msg), 0, (struct sockaddr *)&from, &fl);
		cr_assert_gt(len, 0);
		cr_assert_eq(dns_parse_query(msg, (size_t)len, &q), 0);
		cr_assert_str_eq(q.name, "example.com");
		cr_assert_eq(q.id, ids[i], "the id on the wire is the one returned");
		ports[i] = ntohs(from.sin_port);
	}
	for (int i = 1; i < N; i++) {
		same_step += (uint16_t)(ports[i] - ports[i - 1]) == (uint16_t)(ports[1] - ports[0]);
		same_step += (uint16_t)(ids[i] - ids[i - 1]) == (uint16_t)(ids[1] - ids[0]);
		for (int j = 0; j < i; j++) {
			cr_assert_neq(ports[i], ports[j], "one socket per query: distinct ports");
			same_id += ids[i] == ids[j];
		}
	}
	cr_assert_lt(same_step, N, "ports or ids follow a fixed step");
	cr_assert_leq(same_id, 2, "ids repeat: %d", same_id);
	/* the answer comes back on the query's own socket */
	msg[2] |= 0x80;
	cr_assert_eq(sendto(s, msg, 12, 0, (struct sockaddr *)&from, fl), 12);
	struct pollfd pfd = {.fd = fds[N - 1], .events = POLLIN};
	cr_assert_eq(poll(&pfd, 1, 5000), 1);
	cr_assert_eq(recv(fds[N - 1], msg, sizeof(msg), 0), 12);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	close(s);
}
