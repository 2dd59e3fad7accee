/* Talking to a sandbox's VMM over api.sock: one JSON line each way. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"

#define RESP_MAX (64 << 10)

int unix_connect_by(const char *path, int timeout_ms)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval t = { timeout_ms / 1000, timeout_ms % 1000 * 1000 }, none = { 0, 0 };
	int fd, ret = 0;

	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s", path) >= (int)sizeof(a.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A Unix connect waits while the listener's backlog is full (a VMM
	 * that stopped accepting) for as long as the send timeout says. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int sb_connect_unix(const char *name, const char *file)
{
	char dir[PATH_MAX], path[128];
	int dfd, ret;

	ret = sb_path(name, NULL, dir, sizeof(dir));
	if (ret)
		return ret;
	/* sun_path holds 108 bytes; a deep state dir would not fit, this always does. */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, file);
	ret = unix_connect_by(path, SB_CONNECT_TIMEOUT_MS);
	close(dfd);
	return ret;
}

static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r = poll(&p, 1, timeout_ms);

	return r > 0 ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

int api_call(const char *name, const char *req, char **resp, int timeout_ms)
{
	char *buf = malloc(RESP_MAX + 1);
	size_t len = 0;
	int fd = sb_connect_unix(name, "api.sock"), ret;

	*resp = NULL;
	if (fd < 0 || !buf) {
		free(buf);
		return fd < 0 ? fd : -ENOMEM;
	}
	ret = ap_write_all(fd, req, strlen(req));
	if (!ret)
		ret = ap_write_all(fd, "\n", 1);
	while (!ret && len < RESP_MAX && !memchr(buf, '\n', len)) {
		ssize_t r;

		ret = wait_fd(fd, POLLIN, timeout_ms);
		if (ret)
			break;
		r = read(fd, buf + len, RESP_MAX - len);
		if (r <= 0)
			ret = r ? -errno : -ECONNRESET;
		else
			len += (size_t)r;
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*resp = buf;
	return 0;
}

static int call_json(const char *name, const char *op, cJSON **out)
{
	cJSON *r = cJSON_CreateObject();
	char *req, *resp;
	int ret;

	cJSON_AddStringToObject(r, "op", op);
	req = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	ret = req ? api_call(name, req, &resp, 5000) : -ENOMEM;
	free(req);
	if (ret)
		return ret;
	*out = cJSON_Parse(resp);
	free(resp);
	return *out ? 0 : -EBADMSG;
}

int api_status(const char *name, char *status, size_t cap)
{
	cJSON *j, *s;
	int ret = call_json(name, "status", &j);

	if (ret)
		return ret;
	s = cJSON_GetObjectItemCaseSensitive(j, "status");
	snprintf(status, cap, "%s", cJSON_IsString(s) ? s->valuestring : "unknown");
	cJSON_Delete(j);
	return 0;
}

int api_simple(const char *name, const char *op, char *err, size_t errlen)
{
	cJSON *j, *e;
	int ret = call_json(name, op, &j);

	if (ret) {
		snprintf(err, errlen, "control API: %s", strerror(-ret));
		return ret;
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
		e = cJSON_GetObjectItemCaseSensitive(j, "error");
		snprintf(err, errlen, "%s", cJSON_IsString(e) ? e->valuestring : "request failed");
		ret = -EIO;
	}
	cJSON_Delete(j);
	return ret;
}
