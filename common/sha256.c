/* SHA-256 hex forms over nettle (common/sha256.h). */
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "common/hex.h"
#include "common/sha256.h"

void sha256_hex(struct sha256_ctx *s, char hex[SHA256_HEX])
{
	digest_hex(&nettle_sha256, s, hex);
}

void sha256_buf_hex(const void *p, size_t n, char hex[SHA256_HEX])
{
	struct sha256_ctx s;

	sha256_init(&s);
	sha256_update(&s, n, p);
	sha256_hex(&s, hex);
}

int sha256_fd_hex(int fd, char hex[SHA256_HEX])
{
	uint8_t buf[65536];
	struct sha256_ctx s;
	ssize_t r;

	sha256_init(&s);
	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		sha256_update(&s, (size_t)r, buf);
	}
	sha256_hex(&s, hex);
	return 0;
}

bool sha256_hex_valid(const char *s)
{
	if (strlen(s) != SHA256_HEX - 1)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}
