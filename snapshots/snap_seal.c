/* Keyed seals of snapshot and template directories (snapshots/snap_seal.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <nettle/base16.h>
#include <nettle/sha2.h>

#include "common/file_io.h"
#include "common/host_key.h"
#include "snapshots/snap_seal.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/template.h"

#define SMALL_MAX (1 << 20)	/* state, config.json, template.json are far smaller */

int snap_seal_digest_file(const char *path, size_t max, uint8_t sha256[32])
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	struct sha256_ctx c;
	struct stat st;
	char *buf = NULL;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
		ret = -EBADMSG;
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		ret = -ENOMEM;
	else
		ret = file_pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (!ret) {
		sha256_init(&c);
		sha256_update(&c, (size_t)st.st_size, (const uint8_t *)buf);
		sha256_digest(&c, 32, sha256);
	}
	free(buf);
	return ret;
}

static void hex32(const uint8_t *d, char out[65])
{
	base16_encode_update(out, 32, d);
	out[64] = 0;
}

static void ident_of(const struct stat *st, struct snap_file_ident *id)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* "memory DEV INO SIZE MTIME_NS CTIME_NS\n" into @out; its length. */
static int memory_line(const struct snap_file_ident *m, char *out, size_t cap)
{
	return snprintf(out, cap, "memory %llu %llu %llu %lld %lld\n", (unsigned long long)m->dev,
			(unsigned long long)m->ino, (unsigned long long)m->size,
			(long long)m->mtime_ns, (long long)m->ctime_ns);
}

/* The lines the HMAC covers, into @out (NUL-terminated). */
static int body(const struct snap_seal *s, char *out, size_t cap)
{
	int n = snprintf(out, cap, "mvm-seal 1 %s\n", s->kind);

	for (int i = 0; i < s->n && n > 0 && (size_t)n < cap; i++) {
		char h[65];

		hex32(s->f[i].sha256, h);
		n += snprintf(out + n, cap - (size_t)n, "%s %s\n", s->f[i].name, h);
	}
	if (s->has_memory && n > 0 && (size_t)n < cap)
		n += memory_line(&s->memory, out + n, cap - (size_t)n);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : n;
}

static int64_t coarse_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME_COARSE, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/*
 * @dir's memory file's identity into @s, once its change time lies strictly
 * before the coarse clock's now: a write in the tick the identity is taken
 * in would otherwise keep the recorded change time (inodes are stamped from
 * the coarse clock, or later than it, never earlier). That takes at most a
 * tick (1-10 ms) after the last write; a file still not settled after 100 ms
 * (a clock set back, a file system's own stamps) gets no line, and a
 * restore then hashes it in full.
 */
static void record_memory(const char *dir, struct snap_seal *s)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/" SNAP_DIR_MEMORY, dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	for (int i = 0; i < 100 && !fstat(fd, &st) && S_ISREG(st.st_mode); i++) {
		ident_of(&st, &s->memory);
		if (s->memory.ctime_ns < coarse_now_ns()) {
			s->has_memory = true;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	close(fd);
}

bool snap_seal_memory_unchanged(const struct snap_seal *s, int fd)
{
	struct snap_file_ident now;
	struct stat st;

	if (!s->has_memory || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	ident_of(&st, &now);
	return now.dev == s->memory.dev && now.ino == s->memory.ino &&
	       now.size == s->memory.size && now.mtime_ns == s->memory.mtime_ns &&
	       now.ctime_ns == s->memory.ctime_ns;
}

static int mac_of(const char *text, size_t len, char hex[HOST_MAC_HEX], char *err, size_t errlen)
{
	static const char tag[] = "mvm directory seal v1";
	const void *parts[] = { tag, text };
	size_t lens[] = { sizeof(tag), len };

	return host_mac(parts, lens, 2, hex, err, errlen);
}

/* The files a seal of @kind names, in order. */
static int names_of(const char *kind, const char **names)
{
	names[0] = SNAP_DIR_STATE;
	names[1] = "config.json";
	names[2] = TPL_META;
	return !strcmp(kind, "template") ? 3 : !strcmp(kind, "snapshot") ? 2 : -EINVAL;
}

int snap_seal_write(const char *dir, const char *kind, char *err, size_t errlen)
{
	struct snap_seal s = { 0 };
	char text[SNAP_SEAL_MAX], hex[HOST_MAC_HEX], path[PATH_MAX];
	const char *names[3];
	int n = names_of(kind, names), len, ret = n < 0 ? n : 0;

	snprintf(s.kind, sizeof(s.kind), "%s", kind);
	for (int i = 0; !ret && i < n; i++) {
		snprintf(s.f[i].name, sizeof(s.f[i].name), "%s", names[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = snap_seal_digest_file(path, SMALL_MAX, s.f[i].sha256);
		if (ret)
			snprintf(err, errlen, "sealing %s: %s", path, strerror(-ret));
	}
	s.n = n;
	if (ret)
		return ret;
	if (!strcmp(kind, "snapshot"))
		record_memory(dir, &s);
	len = body(&s, text, sizeof(text) - 80);
	if (len < 0)
		return len;
	ret = mac_of(text, (size_t)len, hex, err, errlen);
	if (ret)
		return ret;
	snprintf(text + len, sizeof(text) - (size_t)len, "hmac %s\n", hex);
	snprintf(path, sizeof(path), "%s/" SNAP_SEAL_FILE, dir);
	ret = file_write_atomic(path, text);
	if (!ret && chmod(path, 0444))
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "writing %s: %s", path, strerror(-ret));
	return ret;
}

/* "NAME HEX\n" at @p into @s's next file; the position after it, or NULL. */
static const char *parse_line(const char *p, const char *name, uint8_t sha[32])
{
	struct base16_decode_ctx c;
	size_t n = strlen(name), out = 32;

	if (strncmp(p, name, n) || p[n] != ' ' || strspn(p + n + 1, "0123456789abcdef") != 64 ||
	    p[n + 65] != '\n')
		return NULL;
	base16_decode_init(&c);
	if (!base16_decode_update(&c, &out, sha, 64, p + n + 1) || out != 32 ||
	    !base16_decode_final(&c))
		return NULL;
	return p + n + 66;
}

static int parse(const char *text, struct snap_seal *s, size_t *body_len, char *mac)
{
	const char *names[3], *p;
	int n;

	memset(s, 0, sizeof(*s));
	if (!strncmp(text, "mvm-seal 1 snapshot\n", 20))
		snprintf(s->kind, sizeof(s->kind), "snapshot");
	else if (!strncmp(text, "mvm-seal 1 template\n", 20))
		snprintf(s->kind, sizeof(s->kind), "template");
	else
		return -EBADMSG;
	n = names_of(s->kind, names);
	p = text + 20;
	for (int i = 0; i < n; i++) {
		snprintf(s->f[i].name, sizeof(s->f[i].name), "%s", names[i]);
		if (!(p = parse_line(p, names[i], s->f[i].sha256)))
			return -EBADMSG;
	}
	s->n = n;
	if (!strcmp(s->kind, "snapshot") && !strncmp(p, "memory ", 7)) {
		unsigned long long dev, ino, size;
		long long mt, ct;
		char again[128];
		int len;

		/* Read, then written back and compared: one spelling only. */
		if (sscanf(p, "memory %llu %llu %llu %lld %lld\n", &dev, &ino, &size, &mt, &ct) != 5)
			return -EBADMSG;
		s->memory = (struct snap_file_ident){ dev, ino, size, mt, ct };
		len = memory_line(&s->memory, again, sizeof(again));
		if (len <= 0 || (size_t)len >= sizeof(again) || strncmp(p, again, (size_t)len))
			return -EBADMSG;
		s->has_memory = true;
		p += len;
	}
	*body_len = (size_t)(p - text);
	if (strncmp(p, "hmac ", 5) || strspn(p + 5, "0123456789abcdef") != 64 || strcmp(p + 69, "\n"))
		return -EBADMSG;
	memcpy(mac, p + 5, 64);
	mac[64] = 0;
	return 0;
}

int snap_seal_load(const char *dir, const char *kind, struct snap_seal *s, char *err,
		   size_t errlen)
{
	char path[PATH_MAX], mac[HOST_MAC_HEX], want[HOST_MAC_HEX], *text = NULL;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/" SNAP_SEAL_FILE, dir);
	text = file_read_text(path, SNAP_SEAL_MAX);
	ret = !text ? -ENOENT : parse(text, s, &len, want);
	if (!ret && kind && strcmp(kind, s->kind))
		ret = -EBADMSG;
	if (!ret)
		ret = mac_of(text, len, mac, err, errlen);
	if (!ret && !host_mac_equal(mac, want))
		ret = -EBADMSG;
	free(text);
	if (ret == -ENOENT || ret == -EBADMSG)
		snprintf(err, errlen, "%s: %s: refusing it (a %s is accepted only as this user's "
			 "mvm sealed it; one taken by an older mvm, by another user, or edited "
			 "since, must be taken again)", dir, ret == -ENOENT ? "no seal" :
			 "its seal does not match the host key", kind ? kind : "snapshot");
	return ret == -ENOENT ? -EBADMSG : ret;
}

int snap_seal_expect(const struct snap_seal *s, const char *dir, const char *name,
		     const uint8_t sha256[32], char *err, size_t errlen)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name)) {
			if (!memcmp(s->f[i].sha256, sha256, 32))
				return 0;
			break;
		}
	snprintf(err, errlen, "%s/%s changed since the %s was sealed (edited?): refusing it",
		 dir, name, s->kind);
	return -EBADMSG;
}

int snap_seal_check_state(const char *dir, const char *kind, const struct snap_dir_info *in,
			  char *err, size_t errlen)
{
	struct snap_seal s;
	int ret = snap_seal_load(dir, kind, &s, err, errlen);

	if (!ret)
		ret = snap_seal_expect(&s, dir, SNAP_DIR_STATE, in->state_sha256, err, errlen);
	if (!ret && !snap_files_bound(in)) {
		snprintf(err, errlen, "%s: its state lists no digest of its files a seal can bind (taken before keyed seals): refusing it", dir);
		ret = -EBADMSG;
	}
	return ret;
}

int snap_seal_check_copy(const char *dir, const char *kind, const char *name, const char *copy,
			 char *err, size_t errlen)
{
	uint8_t sha[32];
	struct snap_seal s;
	int ret = snap_seal_load(dir, kind, &s, err, errlen);

	if (!ret && (ret = snap_seal_digest_file(copy, SMALL_MAX, sha)))
		snprintf(err, errlen, "%s: %s", copy, strerror(-ret));
	if (!ret)
		ret = snap_seal_expect(&s, dir, name, sha, err, errlen);
	return ret;
}
