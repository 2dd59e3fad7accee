/*
 * The stdio transport's framing: one JSON-RPC message per line. A line over
 * MCP_MAX_MESSAGE is read to its end and dropped without being kept, so a
 * client that sends too much costs the server a bounded buffer only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/mcp/mcp_rpc.h"

#define READ_CHUNK (64u << 10)

/* Read more into the buffer (compacting first). >0 bytes, 0 EOF, -errno. */
static ssize_t fill(struct mcp_reader *r, int fd)
{
	ssize_t n;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
	}
	if (!r->buf) {
		r->cap = MCP_MAX_MESSAGE + READ_CHUNK + 1;
		r->buf = malloc(r->cap);
		if (!r->buf)
			return -ENOMEM;
	}
	do
		n = read(fd, r->buf + r->len, r->cap - 1 - r->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	r->len += (size_t)n;
	return n;
}

int mcp_read_message(struct mcp_reader *r, int fd, char **msg, size_t *len)
{
	size_t scan = r->start;

	for (;;) {
		char *nl = r->buf ? memchr(r->buf + scan, '\n', r->len - scan) : NULL;
		ssize_t n;

		if (nl) {
			size_t end = (size_t)(nl - r->buf), from = r->start;

			r->start = end + 1;
			scan = r->start;
			if (r->skipping) {
				r->skipping = false;
				return -EMSGSIZE;
			}
			if (end > from && r->buf[end - 1] == '\r')
				end--;
			if (end - from > MCP_MAX_MESSAGE)
				return -EMSGSIZE;
			if (end == from)
				continue;	/* empty line */
			r->buf[end] = 0;
			*msg = r->buf + from;
			*len = end - from;
			return 1;
		}
		if (r->skipping || r->len - r->start > MCP_MAX_MESSAGE) {
			/* Too long: forget what we have, keep looking for its end. */
			r->skipping = true;
			r->start = r->len = 0;
		}
		scan = r->len - r->start;
		n = fill(r, fd);
		if (n <= 0) {
			if (n == 0 && r->skipping)
				return -EMSGSIZE;
			return (int)n;	/* a last line without newline is incomplete: dropped */
		}
	}
}

void mcp_reader_free(struct mcp_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
