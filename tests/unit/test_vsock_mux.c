/* vsock back-end state machine over real Unix sockets, no KVM: the test plays the guest. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/vsock_mux.h"

#define CID 3

static struct vsock_mux m;
static char dir[64], path[128];
static int kicks;

static int t_watch(void *o, int fd, uint32_t ev, struct vsock_conn *c, bool added)
{
	return 0;
}

static void t_kick(void *o)
{
	kicks++;
}

static const struct vsock_host_ops ops = { .watch = t_watch, .kick = t_kick };

static void setup(void)
{
	strcpy(dir, "/tmp/mvm-vsock-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v.sock", dir);
	cr_assert_eq(vsock_mux_init(&m, CID, path, &ops, NULL), 0);
}

static void teardown(void)
{
	char cmd[128];

	vsock_mux_fini(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

static int connect_to(const char *p)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(a.sun_path, p);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static struct vsock_conn *only_conn(void)
{
	for (int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (m.conns[i].state != VS_FREE)
			return &m.conns[i];
	return NULL;
}

static struct vsock_hdr guest(uint16_t op, uint32_t gport, uint32_t hport, uint32_t len)
{
	struct vsock_hdr h = { .src_cid = CID, .dst_cid = VSOCK_HOST_CID, .src_port = gport,
			       .dst_port = hport, .len = len, .type = VSOCK_TYPE_STREAM, .op = op,
			       .buf_alloc = 1 << 20 };
	return h;
}

static uint8_t pbuf[VSOCK_MAX_PKT];

static int next(struct vsock_hdr *h)
{
	return vsock_mux_next_pkt(&m, h, pbuf, 4096);
}

/* Client connects, guest accepts: returns the client fd and the host port. */
static int establish(uint32_t gport, uint32_t *hport)
{
	struct vsock_hdr h, r;
	char line[64] = { 0 };
	int fd = connect_to(path);
	struct vsock_conn *c;

	dprintf(fd, "CONNECT %u\n", gport);
	vsock_mux_fd_event(&m, NULL, EPOLLIN);
	c = only_conn();
	cr_assert_not_null(c);
	vsock_mux_fd_event(&m, c, EPOLLIN);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_REQUEST);
	cr_assert_eq(h.dst_port, gport);
	cr_assert_eq(h.dst_cid, CID);
	cr_assert_eq(h.src_cid, VSOCK_HOST_CID);
	r = guest(VSOCK_OP_RESPONSE, gport, h.src_port, 0);
	vsock_mux_guest_pkt(&m, &r, NULL);
	cr_assert_gt(read(fd, line, sizeof(line) - 1), 0);
	cr_assert_eq(sscanf(line, "OK %u", hport), 1);
	cr_assert_eq(*hport, h.src_port);
	return fd;
}

TestSuite(vsock_mux, .init = setup, .fini = teardown);

Test(vsock_mux, host_connect_and_data_both_ways)
{
	struct vsock_hdr h, w;
	uint32_t hp;
	char got[16] = { 0 };
	int fd = establish(1024, &hp);

	cr_assert_eq(write(fd, "hello", 5), 5);
	vsock_mux_fd_event(&m, only_conn(), EPOLLIN);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RW);
	cr_assert_eq(h.len, 5);
	cr_assert_eq(memcmp(pbuf, "hello", 5), 0);
	cr_assert_eq(h.buf_alloc, VSOCK_BUF_ALLOC);
	cr_assert_eq(next(&h), 0, "nothing more: read hit EAGAIN");

	w = guest(VSOCK_OP_RW, 1024, hp, 5);
	vsock_mux_guest_pkt(&m, &w, (const uint8_t *)"world");
	cr_assert_eq(read(fd, got, sizeof(got)), 5);
	cr_assert_str_eq(got, "world");
	close(fd);
}

Test(vsock_mux, respects_guest_credit)
{
	struct vsock_hdr h, u;
	uint32_t hp;
	int fd = establish(1024, &hp);
	struct vsock_conn *c = only_conn();

	u = guest(VSOCK_OP_CREDIT_UPDATE, 1024, hp, 0);
	u.buf_alloc = 4;
	vsock_mux_guest_pkt(&m, &u, NULL);
	cr_assert_eq(write(fd, "0123456789", 10), 10);
	vsock_mux_fd_event(&m, c, EPOLLIN);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.len, 4, "only the credit the guest gave");
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_CREDIT_REQUEST);
	cr_assert_eq(next(&h), 0, "no credit: wait");
	u.fwd_cnt = 4;		/* the guest consumed them */
	vsock_mux_guest_pkt(&m, &u, NULL);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RW);
	cr_assert_eq(h.len, 4);
	cr_assert_eq(memcmp(pbuf, "4567", 4), 0);
	close(fd);
}

Test(vsock_mux, credit_overrun_resets)
{
	static uint8_t big[VSOCK_MAX_PKT];
	struct vsock_hdr h, w;
	uint32_t hp;
	int fd = establish(1024, &hp);
	int sz = 4096;

	/* Nobody reads the client end: the guest may fill our buffer, no more. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	w = guest(VSOCK_OP_RW, 1024, hp, VSOCK_MAX_PKT);
	for (uint32_t sent = 0; sent + VSOCK_MAX_PKT <= VSOCK_BUF_ALLOC + (1u << 20); sent += VSOCK_MAX_PKT) {
		vsock_mux_guest_pkt(&m, &w, big);
		if (!only_conn() || only_conn()->state != VS_ESTABLISHED)
			break;
	}
	while (next(&h) == 1 && h.op != VSOCK_OP_RST)
		;
	cr_assert_eq(h.op, VSOCK_OP_RST, "a guest past its credit is reset");
	cr_assert_null(only_conn());
	close(fd);
}

Test(vsock_mux, hostile_headers)
{
	struct vsock_hdr h, g;

	g = guest(VSOCK_OP_RW, 5, 6, 0);
	g.src_cid = 77;		/* spoofed source */
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 0, "spoofed packets are dropped silently");
	g = guest(VSOCK_OP_RW, 5, 6, 0);
	g.dst_cid = 9;
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 0);
	g = guest(99, 5, 6, 0);
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RST, "unknown op, unknown connection");
	cr_assert_eq(h.dst_port, 5);
	cr_assert_eq(h.src_port, 6);
	g = guest(VSOCK_OP_REQUEST, 5, 6, 0);
	g.type = 2;		/* SEQPACKET: not offered */
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RST);
	g = guest(VSOCK_OP_RST, 5, 6, 0);
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 0, "never an RST for an RST");
	for (int i = 0; i < 100; i++) {
		g = guest(VSOCK_OP_RW, 5, (uint32_t)i, 0);
		vsock_mux_guest_pkt(&m, &g, NULL);
	}
	int n = 0;
	while (next(&h) == 1)
		n++;
	cr_assert_leq(n, 16, "RST queue is bounded");
}

Test(vsock_mux, bad_connect_line_closes)
{
	char b[8];
	int fd = connect_to(path);

	cr_assert_eq(write(fd, "CONNECT x\n", 10), 10);
	vsock_mux_fd_event(&m, NULL, EPOLLIN);
	vsock_mux_fd_event(&m, only_conn(), EPOLLIN);
	cr_assert_null(only_conn());
	cr_assert_eq(read(fd, b, sizeof(b)), 0);
	close(fd);
	fd = connect_to(path);
	cr_assert_eq(write(fd, "CONNECT 123456789012345678901234567890\n", 39), 39);
	vsock_mux_fd_event(&m, NULL, EPOLLIN);
	vsock_mux_fd_event(&m, only_conn(), EPOLLIN);
	cr_assert_null(only_conn(), "overlong line");
	close(fd);
}

Test(vsock_mux, guest_connects_to_host_port)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct vsock_hdr h, g;
	char got[8] = { 0 };
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), cfd;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s_52", path);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(lfd, 4), 0);
	g = guest(VSOCK_OP_REQUEST, 4000, 52, 0);
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RESPONSE);
	cr_assert_eq(h.src_port, 52);
	cr_assert_eq(h.dst_port, 4000);
	cfd = accept(lfd, NULL, NULL);
	g = guest(VSOCK_OP_RW, 4000, 52, 3);
	vsock_mux_guest_pkt(&m, &g, (const uint8_t *)"abc");
	cr_assert_eq(read(cfd, got, sizeof(got)), 3);
	cr_assert_str_eq(got, "abc");
	/* No listener on port 53: refused. */
	g = guest(VSOCK_OP_REQUEST, 4001, 53, 0);
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RST);
	close(cfd);
	close(lfd);
}

Test(vsock_mux, shutdown_both_and_host_close)
{
	struct vsock_hdr h, g;
	uint32_t hp;
	char b[4];
	int fd = establish(1024, &hp);

	g = guest(VSOCK_OP_SHUTDOWN, 1024, hp, 0);
	g.flags = VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND;
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_RST, "we finish the close with an RST");
	cr_assert_null(only_conn());
	cr_assert_eq(read(fd, b, sizeof(b)), 0, "client sees EOF");
	close(fd);

	/* The client closes: the guest gets SHUTDOWN(both), then its RST frees the slot. */
	fd = establish(1024, &hp);
	close(fd);
	vsock_mux_fd_event(&m, only_conn(), EPOLLIN | EPOLLHUP);
	cr_assert_eq(next(&h), 1);
	cr_assert_eq(h.op, VSOCK_OP_SHUTDOWN);
	cr_assert_eq(h.flags, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	cr_assert_not_null(only_conn());
	g = guest(VSOCK_OP_RST, 1024, hp, 0);
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_null(only_conn());
}

Test(vsock_mux, guest_refuses_connection)
{
	struct vsock_hdr h, g;
	char b[4];
	int fd = connect_to(path);

	dprintf(fd, "CONNECT 7\n");
	vsock_mux_fd_event(&m, NULL, EPOLLIN);
	vsock_mux_fd_event(&m, only_conn(), EPOLLIN);
	cr_assert_eq(next(&h), 1);
	g = guest(VSOCK_OP_RST, 7, h.src_port, 0);
	vsock_mux_guest_pkt(&m, &g, NULL);
	cr_assert_null(only_conn());
	cr_assert_eq(read(fd, b, sizeof(b)), 0, "client sees EOF, no OK line");
	close(fd);
}
