/*
 * Confinement of the relay process (relay.h). It parses little, but it is
 * fed by the guest and by any local client, so it gets what the VMM gets
 * where it applies: process hygiene; user, mount, IPC and network
 * namespaces of its own in which its sandbox's state directory is the
 * root of the file system (read-only, nothing else mounted: no other
 * sandbox's api.sock, no user's agent or bus socket is there to connect
 * to, and abstract Unix sockets belong to the empty network namespace;
 * the listeners and the netlink socket it holds were made before, in the
 * host's network); Landlock (read only); no capability; a seccomp table
 * of its own (vmm/confine/seccomp_relay.c). A forbidden call ends the
 * relay with SIGSYS and a line in relay.log.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tools/sandbox/relay.h"
#include "vmm/confine/caps.h"
#include "vmm/confine/hygiene.h"
#include "vmm/confine/landlock.h"
#include "vmm/confine/namespaces.h"
#include "vmm/confine/seccomp_filter.h"

/* @dir becomes "/": bound onto itself (pivot_root wants a mount point),
 * entered by path (onto the new mount), then pivot_root(".", ".") stacks
 * the old root on top of it and the detach takes the old root away. */
static int root_is(const char *dir)
{
	unsigned long keep = 0;
	struct statvfs sv;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) || chdir(dir) ||
	    syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) || chdir("/"))
		return -errno;
	/* Read-only on top of Landlock; the atime flags must stay as they
	 * are (a user namespace may not change them), so they are repeated. */
	if (!statvfs("/", &sv))
		keep = (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
		       (sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) |
		       (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0);
	(void)mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV |
		    MS_NOEXEC | keep, NULL);
	return 0;
}

static int fail(char *err, size_t errlen, const char *what, int ret)
{
	snprintf(err, errlen, "%s: %s", what, strerror(-ret));
	return ret;
}

int relay_confine(const int *keep, int nkeep, const char *dir, bool *ns, char *err, size_t errlen)
{
	const char *ro[] = { ".", NULL }, *rw[] = { NULL };
	int ret = confine_hygiene(keep, nkeep), abi;

	*ns = false;
	if (ret)
		return fail(err, errlen, "process hygiene", ret);
	ret = confine_userns(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET);
	if (ret < 0)
		return fail(err, errlen, "user namespace", ret);
	if (ret == 0) {
		ret = root_is(dir);
		if (ret)
			return fail(err, errlen, "the state directory as root", ret);
		*ns = true;
	}
	abi = confine_landlock(ro, rw);
	if (abi < 0)
		return fail(err, errlen, "landlock", abi);
	/* Without a user namespace of its own an unprivileged process cannot
	 * empty its bounding set (it holds no capability anyway): only a
	 * relay that holds some must lose them all. */
	ret = confine_caps_drop();
	if (ret && *ns)
		return fail(err, errlen, "capabilities", ret);
	ret = confine_seccomp_thread(&sc_table_relay);
	return ret ? fail(err, errlen, "seccomp", ret) : 0;
}
