/*
 * The VMM process of one sandbox (`mvm vmm NAME`, started by create/start as
 * a daemon; and `mvm run`'s child). Runs in the sandbox's state directory, so its
 * sockets have short relative names; lives until the guest powers off or
 * the control API says shutdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "confine/hygiene.h"
#include "confine/seccomp_filter.h"
#include "tools/sandbox/sandbox.h"
#include "images/image_overlay.h"
#include "tools/sandbox/sandbox_api.h"
#include "tools/sandbox/sandbox_confine.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/sandbox/sandbox_vmm.h"
#include "tools/sandbox/test_attack.h"
#include "tools/sandbox/vm_devices.h"
#include "snapshots/checkpoint.h"
#include "snapshots/disk_layers.h"
#include "snapshots/snapshot_dir.h"
#include "vmm/vm.h"

static char *const agent_data_argv[] = { "mvm-agent", "--mount", "/dev/vda:/data", NULL };
static char *const agent_root_argv[] = { "mvm-agent", NULL };

int sb_vmm_write_pid(void)
{
	char buf[32];
	int fd = open("pid.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), n;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return rename("pid.tmp", "pid") ? -errno : 0;
}

static int build_config(const struct sb_config *c, struct vm_config *vc, int log_fd,
			char *kernel, char *initrd, char *base_dir, char *err, size_t errlen)
{
	static char top_file[DISK_LAYER_NAME], top_fmt[8], restore_dir[PATH_MAX], restore_mem[PATH_MAX + 8];
	const char *dir = cli_guest_dir();

	memset(vc, 0, sizeof(*vc));
	if (c->kernel[0])
		snprintf(kernel, PATH_MAX, "%s", c->kernel);
	else if (dir)
		snprintf(kernel, PATH_MAX, "%s/vmlinux", dir);
	else {
		snprintf(err, errlen, "no guest kernel (run 'make guest' or pass --kernel to create)");
		return -ENOENT;
	}
	if (!dir) {
		snprintf(err, errlen, "no guest initramfs (run 'make guest')");
		return -ENOENT;
	}
	snprintf(initrd, PATH_MAX, "%s/initramfs.cpio", dir);
	vc->kernel_path = kernel;
	vc->initrd_path = initrd;
	if (c->disk[0]) {
		vc->disks[0].path = c->disk;
		vc->disks[0].format = c->disk_format;
		vc->nr_disks = 1;
	}
	if (c->disk[0] && !strcmp(c->disk_format, IMAGE_OVERLAY_FORMAT)) {
		/* The overlay's backing file must be the base it was made on, raw. */
		snprintf(base_dir, PATH_MAX, "%s", c->image);
		*strrchr(base_dir, '/') = 0;
		vc->disks[0].backing_root = base_dir[0] ? base_dir : "/";
		vc->disks[0].backing_format = IMAGE_BASE_FORMAT;
	}
	/* After a checkpoint the disk is a chain of layers in the state
	 * directory (snapshots/disk_layers.h), ending in the base above. */
	if (c->disk[0] && !disk_layers_boot_top(top_file, sizeof(top_file), top_fmt, sizeof(top_fmt))) {
		vc->disks[0].backing_root2 = vc->disks[0].backing_root;
		vc->disks[0].path = top_file;
		vc->disks[0].format = top_fmt;
		vc->disks[0].backing_root = ".";
		vc->disks[0].backing_format = NULL;
	}
	vc->root_on_disk = c->root_on_disk;
	vc->cpus = c->cpus;
	vc->mem_size = c->mem;
	/* The sandbox's environment is applied per exec, never to the agent. */
	vc->argv = c->root_on_disk || !c->disk[0] ? agent_root_argv : agent_data_argv;
	vc->env = NULL;
	vc->console_fd = log_fd;
	vc->stdout_fd = log_fd;
	vc->stderr_fd = log_fd;
	vc->want_rng = true;
	vc->vsock_path = "vsock.sock";
	vc->vsock_cid = c->cid;
	/* Deny by default: policy.json holds create's rules and every later
	 * `mvm net` change; without it, nothing leaves. */
	vc->net.enabled = !c->net_off;
	vc->net.events_path = "events.jsonl";
	vc->net.runtime_rules = true;
	if (access(SB_POLICY_FILE, F_OK) == 0)
		vc->net.policy_path = SB_POLICY_FILE;
	vc->net.dns_server = c->dns_server[0] ? c->dns_server : NULL;
	for (int i = 0; i < c->npublish && i < VM_MAX_PUBLISH; i++)
		vc->net.publish[vc->net.nr_publish++] = c->publish[i];
	/* `mvm restore`/`fork`: RAM from the snapshot, state loaded by run_vmm. */
	if (!snap_restore_pending(restore_dir, sizeof(restore_dir))) {
		snprintf(restore_mem, sizeof(restore_mem), "%s/" SNAP_DIR_MEMORY, restore_dir);
		vc->restore_mem = restore_mem;
	}
	return 0;
}

static void outcome_event(const char *name, const struct vm_result *r)
{
	static const char *names[] = { "exited", "signaled", "panic", "reboot", "error" };
	char fields[768], msg[512];
	const char *m = r->message;
	size_t j = 0;

	/* In a sandbox nothing reports an exit status: a reset is the normal end. */
	if (r->outcome == VM_REBOOT)
		m = "the guest reset (mvm stop, or a reboot inside the guest)";

	/* JSON-escape the message: it may quote the guest's console. */
	for (size_t i = 0; m[i] && j < sizeof(msg) - 2; i++) {
		unsigned char ch = (unsigned char)m[i];

		if (ch == '"' || ch == '\\')
			msg[j++] = '\\';
		msg[j++] = ch < 0x20 ? ' ' : (char)ch;
	}
	msg[j] = 0;
	snprintf(fields, sizeof(fields), "\"outcome\":\"%s\",\"message\":\"%s\"",
		 r->outcome <= VM_ERROR ? names[r->outcome] : "unknown", msg);
	sb_event(name, "stopped", fields);
}

/* After vm_create: the checkpoint manager, and a pending restore's state. */
static int snap_setup(struct vm *vm, const struct vm_config *vc, const struct vm_disk *base,
		      struct vm_result *res)
{
	char dir[PATH_MAX];
	int ret;

	ret = snap_mgr_init(vm, base ? base->path : "", base ? base->format : NULL,
			    base ? base->backing_root : NULL);
	if (ret || !vc->restore_mem)
		return ret;
	ret = snap_restore_pending(dir, sizeof(dir));
	if (!ret)
		ret = snap_restore_state(vm, dir, res->message, sizeof(res->message));
	if (!ret)
		unlink(SNAP_RESTORE_FILE);	/* restored: a later start boots afresh */
	return ret;
}

int sb_vmm_serve(const char *name, struct vm_config *vc, const struct vm_disk *base, int cpu_quota,
		 struct vm_result *res, uint64_t *guest_kib)
{
	struct sb_api *api = NULL;
	struct vm *vm = calloc(1, sizeof(*vm));
	int ret;

	memset(res, 0, sizeof(*res));
	if (!vm) {
		snprintf(res->message, sizeof(res->message), "out of memory");
		res->outcome = VM_ERROR;
		return -ENOMEM;
	}
	vc->add_devices = vm_devices_create;
	/* A forbidden system call is reported where `mvm logs` looks. */
	confine_seccomp_report_to(vc->stdout_fd);
	ret = vm_create(vm, vc, res);
	if (!ret)
		ret = snap_setup(vm, vc, base, res);
	if (!ret)
		ret = sb_api_start(vm, name, "api.sock", &api);
	if (ret) {
		if (!res->message[0])
			snprintf(res->message, sizeof(res->message), "%s", strerror(-ret));
		res->outcome = VM_ERROR;
		outcome_event(name, res);
		goto out;
	}
	/* Set up and single-threaded: confine, then vm_run adds the filters. */
	sb_confine(name, vc, cpu_quota);
	sb_test_attack_arm(vm, vc->stdout_fd);
	sb_event(name, "started", "");
	vm_run(vm, res);
	if (guest_kib)
		*guest_kib = vm_guest_resident_kib(vm);
	outcome_event(name, res);
	sb_api_stop(api);
out:
	snap_mgr_free(vm);
	vm_destroy(vm);
	free(vm);
	return ret;
}

static int run_vmm(const char *name, struct sb_config *c)
{
	static char kernel[PATH_MAX], initrd[PATH_MAX], base_dir[PATH_MAX];
	struct vm_config vc;
	struct vm_disk base;
	struct vm_result res;
	char err[512] = "";
	int log_fd = open("console.log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	int ret = -ENOMEM;

	if (log_fd < 0)
		return -errno;
	ret = build_config(c, &vc, log_fd, kernel, initrd, base_dir, err, sizeof(err));
	base = (struct vm_disk){ .path = c->disk, .format = c->disk[0] ? c->disk_format : NULL,
				 .backing_root = base_dir[0] ? base_dir : NULL };
	if (ret)
		cli_err("vmm", "%s", err);
	else if ((ret = sb_vmm_serve(name, &vc, &base, c->cpu_quota, &res, NULL)))
		cli_err("vmm", "%s", res.message);
	close(log_fd);
	return ret;
}

static int chdir_state(const char *name)
{
	char dir[PATH_MAX];

	return sb_path(name, NULL, dir, sizeof(dir)) || chdir(dir) ? -1 : 0;
}

int sb_vmm_main(const char *name)
{
	struct sb_config c;
	int ret;

	/* Started by create/start with 0-2 only; a failure is reported, not fatal
	 * (the seccomp filter, installed later, does not depend on it). */
	ret = confine_hygiene(NULL, 0);
	if (ret)
		cli_err("vmm", "process hygiene: %s", strerror(-ret));
	if (chdir_state(name) || sb_config_load(name, &c)) {
		cli_err("vmm", "cannot load the sandbox %s", name);
		return -ENOENT;
	}
	ret = sb_vmm_write_pid();
	if (!ret)
		ret = run_vmm(name, &c);
	/* A clean end removes the pid file; one left behind means we crashed. */
	unlink("pid");
	sb_config_free(&c);
	return ret;
}
