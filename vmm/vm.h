/*
 * One virtual machine: KVM handles, guest memory, the buses, the event loop,
 * the vCPUs and the device list. Devices register themselves here through
 * vm_add_device() and reach the VM only through this header.
 */
#ifndef MVM_VM_H
#define MVM_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "vmm/bus.h"
#include "vmm/cmdline.h"
#include "vmm/event_loop.h"
#include "vmm/guest_mem.h"
#include "vmm/kernel_image.h"
#include "vmm/kvm.h"

#define VM_MAX_CPUS    64	/* MP table limit */
#define VM_MAX_DISKS   8
#define VM_MAX_DEVICES 32

struct vcpu;
struct vm;
struct serial;
struct rotlog;

struct vm_disk {
	const char *path;
	bool read_only;
	const char *format;	/* "raw" (default) or "qcow2" */
	/* qcow2 only: backing files must lie under this directory (NULL: the
	 * image's own) and the first one must be of this format (NULL: the
	 * header's). `mvm run --image` sets both for its per-run overlay. */
	const char *backing_root;
	const char *backing_format;
	const char *backing_file;	/* one more allowed file, exactly (NULL: none) */
};

/* Network (virtio-net on libslirp, docs/network-policy.md). */
#define VM_MAX_NET_RULES 64
#define VM_MAX_PUBLISH   16
struct vm_net {
	bool enabled;			/* false: no network device at all (--net none) */
	uint8_t mac[6];			/* the NIC's address; all zero: a fixed default */
	const char *mode;		/* "allowlist", "open", "none"; NULL: allowlist or the policy file's */
	const char *allow[VM_MAX_NET_RULES];
	int nr_allow;
	const char *policy_path;	/* --policy FILE */
	const char *dns_server;		/* upstream for allowed names; NULL: /etc/resolv.conf's */
	const char *publish[VM_MAX_PUBLISH];	/* [HOST_IP:]HOST_PORT:GUEST_PORT */
	int nr_publish;
	const char *events_path;	/* denials as JSON lines; NULL: a summary on stderr */
	/* Rules may change while the VM runs (a control API): slirp's path to the
	 * host loopback stays open so a rule can admit it later; the filter alone
	 * guards it, as it does in every case (docs/network-policy.md). */
	bool runtime_rules;
};

struct vm_config {
	const char *kernel_path;
	const char *initrd_path;	/* NULL: none */
	struct vm_disk disks[VM_MAX_DISKS];
	int nr_disks;
	bool root_on_disk;		/* guest init switches to /dev/vda */
	int cpus;
	uint64_t mem_size;
	const char *extra_cmdline;
	/* The command for the guest init (argv[0] first), NULL-terminated. */
	char *const *argv;
	char *const *env;		/* K=V strings, NULL-terminated; may be NULL */
	const char *workdir;		/* NULL: / */
	int console_fd;			/* kernel console copy; -1: keep only the tail */
	int stdout_fd, stderr_fd;	/* where the command's output goes */
	/* Non-NULL: stdout, stderr and (when console_fd < 0) the console go to
	 * this capped log instead (a sandbox's console.log, common/rotlog.h). */
	struct rotlog *log;
	bool want_rng;
	const char *vsock_path;		/* virtio-vsock host socket (hybrid vsock); NULL: none */
	uint64_t vsock_cid;		/* the guest's CID; 0: 3 */
	bool exit_at_init;		/* benchmarks: stop when the guest init starts */
	/* > 0: the VM stops this long after vm_create (a sandbox's lifetime,
	 * `mvm create --lifetime`), whatever the guest does. */
	uint64_t stop_after_ms;
#define VM_STOP_TIME_MSG "lifetime ended: stopped by the host"
	struct vm_net net;
	/* Restore (snapshots/): RAM maps this memory file MAP_PRIVATE and no
	 * kernel is loaded; the caller loads the state before vm_run. */
	const char *restore_mem;
	/* Creates the devices (vm_add_device) between memory and kernel loading:
	 * the layer above vmm/ assembles them (tools/sandbox/vm_devices.c). */
	int (*add_devices)(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);
};

enum vm_outcome {
	VM_EXITED,		/* the command exited; code = its status */
	VM_SIGNALED,		/* the command was killed by signal code */
	VM_PANIC,		/* guest kernel panic */
	VM_REBOOT,		/* guest shut down without reporting a status */
	VM_ERROR,		/* VMM-side failure */
};

struct vm_result {
	enum vm_outcome outcome;
	int code;
	char message[512];
	double t_start, t_init, t_exit;	/* seconds since VMM start; 0 = not reached */
};

struct snap_w;
struct snap_r;

struct vm_device_ops {
	const char *name;
	void (*destroy)(void *dev);
	/* Optional: finish I/O in flight (vm_quiesce). */
	void (*quiesce)(void *dev);
	/* Optional: start the device's own threads. vm_run calls it once the
	 * process is confined and before any vCPU runs, so the threads inherit
	 * Landlock and the namespaces and confine themselves further. 0 or -errno. */
	int (*start)(void *dev);
	/*
	 * Snapshots (snapshots/, optional: a device without them has no state
	 * worth keeping). save appends the device's section; load runs twice on
	 * the same bytes: @apply false only validates (nothing may change),
	 * then @apply true loads. Both run with the vCPUs paused, on the
	 * event-loop thread. 0 or -errno.
	 */
	uint32_t snap_version;
	int (*save)(void *dev, struct snap_w *w);
	int (*load)(void *dev, struct snap_r *r, uint32_t version, bool apply);
};

struct vm {
	struct kvm kvm;
	struct guest_mem mem;
	struct bus pio, mmio;
	struct ev_loop loop;
	struct cmdline cmdline;
	struct kernel_image kimg;
	const uint8_t *kernel_data;	/* the kernel file, mapped read-only (bzImage only) */
	size_t kernel_len;
	int kernel_fd;
	int ncpus;
	struct vcpu *vcpus;
	struct {
		const struct vm_device_ops *ops;
		void *dev;
	} devices[VM_MAX_DEVICES];
	int nr_devices;
	int next_virtio;		/* virtio-mmio slot allocator */
	struct serial *console;
	/* The console's last output, to tell a panic from a reset (NULL: none). */
	size_t (*console_tail)(struct serial *s, char *buf, size_t cap);
	/* The first disk's virtio device, for checkpoints' layer swaps
	 * (snapshots/disk_layers.c); NULL: no disk. */
	void *root_disk;
	void *net;			/* devices/virtio_net.c's device, for the control API; NULL: none */
	double t0;			/* mono_now_s() at vm_create, for vm_elapsed */
	/* Written by vCPU threads, read after the loop stops. */
	int stop_requested;
	struct vm_result result;
	bool exit_at_init;
	/* vm_pause.c: parked vCPUs wait here (zeroed = initialised). */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	bool paused;
	int parked;
	/* snapshots/: checkpoints of this VM (NULL until the first), and how
	 * many times state was loaded into it (rollbacks, restores; kept in the
	 * state file). */
	struct snap_mgr *snap;
	uint32_t snap_gen;
	/* The architecture's own VM state (vmm/arch/arch.h; x86: none). */
	void *arch;
	/* The guest finds the virtio-mmio devices in its device tree (arm64),
	 * not in virtio_mmio.device= command-line announcements (x86). */
	bool virtio_in_fdt;
};

/* Seconds since the VMM started (monotonic). */
double vm_elapsed(const struct vm *vm);
int vm_add_device(struct vm *vm, const struct vm_device_ops *ops, void *dev);
/* Next virtio-mmio slot: base address and IRQ; -ENOSPC when out of IRQs. */
int vm_alloc_virtio_slot(struct vm *vm, uint64_t *base, uint32_t *irq);

/* From any thread: end the run with @outcome unless one is already set. */
void vm_request_stop(struct vm *vm, enum vm_outcome outcome, int code, const char *msg);
/* Guest init reached (boot timer) / the command finished (wait status). */
void vm_guest_booted(struct vm *vm);
void vm_guest_exited(struct vm *vm, uint32_t wait_status);

/*
 * Pause: every vCPU leaves KVM_RUN and parks; devices and the event loop go
 * on. Called on the event-loop thread. 0, or -ETIMEDOUT (then resumed).
 */
int vm_pause(struct vm *vm);
void vm_resume(struct vm *vm);
/*
 * With the VM paused, on the event-loop thread: let every device finish
 * the requests it has in flight on other threads (virtio-blk's workers)
 * and hand them back to the guest, so saving or replacing device state and
 * disks sees no request half done. Blocks until the disks answered.
 */
void vm_quiesce(struct vm *vm);
bool vm_is_paused(struct vm *vm);
/* vCPU thread, after KVM_RUN returned -EINTR: park while the VM is paused. */
void vm_vcpu_park(struct vm *vm, struct kvm_vcpu *kv);

/*
 * Build the VM for @cfg: memory, devices, kernel, boot data, vCPUs.
 * On failure fills @res with a clear message and returns -errno.
 */
int vm_create(struct vm *vm, const struct vm_config *cfg, struct vm_result *res);
/* Run until the guest command ends, the guest dies, or an error. */
void vm_run(struct vm *vm, struct vm_result *res);
/* KiB of guest RAM resident in this process (what the guest touched). */
uint64_t vm_guest_resident_kib(const struct vm *vm);
void vm_destroy(struct vm *vm);

#endif
