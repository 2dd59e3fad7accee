/*
 * The one epoll loop: every device back-end, timer and control socket is a
 * file descriptor with a handler. Runs on the main thread; vCPU threads only
 * touch it through ev_stop() (an eventfd write).
 */
#ifndef MVM_EVENT_LOOP_H
#define MVM_EVENT_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#define EV_MAX_HANDLERS 128

typedef void (*ev_fn)(void *opaque, uint32_t events);

struct ev_handler {
	int fd;
	ev_fn fn;
	void *opaque;
};

struct ev_loop {
	int epfd;
	int stop_fd;
	bool stopping;
	struct ev_handler handlers[EV_MAX_HANDLERS];
};

int ev_init(struct ev_loop *l);
void ev_fini(struct ev_loop *l);
/* @events: EPOLLIN/EPOLLOUT...; the handler gets the ready mask. */
int ev_add(struct ev_loop *l, int fd, uint32_t events, ev_fn fn, void *opaque);
int ev_mod(struct ev_loop *l, int fd, uint32_t events);
int ev_del(struct ev_loop *l, int fd);
/* A timerfd firing every @period_ms (0: once after @first_ms). Returns the fd. */
int ev_timer(struct ev_loop *l, uint64_t first_ms, uint64_t period_ms, ev_fn fn, void *opaque);
/* Run until ev_stop(); 0 or -errno. */
int ev_run(struct ev_loop *l);
/* Safe from any thread and from signal handlers. */
void ev_stop(struct ev_loop *l);

#endif
