/* config.json of snapshots, forks and templates (tools/sandbox/snap_config.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/image_overlay.h"
#include "snapshots/snap_base.h"
#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/snap_config.h"
#include "vmm/vm.h"

int sb_config_base_ok(const struct sb_config *c, const struct snap_dir_info *in, char *err,
		      size_t errlen)
{
	bool overlay = !strcmp(c->disk_format, IMAGE_OVERLAY_FORMAT);

	if (in->has_base ? strcmp(c->image, in->base.path) || !overlay || !c->root_on_disk :
			   c->image[0] || overlay) {
		snprintf(err, errlen, "its configuration and its state disagree about the base "
			 "image (edited?): refusing it");
		return -EINVAL;
	}
	return 0;
}

int sb_config_refs_ok(const struct sb_config *c, char *err, size_t errlen)
{
	const char *what = c->kernel[0] ? "kernel" : c->initrd[0] ? "initrd" : NULL;

	if (what) {
		snprintf(err, errlen, "its %s %.200s was given by path: a snapshot or template "
			 "references no file outside its directory but an image of the store",
			 what, c->kernel[0] ? c->kernel : c->initrd);
		return -EINVAL;
	}
	if (c->ndisks) {
		snprintf(err, errlen, "its disk %.200s was given by path (mvm run --disk): a "
			 "snapshot or template holds only the sandbox's own disk", c->disks[0].path);
		return -EINVAL;
	}
	return 0;
}

int sb_snap_config_ok(const struct sb_config *c, const struct snap_dir_info *in, char *err,
		      size_t errlen)
{
	char why[400];
	int ret;

	if (c->mem != in->ram_size || c->cpus != in->ncpus) {
		snprintf(err, errlen, "its configuration does not match its state (memory or vCPUs)");
		return -EINVAL;
	}
	if (c->net_off == in->has_net) {
		snprintf(err, errlen, "its configuration and its state disagree about the network "
			 "device (edited?): refusing it");
		return -EINVAL;
	}
	ret = sb_config_base_ok(c, in, err, errlen);
	if (!ret && (ret = sb_config_refs_ok(c, why, sizeof(why))))
		snprintf(err, errlen, "%s (edited?): refusing it", why);
	return ret;
}

void sb_snap_config_net(struct sb_config *c, const struct vm_net *net)
{
	for (int i = 0; i < c->npublish; i++)
		free(c->publish[i]);
	c->npublish = 0;
	for (int i = 0; net && i < net->nr_publish && i < SB_MAX_PUBLISH; i++)
		c->publish[c->npublish++] = strdup(net->publish[i]);
	snprintf(c->dns_server, sizeof(c->dns_server), "%s",
		 net && net->dns_server ? net->dns_server : "");
}

int sb_snap_source_ok(const char *name, const char *what, char *err, size_t errlen)
{
	struct sb_config c;
	char why[600];
	int ret = sb_config_load(name, &c);

	if (ret) {
		snprintf(err, errlen, "%s: config.json: %s", name, strerror(-ret));
		return ret;
	}
	if (c.image[0] && (ret = snap_base_in_store(c.image, why, sizeof(why))))
		snprintf(err, errlen, "cannot %s %s: %s; to %s it, create the sandbox with "
			 "--image NAME of an image in the store", what, name, why, what);
	else if ((ret = sb_config_refs_ok(&c, why, sizeof(why))))
		snprintf(err, errlen, "cannot %s %s: %s; to %s it, create the sandbox without "
			 "it", what, name, why, what);
	sb_config_free(&c);
	return ret;
}
