/* Namespaces for a VMM: other sandboxes out of sight. */
#ifndef MVM_CONFINE_NAMESPACES_H
#define MVM_CONFINE_NAMESPACES_H

#define CONFINE_NS_USER 1
#define CONFINE_NS_MOUNT 2
#define CONFINE_NS_IPC 4
#define CONFINE_NS_NET 8
#define CONFINE_NS_PID 16	/* vmm/confine/pidns.h */

/*
 * unshare(CLONE_NEWUSER | @flags) for an unprivileged caller (single-
 * threaded): the user maps to itself inside, so files it makes keep its uid
 * and gid; the parent-death signal and dumpable flag are kept. 0; 1 where
 * the kernel refuses (nothing changed); -errno if the maps failed.
 */
int confine_userns(int flags);

/*
 * Move the calling process (single-threaded: unshare refuses otherwise)
 * into new user, mount, IPC and network namespaces, unprivileged (the user
 * maps to itself; the network namespace is empty: only a loopback that is
 * down, so call it after everything that needs the host's network is set
 * up, e.g. the network helper started and the host's addresses read), and
 * hide @root (the directory of all sandboxes' state) behind an empty
 * read-only tmpfs in which only @own (a directory inside @root, which must
 * be the current directory) is bound back at its path. Other sandboxes'
 * api.sock and files are then gone for this process, whatever Landlock's
 * version. @have: the CONFINE_NS_* already made for this process and kept
 * (confine_pidns_enter(): its own user namespace, with the capabilities to
 * make the rest, and mount and IPC namespaces shared with the network
 * helper, which then loses sight of @root too); 0 for none. Returns the
 * CONFINE_NS_* now in force (0 where user namespaces are not allowed:
 * nothing changed), or -errno if the mounts failed after the namespaces
 * were made.
 */
int confine_namespaces(const char *root, const char *own, int have);

#endif
