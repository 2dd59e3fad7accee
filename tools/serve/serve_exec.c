/*
 * POST /v1/sandboxes/NAME/exec: the command's output as it comes, one JSON
 * object per line (NDJSON) in a chunked response:
 *   {"type":"stdout","data":"..."}   (or "base64":"..." when the bytes are
 *   {"type":"stderr","data":"..."}    not valid UTF-8 text without NUL)
 *   {"type":"heartbeat"}             (after 15 s of silence)
 *   {"type":"exit","exit_code":N,"signal":null,"timed_out":false}  last
 *   {"type":"error","error":"..."}   last, when the run broke
 * A stream without its last line was cut (the server died or the client
 * left): the command was killed with it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <nettle/base64.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"

#define HEARTBEAT_MS 15000
#define GRACE_MS     30000		/* past the command's own timeout */

struct xstream {
	struct sv_server *s;
	char tenant[SV_TENANT_MAX + 1];
	int fd;
	uint8_t *buf;
	char *line;
	size_t off, n;
	bool done;
	uint64_t deadline;		/* 0: none */
};

/* Take @j as the next line to send. */
static void put_line(struct xstream *x, cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);

	cJSON_Delete(j);
	free(x->line);
	x->line = NULL;
	x->off = x->n = 0;
	if (s && asprintf(&x->line, "%s\n", s) > 0)
		x->n = strlen(x->line);
	free(s);
}

static void put_error(struct xstream *x, const char *msg)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "type", "error");
	cJSON_AddStringToObject(j, "error", msg);
	put_line(x, j);
	x->done = true;
}

static void put_output(struct xstream *x, const char *type, const uint8_t *p, size_t n)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "type", type);
	if (sv_utf8_text(p, n)) {
		cJSON_AddStringToObject(j, "data", (const char *)p);	/* NUL-terminated by ap_read_frame */
	} else {
		char *b = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);

		if (b) {
			base64_encode_raw(b, n, p);
			b[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
		}
		cJSON_AddStringToObject(j, "base64", b ? b : "");
		free(b);
	}
	put_line(x, j);
}

static void put_exit(struct xstream *x, const uint8_t *p, size_t n)
{
	cJSON *j = cJSON_CreateObject();
	struct ap_exit e;
	bool sig;

	if (ap_exit_decode(p, n, &e)) {
		cJSON_Delete(j);
		put_error(x, "unexpected frame from the guest agent");
		return;
	}
	sig = e.kind == AP_SIGNALED;
	cJSON_AddStringToObject(j, "type", "exit");
	cJSON_AddItemToObject(j, "exit_code", sig ? cJSON_CreateNull() : cJSON_CreateNumber(e.code));
	cJSON_AddItemToObject(j, "signal", sig ? cJSON_CreateNumber(e.code) : cJSON_CreateNull());
	cJSON_AddBoolToObject(j, "timed_out", e.timed_out);
	put_line(x, j);
	x->done = true;
}

/* Wait for the agent's next frame and make it the next line. */
static void next_line(struct xstream *x)
{
	struct pollfd p = { .fd = x->fd, .events = POLLIN };
	uint64_t now = mono_now_ms();
	long wait = HEARTBEAT_MS;
	struct ap_hdr h;
	int r;

	if (x->deadline && now >= x->deadline) {
		put_error(x, "the guest agent did not end the command in time");
		return;
	}
	if (x->deadline && x->deadline - now < (uint64_t)wait)
		wait = (long)(x->deadline - now);
	r = poll(&p, 1, (int)wait);
	if (r < 0 && errno == EINTR)
		return;
	if (r == 0) {
		cJSON *j = cJSON_CreateObject();

		cJSON_AddStringToObject(j, "type", "heartbeat");
		put_line(x, j);
		return;
	}
	r = r < 0 ? -errno : ap_read_frame(x->fd, &h, x->buf, AP_MAX_PAYLOAD);
	if (r != 1) {
		put_error(x, "lost the connection to the guest agent");
	} else if (h.type == AP_STDOUT || h.type == AP_STDERR) {
		put_output(x, h.type == AP_STDOUT ? "stdout" : "stderr", x->buf, h.len);
	} else if (h.type == AP_EXIT) {
		put_exit(x, x->buf, h.len);
	} else if (h.type == AP_ERROR) {
		char msg[600];

		snprintf(msg, sizeof(msg), "exec: %.*s", (int)(h.len > 512 ? 512 : h.len), (const char *)x->buf);
		put_error(x, msg);
	} else if (h.type != AP_WARN) {
		put_error(x, "unexpected frame from the guest agent");
	}
}

static ssize_t xs_read(void *cls, char *out, size_t max)
{
	struct xstream *x = cls;

	while (x->off >= x->n) {
		if (x->done)
			return 0;
		next_line(x);
	}
	if (max > x->n - x->off)
		max = x->n - x->off;
	memcpy(out, x->line + x->off, max);
	x->off += max;
	return (ssize_t)max;
}

static void xs_done(void *cls)
{
	struct xstream *x = cls;

	if (x->fd >= 0)
		close(x->fd);	/* a command still running is killed by the agent */
	sv_stream_give(x->s, x->tenant);
	free(x->buf);
	free(x->line);
	free(x);
}

/* create's env, then the call's (later entries win in the guest). @env holds both. */
static int merged_env(const char *host, const struct sv_exec *e, char **env, int *n)
{
	struct sb_config cfg;

	*n = 0;
	if (sb_config_load(host, &cfg))
		return -1;
	for (int i = 0; i < cfg.nenv && *n < SB_MAX_ENV; i++)
		env[(*n)++] = strdup(cfg.env[i]);
	sb_config_free(&cfg);
	for (int i = 0; i < e->nenv; i++)
		env[(*n)++] = strdup(e->env[i]);
	env[*n] = NULL;
	for (int i = 0; i < *n; i++)
		if (!env[i])
			return -1;
	return 0;
}

/* The body's stdin as STDIN frames, then the empty one (end of file). 0 or -errno. */
static int send_stdin(int fd, const struct sv_exec *e)
{
	int ret = 0;

	if (!e->stdin_data)
		return 0;
	for (size_t off = 0; !ret && off < e->stdin_len; off += AP_CHUNK)
		ret = ap_write_frame(fd, AP_STDIN, e->stdin_data + off,
				     e->stdin_len - off < AP_CHUNK ? e->stdin_len - off : AP_CHUNK);
	return ret ? ret : ap_write_frame(fd, AP_STDIN, NULL, 0);
}

/* Connect and send the command: the agent's fd, or -1 with @o set. */
static int start_exec(struct sv_call *c, struct sv_out *o, const struct sv_exec *e, uint8_t *buf)
{
	char *env[SB_MAX_ENV + SV_MAX_ENV + 1] = { NULL };
	struct ap_exec ex = { .argc = e->argc, .argv = (char **)e->argv, .cwd = (char *)e->cwd,
			      .timeout_ms = e->timeout_s * 1000u, .flags = e->stdin_data ? AP_EXEC_STDIN : 0 };
	int n = 0, fd = -1;
	long len = -1;

	if (!merged_env(c->host, e, env, &n)) {
		ex.env = env;
		ex.envc = n;
		len = ap_exec_encode(&ex, buf, AP_MAX_PAYLOAD);
	}
	for (int i = 0; i < n; i++)
		free(env[i]);
	if (len < 0) {
		sv_reply_error(o, 400, "the command and environment exceed %u bytes", AP_MAX_PAYLOAD);
		return -1;
	}
	fd = agent_connect(c->host, agent_wait_ms());
	if (fd < 0) {
		sv_reply_error(o, 503, "cannot reach the agent of %s: %s", c->r.name, strerror(-fd));
		return -1;
	}
	if (ap_write_frame(fd, AP_EXEC, buf, (size_t)len) || send_stdin(fd, e)) {
		close(fd);
		sv_reply_error(o, 503, "sending the command to the guest agent failed");
		return -1;
	}
	return fd;
}

void sv_op_exec(struct sv_call *c, struct sv_out *o)
{
	struct xstream *x = NULL;
	struct sv_exec e;
	char err[256];
	int st = sv_exec_parse(c->body, c->len, &e, err, sizeof(err));

	if (st) {
		sv_reply_error(o, st, "%s", err);
		return;
	}
	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		goto out;
	}
	if (!sv_stream_take(c->s, c->tenant.name)) {
		sv_reply_error(o, 429, "at most %u command streams at once", c->s->o.max_streams);
		goto out;
	}
	x = calloc(1, sizeof(*x));
	if (x)
		x->buf = malloc(AP_MAX_PAYLOAD + 1);
	if (!x || !x->buf || (x->fd = start_exec(c, o, &e, x->buf)) < 0) {
		if (!o->status)
			sv_reply_error(o, 500, "out of memory");
		sv_stream_give(c->s, c->tenant.name);
		if (x)
			free(x->buf);
		free(x);
		goto out;
	}
	x->s = c->s;
	snprintf(x->tenant, sizeof(x->tenant), "%s", c->tenant.name);
	x->deadline = e.timeout_s ? mono_now_ms() + e.timeout_s * 1000ull + GRACE_MS : 0;
	o->status = 200;
	o->type = "application/x-ndjson";
	o->read = xs_read;
	o->done = xs_done;
	o->cls = x;
	snprintf(o->outcome, sizeof(o->outcome), "stream");
out:
	sv_exec_free(&e);
}

bool sv_stream_take(struct sv_server *s, const char *tenant)
{
	struct sv_bucket *b;
	bool ok = false;

	pthread_mutex_lock(&s->lock);
	b = sv_bucket_of(&s->rates, tenant, s->o.burst, mono_now_ms());
	if (b && b->streams < s->o.max_streams) {
		b->streams++;
		ok = true;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

void sv_stream_give(struct sv_server *s, const char *tenant)
{
	struct sv_bucket *b;

	pthread_mutex_lock(&s->lock);
	b = sv_bucket_of(&s->rates, tenant, s->o.burst, mono_now_ms());
	if (b && b->streams)
		b->streams--;
	pthread_mutex_unlock(&s->lock);
}
