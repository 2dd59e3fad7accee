/*
 * The stdio loop of `mvm mcp`: read a line, answer it, one request at a
 * time. fd 1 is the protocol channel only: it is moved to a private fd
 * and fd 1 becomes stderr, so nothing a runtime function prints can
 * corrupt the stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_serve.h"
#include "tools/mcp/mcp_tools.h"

static int out_fd = -1;
static int out_err;

static void send_line(void *ctx, const char *msg)
{
	size_t n = strlen(msg);

	if (out_err)
		return;
	out_err = ap_write_all(out_fd, msg, n);
	if (!out_err)
		out_err = ap_write_all(out_fd, "\n", 1);
}

int mcp_serve(void)
{
	struct mcp_server s = { .send = send_line };
	struct mcp_reader r = { 0 };
	char *msg, *reply;
	size_t len;
	int ret = 0;

	out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return -errno;
	if (mcp_server_init(&s, mcp_tools, mcp_ntools))
		return -EINVAL;
	while (!out_err && (ret = mcp_read_message(&r, STDIN_FILENO, &msg, &len)) != 0) {
		if (ret == -EMSGSIZE) {
			reply = mcp_error_reply(NULL, MCP_INVALID_REQUEST,
						"invalid request: the message exceeds 4 MiB and was dropped");
		} else if (ret < 0) {
			break;
		} else {
			reply = mcp_handle(&s, msg, len);
		}
		if (reply)
			send_line(NULL, reply);
		free(reply);
	}
	mcp_reader_free(&r);
	mcp_server_free(&s);
	return ret < 0 && ret != -EMSGSIZE ? ret : out_err;
}
