/*
 * VMM side of the control API. Clients are local and trusted as much as the
 * user who owns the state directory (the socket is 0600 in a 0700 dir), but
 * requests are still bounded: a line of at most API_REQ_MAX bytes, a few
 * clients at once, and nothing here ever blocks the event loop.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/io_census.h"
#include "devices/virtio_devices.h"
#include "vmm/confine/pidns.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_api.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/sandbox/snap_api.h"
#include "vmm/vm.h"

#define API_REQ_MAX 4096
#define API_CLIENTS 8

struct api_client {
	struct sb_api *api;
	int fd;
	size_t len;
	char buf[API_REQ_MAX + 1];
};

struct sb_api {
	struct vm *vm;
	char name[64];
	char path[108];
	int lfd;
	struct api_client cl[API_CLIENTS];
};

static void drop(struct api_client *c)
{
	ev_del(&c->api->vm->loop, c->fd);
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

#ifdef MVM_TEST_HOOKS
/* Test-hooks build only: "test_disk_io", the disk system calls per thread
 * kind (common/io_census.h), for tests/integration/blk-nonblocking.sh. */
static void add_test_disk_io(cJSON *r)
{
	cJSON *t = cJSON_AddObjectToObject(r, "test_disk_io");
	struct io_census c;

	io_census_get(&c);
	for (int k = 0; t && k < IO_KINDS; k++) {
		cJSON *o = cJSON_AddObjectToObject(t, io_census_kind_name(k));

		cJSON_AddNumberToObject(o, "calls", (double)c.calls[k]);
		cJSON_AddNumberToObject(o, "read", (double)c.read[k]);
		cJSON_AddNumberToObject(o, "written", (double)c.written[k]);
	}
}
#else
static void add_test_disk_io(cJSON *r)
{
	(void)r;
}
#endif

static cJSON *status_reply(struct sb_api *a)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddBoolToObject(r, "ok", 1);
	cJSON_AddStringToObject(r, "name", a->name);
	cJSON_AddStringToObject(r, "status", vm_is_paused(a->vm) ? "paused" : "running");
	cJSON_AddNumberToObject(r, "pid", confine_pidns_self());
	cJSON_AddNumberToObject(r, "uptime_s", vm_elapsed(a->vm));
	cJSON_AddNumberToObject(r, "cpus", a->vm->ncpus);
	cJSON_AddNumberToObject(r, "guest_resident_kib", (double)vm_guest_resident_kib(a->vm));
	add_test_disk_io(r);
	return r;
}

/* The running rules into policy.json (we run in the state directory), so
 * they hold after stop/start too. A failure is logged, the change stays. */
static void persist_rules(struct sb_api *a)
{
	char *j = virtio_net_show(a->vm);
	int ret = j ? sb_policy_persist(SB_POLICY_FILE, j) : -ENOMEM;

	if (ret)
		fprintf(stderr, "mvm vmm: cannot save the network rules to %s: %s\n",
			SB_POLICY_FILE, strerror(-ret));
	free(j);
}

/* net-check {"dest": "host[:port][/proto]"}: a dry run (docs/api.md). */
static cJSON *net_check(struct sb_api *a, const cJSON *req, const char **err, char *ebuf,
			size_t elen)
{
	const cJSON *dest = cJSON_GetObjectItemCaseSensitive(req, "dest");
	cJSON *r;
	int v;

	if (!cJSON_IsString(dest)) {
		*err = "expected {\"op\":\"net-check\",\"dest\":\"HOST[:PORT][/tcp|/udp]\"}";
		return NULL;
	}
	v = virtio_net_check(a->vm, dest->valuestring, ebuf, elen);
	if (v < 0) {
		*err = ebuf;
		return NULL;
	}
	r = cJSON_CreateObject();
	cJSON_AddBoolToObject(r, "ok", 1);
	cJSON_AddBoolToObject(r, "allowed", v == 1);
	cJSON_AddStringToObject(r, "why", ebuf);
	return r;
}

/* net-allow / net-deny / net-remove {"rule": ...}, net-show (docs/api.md). */
static cJSON *net_op(struct sb_api *a, const char *verb, const cJSON *req, const char **err,
		     char *ebuf, size_t elen)
{
	const cJSON *rule = cJSON_GetObjectItemCaseSensitive(req, "rule");
	cJSON *r;
	char *j;

	if (!strcmp(verb, "show")) {
		j = virtio_net_show(a->vm);
		if (!j) {
			*err = "this sandbox has no network device";
			return NULL;
		}
		r = cJSON_CreateObject();
		cJSON_AddBoolToObject(r, "ok", 1);
		cJSON_AddItemToObject(r, "policy", cJSON_Parse(j));
		free(j);
		return r;
	}
	if (!cJSON_IsString(rule)) {
		*err = "expected {\"op\":\"net-allow\",\"rule\":\"HOST[:PORTS][/tcp|/udp]\"}";
		return NULL;
	}
	if (virtio_net_rule(a->vm, verb, rule->valuestring, ebuf, elen)) {
		*err = ebuf;
		return NULL;
	}
	persist_rules(a);
	return NULL;
}

static cJSON *handle(struct sb_api *a, const char *line, bool *stop)
{
	cJSON *req = cJSON_Parse(line), *r = NULL;
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(req, "op");
	const char *err = NULL;
	char ebuf[512];

	if (!cJSON_IsString(op)) {
		err = "expected {\"op\": ...}";
	} else if (!strcmp(op->valuestring, "status")) {
		r = status_reply(a);
	} else if (!strcmp(op->valuestring, "pause")) {
		err = vm_pause(a->vm) ? "cannot pause the vCPUs" : NULL;
		if (!err)
			sb_event(a->name, "paused");
	} else if (!strcmp(op->valuestring, "resume")) {
		vm_resume(a->vm);
		sb_event(a->name, "resumed");
	} else if (!strcmp(op->valuestring, "shutdown")) {
		*stop = true;
	} else if (!strcmp(op->valuestring, "net-allow") || !strcmp(op->valuestring, "net-deny") ||
		   !strcmp(op->valuestring, "net-remove") || !strcmp(op->valuestring, "net-show")) {
		r = net_op(a, op->valuestring + 4, req, &err, ebuf, sizeof(ebuf));
	} else if (!strcmp(op->valuestring, "net-check")) {
		r = net_check(a, req, &err, ebuf, sizeof(ebuf));
	} else if (snap_api_handles(op->valuestring)) {
		r = snap_api_op(a->vm, a->name, op->valuestring, req, &err, ebuf, sizeof(ebuf));
	} else {
		err = "unknown op (status, pause, resume, shutdown, net-allow, net-deny, net-remove, "
		      "net-show, net-check, checkpoint, checkpoints, rollback, snapshot)";
	}
	cJSON_Delete(req);
	if (!r) {
		r = cJSON_CreateObject();
		cJSON_AddBoolToObject(r, "ok", !err);
		if (err)
			cJSON_AddStringToObject(r, "error", err);
	}
	return r;
}

static void on_client(void *opaque, uint32_t events)
{
	struct api_client *c = opaque;
	bool stop = false;
	ssize_t n = read(c->fd, c->buf + c->len, API_REQ_MAX - c->len);
	char *nl, *text;
	cJSON *r;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	nl = strchr(c->buf, '\n');
	if (!nl && c->len < API_REQ_MAX)
		return;
	if (nl)
		*nl = 0;
	r = handle(c->api, nl ? c->buf : "", &stop);
	text = cJSON_PrintUnformatted(r);
	if (text) {
		/* A reply of a few hundred bytes fits any socket buffer. */
		(void)!send(c->fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)!send(c->fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	free(text);
	cJSON_Delete(r);
	drop(c);
	if (stop)
		vm_request_stop(c->api->vm, VM_EXITED, 0, "shutdown requested through the API");
}

static void on_accept(void *opaque, uint32_t events)
{
	struct sb_api *a = opaque;
	int fd = accept4(a->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (int i = 0; i < API_CLIENTS; i++) {
		struct api_client *c = &a->cl[i];

		if (c->fd >= 0)
			continue;
		c->fd = fd;
		if (ev_add(&a->vm->loop, fd, EPOLLIN, on_client, c) == 0)
			return;
		c->fd = -1;
		break;
	}
	close(fd);		/* busy: the client sees EOF and may retry */
}

int sb_api_start(struct vm *vm, const char *name, const char *sock_path, struct sb_api **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sb_api *a = calloc(1, sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	a->vm = vm;
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->path, sizeof(a->path), "%s", sock_path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	for (int i = 0; i < API_CLIENTS; i++) {
		a->cl[i].fd = -1;
		a->cl[i].api = a;
	}
	unlink(sock_path);
	a->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ret = a->lfd < 0 || bind(a->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	      chmod(sock_path, 0600) || listen(a->lfd, 16) ? -errno : 0;
	if (!ret)
		ret = ev_add(&vm->loop, a->lfd, EPOLLIN, on_accept, a);
	if (ret) {
		if (a->lfd >= 0)
			close(a->lfd);
		free(a);
		return ret;
	}
	*out = a;
	return 0;
}

void sb_api_stop(struct sb_api *a)
{
	if (!a)
		return;
	for (int i = 0; i < API_CLIENTS; i++)
		if (a->cl[i].fd >= 0)
			drop(&a->cl[i]);
	ev_del(&a->vm->loop, a->lfd);
	close(a->lfd);
	unlink(a->path);
	free(a);
}
