/* Seals of config.json and restore-from (tools/sandbox/sb_seal.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/host_key.h"
#include "snapshots/snapshot_dir.h"
#include "tools/sandbox/baseline.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sb_seal.h"

#define RECORD_MAX (1 << 20)
#define MIGRATED ".sealed-v1"	/* in the state root: old directories sealed */

int sb_seal_mac(const char *name, const char *file, const char *text, size_t len,
		char hex[65], char *err, size_t errlen)
{
	static const char tag[] = "mvm sandbox record v1";
	const void *parts[] = { tag, name, file, text };
	size_t lens[] = { sizeof(tag), strlen(name), strlen(file), len };

	return host_mac(parts, lens, 4, hex, err, errlen);
}

/* @file of NAME (no symlink, a regular file) read whole into @text. */
static int read_record(const char *name, const char *file, size_t max, char **text, size_t *len)
{
	char p[PATH_MAX];
	int ret = sb_path(name, file, p, sizeof(p));

	*text = NULL;
	return ret ? ret : file_read_regular(p, max, text, len);
}

static int seal_file(const char *name, const char *file, size_t max)
{
	char mac[PATH_MAX], p[PATH_MAX], hex[HOST_MAC_HEX], err[256], *text;
	size_t len = 0;
	int ret = read_record(name, file, max, &text, &len);

	if (!ret)
		ret = sb_seal_mac(name, file, text, len, hex, err, sizeof(err));
	free(text);
	if (!ret && snprintf(mac, sizeof(mac), "%s" SB_MAC_SUFFIX, file) >= (int)sizeof(mac))
		ret = -ENAMETOOLONG;
	if (!ret && !(ret = sb_path(name, mac, p, sizeof(p))))
		ret = file_write_atomic(p, hex);
	return ret;
}

/* One record against its seal: 0 with its bytes in @out (NULL: freed),
 * -ENOENT (no record), -ENODATA (no seal), -EBADMSG (they disagree) or -errno. */
static int check_one(const char *name, const char *file, size_t max, char **out, char *err,
		     size_t errlen)
{
	char mac[PATH_MAX], hex[HOST_MAC_HEX], *text = NULL, *want = NULL;
	size_t len = 0, wlen = 0;
	int ret = read_record(name, file, max, &text, &len);

	snprintf(mac, sizeof(mac), "%s" SB_MAC_SUFFIX, file);
	if (!ret) {
		ret = read_record(name, mac, RECORD_MAX, &want, &wlen);
		if (ret == -ENOENT)
			ret = -ENODATA;
	}
	if (!ret)
		ret = sb_seal_mac(name, file, text, len, hex, err, errlen);
	if (!ret && (wlen != HOST_MAC_HEX - 1 || !host_mac_equal(hex, want)))
		ret = -EBADMSG;
	if (!ret && out) {
		*out = text;
		text = NULL;
	}
	free(text);
	free(want);
	return ret;
}

/* Seal what each existing sandbox has, once: the first check after an
 * upgrade from a version without seals. */
static int migrate(void)
{
	char root[PATH_MAX], p[PATH_MAX + 16];
	struct dirent *e;
	DIR *d;
	int fd;

	if (sb_root(root, sizeof(root)))
		return -ENAMETOOLONG;
	snprintf(p, sizeof(p), "%s/" MIGRATED, root);
	if (!access(p, F_OK))
		return -EEXIST;
	d = opendir(root);
	while (d && (e = readdir(d))) {
		char c[PATH_MAX];

		if (!sb_name_ok(e->d_name) || sb_path(e->d_name, SB_SEALED_CONFIG SB_MAC_SUFFIX, c,
						      sizeof(c)) || !access(c, F_OK))
			continue;
		seal_file(e->d_name, SB_SEALED_CONFIG, RECORD_MAX);
		seal_file(e->d_name, SNAP_RESTORE_FILE, RECORD_MAX);
		for (int i = 0; i < BASELINE_MAX; i++) {
			char f[32];

			snprintf(f, sizeof(f), "baseline/%d.json", i);
			if (seal_file(e->d_name, f, SB_SEAL_BIG))
				break;
		}
	}
	if (d)
		closedir(d);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? -errno : 0;
}

int sb_seal(const char *name, const char *file)
{
	/* Whatever this root held before seals existed is sealed first (and
	 * the marker made): from now on a missing seal is a change. */
	migrate();
	return seal_file(name, file, SB_SEAL_BIG);
}

int sb_seal_read(const char *name, const char *file, size_t max, char **text, char *err,
		 size_t errlen)
{
	int ret = check_one(name, file, max, text, err, errlen);

	if (ret == -ENODATA && !migrate())
		ret = check_one(name, file, max, text, err, errlen);
	if (ret == -ENODATA || ret == -EBADMSG)
		snprintf(err, errlen, "%s of sandbox %s changed since mvm wrote it (its seal %s"
			 SB_MAC_SUFFIX " %s): refusing it, its VMM or someone else edited it",
			 file, name, file, ret == -ENODATA ? "is missing" : "does not match");
	else if (ret)
		snprintf(err, errlen, "%s of sandbox %s: %s", file, name, strerror(-ret));
	return ret;
}

int sb_seal_check(const char *name, char *err, size_t errlen)
{
	static const char *const files[] = { SB_SEALED_CONFIG, SNAP_RESTORE_FILE };
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(files) / sizeof(files[0]); i++) {
		ret = check_one(name, files[i], RECORD_MAX, NULL, err, errlen);
		if (ret == -ENODATA && !migrate())
			ret = check_one(name, files[i], RECORD_MAX, NULL, err, errlen);
		if (ret == -ENOENT && i > 0)
			ret = 0;	/* no restore pending */
		if (ret == -ENODATA || ret == -EBADMSG)
			snprintf(err, errlen, "%s of sandbox %s changed since mvm wrote it (its seal "
				 "%s" SB_MAC_SUFFIX " %s): refusing to start it, a VMM or someone "
				 "else edited it; remove the sandbox (mvm rm %s) and create it again",
				 files[i], name, files[i], ret == -ENODATA ? "is missing" :
				 "does not match", name);
		else if (ret && ret != -ENOENT && !err[0])
			snprintf(err, errlen, "%s of sandbox %s: %s", files[i], name, strerror(-ret));
		else if (ret == -ENOENT)
			snprintf(err, errlen, "sandbox %s has no %s", name, files[i]);
	}
	return ret;
}
