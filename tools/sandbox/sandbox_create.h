/* A new long-lived sandbox (`mvm create`). */
#ifndef MVM_SANDBOX_CREATE_H
#define MVM_SANDBOX_CREATE_H

#include "tools/sandbox/sandbox.h"
#include "vmm/vm.h"

#define SB_MAX_COPIES 64

struct sb_create {
	struct sb_config c;		/* name, cpus, mem, disk_size, kernel, env, network */
	struct vm_net net;		/* the rules for policy.json */
	const char *image;		/* NULL: initramfs and a /data disk */
	const char *template_name;	/* start from this template instead (tools/sandbox/template.h) */
	char *copies[SB_MAX_COPIES];	/* HOST:GUEST, recorded as diff's baseline */
	int ncopies;
};

/*
 * Make the state directory of @o->c.name (disk: an overlay on @o->image or
 * an empty /data disk; config.json; policy.json), log "created", boot it,
 * copy @o->copies in. 0, or -1 after a message under "create"; a failed
 * create leaves nothing behind (state directory, disk overlay, sockets,
 * cgroup): the end of its console is printed, then it is stopped and
 * removed.
 * With @o->template_name, the sandbox starts from that template instead:
 * the machine is the template's, the network policy and --env are @o's.
 */
int sb_create(struct sb_create *o);

#endif
