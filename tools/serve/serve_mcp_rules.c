/*
 * The header rules of MCP's Streamable HTTP transport (revisions
 * 2025-03-26 to 2025-11-25), as tools/serve/serve_mcp.h states them. Pure:
 * strings in, a status out.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tools/mcp/mcp_rpc.h"
#include "tools/serve/serve_mcp.h"

#define ERR(st, ...) (snprintf(err, cap, __VA_ARGS__), (st))

/* The revisions mcp_rpc.c negotiates; a header naming another is refused. */
static const char *const versions[] = { MCP_LATEST_VERSION, "2025-06-18", "2025-03-26" };

/* The media type @want (or a wildcard covering it) is in the Accept list @accept. */
static bool accepts(const char *accept, const char *want)
{
	const char *p = accept;
	size_t major = strchr(want, '/') - want;

	while (p && *p) {
		size_t n;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		n = strcspn(p, ",;");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((n == strlen(want) && !strncasecmp(p, want, n)) || (n == 3 && !strncmp(p, "*/*", 3)) ||
		    (n == major + 2 && !strncasecmp(p, want, major + 1) && p[major + 1] == '*'))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

/* Content-Type is application/json, parameters (charset) allowed. */
static bool is_json(const char *ct)
{
	static const char t[] = "application/json";
	size_t n = sizeof(t) - 1;

	return ct && !strncasecmp(ct, t, n) && (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

/* No Origin (not a browser), or the server's own: http[s]://Host exactly. */
static bool origin_ok(const char *origin, const char *host)
{
	const char *rest;

	if (!origin)
		return true;
	if (!host || !host[0])
		return false;
	rest = !strncmp(origin, "http://", 7) ? origin + 7 : !strncmp(origin, "https://", 8) ? origin + 8 : NULL;
	return rest && !strcasecmp(rest, host);
}

static int common(const struct svm_hdrs *h, char *err, size_t cap)
{
	bool known = !h->protocol;

	if (!origin_ok(h->origin, h->host))
		return ERR(403, "Origin %.100s is not this server's (DNS rebinding is refused)", h->origin);
	for (size_t i = 0; h->protocol && i < sizeof(versions) / sizeof(versions[0]); i++)
		known |= !strcmp(h->protocol, versions[i]);
	if (!known)
		return ERR(400, "unsupported MCP-Protocol-Version %.40s (this server speaks %s, 2025-06-18, 2025-03-26)",
			   h->protocol, MCP_LATEST_VERSION);
	return 0;
}

int svm_check_post(const struct svm_hdrs *h, bool init, char *err, size_t cap)
{
	int st = common(h, err, cap);

	if (st)
		return st;
	if (!h->accept || !accepts(h->accept, "application/json") || !accepts(h->accept, "text/event-stream"))
		return ERR(406, "Accept must list application/json and text/event-stream");
	if (!is_json(h->content_type))
		return ERR(415, "Content-Type must be application/json");
	if (init && h->session)
		return ERR(400, "initialize starts a session: send it without Mcp-Session-Id");
	if (!init && !h->session)
		return ERR(400, "Mcp-Session-Id is required (send initialize first)");
	if (!init && !svm_id_ok(h->session))
		return ERR(400, "malformed Mcp-Session-Id");
	return 0;
}

int svm_check_delete(const struct svm_hdrs *h, char *err, size_t cap)
{
	int st = common(h, err, cap);

	if (st)
		return st;
	if (!h->session)
		return ERR(400, "Mcp-Session-Id is required");
	if (!svm_id_ok(h->session))
		return ERR(400, "malformed Mcp-Session-Id");
	return 0;
}

bool svm_is_initialize(const char *body, size_t len)
{
	cJSON *m, *method;
	bool yes;

	if (len > MCP_MAX_MESSAGE || memchr(body, '\0', len))
		return false;
	m = cJSON_ParseWithLength(body, len);
	method = cJSON_GetObjectItemCaseSensitive(m, "method");
	yes = cJSON_IsObject(m) && cJSON_GetObjectItemCaseSensitive(m, "id") && cJSON_IsString(method) &&
	      !strcmp(method->valuestring, "initialize");
	cJSON_Delete(m);
	return yes;
}
