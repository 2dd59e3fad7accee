/*
 * GET /v1/templates/NAME: a template as a bundle (`mvm template export`,
 * snapshots/tpl_bundle.h), so that hosts pull templates from each other
 * (issue 29). The bundle is made by the `mvm` beside this server into a
 * private directory, opened, unlinked, then streamed: the caller never
 * names a host path, and what it receives is checked by the importer
 * (digests before use, re-sealed by the receiving host's key).
 *
 * A tenant may fetch any template it may create from (the operator's, and
 * its own: serve_tpl_scope.h): whoever may start a sandbox from a template
 * can read all of its memory anyway. Bundles are as big as the template (memory, layers, the
 * image), so at most SV_TPL_EXPORTS are made at once on the whole server,
 * besides each tenant's transfer slots (serve_http.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshots/template.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_tpl_scope.h"

#define SV_TPL_EXPORTS 2

static atomic_int exports;

struct tpl_stream {
	int fd;
};

static ssize_t tpl_read(void *cls, char *buf, size_t max)
{
	struct tpl_stream *t = cls;
	ssize_t n;

	do
		n = read(t->fd, buf, max);
	while (n < 0 && errno == EINTR);
	return n;
}

static void tpl_done(void *cls)
{
	struct tpl_stream *t = cls;

	close(t->fd);
	free(t);
}

/* Export @name into a fresh private directory; the open bundle, or -1 with @err. */
static int export_open(const char *name, char *err, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], file[PATH_MAX + 16];
	int st, fd = -1;

	if (snprintf(dir, sizeof(dir), "%s/mvm-serve-tpl.XXXXXX", tmp && *tmp == '/' ? tmp : "/var/tmp") >=
		    (int)sizeof(dir) || !mkdtemp(dir)) {
		snprintf(err, cap, "no private directory for the bundle: %s", strerror(errno));
		return -1;
	}
	snprintf(file, sizeof(file), "%s/bundle", dir);
	st = sv_run_mvm((char *const[]){ "mvm", "template", "export", (char *)name, file, NULL }, -1, err, cap);
	if (st == 0) {
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			snprintf(err, cap, "the bundle: %s", strerror(errno));
	} else if (st < 0) {
		snprintf(err, cap, "%s", strerror(-st));
	} else if (!err[0]) {
		snprintf(err, cap, "mvm template export ended with status %d", st);
	}
	unlink(file);
	rmdir(dir);
	return fd;
}

void sv_op_template_get(struct sv_call *c, struct sv_out *o)
{
	char err[512], store[SV_TENANT_MAX + SV_TPL_MAX + 2];
	struct tpl_stream *t;
	int fd;

	/* The tenant's own (TENANT.NAME) or the operator's; another tenant's is not found. */
	if (sv_tpl_resolve(&c->s->pol, c->tenant.name, c->r.tpl, store, sizeof(store), err, sizeof(err))) {
		sv_reply_error(o, 404, "no template named %s", c->r.tpl);
		return;
	}
	if (atomic_fetch_add(&exports, 1) >= SV_TPL_EXPORTS) {
		atomic_fetch_sub(&exports, 1);
		sv_reply_error(o, 503, "busy: %d template bundles are being made; retry", SV_TPL_EXPORTS);
		return;
	}
	fd = export_open(store, err, sizeof(err));
	atomic_fetch_sub(&exports, 1);
	err[strcspn(err, "\n")] = '\0';
	t = fd >= 0 ? malloc(sizeof(*t)) : NULL;
	if (!t) {
		if (fd >= 0)
			close(fd);
		sv_reply_error(o, 500, "template %s: %s", c->r.tpl, fd >= 0 ? "out of memory" : err);
		return;
	}
	t->fd = fd;
	o->status = 200;
	o->type = "application/octet-stream";
	o->read = tpl_read;
	o->done = tpl_done;
	o->cls = t;
	snprintf(o->outcome, sizeof(o->outcome), "ok");
}
