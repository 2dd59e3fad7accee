/* `mvm create`'s runtime: a new sandbox's state directory, disk, config and policy, booted. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/start_trace.h"
#include "common/cli_util.h"
#include "images/image_overlay.h"
#include "tools/sandbox/baseline.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_create.h"
#include "tools/sandbox/template.h"
#include "tools/sandbox/sandbox_disk.h"
#include "tools/sandbox/sandbox_logs.h"
#include "tools/sandbox/sandbox_policy.h"

static int make_disk(struct sb_create *o, const char *dir)
{
	char dst[PATH_MAX + 16], err[PATH_MAX + 128] = "";
	struct image_base base;
	int ret;

	snprintf(o->c.disk, sizeof(o->c.disk), "%s", o->image ? "root.qcow2" : "data.img");
	snprintf(o->c.disk_format, sizeof(o->c.disk_format), "%s",
		 o->image ? IMAGE_OVERLAY_FORMAT : "raw");
	snprintf(dst, sizeof(dst), "%s/%s", dir, o->c.disk);
	if (o->image) {
		/* The shared base is never written: the overlay takes every write. */
		ret = image_base_resolve(o->image, &base, err, sizeof(err));
		if (!ret) {
			snprintf(o->c.image, sizeof(o->c.image), "%s", base.path);
			o->c.root_on_disk = true;
			ret = image_overlay_create(dst, &base, err, sizeof(err));
		}
	} else {
		ret = sb_disk_create(dst, o->c.disk_size, err, sizeof(err));
	}
	if (ret)
		cli_err("create", "%s", err);
	return ret;
}

static int copy_in(struct sb_create *o)
{
	for (int i = 0; i < o->ncopies; i++) {
		char *colon = strrchr(o->copies[i], ':');

		*colon = 0;
		/* Records the baseline (manifest + contents) that mvm diff compares with. */
		if (baseline_copy_in(o->c.name, o->copies[i], colon + 1))
			return -EIO;
	}
	return 0;
}

/* sb_start's @err without its pointer to `mvm logs`: the log goes (discard). */
static const char *no_logs_hint(char *err)
{
	char *hint = strstr(err, " (see mvm logs ");

	if (hint)
		*hint = 0;
	return err;
}

/*
 * A create that failed after the state directory existed: say what the
 * console said last (the log goes with it), stop whatever runs and remove
 * it all (state directory with its disk overlay, sockets and logs, the
 * cgroup), so the name is free again and nothing needs removing by hand.
 */
static void discard(const char *name, const char *said)
{
	char tail[2048];
	size_t n;

	sb_logs_tail(name, 1536, tail, sizeof(tail));
	n = strlen(tail);
	/* Not twice: a log that is only the VMM's last words, already said. */
	if (n && !(strlen(said) == n - (tail[n - 1] == '\n') && !strncmp(tail, said, strlen(said))))
		fprintf(stderr, "mvm create: the end of %s's console:\n%s%s", name, tail,
			tail[n - 1] == '\n' ? "" : "\n");
	if (sb_stop(name, 5)) {
		cli_err("create", "could not stop the failed sandbox %s: mvm rm -f %s", name, name);
		return;
	}
	baseline_remove(name);
	if (sb_remove_state(name))
		cli_err("create", "could not remove all of the failed sandbox %s: mvm rm -f %s", name, name);
}

static int create_from_template(struct sb_create *o)
{
	struct sb_template_start t = { .name = o->c.name, .tpl = o->template_name, .net = &o->net,
				       .env = o->c.env, .nenv = o->c.nenv,
				       .cpu_quota = o->c.cpu_quota, .expires = o->c.expires,
				       .owner = o->c.owner[0] ? o->c.owner : NULL };
	char err[1024] = "";
	int ret = sb_template_start(&t, err, sizeof(err));

	if (ret < 0)
		cli_err("create", "%s", err);
	else if (ret)
		cli_err("create", "%s from %s did not start: %s", o->c.name, o->template_name,
			no_logs_hint(err));
	if (ret < 0)
		return -1;	/* nothing was made (or the name was another sandbox's) */
	if (ret || copy_in(o)) {
		discard(o->c.name, ret ? err : "");
		return -1;
	}
	return 0;
}

int sb_create(struct sb_create *o)
{
	char dir[PATH_MAX], err[PATH_MAX + 256] = "";
	struct timespec t;
	int ret;

	/* A state root that cannot hold the VMM's sockets fails here, named,
	 * before anything exists (a 9p or network MVM_STATE_DIR). */
	if (sb_prepare_root(err, sizeof(err))) {
		cli_err("create", "%s", err);
		return -1;
	}
	start_trace("create: root ready");
	if (o->template_name)
		return create_from_template(o);
	ret = sb_mkdir(o->c.name, dir, sizeof(dir));
	if (ret) {
		cli_err("create", ret == -EEXIST ? "a sandbox named %s already exists" :
			"cannot create the state directory of %s", o->c.name);
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &t);
	o->c.created = (double)t.tv_sec;
	o->c.cid = 3;
	if (sb_config_new_mac(&o->c) || make_disk(o, dir) || sb_config_save(&o->c) ||
	    (o->net.enabled && sb_policy_create(o->c.name, &o->net, err, sizeof(err)))) {
		char p[PATH_MAX + 16];

		if (err[0])
			cli_err("create", "%s", err);
		for (const char *f = "config.json\0" SB_POLICY_FILE "\0"; *f; f += strlen(f) + 1) {
			snprintf(p, sizeof(p), "%s/%s", dir, f);
			unlink(p);
		}
		snprintf(p, sizeof(p), "%s/%s", dir, o->c.disk);
		unlink(p);
		rmdir(dir);
		return -1;
	}
	sb_event(o->c.name, "created");
	ret = sb_start(o->c.name, sb_self_exe(), sb_start_timeout(), err, sizeof(err));
	if (ret)
		cli_err("create", "%s did not start: %s", o->c.name, no_logs_hint(err));
	if (ret || copy_in(o)) {
		discard(o->c.name, ret ? err : "");
		return -1;
	}
	return 0;
}
