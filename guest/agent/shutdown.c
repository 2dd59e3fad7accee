/*
 * SHUTDOWN: sync the disks, answer OK, and reset the guest only once the
 * host has taken that answer.
 *
 * Why the wait: our OK is only queued when write() returns; the guest's
 * vsock driver sends it later, from a kernel worker. reboot() then runs
 * device_shutdown(), which (Linux 6.1.y's virtio_dev_shutdown) resets every
 * virtio device, and the VMM drops every host connection on a vsock reset.
 * When the reset won that race, `mvm stop` read end of file instead of OK
 * and stopped the VMM through its API, although the guest had synced
 * (issue 26: 2 of 3 box attempts of sandbox-lifecycle, 2 of 8 stops of a
 * reproducer). The host closes its end as soon as it has read the OK, so
 * end of file here means it has; only then do we reset.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

/* A host that never closes (hung, or gone without a word) must not keep
 * the guest up: reset anyway after this long. */
#define HOST_CLOSE_WAIT_MS 10000

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Until the host's end of file (or an error), or @ms pass; bytes read are
 * dropped. 0 when the host closed, -ETIMEDOUT otherwise. */
static int wait_host_close(int conn, int ms)
{
	long deadline = mono_ms() + ms;
	char buf[4096];

	for (;;) {
		struct pollfd p = { .fd = conn, .events = POLLIN };
		long left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return 0;	/* nothing more to learn from this socket */
		}
		if (!p.revents)
			continue;
		n = read(conn, buf, sizeof(buf));
		if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
			continue;
		return 0;	/* end of file, or the connection is gone */
	}
}

void agent_stop_guest(int conn, const struct agent_cfg *cfg)
{
	int closed;

	if (!cfg->test_mode)
		sync();		/* not the host's disks in a test */
	if (ap_write_frame(conn, AP_OK, NULL, 0))
		closed = 0;	/* the host is gone: nobody to wait for */
	else
		closed = wait_host_close(conn, HOST_CLOSE_WAIT_MS);
	if (cfg->test_mode) {
		/* Where the guest would reset: tests see that it comes after
		 * their close (tests/unit/test_agent_shutdown.c). */
		fprintf(stderr, "mvm-agent: reset now (%s)\n",
			closed ? "the host did not close" : "the host closed");
		return;
	}
	reboot(RB_AUTOBOOT);	/* reboot=k: the VMM sees the reset and exits */
}
