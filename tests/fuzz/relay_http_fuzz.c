/*
 * libFuzzer target: the first request on a relay forward that only this
 * host's loopback clients may use (tools/sandbox/relay.h,
 * relay_http_check). Its bytes come from whatever opened the port: a web
 * page in the user's browser among them. The first two bytes pick the
 * port. Beyond "no overrun" (ASan's): the verdict is one of the three
 * documented, a passed head ends with its blank line inside the input,
 * and what follows the head never changes the verdict.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sandbox/relay.h"

static int check(const char *b, size_t n, uint16_t port, size_t *head)
{
	const char *why = NULL;
	int ret = relay_http_check(b, n, port, head, &why);

	if (ret != 0 && ret != 1 && ret != -EACCES)
		abort();
	if (!why || (ret == -EACCES && !*why))
		abort();	/* a refusal always says why */
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char tail[] = "Host: evil.example\r\n\r\n";
	size_t head = 0, head2 = 0, n;
	uint16_t port;
	char *b;
	int ret;

	if (size < 2 || size > RELAY_HEAD_MAX + 64)
		return 0;
	port = (uint16_t)(data[0] | data[1] << 8);
	n = size - 2;
	/* An exact-size copy, so ASan sees a read past the input. */
	b = malloc(n + sizeof(tail));
	if (!b)
		return 0;
	memcpy(b, data + 2, n);
	ret = check(b, n, port, &head);
	if (ret == 1 && n >= RELAY_HEAD_MAX)
		abort();	/* "read more" only below the cap */
	if (ret == 0 && (head < 4 || head > n || memcmp(b + head - 4, "\r\n\r\n", 4)))
		abort();
	if (ret != 1) {
		/* Bytes after the head (a second request) change nothing. */
		memcpy(b + n, tail, sizeof(tail) - 1);
		if (check(b, n + sizeof(tail) - 1, port, &head2) != ret ||
		    (ret == 0 && head2 != head))
			abort();
	}
	free(b);
	return 0;
}
