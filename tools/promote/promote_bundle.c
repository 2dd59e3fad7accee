/* `mvm promote`'s bundle: checks, diff, report, published whole (promote_bundle.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli_util.h"
#include "common/dir_publish.h"
#include "common/fs_util.h"
#include "guest/agent/proto.h"
#include "tools/promote/promote_bundle.h"
#include "tools/promote/promote_report.h"
#include "tools/sandbox/fetch.h"
#include "tools/sandbox/sandbox.h"

static int write_file(int dfd, const char *file, const void *p, size_t n)
{
	int fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), ret;

	if (fd < 0)
		return -errno;
	ret = ap_write_all(fd, p, n);
	close(fd);
	return ret;
}

static int run_checks(struct promote_job *o, int dfd)
{
	struct sb_config c = { 0 };
	const char *cwd = o->workdir ? o->workdir : o->w.guest_root;
	int ret = 0;

	if (o->nchecks && mkdirat(dfd, "checks", 0755))
		return -errno;
	sb_config_load(o->name, &c);
	for (int i = 0; i < o->nchecks && !ret; i++) {
		struct check_result *r = &o->res[i];
		int fd;

		snprintf(r->log, sizeof(r->log), "checks/%d.log", i + 1);
		fd = openat(dfd, r->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		fprintf(stderr, "mvm promote: check %d: %s\n", i + 1, o->checks[i]);
		if (promote_run_check(o->name, o->checks[i], cwd, c.env, c.nenv, (unsigned)o->timeout_s,
				      fd, r))
			cli_err("promote", "check %d could not run: %s", i + 1, r->err);
		else
			fprintf(stderr, "mvm promote: check %d: %s (%.1f s)\n", i + 1,
				check_passed(r) ? "passed" : r->timed_out ? "timed out" : "FAILED",
				r->duration_s);
		close(fd);
	}
	sb_config_free(&c);
	return ret;
}

static int write_bundle(struct promote_job *o, int dfd)
{
	struct promote_report rep = { .name = o->name, .checks = o->res, .nchecks = o->nchecks,
				      .diff = &o->w };
	char *json;
	int ret;

	sha256_buf_hex(o->w.patch.p ? o->w.patch.p : "", o->w.patch.len, rep.patch_sha);
	ret = write_file(dfd, "changes.patch", o->w.patch.p ? o->w.patch.p : "", o->w.patch.len);
	json = ret ? NULL : promote_report_json(&rep);
	if (!ret && !json)
		ret = -ENOMEM;
	if (!ret)
		ret = write_file(dfd, "report.json", json, strlen(json));
	free(json);
	if (!ret)
		fprintf(stderr, "mvm promote: changes.patch: %zu files changed, sha256 %s\n",
			o->w.st.files, rep.patch_sha);
	return ret;
}

int promote_bundle(struct promote_job *o)
{
	char stage[PATH_MAX], msg[PATH_MAX + 160];
	int dfd, ret = fetch_staging(o->out, stage, sizeof(stage));

	if (ret) {
		cli_err("promote", ret == -EEXIST ? "%s already exists: name a new directory" :
			"cannot create a staging directory beside %s", o->out);
		return ret;
	}
	dfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* The workspace is located first, so checks run in it and a bad baseline fails early. */
	ret = dfd < 0 ? -errno : run_checks(o, dfd);
	if (!ret) {
		ret = wsdiff_run(o->name, &o->w);
		refusals_print("promote", "not compared", &o->w.refused);
		refusals_print("promote", "note", &o->w.notes);
		if (ret)
			cli_err("promote", "%s", o->w.err);
		else if (o->w.patch.over && (ret = -EFBIG))
			cli_err("promote", "the patch is larger than %llu bytes (--max-output)",
				(unsigned long long)o->w.patch.max);
	}
	if (!ret)
		ret = write_bundle(o, dfd);
	if (!ret) {
		/* mkdtemp made it 0700; the bundle gets the user's usual mode. */
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(dfd, 0777 & ~mask))
			ret = -errno;
	}
	if (dfd >= 0)
		close(dfd);
	msg[0] = 0;
	if (!ret)
		ret = dir_publish(stage, o->out, msg, sizeof(msg));
	if (ret) {
		if (!msg[0])
			snprintf(msg, sizeof(msg), "%s", strerror(-ret));
		cli_err("promote", "no bundle written (%s)", msg);
		rm_tree(stage);
	}
	return ret;
}

bool promote_checks_passed(const struct promote_job *j)
{
	for (int i = 0; i < j->nchecks; i++)
		if (!check_passed(&j->res[i]))
			return false;
	return true;
}
