/* `mvm serve`'s own request handling: routing, body parsing, tenant names,
 * tokens, rate buckets, quotas, --listen and the verb's options (issue 28). */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cli/cmd_sandbox.h"
#include "tools/serve/serve.h"
#include "common/file_io.h"
#include "tools/serve/serve_quota.h"

static int route(const char *m, const char *p, struct sv_route *r)
{
	char err[128];

	return sv_route(m, p, r, err, sizeof(err));
}

Test(serve_route, the_contract_paths_route_to_their_ops)
{
	static const struct { const char *m, *p; enum sv_op op; } ok[] = {
		{ "GET", "/v1/health", SV_HEALTH }, { "GET", "/v1/capacity", SV_CAPACITY },
		{ "GET", "/v1/sandboxes", SV_LIST }, { "POST", "/v1/sandboxes", SV_CREATE },
		{ "GET", "/v1/sandboxes/web", SV_GET }, { "DELETE", "/v1/sandboxes/web", SV_DELETE },
		{ "POST", "/v1/sandboxes/web/exec", SV_EXEC }, { "GET", "/v1/sandboxes/web/files", SV_FILE_GET },
		{ "PUT", "/v1/sandboxes/web/files", SV_FILE_PUT }, { "POST", "/v1/sandboxes/web/stop", SV_STOP },
		{ "GET", "/v1/sandboxes/web/tree", SV_TREE_GET }, { "PUT", "/v1/sandboxes/web/tree", SV_TREE_PUT },
		{ "PUT", "/v1/sandboxes/web/workspace", SV_WORKSPACE_PUT }, { "GET", "/v1/sandboxes/web/diff", SV_DIFF },
		{ "POST", "/v1/sandboxes/web/promote", SV_PROMOTE },
		{ "POST", "/v1/sandboxes/web/template", SV_TEMPLATE_MAKE }, { "DELETE", "/v1/templates/py", SV_TEMPLATE_RM },
		{ "GET", "/v1/templates/py", SV_TEMPLATE_GET },
		{ "POST", "/v1/sandboxes/web/start", SV_START },
		{ "POST", "/v1/sandboxes/web/checkpoints", SV_CHECKPOINT },
		{ "GET", "/v1/sandboxes/web/checkpoints", SV_CHECKPOINTS },
		{ "POST", "/v1/sandboxes/web/rollback", SV_ROLLBACK },
		{ "GET", "/v1/sandboxes/web/network", SV_NET_SHOW }, { "POST", "/v1/sandboxes/web/network", SV_NET_EDIT },
		{ "GET", "/v1/sandboxes/web/events", SV_EVENTS }, { "POST", "/v1/sandboxes/web/fork", SV_FORK },
	};
	struct sv_route r;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(route(ok[i].m, ok[i].p, &r), 0, "%s %s", ok[i].m, ok[i].p);
		cr_assert_eq(r.op, ok[i].op, "%s %s", ok[i].m, ok[i].p);
	}
	cr_assert_str_eq(r.name, "web");
	route("PUT", "/v1/sandboxes/web/files", &r);
	cr_assert(r.has_body && !r.json_body);
	route("POST", "/v1/sandboxes/web/exec", &r);
	cr_assert(r.has_body && r.json_body);
}

Test(serve_route, unknown_paths_404_wrong_methods_405_bad_names_400)
{
	struct sv_route r;

	cr_assert_eq(route("GET", "/v1/nope", &r), 404);
	cr_assert_eq(route("GET", "/v2/sandboxes", &r), 404);
	cr_assert_eq(route("GET", "/v1/sandboxes/web/exec/more", &r), 404);
	cr_assert_eq(route("GET", "/v1/sandboxes/", &r), 400);
	cr_assert_eq(route("GET", "/v1/sandboxes//exec", &r), 400);
	cr_assert_eq(route("GET", "/v1/sandboxes/../etc", &r), 400);
	cr_assert_eq(route("GET", "/v1/sandboxes/.hidden", &r), 400);
	cr_assert_eq(route("GET", "/v1/sandboxes/a b", &r), 400);
	cr_assert_eq(route("DELETE", "/v1/sandboxes", &r), 405);
	cr_assert_eq(route("GET", "/v1/sandboxes/web/exec", &r), 405);
	cr_assert_eq(route("POST", "/v1/health", &r), 405);
	cr_assert_eq(route("get", "/v1/health", &r), 405);
	cr_assert_eq(route("GET", "/v1/sandboxes/0123456789012345678901234567890123456789", &r), 400);
}

Test(serve_route, a_template_is_GET_or_DELETE_by_a_store_name_never_a_sandbox)
{
	struct sv_route r;

	cr_assert_eq(route("GET", "/v1/templates/base-1.2", &r), 0);
	cr_assert_eq(r.op, SV_TEMPLATE_GET);
	cr_assert_str_eq(r.tpl, "base-1.2");
	/* not a sandbox name: sv_dispatch's ownership check must not apply */
	cr_assert_str_eq(r.name, "");
	cr_assert_not(r.has_body);
	cr_assert_eq(route("PUT", "/v1/templates/base", &r), 405);
	cr_assert_eq(route("DELETE", "/v1/templates/base", &r), 0);	/* the tenant's own only (serve_tpl_make.c) */
	cr_assert_eq(r.op, SV_TEMPLATE_RM);
	cr_assert_eq(route("POST", "/v1/templates/base", &r), 405);
	cr_assert_eq(route("GET", "/v1/templates/", &r), 400);
	cr_assert_eq(route("GET", "/v1/templates/../base", &r), 400);
	cr_assert_eq(route("GET", "/v1/templates/a/b", &r), 400);
	cr_assert_eq(route("GET", "/v1/templates/.seal", &r), 400);
	cr_assert_eq(route("GET", "/v1/templates", &r), 404);
	/* 63 characters are a template name, 64 are not */
	cr_assert_eq(route("GET", "/v1/templates/t12345678901234567890123456789012345678901234567890123456789012", &r), 0);
	cr_assert_eq(route("GET", "/v1/templates/t123456789012345678901234567890123456789012345678901234567890123", &r), 400);
}

Test(serve_route, a_tenant_owns_only_names_under_its_own_prefix)
{
	char host[80], name[64];

	cr_assert_eq(sv_host_name("alice", "web", host, sizeof(host)), 0);
	cr_assert_str_eq(host, "alice.web");
	cr_assert(sv_own_name("alice", "alice.web", name, sizeof(name)));
	cr_assert_str_eq(name, "web");
	cr_assert(sv_own_name("alice", "alice.web.2", name, sizeof(name)));
	cr_assert_not(sv_own_name("alice", "alicex.web", name, sizeof(name)));
	cr_assert_not(sv_own_name("ali", "alice.web", name, sizeof(name)));
	cr_assert_not(sv_own_name("alice", "alice.", name, sizeof(name)));
	cr_assert_not(sv_own_name("alice", "web", name, sizeof(name)));
	cr_assert_not(sv_own_name("alice", "bob.alice.web", name, sizeof(name)));
	cr_assert(sv_tenant_ok("team-1_a"));
	cr_assert_not(sv_tenant_ok("a.b"));
	cr_assert_not(sv_tenant_ok("Alice"));
	cr_assert_not(sv_tenant_ok("-a"));
	cr_assert_not(sv_tenant_ok(""));
	cr_assert_not(sv_tenant_ok("abcdefghijklmnopqrstuvwxy"));
}

#define CREATE(s, c) sv_create_parse(s, strlen(s), c, err, sizeof(err))

Test(serve_body, create_takes_the_sdk_keys)
{
	const char *b = "{\"name\":\"web\",\"image\":\"debian\",\"cpus\":2,\"memory\":\"1G\","
			"\"env\":{\"A\":\"1\"},\"allow\":[\"example.org:443\"]}";
	struct sv_create c;
	char err[256];

	cr_assert_eq(CREATE(b, &c), 0, "%s", err);
	cr_assert_str_eq(c.name, "web");
	cr_assert_str_eq(c.image, "debian");
	cr_assert_eq(c.cpus, 2);
	cr_assert_eq(c.memory, 1ull << 30);
	cr_assert_eq(c.nenv, 1);
	cr_assert_str_eq(c.env[0], "A=1");
	cr_assert_eq(c.nallow, 1);
	sv_create_free(&c);
	cr_assert_eq(CREATE("{\"name\":\"a\",\"memory\":256,\"template\":\"t\"}", &c), 0, "%s", err);
	cr_assert_eq(c.memory, 256ull << 20);
	cr_assert_str_eq(c.template_name, "t");
	sv_create_free(&c);
}

Test(serve_body, create_refuses_what_it_does_not_understand)
{
	static const char *const bad[] = {
		"", "[]", "{", "null", "{\"image\":\"x\"}", "{\"name\":\"\"}", "{\"name\":\"../x\"}",
		"{\"name\":\"a\",\"extra\":1}", "{\"name\":\"a\",\"image\":\"/etc/passwd\"}",
		"{\"name\":\"a\",\"image\":\"x\",\"template\":\"y\"}", "{\"name\":\"a\",\"cpus\":0}",
		"{\"name\":\"a\",\"cpus\":1.5}", "{\"name\":\"a\",\"cpus\":\"2\"}", "{\"name\":\"a\",\"memory\":\"lots\"}",
		"{\"name\":\"a\",\"memory\":-1}", "{\"name\":\"a\",\"env\":{\"A=B\":\"1\"}}",
		"{\"name\":\"a\",\"env\":{\"A\":1}}", "{\"name\":\"a\",\"env\":[\"A=1\"]}",
		"{\"name\":\"a\",\"allow\":\"x\"}", "{\"name\":\"a\",\"allow\":[1]}",
		"{\"name\":\"a\",\"allow\":[\"--net=open\"]}", "{\"name\":\"a\",\"timeout\":0}",
		"{\"name\":\"a\",\"timeout\":1.5}", "{\"name\":\"a\",\"timeout\":\"60\"}",
		"{\"name\":\"a\",\"timeout\":31622401}",
		"{\"name\":1}",
	};
	struct sv_create c;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(CREATE(bad[i], &c), 400, "accepted %s", bad[i]);
		cr_assert(err[0], "no reason for %s", bad[i]);
		cr_assert_eq(c.nenv + c.nallow, 0);
	}
	cr_assert_eq(sv_create_parse("{\"name\":\"a\"}\0x", 14, &c, err, sizeof(err)), 400);
}

Test(serve_body, create_timeout_is_the_sandbox_lifetime_in_seconds)
{
	struct sv_create c;
	char err[256];

	cr_assert_eq(CREATE("{\"name\":\"a\",\"timeout\":60}", &c), 0, "%s", err);
	cr_assert_eq(c.lifetime_s, 60);
	sv_create_free(&c);
	cr_assert_eq(CREATE("{\"name\":\"a\",\"timeout\":null}", &c), 0, "%s", err);
	cr_assert_eq(c.lifetime_s, 0);
	sv_create_free(&c);
	cr_assert_eq(CREATE("{\"name\":\"a\",\"timeout\":31622400}", &c), 0, "%s", err);
	sv_create_free(&c);
}

Test(serve_body, exec_takes_cmd_or_command)
{
	struct sv_exec x;
	char err[256];
	const char *b = "{\"cmd\":[\"ls\",\"-l\"],\"cwd\":\"/tmp\",\"timeout\":5,\"env\":{\"K\":\"v\"}}";

	cr_assert_eq(sv_exec_parse(b, strlen(b), &x, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(x.argc, 2);
	cr_assert_str_eq(x.argv[1], "-l");
	cr_assert_null(x.argv[2]);
	cr_assert_str_eq(x.cwd, "/tmp");
	cr_assert_eq(x.timeout_s, 5);
	sv_exec_free(&x);
	b = "{\"cmd\":[\"cat\"],\"stdin\":\"abc\"}";
	cr_assert_eq(sv_exec_parse(b, strlen(b), &x, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(x.stdin_len, 3);
	cr_assert_str_eq(x.stdin_data, "abc");
	sv_exec_free(&x);
	cr_assert_null(x.stdin_data);
	b = "{\"command\":\"echo hi | wc -c\"}";
	cr_assert_eq(sv_exec_parse(b, strlen(b), &x, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(x.argc, 3);
	cr_assert_str_eq(x.argv[0], "sh");
	cr_assert_str_eq(x.argv[2], "echo hi | wc -c");
	sv_exec_free(&x);
	static const char *const bad[] = { "{}", "{\"cmd\":[],\"command\":\"x\"}", "{\"cmd\":[]}",
		"{\"cmd\":\"ls\"}", "{\"cmd\":[\"\"]}", "{\"cmd\":[1]}", "{\"command\":\"\"}",
		"{\"cmd\":[\"ls\"],\"cwd\":\"rel\"}", "{\"cmd\":[\"ls\"],\"timeout\":0}",
		"{\"cmd\":[\"ls\"],\"stdin\":1}", "{\"cmd\":[\"ls\"],\"input\":\"x\"}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sv_exec_parse(bad[i], strlen(bad[i]), &x, err, sizeof(err)), 400, "accepted %s", bad[i]);
}

Test(serve_body, tags_and_error_lines)
{
	char tag[48], err[128], *e;

	cr_assert_eq(sv_tag_parse("", 0, false, tag, sizeof(tag), err, sizeof(err)), 0);
	cr_assert_str_eq(tag, "");
	cr_assert_eq(sv_tag_parse("", 0, true, tag, sizeof(tag), err, sizeof(err)), 400);
	cr_assert_eq(sv_tag_parse("{\"tag\":\"t1\"}", 12, true, tag, sizeof(tag), err, sizeof(err)), 0);
	cr_assert_str_eq(tag, "t1");
	cr_assert_eq(sv_tag_parse("{\"tag\":\"../x\"}", 14, true, tag, sizeof(tag), err, sizeof(err)), 400);
	cr_assert_eq(sv_fork_parse("{\"name\":\"w2\"}", 13, tag, sizeof(tag), err, sizeof(err)), 0);
	cr_assert_str_eq(tag, "w2");
	cr_assert_eq(sv_fork_parse("{}", 2, tag, sizeof(tag), err, sizeof(err)), 400);
	cr_assert_eq(sv_fork_parse("{\"name\":\"a/b\"}", 14, tag, sizeof(tag), err, sizeof(err)), 400);
	e = sv_error_json("bad \"x\"\n\x01\xff");
	cr_assert_str_eq(e, "{\"error\":\"bad \\\"x\\\"???\"}\n");
	free(e);
}

Test(serve_body, network_edits_take_one_verb_and_one_rule)
{
	const char *verb = NULL;
	char rule[256], err[128];

	cr_assert_eq(sv_net_parse("{\"allow\":\"example.org:443\"}", 27, &verb, rule, sizeof(rule), err, sizeof(err)), 0);
	cr_assert_str_eq(verb, "allow");
	cr_assert_str_eq(rule, "example.org:443");
	cr_assert_eq(sv_net_parse("{\"remove\":\"x\"}", 14, &verb, rule, sizeof(rule), err, sizeof(err)), 0);
	cr_assert_str_eq(verb, "remove");
	static const char *const bad[] = { "{}", "{\"allow\":\"a\",\"deny\":\"b\"}", "{\"allow\":1}",
		"{\"allow\":\"\"}", "{\"allow\":\"--net\"}", "{\"open\":\"x\"}", "[\"allow\"]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sv_net_parse(bad[i], strlen(bad[i]), &verb, rule, sizeof(rule), err, sizeof(err)), 400,
			     "accepted %s", bad[i]);
}

Test(serve_body, utf8_text_is_strict)
{
	cr_assert(sv_utf8_text((const uint8_t *)"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", 15));
	cr_assert_not(sv_utf8_text((const uint8_t *)"a\0b", 3));
	cr_assert_not(sv_utf8_text((const uint8_t *)"\xc0\xaf", 2));		/* overlong '/' */
	cr_assert_not(sv_utf8_text((const uint8_t *)"\xed\xa0\x80", 3));	/* surrogate */
	cr_assert_not(sv_utf8_text((const uint8_t *)"\xe2\x82", 2));		/* cut */
	cr_assert_not(sv_utf8_text((const uint8_t *)"\xf4\x90\x80\x80", 4));	/* > U+10FFFF */
	cr_assert_not(sv_utf8_text((const uint8_t *)"\xff", 1));
}

static char tmpl[] = "/tmp/mvm-serve-test.XXXXXX";

static const char *tokfile(void)
{
	static char path[128];

	cr_assert_not_null(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/tokens.json", tmpl);
	return path;
}

Test(serve_token, add_prints_a_token_whose_hash_alone_is_kept)
{
	const char *path = tokfile();
	struct sv_quota q = SV_QUOTA_DEFAULT;
	char tok[SV_TOKEN_LEN + 1], tok2[SV_TOKEN_LEN + 1], err[256], *text;
	struct sv_tokens *t = calloc(1, sizeof(*t));
	const struct sv_tenant *hit;
	struct stat st;

	q.templates = 3;
	q.checkpoints = 9;
	cr_assert_eq(sv_token_add(path, "alice", &q, tok, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sv_token_add(path, "bob", &q, tok2, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(strlen(tok), SV_TOKEN_LEN);
	cr_assert_str_neq(tok, tok2);
	cr_assert_eq(sv_token_add(path, "alice", &q, tok2, err, sizeof(err)), -EEXIST);
	cr_assert_eq(sv_token_add(path, "Bad.Name", &q, tok2, err, sizeof(err)), -EINVAL);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	text = file_read_text(path, 1 << 20);
	cr_assert_null(strstr(text, tok + 4), "the token itself is in the file");
	free(text);
	cr_assert_eq(sv_tokens_load(path, t, err, sizeof(err)), 0, "%s", err);
	hit = sv_token_find(t, tok);
	cr_assert(hit && !strcmp(hit->name, "alice"));
	cr_assert_eq(hit->quota.templates, 3, "the template count through the file");
	cr_assert_eq(hit->quota.checkpoints, 9, "the checkpoint count through the file");
	hit = sv_token_find(t, tok2);
	cr_assert(hit && !strcmp(hit->name, "bob"));
	tok[10] ^= 1;
	cr_assert_null(sv_token_find(t, tok));
	cr_assert_null(sv_token_find(t, ""));
	cr_assert_null(sv_token_find(t, NULL));
	cr_assert_null(sv_token_find(t, t->t[0].hash), "the hash is not a token");
	cr_assert_eq(sv_token_rm(path, "alice", err, sizeof(err)), 0);
	cr_assert_eq(sv_token_rm(path, "alice", err, sizeof(err)), -ENOENT);
	cr_assert_eq(sv_tokens_load(path, t, err, sizeof(err)), 0);
	cr_assert_eq(t->n, 1);
	cr_assert_eq(chmod(path, 0640), 0);
	cr_assert_eq(sv_tokens_load(path, t, err, sizeof(err)), -EPERM, "a group-readable file is refused");
	free(t);
}

Test(serve_token, the_file_is_parsed_strictly)
{
	struct sv_tokens *t = calloc(1, sizeof(*t));
	char err[256];
	const char *h = "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"";
	char ok[512], bad[512];

	snprintf(ok, sizeof(ok), "{\"tenants\":{\"a\":{\"sha256\":%s,\"sandboxes\":2,\"memory\":1048576}}}", h);
	cr_assert_eq(sv_tokens_parse(ok, t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t->t[0].quota.sandboxes, 2);
	cr_assert_eq(t->t[0].quota.memory, 1048576);
	cr_assert_eq(t->t[0].quota.cpus, SV_QUOTA_DEFAULT.cpus);
	cr_assert_eq(t->t[0].quota.templates, 2, "no \"templates\": as many as its sandboxes");
	cr_assert_eq(t->t[0].quota.checkpoints, SV_QUOTA_DEFAULT.checkpoints, "no \"checkpoints\": the default");
	snprintf(ok, sizeof(ok), "{\"tenants\":{\"a\":{\"sha256\":%s,\"checkpoints\":5}}}", h);
	cr_assert_eq(sv_tokens_parse(ok, t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t->t[0].quota.checkpoints, 5);
	snprintf(bad, sizeof(bad), "{\"tenants\":{\"a\":{\"sha256\":%s,\"checkpoints\":-1}}}", h);
	cr_assert_eq(sv_tokens_parse(bad, t, err, sizeof(err)), -EINVAL);
	snprintf(ok, sizeof(ok), "{\"tenants\":{\"a\":{\"sha256\":%s,\"sandboxes\":2,\"templates\":7}}}", h);
	cr_assert_eq(sv_tokens_parse(ok, t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t->t[0].quota.templates, 7);
	snprintf(bad, sizeof(bad), "{\"tenants\":{\"a\":{\"sha256\":%s,\"templates\":-1}}}", h);
	cr_assert_eq(sv_tokens_parse(bad, t, err, sizeof(err)), -EINVAL);
	snprintf(bad, sizeof(bad), "{\"tenants\":{\"a\":{\"sha256\":%s,\"templates\":\"9\"}}}", h);
	cr_assert_eq(sv_tokens_parse(bad, t, err, sizeof(err)), -EINVAL);
	snprintf(bad, sizeof(bad), "{\"tenants\":{\"A.b\":{\"sha256\":%s}}}", h);
	cr_assert_eq(sv_tokens_parse(bad, t, err, sizeof(err)), -EINVAL);
	cr_assert_eq(sv_tokens_parse("{\"tenants\":{\"a\":{\"sha256\":\"00\"}}}", t, err, sizeof(err)), -EINVAL);
	snprintf(bad, sizeof(bad), "{\"tenants\":{\"a\":{\"sha256\":%s,\"cpus\":-1}}}", h);
	cr_assert_eq(sv_tokens_parse(bad, t, err, sizeof(err)), -EINVAL);
	cr_assert_eq(sv_tokens_parse("[]", t, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(sv_bearer("Bearer abc"), "abc");
	cr_assert_str_eq(sv_bearer("bearer  abc"), "abc");
	cr_assert_null(sv_bearer("Basic abc"));
	cr_assert_null(sv_bearer(NULL));
	free(t);
}

Test(serve_rate, buckets_refill_at_the_rate_up_to_the_burst)
{
	struct sv_rates *r = calloc(1, sizeof(*r));
	struct sv_bucket *b = sv_bucket_of(r, "a", 3, 1000);

	cr_assert(sv_rate_take(b, 1, 3, 1000) && sv_rate_take(b, 1, 3, 1000) && sv_rate_take(b, 1, 3, 1000));
	cr_assert_not(sv_rate_take(b, 1, 3, 1000));
	cr_assert_not(sv_rate_take(b, 1, 3, 1500));
	cr_assert(sv_rate_take(b, 1, 3, 2000));
	cr_assert_not(sv_rate_take(b, 1, 3, 500), "a clock that went back refills nothing");
	cr_assert_eq(sv_bucket_of(r, "a", 3, 0), b);
	cr_assert_neq(sv_bucket_of(r, "b", 3, 0), b);
	cr_assert(sv_rate_take(b, 1, 3, 100000) && sv_rate_take(b, 1, 3, 100000) && sv_rate_take(b, 1, 3, 100000));
	cr_assert_not(sv_rate_take(b, 1, 3, 100000), "the burst caps the refill");
	free(r);
}

Test(serve_rate, exec_streams_are_capped_per_tenant)
{
	struct sv_server *s = calloc(1, sizeof(*s));

	cr_assert_not_null(s);
	pthread_mutex_init(&s->lock, NULL);
	s->o = SV_OPTS_DEFAULT;
	s->o.max_streams = 2;
	cr_assert(sv_stream_take(s, "a") && sv_stream_take(s, "a"));
	cr_assert_not(sv_stream_take(s, "a"), "a third stream past --max-streams 2");
	cr_assert(sv_stream_take(s, "b"), "another tenant's streams are its own");
	sv_stream_give(s, "a");
	cr_assert(sv_stream_take(s, "a"), "a stream given back is free again");
	for (int i = 0; i < 4; i++)
		sv_stream_give(s, "a");	/* more than taken: never below none */
	cr_assert(sv_stream_take(s, "a") && sv_stream_take(s, "a"));
	cr_assert_not(sv_stream_take(s, "a"), "extra gives made room past the cap");
	free(s);
}

Test(serve_quota, each_limit_refuses_and_says_which)
{
	struct sv_quota q = { 2, 4, 2ull << 30, 10ull << 30, 2, 0 }, use = { 1, 2, 1ull << 30, 1ull << 30, 0, 0 };
	char why[256];

	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 1, 2, 1ull << 30, 1ull << 30, 0, 0 }, why, sizeof(why)), 0);
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 2, 1, 1, 1, 0, 0 }, why, sizeof(why)), -1);
	cr_assert(strstr(why, "sandboxes"));
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 1, 3, 1, 1, 0, 0 }, why, sizeof(why)), -1);
	cr_assert(strstr(why, "vCPUs"));
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 1, 1, (1ull << 30) + 1, 1, 0, 0 }, why, sizeof(why)), -1);
	cr_assert(strstr(why, "memory"));
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 1, 1, 1, UINT64_MAX, 0, 0 }, why, sizeof(why)), -1);
	cr_assert(strstr(why, "disk"));
	/* Templates: their count, only when one is asked for. */
	use.templates = 2;
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ .templates = 1 }, why, sizeof(why)), -1);
	cr_assert(strstr(why, "templates"), "%s", why);
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 1, 1, 1, 1, 0, 0 }, why, sizeof(why)), 0, "%s", why);
	/* Checkpoints: their count over all sandboxes, only when one is asked for. */
	q.checkpoints = 3;
	use.checkpoints = 3;
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ .checkpoints = 1 }, why, sizeof(why)), -1);
	cr_assert(strstr(why, "at most 3 checkpoints"), "%s", why);
	cr_assert_eq(sv_quota_check(&q, &use, &(struct sv_quota){ 1, 1, 1, 1, 0, 0 }, why, sizeof(why)), 0, "%s", why);
}

Test(serve_listen, loopback_is_told_apart)
{
	struct sockaddr_storage sa;
	unsigned len;

	cr_assert_eq(sv_listen_parse("127.0.0.1:7070", &sa, &len), 1);
	cr_assert_eq(sv_listen_parse("127.0.0.2:80", &sa, &len), 1);
	cr_assert_eq(sv_listen_parse("[::1]:7070", &sa, &len), 1);
	cr_assert_eq(sa.ss_family, AF_INET6);
	cr_assert_eq(sv_listen_parse("0.0.0.0:7070", &sa, &len), 0);
	cr_assert_eq(sv_listen_parse("10.1.2.3:7070", &sa, &len), 0);
	cr_assert_eq(sv_listen_parse("[::]:7070", &sa, &len), 0);
	cr_assert_eq(sv_listen_parse("localhost:7070", &sa, &len), -1);
	cr_assert_eq(sv_listen_parse("127.0.0.1", &sa, &len), -1);
	cr_assert_eq(sv_listen_parse("127.0.0.1:0", &sa, &len), -1);
	cr_assert_eq(sv_listen_parse("127.0.0.1:65536", &sa, &len), -1);
	cr_assert_eq(sv_listen_parse("[::1:7070", &sa, &len), -1);
}

static char *av[12], avs[12][64];

static char **argv_of(int n, const char *const *s)
{
	for (int i = 0; i < n; i++) {
		snprintf(avs[i], sizeof(avs[i]), "%s", s[i]);
		av[i] = avs[i];
	}
	av[n] = NULL;
	return av;
}

#define SERVE(a, ...) ({ const char *const _s[] = { "serve", __VA_ARGS__ }; \
	serve_parse((int)(sizeof(_s) / sizeof(_s[0])), argv_of((int)(sizeof(_s) / sizeof(_s[0])), _s), (a)); })

Test(serve_args, options_and_token_subcommands)
{
	struct serve_args a;

	cr_assert_eq(SERVE(&a, "--listen", "0.0.0.0:80", "--tls-cert", "c", "--tls-key", "k", "--rate", "5"), 0);
	cr_assert_str_eq(a.o.listen, "0.0.0.0:80");
	cr_assert_eq(a.o.rate, 5);
	cr_assert_eq(a.npos, 0);
	cr_assert_eq(SERVE(&a, "token", "add", "alice", "--sandboxes", "3", "--memory", "4G"), 0);
	cr_assert_eq(a.npos, 3);
	cr_assert_eq(a.q.sandboxes, 3);
	cr_assert_eq(a.q.memory, 4ull << 30);
	cr_assert_eq(a.q.templates, 3, "no --templates: as many as --sandboxes");
	cr_assert_eq(SERVE(&a, "token", "add", "alice", "--templates", "9"), 0);
	cr_assert_eq(a.q.templates, 9);
	cr_assert_eq(a.q.sandboxes, SV_QUOTA_DEFAULT.sandboxes);
	cr_assert_eq(SERVE(&a, "token", "add", "alice", "--templates", "-1"), -1);
	cr_assert_eq(SERVE(&a, "token", "ls"), 0);
	cr_assert_eq(SERVE(&a, "token", "rm"), -1);
	cr_assert_eq(SERVE(&a, "token", "ls", "x"), -1);
	cr_assert_eq(SERVE(&a, "tokens", "ls"), -1);
	cr_assert_eq(SERVE(&a, "--rate", "0"), -1);
	cr_assert_eq(SERVE(&a, "--rate", "0.01"), 0);
	cr_assert_float_eq(a.o.rate, 0.01, 1e-12);
	cr_assert_eq(SERVE(&a, "--rate", "0.0001"), -1);
	cr_assert_eq(SERVE(&a, "--rate", "1x"), -1);
	cr_assert_eq(SERVE(&a, "--rate", "nan"), -1);
	cr_assert_eq(SERVE(&a, "--rate", "100001"), -1);
	cr_assert_eq(SERVE(&a, "--bogus"), -1);
	cr_assert_eq(SERVE(&a, "--help"), 1);
	SERVE(&a);
	cr_assert_str_eq(a.o.listen, "127.0.0.1:7070");
}

Test(serve_route, results_out_take_no_host_path_and_their_methods_are_fixed)
{
	struct sv_route r;

	cr_assert_eq(route("POST", "/v1/sandboxes/web/diff", &r), 405);
	cr_assert_eq(route("GET", "/v1/sandboxes/web/promote", &r), 405);
	cr_assert_eq(route("GET", "/v1/sandboxes/web/workspace", &r), 405);
	cr_assert_eq(route("PUT", "/v1/sandboxes/web/tree", &r), 0);
	cr_assert(r.has_body && !r.json_body);
	cr_assert_eq(route("PUT", "/v1/sandboxes/web/workspace", &r), 0);
	cr_assert(r.has_body && !r.json_body);
	cr_assert_eq(route("POST", "/v1/sandboxes/web/promote", &r), 0);
	cr_assert(r.has_body && r.json_body);
}

static int promote(const char *body, struct sv_promote *p, char *err)
{
	return sv_promote_parse(body, strlen(body), p, err, 256);
}

Test(serve_route, the_promote_body_is_checks_workspace_and_a_timeout_only)
{
	struct sv_promote p;
	char err[256];

	cr_assert_eq(promote("", &p, err), 0);
	cr_assert_eq(p.nchecks, 0);
	cr_assert_eq(promote("{\"checks\":[\"make test\",\"true\"],\"workspace\":\"/w\",\"check_timeout\":60}", &p, err), 0, "%s", err);
	cr_assert_eq(p.nchecks, 2);
	cr_assert_str_eq(p.checks[0], "make test");
	cr_assert_str_eq(p.workspace, "/w");
	cr_assert_eq(p.check_timeout, 60);
	sv_promote_free(&p);
	cr_assert_eq(promote("{\"out\":\"/etc\"}", &p, err), 400);	/* no host path, ever */
	cr_assert(strstr(err, "unknown key"), "%s", err);
	cr_assert_eq(promote("{\"checks\":\"make\"}", &p, err), 400);
	cr_assert_eq(promote("{\"checks\":[\"\"]}", &p, err), 400);
	cr_assert_eq(promote("{\"checks\":[\"a\", 3]}", &p, err), 400);
	cr_assert_eq(p.nchecks, 0);
	cr_assert_eq(promote("{\"workspace\":\"rel\"}", &p, err), 400);
	cr_assert_eq(promote("{\"check_timeout\":0}", &p, err), 400);
	cr_assert_eq(promote("{\"check_timeout\":1.5}", &p, err), 400);
}

Test(serve_route, a_405_names_the_methods_the_path_takes)
{
	struct sv_route r;

	/* MCP Streamable HTTP: no server-started stream, so GET is a 405 the transport allows. */
	cr_assert_eq(route("GET", "/v1/mcp", &r), 405);
	cr_assert_str_eq(r.allow, "POST, DELETE");
	cr_assert_eq(route("DELETE", "/v1/sandboxes/web/files", &r), 405);
	cr_assert_str_eq(r.allow, "GET, PUT");
	cr_assert_eq(route("GET", "/v1/sandboxes/web/exec", &r), 405);
	cr_assert_str_eq(r.allow, "POST");
	cr_assert_eq(route("PUT", "/v1/sandboxes", &r), 405);
	cr_assert_str_eq(r.allow, "GET, POST");
	cr_assert_eq(route("GET", "/v1/nope", &r), 404);
	cr_assert_str_eq(r.allow, "");
	cr_assert_eq(route("DELETE", "/v1/sandboxes/web", &r), 0);	/* found after GET of the same path */
	cr_assert_str_eq(r.allow, "");
}

Test(serve_child, a_childs_reason_is_its_last_line_without_the_verb)
{
	char a[] = "mvm create: booting\nmvm create: no image named x\n\n", b[] = "plain words", c[] = "mvm template: a: b\n";

	cr_assert_str_eq(sv_child_reason(a), "no image named x");
	cr_assert_str_eq(sv_child_reason(b), "plain words");
	cr_assert_str_eq(sv_child_reason(c), "a: b");
}
