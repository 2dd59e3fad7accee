/* libslirp on the VMM event loop; the design is described in net_slirp.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <slirp/libslirp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/mono_time.h"
#include "devices/net_slirp.h"
#include "vmm/event_loop.h"
#include "common/log.h"

#define GUEST_ADDR "10.0.2.15"
#define REG_TAG 0x80000000u /* reg[fd] != 0: registered */

struct ns_timer {
	struct net_slirp *s;
	SlirpTimerId id;
	void *cb_opaque;
	int fd;
};

struct net_slirp {
	struct ev_loop *loop;
	Slirp *slirp;
	struct net_slirp_cb cb;
	int epfd;		/* private epoll set of slirp's sockets */
	int tfd;		/* slirp_pollfds_fill's timeout */
	/* the last fill: what slirp_pollfds_poll's indices refer to */
	struct pollfd *pfds;
	int npfds, cap;
	/* fd -> events registered in epfd (0: not registered) */
	uint32_t *reg;
	unsigned *mark;
	int nreg;
	int *prev;		/* fds registered by the last sync */
	int nprev, prevcap;
	unsigned gen;
	bool dead;
	bool dirty;		/* frames went in since the last sync_fds */
};

static int64_t cb_clock(void *opaque)
{
	return mono_now_ns();
}

static ssize_t cb_send(const void *buf, size_t len, void *opaque)
{
	struct net_slirp *s = opaque;

	s->cb.to_guest(s->cb.opaque, buf, len);
	return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
	log_debug("virtio-net: slirp: %s", msg);
}

static int grow_reg(struct net_slirp *s, int fd)
{
	int n = s->nreg ? s->nreg : 64;
	uint32_t *r;
	unsigned *m;

	if (fd < s->nreg)
		return 0;
	while (n <= fd)
		n *= 2;
	r = realloc(s->reg, sizeof(*r) * (size_t)n);
	if (!r)
		return -ENOMEM;
	s->reg = r;
	m = realloc(s->mark, sizeof(*m) * (size_t)n);
	if (!m)
		return -ENOMEM;
	s->mark = m;
	memset(s->reg + s->nreg, 0, sizeof(*r) * (size_t)(n - s->nreg));
	memset(s->mark + s->nreg, 0, sizeof(*m) * (size_t)(n - s->nreg));
	s->nreg = n;
	return 0;
}

/* slirp opened or is closing a socket: forget what we registered for it
 * (a closed fd leaves epoll by itself; its number may come back). */
static void cb_register(int fd, void *opaque)
{
	struct net_slirp *s = opaque;

	if (fd >= 0 && fd < s->nreg && s->reg[fd]) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
		s->reg[fd] = 0;
	}
}

static void cb_notify(void *opaque)
{
}

static void on_timer(void *opaque, uint32_t events);

static void *cb_timer_new(SlirpTimerId id, void *cb_opaque, void *opaque)
{
	struct net_slirp *s = opaque;
	struct ns_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->s = s;
	t->id = id;
	t->cb_opaque = cb_opaque;
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->fd < 0 || ev_add(s->loop, t->fd, EPOLLIN, on_timer, t)) {
		log_warn("virtio-net: cannot create a slirp timer");
		if (t->fd >= 0)
			close(t->fd);
		free(t);
		return NULL;
	}
	return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
	struct ns_timer *t = timer;

	if (!t)
		return;
	ev_del(t->s->loop, t->fd);
	close(t->fd);
	free(t);
}

/* @expire_ms: absolute, in cb_clock's time base. */
static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
	struct ns_timer *t = timer;
	struct itimerspec its = { 0 };

	if (!t)
		return;
	if (expire_ms < 0)
		expire_ms = 0;
	its.it_value.tv_sec = expire_ms / 1000;
	its.it_value.tv_nsec = (expire_ms % 1000) * 1000000;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static const SlirpCb slirp_cbs = {
	.send_packet = cb_send,
	.guest_error = cb_guest_error,
	.clock_get_ns = cb_clock,
	.timer_free = cb_timer_free,
	.timer_mod = cb_timer_mod,
	.register_poll_fd = cb_register,
	.unregister_poll_fd = cb_register,
	.notify = cb_notify,
	.timer_new_opaque = cb_timer_new,
};

static int add_poll(int fd, int events, void *opaque)
{
	struct net_slirp *s = opaque;
	short ev = 0;

	if (s->npfds == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct pollfd *p = realloc(s->pfds, sizeof(*p) * (size_t)cap);

		if (!p)
			return -1;
		s->pfds = p;
		s->cap = cap;
	}
	if (events & SLIRP_POLL_IN)
		ev |= POLLIN;
	if (events & SLIRP_POLL_OUT)
		ev |= POLLOUT;
	if (events & SLIRP_POLL_PRI)
		ev |= POLLPRI;
	s->pfds[s->npfds] = (struct pollfd){ .fd = fd, .events = ev };
	return s->npfds++;
}

static int get_revents(int idx, void *opaque)
{
	struct net_slirp *s = opaque;
	short r;
	int out = 0;

	if (idx < 0 || idx >= s->npfds)
		return 0;
	r = s->pfds[idx].revents;
	if (r & POLLIN)
		out |= SLIRP_POLL_IN;
	if (r & POLLOUT)
		out |= SLIRP_POLL_OUT;
	if (r & POLLPRI)
		out |= SLIRP_POLL_PRI;
	if (r & POLLERR)
		out |= SLIRP_POLL_ERR;
	if (r & POLLHUP)
		out |= SLIRP_POLL_HUP;
	return out;
}

static void set_prev(struct net_slirp *s, int fd)
{
	if (s->nprev == s->prevcap) {
		int cap = s->prevcap ? s->prevcap * 2 : 64;
		int *p = realloc(s->prev, sizeof(*p) * (size_t)cap);

		if (!p)
			return;
		s->prev = p;
		s->prevcap = cap;
	}
	s->prev[s->nprev++] = fd;
}

/* Fill again and make the private epoll set match it; arm the timeout. */
static void sync_fds(struct net_slirp *s)
{
	uint32_t timeout = UINT32_MAX;
	struct itimerspec its = { 0 };
	int *old, nold;

	s->npfds = 0;
	slirp_pollfds_fill(s->slirp, &timeout, add_poll, s);
	s->gen++;
	old = s->prev;
	nold = s->nprev;
	s->prev = NULL;
	s->nprev = s->prevcap = 0;
	for (int i = 0; i < s->npfds; i++) {
		int fd = s->pfds[i].fd;
		uint32_t ev = (uint32_t)s->pfds[i].events;
		struct epoll_event e = { .events = ev, .data.fd = fd };

		if (fd < 0 || grow_reg(s, fd))
			continue;
		if (s->mark[fd] == s->gen) {
			/* the same fd twice: register the union */
			uint32_t want = s->reg[fd] | ev;

			if (want != s->reg[fd]) {
				e.events = want & ~REG_TAG;
				epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &e);
				s->reg[fd] = want;
			}
			continue;
		}
		s->mark[fd] = s->gen;
		set_prev(s, fd);
		if (s->reg[fd] == (ev | REG_TAG))
			continue;
		if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &e) && errno == ENOENT)
			epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e);
		s->reg[fd] = ev | REG_TAG; /* non-zero even for no events */
	}
	for (int i = 0; i < nold; i++) {
		int fd = old[i];

		if (fd < s->nreg && s->mark[fd] != s->gen && s->reg[fd]) {
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
			s->reg[fd] = 0;
		}
	}
	free(old);
	if (timeout != UINT32_MAX) {
		its.it_value.tv_sec = timeout / 1000;
		its.it_value.tv_nsec = (long)(timeout % 1000) * 1000000;
		if (!timeout)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(s->tfd, 0, &its, NULL);
}

static void poll_round(struct net_slirp *s)
{
	int r = poll(s->pfds, (nfds_t)s->npfds, 0);

	slirp_pollfds_poll(s->slirp, r < 0, get_revents, s);
	sync_fds(s);
}

static void on_fds(void *opaque, uint32_t events)
{
	struct net_slirp *s = opaque;
	struct epoll_event evs[16];

	/* Drain the private ready list; poll() gives the per-fd results. */
	while (epoll_wait(s->epfd, evs, 16, 0) == 16)
		;
	s->cb.lock(s->cb.opaque);
	poll_round(s);
	s->cb.unlock(s->cb.opaque);
}

static void on_timeout(void *opaque, uint32_t events)
{
	struct net_slirp *s = opaque;
	uint64_t n;

	(void)!read(s->tfd, &n, sizeof(n));
	s->cb.lock(s->cb.opaque);
	poll_round(s);
	s->cb.unlock(s->cb.opaque);
}

static void on_timer(void *opaque, uint32_t events)
{
	struct ns_timer *t = opaque;
	struct net_slirp *s = t->s;
	uint64_t n;

	if (read(t->fd, &n, sizeof(n)) != sizeof(n))
		return;
	s->cb.lock(s->cb.opaque);
	slirp_handle_timer(s->slirp, t->id, t->cb_opaque);
	sync_fds(s);
	s->cb.unlock(s->cb.opaque);
}

void net_slirp_input(struct net_slirp *s, const uint8_t *frame, size_t len)
{
	if (len > 65536)
		return;
	slirp_input(s->slirp, frame, (int)len);
	s->dirty = true;
}

void net_slirp_flush(struct net_slirp *s)
{
	if (s->dirty) {
		s->dirty = false;
		sync_fds(s);
	}
}

int net_slirp_publish(struct net_slirp *s, const struct net_publish *p, char *err, size_t errlen)
{
	struct in_addr guest;
	char ip[INET_ADDRSTRLEN];

	inet_pton(AF_INET, GUEST_ADDR, &guest);
	if (slirp_add_hostfwd(s->slirp, 0, p->host_addr, p->host_port, guest, p->guest_port)) {
		snprintf(err, errlen, "--publish %s:%u: cannot listen there (port in use?)",
			 inet_ntop(AF_INET, &p->host_addr, ip, sizeof(ip)), p->host_port);
		return -EADDRINUSE;
	}
	sync_fds(s);
	return 0;
}

int net_slirp_create(struct ev_loop *loop, bool host_loopback, const struct net_slirp_cb *cb,
		     struct net_slirp **out, char *err, size_t errlen)
{
	struct net_slirp *s = calloc(1, sizeof(*s));
	SlirpConfig cfg = { .version = 4 };
	int ret;

	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->cb = *cb;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->epfd < 0 || s->tfd < 0) {
		ret = -errno;
		goto fail;
	}
	cfg.restricted = 0;
	cfg.in_enabled = true;
	inet_pton(AF_INET, "10.0.2.0", &cfg.vnetwork);
	inet_pton(AF_INET, "255.255.255.0", &cfg.vnetmask);
	inet_pton(AF_INET, "10.0.2.2", &cfg.vhost);
	inet_pton(AF_INET, GUEST_ADDR, &cfg.vdhcp_start);
	inet_pton(AF_INET, "10.0.2.3", &cfg.vnameserver);
	cfg.in6_enabled = true;
	inet_pton(AF_INET6, "fec0::", &cfg.vprefix_addr6);
	cfg.vprefix_len = 64;
	inet_pton(AF_INET6, "fec0::2", &cfg.vhost6);
	inet_pton(AF_INET6, "fec0::3", &cfg.vnameserver6);
	cfg.vhostname = "mvm";
	cfg.tftp_path = NULL;
	cfg.disable_host_loopback = !host_loopback;
	cfg.enable_emu = false;
	s->slirp = slirp_new(&cfg, &slirp_cbs, s);
	if (!s->slirp) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = ev_add(loop, s->epfd, EPOLLIN, on_fds, s);
	if (!ret) {
		ret = ev_add(loop, s->tfd, EPOLLIN, on_timeout, s);
		if (ret)
			ev_del(loop, s->epfd);
	}
	if (ret)
		goto fail;
	sync_fds(s);
	*out = s;
	return 0;
fail:
	snprintf(err, errlen, "network back-end (libslirp %s): %s", slirp_version_string(),
		 strerror(-ret));
	if (s->slirp)
		slirp_cleanup(s->slirp);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
	free(s);
	return ret;
}

void net_slirp_destroy(struct net_slirp *s)
{
	if (!s)
		return;
	ev_del(s->loop, s->epfd);
	ev_del(s->loop, s->tfd);
	slirp_cleanup(s->slirp);
	close(s->epfd);
	close(s->tfd);
	free(s->pfds);
	free(s->reg);
	free(s->mark);
	free(s->prev);
	free(s);
}
