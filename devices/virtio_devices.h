/* Constructors of the virtio devices; each lives in its own file. */
#ifndef MVM_VIRTIO_DEVICES_H
#define MVM_VIRTIO_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct blk_backend;
struct rotlog;

/* virtio-blk over @b (ownership passes to the device). @id: serial, may be NULL. */
int virtio_blk_create(struct vm *vm, struct blk_backend *b, const char *id);
int virtio_rng_create(struct vm *vm);
/* Snapshots: put @nb under the virtio-blk device @d (same size and mode as
 * the guest was told; the old one is not touched: the caller may already
 * have closed it, with the VM paused). Returns the old back-end, or NULL
 * (nothing changed) when @nb does not fit. */
struct virtio_dev;
struct blk_backend *virtio_blk_swap_backend(struct virtio_dev *d, struct blk_backend *nb);
/* The back-end now under @d (event-loop thread, for flushing). */
struct blk_backend *virtio_blk_backend(struct virtio_dev *d);
/* A single-port virtio console whose output goes to @log if non-NULL, else
 * to @out_fd (hvc0, hvc1, ... in order). */
int virtio_console_create(struct vm *vm, int out_fd, struct rotlog *log);
/* virtio-vsock for guest CID @guest_cid (>= 3), host side on the Unix socket @uds_path. */
int virtio_vsock_create(struct vm *vm, uint64_t guest_cid, const char *uds_path);
/* virtio-net on libslirp under the network policy of @net (eth0 in the guest). */
struct vm_net;
int virtio_net_create(struct vm *vm, const struct vm_net *net, char *err, size_t errlen);
/* Run-time policy changes (event-loop thread, e.g. the control API): @verb
 * "allow", "deny" (adds a deny rule) or "remove" (a rule by its text).
 * 0, -ENODEV without a network device, or -EINVAL etc. with @err filled. */
int virtio_net_rule(struct vm *vm, const char *verb, const char *rule, char *err, size_t errlen);
/* The policy as JSON, {"mode":"allowlist","allow":[...],"deny":[...]}
 * (malloc'd), or NULL without a network device. */
char *virtio_net_show(struct vm *vm);
/* Dry run of @dest (net_policy_check: 1 allowed, 0 denied, -errno; @why says
 * why), including the running pins. */
int virtio_net_check(struct vm *vm, const char *dest, char *why, size_t whylen);
/* The pid of the VM's network helper (mvm-net; 0: no network device, or the
 * helper died) in the VMM's PID namespace (confine_pidns_host_pid() gives the
 * host's) and, in @landlock if not NULL, the Landlock ABI it runs under. */
int virtio_net_helper_pid(struct vm *vm, int *landlock);
/* Wait until the network helper (started in the background by
 * virtio_net_create) is set up and confined: before its Landlock ABI is read,
 * and at the latest when the device starts (vm_run). 0 (also: no network
 * device), or -errno with @err saying why (the helper's own message). */
int virtio_net_ready(struct vm *vm, char *err, size_t errlen);

#endif
