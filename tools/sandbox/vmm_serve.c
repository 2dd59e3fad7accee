/*
 * The VMM process of one sandbox (`mvm vmm NAME`, started by create/start as
 * a daemon; and `mvm run`'s child). Runs in the sandbox's state directory, so its
 * sockets have short relative names; lives until the guest powers off or
 * the control API says shutdown.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/start_trace.h"
#include "common/cli_util.h"
#include "common/events.h"
#include "common/fatal_signal.h"
#include "common/rotlog.h"
#include "vmm/confine/hygiene.h"
#include "vmm/confine/pidns.h"
#include "vmm/confine/seccomp_filter.h"
#include "tools/sandbox/sandbox.h"
#include "images/image_overlay.h"
#include "tools/sandbox/sandbox_api.h"
#include "tools/sandbox/sandbox_confine.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/sandbox/sandbox_vm_config.h"
#include "tools/sandbox/sandbox_vmm.h"
#include "tools/sandbox/sb_seal.h"
#include "tools/sandbox/test_attack.h"
#include "tools/sandbox/vm_devices.h"
#include "snapshots/checkpoint.h"
#include "snapshots/disk_layers.h"
#include "snapshots/snapshot_dir.h"
#include "vmm/vm.h"

int sb_vmm_write_pid(void)
{
	char buf[32];
	int fd = open("pid.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), n;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)confine_pidns_self());
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return rename("pid.tmp", "pid") ? -errno : 0;
}

cJSON *sb_stopped_event(const struct vm_result *r)
{
	static const char *names[] = { "exited", "signaled", "panic", "reboot", "error" };
	cJSON *ev = event_new("stopped", 0);
	const char *m = r->message;
	char msg[sizeof(r->message)];
	size_t i;

	/* In a sandbox nothing reports an exit status: a reset is the normal
	 * end. A triple fault is not, and keeps its own message. */
	if (r->outcome == VM_REBOOT && !strstr(m, "triple-faulted"))
		m = "the guest reset (mvm stop, or a reboot inside the guest)";
	/* The message may quote the guest's console: no control characters
	 * (escape sequences) reach a terminal that prints it. */
	for (i = 0; m[i] && i < sizeof(msg) - 1; i++)
		msg[i] = (unsigned char)m[i] < 0x20 || m[i] == 0x7f ? ' ' : m[i];
	msg[i] = 0;
	cJSON_AddStringToObject(ev, "outcome", r->outcome <= VM_ERROR ? names[r->outcome] : "unknown");
	cJSON_AddStringToObject(ev, "message", msg);
	return ev;
}

size_t sb_console_mark(char *buf, size_t cap, uint64_t ms, const struct vm_result *r)
{
	char when[40];
	cJSON *ev = r ? sb_stopped_event(r) : NULL;
	int n;

	event_time_format(ms, when, sizeof(when));
	if (!r)
		n = snprintf(buf, cap, "mvm: %s VMM started: the guest boots\n", when);
	else if (ev)
		n = snprintf(buf, cap, "mvm: %s guest stopped (%s): %s\n", when,
			     cJSON_GetObjectItem(ev, "outcome")->valuestring,
			     cJSON_GetObjectItem(ev, "message")->valuestring);
	else
		n = snprintf(buf, cap, "mvm: %s guest stopped\n", when);
	cJSON_Delete(ev);
	if (n < 0 || !cap)
		return 0;
	if ((size_t)n >= cap && cap > 1)
		buf[cap - 2] = '\n';	/* cut, still a whole line */
	return (size_t)n >= cap ? cap - 1 : (size_t)n;
}

/* One line of the VMM's own into console.log (best effort). */
static void console_mark(struct rotlog *log, const struct vm_result *r)
{
	char line[sizeof(r->message) + 128];
	size_t n = sb_console_mark(line, sizeof(line), event_now_ms(), r);

	if (n)
		(void)rotlog_write(log, line, n);
}

static void outcome_event(const char *name, const struct vm_result *r)
{
	sb_event_put(name, sb_stopped_event(r));
}

/* After vm_create: the checkpoint manager, and a pending restore's state. */
static int snap_setup(struct vm *vm, const struct vm_config *vc, const struct vm_disk *base,
		      struct vm_result *res)
{
	char dir[PATH_MAX];
	int ret;

	ret = snap_mgr_init(vm, base ? base->path : "", base ? base->format : NULL,
			    base ? base->backing_file : NULL);
	if (ret || !vc->restore_mem)
		return ret;
	ret = snap_restore_pending(dir, sizeof(dir));
	if (!ret)
		ret = snap_restore_state(vm, dir, res->message, sizeof(res->message));
	if (!ret) {
		unlink(SNAP_RESTORE_FILE);	/* restored: a later start boots afresh */
		unlink(SNAP_RESTORE_FILE SB_MAC_SUFFIX);	/* and its seal: no replay */
	}
	return ret;
}

/* `mvm vmm --ready-fd`: told once everything is set up (sb_start waits for it). */
static int ready_fd = -1;

static void say_ready(void)
{
	if (ready_fd < 0)
		return;
	(void)!write(ready_fd, "R", 1);
	close(ready_fd);
	ready_fd = -1;
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
	/* A forbidden system call, or a crash, is reported where `mvm logs`
	 * looks. */
	confine_seccomp_report_to(vc->stdout_fd);
	fatal_signal_report(vc->stdout_fd, "mvm vmm");
	ret = vm_create(vm, vc, res);
	start_trace("vmm: vm_create");
	if (!ret)
		ret = snap_setup(vm, vc, base, res);
	start_trace("vmm: snap_setup");
	if (!ret)
		ret = sb_api_start(vm, name, "api.sock", &api);
	start_trace("vmm: api started");
	if (ret) {
		if (!res->message[0])
			snprintf(res->message, sizeof(res->message), "%s", strerror(-ret));
		res->outcome = VM_ERROR;
		outcome_event(name, res);
		goto out;
	}
	/* Set up and single-threaded: confine, then vm_run adds the filters. */
	ret = sb_confine(name, vm, vc, cpu_quota, res->message, sizeof(res->message));
	start_trace("vmm: confined");
	if (ret) {
		res->outcome = VM_ERROR;
		outcome_event(name, res);
		sb_api_stop(api);
		goto out;
	}
	sb_test_attack_arm(vm, vc->stdout_fd);
	sb_event(name, "started");
	/* The sockets listen: a connection made now waits for the guest. */
	say_ready();
	vm_run(vm, res);
	start_trace("vmm: guest ended");
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

/* The VMM's stderr, if it is console.log (the daemon's), follows its rotation. */
static void follow_stderr(struct rotlog *log)
{
	struct stat a, b;

	if (!fstat(STDERR_FILENO, &a) && !fstat(log->fd, &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		log->mirror_fd = STDERR_FILENO;
}

int sb_console_log_open(struct rotlog *log)
{
	int ret = rotlog_open(log, "console.log", rotlog_max_from_env(), NULL);

	if (!ret)
		follow_stderr(log);
	return ret;
}

static int run_vmm(const char *name, struct sb_config *c)
{
	struct sb_vm_bufs *bufs = calloc(1, sizeof(*bufs));
	struct vm_config vc;
	struct vm_disk base;
	struct vm_result res;
	struct rotlog log;
	char err[512] = "";
	int ret;

	if (!bufs)
		return -ENOMEM;
	ret = sb_console_log_open(&log);
	if (ret) {
		free(bufs);
		return ret;
	}
	/* console.log outlives restarts, and a quiet guest kernel prints
	 * nothing while it boots: without a line of the VMM's own at each
	 * start and end, the last boot's "reboot: Restarting system" (its
	 * mvm stop) reads as this boot's reset (issue 26). */
	console_mark(&log, NULL);
	ret = sb_vm_config(c, bufs, &vc, err, sizeof(err));
	start_trace("vmm: vm config");
	vc.log = &log;
	base = (struct vm_disk){ .path = c->disk, .format = c->disk[0] ? c->disk_format : NULL,
				 .backing_file = c->image[0] && bufs->base_dir[0] ? c->image : NULL };
	if (ret)
		cli_err("vmm", "%s", err);
	else if ((ret = sb_vmm_serve(name, &vc, &base, c->cpu_quota, &res, NULL)) ||
		 res.outcome == VM_ERROR || res.outcome == VM_PANIC ||
		 strstr(res.message, "triple-faulted"))
		cli_err("vmm", "%s", res.message);	/* where `mvm logs` and create look */
	if (!ret)
		console_mark(&log, &res);
	rotlog_close(&log);
	free(bufs);
	return ret;
}

static int chdir_state(const char *name)
{
	char dir[PATH_MAX];

	return sb_path(name, NULL, dir, sizeof(dir)) || chdir(dir) ? -1 : 0;
}

int sb_vmm_main(const char *name, int ready)
{
	struct sb_config c;
	char err[512] = "";
	int ret;

	/* Started by create/start with 0-2 and the readiness pipe only; a
	 * failure is reported, not fatal (the seccomp filter, installed later,
	 * does not depend on it). */
	start_trace("vmm: main");
	ready_fd = ready >= 0 && fcntl(ready, F_SETFD, FD_CLOEXEC) == 0 ? ready : -1;
	ret = confine_hygiene(&ready_fd, ready_fd >= 0);
	if (ret)
		cli_err("vmm", "process hygiene: %s", strerror(-ret));
	/* From here on we are the VMM in its own PID namespace (or the
	 * process that waits for it, which never returns from this call). */
	ret = confine_pidns_enter();
	start_trace_hold();
	start_trace("vmm: pidns entered");
	if (ret < 0) {
		cli_err("vmm", "PID namespace: %s", strerror(-ret));
		return ret;
	}
	/* What config.json and restore-from name is opened next, before any
	 * confinement: only as the CLI sealed them, never as a VMM left them. */
	if (chdir_state(name) || (ret = sb_seal_check(name, err, sizeof(err)))) {
		cli_err("vmm", "%s", err[0] ? err : "cannot find the sandbox's state directory");
		return ret ? ret : -ENOENT;
	}
	if (sb_config_load(name, &c)) {
		cli_err("vmm", "cannot load the sandbox %s", name);
		return -ENOENT;
	}
	ret = sb_vmm_write_pid();
	start_trace("vmm: config, pid written");
	if (!ret)
		ret = run_vmm(name, &c);
	/* A clean end removes the pid file; one left behind means we crashed. */
	unlink("pid");
	sb_config_free(&c);
	return ret;
}
