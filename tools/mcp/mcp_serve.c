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

/* The operator's policy from @o into @a. 0, or -errno after a message. */
static int app_init(struct mcp_app *a, const struct mcp_options *o)
{
	char err[1024];
	int ret;

	op_policy_init(&a->pol);
	a->pol.all_sandboxes = o->all_sandboxes;
	a->pol.allow_host_paths = o->allow_host_paths;
	ret = op_owner_make("mcp", o->id ? o->id : "default", a->owner, sizeof(a->owner));
	if (ret)
		snprintf(err, sizeof(err), "--id: letters, digits, '_', '.', '@', '-' (at most 100)");
	if (!ret && o->allow_max)
		ret = op_policy_load_allow_max(&a->pol, o->allow_max, err, sizeof(err));
	if (!ret && op_out_root_set(&a->pol, o->out_root, "mcp-out", err, sizeof(err))) {
		/* The operator's own --out-root must work; without one, the
		 * tools that write nothing on the host still serve. */
		if (o->out_root)
			ret = -EINVAL;
		else
			fprintf(stderr, "mvm mcp: %s; promote is unavailable\n", err);
	}
	if (ret)
		fprintf(stderr, "mvm mcp: %s\n", err);
	return ret;
}

int mcp_serve(const struct mcp_options *o)
{
	struct mcp_app *a = calloc(1, sizeof(*a));
	struct mcp_server s = { .send = send_line, .app = a };
	struct mcp_reader r = { 0 };
	char *msg, *reply;
	size_t len;
	int ret = 0;

	if (!a)
		return -ENOMEM;
	ret = app_init(a, o);
	if (ret)
		goto out_app;
	out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		ret = -errno;
		goto out_app;
	}
	if (mcp_server_init(&s, mcp_tools, mcp_ntools)) {
		ret = -EINVAL;
		goto out_app;
	}
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
	ret = ret < 0 && ret != -EMSGSIZE ? ret : out_err;
out_app:
	op_policy_free(&a->pol);
	free(a);
	return ret;
}
