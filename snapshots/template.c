/* The template store (snapshots/template.h): sealing and the cheap identity check. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <nettle/sha2.h>

#include "common/file_io.h"
#include "snapshots/snap_seal.h"
#include "snapshots/template.h"
#include "snapshots/tpl_ledger.h"

#define FIXED_STATE  0	/* f[0]: state, f[1]: config.json, then the snapshot's files */
#define FIXED_CONFIG 1
#define FIXED_N      2

int tpl_root(char *out, size_t cap)
{
	const char *d = getenv("MVM_TEMPLATE_DIR"), *x = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	int n;

	if (d && d[0])
		n = snprintf(out, cap, "%s", d);
	else if (x && x[0])
		n = snprintf(out, cap, "%s/mvm/templates", x);
	else
		n = snprintf(out, cap, "%s/.local/share/mvm/templates", home ? home : "");
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

bool tpl_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > TPL_NAME_MAX || name[0] == '.' || name[0] == '-' || name[0] == '_')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", name[i]))
			return false;
	return true;
}

int tpl_dir(const char *name, char *out, size_t cap)
{
	char root[4096];
	int n;

	if (!tpl_name_ok(name))
		return -EINVAL;
	if (tpl_root(root, sizeof(root)))
		return -ENAMETOOLONG;
	n = snprintf(out, cap, "%s/%s", root, name);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

bool tpl_exists(const char *name)
{
	char dir[4200];

	return !tpl_dir(name, dir, sizeof(dir)) && access(dir, F_OK) == 0;
}

/* Identity of @name in @dfd; @crc computed here when @want_crc. */
static int identify(int dfd, const char *name, bool want_crc, struct tpl_file_id *id)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EINVAL;
	if (!ret && want_crc) {
		uint64_t size;

		ret = snap_file_crc(fd, &size, &id->crc);
	}
	close(fd);
	if (ret)
		return ret;
	if (id->name != name)
		snprintf(id->name, sizeof(id->name), "%s", name);
	id->size = (uint64_t)st.st_size;
	id->ino = (uint64_t)st.st_ino;
	id->dev = (uint64_t)st.st_dev;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	return 0;
}

/* 64-bit numbers as strings: a double cannot hold every one. */
static void add_u64(cJSON *o, const char *key, uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	cJSON_AddStringToObject(o, key, s);
}

static cJSON *base_json(const struct snap_base *b)
{
	cJSON *e = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "path", b->path);
	cJSON_AddNumberToObject(e, "size", (double)b->id.size);
	add_u64(e, "inode", b->id.ino);
	add_u64(e, "device", b->id.dev);
	add_u64(e, "mtime_ns", (uint64_t)b->id.mtime_ns);
	cJSON_AddStringToObject(e, "sha256", b->sha256);
	cJSON_AddStringToObject(e, "sha256_of", b->sha256_of);
	return e;
}

static cJSON *meta_json(const struct tpl_meta *m)
{
	cJSON *o = cJSON_CreateObject(), *files = cJSON_AddArrayToObject(o, "files");

	cJSON_AddStringToObject(o, "name", m->name);
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddNumberToObject(o, "created", m->created);
	for (int i = 0; files && i < m->nfiles; i++) {
		const struct tpl_file_id *f = &m->f[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "name", f->name);
		cJSON_AddNumberToObject(e, "size", (double)f->size);
		add_u64(e, "inode", f->ino);
		add_u64(e, "device", f->dev);
		add_u64(e, "mtime_ns", (uint64_t)f->mtime_ns);
		if (f->ctime_ns)
			add_u64(e, "ctime_ns", (uint64_t)f->ctime_ns);
		cJSON_AddNumberToObject(e, "crc32c", f->crc);
		cJSON_AddItemToArray(files, e);
	}
	if (m->has_base)
		cJSON_AddItemToObject(o, "base", base_json(&m->base));
	if (m->bundle[0])
		cJSON_AddStringToObject(o, "bundle_sha256", m->bundle);
	return o;
}

/* Everything in @dir read-only: the files, then the directory itself. */
static int make_read_only(int dfd, const struct tpl_meta *m)
{
	for (int i = 0; i < m->nfiles; i++)
		if (fchmodat(dfd, m->f[i].name, 0444, 0))
			return -errno;
	return 0;
}

int tpl_seal(const char *dir, const char *name, const char *source,
	     const struct snap_dir_info *in, char *err, size_t errlen)
{
	return tpl_seal_bundle(dir, name, source, in, NULL, err, errlen);
}

int tpl_seal_bundle(const char *dir, const char *name, const char *source,
		    const struct snap_dir_info *in, const char *bundle, char *err, size_t errlen)
{
	struct tpl_meta *m = calloc(1, sizeof(*m));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;
	char path[4200], *text = NULL;
	cJSON *j = NULL;
	struct timespec t;

	ret = !m ? -ENOMEM : dfd < 0 ? -errno : 0;
	if (ret)
		goto out;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->source, sizeof(m->source), "%s", source);
	snprintf(m->bundle, sizeof(m->bundle), "%s", bundle ? bundle : "");
	clock_gettime(CLOCK_REALTIME, &t);
	m->created = (double)t.tv_sec;
	m->nfiles = FIXED_N + in->nfiles;
	m->has_base = in->has_base;
	m->base = in->base;
	/* The mode first: chmod leaves mtime alone, and the record is of the sealed file. */
	snprintf(m->f[FIXED_STATE].name, sizeof(m->f[0].name), SNAP_DIR_STATE);
	snprintf(m->f[FIXED_CONFIG].name, sizeof(m->f[0].name), "config.json");
	for (int i = 0; i < in->nfiles; i++)
		snprintf(m->f[FIXED_N + i].name, sizeof(m->f[0].name), "%s", in->f[i].name);
	ret = make_read_only(dfd, m);
	for (int i = 0; !ret && i < m->nfiles; i++) {
		ret = identify(dfd, m->f[i].name, i < FIXED_N, &m->f[i]);
		if (i >= FIXED_N)
			m->f[i].crc = in->f[i - FIXED_N].crc;	/* verified by the caller */
		if (i > FIXED_N)
			m->f[i].ctime_ns = 0;	/* a layer: linked into sandboxes */
	}
	j = ret ? NULL : meta_json(m);
	text = j ? cJSON_Print(j) : NULL;
	if (!ret && !text)
		ret = -ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", dir, TPL_META);
	if (!ret)
		ret = file_write_atomic(path, text);
	if (!ret && chmod(path, 0444))
		ret = -errno;
	if (!ret && (ret = snap_seal_write(dir, "template", err, errlen)))
		goto out_said;
out:
	if (ret)
		snprintf(err, errlen, "sealing the template: %s", strerror(-ret));
out_said:
	if (dfd >= 0)
		close(dfd);
	cJSON_Delete(j);
	free(text);
	free(m);
	return ret;
}

static int read_meta(const char *dir, char **text)
{
	char path[4200];
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", dir, TPL_META);
	return file_read_regular(path, TPL_META_MAX, text, &len);
}

static bool get_u64(const cJSON *o, const char *key, uint64_t *v)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
	char *end;

	if (!cJSON_IsString(s) || !s->valuestring[0] || strlen(s->valuestring) > 20)
		return false;
	errno = 0;
	*v = strtoull(s->valuestring, &end, 10);
	return !*end && !errno && s->valuestring[0] != '-';
}

static bool get_num(const cJSON *o, const char *key, double max, double *v)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > max)
		return false;
	*v = n->valuedouble;
	return true;
}

static bool get_str(const cJSON *o, const char *key, char *out, size_t cap)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(s) || strlen(s->valuestring) >= cap)
		return false;
	snprintf(out, cap, "%s", s->valuestring);
	return true;
}

static bool file_from_json(const cJSON *e, struct tpl_file_id *f)
{
	uint64_t mt;
	double size, crc;

	if (!get_str(e, "name", f->name, sizeof(f->name)) || !f->name[0] || f->name[0] == '.' ||
	    strchr(f->name, '/') || !get_num(e, "size", 9007199254740992.0, &size) ||
	    !get_num(e, "crc32c", 4294967295.0, &crc) || !get_u64(e, "inode", &f->ino) ||
	    !get_u64(e, "device", &f->dev) || !get_u64(e, "mtime_ns", &mt))
		return false;
	f->size = (uint64_t)size;
	f->crc = (uint32_t)crc;
	f->mtime_ns = (int64_t)mt;
	if (cJSON_GetObjectItemCaseSensitive(e, "ctime_ns") && !get_u64(e, "ctime_ns", &mt))
		return false;
	f->ctime_ns = cJSON_GetObjectItemCaseSensitive(e, "ctime_ns") ? (int64_t)mt : 0;
	return true;
}

static bool sha_ok(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static bool base_from_json(const cJSON *e, struct snap_base *b)
{
	uint64_t mt;
	double size;

	if (!get_str(e, "path", b->path, sizeof(b->path)) || b->path[0] != '/' ||
	    !get_num(e, "size", 9007199254740992.0, &size) || !get_u64(e, "inode", &b->id.ino) ||
	    !get_u64(e, "device", &b->id.dev) || !get_u64(e, "mtime_ns", &mt) ||
	    !get_str(e, "sha256", b->sha256, sizeof(b->sha256)) || !sha_ok(b->sha256) ||
	    !get_str(e, "sha256_of", b->sha256_of, sizeof(b->sha256_of)) ||
	    (strcmp(b->sha256_of, "file") && strcmp(b->sha256_of, "blocks")))
		return false;
	b->id.size = (uint64_t)size;
	b->id.mtime_ns = (int64_t)mt;
	return true;
}

static int meta_from_json(const cJSON *j, struct tpl_meta *m)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(j, "files"), *e;

	memset(m, 0, sizeof(*m));
	if (!get_str(j, "name", m->name, sizeof(m->name)) || !tpl_name_ok(m->name) ||
	    !get_str(j, "source", m->source, sizeof(m->source)) ||
	    !get_num(j, "created", 1e12, &m->created) || !cJSON_IsArray(files))
		return -EBADMSG;
	cJSON_ArrayForEach(e, files) {
		if (m->nfiles == TPL_MAX_FILES || !file_from_json(e, &m->f[m->nfiles]))
			return -EBADMSG;
		m->nfiles++;
	}
	if (m->nfiles < FIXED_N + 2 || strcmp(m->f[FIXED_STATE].name, SNAP_DIR_STATE) ||
	    strcmp(m->f[FIXED_CONFIG].name, "config.json"))
		return -EBADMSG;
	e = cJSON_GetObjectItemCaseSensitive(j, "base");
	m->has_base = e != NULL;
	if (e && !base_from_json(e, &m->base))
		return -EBADMSG;
	if (cJSON_GetObjectItemCaseSensitive(j, "bundle_sha256") &&
	    (!get_str(j, "bundle_sha256", m->bundle, sizeof(m->bundle)) || !sha_ok(m->bundle)))
		return -EBADMSG;
	return 0;
}

int tpl_meta_load(const char *dir, struct tpl_meta *m, char *err, size_t errlen)
{
	char *text = NULL;
	cJSON *j = NULL;
	int ret = read_meta(dir, &text);

	if (!ret) {
		struct sha256_ctx c;

		j = cJSON_Parse(text);
		ret = j ? meta_from_json(j, m) : -EBADMSG;
		sha256_init(&c);
		sha256_update(&c, strlen(text), (const uint8_t *)text);
		sha256_digest(&c, sizeof(m->sha256), m->sha256);
	}
	if (ret)
		snprintf(err, errlen, "%s/%s: %s", dir, TPL_META,
			 ret == -EBADMSG ? "not a valid template record" : strerror(-ret));
	cJSON_Delete(j);
	free(text);
	return ret;
}

/* Same file as recorded: nothing replaced, written or truncated since. */
static int same_file(int dfd, const struct tpl_file_id *want, char *err, size_t errlen)
{
	struct tpl_file_id now;
	int ret = identify(dfd, want->name, false, &now);
	struct snap_ident was = { want->size, want->ino, want->dev, want->mtime_ns };
	struct snap_ident is = { now.size, now.ino, now.dev, now.mtime_ns };
	const char *what = ret ? NULL : snap_ident_differs(&was, &is);

	if (!ret && !what && want->ctime_ns && want->ctime_ns != now.ctime_ns)
		what = "change time";

	if (ret) {
		snprintf(err, errlen, "template file %s: %s", want->name, strerror(-ret));
		return ret;
	}
	if (what) {
		snprintf(err, errlen, "template file %s changed since the template was created "
			 "(%s differs): refusing it; remove the template and create it again",
			 want->name, what);
		return -EBADMSG;
	}
	return 0;
}

/* template.json's snapshot files are exactly the state's checksummed list. */
static int same_list(const struct tpl_meta *m, const struct snap_dir_info *in, char *err,
		     size_t errlen)
{
	if (m->nfiles != FIXED_N + in->nfiles)
		goto differ;
	for (int i = 0; i < in->nfiles; i++) {
		const struct tpl_file_id *f = &m->f[FIXED_N + i];

		if (strcmp(f->name, in->f[i].name) || f->size != in->f[i].size ||
		    f->crc != in->f[i].crc)
			goto differ;
	}
	if (m->has_base != in->has_base || (m->has_base && (strcmp(m->base.path, in->base.path) ||
	    snap_ident_differs(&m->base.id, &in->base.id))))
		goto differ;
	return 0;
differ:
	snprintf(err, errlen, "template record and snapshot state disagree (edited?): refusing it");
	return -EBADMSG;
}

int tpl_check(const char *dir, struct snap_dir_info *info, struct tpl_meta *m,
	      char *err, size_t errlen)
{
	return tpl_check_held(dir, info, m, NULL, err, errlen);
}

int tpl_check_held(const char *dir, struct snap_dir_info *info, struct tpl_meta *m,
		   struct tpl_hold *hold, char *err, size_t errlen)
{
	struct snap_seal *seal = &m->seal;
	int dfd, ret = tpl_meta_load(dir, m, err, errlen);

	if (!ret)
		ret = snap_seal_load(dir, "template", seal, err, errlen);
	if (!ret)
		ret = snap_seal_expect(seal, dir, TPL_META, m->sha256, err, errlen);
	if (ret)
		return ret;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; !ret && i < m->nfiles; i++)
		ret = same_file(dfd, &m->f[i], err, errlen);
	close(dfd);
	/* The state, held: hashed and compared with the seal unless it is the
	 * one whose bytes were so checked when the ledger's line was written
	 * (20 KiB and more: its SHA-256 cost a start as much again as the
	 * rest of the check). */
	if (!ret && hold)
		tpl_hold_state(dir, m->sha256, hold);
	if (!ret)
		ret = snap_dir_info_held(dir, hold ? hold->fd[0] : -1, !(hold && hold->same[0]),
					 info, err, errlen);
	if (!ret && !(hold && hold->same[0]))
		ret = snap_seal_expect(seal, dir, SNAP_DIR_STATE, info->state_sha256, err, errlen);
	if (!ret && hold)
		hold->verified[0] = hold->fd[0] >= 0;
	if (!ret && !snap_files_bound(info)) {
		snprintf(err, errlen, "%s: its state lists no digest of its files a seal can bind (taken before keyed seals): refusing it", dir);
		ret = -EBADMSG;
	}
	if (!ret)
		ret = same_list(m, info, err, errlen);
	/* The layers are linked into each sandbox, so their change time moves
	 * and alone cannot show an edit: their contents are read against the
	 * sealed tags or SHA-256s (the memory file, never linked, is kept by
	 * its identity), unless held under a lease and unchanged since the
	 * last such read (snapshots/tpl_ledger.h). */
	if (!ret && hold)
		tpl_hold_layers(dir, info, m->sha256, hold);
	if (!ret)
		ret = snap_verify_layers_held(dir, info, hold ? hold->fd : NULL,
					      hold ? hold->same : NULL, err, errlen);
	for (int i = 1; !ret && hold && i < info->nfiles; i++)
		hold->verified[i] = hold->fd[i] >= 0;
	if (!ret && info->has_base && (ret = snap_base_check(&info->base, err, errlen))) {
		char why[512];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "template %s: %s; rebuild the template from a sandbox of the "
			 "image as it is now (mvm template rm %s, then mvm template create %s --from "
			 "SANDBOX)", m->name, why, m->name, m->name);
	}
	return ret;
}

void tpl_unlink_layers(const char *dir, const char *ledger, const char *sdir)
{
	struct snap_dir_info *in = calloc(1, sizeof(*in));
	struct tpl_meta *m = calloc(1, sizeof(*m));
	struct tpl_hold *h = malloc(sizeof(*h));
	int sfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char err[512];

	if (h)
		tpl_hold_init(h, ledger);
	/* template.json unchecked: the ledger's lines name its SHA-256, so
	 * another one matches none of them and nothing is recorded. */
	if (!in || !m || !h || sfd < 0 || tpl_meta_load(dir, m, err, sizeof(err)) ||
	    m->nfiles - FIXED_N > SNAP_MAX_FILES)
		goto out;
	in->nfiles = m->nfiles - FIXED_N;
	for (int i = 0; i < in->nfiles; i++)
		snprintf(in->f[i].name, sizeof(in->f[i].name), "%s", m->f[FIXED_N + i].name);
	tpl_hold_state(dir, m->sha256, h);
	h->verified[0] = h->same[0];	/* its line kept */
	tpl_hold_layers(dir, in, m->sha256, h);
	for (int i = 1; i < in->nfiles; i++) {
		struct stat st;

		/* Only a layer unchanged since it was last read is known now. */
		h->verified[i] = h->same[i];
		if (h->same[i] && !fstatat(sfd, in->f[i].name, &st, AT_SYMLINK_NOFOLLOW) &&
		    tpl_hold_is(h, i, &st))
			unlinkat(sfd, in->f[i].name, 0);
	}
	tpl_hold_commit(h);
out:
	if (h)
		tpl_hold_release(h);
	if (sfd >= 0)
		close(sfd);
	free(h);
	free(m);
	free(in);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tpl_list(char ***names)
{
	char root[4096];
	struct dirent *e;
	char **v = NULL;
	int n = 0;
	DIR *d;

	*names = NULL;
	if (tpl_root(root, sizeof(root)))
		return -ENAMETOOLONG;
	d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		char **nv;

		/* Staging directories start with '.', which no name may. */
		if (!tpl_name_ok(e->d_name) || !(nv = realloc(v, (size_t)(n + 1) * sizeof(*v))))
			continue;
		v = nv;
		v[n] = strdup(e->d_name);
		if (v[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_name);
	*names = v;
	return n;
}
