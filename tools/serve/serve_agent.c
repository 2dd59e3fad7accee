/* `mvm serve`'s short conversations with a guest agent (tools/serve/serve_agent.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_agent.h"

int sv_agent_frame(int fd, uint64_t deadline, struct ap_hdr *h, uint8_t *buf, unsigned *warns, char *err,
		   size_t cap)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = mono_now_ms();
		int r;

		if (now >= deadline) {
			snprintf(err, cap, "the guest agent did not answer in time");
			return 0;
		}
		r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue;
		r = r < 0 ? -errno : ap_read_frame(fd, h, buf, AP_MAX_PAYLOAD);
		if (r != 1) {
			snprintf(err, cap, "lost the connection to the guest agent");
			return 0;
		}
		if (h->type == AP_ERROR) {
			snprintf(err, cap, "%.*s", (int)(h->len > 300 ? 300 : h->len), (const char *)buf);
			return 0;
		}
		if (h->type != AP_WARN)
			return 1;
		if (warns)
			(*warns)++;
	}
}

int sv_agent_open(struct sv_call *c, struct sv_out *o, bool put)
{
	const char *p = c->query_path;
	int fd;

	if (!p || !sv_guest_path_ok(p) || (put && (!strcmp(p, "/") || p[strlen(p) - 1] == '/'))) {
		sv_reply_error(o, 400, "?path= must be an absolute guest path%s", put ? " (not / nor ending in /)" : "");
		return -1;
	}
	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		return -1;
	}
	fd = agent_connect(c->host, agent_wait_ms());
	if (fd < 0)
		sv_reply_error(o, 503, "cannot reach the agent of %s: %s", c->r.name, strerror(-fd));
	return fd < 0 ? -1 : fd;
}

/* EXEC @argv with no stdin and a timeout. 0 or -1 with @err. */
int sv_agent_ok(struct sv_call *c, struct sv_out *o, int fd, uint64_t deadline, uint8_t *buf, int status)
{
	char err[400];
	struct ap_hdr h;

	if (!sv_agent_frame(fd, deadline, &h, buf, NULL, err, sizeof(err))) {
		sv_reply_error(o, strstr(err, "No such file") ? 404 : status, "%s: %s", c->query_path, err);
		return -1;
	}
	if (h.type != AP_OK) {
		sv_reply_error(o, 502, "unexpected frame from the guest agent");
		return -1;
	}
	return 0;
}

int sv_agent_put(struct sv_call *c, int fd)
{
	const char *slash = strrchr(c->query_path, '/');
	uint8_t req[2 * AP_PATH_MAX + 16];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	char dir[SV_PATH_MAX + 1];

	snprintf(dir, sizeof(dir), "%.*s/", (int)(slash - c->query_path), c->query_path);
	ap_put_str(&w, dir);
	ap_put_str(&w, slash + 1);
	return w.err ? -ENAMETOOLONG : ap_write_frame(fd, AP_PUT, req, w.len);
}

void sv_agent_written(struct sv_call *c, struct sv_out *o, bool ok, int status, long entries, uint64_t bytes)
{
	cJSON *j;

	if (!ok) {
		if (!o->status)
			sv_reply_error(o, 503, "lost the connection to the guest agent");
		return;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "path", c->query_path);
	if (entries >= 0)
		cJSON_AddNumberToObject(j, "entries", (double)entries);
	cJSON_AddNumberToObject(j, "bytes", (double)bytes);
	sv_reply_json(o, status, j);
}

static int send_exec(int fd, char *const argv[], char *err, size_t errcap)
{
	char *env[] = { NULL };
	int argc = 0;
	struct ap_exec e = { .timeout_ms = 60000, .cwd = "", .argv = (char **)argv, .env = env };
	uint8_t *buf = malloc(AP_MAX_PAYLOAD);
	long len;
	int ret;

	while (argv[argc])
		argc++;
	e.argc = argc;
	len = buf ? ap_exec_encode(&e, buf, AP_MAX_PAYLOAD) : -ENOMEM;
	ret = len < 0 ? (int)len : ap_write_frame(fd, AP_EXEC, buf, (size_t)len);
	free(buf);
	if (ret)
		snprintf(err, errcap, "cannot start a command in the guest: %s", strerror(-ret));
	return ret ? -1 : 0;
}

int sv_agent_run(struct sv_call *c, char *const argv[], char *out, size_t cap, char *err, size_t errcap)
{
	uint64_t deadline = mono_now_ms() + SV_AGENT_OP_MS;
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	int fd = agent_connect(c->host, agent_wait_ms()), st = -1;
	size_t got = 0;
	struct ap_exit x;
	struct ap_hdr h;

	out[0] = 0;
	if (fd < 0 || !buf) {
		snprintf(err, errcap, "cannot reach the guest agent: %s", strerror(fd < 0 ? -fd : ENOMEM));
		goto out;
	}
	if (send_exec(fd, argv, err, errcap))
		goto out;
	while (sv_agent_frame(fd, deadline, &h, buf, NULL, err, errcap)) {
		if (h.type == AP_STDOUT && got + h.len < cap) {
			memcpy(out + got, buf, h.len);
			out[got += h.len] = 0;
		} else if (h.type == AP_STDOUT) {
			snprintf(err, errcap, "the guest command said more than %zu bytes", cap - 1);
			break;
		} else if (h.type == AP_EXIT) {
			if (ap_exit_decode(buf, h.len, &x) || x.kind != AP_EXITED || x.timed_out)
				snprintf(err, errcap, "the guest command was killed or timed out");
			else
				st = (int)x.code;
			break;
		} else if (h.type != AP_STDERR) {
			snprintf(err, errcap, "unexpected frame from the guest agent");
			break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return st;
}
