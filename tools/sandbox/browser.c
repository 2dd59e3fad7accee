/*
 * `mvm browser` and `mvm screenshot` (browser.h): the guest programs run
 * through the agent with a timeout and a cap on what they may print; CDP
 * is checked through the relay, exactly as a client on the host reaches it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/mono_time.h"
#include "tools/sandbox/agent_client.h"
#include "tools/sandbox/browser.h"
#include "tools/sandbox/path_sanitize.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"

#define START_TIMEOUT_S 600	/* Chromium's first start under emulation takes minutes */
/* The start program's own wait for CDP: inside our deadline, so it can still report why. */
#define START_WAIT_ENV  "MVM_BROWSER_TIMEOUT=540"
#define SHOT_TIMEOUT_S  120
#define CDP_TIMEOUT_MS  (120 * 1000)
#define CDP_REPLY_MAX   (64u << 10)
#define TEXT_MAX        4096	/* what the start program may print */

/*
 * Run @argv in NAME as root with no stdin, stdout to @out_fd, stderr to
 * @err_fd, each at most @max bytes, killed after @timeout_s. 0 with the exit
 * status in *status (128+N for signal N), or -errno with @err set.
 */
static int run_guest(const char *name, char **argv, int out_fd, int err_fd, uint64_t max,
		     int timeout_s, int *status, char *err, size_t errlen)
{
	char *env[] = { START_WAIT_ENV, NULL };
	struct ap_exec e = { .argv = argv, .env = env, .envc = 1, .cwd = "",
			     .timeout_ms = timeout_s * 1000u };
	struct exec_io io = { .in_fd = -1, .out_fd = out_fd, .err_fd = err_fd, .out_max = max };
	struct ap_exit x = { 0 };
	int fd = agent_connect(name, agent_wait_ms()), ret;

	while (argv[e.argc])
		e.argc++;
	if (fd < 0) {
		snprintf(err, errlen, "cannot reach the agent of %s: %s", name, strerror(-fd));
		return fd;
	}
	ret = agent_exec_run(fd, &e, &io, &x, err, errlen);
	close(fd);
	if (ret)
		return ret;
	if (x.timed_out) {
		snprintf(err, errlen, "%s did not finish within %d s", argv[0], timeout_s);
		return -ETIMEDOUT;
	}
	*status = x.kind == AP_SIGNALED ? 128 + (int)x.code : (int)x.code;
	return 0;
}

/* A memfd's text, NUL-terminated, control characters escaped for a terminal. */
static void memfd_text(int fd, char *out, size_t cap, bool escape)
{
	char raw[TEXT_MAX + 1];
	ssize_t n = pread(fd, raw, sizeof(raw) - 1, 0);

	raw[n > 0 ? n : 0] = 0;
	if (escape)
		ps_escape(raw, out, cap);
	else
		snprintf(out, cap, "%s", raw);
}

static int start_in_guest(const char *name, bool headless, struct browser_start *bs,
			  char *err, size_t errlen)
{
	char *argv[] = { "mvm-browser-start", headless ? "--headless" : NULL, NULL };
	char out[TEXT_MAX + 1], msg[512];
	int ofd = memfd_create("browser-start-out", MFD_CLOEXEC);
	int efd = memfd_create("browser-start-err", MFD_CLOEXEC);
	int status = 0, ret;

	if (ofd < 0 || efd < 0) {
		ret = -errno;
		snprintf(err, errlen, "memfd: %s", strerror(errno));
		goto out;
	}
	ret = run_guest(name, argv, ofd, efd, TEXT_MAX, START_TIMEOUT_S, &status, err, errlen);
	if (ret)
		goto out;
	if (status) {
		memfd_text(efd, msg, sizeof(msg), true);
		snprintf(err, errlen, "mvm-browser-start failed (status %d)%s%s", status,
			 msg[0] ? ": " : "", msg);
		ret = -EREMOTEIO;
		goto out;
	}
	memfd_text(ofd, out, sizeof(out), false);
	ret = browser_parse_start(out, bs);
	if (ret)
		snprintf(err, errlen, "mvm-browser-start printed no valid JSON line (is this the browser image?)");
out:
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	return ret;
}

/* One GET @path through the relay; the reply (at most @cap - 1 bytes, by
 * @deadline) into @buf. 0 or -errno. */
static int relay_get(uint16_t port, const char *path, uint64_t deadline, char *buf, size_t cap)
{
	char req[160];
	size_t len = 0;
	int fd = ap_connect_loopback(port), ret = 0;

	if (fd < 0)
		return fd;
	/* Chromium answers only Host headers that are an IP or localhost. */
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Connection: close\r\n\r\n", path, port);
	if (ap_write_all(fd, req, strlen(req)))
		ret = -ECONNRESET;	/* the relay closed it: retried */
	while (!ret && len < cap - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)deadline - (int64_t)mono_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left) <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		/* Chromium keeps the connection open: done when the body is in. */
		if (browser_http_complete(buf, len) == 1)
			break;
	}
	close(fd);
	buf[len] = 0;
	return ret ? ret : len ? 0 : -ECONNRESET;
}

/* The browser id from a /json/version reply. 0 or -EPROTO. */
static int version_id(const char *reply, char id[BROWSER_ID_MAX + 1])
{
	const char *body = strstr(reply, "\r\n\r\n");
	cJSON *o, *url;
	int ret = -EPROTO;

	if ((strncmp(reply, "HTTP/1.1 200 ", 13) && strncmp(reply, "HTTP/1.0 200 ", 13)) || !body)
		return -EPROTO;
	o = cJSON_Parse(body + 4);
	url = cJSON_GetObjectItemCaseSensitive(o, "webSocketDebuggerUrl");
	if (cJSON_IsString(url))
		ret = browser_ws_id(url->valuestring, id);
	cJSON_Delete(o);
	return ret;
}

/* Until CDP answers through the relay: a connection the relay closes (the
 * guest port does not listen yet) is retried; a reply that is not a
 * DevTools one ends it at once. */
static int cdp_wait(uint16_t port, char id[BROWSER_ID_MAX + 1], char *err, size_t errlen)
{
	const struct timespec pause = { 0, 200 * 1000000L };
	uint64_t deadline = mono_now_ms() + CDP_TIMEOUT_MS;
	char *buf = malloc(CDP_REPLY_MAX);
	int ret = -ENOMEM;

	while (buf && mono_now_ms() < deadline) {
		ret = relay_get(port, "/json/version", deadline, buf, CDP_REPLY_MAX);
		if (!ret)
			ret = version_id(buf, id);
		if (ret != -ECONNRESET && ret != -ECONNREFUSED)
			break;
		nanosleep(&pause, NULL);
	}
	free(buf);
	if (ret)
		snprintf(err, errlen, "CDP did not answer through the relay (127.0.0.1:%u): %s",
			 port, ret == -EPROTO ? "not a DevTools /json/version reply" : strerror(-ret));
	return ret;
}

/* One GET @path through the relay, answered by at least one byte by
 * @deadline: something listens behind it. 0, -ECONNRESET (the relay closed
 * it: nothing listens yet) or -errno. */
static int relay_answers(uint16_t port, const char *path, uint64_t deadline)
{
	struct pollfd p = { .events = POLLIN };
	char req[160], c;
	int64_t left;
	int ret;

	p.fd = ap_connect_loopback(port);
	if (p.fd < 0)
		return p.fd;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Connection: close\r\n\r\n", path, port);
	left = (int64_t)deadline - (int64_t)mono_now_ms();
	if (ap_write_all(p.fd, req, strlen(req)))
		ret = -ECONNRESET;
	else if (left <= 0 || poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left) <= 0)
		ret = -ETIMEDOUT;
	else
		ret = read(p.fd, &c, 1) == 1 ? 0 : -ECONNRESET;
	close(p.fd);
	return ret;
}

/* Until noVNC's port answers through the relay: the endpoint printed is one
 * a client can open at once (its websockify may start after Chromium's
 * DevTools: a fresh-clone run fetched vnc.html right after `mvm browser`
 * and the relay found nothing listening). Any answer will do: what serves
 * the port is the guest's (browser-relay's stand-in echoes). */
static int vnc_wait(uint16_t port, char *err, size_t errlen)
{
	const struct timespec pause = { 0, 200 * 1000000L };
	uint64_t deadline = mono_now_ms() + CDP_TIMEOUT_MS;
	int ret = -ETIMEDOUT;

	while (mono_now_ms() < deadline) {
		ret = relay_answers(port, "/vnc.html", deadline);
		if (ret != -ECONNRESET && ret != -ECONNREFUSED)
			break;
		nanosleep(&pause, NULL);
	}
	if (ret)
		snprintf(err, errlen, "noVNC did not answer through the relay (127.0.0.1:%u): %s",
			 port, strerror(-ret));
	return ret;
}

int browser_up(const char *name, bool headless, struct browser_endpoint *ep,
	       char *err, size_t errlen)
{
	struct browser_start bs;
	struct relay_info ri;
	struct relay_fwd fwd[2] = { 0 };
	char id[BROWSER_ID_MAX + 1];
	uint16_t cdp;
	int ret = start_in_guest(name, headless, &bs, err, errlen);

	if (ret)
		return ret;
	/* noVNC is always forwarded: a later non-headless start needs no new relay.
	 * Its websockify checks neither Origin nor Host, so the relay does
	 * (relay_http_check); Chromium checks both itself (docs/browser-image.md),
	 * and the relay passes them on as they are. One port for both: checked. */
	fwd[0].guest = bs.cdp_port;
	fwd[1].guest = bs.vnc_port ? bs.vnc_port : BROWSER_VNC_PORT;
	fwd[1].local_web = true;
	fwd[0].local_web = fwd[0].guest == fwd[1].guest;
	ret = relay_ensure(name, sb_self_exe(), fwd, fwd[0].guest == fwd[1].guest ? 1 : 2, &ri,
			   err, errlen);
	if (ret)
		return ret;
	cdp = relay_host_port(&ri, bs.cdp_port);
	ret = cdp_wait(cdp, id, err, errlen);
	if (ret)
		return ret;
	snprintf(ep->cdp, sizeof(ep->cdp), "http://127.0.0.1:%u", cdp);
	snprintf(ep->ws, sizeof(ep->ws), "ws://127.0.0.1:%u/devtools/browser/%s", cdp, id);
	ep->vnc[0] = 0;
	if (bs.vnc_port) {
		uint16_t vnc = relay_host_port(&ri, bs.vnc_port);

		ret = vnc_wait(vnc, err, errlen);
		if (ret)
			return ret;
		snprintf(ep->vnc, sizeof(ep->vnc), "http://127.0.0.1:%u/vnc.html", vnc);
	}
	return 0;
}

/* Check the PNG in @fd (its first bytes) and its size. 0 or -EPROTO. */
static int shot_check(int fd, uint32_t *w, uint32_t *h)
{
	uint8_t head[64];
	off_t size = lseek(fd, 0, SEEK_END);

	if (size < (off_t)sizeof(head) || pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head))
		return -EPROTO;
	return browser_png_check(head, sizeof(head), w, h);
}

int browser_screenshot(const char *name, const char *path, uint32_t *w, uint32_t *h,
		       char *err, size_t errlen)
{
	char *argv[] = { "mvm-screenshot", NULL };
	char tmp[PATH_MAX], msg[512];
	int efd = memfd_create("screenshot-err", MFD_CLOEXEC), fd = -1, status = 0, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >= (int)sizeof(tmp))
		ret = -ENAMETOOLONG;
	else
		ret = efd < 0 || (fd = mkstemp(tmp)) < 0 ? -errno : 0;
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto out;
	}
	ret = run_guest(name, argv, fd, efd, SHOT_MAX, SHOT_TIMEOUT_S, &status, err, errlen);
	if (ret == -EFBIG)
		snprintf(err, errlen, "the guest's screenshot exceeds %u MiB", SHOT_MAX >> 20);
	if (!ret && status) {
		memfd_text(efd, msg, sizeof(msg), true);
		snprintf(err, errlen, "mvm-screenshot failed (status %d)%s%s", status,
			 msg[0] ? ": " : "", msg);
		ret = -EREMOTEIO;
	}
	if (!ret && shot_check(fd, w, h)) {
		snprintf(err, errlen, "the guest's screenshot is not a valid PNG");
		ret = -EPROTO;
	}
	if (!ret) {
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);	/* as a file the user created (mkstemp made it 0600) */
	}
	if (!ret && (fsync(fd) || rename(tmp, path))) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	}
out:
	if (fd >= 0) {
		close(fd);
		if (ret)
			unlink(tmp);
	}
	if (efd >= 0)
		close(efd);
	return ret;
}
