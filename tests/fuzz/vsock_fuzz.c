/*
 * libFuzzer target: the input is a run of virtio-vsock packets a guest put on
 * its tx queue (44-byte header + payload each). They drive the connection
 * state machine; a host listener on port 1234 accepts guest connections, so
 * data, credit and shutdown paths run too. After each packet the mux may
 * answer; nothing it does may crash, leak fds or run unbounded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/vsock_mux.h"

#define CID 3

static struct vsock_mux m;
static char dir[] = "/dev/shm/mvm-vsock-fuzz-XXXXXX";
static char path[96], lpath[108];
static int lfd = -1;

static int f_watch(void *o, int fd, uint32_t ev, struct vsock_conn *c, bool added)
{
	return 0;
}

static void f_kick(void *o)
{
}

static const struct vsock_host_ops ops = { .watch = f_watch, .kick = f_kick };

static void setup_once(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	if (lfd >= 0)
		return;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/v.sock", dir);
	if (vsock_mux_init(&m, CID, path, &ops, NULL))
		abort();
	snprintf(lpath, sizeof(lpath), "%s_1234", path);
	memcpy(a.sun_path, lpath, strlen(lpath) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[VSOCK_MAX_PKT];
	int accepted[64], na = 0;
	struct vsock_hdr h, r;

	setup_once();
	while (size >= VSOCK_HDR_SIZE) {
		vsock_hdr_decode(data, &h);
		data += VSOCK_HDR_SIZE;
		size -= VSOCK_HDR_SIZE;
		/* Mostly well-addressed, so the state machine gets past the first check. */
		if (h.src_cid & 1)
			h.src_cid = CID;
		if (h.dst_cid & 1)
			h.dst_cid = VSOCK_HOST_CID;
		if (h.len > size || h.len > VSOCK_MAX_PKT)
			h.len = (uint32_t)(size < VSOCK_MAX_PKT ? size : VSOCK_MAX_PKT);
		vsock_mux_guest_pkt(&m, &h, data);
		data += h.len;
		size -= h.len;
		for (int i = 0; i < 64 && vsock_mux_next_pkt(&m, &r, out, (i & 1) ? 4096 : 16); i++)
			;
		while (na < 64 && (accepted[na] = accept(lfd, NULL, NULL)) >= 0)
			na++;
	}
	vsock_mux_reset(&m);
	while (na > 0)
		close(accepted[--na]);
	return 0;
}
