/* The VMM's side of the network helper process (net_helper.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/start_trace.h"
#include "common/self_exe.h"
#include "common/log.h"
#include "devices/net_chan.h"
#include "devices/net_helper.h"
#include "vmm/confine/pidns.h"
#include "vmm/event_loop.h"

#define HELLO_TIMEOUT_MS 20000	/* set-up under nested emulation is slow */

/* MVM_NET_HELPER_TIMEOUT (seconds): more room for the hello, and for the
 * helper's exit at teardown, when it runs under valgrind in the nested box
 * (tests/bench/count.sh: a helper killed before it exits loses its count). */
static int hello_timeout_ms(void)
{
	const char *s = getenv("MVM_NET_HELPER_TIMEOUT");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 && v <= 3600 ? (int)v * 1000 : HELLO_TIMEOUT_MS;
}
#define READS_PER_ROUND 16
#define SOCK_BUF (1 << 20)	/* capped at net.core.wmem_max; room for batches */
#define CHILD_FD 3		/* the helper's socket (tools/nethelper/mvm_net.c) */
#define MAX_ARGS (8 + 2 * 64)

extern char **environ;

struct net_helper {
	struct ev_loop *loop;
	struct net_helper_cb cb;
	int fd;
	pid_t pid, host_pid;	/* in our PID namespace; as the host (and the user) sees it */
	int landlock;
	bool blocked, dead;
	bool pending;		/* spawned; its hello not read yet */
	int ready_ret;		/* net_helper_ready's first verdict */
	struct nc_buf out;
	uint8_t *in;
};

/* Only async-signal-safe work happens in the child: posix_spawn (vfork-like,
 * no copy of guest memory's page tables). */
static int spawn(struct net_helper *h, const struct net_helper_cfg *cfg, int cfd, char *err,
		 size_t errlen)
{
	char exe[PATH_MAX], ppid[16];
	char *argv[MAX_ARGS];
	posix_spawn_file_actions_t fa;
	int n = 0, ret;

	ret = self_exe_sibling(NET_HELPER_EXE, exe, sizeof(exe));
	if (ret) {
		snprintf(err, errlen, "network helper: cannot find this program's directory: %s",
			 strerror(-ret));
		return ret;
	}
	snprintf(ppid, sizeof(ppid), "%d", (int)getpid());
	argv[n++] = (char *)NET_HELPER_EXE;
	argv[n++] = ppid;
	if (cfg->host_loopback)
		argv[n++] = (char *)"--loopback";
	for (int i = 0; i < cfg->nr_publish && n + 4 < MAX_ARGS; i++) {
		argv[n++] = (char *)"--publish";
		argv[n++] = (char *)cfg->publish[i];
	}
	if (cfg->dns_server) {
		argv[n++] = (char *)"--dns-server";
		argv[n++] = (char *)cfg->dns_server;
	}
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, cfd, CHILD_FD);
	posix_spawn_file_actions_addclosefrom_np(&fa, CHILD_FD + 1);
	ret = -posix_spawn(&h->pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (!ret)
		h->host_pid = confine_pidns_host_pid(h->pid);
	if (ret)
		snprintf(err, errlen, "network helper %s: %s (%s belongs beside mvm: make install)",
			 exe, strerror(-ret), NET_HELPER_EXE);
	return ret;
}

struct hello {
	bool seen;
	int32_t ret, landlock;
	char text[512];
};

static void on_hello(void *opaque, uint32_t type, const uint8_t *p, size_t len)
{
	struct hello *hl = opaque;

	if (type != NC_HELLO || len < 8 || hl->seen)
		return;
	hl->seen = true;
	memcpy(&hl->ret, p, 4);
	memcpy(&hl->landlock, p + 4, 4);
	len -= 8;
	if (len >= sizeof(hl->text))
		len = sizeof(hl->text) - 1;
	memcpy(hl->text, p + 8, len);
	hl->text[len] = 0;
}

/* The helper's first message says whether it is set up and confined. */
static int wait_hello(struct net_helper *h, char *err, size_t errlen)
{
	struct pollfd pfd = { .fd = h->fd, .events = POLLIN };
	struct hello hl = { 0 };
	ssize_t n;
	int r;

	do
		r = poll(&pfd, 1, hello_timeout_ms());
	while (r < 0 && errno == EINTR);
	n = r > 0 ? recv(h->fd, h->in, NC_MSG_MAX, MSG_DONTWAIT) : -1;
	if (n > 0)
		nc_parse(h->in, (size_t)n, on_hello, &hl);
	if (!hl.seen) {
		snprintf(err, errlen, "network helper %s did not start (%s)", NET_HELPER_EXE,
			 r == 0 ? "no answer" : "it ended; see its message above");
		return -ECHILD;
	}
	if (hl.ret >= 0)
		hl.ret = hl.ret ? -EIO : 0;
	if (hl.ret) {
		snprintf(err, errlen, "%s", hl.text[0] ? hl.text : strerror(-hl.ret));
		return hl.ret;
	}
	h->landlock = hl.landlock;
	return 0;
}

/* A child that ended (or is about to: its socket closed first) is reaped;
 * what it died of is said. */
static void reap(struct net_helper *h, char *why, size_t cap)
{
	struct timespec ms = { 0, 1000000 };
	int st = 0, wait_ms = getenv("MVM_NET_HELPER_TIMEOUT") ? hello_timeout_ms() : 500;
	pid_t r = 0;

	for (int i = 0; i < wait_ms && !(r = waitpid(h->pid, &st, WNOHANG)); i++)
		nanosleep(&ms, NULL);
	if (r != h->pid)
		snprintf(why, cap, "closed its socket");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 159)
		snprintf(why, cap, "was stopped by its seccomp filter (see its message above)");
	else if (WIFEXITED(st))
		snprintf(why, cap, "exited with status %d", WEXITSTATUS(st));
	else
		snprintf(why, cap, "was killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	h->pid = 0;
}

static void helper_died(struct net_helper *h)
{
	char why[128];
	pid_t pid = h->host_pid;

	ev_del(h->loop, h->fd);
	h->dead = true;
	h->blocked = false;
	h->out.len = 0;
	reap(h, why, sizeof(why));
	log_error("virtio-net: the network helper %s (pid %d) %s; the guest has no network from now on",
		  NET_HELPER_EXE, (int)pid, why);
	h->cb.dead(h->cb.opaque);
}

static void on_record(void *opaque, uint32_t type, const uint8_t *p, size_t len)
{
	struct net_helper *h = opaque;
	int32_t seq, err;

	if (type == NC_FRAME) {
		h->cb.frame(h->cb.opaque, p, len);
	} else if (type == NC_DNS_REPLY && len >= 8) {
		memcpy(&seq, p, 4);
		memcpy(&err, p + 4, 4);
		h->cb.dns(h->cb.opaque, (uint32_t)seq, err > 0 ? -EIO : err, p + 8, len - 8);
	}
}

static void do_flush(struct net_helper *h)
{
	if (!h->out.len || h->dead)
		return;
	if (send(h->fd, h->out.b, h->out.len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)h->out.len) {
		h->out.len = 0;
		if (h->blocked) {
			h->blocked = false;
			ev_mod(h->loop, h->fd, EPOLLIN);
		}
	} else if (errno == EAGAIN || errno == ENOBUFS) {
		if (!h->blocked)
			ev_mod(h->loop, h->fd, EPOLLIN | EPOLLOUT);
		h->blocked = true;
	}
	/* Any other error: the helper is gone; EPOLLHUP reports it. */
}

static void on_chan(void *opaque, uint32_t events)
{
	struct net_helper *h = opaque;
	bool was_blocked = h->blocked;

	h->cb.lock(h->cb.opaque);
	for (int i = 0; i < READS_PER_ROUND && !h->dead; i++) {
		ssize_t n = recv(h->fd, h->in, NC_MSG_MAX, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			helper_died(h);
			break;
		}
		if (nc_parse(h->in, (size_t)n, on_record, h))
			log_warn("virtio-net: a malformed message from the network helper");
	}
	if (!h->dead && (events & EPOLLOUT))
		do_flush(h);
	if (was_blocked && !h->blocked && !h->dead)
		h->cb.writable(h->cb.opaque);
	h->cb.unlock(h->cb.opaque);
}

static int put(struct net_helper *h, uint32_t type, const void *a, size_t alen, const void *b,
	       size_t blen)
{
	if (h->dead)
		return -EPIPE;
	if (nc_put(&h->out, type, a, alen, b, blen)) {
		do_flush(h);
		if (nc_put(&h->out, type, a, alen, b, blen))
			return -ENOSPC;
	}
	if (h->out.len >= NC_BATCH)
		do_flush(h);
	return 0;
}

int net_helper_frame(struct net_helper *h, const uint8_t *frame, size_t len)
{
	if (len > NC_FRAME_MAX)
		return -EMSGSIZE;
	return put(h, NC_FRAME, NULL, 0, frame, len);
}

int net_helper_dns(struct net_helper *h, uint32_t seq, uint16_t qtype, const char *name)
{
	uint8_t hdr[6];

	memcpy(hdr, &seq, 4);
	memcpy(hdr + 4, &qtype, 2);
	return put(h, NC_DNS_QUERY, hdr, sizeof(hdr), name, strlen(name));
}

void net_helper_flush(struct net_helper *h)
{
	if (!h->blocked)
		do_flush(h);
}

bool net_helper_blocked(const struct net_helper *h)
{
	return h->blocked || h->pending;	/* not ready: frames wait in the guest's queue */
}

pid_t net_helper_pid(const struct net_helper *h)
{
	return h && (!h->dead || h->pending) ? h->pid : 0;
}

int net_helper_landlock(const struct net_helper *h)
{
	return h ? h->landlock : 0;
}

int net_helper_spawn(struct ev_loop *loop, const struct net_helper_cfg *cfg,
		     const struct net_helper_cb *cb, struct net_helper **out, char *err,
		     size_t errlen)
{
	struct net_helper *h = calloc(1, sizeof(*h));
	int sv[2] = { -1, -1 }, ret = -ENOMEM, buf = SOCK_BUF;

	if (!h)
		return -ENOMEM;
	h->fd = -1;
	h->dead = true;	/* not on the loop yet */
	if (!(h->out.b = malloc(NC_MSG_MAX)) || !(h->in = malloc(NC_MSG_MAX)))
		goto fail;
	h->loop = loop;
	h->cb = *cb;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		goto fail;
	}
	h->fd = sv[0];
	for (int i = 0; i < 2; i++) {
		setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	}
	ret = spawn(h, cfg, sv[1], err, errlen);
	close(sv[1]);
	if (ret)
		goto out;
	start_trace("net: helper spawned");
	h->pending = true;
	*out = h;
	return 0;
fail:
	snprintf(err, errlen, "network helper: %s", strerror(-ret));
out:
	net_helper_destroy(h);
	return ret;
}

int net_helper_ready(struct net_helper *h, char *err, size_t errlen)
{
	int ret;

	if (!h->pending)
		return h->ready_ret;
	h->pending = false;
	ret = wait_hello(h, err, errlen);
	start_trace("net: helper hello");
	if (!ret)
		ret = ev_add(h->loop, h->fd, EPOLLIN, on_chan, h);
	if (ret) {
		kill(h->pid, SIGKILL);	/* it may not linger */
		h->ready_ret = ret;
		return ret;
	}
	h->dead = false;
	return 0;
}

int net_helper_start(struct ev_loop *loop, const struct net_helper_cfg *cfg,
		     const struct net_helper_cb *cb, struct net_helper **out, char *err,
		     size_t errlen)
{
	struct net_helper *h = NULL;
	int ret = net_helper_spawn(loop, cfg, cb, &h, err, errlen);

	if (!ret && (ret = net_helper_ready(h, err, errlen))) {
		net_helper_destroy(h);
		return ret;
	}
	if (!ret)
		*out = h;
	return ret;
}

void net_helper_destroy(struct net_helper *h)
{
	char why[128];

	if (!h)
		return;
	if (!h->dead)
		ev_del(h->loop, h->fd);
	if (h->fd >= 0)
		close(h->fd);
	if (h->pid > 0)
		reap(h, why, sizeof(why));
	free(h->out.b);
	free(h->in);
	free(h);
}
