/*
 * What a snapshot, fork or template may take from its source's config.json,
 * and what a start from one (`mvm restore`, `mvm fork`, `mvm create` and
 * `mvm run --template`) takes from the copy in its directory. That copy is
 * hostile input like the rest of the directory: someone with the user's
 * rights may have edited it after it was written (a template's is sealed
 * only by a stat record, itself editable). So a start takes from it nothing
 * that makes the new sandbox's VMM open a host file the sealed record does
 * not cover (the state's layers and checksums, the one image-store base of
 * snapshots/snap_base.h), and nothing of its network: that is the new
 * sandbox's own. Field by field:
 *
 *   memory, cpus        must equal the state's
 *   image, disk_format, root_on_disk
 *                       must name exactly the state's base (or none)
 *   kernel, initrd      must be "" (make guest's): a file given by path is
 *                       nothing a snapshot can reference (refused)
 *   disks               must be none: `mvm run`'s further disks are host
 *                       files outside the snapshot (refused)
 *   disk                a plain file name in the state dir (sb_config_load)
 *   publish, dns_server the new sandbox's own options, never the copy's
 *   mac, name, created  the new sandbox's own
 *   net                 must match the state's devices (a NIC or none)
 *   env, cmdline, cid   kept: they reach only the guest (the attacker anyway)
 */
#ifndef MVM_SNAP_CONFIG_H
#define MVM_SNAP_CONFIG_H

#include <stddef.h>

struct sb_config;
struct snap_dir_info;
struct vm_net;

/* A snapshot's or template's config.json agrees with its state about the
 * image: the base the state references, exactly, as a root overlay; none
 * when it references none. The VMM then accepts that one file below the
 * sandbox's layers. 0 or -EINVAL with @err. Pure. */
int sb_config_base_ok(const struct sb_config *c, const struct snap_dir_info *in, char *err,
		      size_t errlen);

/* @c names no file a snapshot cannot hold or reference: no kernel or
 * initrd given by path, no further disk. 0 or -EINVAL with @err saying
 * which. Pure. */
int sb_config_refs_ok(const struct sb_config *c, char *err, size_t errlen);

/* The whole check of a start's copy @c against the state @in: memory and
 * vCPUs, the network device, the base (sb_config_base_ok), no other file
 * (sb_config_refs_ok). 0 or -EINVAL with @err. Pure. */
int sb_snap_config_ok(const struct sb_config *c, const struct snap_dir_info *in, char *err,
		      size_t errlen);

/* The new sandbox's own network settings in @c: published ports and DNS
 * server from @net (NULL: none, the host's resolver), never the copy's. */
void sb_snap_config_net(struct sb_config *c, const struct vm_net *net);

/*
 * Before sandbox @name is paused for a snapshot, fork or template (@what:
 * "snapshot", "fork", "make a template of"): everything the result will
 * reference can be referenced (its image in the image store, no kernel,
 * initrd or further disk given by path). 0, or -errno with @err naming the
 * fix.
 */
int sb_snap_source_ok(const char *name, const char *what, char *err, size_t errlen);

#endif
