/*
 * MCP's Streamable HTTP transport in `mvm serve` (docs/api.md, "MCP over
 * HTTP"): POST /v1/mcp carries one JSON-RPC message, answered as JSON (a
 * request) or 202 (a notification or a response); DELETE /v1/mcp ends a
 * session; GET is 405 (no server-initiated stream). The messages are
 * handled by tools/mcp (mcp_handle and the tool table), acting as the
 * tenant: owner "tenant:NAME", its sandboxes TENANT.NAME, its quota, the
 * operator's rule ceiling, no host paths.
 *
 * Two pure parts, unit-tested: the session table (ids from getrandom,
 * 256 bits; bounded per tenant and in all; idle ones expire; another
 * tenant's id is as unknown as a made-up one) and the header rules.
 */
#ifndef MVM_SERVE_MCP_H
#define MVM_SERVE_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/serve/serve_route.h"

#define SVM_ID_HEX      64			/* 32 random bytes, lowercase hex */
#define SVM_MAX         256			/* sessions in all */
#define SVM_PER_TENANT  8			/* sessions per tenant */
#define SVM_IDLE_MS     (30u * 60 * 1000)	/* unused this long: gone (the client gets 404) */

struct svm_session {
	bool used;
	unsigned busy;				/* requests in it now: never expired meanwhile */
	char id[SVM_ID_HEX + 1];
	char tenant[SV_TENANT_MAX + 1];
	char version[16];			/* the protocol revision initialize agreed */
	uint64_t last_ms;
};

struct svm_table {
	unsigned per_tenant;
	uint64_t idle_ms;
	struct svm_session s[SVM_MAX];
};

void svm_init(struct svm_table *t, unsigned per_tenant, uint64_t idle_ms);

/*
 * A new session of @tenant at @now_ms (idle ones expired first), entered
 * (busy) as svm_enter would: its id in @id. 0; -EUSERS when the tenant
 * has per_tenant sessions; -ENOSPC when the table is full; -errno from
 * getrandom.
 */
int svm_open(struct svm_table *t, const char *tenant, uint64_t now_ms, char id[SVM_ID_HEX + 1]);

/*
 * Enter @tenant's session @id for one request: busy until svm_leave. Its
 * agreed version in @version (16 bytes) when not NULL. 0, or -ENOENT for
 * an unknown, expired, closed or another tenant's id (the same answer).
 */
int svm_enter(struct svm_table *t, const char *tenant, const char *id, uint64_t now_ms, char *version);
/* The request is done: @version (not NULL) recorded, idle time restarts. */
void svm_leave(struct svm_table *t, const char *id, const char *version, uint64_t now_ms);
/* End @tenant's session @id. 0 or -ENOENT. A request in it finishes. */
int svm_close(struct svm_table *t, const char *tenant, const char *id);
/* Drop sessions idle longer than idle_ms and not busy. */
void svm_expire(struct svm_table *t, uint64_t now_ms);
/* Sessions @tenant holds now. */
unsigned svm_count(const struct svm_table *t, const char *tenant);
/* @id has the shape of ours (SVM_ID_HEX lowercase hex digits). */
bool svm_id_ok(const char *id);

/* The request headers the transport's rules look at (NULL: absent). */
struct svm_hdrs {
	const char *accept, *content_type, *session, *protocol, *origin, *host;
};

/*
 * The rules for a POST whose body is (@init) or is not an initialize
 * request: 0, or the HTTP status to refuse with and why in @err:
 * 403 an Origin other than the server's own (http[s]://Host: DNS
 * rebinding), 406 an Accept without application/json and
 * text/event-stream, 415 a Content-Type other than application/json,
 * 400 an unsupported MCP-Protocol-Version, a session id on initialize,
 * none (or a malformed one) on anything else. Pure.
 */
int svm_check_post(const struct svm_hdrs *h, bool init, char *err, size_t cap);
/* The rules for DELETE: Origin, and a well-formed session id. Pure. */
int svm_check_delete(const struct svm_hdrs *h, char *err, size_t cap);

/* @body (@len bytes) is a JSON-RPC request whose method is "initialize". Pure. */
bool svm_is_initialize(const char *body, size_t len);

#endif
