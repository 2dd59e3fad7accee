/* Confining a sandbox's VMM (tools/sandbox/sandbox_confine.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/start_trace.h"
#include "common/events.h"
#include "common/cli_util.h"
#include "common/log.h"
#include "common/file_io.h"
#include "devices/virtio_devices.h"
#include "vmm/confine/caps.h"
#include "vmm/confine/landlock.h"
#include "vmm/confine/namespaces.h"
#include "vmm/confine/pidns.h"
#include "vmm/confine/seccomp_filter.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_cgroup.h"
#include "tools/sandbox/sandbox_confine.h"

#define MAX_RO (2 + 3 * VM_MAX_DISKS + 1)

/* What the VMM may still read once running: boot files, disks, bases. */
static void read_only_paths(const struct vm_config *vc, const char **ro)
{
	int n = 0;

	if (vc->kernel_path)
		ro[n++] = vc->kernel_path;
	if (vc->initrd_path)
		ro[n++] = vc->initrd_path;
	for (int i = 0; i < vc->nr_disks && i < VM_MAX_DISKS; i++) {
		const struct vm_disk *d = &vc->disks[i];

		if (d->path)
			ro[n++] = d->path;
		if (d->backing_root)
			ro[n++] = d->backing_root;
		if (d->backing_file)
			ro[n++] = d->backing_file;
	}
	ro[n] = NULL;
}

/* The disk files the guest may write (NULL-terminated). */
static void writable_disks(const struct vm_config *vc, const char **wd)
{
	int n = 0;

	for (int i = 0; i < vc->nr_disks && i < VM_MAX_DISKS; i++)
		if (vc->disks[i].path && !vc->disks[i].read_only)
			wd[n++] = vc->disks[i].path;
	wd[n] = NULL;
}

static int hide_others(const char *name)
{
	char root[PATH_MAX], real[PATH_MAX], own[PATH_MAX];

	if (sb_root(root, sizeof(root)) || !realpath(root, real) || !getcwd(own, sizeof(own)))
		return -ENOENT;
	(void)name;
	return confine_namespaces(real, own, confine_pidns_flags());
}

/* The "confined" event: confine.json's fields, in the event schema's types
 * (common/events.c): namespaces joined, landlock 0 for none. */
static void confined_event(const char *name, const cJSON *o)
{
	cJSON *ev = event_new("confined", 0), *it;
	char ns[64] = "";

	cJSON_ArrayForEach(it, o) {
		if (!strcmp(it->string, "helper"))
			continue;	/* helper_pid says it; the rest is in confine.json */
		if (cJSON_IsArray(it)) {
			const cJSON *e;

			cJSON_ArrayForEach(e, it)
				if (cJSON_IsString(e))
					snprintf(ns + strlen(ns), sizeof(ns) - strlen(ns), "%s%s",
						 ns[0] ? "," : "", e->valuestring);
			cJSON_AddStringToObject(ev, it->string, ns);
		} else if (cJSON_IsFalse(it) && !strcmp(it->string, "landlock")) {
			cJSON_AddNumberToObject(ev, it->string, 0);
		} else {
			cJSON_AddItemToObject(ev, it->string, cJSON_Duplicate(it, 1));
		}
	}
	sb_event_put(name, ev);
}

/* The CONFINE_NS_* in @ns as the reports name them. */
static void ns_names(cJSON *list, int ns)
{
	static const struct {
		int flag;
		const char *name;
	} names[] = { { CONFINE_NS_USER, "user" }, { CONFINE_NS_MOUNT, "mount" },
		      { CONFINE_NS_IPC, "ipc" }, { CONFINE_NS_NET, "net" },
		      { CONFINE_NS_PID, "pid" } };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ns & names[i].flag)
			cJSON_AddItemToArray(list, cJSON_CreateString(names[i].name));
}

/* The network helper (mvm-net): its pid (the host's) and the Landlock ABI
 * it reported; seccomp and no_new_privs come from its /proc status when
 * read. It shares the VMM's namespaces of @ns but the network. */
static void helper_report(cJSON *o, struct vm *vm, pid_t pid, int ns)
{
	int ll = 0;
	cJSON *h;

	virtio_net_helper_pid(vm, &ll);
	if (!pid) {
		cJSON_AddNullToObject(o, "helper_pid");	/* no network device */
		cJSON_AddNullToObject(o, "helper");
		return;
	}
	cJSON_AddNumberToObject(o, "helper_pid", pid);
	h = cJSON_AddObjectToObject(o, "helper");
	cJSON_AddNumberToObject(h, "pid", pid);
	if (ll > 0)
		cJSON_AddNumberToObject(h, "landlock", ll);
	else
		cJSON_AddFalseToObject(h, "landlock");
	ns_names(cJSON_AddArrayToObject(h, "namespaces"), ns & ~CONFINE_NS_NET);
}

static void add_str_or_null(cJSON *o, const char *key, const char *v)
{
	if (v[0])
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void write_report(const char *name, struct vm *vm, pid_t helper, int ns, int abi,
			 bool caps_none, const struct sb_cg_result *cg)
{
	cJSON *o = cJSON_CreateObject(), *nsl = cJSON_AddArrayToObject(o, "namespaces");
	char *s;

	cJSON_AddNumberToObject(o, "vmm_pid", confine_pidns_self());
	/* The helper shares the namespaces made before it started. */
	helper_report(o, vm, helper, ns & confine_pidns_flags());
	cJSON_AddStringToObject(o, "seccomp", confine_seccomp_log_mode() ? "log" : "trap");
	cJSON_AddBoolToObject(o, "no_new_privs", true);
	cJSON_AddStringToObject(o, "capabilities", caps_none ? "none" : "kept");
	if (abi > 0)
		cJSON_AddNumberToObject(o, "landlock", abi);
	else
		cJSON_AddFalseToObject(o, "landlock");
	ns_names(nsl, ns);
	add_str_or_null(o, "cgroup", cg->own);
	/* Where it nests: the caller's cgroup, and why it has none of its own. */
	add_str_or_null(o, "cgroup_caller", cg->caller);
	add_str_or_null(o, "cgroup_note", cg->note);
	s = cJSON_PrintUnformatted(o);
	if (s && file_write_atomic(SB_CONFINE_FILE, s))
		log_warn("cannot write %s", SB_CONFINE_FILE);
	confined_event(name, o);
	free(s);
	cJSON_Delete(o);
}

int sb_confine(const char *name, struct vm *vm, const struct vm_config *vc, int cpu_quota,
	       char *err, size_t errlen)
{
	const char *ro[MAX_RO], *rw[] = { ".", NULL, NULL }, *wd[VM_MAX_DISKS + 1];
	char evdir[PATH_MAX];
	struct sb_cg_result *cg = calloc(1, sizeof(*cg));
	int ns, abi, cg_ret, caps, ret;
	pid_t helper;

	/* `mvm run --events FILE`: the denials go to a file the user named,
	 * outside the state directory; its directory stays writable. */
	if (vc->net.events_path && vc->net.events_path[0] == '/' &&
	    snprintf(evdir, sizeof(evdir), "%s", vc->net.events_path) < (int)sizeof(evdir)) {
		*strrchr(evdir, '/') = 0;
		rw[1] = evdir[0] ? evdir : "/";
	}

	/* First the cgroup (the guest's RAM is charged as it is touched, from
	 * now on), while the cgroup tree is still in sight. */
	writable_disks(vc, wd);
	if (!cg)
		return -ENOMEM;
	cg_ret = sb_cgroup_enter(name, vc->mem_size, wd, cpu_quota, virtio_net_helper_pid(vm, NULL),
				 cg);
	if (cg_ret)
		log_info("cgroup: %s", cg->note);
	start_trace("confine: cgroup");
	/* The host's pids, while the host's /proc is still ours to read. */
	helper = confine_pidns_host_pid(virtio_net_helper_pid(vm, NULL));
	confine_pidns_seal();
	ns = hide_others(name);
	if (ns < 0)
		log_warn("namespaces: %s (other sandboxes stay visible)", strerror(-ns));
	else if (!ns)
		log_info("user namespaces are not allowed here: other sandboxes stay visible");
	read_only_paths(vc, ro);
	abi = confine_landlock(ro, rw);
	start_trace("confine: landlock");
	if (abi < 0)
		log_warn("landlock: %s", strerror(-abi));
	else if (!abi)
		log_info("this kernel has no Landlock: file access is not restricted");
	/* Made before and in force whatever happened since (the mount
	 * namespace hides nothing unless hide_others() succeeded). */
	if (ns <= 0)
		ns = confine_pidns_flags() & ~CONFINE_NS_MOUNT;
	/* Namespaces, mounts, cgroup and Landlock are done: no capability is
	 * needed from here on. Still single-threaded (the threads vm_run makes
	 * inherit none), and before the filters, which forbid capset and prctl. */
	caps = confine_caps_drop();
	start_trace("confine: capabilities");
	if (caps && (ns & CONFINE_NS_USER))
		log_warn("capabilities: %s: some are kept", strerror(-caps));
	else if (caps)
		log_info("capabilities: the bounding set stays full (no user namespace: %s)",
			 strerror(-caps));
	/* The helper set itself up meanwhile; the report names its Landlock. */
	ret = virtio_net_ready(vm, err, errlen);
	start_trace("confine: helper ready");
	if (!ret)
		write_report(name, vm, helper, ns, abi, !caps, cg);
	free(cg);
	return ret;
}

/* "Seccomp:\t2" and the like from /proc/PID/status; -1 if absent. */
static int status_field(const char *text, const char *field)
{
	const char *p = text;
	size_t n = strlen(field);

	while ((p = strstr(p, field))) {
		if ((p == text || p[-1] == '\n') && p[n] == ':')
			return atoi(p + n + 1);
		p += n;
	}
	return -1;
}

/* seccomp, no_new_privs and capabilities of @o's process from its
 * /proc/PID/status text: "none" when each of its five sets is empty. */
static void kernel_word(cJSON *o, const char *status, bool log_mode)
{
	int seccomp = status_field(status, "Seccomp");

	cJSON_DeleteItemFromObject(o, "seccomp");
	cJSON_DeleteItemFromObject(o, "no_new_privs");
	cJSON_DeleteItemFromObject(o, "capabilities");
	if (seccomp == 2)
		cJSON_AddStringToObject(o, "seccomp", log_mode ? "log" : "filter");
	else
		cJSON_AddFalseToObject(o, "seccomp");
	cJSON_AddBoolToObject(o, "no_new_privs", status_field(status, "NoNewPrivs") == 1);
	cJSON_AddStringToObject(o, "capabilities", confine_caps_none(status) == 1 ? "none" : "kept");
}

/* The helper object: what the kernel says of it, or null once it is gone. */
static void helper_protections(cJSON *o, bool log_mode)
{
	cJSON *h = cJSON_GetObjectItem(o, "helper"), *pid = cJSON_GetObjectItem(h, "pid");
	char st[64], *status = NULL;

	if (cJSON_IsObject(h) && cJSON_IsNumber(pid) && pid->valueint > 1) {
		snprintf(st, sizeof(st), "/proc/%d/status", pid->valueint);
		status = file_read_text(st, 8191);
	}
	if (status && strncmp(status, "Name:\tmvm-net\n", 14)) {
		free(status);	/* that pid is another process's now */
		status = NULL;
	}
	if (!status) {
		cJSON_DeleteItemFromObject(o, "helper");
		cJSON_AddNullToObject(o, "helper");
		return;
	}
	kernel_word(h, status, log_mode);
	free(status);
}

cJSON *sb_protections(const char *name, pid_t pid)
{
	char p[PATH_MAX], st[64], *status, *rep;
	cJSON *o = NULL, *mine;
	bool log_mode;

	if (pid <= 0)
		return NULL;
	snprintf(st, sizeof(st), "/proc/%d/status", (int)pid);
	status = file_read_text(st, 8191);
	if (!status)
		return NULL;
	rep = sb_path(name, SB_CONFINE_FILE, p, sizeof(p)) ? NULL : file_read_text(p, 8191);
	mine = rep ? cJSON_Parse(rep) : NULL;
	o = cJSON_IsObject(mine) ? mine : cJSON_CreateObject();
	if (o != mine)
		cJSON_Delete(mine);
	log_mode = rep && strstr(rep, "\"seccomp\":\"log\"");
	kernel_word(o, status, log_mode);
	helper_protections(o, log_mode);
	if (!cJSON_GetObjectItem(o, "landlock"))
		cJSON_AddFalseToObject(o, "landlock");
	if (!cJSON_GetObjectItem(o, "namespaces"))
		cJSON_AddArrayToObject(o, "namespaces");
	if (!cJSON_GetObjectItem(o, "cgroup"))
		cJSON_AddNullToObject(o, "cgroup");
	if (!cJSON_GetObjectItem(o, "cgroup_caller"))
		cJSON_AddNullToObject(o, "cgroup_caller");
	if (!cJSON_GetObjectItem(o, "cgroup_note"))
		cJSON_AddNullToObject(o, "cgroup_note");
	if (!cJSON_GetObjectItem(o, "helper_pid"))
		cJSON_AddNullToObject(o, "helper_pid");
	cJSON_DeleteItemFromObject(o, "vmm_pid");
	cJSON_AddNumberToObject(o, "vmm_pid", pid);
	free(status);
	free(rep);
	return o;
}
