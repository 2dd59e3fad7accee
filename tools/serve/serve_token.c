/* Tenants and their token hashes (tools/serve/serve_token.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/file_io.h"
#include "common/fs_util.h"
#include "tools/serve/serve_token.h"

#define FILE_MAX (1u << 20)

int sv_tokens_default_path(char *out, size_t cap)
{
	const char *e = getenv("MVM_SERVE_TOKENS"), *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	int n;

	if (e && e[0])
		n = snprintf(out, cap, "%s", e);
	else if (x && x[0] == '/')
		n = snprintf(out, cap, "%s/mvm/serve-tokens.json", x);
	else if (h && h[0] == '/')
		n = snprintf(out, cap, "%s/.config/mvm/serve-tokens.json", h);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* A non-negative whole number field of @o, or @dflt when absent. -1 if bad. */
static double num(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!v)
		return dflt;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e18)
		return -1;
	return v->valuedouble;
}

static int tenant_parse(const cJSON *e, struct sv_tenant *t, char *err, size_t errlen)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, "sha256");
	struct sv_quota d = SV_QUOTA_DEFAULT;
	double s = num(e, "sandboxes", d.sandboxes), c = num(e, "cpus", d.cpus);
	double m = num(e, "memory", (double)d.memory), k = num(e, "disk", (double)d.disk);
	double n = num(e, "templates", s);	/* absent: the sandbox count, as before the field */
	double p = num(e, "checkpoints", d.checkpoints);

	if (!cJSON_IsObject(e) || !sv_tenant_ok(e->string) || !cJSON_IsString(h) || !sha256_hex_valid(h->valuestring) ||
	    s < 0 || c < 0 || m < 0 || k < 0 || n < 0 || p < 0 || s > 100000 || c > 100000 || n > 100000 ||
	    p > 100000) {
		snprintf(err, errlen, "tenant '%.32s': bad entry (name [a-z0-9][a-z0-9_-]{0,23}, sha256, quotas)",
			 e->string);
		return -EINVAL;
	}
	snprintf(t->name, sizeof(t->name), "%s", e->string);
	snprintf(t->hash, sizeof(t->hash), "%s", h->valuestring);
	t->quota = (struct sv_quota){ (int)s, (int)c, (uint64_t)m, (uint64_t)k, (int)n, (int)p };
	return 0;
}

int sv_tokens_parse(const char *text, struct sv_tokens *t, char *err, size_t errlen)
{
	cJSON *j = cJSON_Parse(text), *ts = cJSON_GetObjectItemCaseSensitive(j, "tenants"), *e;
	int ret = 0;

	t->n = 0;
	if (!cJSON_IsObject(ts)) {
		snprintf(err, errlen, "not a tokens file: no \"tenants\" object");
		ret = -EINVAL;
	}
	cJSON_ArrayForEach(e, ts) {
		if (t->n >= SV_MAX_TENANTS) {
			snprintf(err, errlen, "more than %d tenants", SV_MAX_TENANTS);
			ret = -EINVAL;
			break;
		}
		if ((ret = tenant_parse(e, &t->t[t->n], err, errlen)))
			break;
		t->n++;
	}
	cJSON_Delete(j);
	return ret;
}

char *sv_tokens_format(const struct sv_tokens *t)
{
	cJSON *j = cJSON_CreateObject(), *ts = cJSON_AddObjectToObject(j, "tenants");
	char *s;

	for (int i = 0; ts && i < t->n; i++) {
		cJSON *e = cJSON_AddObjectToObject(ts, t->t[i].name);

		cJSON_AddStringToObject(e, "sha256", t->t[i].hash);
		cJSON_AddNumberToObject(e, "sandboxes", t->t[i].quota.sandboxes);
		cJSON_AddNumberToObject(e, "cpus", t->t[i].quota.cpus);
		cJSON_AddNumberToObject(e, "memory", (double)t->t[i].quota.memory);
		cJSON_AddNumberToObject(e, "disk", (double)t->t[i].quota.disk);
		cJSON_AddNumberToObject(e, "templates", t->t[i].quota.templates);
		cJSON_AddNumberToObject(e, "checkpoints", t->t[i].quota.checkpoints);
	}
	s = cJSON_Print(j);
	cJSON_Delete(j);
	return s;
}

int sv_tokens_load(const char *path, struct sv_tokens *t, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *text;
	int ret;

	t->n = 0;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	ret = fstat(fd, &st) ? -errno : 0;
	close(fd);
	if (!ret && (st.st_uid != geteuid() || (st.st_mode & 077) || !S_ISREG(st.st_mode))) {
		snprintf(err, errlen, "%s: must be a regular file of this user with mode 0600", path);
		return -EPERM;
	}
	text = ret ? NULL : file_read_text(path, FILE_MAX);
	if (!text) {
		snprintf(err, errlen, "%s: cannot read it", path);
		return ret ? ret : -EIO;
	}
	ret = sv_tokens_parse(text, t, err, errlen);
	free(text);
	return ret;
}

/* flock PATH.lock (made beside it, 0600); the fd, or -errno. */
static int lock_file(const char *path, char *err, size_t errlen)
{
	char lk[PATH_MAX], dir[PATH_MAX];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir_p(dir, 0700);
	}
	snprintf(lk, sizeof(lk), "%s.lock", path);
	fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		snprintf(err, errlen, "%s: %s", lk, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	return fd;
}

static int save(const char *path, const struct sv_tokens *t, char *err, size_t errlen)
{
	char *s = sv_tokens_format(t);
	int ret = s ? file_write_atomic(path, s) : -ENOMEM;

	free(s);
	if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}

static int find(const struct sv_tokens *t, const char *tenant)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->t[i].name, tenant))
			return i;
	return -1;
}

static int new_token(char token[SV_TOKEN_LEN + 1])
{
	static const char hx[] = "0123456789abcdef";
	unsigned char r[32];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	memcpy(token, "mvm_", 4);
	for (int i = 0; i < 32; i++) {
		token[4 + 2 * i] = hx[r[i] >> 4];
		token[5 + 2 * i] = hx[r[i] & 15];
	}
	token[SV_TOKEN_LEN] = '\0';
	return 0;
}

int sv_token_add(const char *path, const char *tenant, const struct sv_quota *q,
		 char token[SV_TOKEN_LEN + 1], char *err, size_t errlen)
{
	struct sv_tokens *t = calloc(1, sizeof(*t));
	int lk, ret;

	if (!t)
		return -ENOMEM;
	if (!sv_tenant_ok(tenant)) {
		snprintf(err, errlen, "tenant names are [a-z0-9][a-z0-9_-]{0,%d}", SV_TENANT_MAX - 1);
		free(t);
		return -EINVAL;
	}
	if ((lk = lock_file(path, err, errlen)) < 0) {
		free(t);
		return lk;
	}
	ret = sv_tokens_load(path, t, err, errlen);
	if (!ret && find(t, tenant) >= 0) {
		snprintf(err, errlen, "tenant %s has a token already (mvm serve token rm %s first)", tenant, tenant);
		ret = -EEXIST;
	} else if (!ret && t->n >= SV_MAX_TENANTS) {
		snprintf(err, errlen, "%d tenants already", SV_MAX_TENANTS);
		ret = -ENOSPC;
	} else if (!ret && (ret = new_token(token))) {
		snprintf(err, errlen, "getrandom failed");
	}
	if (!ret) {
		struct sv_tenant *n = &t->t[t->n++];

		snprintf(n->name, sizeof(n->name), "%s", tenant);
		sha256_buf_hex(token, SV_TOKEN_LEN, n->hash);
		n->quota = *q;
		ret = save(path, t, err, errlen);
	}
	close(lk);
	free(t);
	return ret;
}

int sv_token_rm(const char *path, const char *tenant, char *err, size_t errlen)
{
	struct sv_tokens *t = calloc(1, sizeof(*t));
	int lk, ret, i;

	if (!t)
		return -ENOMEM;
	if ((lk = lock_file(path, err, errlen)) < 0) {
		free(t);
		return lk;
	}
	ret = sv_tokens_load(path, t, err, errlen);
	i = ret ? -1 : find(t, tenant);
	if (!ret && i < 0) {
		snprintf(err, errlen, "no tenant %.32s", tenant);
		ret = -ENOENT;
	}
	if (!ret) {
		memmove(&t->t[i], &t->t[i + 1], (size_t)(t->n - i - 1) * sizeof(t->t[0]));
		t->n--;
		ret = save(path, t, err, errlen);
	}
	close(lk);
	free(t);
	return ret;
}

/* Equal in time independent of where they differ. */
static bool ct_equal(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

const struct sv_tenant *sv_token_find(const struct sv_tokens *t, const char *token)
{
	const struct sv_tenant *hit = NULL;
	char h[SHA256_HEX];

	if (!token || strlen(token) != SV_TOKEN_LEN)
		return NULL;
	sha256_buf_hex(token, SV_TOKEN_LEN, h);
	for (int i = 0; i < t->n; i++)
		if (ct_equal(h, t->t[i].hash, 64) && !hit)
			hit = &t->t[i];
	return hit;
}

const char *sv_bearer(const char *header)
{
	if (!header || strncasecmp(header, "Bearer ", 7))
		return NULL;
	header += 7;
	while (*header == ' ')
		header++;
	return header;
}
