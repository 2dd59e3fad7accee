/* The VMM's single epoll event loop. */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "vmm/event_loop.h"

static struct ev_handler *slot_for(struct ev_loop *l, int fd)
{
	for (int i = 0; i < EV_MAX_HANDLERS; i++)
		if (l->handlers[i].fd == fd)
			return &l->handlers[i];
	return NULL;
}

int ev_init(struct ev_loop *l)
{
	memset(l, 0, sizeof(*l));
	for (int i = 0; i < EV_MAX_HANDLERS; i++)
		l->handlers[i].fd = -1;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return -errno;
	l->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->stop_fd < 0) {
		close(l->epfd);
		return -errno;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->stop_fd, &ev) < 0)
		return -errno;
	return 0;
}

void ev_fini(struct ev_loop *l)
{
	close(l->stop_fd);
	close(l->epfd);
}

int ev_add(struct ev_loop *l, int fd, uint32_t events, ev_fn fn, void *opaque)
{
	struct ev_handler *h = slot_for(l, -1);
	struct epoll_event ev = { .events = events };

	if (!h)
		return -ENOSPC;
	ev.data.ptr = h;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	*h = (struct ev_handler){ fd, fn, opaque };
	return 0;
}

int ev_mod(struct ev_loop *l, int fd, uint32_t events)
{
	struct ev_handler *h = slot_for(l, fd);
	struct epoll_event ev = { .events = events, .data.ptr = h };

	if (!h)
		return -ENOENT;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

int ev_del(struct ev_loop *l, int fd)
{
	struct ev_handler *h = slot_for(l, fd);

	if (!h)
		return -ENOENT;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	h->fd = -1;
	return 0;
}

int ev_timer(struct ev_loop *l, uint64_t first_ms, uint64_t period_ms, ev_fn fn, void *opaque)
{
	struct itimerspec its = {
		.it_value = { (time_t)(first_ms / 1000), (long)(first_ms % 1000) * 1000000 },
		.it_interval = { (time_t)(period_ms / 1000), (long)(period_ms % 1000) * 1000000 },
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int ret;

	if (fd < 0)
		return -errno;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = ev_add(l, fd, EPOLLIN, fn, opaque);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int ev_run(struct ev_loop *l)
{
	struct epoll_event evs[32];

	while (!l->stopping) {
		int n = epoll_wait(l->epfd, evs, 32, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n && !l->stopping; i++) {
			struct ev_handler *h = evs[i].data.ptr;

			if (!h) {
				l->stopping = true;
				break;
			}
			/* A handler earlier in this batch may have removed this one. */
			if (h->fd >= 0)
				h->fn(h->opaque, evs[i].events);
		}
	}
	return 0;
}

void ev_stop(struct ev_loop *l)
{
	uint64_t one = 1;
	ssize_t r = write(l->stop_fd, &one, sizeof(one));

	(void)r;
}
