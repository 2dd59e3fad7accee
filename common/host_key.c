/* The per-user host key and the HMAC-SHA256 seals made with it (common/host_key.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nettle/hmac.h>

#include "common/hex.h"
#include "common/host_key.h"

int host_key_path(char *out, size_t cap)
{
	const char *k = getenv("MVM_HOST_KEY"), *x = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw;
	int n;

	if (!home || home[0] != '/')	/* a service without HOME: the account's */
		home = (pw = getpwuid(getuid())) ? pw->pw_dir : NULL;
	if (k && k[0])
		n = snprintf(out, cap, "%s", k);
	else if (x && x[0] == '/')
		n = snprintf(out, cap, "%s/mvm/host.key", x);
	else if (home && home[0] == '/')
		n = snprintf(out, cap, "%s/.config/mvm/host.key", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* mkdir -p of @path's parent directories, each new one 0700. */
static int make_parents(const char *path)
{
	char d[PATH_MAX];

	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(d, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* The key at @path: ours, 0600 at most, exactly HOST_KEY_LEN bytes. */
static int read_key(const char *path, uint8_t *key)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size != HOST_KEY_LEN)
		ret = -EPERM;
	else if (pread(fd, key, HOST_KEY_LEN, 0) != HOST_KEY_LEN)
		ret = -EIO;
	close(fd);
	return ret;
}

/* A new key, written whole to a temporary name and linked into place: a
 * racing start reads either no key or the whole of one. */
static int make_key(const char *path)
{
	char tmp[PATH_MAX + 16];
	uint8_t key[HOST_KEY_LEN];
	int fd, ret = make_parents(path);

	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key) ||
	    write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) || fsync(fd))
		ret = -EIO;
	close(fd);
	explicit_bzero(key, sizeof(key));
	if (!ret && link(tmp, path))
		ret = -errno;	/* EEXIST: another start made it first; read that one */
	unlink(tmp);
	return ret;
}

int host_key_get(uint8_t key[HOST_KEY_LEN], bool *created, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret = host_key_path(path, sizeof(path)), made = -1;

	if (created)
		*created = false;
	if (!ret && (ret = read_key(path, key)) == -ENOENT) {
		made = make_key(path);
		ret = made && made != -EEXIST ? made : read_key(path, key);
	}
	if (!ret && created)
		*created = made == 0;
	if (ret == -EPERM)
		snprintf(err, errlen, "the host key %s is not a private file of this user's "
			 "(mode 0600, %d bytes): refusing it", path, HOST_KEY_LEN);
	else if (ret)
		snprintf(err, errlen, "the host key %s: %s", path, strerror(-ret));
	return ret;
}

void host_mac_with(const uint8_t key[HOST_KEY_LEN], const void *const *parts,
		   const size_t *lens, int n, char hex[HOST_MAC_HEX])
{
	struct hmac_sha256_ctx c;
	uint8_t d[SHA256_DIGEST_SIZE];

	hmac_sha256_set_key(&c, HOST_KEY_LEN, key);
	for (int i = 0; i < n; i++) {
		uint64_t len = lens[i];

		hmac_sha256_update(&c, sizeof(len), (const uint8_t *)&len);
		hmac_sha256_update(&c, lens[i], parts[i]);
	}
	hmac_sha256_digest(&c, sizeof(d), d);
	base16_encode_update(hex, sizeof(d), d);
	hex[2 * sizeof(d)] = 0;
	explicit_bzero(&c, sizeof(c));	/* the key's inner and outer states */
}

int host_mac(const void *const *parts, const size_t *lens, int n, char hex[HOST_MAC_HEX],
	     char *err, size_t errlen)
{
	uint8_t key[HOST_KEY_LEN];
	int ret = host_key_get(key, NULL, err, errlen);

	if (!ret)
		host_mac_with(key, parts, lens, n, hex);
	explicit_bzero(key, sizeof(key));
	return ret;
}

bool host_mac_equal(const char *a, const char *b)
{
	unsigned char diff = 0;

	if (strlen(a) != HOST_MAC_HEX - 1 || strlen(b) != HOST_MAC_HEX - 1)
		return false;	/* a length is no secret */
	for (size_t i = 0; i < HOST_MAC_HEX - 1; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return !diff;
}
