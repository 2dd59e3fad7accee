/*
 * GET|PUT /v1/sandboxes/NAME/files?path=P: one regular file out of or into
 * the guest through its agent (docs/agent-protocol.md: GET, PUT). The guest
 * is hostile: every wait has a deadline and every byte counts against the
 * server's file cap.
 */
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

/* After GET: the root ENTRY, a regular file within the cap; its size, or -1 with @o set. */
static int64_t get_entry(struct sv_call *c, struct sv_out *o, int fd, uint64_t deadline, uint8_t *buf)
{
	struct ap_entry *en = calloc(1, sizeof(*en));
	char err[400];
	struct ap_hdr h;
	int64_t size = -1;

	if (!en) {
		sv_reply_error(o, 500, "out of memory");
	} else if (!sv_agent_frame(fd, deadline, &h, buf, NULL, err, sizeof(err))) {
		sv_reply_error(o, strstr(err, "No such file") ? 404 : 502, "%s: %s", c->query_path, err);
	} else if (h.type != AP_ENTRY || ap_entry_decode(buf, h.len, en) || en->path[0]) {
		sv_reply_error(o, 502, "unexpected frame from the guest agent");
	} else if (en->kind != AP_FILE) {
		sv_reply_error(o, 400, "%s is not a regular file", c->query_path);
	} else if (en->size > c->s->o.max_file) {
		sv_reply_error(o, 413, "%s has %llu bytes, more than this server's %llu", c->query_path,
			       (unsigned long long)en->size, (unsigned long long)c->s->o.max_file);
	} else {
		size = (int64_t)en->size;
	}
	free(en);
	return size;
}

void sv_op_file_get(struct sv_call *c, struct sv_out *o)
{
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1), req[AP_PATH_MAX + 8];
	struct ap_wr w = { .buf = req, .cap = sizeof(req) };
	uint64_t deadline = mono_now_ms() + SV_AGENT_OP_MS;
	char *data = NULL, err[400];
	int64_t size = -1, got = 0;
	struct ap_hdr h;
	int fd = -1;

	if (!buf || (fd = sv_agent_open(c, o, false)) < 0)
		goto out;
	ap_put_str(&w, c->query_path);
	if (ap_write_frame(fd, AP_GET, req, w.len)) {
		sv_reply_error(o, 503, "lost the connection to the guest agent");
		goto out;
	}
	if ((size = get_entry(c, o, fd, deadline, buf)) < 0)
		goto out;
	if (!(data = malloc((size_t)size + 1))) {
		sv_reply_error(o, 500, "out of memory");
		goto out;
	}
	while (got < size) {
		if (!sv_agent_frame(fd, deadline, &h, buf, NULL, err, sizeof(err))) {
			sv_reply_error(o, 502, "reading %s: %s", c->query_path, err);
			goto out;
		}
		if (h.type != AP_DATA || got + h.len > size) {
			sv_reply_error(o, 502, "reading %s: unexpected frame from the guest agent", c->query_path);
			goto out;
		}
		memcpy(data + got, buf, h.len);
		got += h.len;
	}
	o->status = 200;
	o->body = data;
	o->len = (size_t)size;
	o->type = "application/octet-stream";
	snprintf(o->outcome, sizeof(o->outcome), "ok");
	data = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(data);
}

static int send_file(int fd, const uint8_t *p, size_t n, uint8_t *buf)
{
	struct ap_entry en = { .kind = AP_FILE, .mode = 0644, .size = n };
	long len = ap_entry_encode(&en, buf, AP_MAX_PAYLOAD);
	int ret = len < 0 ? (int)len : ap_write_frame(fd, AP_ENTRY, buf, (size_t)len);

	for (size_t off = 0; !ret && off < n; off += AP_CHUNK)
		ret = ap_write_frame(fd, AP_DATA, p + off, n - off < AP_CHUNK ? n - off : AP_CHUNK);
	return ret ? ret : ap_write_frame(fd, AP_END, NULL, 0);
}

void sv_op_file_put(struct sv_call *c, struct sv_out *o)
{
	uint8_t *buf = malloc(AP_MAX_PAYLOAD + 1);
	uint64_t deadline = mono_now_ms() + SV_AGENT_OP_MS;
	bool ok;
	int fd = -1;

	if (!buf || (fd = sv_agent_open(c, o, true)) < 0)
		goto out;
	ok = !sv_agent_put(c, fd) && !sv_agent_ok(c, o, fd, deadline, buf, 502) &&
	     !send_file(fd, (const uint8_t *)c->body, c->len, buf) && !sv_agent_ok(c, o, fd, deadline, buf, 502);
	sv_agent_written(c, o, ok, 200, -1, c->len);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}
