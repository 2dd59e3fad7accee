/* The confined unpacking of an OCI import (oci_unpack.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "images/oci_source.h"
#include "images/oci_stage.h"
#include "images/oci_unpack.h"
#include "images/oci_user.h"
#include "vmm/confine/landlock.h"

/* What the child sends back through its pipe. */
struct reply {
	int ret;
	char err[1024];
	struct oci_staged staged;
};

static int apply_layers(struct oci_image *img, struct oci_stage *s, const struct oci_limits *lim,
			char *err, size_t errlen)
{
	char msg[768];
	int fd, ret;

	for (unsigned i = 0; i < img->m.n_layers; i++) {
		if ((fd = oci_source_layer(img, i, err, errlen)) < 0)
			return fd;
		ret = oci_layer_apply(s, fd, img->c.diff_ids[i], lim, msg, sizeof(msg));
		close(fd);
		if (ret) {
			snprintf(err, errlen, "layer %u of %u: %s", i + 1, img->m.n_layers, msg);
			return ret;
		}
	}
	return 0;
}

static int owner_script(struct oci_stage *s, const char *work, struct oci_staged *out, char *err,
			size_t errlen)
{
	char path[4200];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/owners", work);
	if (!(f = fopen(path, "wxe")))
		return -errno;
	ret = oci_stage_owner_script(s, f, &out->content);
	out->has_lost_found = !faccessat(s->root, "lost+found", F_OK, AT_SYMLINK_NOFOLLOW);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret)
		snprintf(err, errlen, "the owner list: %s", strerror(-ret));
	return ret;
}

static int defaults_text(const struct oci_image *img, struct oci_staged *out, char *err, size_t errlen)
{
	char *text = cJSON_PrintUnformatted(img->c.defaults);
	int ret = 0;

	if (!text)
		return -ENOMEM;
	if (strlen(text) >= sizeof(out->defaults)) {
		snprintf(err, errlen, "config: Env, Cmd, Entrypoint, WorkingDir and User take over %d bytes",
			 OCI_DEFAULTS_MAX);
		ret = -EFBIG;
	} else {
		snprintf(out->defaults, sizeof(out->defaults), "%s", text);
	}
	cJSON_free(text);
	return ret;
}

/* A small text file of the staged tree (never through a link), or NULL. */
static char *read_staged(struct oci_stage *s, const char *rel)
{
	const char *base;
	int pfd = oci_stage_parent(s, rel, false, &base), fd;
	char *buf = NULL;
	ssize_t n;

	if (pfd < 0)
		return NULL;
	fd = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(pfd);
	if (fd < 0)
		return NULL;
	buf = malloc((1 << 20) + 1);
	n = buf ? read(fd, buf, 1 << 20) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

/* The config's User as numbers, from the image's own passwd and group. */
static int resolve_user(struct oci_stage *s, const struct oci_image *img, struct oci_staged *out,
			char *err, size_t errlen)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(img->c.defaults, "User");
	char *pw, *gr;
	int ret;

	if (!cJSON_IsString(u))
		return 0;
	pw = read_staged(s, "etc/passwd");
	gr = read_staged(s, "etc/group");
	ret = oci_user_resolve(u->valuestring, pw, gr, &out->uid, &out->gid, err, errlen);
	out->has_user = !ret;
	free(pw);
	free(gr);
	return ret;
}

/* The child's work: everything that reads the image. */
static int stage(const struct oci_source_ref *ref, const char *work, const struct oci_limits *lim,
		 struct oci_staged *out, char *err, size_t errlen)
{
	struct oci_image img = { .dir = -1 };
	struct oci_stage s = { .root = -1 };
	char sub[4200];
	int ret;

	snprintf(sub, sizeof(sub), "%s/src", work);
	if ((ret = oci_source_open(ref, sub, lim, &img, err, errlen)))
		goto out;
	snprintf(sub, sizeof(sub), "%s/root", work);
	if ((ret = oci_stage_init(&s, sub))) {
		snprintf(err, errlen, "%s: %s", sub, strerror(-ret));
		goto out;
	}
	if ((ret = apply_layers(&img, &s, lim, err, errlen)) ||
	    (ret = resolve_user(&s, &img, out, err, errlen)) ||
	    (ret = owner_script(&s, work, out, err, errlen)) ||
	    (ret = defaults_text(&img, out, err, errlen)))
		goto out;
	out->docker = img.docker;
	memcpy(out->digest, img.digest, sizeof(out->digest));
	out->layers = img.m.n_layers;
out:
	oci_stage_free(&s);
	oci_source_close(&img);
	return ret;
}

static void child(int wfd, const struct oci_source_ref *ref, const char *work,
		  const struct oci_limits *lim)
{
	/* iconv's modules, in case libarchive converts a name's charset. */
	const char *ro[] = { ref->path, "/usr/lib/x86_64-linux-gnu/gconv", NULL };
	const char *rw[] = { work, NULL };
	struct reply *r = calloc(1, sizeof(*r));
	int abi;

	if (!r)
		_exit(70);
	signal(SIGPIPE, SIG_DFL);
	abi = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : confine_landlock_symlinks(ro, rw);
	if (abi < 0) {
		r->ret = abi;
		snprintf(r->err, sizeof(r->err), "cannot confine the unpacker: %s", strerror(-abi));
	} else {
		r->ret = stage(ref, work, lim, &r->staged, r->err, sizeof(r->err));
	}
	for (size_t done = 0; done < sizeof(*r);) {
		ssize_t n = write(wfd, (char *)r + done, sizeof(*r) - done);

		if (n <= 0)
			_exit(71);
		done += (size_t)n;
	}
	_exit(0);
}

int oci_unpack(const char *source, const char *work, const struct oci_limits *lim,
	       struct oci_staged *out, char *err, size_t errlen)
{
	struct oci_source_ref ref;
	struct reply *r = calloc(1, sizeof(*r));
	size_t got = 0;
	int p[2], st = 0, ret;
	pid_t pid;

	if (!r)
		return -ENOMEM;
	if ((ret = oci_source_parse(source, &ref, err, errlen)))
		goto out;
	if (pipe2(p, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	fflush(NULL);
	if ((pid = fork()) == 0) {
		close(p[0]);
		child(p[1], &ref, work, lim);
	}
	close(p[1]);
	while (pid > 0 && got < sizeof(*r)) {
		ssize_t n = read(p[0], (char *)r + got, sizeof(*r) - got);

		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		got += n > 0 ? (size_t)n : 0;
	}
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || got != sizeof(*r) || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		snprintf(err, errlen, "the unpacker died (%s %d) before it finished",
			 WIFSIGNALED(st) ? "signal" : "status",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		ret = -ECHILD;
		goto out;
	}
	ret = r->ret;
	r->err[sizeof(r->err) - 1] = 0;
	snprintf(err, errlen, "%s", r->err);
	if (!ret)
		*out = r->staged;
	out->digest[sizeof(out->digest) - 1] = 0;
	out->defaults[sizeof(out->defaults) - 1] = 0;
out:
	free(r);
	return ret;
}
