/* Shared between vsock_mux.c (host side) and vsock_guest.c (guest side) only. */
#ifndef MVM_VSOCK_MUX_INT_H
#define MVM_VSOCK_MUX_INT_H

#include "devices/vsock_mux.h"

void vs_rewatch(struct vsock_mux *m, struct vsock_conn *c);
void vs_close_fd(struct vsock_mux *m, struct vsock_conn *c);
void vs_free(struct vsock_mux *m, struct vsock_conn *c);
struct vsock_conn *vs_alloc(struct vsock_mux *m, int fd);
struct vsock_conn *vs_find(struct vsock_mux *m, uint32_t guest_port, uint32_t host_port);
void vs_flush_pend(struct vsock_mux *m, struct vsock_conn *c);
/* After guest bytes were written out: half-close, RST, credit update. */
void vs_after_flush(struct vsock_mux *m, struct vsock_conn *c);

#endif
