/* Namespaces (confine/namespaces.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "vmm/confine/namespaces.h"

/* The user stays itself inside: files it makes keep its uid and gid. */
static int map_self(uid_t uid, gid_t gid)
{
	char m[64];
	int ret = file_put_text("/proc/self/setgroups", "deny");

	snprintf(m, sizeof(m), "%u %u 1", (unsigned)uid, (unsigned)uid);
	if (!ret || ret == -ENOENT)
		ret = file_put_text("/proc/self/uid_map", m);
	snprintf(m, sizeof(m), "%u %u 1", (unsigned)gid, (unsigned)gid);
	return ret ? ret : file_put_text("/proc/self/gid_map", m);
}

static int hide_root(const char *root, const char *own)
{
	const char *leaf = own + strlen(root);

	if (strncmp(own, root, strlen(root)) || leaf[0] != '/' || strchr(leaf + 1, '/'))
		return -EINVAL;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mvm-hidden", root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=64k,nr_inodes=16,mode=0700"))
		return -errno;
	/* The current directory still is the real @own: bind it back. */
	if (mkdir(own, 0700) || mount("/proc/self/cwd", own, NULL, MS_BIND | MS_REC, NULL) ||
	    mount(NULL, root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL))
		return -errno;
	return 0;
}

int confine_userns(int flags)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	int ret, dumpable, deathsig = 0;

	/* New credentials can clear the parent-death signal (mvm run's VMM
	 * must die with its CLI): keep it. */
	prctl(PR_GET_PDEATHSIG, &deathsig, 0, 0, 0);
	if (unshare(CLONE_NEWUSER | flags))
		return 1;
	if (deathsig)
		prctl(PR_SET_PDEATHSIG, deathsig, 0, 0, 0);
	/* A non-dumpable process's /proc/self files belong to root: its own
	 * uid_map is writable only while it is dumpable again, briefly (one
	 * thread, nothing runs yet). */
	dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	ret = map_self(uid, gid);
	prctl(PR_SET_DUMPABLE, dumpable > 0 ? dumpable : 0, 0, 0, 0);
	return ret;
}

int confine_namespaces(const char *root, const char *own, int have)
{
	int flags = CLONE_NEWNET, ret;

	if (!(have & CONFINE_NS_MOUNT))
		flags |= CLONE_NEWNS;
	if (!(have & CONFINE_NS_IPC))
		flags |= CLONE_NEWIPC;
	/* In a user namespace of our own we hold its capabilities: the rest
	 * is made in it (the PID namespace belongs to it). */
	if (have & CONFINE_NS_USER)
		ret = unshare(flags) ? -errno : 0;
	else if ((ret = confine_userns(flags)) > 0)
		return 0;	/* not allowed here */
	if (!ret)
		ret = hide_root(root, own);
	return ret ? ret : have | CONFINE_NS_USER | CONFINE_NS_MOUNT | CONFINE_NS_IPC | CONFINE_NS_NET;
}
