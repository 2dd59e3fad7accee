// SPDX-License-Identifier: MIT
/*
 * libslirp, loaded only when a sandbox has a NIC.
 *
 * libslirp drags in glib and pcre2: mapping and relocating them costs about
 * 1.5 MiB of RSS in every VMM, network or not. So mvm does not link them;
 * these definitions of the libslirp entry points mvm uses resolve the real
 * ones with dlopen() on the first slirp_new(). Every other entry point can
 * only be reached through a Slirp that slirp_new() returned, so only
 * slirp_new() (and slirp_version_string(), used in error messages) need to
 * cope with a library that is missing.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <slirp/libslirp.h>
#include <stdlib.h>

#include "common/log.h"

#define SLIRP_SONAME "libslirp.so.0"

static struct {
	Slirp *(*new_)(const SlirpConfig *, const SlirpCb *, void *);
	void (*cleanup)(Slirp *);
	void (*pollfds_fill)(Slirp *, uint32_t *, SlirpAddPollCb, void *);
	void (*pollfds_poll)(Slirp *, int, SlirpGetREventsCb, void *);
	void (*input)(Slirp *, const uint8_t *, int);
	void (*handle_timer)(Slirp *, SlirpTimerId, void *);
	int (*add_hostfwd)(Slirp *, int, struct in_addr, int, struct in_addr, int);
	int (*remove_hostfwd)(Slirp *, int, struct in_addr, int);
	void (*state_save)(Slirp *, SlirpWriteCb, void *);
	int (*state_load)(Slirp *, int, SlirpReadCb, void *);
	int (*state_version)(void);
	const char *(*version_string)(void);
} lib;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_ok;

static int resolve(void *h, void **slot, const char *name)
{
	*slot = dlsym(h, name);
	if (!*slot)
		log_error("%s: missing symbol %s", SLIRP_SONAME, name);
	return *slot ? 0 : -1;
}

static void lib_load(void)
{
	void *h = dlopen(SLIRP_SONAME, RTLD_NOW | RTLD_LOCAL);
	int bad = 0;

	if (!h) {
		log_error("cannot load %s (package libslirp0): %s", SLIRP_SONAME, dlerror());
		return;
	}
	bad |= resolve(h, (void **)&lib.new_, "slirp_new");
	bad |= resolve(h, (void **)&lib.cleanup, "slirp_cleanup");
	bad |= resolve(h, (void **)&lib.pollfds_fill, "slirp_pollfds_fill");
	bad |= resolve(h, (void **)&lib.pollfds_poll, "slirp_pollfds_poll");
	bad |= resolve(h, (void **)&lib.input, "slirp_input");
	bad |= resolve(h, (void **)&lib.handle_timer, "slirp_handle_timer");
	bad |= resolve(h, (void **)&lib.add_hostfwd, "slirp_add_hostfwd");
	bad |= resolve(h, (void **)&lib.remove_hostfwd, "slirp_remove_hostfwd");
	bad |= resolve(h, (void **)&lib.state_save, "slirp_state_save");
	bad |= resolve(h, (void **)&lib.state_load, "slirp_state_load");
	bad |= resolve(h, (void **)&lib.state_version, "slirp_state_version");
	bad |= resolve(h, (void **)&lib.version_string, "slirp_version_string");
	lib_ok = !bad;
	// The handle stays open for the life of the process: Slirp objects
	// point into the library.
}

static int lib_ready(void)
{
	pthread_once(&lib_once, lib_load);
	return lib_ok;
}

Slirp *slirp_new(const SlirpConfig *cfg, const SlirpCb *callbacks, void *opaque)
{
	return lib_ready() ? lib.new_(cfg, callbacks, opaque) : NULL;
}

const char *slirp_version_string(void)
{
	return lib_ready() ? lib.version_string() : "(not loaded)";
}

int slirp_state_version(void)
{
	return lib_ready() ? lib.state_version() : -1;
}

void slirp_cleanup(Slirp *s)
{
	lib.cleanup(s);
}

void slirp_pollfds_fill(Slirp *s, uint32_t *timeout, SlirpAddPollCb add_poll, void *opaque)
{
	lib.pollfds_fill(s, timeout, add_poll, opaque);
}

void slirp_pollfds_poll(Slirp *s, int select_error, SlirpGetREventsCb get_revents, void *opaque)
{
	lib.pollfds_poll(s, select_error, get_revents, opaque);
}

void slirp_input(Slirp *s, const uint8_t *pkt, int pkt_len)
{
	lib.input(s, pkt, pkt_len);
}

void slirp_handle_timer(Slirp *s, SlirpTimerId id, void *cb_opaque)
{
	lib.handle_timer(s, id, cb_opaque);
}

int slirp_add_hostfwd(Slirp *s, int is_udp, struct in_addr host_addr, int host_port,
		      struct in_addr guest_addr, int guest_port)
{
	return lib.add_hostfwd(s, is_udp, host_addr, host_port, guest_addr, guest_port);
}

int slirp_remove_hostfwd(Slirp *s, int is_udp, struct in_addr host_addr, int host_port)
{
	return lib.remove_hostfwd(s, is_udp, host_addr, host_port);
}

void slirp_state_save(Slirp *s, SlirpWriteCb write_cb, void *opaque)
{
	lib.state_save(s, write_cb, opaque);
}

int slirp_state_load(Slirp *s, int version_id, SlirpReadCb read_cb, void *opaque)
{
	return lib.state_load(s, version_id, read_cb, opaque);
}
