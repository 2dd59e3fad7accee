/* The VMM's side of the network helper (devices/net_helper.c) against the
 * real mvm-net beside this test binary: it starts confined, frames go there
 * and back, the host sees the guest's connection, and its death is seen.
 * (Skipped where mvm-net is not built beside the tests: make's asan tree.) */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/mono_time.h"
#include "devices/net_helper.h"
#include "tests/unit/net_testutil.h"
#include "vmm/event_loop.h"

static struct {
	int frames, arp_replies, dead, writable;
} got;

static void on_frame(void *opaque, const uint8_t *f, size_t len)
{
	got.frames++;
	if (len >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == 2)
		got.arp_replies++;
}

static void on_dns(void *opaque, uint32_t seq, int err, const uint8_t *m, size_t len)
{
}

static void on_writable(void *opaque)
{
	got.writable++;
}

static void on_dead(void *opaque)
{
	got.dead++;
}

static void nop(void *opaque)
{
}

/* Run @l's handlers until *@flag or @ms pass. */
static void pump(struct ev_loop *l, const int *flag, int ms)
{
	uint64_t end = mono_now_ms() + (uint64_t)ms;
	struct epoll_event evs[16];

	while (!*flag && mono_now_ms() < end) {
		int n = epoll_wait(l->epfd, evs, 16, 50);

		for (int i = 0; i < n; i++) {
			struct ev_handler *h = evs[i].data.ptr;

			if (h && h->fd >= 0)
				h->fn(h->opaque, evs[i].events);
		}
	}
}

static bool helper_built(void)
{
	char self[PATH_MAX], p[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return false;
	self[n] = 0;
	*strrchr(self, '/') = 0;
	snprintf(p, sizeof(p), "%s/" NET_HELPER_EXE, self);
	return access(p, X_OK) == 0;
}

/* An ARP request from the guest for the gateway. */
static size_t arp_request(uint8_t *f)
{
	static const uint8_t hdr[8] = { 0, 1, 8, 0, 6, 4, 0, 1 };

	memset(f, 0xff, 6);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	memcpy(f + 14, hdr, 8);
	memcpy(f + 22, guest_mac, 6);
	inet_pton(AF_INET, "10.0.2.15", f + 28);
	memset(f + 32, 0, 6);
	inet_pton(AF_INET, "10.0.2.2", f + 38);
	return 42;
}

Test(net_helper, frames_go_through_the_confined_helper_and_its_death_is_seen)
{
	struct net_helper_cb cb = { on_frame, on_dns, on_writable, on_dead, nop, nop, NULL };
	struct net_helper_cfg cfg = { .host_loopback = true };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct net_helper *h = NULL;
	struct ev_loop loop;
	char err[512] = "", st[64], *status;
	uint8_t f[128];
	struct pollfd pfd;
	int lfd, conn;
	pid_t pid;

	if (!helper_built())
		cr_skip_test("no " NET_HELPER_EXE " beside the test binary");
	memset(&got, 0, sizeof(got));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(lfd, 1), 0);
	getsockname(lfd, (struct sockaddr *)&a, &al);
	cr_assert_eq(ev_init(&loop), 0);
	cr_assert_eq(net_helper_start(&loop, &cfg, &cb, &h, err, sizeof(err)), 0, "%s", err);
	pid = net_helper_pid(h);
	cr_assert_gt(pid, 1);

	/* Confined before it said hello. */
	snprintf(st, sizeof(st), "/proc/%d/status", (int)pid);
	status = file_read_text(st, 8191);
	cr_assert(status);
	cr_expect(strstr(status, "\nSeccomp:\t2\n"), "%s", status);
	cr_expect(strstr(status, "\nNoNewPrivs:\t1\n"), "%s", status);
	free(status);

	cr_assert_eq(net_helper_frame(h, f, arp_request(f)), 0);
	net_helper_flush(h);
	pump(&loop, &got.arp_replies, 5000);
	cr_expect_eq(got.arp_replies, 1, "slirp's ARP reply came back");

	/* A SYN to the gateway reaches the host's loopback through slirp. */
	cr_assert_eq(net_helper_frame(h, f, syn(f, "10.0.2.15", "10.0.2.2", ntohs(a.sin_port))), 0);
	net_helper_flush(h);
	pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
	for (int i = 0; i < 100 && poll(&pfd, 1, 0) == 0; i++)
		pump(&loop, &got.dead, 50);
	conn = accept(lfd, NULL, NULL);
	cr_expect_geq(conn, 0, "the host saw the guest's connection");
	if (conn >= 0)
		close(conn);

	/* A helper that does not keep up: the batch waits (nothing dropped),
	 * the caller stops, and is told when it may go on. */
	kill(pid, SIGSTOP);
	for (int i = 0; i < 100000 && !net_helper_blocked(h); i++)
		cr_assert_eq(net_helper_frame(h, f, arp_request(f)), 0);
	cr_expect(net_helper_blocked(h), "a stopped helper fills the socket");
	kill(pid, SIGCONT);
	pump(&loop, &got.writable, 5000);
	cr_expect_eq(got.writable, 1);
	cr_expect(!net_helper_blocked(h));

	kill(pid, SIGKILL);
	pump(&loop, &got.dead, 5000);
	cr_expect_eq(got.dead, 1);
	cr_expect_eq(net_helper_pid(h), 0);
	cr_expect_eq(net_helper_frame(h, f, 42), -EPIPE);
	net_helper_destroy(h);
	ev_fini(&loop);
	close(lfd);
}

Test(net_helper, a_publish_port_in_use_is_the_helpers_error)
{
	struct net_helper_cb cb = { on_frame, on_dns, on_writable, on_dead, nop, nop, NULL };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct net_helper *h = NULL;
	struct ev_loop loop;
	char err[512] = "", spec[64];
	const char *pub[1] = { spec };
	struct net_helper_cfg cfg = { .publish = pub, .nr_publish = 1 };
	int lfd;

	if (!helper_built())
		cr_skip_test("no " NET_HELPER_EXE " beside the test binary");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(lfd, 1), 0);
	getsockname(lfd, (struct sockaddr *)&a, &al);
	snprintf(spec, sizeof(spec), "127.0.0.1:%u:80", ntohs(a.sin_port));
	cr_assert_eq(ev_init(&loop), 0);
	cr_expect_neq(net_helper_start(&loop, &cfg, &cb, &h, err, sizeof(err)), 0);
	cr_expect(strstr(err, "cannot listen there"), "%s", err);
	ev_fini(&loop);
	close(lfd);
}
