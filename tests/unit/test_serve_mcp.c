/* MCP over HTTP in `mvm serve` (tools/serve/serve_mcp.h): the session
 * table, the transport's header rules, the route, and the tenant's
 * namespace in the MCP tools (mcp_name). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/mcp/mcp_tools.h"
#include "tools/serve/serve_mcp.h"

static struct svm_table t;

static void setup(void)
{
	svm_init(&t, 2, 1000);
}

TestSuite(serve_mcp_session, .init = setup);

Test(serve_mcp_session, ids_are_256_random_bits_and_distinct)
{
	char a[SVM_ID_HEX + 1], b[SVM_ID_HEX + 1];

	cr_assert_eq(svm_open(&t, "alice", 0, a), 0);
	cr_assert_eq(svm_open(&t, "alice", 0, b), 0);
	cr_assert(svm_id_ok(a) && svm_id_ok(b));
	cr_assert_eq(strlen(a), 64);
	cr_assert_str_neq(a, b);
}

Test(serve_mcp_session, another_tenants_id_is_unknown)
{
	char id[SVM_ID_HEX + 1];

	cr_assert_eq(svm_open(&t, "alice", 0, id), 0);
	svm_leave(&t, id, "2025-06-18", 0);
	cr_assert_eq(svm_enter(&t, "bob", id, 1, NULL), -ENOENT);
	cr_assert_eq(svm_close(&t, "bob", id), -ENOENT, "bob cannot end alice's session");
	cr_assert_eq(svm_enter(&t, "alice", id, 1, NULL), 0, "alice's session is still there");
}

Test(serve_mcp_session, the_agreed_version_is_kept)
{
	char id[SVM_ID_HEX + 1], v[16];

	cr_assert_eq(svm_open(&t, "alice", 0, id), 0);
	svm_leave(&t, id, "2025-03-26", 0);
	cr_assert_eq(svm_enter(&t, "alice", id, 5, v), 0);
	cr_assert_str_eq(v, "2025-03-26");
}

Test(serve_mcp_session, bounded_per_tenant_not_across_tenants)
{
	char id[SVM_ID_HEX + 1];

	cr_assert_eq(svm_open(&t, "alice", 0, id), 0);
	cr_assert_eq(svm_open(&t, "alice", 0, id), 0);
	cr_assert_eq(svm_open(&t, "alice", 0, id), -EUSERS);
	cr_assert_eq(svm_open(&t, "bob", 0, id), 0, "alice's sessions do not take bob's");
	cr_assert_eq(svm_count(&t, "alice"), 2);
}

Test(serve_mcp_session, the_table_is_bounded_in_all)
{
	char id[SVM_ID_HEX + 1], name[16];
	int i;

	svm_init(&t, 4, 1000);
	for (i = 0; i < SVM_MAX / 4; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		for (int k = 0; k < 4; k++)
			cr_assert_eq(svm_open(&t, name, 0, id), 0);
	}
	cr_assert_eq(svm_open(&t, "late", 0, id), -ENOSPC);
}

Test(serve_mcp_session, idle_sessions_expire_busy_ones_do_not)
{
	char idle[SVM_ID_HEX + 1], busy[SVM_ID_HEX + 1];

	cr_assert_eq(svm_open(&t, "alice", 0, idle), 0);
	svm_leave(&t, idle, NULL, 0);
	cr_assert_eq(svm_open(&t, "alice", 0, busy), 0);	/* a request still in it */
	cr_assert_eq(svm_enter(&t, "alice", idle, 1001, NULL), -ENOENT, "idle past 1000 ms: gone");
	cr_assert_eq(svm_count(&t, "alice"), 1);
	svm_leave(&t, busy, NULL, 5000);
	cr_assert_eq(svm_enter(&t, "alice", busy, 5500, NULL), 0);
}

Test(serve_mcp_session, a_closed_session_is_gone_and_frees_its_place)
{
	char a[SVM_ID_HEX + 1], b[SVM_ID_HEX + 1];

	cr_assert_eq(svm_open(&t, "alice", 0, a), 0);
	cr_assert_eq(svm_open(&t, "alice", 0, b), 0);
	cr_assert_eq(svm_close(&t, "alice", a), 0);
	cr_assert_eq(svm_enter(&t, "alice", a, 0, NULL), -ENOENT);
	svm_leave(&t, a, NULL, 0);	/* a request that was in it ends: nothing breaks */
	cr_assert_eq(svm_open(&t, "alice", 0, a), 0);
}

Test(serve_mcp_session, malformed_ids_match_nothing)
{
	char id[SVM_ID_HEX + 1], up[SVM_ID_HEX + 1];

	cr_assert_eq(svm_open(&t, "alice", 0, id), 0);
	memcpy(up, id, sizeof(up));
	for (char *p = up; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	cr_assert_not(svm_id_ok(""));
	cr_assert_not(svm_id_ok(NULL));
	cr_assert_not(svm_id_ok("abc"));
	cr_assert_eq(svm_enter(&t, "alice", "", 0, NULL), -ENOENT);
	cr_assert_eq(svm_enter(&t, "alice", id + 1, 0, NULL), -ENOENT, "a prefix is not the id");
	if (strcmp(up, id))
		cr_assert_eq(svm_enter(&t, "alice", up, 0, NULL), -ENOENT, "ids are lowercase");
}

static int post(const struct svm_hdrs *h, bool init)
{
	char err[256] = "";
	int st = svm_check_post(h, init, err, sizeof(err));

	cr_assert(st == 0 || err[0], "a refusal says why");
	return st;
}

#define SID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define GOOD { .accept = "application/json, text/event-stream", .content_type = "application/json", \
	       .session = SID, .host = "127.0.0.1:7070" }

Test(serve_mcp_rules, a_well_formed_request_passes)
{
	struct svm_hdrs h = GOOD, i = GOOD;

	cr_assert_eq(post(&h, false), 0);
	i.session = NULL;
	cr_assert_eq(post(&i, true), 0);
	h.protocol = "2025-06-18";
	h.content_type = "application/json; charset=utf-8";
	h.origin = "http://127.0.0.1:7070";
	cr_assert_eq(post(&h, false), 0);
}

Test(serve_mcp_rules, origin_other_than_the_server_is_403)
{
	static const char *const bad[] = { "http://evil.example", "null", "http://127.0.0.1:7071",
					   "http://127.0.0.1:7070.evil", "file://", "" };
	struct svm_hdrs h = GOOD;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.origin = bad[i];
		cr_assert_eq(post(&h, false), 403, "%s", bad[i]);
	}
	h.origin = "https://127.0.0.1:7070";
	cr_assert_eq(post(&h, false), 0);
	h.host = NULL;
	cr_assert_eq(post(&h, false), 403, "an Origin and no Host");
}

Test(serve_mcp_rules, accept_and_content_type)
{
	struct svm_hdrs h = GOOD;

	h.accept = "application/json";
	cr_assert_eq(post(&h, false), 406);
	h.accept = NULL;
	cr_assert_eq(post(&h, false), 406);
	h.accept = "text/event-stream;q=0.5 , application/*";
	cr_assert_eq(post(&h, false), 0);
	h.content_type = "text/plain";
	cr_assert_eq(post(&h, false), 415);
	h.content_type = "application/jsonx";
	cr_assert_eq(post(&h, false), 415);
	h.content_type = NULL;
	cr_assert_eq(post(&h, false), 415);
}

Test(serve_mcp_rules, session_header_rules)
{
	struct svm_hdrs h = GOOD;

	cr_assert_eq(post(&h, true), 400, "initialize with a session id");
	h.session = NULL;
	cr_assert_eq(post(&h, false), 400, "no session id after initialize");
	h.session = "../../etc";
	cr_assert_eq(post(&h, false), 400);
	cr_assert_eq(svm_check_delete(&h, (char[64]){ 0 }, 64), 400);
	h.session = SID;
	cr_assert_eq(svm_check_delete(&h, (char[64]){ 0 }, 64), 0);
}

Test(serve_mcp_rules, unsupported_protocol_version_is_400)
{
	struct svm_hdrs h = GOOD;

	h.protocol = "1900-01-01";
	cr_assert_eq(post(&h, false), 400);
	h.protocol = "2025-03-26";
	cr_assert_eq(post(&h, false), 0);
}

Test(serve_mcp_rules, initialize_is_recognised_only_as_a_request)
{
	static const char a[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
	static const char n[] = "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\"}";
	static const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\0x";

	cr_assert(svm_is_initialize(a, strlen(a)));
	cr_assert_not(svm_is_initialize(n, strlen(n)), "a notification");
	cr_assert_not(svm_is_initialize(nul, sizeof(nul) - 1), "a NUL inside");
	cr_assert_not(svm_is_initialize("[", 1));
	cr_assert_not(svm_is_initialize("", 0));
}

Test(serve_mcp_route, post_and_delete_route_get_is_405)
{
	struct sv_route r;
	char err[64];

	cr_assert_eq(sv_route("POST", "/v1/mcp", &r, err, sizeof(err)), 0);
	cr_assert_eq(r.op, SV_MCP);
	cr_assert(r.has_body);
	cr_assert_eq(sv_route("DELETE", "/v1/mcp", &r, err, sizeof(err)), 0);
	cr_assert_eq(r.op, SV_MCP_END);
	cr_assert_eq(sv_route("GET", "/v1/mcp", &r, err, sizeof(err)), 405);
	cr_assert_eq(sv_route("POST", "/v1/mcp/", &r, err, sizeof(err)), 404);
}

Test(serve_mcp_ns, a_tenants_names_are_its_own)
{
	struct mcp_app app = { .ns = "alice." };
	struct mcp_server srv = { .app = &app };
	struct mcp_call c = { .srv = &srv };
	cJSON *args = cJSON_Parse("{\"name\":\"web\"}");
	char longname[200];

	cr_assert_str_eq(mcp_name(&c, args), "alice.web");
	cr_assert_str_eq(mcp_caller_name(&c, "alice.web"), "web");
	cr_assert_null(mcp_caller_name(&c, "bob.web"));
	cr_assert_null(mcp_caller_name(&c, "alice."));
	cr_assert_null(mcp_caller_name(&c, "alicex.web"));
	cJSON_Delete(args);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "name", longname);
	cr_assert_str_eq(mcp_name(&c, args), "", "too long: no name, never a truncated one");
	cJSON_Delete(args);
	app.ns[0] = '\0';
	args = cJSON_Parse("{\"name\":\"web\"}");
	cr_assert_str_eq(mcp_name(&c, args), "web", "stdio: the host's names");
	cr_assert_str_eq(mcp_caller_name(&c, "bob.web"), "bob.web");
	cJSON_Delete(args);
}

Test(serve_mcp_ns, refusals_name_the_sandbox_as_the_caller_did)
{
	struct mcp_app app = { .ns = "alice.", .owner = "tenant:alice" };
	struct mcp_server srv = { .app = &app };
	struct mcp_call c = { .srv = &srv };
	cJSON *args = cJSON_Parse("{\"name\":\"no-such-sandbox-here\"}");

	cr_assert_eq(mcp_need_sandbox(&c, mcp_name(&c, args)), -1);
	cr_assert_str_eq(c.err, "no sandbox named no-such-sandbox-here");
	cJSON_Delete(args);
}
