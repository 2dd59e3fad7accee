/*
 * Starting, finding and stopping a sandbox's relay process (relay.h). The
 * CLI binds the listening sockets itself (127.0.0.1, ephemeral ports), so
 * the ports are known before the relay runs and connections made at once
 * wait in the backlog; the relay inherits them as descriptors 3, 4, ...
 * relay.json in the state directory names its pid and ports; relay.lock
 * keeps two `mvm browser` from starting two relays.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/file_io.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"

#define RELAY_FILE "relay.json"
#define RELAY_EXEC_WAIT_MS 10000	/* from fork to the relay's exec (an emulated box is slow) */

/* "mvm relay NAME ...": a reused pid is never taken for ours. */
static bool is_our_relay(pid_t pid, const char *name)
{
	return sb_pid_is(pid, "relay", name);
}

static int load(const char *name, struct relay_info *ri)
{
	char p[PATH_MAX];
	char *text;
	cJSON *o, *f, *it;

	memset(ri, 0, sizeof(*ri));
	if (sb_path(name, RELAY_FILE, p, sizeof(p)) || !(text = file_read_text(p, 4096)))
		return -ENOENT;
	o = cJSON_Parse(text);
	free(text);
	ri->pid = (pid_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "pid"));
	f = cJSON_GetObjectItem(o, "forwards");
	cJSON_ArrayForEach(it, f) {
		double g = cJSON_GetNumberValue(cJSON_GetObjectItem(it, "guest"));
		double h = cJSON_GetNumberValue(cJSON_GetObjectItem(it, "host"));
		bool web = cJSON_IsTrue(cJSON_GetObjectItem(it, "local_web"));

		if (ri->nfwd == RELAY_MAX_FWD || !(g >= 1 && g <= 65535 && h >= 1 && h <= 65535))
			break;
		ri->fwd[ri->nfwd++] = (struct relay_fwd){ (uint16_t)g, (uint16_t)h, web };
	}
	cJSON_Delete(o);
	return ri->pid > 0 && ri->nfwd ? 0 : -EINVAL;
}

static int save(const char *name, const struct relay_info *ri)
{
	cJSON *o = cJSON_CreateObject(), *f = cJSON_AddArrayToObject(o, "forwards");
	char p[PATH_MAX], *text;
	int ret;

	cJSON_AddNumberToObject(o, "pid", ri->pid);
	for (int i = 0; i < ri->nfwd; i++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddNumberToObject(e, "guest", ri->fwd[i].guest);
		cJSON_AddNumberToObject(e, "host", ri->fwd[i].host);
		cJSON_AddBoolToObject(e, "local_web", ri->fwd[i].local_web);
		cJSON_AddItemToArray(f, e);
	}
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	ret = sb_path(name, RELAY_FILE, p, sizeof(p));
	if (!ret)
		ret = text ? file_write_atomic(p, text) : -ENOMEM;
	free(text);
	return ret;
}

uint16_t relay_host_port(const struct relay_info *ri, uint16_t guest)
{
	for (int i = 0; i < ri->nfwd; i++)
		if (ri->fwd[i].guest == guest)
			return ri->fwd[i].host;
	return 0;
}

/* A socket listening on 127.0.0.1 (never another address) at an ephemeral port. */
static int listen_loopback(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		int e = -errno;

		close(fd);
		return e;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* The grandchild: detached, listeners as 3.., output to relay.log, then
 * exec. @report_fd stays open (close-on-exec) until the exec, so the
 * caller's read of it ends exactly when `mvm relay` runs (or the child
 * died): before that, /proc/PID/cmdline is still the CLI's. */
static void relay_child(const char *name, const char *self_exe, const int *lfd,
			const struct relay_fwd *fwd, int n, int report_fd)
{
	char log[PATH_MAX], ports[RELAY_MAX_FWD][16];
	char *argv[4 + RELAY_MAX_FWD] = { "mvm", "relay", (char *)name };
	int high[RELAY_MAX_FWD], fd;
	pid_t pid;

	setsid();
	pid = fork();
	if (pid != 0) {
		(void)!write(report_fd, &pid, sizeof(pid));
		_exit(pid < 0);
	}
	for (int i = 0; i < n; i++)	/* out of the way of 3.. first */
		high[i] = fcntl(lfd[i], F_DUPFD, 100);
	for (int i = 0; i < n; i++) {
		if (high[i] < 0 || dup2(high[i], 3 + i) != 3 + i)
			_exit(125);
		snprintf(ports[i], sizeof(ports[i]), "%u%s", fwd[i].guest, fwd[i].local_web ? "/web" : "");
		argv[3 + i] = ports[i];
	}
	if (sb_path(name, "relay.log", log, sizeof(log)))
		_exit(125);
	fd = open("/dev/null", O_RDONLY);
	dup2(fd, 0);
	/* The VMM can write the state directory: no link or FIFO is followed
	 * or waited on (the relay then logs nowhere). */
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	dup2(fd, 1);
	dup2(fd, 2);
	if (close_range(3 + (unsigned)n, ~0U, CLOSE_RANGE_CLOEXEC))
		close_range(3 + (unsigned)n, ~0U, 0);	/* before Linux 5.11 */
	execv(self_exe, argv);
	_exit(127);
}

/* Until every copy of the pipe's write end is gone: the grandchild's
 * goes at its exec (relay_child), or when it dies. */
static void wait_exec(int rfd)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c;

	while (poll(&p, 1, RELAY_EXEC_WAIT_MS) == 1 && read(rfd, &c, 1) > 0)
		;
}

static int spawn(const char *name, const char *self_exe, const struct relay_fwd *want, int n,
		 struct relay_info *ri)
{
	int lfd[RELAY_MAX_FWD], pfd[2], ret = 0, i;
	pid_t child, pid = 0;

	memset(ri, 0, sizeof(*ri));
	for (i = 0; i < n && !ret; i++) {
		lfd[i] = listen_loopback(&ri->fwd[i].host);
		ret = lfd[i] < 0 ? lfd[i] : 0;
		ri->fwd[i].guest = want[i].guest;
		ri->fwd[i].local_web = want[i].local_web;
	}
	n = ret ? i - 1 : n;	/* how many to close */
	if (!ret && pipe2(pfd, O_CLOEXEC))
		ret = -errno;
	if (!ret) {
		child = fork();
		if (child == 0)
			relay_child(name, self_exe, lfd, ri->fwd, n, pfd[1]);
		close(pfd[1]);
		if (child < 0 || read(pfd[0], &pid, sizeof(pid)) != sizeof(pid) || pid <= 0)
			ret = -ECHILD;
		else
			wait_exec(pfd[0]);
		close(pfd[0]);
		if (child > 0)
			waitpid(child, NULL, 0);
	}
	for (i = 0; i < n; i++)
		close(lfd[i]);
	/* It must be `mvm relay NAME` by now (wait_exec): before its exec, a
	 * second `mvm browser` would take the pid for a stale relay and start
	 * another, and a stop would not recognise it to kill it. */
	if (!ret && !is_our_relay(pid, name))
		ret = -ECHILD;
	if (ret)
		return ret;
	ri->pid = pid;
	ri->nfwd = n;
	return save(name, ri);
}

/* Whether @ri forwards every port of @want, each checked as @want says
 * (a relay from before the check was asked for is replaced). */
static bool covers(const struct relay_info *ri, const struct relay_fwd *want, int n)
{
	for (int i = 0; i < n; i++) {
		int j = 0;

		while (j < ri->nfwd && ri->fwd[j].guest != want[i].guest)
			j++;
		if (j == ri->nfwd || ri->fwd[j].local_web != want[i].local_web)
			return false;
	}
	return true;
}

static int lock_state(const char *name)
{
	char p[PATH_MAX];
	int fd;

	if (sb_path(name, "relay.lock", p, sizeof(p)))
		return -ENAMETOOLONG;
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Kill @ri's relay if it is NAME's and wait (briefly) until it is gone. */
static void kill_relay(const char *name, const struct relay_info *ri)
{
	const struct timespec ms10 = { 0, 10 * 1000000L };

	if (!is_our_relay(ri->pid, name))
		return;
	kill(ri->pid, SIGKILL);
	for (int i = 0; i < 200 && is_our_relay(ri->pid, name); i++)
		nanosleep(&ms10, NULL);
}

int relay_ensure(const char *name, const char *self_exe, const struct relay_fwd *want, int n,
		 struct relay_info *out, char *err, size_t errlen)
{
	struct relay_info ri;
	int lk, ret;

	if (n < 1 || n > RELAY_MAX_FWD)
		return -EINVAL;
	lk = lock_state(name);
	if (lk < 0) {
		snprintf(err, errlen, "cannot lock the relay state: %s", strerror(-lk));
		return lk;
	}
	if (!load(name, &ri) && is_our_relay(ri.pid, name) && covers(&ri, want, n)) {
		*out = ri;
		close(lk);
		return 0;
	}
	if (!load(name, &ri))
		kill_relay(name, &ri);
	ret = spawn(name, self_exe, want, n, out);
	if (ret)
		snprintf(err, errlen, "cannot start the relay: %s", strerror(-ret));
	close(lk);
	return ret;
}

int relay_stop(const char *name)
{
	struct relay_info ri;
	char p[PATH_MAX];
	int lk = lock_state(name);

	if (!load(name, &ri))
		kill_relay(name, &ri);
	if (!sb_path(name, RELAY_FILE, p, sizeof(p)))
		unlink(p);
	if (lk >= 0)
		close(lk);
	return 0;
}
