/*
 * POST /v1/sandboxes: check the body, then the operator policy
 * (tools/sandbox/operator_policy.h: images and templates by store name,
 * every allow rule under the ceiling), then the tenant's quota, then run
 * `mvm create TENANT.NAME --owner tenant:TENANT ...` as a child (the CLI's
 * option checks and its create are one code path with the CLI's; a boot
 * that crashes takes only the child down). The env reaches the child
 * through a memfd (--env-fd), never its command line.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/agent/proto.h"
#include "snapshots/template.h"
#include "tools/sandbox/baseline.h"
#include "tools/sandbox/sandbox.h"
#include "tools/serve/serve.h"
#include "tools/serve/serve_tpl_scope.h"
#include "tools/serve/serve_quota.h"

#define ERR_CAP 2048
#define MAX_ARGS (20 + 2 * SV_MAX_ENV + 2 * SV_MAX_ALLOW)

extern char **environ;

#define ENV_FD 3	/* where the child finds the env records (--env-fd) */

/* The create's env as NUL-ended K=V records in a memfd (close-on-exec: only
 * the child that gets it as ENV_FD sees it). fd, -1 for none, or -errno. */
static int env_memfd(const struct sv_create *cr)
{
	int fd;

	if (!cr->nenv)
		return -1;
	fd = memfd_create("mvm-env", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < cr->nenv; i++) {
		if (ap_write_all(fd, cr->env[i], strlen(cr->env[i]) + 1)) {
			close(fd);
			return -EIO;
		}
	}
	if (lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return -errno;
	}
	if (fd == ENV_FD) {	/* a dup2 onto itself would keep close-on-exec */
		int n = fcntl(fd, F_DUPFD_CLOEXEC, ENV_FD + 1);

		close(fd);
		fd = n < 0 ? -errno : n;
	}
	return fd;
}

int sv_run_mvm(char *const argv[], int env_fd, char *err, size_t cap)
{
	return sv_run_mvm_out(argv, env_fd, -1, err, cap);
}

int sv_run_mvm_out(char *const argv[], int env_fd, int out_fd, char *err, size_t cap)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	int p[2], st = 0;
	size_t n = 0;
	pid_t pid;

	err[0] = '\0';
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	if (env_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, env_fd, ENV_FD);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	st = posix_spawn(&pid, sb_self_exe(), &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (st) {
		close(p[0]);
		return -st;
	}
	for (;;) {
		char buf[512];
		ssize_t r = read(p[0], buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r && n + 1 < cap; i++)
			err[n++] = buf[i];
		err[n] = '\0';
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct argv_b {
	char *v[MAX_ARGS + 1];
	int n;
	char mem[32], cpus[16], fd[16], life[16];
};

static void arg(struct argv_b *a, const char *s)
{
	if (a->n < MAX_ARGS)
		a->v[a->n++] = (char *)s;
}

static void build_argv(struct argv_b *a, const struct sv_call *c, const struct sv_create *cr,
		       const char *image)
{
	arg(a, "mvm");
	arg(a, "create");
	arg(a, c->host);
	arg(a, "--owner");
	arg(a, c->owner);
	if (image[0]) {
		arg(a, "--image");
		arg(a, image);
	}
	if (cr->template_name[0]) {
		arg(a, "--template");
		arg(a, cr->template_name);
	}
	if (cr->lifetime_s) {	/* the VMM stops it then: the host's limit, not the guest's */
		snprintf(a->life, sizeof(a->life), "%u", cr->lifetime_s);
		arg(a, "--lifetime");
		arg(a, a->life);
	}
	if (cr->cpus) {
		snprintf(a->cpus, sizeof(a->cpus), "%d", cr->cpus);
		arg(a, "--cpus");
		arg(a, a->cpus);
	}
	if (cr->memory) {
		snprintf(a->mem, sizeof(a->mem), "%lluK", (unsigned long long)(cr->memory >> 10));
		arg(a, "--memory");
		arg(a, a->mem);
	}
	if (cr->nenv) {
		snprintf(a->fd, sizeof(a->fd), "%d", ENV_FD);
		arg(a, "--env-fd");
		arg(a, a->fd);
	}
	/* No rules: no network device at all. Rules come only from the caller.
	 * A template fixes its own machine, network device or not: without
	 * rules its sandbox's device lets nothing out. */
	if (!cr->nallow && !cr->template_name[0]) {
		arg(a, "--net");
		arg(a, "none");
	}
	for (int i = 0; i < cr->nallow; i++) {
		arg(a, "--allow");
		arg(a, cr->allow[i]);
	}
	a->v[a->n] = NULL;
}

const char *sv_child_reason(char *err)
{
	size_t n = strlen(err);
	char *nl, *colon;

	while (n && err[n - 1] == '\n')
		err[--n] = '\0';
	nl = strrchr(err, '\n');
	err = nl ? nl + 1 : err;
	colon = !strncmp(err, "mvm ", 4) ? strstr(err, ": ") : NULL;
	return colon ? colon + 2 : err;
}

void sv_remove_sandbox(const char *host)
{
	if (sb_vmm_pid(host) > 0)
		sb_stop(host, 10);
	baseline_remove(host);
	sb_remove_state(host);
}

/* After the create: the real sizes (a template fixes its own) within quota, else removed. */
static int recheck(struct sv_call *c, struct sv_out *o)
{
	struct sv_quota use, none = { 0 };
	char why[256];

	if (sv_quota_usage(c->tenant.name, &use) || !sv_quota_check(&c->tenant.quota, &use, &none, why, sizeof(why)))
		return 0;
	sv_remove_sandbox(c->host);
	sv_reply_error(o, 429, "%s (the sandbox was removed)", why);
	return -1;
}

static void create_run(struct sv_call *c, struct sv_out *o, const struct sv_create *cr, const char *image)
{
	struct sv_quota add = { .sandboxes = 1, .cpus = cr->cpus ? cr->cpus : 1,
				.memory = cr->memory ? cr->memory : 512ull << 20, .disk = 1ull << 30 };
	struct argv_b *a = calloc(1, sizeof(*a));
	char why[256], *err = malloc(ERR_CAP);
	int slot, st, efd = -1;

	if (!a || !err) {
		sv_reply_error(o, 500, "out of memory");
		goto out;
	}
	slot = sv_quota_reserve(c->s, c->tenant.name, c->host, &c->tenant.quota, &add, why, sizeof(why));
	if (slot < 0) {
		sv_reply_error(o, slot == -1 ? 429 : slot == -2 ? 503 : 409, "%s", why);
		goto out;
	}
	build_argv(a, c, cr, image);
	efd = env_memfd(cr);
	st = efd < -1 ? efd : sv_run_mvm(a->v, efd, err, ERR_CAP);
	/* Never a half-made sandbox: one that did not boot goes (the name was
	 * free and reserved by this request, so what is there is its own). */
	if (st)
		sv_remove_sandbox(c->host);
	sv_quota_release(c->s, slot);
	if (st) {
		sv_reply_error(o, st == 2 ? 400 : 500, "create: %s", st < 0 ? strerror(-st) : sv_child_reason(err));
		goto out;
	}
	if (!recheck(c, o))
		sv_reply_sandbox(c, o, 201);
out:
	if (efd >= 0)
		close(efd);
	free(a);
	free(err);
}

/* The operator policy on the body: images and templates by name, rules under the ceiling. 0 or -1 with @o. */
static int create_policy(struct sv_call *c, struct sv_out *o, struct sv_create *cr, char *image,
			 size_t cap)
{
	char err[512];
	int st = 0;

	if (cr->image[0])
		st = op_image_resolve(&c->s->pol, cr->image, image, cap, err, sizeof(err));
	if (!st && cr->template_name[0]) {
		/* Its own TENANT.NAME first, else the operator's; never another tenant's. */
		char store[sizeof(cr->template_name)];

		st = sv_tpl_resolve(&c->s->pol, c->tenant.name, cr->template_name, store, sizeof(store), err,
				    sizeof(err));
		if (!st)
			snprintf(cr->template_name, sizeof(cr->template_name), "%s", store);
	}
	for (int i = 0; !st && i < cr->nallow; i++)
		st = op_check_allow_rule(&c->s->pol, cr->allow[i], err, sizeof(err));
	if (st)
		sv_reply_error(o, st == -ENOENT ? 404 : st == -EPERM ? 403 : 400, "%s", err);
	return st ? -1 : 0;
}

void sv_op_create(struct sv_call *c, struct sv_out *o)
{
	char image[PATH_MAX] = "", err[256];
	struct sv_create cr;
	int st = sv_create_parse(c->body, c->len, &cr, err, sizeof(err));

	if (st) {
		sv_reply_error(o, st, "%s", err);
		return;
	}
	snprintf(c->r.name, sizeof(c->r.name), "%s", cr.name);
	if (sv_host_name(c->tenant.name, cr.name, c->host, sizeof(c->host)) ||
	    op_owner_make("tenant", c->tenant.name, c->owner, sizeof(c->owner)))
		sv_reply_error(o, 400, "name too long");
	else if (!create_policy(c, o, &cr, image, sizeof(image)))
		create_run(c, o, &cr, image);
	sv_create_free(&cr);
}

/*
 * POST /v1/sandboxes/NAME/fork {"name": NEW}: `mvm fork TENANT.NAME
 * TENANT.NEW` as a child, within the quota (the copy has NAME's size). A
 * fork made by the CLI has no owner (sandbox_restore.c: a snapshot's claim
 * is not trusted), so the tenant's is recorded here, sealed, before the
 * copy is answered; until then no tenant sees it. No network rules
 * (nothing leaves until the tenant adds some).
 */
static int own_fork(const char *host, const char *owner)
{
	struct sb_config cfg;
	int ret = sb_config_load(host, &cfg);

	if (ret)
		return ret;
	snprintf(cfg.owner, sizeof(cfg.owner), "%s", owner);
	ret = sb_config_save(&cfg);
	sb_config_free(&cfg);
	return ret;
}

void sv_op_fork(struct sv_call *c, struct sv_out *o)
{
	char name[SV_NAME_MAX + 1], host[sizeof(c->host)], why[256], *err = NULL;
	char *argv[] = { "mvm", "fork", c->host, host, NULL };
	struct sv_quota add = { .sandboxes = 1, .cpus = 1 };
	struct sb_config cfg;
	int st = sv_fork_parse(c->body, c->len, name, sizeof(name), why, sizeof(why)), slot;

	if (st) {
		sv_reply_error(o, st, "%s", why);
		return;
	}
	if (sb_vmm_pid(c->host) <= 0) {
		sv_reply_error(o, 409, "sandbox %s is not running", c->r.name);
		return;
	}
	if (sv_host_name(c->tenant.name, name, host, sizeof(host)) || sb_config_load(c->host, &cfg)) {
		sv_reply_error(o, 400, "name too long");
		return;
	}
	/* Its disk's reservation and the snapshot it starts from (kept in its state dir). */
	add = (struct sv_quota){ .sandboxes = 1, .cpus = cfg.cpus, .memory = cfg.mem,
				 .disk = cfg.disk_size + sv_quota_tpl_bound(cfg.mem, cfg.disk_size) };
	sb_config_free(&cfg);
	slot = sv_quota_reserve(c->s, c->tenant.name, host, &c->tenant.quota, &add, why, sizeof(why));
	if (slot < 0) {
		sv_reply_error(o, slot == -1 ? 429 : slot == -2 ? 503 : 409, "%s", why);
		return;
	}
	st = (err = malloc(ERR_CAP)) ? sv_run_mvm(argv, -1, err, ERR_CAP) : -ENOMEM;
	if (!st && (op_owner_make("tenant", c->tenant.name, c->owner, sizeof(c->owner)) ||
		    own_fork(host, c->owner))) {
		snprintf(err, ERR_CAP, "cannot record the fork's owner");
		st = 1;
	}
	if (st)
		sv_remove_sandbox(host);
	sv_quota_release(c->s, slot);
	if (st) {
		sv_reply_error(o, 500, "fork: %s", st < 0 ? strerror(-st) : sv_child_reason(err));
	} else if (sv_quota_disk_recheck(c->tenant.name, &c->tenant.quota, why, sizeof(why))) {
		/* Measured: the snapshot's layers took more than the bound (a checkpointed source). */
		sv_remove_sandbox(host);
		sv_reply_error(o, 429, "fork: %s (the fork was removed)", why);
	} else {
		snprintf(c->host, sizeof(c->host), "%s", host);
		snprintf(c->r.name, sizeof(c->r.name), "%s", name);
		sv_reply_sandbox(c, o, 201);
	}
	free(err);
}
