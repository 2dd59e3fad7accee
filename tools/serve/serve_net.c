/*
 * A sandbox's network rules and events over HTTP. GET /network shows the
 * mode and rules; POST /network {"allow"|"deny"|"remove": RULE} changes
 * them (a running sandbox through its control API, at once; a stopped one
 * in its stored policy.json, for the next start). An allow rule must stay
 * under the operator's ceiling (op_check_allow_rule) like create's.
 * GET /events: the sandbox's events.jsonl as NDJSON.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/sandbox/api_client.h"
#include "tools/sandbox/sandbox.h"
#include "tools/sandbox/sandbox_policy.h"
#include "tools/serve/serve.h"

#define RULE_CAP   256
#define EVENTS_MAX (8u << 20)

/* Refuse a sandbox made without a network device. 0 or -1 with @o. */
static int has_net(struct sv_call *c, struct sv_out *o)
{
	struct sb_config cfg;
	bool off;

	if (sb_config_load(c->host, &cfg)) {
		sv_reply_error(o, 500, "cannot read the configuration of %s", c->r.name);
		return -1;
	}
	off = cfg.net_off;
	sb_config_free(&cfg);
	if (off)
		sv_reply_error(o, 409, "%s has no network device (created without allow rules)", c->r.name);
	return off ? -1 : 0;
}

/* The mode and rules now: the VMM's when it runs, else policy.json's. */
static void show(struct sv_call *c, struct sv_out *o, int status)
{
	char msg[512] = "", *json = NULL;
	cJSON *req, *r;

	if (sb_vmm_pid(c->host) > 0) {
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "net-show");
		if ((r = sv_api(c, o, req, 10000, 400))) {
			/* The VMM answers {"policy": {...}}; the stored file is the inner object. */
			cJSON *in = cJSON_DetachItemFromObjectCaseSensitive(r, "policy");

			if (in) {
				cJSON_Delete(r);
				r = in;
			}
			sv_reply_json(o, status, r);
		}
		return;
	}
	if (sb_policy_show(c->host, &json, msg, sizeof(msg))) {
		sv_reply_error(o, 500, "%s", msg[0] ? msg : "cannot read the stored policy");
		return;
	}
	r = cJSON_Parse(json);
	free(json);
	sv_reply_json(o, status, r);
}

void sv_op_net_show(struct sv_call *c, struct sv_out *o)
{
	if (!has_net(c, o))
		show(c, o, 200);
}

void sv_op_net_edit(struct sv_call *c, struct sv_out *o)
{
	char rule[RULE_CAP], err[512], op[16];
	const char *verb = NULL;
	int st = sv_net_parse(c->body, c->len, &verb, rule, sizeof(rule), err, sizeof(err));
	cJSON *req, *r;

	if (st) {
		sv_reply_error(o, st, "%s", err);
		return;
	}
	if (!strcmp(verb, "allow") && (st = op_check_allow_rule(&c->s->pol, rule, err, sizeof(err)))) {
		sv_reply_error(o, st == -EPERM ? 403 : 400, "%s", err);
		return;
	}
	if (has_net(c, o))
		return;
	if (sb_vmm_pid(c->host) > 0) {
		snprintf(op, sizeof(op), "net-%s", verb);
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", op);
		cJSON_AddStringToObject(req, "rule", rule);
		if (!(r = sv_api(c, o, req, 10000, 400)))
			return;
		cJSON_Delete(r);
	} else if (sb_policy_edit(c->host, verb, rule, err, sizeof(err))) {
		sv_reply_error(o, 400, "%s", err);
		return;
	}
	show(c, o, 200);
}

/* Up to EVENTS_MAX bytes of the regular file @path, never through a symlink
 * (a VMM writes in its state directory: a compromised one could plant one). */
static char *read_events(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	char *buf = NULL;
	struct stat st;
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return errno == ENOENT ? strdup("") : NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (buf = malloc(EVENTS_MAX + 1))) {
		n = read(fd, buf, EVENTS_MAX);
		*len = n > 0 ? (size_t)n : 0;
		buf[*len] = '\0';
	}
	close(fd);
	return buf;
}

void sv_op_events(struct sv_call *c, struct sv_out *o)
{
	char path[PATH_MAX];
	size_t len;

	if (sb_path(c->host, "events.jsonl", path, sizeof(path)) || !(o->body = read_events(path, &len))) {
		sv_reply_error(o, 500, "cannot read the events of %s", c->r.name);
		return;
	}
	o->status = 200;
	o->len = len;
	o->type = "application/x-ndjson";
	snprintf(o->outcome, sizeof(o->outcome), "ok");
}
