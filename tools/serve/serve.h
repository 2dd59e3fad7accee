/*
 * `mvm serve`: sandboxes over HTTP for many tenants (docs/api.md, "HTTP
 * API"). serve_http.c is the only file that knows libmicrohttpd; the
 * operations (serve_ops.c, serve_exec.c, serve_files.c) fill a struct
 * sv_out. The server keeps no state a sandbox needs: a sandbox's owner is
 * its name (TENANT.NAME), everything else is in its state directory.
 */
#ifndef MVM_SERVE_H
#define MVM_SERVE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tools/sandbox/operator_policy.h"
#include "tools/serve/serve_mcp.h"
#include "tools/serve/serve_rate.h"
#include "tools/serve/serve_route.h"
#include "tools/serve/serve_token.h"

struct sv_opts {
	const char *listen;		/* ADDR:PORT, "[V6]:PORT" */
	const char *tls_cert, *tls_key;	/* PEM files; both or neither */
	bool allow_plain;		/* plain HTTP beyond loopback */
	const char *tokens;		/* NULL: sv_tokens_default_path */
	const char *log;		/* NULL: default request log */
	const char *allow_max;		/* the allow-rule ceiling's extra rules (operator_policy.h) */
	unsigned max_conns, max_per_ip, idle_timeout_s;
	double rate, burst;		/* requests per second per tenant, and the burst */
	unsigned max_streams;		/* exec streams at once per tenant */
	uint64_t max_file;		/* a file's bytes through GET/PUT files; a tree's file bytes through tree */
};

#define SV_OPTS_DEFAULT ((struct sv_opts){ .listen = "127.0.0.1:7070", .max_conns = 128, \
	.max_per_ip = 32, .idle_timeout_s = 30, .rate = 20, .burst = 40, .max_streams = 8, \
	.max_file = 64ull << 20 })

struct sv_pending {			/* a create or template in progress, counted against the quota */
	char tenant[SV_TENANT_MAX + 1];
	char host[SV_NAME_MAX + SV_TENANT_MAX + 2];	/* its name: no second create of it meanwhile ("": a template) */
	struct sv_quota add;		/* what it will hold */
	bool used;
};

#define SV_MAX_PENDING 64

struct sv_server {
	struct sv_opts o;
	char tokens_path[PATH_MAX], log_path[PATH_MAX];
	struct op_policy pol;		/* the operator policy: scope, rule ceiling, images by name */
	pthread_mutex_t lock;		/* everything below */
	struct sv_tokens *tokens;
	struct timespec tokens_mtime;
	ino_t tokens_ino;
	struct sv_rates rates;
	struct sv_pending pending[SV_MAX_PENDING];
	struct svm_table *mcp;		/* MCP sessions (serve_mcp.h) */
};

/* What an operation answers: a body (malloc'd) or a stream. */
struct sv_out {
	int status;
	char *body;
	size_t len;
	const char *type;		/* Content-Type; NULL: application/json */
	/* A stream (chunked): read() fills up to @max bytes, returns the count,
	 * 0 at the end, -1 to cut the connection; done() frees @cls. */
	ssize_t (*read)(void *cls, char *buf, size_t max);
	void (*done)(void *cls);
	void *cls;
	char outcome[160];		/* for the request log: "ok" or why not */
	char session[SVM_ID_HEX + 1];	/* an Mcp-Session-Id header to send, "" none */
	const char *allow;		/* with a 405: the Allow header's methods */
};

/* One request, as the operations see it. */
struct sv_call {
	struct sv_server *s;
	struct sv_tenant tenant;	/* a copy: the table may reload */
	struct sv_route r;
	char host[SV_NAME_MAX + SV_TENANT_MAX + 2];	/* TENANT.NAME when r.name is set */
	char owner[OP_OWNER_MAX];	/* "tenant:NAME", recorded in each sandbox it creates */
	const char *query_path;		/* ?path= */
	const char *body;
	size_t len;
	struct svm_hdrs mcp;		/* the headers /v1/mcp's rules read */
};

/* Fill @o with a JSON body: @status, and an error object when @status >= 400. */
void sv_reply_error(struct sv_out *o, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* @j (consumed) as the body with @status. */
struct cJSON;
void sv_reply_json(struct sv_out *o, int status, struct cJSON *j);

/*
 * The host's sandbox @host is @tenant's: named TENANT.NAME (the API's @name
 * filled, when @name is given) and its config.json records owner
 * "tenant:TENANT" (operator_policy.h). Both, so neither a sandbox the
 * operator made with such a name nor one whose config was edited leaks.
 */
bool sv_owns(const struct op_policy *pol, const char *tenant, const char *host, char *name, size_t cap);

/* The sandbox @c names, as the API shows it, with @status. */
void sv_reply_sandbox(struct sv_call *c, struct sv_out *o, int status);

/* Run the routed operation of @c. */
void sv_dispatch(struct sv_call *c, struct sv_out *o);

/* The operations (serve_ops.c, serve_exec.c, serve_files.c, serve_snap.c, serve_template.c). */
void sv_op_health(struct sv_call *c, struct sv_out *o);
void sv_op_capacity(struct sv_call *c, struct sv_out *o);
void sv_op_list(struct sv_call *c, struct sv_out *o);
void sv_op_create(struct sv_call *c, struct sv_out *o);
void sv_op_get(struct sv_call *c, struct sv_out *o);
void sv_op_delete(struct sv_call *c, struct sv_out *o);
void sv_op_stop(struct sv_call *c, struct sv_out *o);
void sv_op_start(struct sv_call *c, struct sv_out *o);
void sv_op_exec(struct sv_call *c, struct sv_out *o);
void sv_op_file_get(struct sv_call *c, struct sv_out *o);
void sv_op_file_put(struct sv_call *c, struct sv_out *o);
void sv_op_tree_get(struct sv_call *c, struct sv_out *o);
void sv_op_tree_put(struct sv_call *c, struct sv_out *o);
void sv_op_workspace_put(struct sv_call *c, struct sv_out *o);
void sv_op_diff(struct sv_call *c, struct sv_out *o);
void sv_op_promote(struct sv_call *c, struct sv_out *o);
void sv_op_checkpoint(struct sv_call *c, struct sv_out *o);
void sv_op_checkpoints(struct sv_call *c, struct sv_out *o);
void sv_op_rollback(struct sv_call *c, struct sv_out *o);
void sv_op_net_show(struct sv_call *c, struct sv_out *o);
void sv_op_net_edit(struct sv_call *c, struct sv_out *o);
void sv_op_events(struct sv_call *c, struct sv_out *o);
void sv_op_fork(struct sv_call *c, struct sv_out *o);
void sv_op_template_get(struct sv_call *c, struct sv_out *o);
void sv_op_template_make(struct sv_call *c, struct sv_out *o);
void sv_op_template_rm(struct sv_call *c, struct sv_out *o);
void sv_op_mcp(struct sv_call *c, struct sv_out *o);
void sv_op_mcp_end(struct sv_call *c, struct sv_out *o);

/* Stop and delete the host's sandbox @host, whatever is left of it. */
void sv_remove_sandbox(const char *host);

/*
 * Run this binary with @argv (argv[0] "mvm"): stdin and stdout /dev/null,
 * @env_fd (if >= 0) as descriptor 3, no signal blocked, stderr kept
 * (bounded, NUL-terminated) in @err. The server starts VMMs only this way:
 * posix_spawn from a threaded process, never a bare fork() that would run
 * code in the child with other threads' locks held. Exit status, 128+sig,
 * or -errno.
 */
int sv_run_mvm(char *const argv[], int env_fd, char *err, size_t cap);
/* @err (sv_run_mvm's) as a reason: its last line without "mvm VERB: ". In place. */
const char *sv_child_reason(char *err);
/* The same with stdout on @out_fd (e.g. a memfd) instead of /dev/null. */
int sv_run_mvm_out(char *const argv[], int env_fd, int out_fd, char *err, size_t cap);

/*
 * One request @req (consumed) on @c's control API (docs/api.md): the reply
 * without its "ok" when it says ok; else NULL with @o set (503 when the VMM
 * does not answer, @refused with its error when it says no).
 */
struct cJSON *sv_api(struct sv_call *c, struct sv_out *o, struct cJSON *req, int timeout_ms, int refused);

/* Exec streams in flight for @tenant: take one (false at the cap) / give it back. */
bool sv_stream_take(struct sv_server *s, const char *tenant);
void sv_stream_give(struct sv_server *s, const char *tenant);

/* Append the request's JSON line to the log (capped and rotated, common/rotlog.h). */
void sv_log_request(struct sv_server *s, const char *ip, const char *tenant, const char *method,
		    const char *verb, const char *sandbox, int status, const char *outcome);

/* The default request log: ${XDG_STATE_HOME:-~/.local/state}/mvm-serve/requests.jsonl (directory made). 0 or -errno. */
int sv_log_default_path(char *out, size_t cap);

/*
 * Serve until SIGINT/SIGTERM. 0, or -1 after a message on stderr (bad
 * address, plain HTTP beyond loopback without @o->allow_plain, unreadable
 * certificate, tokens file refused).
 */
int sv_serve(const struct sv_opts *o);

/* The loopback check of --listen (pure): 1 loopback, 0 not, -1 unparsable; @sa filled. */
struct sockaddr_storage;
int sv_listen_parse(const char *listen, struct sockaddr_storage *sa, unsigned *len);

#endif
