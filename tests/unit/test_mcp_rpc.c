/* `mvm mcp` message handling: framing, JSON-RPC errors, dispatch, argument checks, guest text. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/mcp/mcp_rpc.h"
#include "tools/mcp/mcp_schema.h"
#include "tools/mcp/mcp_text.h"
#include "tools/mcp/mcp_tools.h"

static char sent[8][512];
static int nsent;

static void record(void *ctx, const char *msg)
{
	if (nsent < 8)
		snprintf(sent[nsent++], sizeof(sent[0]), "%s", msg);
}

static int echo_tool(struct mcp_call *c, const cJSON *args, cJSON *out)
{
	const cJSON *word = cJSON_GetObjectItem(args, "word");

	if (!strcmp(word->valuestring, "fail")) {
		snprintf(c->err, sizeof(c->err), "bad \xff word");	/* invalid UTF-8 from a "guest" */
		return -1;
	}
	if (!strcmp(word->valuestring, "reject")) {
		snprintf(c->err, sizeof(c->err), "word rejected");
		return MCP_INVALID_PARAMS;
	}
	mcp_progress(c, "halfway");
	mcp_progress(c, NULL);
	cJSON_AddStringToObject(out, "word", word->valuestring);
	return 0;
}

static const struct mcp_tool test_tools[] = {
	{ "echo", "Echo", "says the word back",
	  "{\"type\":\"object\",\"properties\":{\"word\":{\"type\":\"string\",\"minLength\":1,\"pattern\":\"^[a-z]+$\"},"
	  "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5},"
	  "\"list\":{\"type\":\"array\",\"maxItems\":2,\"items\":{\"type\":\"string\"}},"
	  "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}},"
	  "\"required\":[\"word\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\"}", echo_tool },
};

static struct mcp_server srv;

static void setup(void)
{
	nsent = 0;
	memset(&srv, 0, sizeof(srv));
	srv.send = record;
	cr_assert_eq(mcp_server_init(&srv, test_tools, 1), 0);
}

static void teardown(void)
{
	mcp_server_free(&srv);
}

/* The reply to @msg, parsed (NULL if none). */
static cJSON *ask(const char *msg)
{
	char *r = mcp_handle(&srv, msg, strlen(msg));
	cJSON *j;

	if (!r)
		return NULL;
	cr_assert(!strchr(r, '\n'), "a reply is one line");
	j = cJSON_Parse(r);
	free(r);
	cr_assert_not_null(j);
	return j;
}

static int error_code(const cJSON *j)
{
	const cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "code");

	return cJSON_IsNumber(e) ? e->valueint : 0;
}

static const char *error_msg(const cJSON *j)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message")->valuestring;
}

static void expect_error(const char *msg, int code)
{
	cJSON *j = ask(msg);

	cr_assert_not_null(j, "no reply to %s", msg);
	cr_assert_eq(error_code(j), code, "%s: code %d, expected %d", msg, error_code(j), code);
	cJSON_Delete(j);
}

TestSuite(mcp_rpc, .init = setup, .fini = teardown);

Test(mcp_rpc, malformed_messages_get_jsonrpc_errors)
{
	expect_error("{not json", MCP_PARSE_ERROR);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", MCP_PARSE_ERROR);
	expect_error("[]", MCP_INVALID_REQUEST);
	expect_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST);	/* no batches */
	expect_error("42", MCP_INVALID_REQUEST);
	expect_error("{\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", MCP_INVALID_PARAMS);
}

Test(mcp_rpc, nul_inside_a_message_is_a_parse_error)
{
	static const char m[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\0junk";
	char *r = mcp_handle(&srv, m, sizeof(m) - 1);

	cr_assert(strstr(r, "-32700"), "%s", r);
	free(r);
}

Test(mcp_rpc, error_replies_keep_the_request_id)
{
	cJSON *j = ask("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"resources/list\"}");

	cr_assert_eq(error_code(j), MCP_METHOD_NOT_FOUND);
	cr_assert_str_eq(cJSON_GetObjectItem(j, "id")->valuestring, "abc");
	cr_assert(strstr(error_msg(j), "resources/list"));
	cJSON_Delete(j);
}

Test(mcp_rpc, notifications_and_responses_get_no_reply)
{
	cr_assert_null(ask("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
	cr_assert(srv.initialized);
	cr_assert_null(ask("{\"jsonrpc\":\"2.0\",\"method\":\"no/such/thing\"}"));
	cr_assert_null(ask("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":7}"));
	cr_assert_null(ask("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}"));
	cr_assert_null(ask("{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"));
	cr_assert_eq(nsent, 0);
}

Test(mcp_rpc, initialize_negotiates_the_revision)
{
	cJSON *j = ask("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\","
		       "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	const cJSON *r = cJSON_GetObjectItem(j, "result");

	cr_assert_str_eq(cJSON_GetObjectItem(r, "protocolVersion")->valuestring, "2025-03-26");
	cr_assert(cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "capabilities"), "tools")));
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "serverInfo"), "name")->valuestring, "mvm");
	cJSON_Delete(j);
	/* A revision we do not know: we answer with ours, the client decides. */
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "protocolVersion")->valuestring,
			 MCP_LATEST_VERSION);
	cJSON_Delete(j);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}", MCP_INVALID_PARAMS);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\"}", MCP_INVALID_PARAMS);
}

Test(mcp_rpc, ping_and_tools_list)
{
	cJSON *j = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	const cJSON *t;

	cr_assert(cJSON_IsObject(cJSON_GetObjectItem(j, "result")));
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}");
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "tools"), 0);
	cr_assert_str_eq(cJSON_GetObjectItem(t, "name")->valuestring, "echo");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"), "type")->valuestring, "object");
	cr_assert(cJSON_IsObject(cJSON_GetObjectItem(t, "outputSchema")));
	cJSON_Delete(j);
}

#define CALL(args) "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":" args "}}"

Test(mcp_rpc, invalid_params_name_the_problem)
{
	static const struct { const char *msg, *says; } cases[] = {
		{ CALL("{}"), "must have the member \"word\"" },
		{ CALL("{\"word\":5}"), "/word must be a string" },
		{ CALL("{\"word\":\"\"}"), "/word must have at least 1" },
		{ CALL("{\"word\":\"A B\"}"), "/word must match" },
		{ CALL("{\"word\":\"a\",\"n\":0}"), "/n must be at least 1" },
		{ CALL("{\"word\":\"a\",\"n\":2.5}"), "/n must be an integer" },
		{ CALL("{\"word\":\"a\",\"extra\":1}"), "unknown member \"extra\"" },
		{ CALL("{\"word\":\"a\",\"list\":[\"x\",\"y\",\"z\"]}"), "/list must have at most 2" },
		{ CALL("{\"word\":\"a\",\"list\":[\"x\",1]}"), "/list/1 must be a string" },
		{ CALL("{\"word\":\"a\",\"env\":{\"K\":true}}"), "/env/K must be a string" },
		{ CALL("[1]"), "arguments must be an object" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}", "params.name" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}", "unknown tool: nope" },
		{ CALL("{\"word\":\"reject\"}"), "word rejected" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = ask(cases[i].msg);

		cr_assert_eq(error_code(j), MCP_INVALID_PARAMS, "%s", cases[i].msg);
		cr_assert(strstr(error_msg(j), cases[i].says), "%s: '%s' lacks '%s'", cases[i].msg,
			  error_msg(j), cases[i].says);
		cJSON_Delete(j);
	}
}

Test(mcp_rpc, tool_result_has_structured_and_text_content)
{
	cJSON *j = ask(CALL("{\"word\":\"hi\"}"));
	const cJSON *r = cJSON_GetObjectItem(j, "result");
	const cJSON *text = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "content"), 0);

	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(r, "isError")));
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "structuredContent"), "word")->valuestring, "hi");
	cr_assert_str_eq(cJSON_GetObjectItem(text, "type")->valuestring, "text");
	cr_assert_str_eq(cJSON_GetObjectItem(text, "text")->valuestring, "{\"word\":\"hi\"}");
	cr_assert_eq(nsent, 0, "no progress without a token");
	cJSON_Delete(j);
}

Test(mcp_rpc, progress_goes_out_when_the_client_sent_a_token)
{
	cJSON *j = ask("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
		       "\"arguments\":{\"word\":\"hi\"},\"_meta\":{\"progressToken\":\"tok\"}}}");
	cJSON *p1, *p2;

	cr_assert_not_null(j);
	cJSON_Delete(j);
	cr_assert_eq(nsent, 2);
	p1 = cJSON_Parse(sent[0]);
	p2 = cJSON_Parse(sent[1]);
	cr_assert_str_eq(cJSON_GetObjectItem(p1, "method")->valuestring, "notifications/progress");
	cr_assert_null(cJSON_GetObjectItem(p1, "id"), "a notification has no id");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(p1, "params"), "progressToken")->valuestring, "tok");
	cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(p1, "params"), "message")->valuestring, "halfway");
	cr_assert_gt(cJSON_GetObjectItem(cJSON_GetObjectItem(p2, "params"), "progress")->valuedouble,
		     cJSON_GetObjectItem(cJSON_GetObjectItem(p1, "params"), "progress")->valuedouble);
	cJSON_Delete(p1);
	cJSON_Delete(p2);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
		     "\"arguments\":{\"word\":\"hi\"},\"_meta\":{\"progressToken\":[]}}}", MCP_INVALID_PARAMS);
}

Test(mcp_rpc, tool_errors_are_results_with_valid_text)
{
	char *r = mcp_handle(&srv, CALL("{\"word\":\"fail\"}"), strlen(CALL("{\"word\":\"fail\"}")));
	cJSON *j = cJSON_Parse(r);
	const cJSON *res = cJSON_GetObjectItem(j, "result");
	const char *text = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0), "text")->valuestring;

	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")));
	cr_assert(mcp_utf8_valid((const uint8_t *)r, strlen(r)), "the reply is valid UTF-8");
	cr_assert_str_eq(text, "bad \xef\xbf\xbd word");
	cJSON_Delete(j);
	free(r);
}

Test(mcp_rpc, product_tool_schemas_parse)
{
	struct mcp_server s = { 0 };
	static const char *const want[] = { "sandbox_create", "sandbox_list", "sandbox_exec", "file_read",
		"file_write", "checkpoint", "rollback", "diff", "promote", "sandbox_remove" };
	char err[256];
	cJSON *ok, *bad;

	cr_assert_eq(mcp_server_init(&s, mcp_tools, mcp_ntools), 0);
	cr_assert_eq(mcp_ntools, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < mcp_ntools; i++)
		cr_assert_str_eq(mcp_tools[i].name, want[i]);
	/* sandbox_exec: the documented arguments pass, a relative name with a slash does not. */
	ok = cJSON_Parse("{\"name\":\"box-1\",\"command\":\"echo hi\",\"timeout\":5,\"env\":{\"A\":\"b\"},\"cwd\":\"/tmp\"}");
	bad = cJSON_Parse("{\"name\":\"../x\",\"command\":\"echo\"}");
	cr_assert_eq(mcp_schema_check(s.in_schemas[2], ok, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(mcp_schema_check(s.in_schemas[2], bad, err, sizeof(err)), 0);
	cJSON_Delete(ok);
	cJSON_Delete(bad);
	mcp_server_free(&s);
}

/* Framing: messages from a file standing in for stdin. */
static int feed(const char *data, size_t n)
{
	FILE *f = tmpfile();
	int fd;

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, n, f), n);
	fflush(f);
	fd = dup(fileno(f));
	fclose(f);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

Test(mcp_frame, lines_crlf_and_empty_lines)
{
	static const char in[] = "{\"a\":1}\n\r\n\n{\"b\":2}\r\n{\"c\":3}";
	struct mcp_reader r = { 0 };
	int fd = feed(in, sizeof(in) - 1);
	size_t len;
	char *m;

	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), 1);
	cr_assert_str_eq(m, "{\"a\":1}");
	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), 1);
	cr_assert_str_eq(m, "{\"b\":2}");
	cr_assert_eq(len, 7);
	/* A last line without its newline is incomplete: end of input. */
	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), 0);
	mcp_reader_free(&r);
	close(fd);
}

Test(mcp_frame, oversized_message_is_dropped_and_reading_goes_on)
{
	size_t big = MCP_MAX_MESSAGE + 100;
	char *in = malloc(big + 64);
	struct mcp_reader r = { 0 };
	size_t len;
	char *m;
	int fd;

	memset(in, 'x', big);
	strcpy(in + big, "\n{\"ok\":1}\n");
	fd = feed(in, strlen(in));
	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), -EMSGSIZE);
	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), 1);
	cr_assert_str_eq(m, "{\"ok\":1}");
	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), 0);
	cr_assert_leq(r.cap, MCP_MAX_MESSAGE + (128u << 10), "the buffer stays bounded");
	mcp_reader_free(&r);
	close(fd);
	free(in);
}

Test(mcp_frame, message_at_the_cap_is_accepted)
{
	size_t n = MCP_MAX_MESSAGE;
	char *in = malloc(n + 2);
	struct mcp_reader r = { 0 };
	size_t len;
	char *m;
	int fd;

	memset(in, ' ', n);
	in[0] = '{';
	in[n - 1] = '}';
	in[n] = '\n';
	fd = feed(in, n + 1);
	cr_assert_eq(mcp_read_message(&r, fd, &m, &len), 1);
	cr_assert_eq(len, n);
	mcp_reader_free(&r);
	close(fd);
	free(in);
}

Test(mcp_text, invalid_utf8_and_nul_are_replaced)
{
	static const uint8_t in[] = { 'a', 0xff, 'b', 0, 0xc3, 0xa9, 0xed, 0xa0, 0x80, 0xe2, 0x82 };
	char *t = mcp_utf8_clean(in, sizeof(in), sizeof(in));

	/* a U+FFFD b U+FFFD é, a surrogate (3 bad bytes), a cut sequence (2 bad bytes) */
	cr_assert_str_eq(t, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xc3\xa9"
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert(mcp_utf8_valid((const uint8_t *)t, strlen(t)));
	free(t);
	cr_assert(!mcp_utf8_valid((const uint8_t *)"\xc0\x80", 2), "overlong NUL");
}

Test(mcp_text, truncation_is_noted_and_buffers_are_bounded)
{
	struct mcp_buf b = { .cap = 4 };
	char *t;

	mcp_buf_add(&b, "hello world", 11);
	cr_assert_eq(b.len, 4);
	cr_assert_eq(b.total, 11);
	t = mcp_utf8_clean(b.p, b.len, b.total);
	cr_assert(!strncmp(t, "hell\n[mvm: output truncated: 11 bytes", 37), "%s", t);
	free(t);
	mcp_buf_free(&b);
}

Test(mcp_text, base64_round_trip_and_strictness)
{
	static const uint8_t in[] = { 0, 1, 2, 0xfe, 0xff };
	uint8_t *out;
	size_t n;

	for (size_t len = 0; len <= sizeof(in); len++) {
		char *e = mcp_base64_encode(in, len);

		cr_assert_eq(mcp_base64_decode(e, &out, &n), 0, "%s", e);
		cr_assert_eq(n, len);
		cr_assert(!memcmp(out, in, len));
		free(out);
		free(e);
	}
	{
		char *hi = mcp_base64_encode((const uint8_t *)"hi", 2);

		cr_assert_str_eq(hi, "aGk=");
		free(hi);
	}
	cr_assert_neq(mcp_base64_decode("aGk", &out, &n), 0);
	cr_assert_neq(mcp_base64_decode("a=Gk", &out, &n), 0);
	cr_assert_neq(mcp_base64_decode("aG k", &out, &n), 0);
	cr_assert_neq(mcp_base64_decode("aGk=aGk=", &out, &n), 0);
}
