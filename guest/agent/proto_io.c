/* Blocking frame I/O for the agent protocol (both sides). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/proto.h"

int ap_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1 all read, 0 EOF at the very start, -EIO EOF part-way, -errno. */
static int read_full(int fd, uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return got ? -EIO : 0;
		got += (size_t)r;
	}
	return 1;
}

int ap_read_frame(int fd, struct ap_hdr *h, uint8_t *buf, size_t cap)
{
	uint8_t hb[AP_HDR_SIZE];
	int ret = read_full(fd, hb, sizeof(hb));

	if (ret <= 0)
		return ret;
	ret = ap_hdr_decode(hb, sizeof(hb), h);
	if (ret)
		return ret;
	if (h->len > cap)
		return -EMSGSIZE;
	if (h->len) {
		ret = read_full(fd, buf, h->len);
		if (ret <= 0)
			return ret ? ret : -EIO;
	}
	buf[h->len] = 0;
	return 1;
}

int ap_write_frame(int fd, uint16_t type, const void *payload, size_t len)
{
	uint8_t hb[AP_HDR_SIZE];
	int ret;

	if (len > AP_MAX_PAYLOAD)
		return -EMSGSIZE;
	ap_hdr_encode(hb, type, (uint32_t)len);
	ret = ap_write_all(fd, hb, sizeof(hb));
	if (!ret && len)
		ret = ap_write_all(fd, payload, len);
	return ret;
}
