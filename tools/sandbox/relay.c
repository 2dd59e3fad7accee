/*
 * The relay process (relay.h): one epoll loop over the listening sockets,
 * the VMM's pidfd and every connection's two sockets. A connection first
 * opens a stream to the guest agent through vsock.sock ("CONNECT 1024",
 * then a TCP frame naming the guest port) and waits, under a deadline, for
 * "OK <port>" and the agent's OK frame; from then on bytes are moved both
 * ways and never looked at. Only the owner's processes are served: a
 * connection whose client socket another uid owns is closed at accept
 * (relay_peer.c), before it takes a slot. On a local_web forward the
 * client's first request head is read and checked before that
 * (relay_http_check: only this host's loopback port as Host and Origin;
 * else 403 and closed), and the guest is reached only when it passes;
 * unless it is a WebSocket handshake, that head is all the guest gets of
 * the connection (no second, unchecked request on a kept-alive one). The
 * guest is an attacker: nothing it sends can make this process wait
 * without a deadline or hold more than RELAY_BUF per direction per
 * connection; a connection with no traffic for the idle time is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "common/rotlog.h"
#include "guest/agent/proto.h"
#include "tools/sandbox/relay.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"

enum { K_LISTEN, K_PID, K_CLI, K_VS };
enum { RC_HEAD, RC_LINE, RC_HDR, RC_PIPE };

struct rconn {
	int cli, vs;
	int li;				/* the forward it came in on */
	bool cli_on, vs_on;		/* registered with epoll */
	int state;
	uint64_t deadline;		/* set-up: its end; piped: the idle end (ms, CLOCK_MONOTONIC) */
	bool drain;			/* local_web, one request: client bytes are read and dropped */
	char line[32];
	size_t line_len;
	uint8_t hdr[AP_HDR_SIZE];
	size_t hdr_len;
	struct ap_half up, down;	/* up: client → guest; down: guest → client */
	uint8_t ubuf[RELAY_BUF], dbuf[RELAY_BUF];
};

struct relay {
	int ep, pidfd, nl, n;
	uint32_t owner;			/* the uid whose clients are served */
	uint64_t idle_ms;
	struct rotlog log;		/* relay.log, capped like console.log */
	int lfd[RELAY_MAX_FWD];
	uint16_t gport[RELAY_MAX_FWD];
	uint16_t hport[RELAY_MAX_FWD];	/* the listener's own port, for relay_http_check */
	bool web[RELAY_MAX_FWD];	/* local_web */
	struct rconn *c[RELAY_MAX_CONNS];
};

/* One line in relay.log (capped: rotlog). */
static void __attribute__((format(printf, 2, 3))) say(struct relay *r, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (r->log.fd >= 0)
		(void)rotlog_write(&r->log, line, (size_t)n);
	else
		(void)!write(STDERR_FILENO, line, (size_t)n);
}

static uint64_t tag(int kind, int idx)
{
	return (uint64_t)idx << 8 | (uint64_t)kind;
}

/* (Un)register @fd so that epoll reports only @ev; with nothing wanted it is
 * left out entirely (a hung-up socket would otherwise be reported forever). */
static void interest(struct relay *r, int fd, bool *on, uint32_t ev, uint64_t t)
{
	struct epoll_event e = { .events = ev, .data.u64 = t };

	if (!ev) {
		if (*on)
			epoll_ctl(r->ep, EPOLL_CTL_DEL, fd, NULL);
		*on = false;
		return;
	}
	if (epoll_ctl(r->ep, *on ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &e) == 0)
		*on = true;
}

static void conn_close(struct relay *r, int i)
{
	struct rconn *c = r->c[i];

	if (c->cli >= 0)
		close(c->cli);	/* closing drops the epoll registration too */
	if (c->vs >= 0)
		close(c->vs);
	free(c);
	r->c[i] = NULL;
}

/* A stream to the agent carrying "CONNECT 1024\n" and the TCP request
 * (vsock.sock in the current directory: the state directory, or the root
 * the relay was confined to). fd or -errno. */
static int open_guest(uint16_t gport)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	uint8_t req[48], port[2] = { (uint8_t)gport, (uint8_t)(gport >> 8) };
	int n = snprintf((char *)req, sizeof(req), "CONNECT %u\n", AP_PORT);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "vsock.sock");
	ap_hdr_encode(req + n, AP_TCP, sizeof(port));
	memcpy(req + n + AP_HDR_SIZE, port, sizeof(port));
	n += AP_HDR_SIZE + (int)sizeof(port);
	/* A fresh socket's buffer takes these few bytes at once; anything else is a failure. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    send(fd, req, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
		int e = errno ? -errno : -EIO;

		close(fd);
		return e;
	}
	return fd;
}

/* Set-up with the guest for connection @i (from RC_HEAD or accept): its
 * stream to the agent; the client is not read until the guest answered. */
static void to_guest(struct relay *r, int i)
{
	struct rconn *c = r->c[i];

	c->vs = open_guest(r->gport[c->li]);
	if (c->vs < 0) {
		say(r, "mvm relay: cannot reach the guest agent: %s", strerror(-c->vs));
		conn_close(r, i);
		return;
	}
	c->state = RC_LINE;
	c->deadline = mono_now_ms() + RELAY_SETUP_MS;
	c->up.to = c->vs;
	c->down.from = c->vs;
	interest(r, c->cli, &c->cli_on, 0, tag(K_CLI, i));
	interest(r, c->vs, &c->vs_on, EPOLLIN, tag(K_VS, i));
}

/* Refuse a local_web connection: a 403 the client can read, then closed. */
static void refuse(struct relay *r, int i, const char *why)
{
	static const char body[] = "mvm relay: only this host's own 127.0.0.1 port as Host and Origin\n";
	struct rconn *c = r->c[i];
	char resp[256];
	int n = snprintf(resp, sizeof(resp), "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", sizeof(body) - 1, body);

	say(r, "mvm relay: port %u: refused a request with %s", r->hport[c->li], why);
	(void)!send(c->cli, resp, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(c->cli, SHUT_WR);
	/* Unread bytes would turn the close into a reset that may discard the 403. */
	while (recv(c->cli, c->dbuf, RELAY_BUF, MSG_DONTWAIT) > 0)
		;
	conn_close(r, i);
}

/* RC_HEAD: the client's bytes until its first request head is complete,
 * then the check; nothing reaches the guest before it passes. */
static void head_read(struct relay *r, int i)
{
	struct rconn *c = r->c[i];
	size_t head = 0;
	const char *why;
	ssize_t n = recv(c->cli, c->ubuf + c->up.len, RELAY_HEAD_MAX - c->up.len, MSG_DONTWAIT);
	int ok;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		return conn_close(r, i);
	c->up.len += (size_t)n;
	ok = relay_http_check((const char *)c->ubuf, c->up.len, r->hport[c->li], &head, &why);
	if (ok < 0)
		return refuse(r, i, why);
	if (ok)
		return;
	/* One request per connection unless it becomes a WebSocket: the guest
	 * gets this head alone, then the end of the stream; what else the
	 * client sends is read and dropped (a close with unread bytes would
	 * reset the connection and could cut the answer short). */
	if (!relay_http_upgrade((const char *)c->ubuf, head)) {
		c->up.len = head;
		c->up.eof = true;
		c->drain = true;
	}
	to_guest(r, i);	/* what was read waits in up.buf for the pipe */
}

/* A local_web connection after its one request: client bytes dropped. */
static int drain(struct rconn *c)
{
	char b[4096];
	ssize_t n;

	while ((n = recv(c->cli, b, sizeof(b), MSG_DONTWAIT)) > 0)
		;
	if (n == 0)
		c->drain = false;
	return n < 0 && errno != EAGAIN && errno != EINTR ? -1 : 0;
}

/* Whether the client of accepted socket @fd (@peer) belongs to the owner.
 * Anything unclear (the lookup failed, the client already gone) is no. */
static bool owners_client(struct relay *r, int li, const struct sockaddr_in *peer)
{
	struct sockaddr_in local = { .sin_family = AF_INET, .sin_port = htons(r->hport[li]),
				     .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint32_t uid = 0;
	int ret = relay_peer_uid(r->nl, peer, &local, &uid);

	if (ret)
		say(r, "mvm relay: port %u: refused a connection whose owner is unknown (%s)",
		    r->hport[li], strerror(-ret));
	else if (uid != r->owner)
		say(r, "mvm relay: port %u: refused a connection of uid %u (only uid %u is served)",
		    r->hport[li], uid, r->owner);
	return !ret && uid == r->owner;
}

/* Whether forward @li may take one more connection: all RELAY_MAX_CONNS
 * are shared, but each other forward keeps RELAY_FWD_RESERVE of them. */
static bool fwd_has_room(const struct relay *r, int li)
{
	int mine = 0, all = 0;

	for (int i = 0; i < RELAY_MAX_CONNS; i++)
		if (r->c[i]) {
			all++;
			mine += r->c[i]->li == li;
		}
	return all < RELAY_MAX_CONNS && mine < RELAY_MAX_CONNS - RELAY_FWD_RESERVE * (r->n - 1);
}

static void on_accept(struct relay *r, int li)
{
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	int fd = accept4(r->lfd[li], (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC), i;
	struct rconn *c;

	if (fd < 0)
		return;
	if (plen != sizeof(peer) || peer.sin_family != AF_INET || !owners_client(r, li, &peer)) {
		close(fd);	/* another user's: it never takes a slot */
		return;
	}
	for (i = 0; i < RELAY_MAX_CONNS && r->c[i]; i++)
		;
	c = fwd_has_room(r, li) && i < RELAY_MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		say(r, "mvm relay: port %u: its share of the %d connections is open: a new one is closed",
		    r->hport[li], RELAY_MAX_CONNS);
		close(fd);	/* full: the client sees the connection closed */
		return;
	}
	c->cli = fd;
	c->vs = -1;
	c->li = li;
	r->c[i] = c;
	c->deadline = mono_now_ms() + RELAY_SETUP_MS;
	c->up = (struct ap_half){ .from = c->cli, .buf = c->ubuf, .cap = RELAY_BUF };
	c->down = (struct ap_half){ .to = c->cli, .buf = c->dbuf, .cap = RELAY_BUF };
	if (r->web[li])
		interest(r, c->cli, &c->cli_on, EPOLLIN, tag(K_CLI, i));	/* RC_HEAD first */
	else
		to_guest(r, i);
}

/* A set-up that failed: one line in relay.log saying which step (the
 * client only sees its connection closed). Returns -1. */
static int setup_failed(struct relay *r, const char *why, ssize_t n)
{
	say(r, "mvm relay: connection closed in set-up: %s (%s)", why,
	    n < 0 ? strerror(errno) : "end of stream");
	return -1;
}

/* Set-up bytes from the guest: the VMM's "OK <port>\n", then the agent's
 * answer header. -1 when the connection must go. */
static int setup_read(struct relay *r, struct rconn *c)
{
	ssize_t n;

	while (c->state == RC_LINE) {
		n = recv(c->vs, c->line + c->line_len, 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0)	/* refused: no agent listening, the VMM's table full, or it is going */
			return setup_failed(r, "the VMM refused the vsock connection", n);
		if (c->line[c->line_len] != '\n') {
			if (++c->line_len == sizeof(c->line) - 1)
				return setup_failed(r, "the VMM's answer is too long", 1);
			continue;
		}
		c->line[c->line_len] = 0;
		if (strncmp(c->line, "OK ", 3))
			return setup_failed(r, "the VMM did not answer OK", 1);
		c->state = RC_HDR;
	}
	n = recv(c->vs, c->hdr + c->hdr_len, sizeof(c->hdr) - c->hdr_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return setup_failed(r, "the guest agent closed the stream before answering", n);
	c->hdr_len += (size_t)n;
	if (c->hdr_len < sizeof(c->hdr))
		return 0;
	{
		struct ap_hdr h;

		/* Anything but an empty OK (an ERROR: nothing listens there) ends it. */
		if (ap_hdr_decode(c->hdr, sizeof(c->hdr), &h))
			return setup_failed(r, "the guest agent's answer is malformed", 1);
		if (h.type != AP_OK || h.len)
			return setup_failed(r, "the guest agent answered an error (nothing listens on the port?)", 1);
	}
	c->state = RC_PIPE;
	c->deadline = mono_now_ms() + r->idle_ms;
	return 0;
}

static void rearm(struct relay *r, int i)
{
	struct rconn *c = r->c[i];

	interest(r, c->cli, &c->cli_on, (ap_half_wants_read(&c->up) || c->drain ? EPOLLIN : 0) |
		 (c->down.len ? EPOLLOUT : 0), tag(K_CLI, i));
	interest(r, c->vs, &c->vs_on, (ap_half_wants_read(&c->down) ? EPOLLIN : 0) |
		 (c->up.len ? EPOLLOUT : 0), tag(K_VS, i));
}

static void on_conn(struct relay *r, int i, int kind, uint32_t ev)
{
	struct rconn *c = r->c[i];
	bool in = ev & (EPOLLIN | EPOLLHUP | EPOLLERR);

	if (!c)
		return;
	if (c->state == RC_HEAD) {
		if (kind == K_CLI)
			head_read(r, i);
		return;
	}
	if (c->state != RC_PIPE) {
		/* Only the guest side is watched in set-up: a client-side event is
		 * a stale one for an earlier connection in this slot. */
		if (kind != K_VS)
			return;
		if (setup_read(r, c))
			return conn_close(r, i);
		if (c->state != RC_PIPE)
			return;
		in = false;	/* stream bytes may already wait: read them below */
		ev = EPOLLIN;
	}
	c->deadline = mono_now_ms() + r->idle_ms;	/* traffic: not idle */
	if (kind == K_CLI && in && c->drain && drain(c))
		return conn_close(r, i);
	if (ap_half_step(&c->up, kind == K_CLI && in) ||
	    ap_half_step(&c->down, kind == K_VS ? (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 : false))
		return conn_close(r, i);
	if (c->up.done && c->down.done)
		return conn_close(r, i);
	rearm(r, i);
}

/* Set-up deadlines; the epoll timeout until the next one (-1: none). */
static int expire(struct relay *r)
{
	uint64_t now = mono_now_ms(), next = 0;

	for (int i = 0; i < RELAY_MAX_CONNS; i++) {
		struct rconn *c = r->c[i];

		if (!c)
			continue;
		if (c->deadline <= now) {
			if (c->state == RC_PIPE)
				say(r, "mvm relay: port %u: a connection idle for %llu s is closed",
				    r->hport[c->li], (unsigned long long)(r->idle_ms / 1000));
			else
				say(r, "mvm relay: %s within %d ms", c->state == RC_HEAD ?
				    "the client sent no complete request head" : "the guest did not answer",
				    RELAY_SETUP_MS);
			conn_close(r, i);
		} else if (!next || c->deadline < next) {
			next = c->deadline;
		}
	}
	return next ? (int)(next - now) + 1 : -1;
}

static int serve(struct relay *r)
{
	struct epoll_event ev[32];

	for (;;) {
		int n = epoll_wait(r->ep, ev, 32, expire(r));

		if (n < 0 && errno != EINTR)
			return 1;
		for (int k = 0; k < n; k++) {
			int kind = (int)(ev[k].data.u64 & 0xff), idx = (int)(ev[k].data.u64 >> 8);

			if (kind == K_PID)
				return 0;	/* the VMM is gone: so is the sandbox's guest */
			if (kind == K_LISTEN)
				on_accept(r, idx);
			else
				on_conn(r, idx, kind, ev[k].events);
		}
	}
}

/* MVM_RELAY_IDLE (seconds, 1..86400), else RELAY_IDLE_S; in ms. */
static uint64_t idle_ms(void)
{
	const char *v = getenv("MVM_RELAY_IDLE");
	char *end;
	long s = v && *v ? strtol(v, &end, 10) : 0;

	if (!v || !*v || *end || s < 1 || s > 86400)
		s = RELAY_IDLE_S;
	return (uint64_t)s * 1000;
}

/* relay.log (reopened read-write: a rotation copies it) and relay.log.1,
 * in the state directory, before confinement; a link or anything but a
 * regular file (the VMM can write this directory) is not written to. */
static void open_log(struct relay *r)
{
	const int fl = O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	int fd = open("relay.log", fl | O_APPEND, 0600), old = open("relay.log.1", fl, 0600);

	r->log.fd = -1;
	if (fd >= 0 && old >= 0 && !rotlog_attach_fixed(&r->log, "relay.log", fd, old,
							 rotlog_max_from_env()) && r->log.max) {
		dup2(fd, STDERR_FILENO);	/* stray messages land in the same file */
		return;
	}
	if (r->log.fd >= 0)
		rotlog_close(&r->log);	/* not a regular file: closes both */
	else {
		if (fd >= 0)
			close(fd);
		if (old >= 0)
			close(old);
	}
	r->log.fd = -1;
}

/* Descriptors 3.. as the listeners of @fwd. 0, or -1 with a message. */
static int listeners(struct relay *r, const struct relay_fwd *fwd, int n)
{
	for (int i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = tag(K_LISTEN, i) };
		struct sockaddr_in a;
		socklen_t alen = sizeof(a);

		r->lfd[i] = 3 + i;
		r->gport[i] = fwd[i].guest;
		r->web[i] = fwd[i].local_web;
		fcntl(r->lfd[i], F_SETFL, O_NONBLOCK);
		if (getsockname(r->lfd[i], (struct sockaddr *)&a, &alen) == 0 && a.sin_family == AF_INET &&
		    a.sin_addr.s_addr == htonl(INADDR_LOOPBACK))
			r->hport[i] = ntohs(a.sin_port);
		if (!r->hport[i] || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->lfd[i], &e)) {
			say(r, "mvm relay: descriptor %d is no socket listening on 127.0.0.1", r->lfd[i]);
			return -1;
		}
	}
	return 0;
}

int relay_main(const char *name, const struct relay_fwd *fwd, int n)
{
	static struct relay r = { .log.fd = -1 };
	struct epoll_event pe = { .events = EPOLLIN, .data.u64 = tag(K_PID, 0) };
	char dir[PATH_MAX], err[256] = "";
	int keep[RELAY_MAX_FWD + 5], nkeep = 0;
	pid_t vmm = sb_vmm_pid(name);
	bool ns;
	int ret;

	if (n < 1 || n > RELAY_MAX_FWD || vmm <= 0 || sb_path(name, NULL, dir, sizeof(dir)) ||
	    chdir(dir))
		return 1;
	open_log(&r);
	/* Beneath whoever started the sandbox, with its VMM (an engine's
	 * limits and kill reach it), wherever `mvm browser` ran. */
	if ((ret = sb_cgroup_join(vmm)))
		say(&r, "mvm relay: it stays in the cgroup it was started in: joining its "
		    "VMM's: %s", strerror(-ret));
	r.n = n;
	r.owner = (uint32_t)getuid();
	r.idle_ms = idle_ms();
	r.pidfd = (int)syscall(SYS_pidfd_open, vmm, 0);
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	r.nl = relay_peer_open();
	if (r.pidfd < 0 || r.ep < 0 || r.nl < 0) {
		say(&r, "mvm relay: %s", strerror(r.nl < 0 ? -r.nl : errno));
		return 1;
	}
	keep[nkeep++] = r.pidfd;
	keep[nkeep++] = r.ep;
	keep[nkeep++] = r.nl;
	if (r.log.fd >= 0) {
		keep[nkeep++] = r.log.fd;
		keep[nkeep++] = r.log.old_fd;
	}
	if (listeners(&r, fwd, n) || epoll_ctl(r.ep, EPOLL_CTL_ADD, r.pidfd, &pe))
		return 1;
	for (int i = 0; i < n; i++)
		keep[nkeep++] = r.lfd[i];
	if (relay_confine(keep, nkeep, dir, &ns, err, sizeof(err))) {
		say(&r, "mvm relay: cannot confine the relay: %s", err);
		return 1;
	}
	if (!ns)
		say(&r, "mvm relay: no user namespace here: other Unix sockets stay reachable by path");
	return serve(&r);
}
