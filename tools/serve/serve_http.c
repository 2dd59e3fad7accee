/*
 * The HTTP side of `mvm serve` on libmicrohttpd: one thread per connection
 * (an exec stream or a boot may block its own connection, never another),
 * with the library's limits on connections (in all and per IP), idle time
 * (slowloris) and memory per connection (header size). This file turns a
 * request into a struct sv_call and a struct sv_out into a response; it
 * decides nothing about sandboxes.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/mono_time.h"
#include "tools/mcp/mcp_rpc.h"
#include "tools/serve/serve.h"

#define HEADER_MEM   (32u << 10)	/* per connection: request line and headers must fit */
#define PEM_MAX      (64u << 10)

struct sv_req {
	struct sv_call c;
	char *body;
	size_t len, cap;
	int early;			/* an HTTP status decided before the body */
	char early_err[256];
	char ip[INET6_ADDRSTRLEN];
	bool authed;
	bool answered;			/* a response is queued: later body bytes are dropped */
	bool slot;			/* holds one of the tenant's transfer slots (sv_stream_take) */
};

void sv_reply_json(struct sv_out *o, int status, cJSON *j)
{
	char *s = j ? cJSON_PrintUnformatted(j) : NULL;

	cJSON_Delete(j);
	free(o->body);
	o->status = s ? status : 500;
	o->body = NULL;
	o->len = 0;
	if (s && asprintf(&o->body, "%s\n", s) > 0)
		o->len = strlen(o->body);
	free(s);
	if (!o->outcome[0])
		snprintf(o->outcome, sizeof(o->outcome), "ok");
}

void sv_reply_error(struct sv_out *o, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(o->body);
	o->status = status;
	o->body = sv_error_json(msg);
	o->len = o->body ? strlen(o->body) : 0;
	snprintf(o->outcome, sizeof(o->outcome), "%s", msg);
}

int sv_listen_parse(const char *listen, struct sockaddr_storage *sa, unsigned *len)
{
	char host[64];
	const char *colon = strrchr(listen, ':');
	long port;
	char *end;

	memset(sa, 0, sizeof(*sa));
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(host))
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535)
		return -1;
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	if (host[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
		size_t hl = strlen(host);

		if (hl < 3 || host[hl - 1] != ']')
			return -1;
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)sa;

		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -1;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
}

/* Reload the tokens file when it changed (a removed token stops working at once). */
static int tokens_fresh(struct sv_server *s)
{
	struct stat st;
	char err[256];
	int ret;

	if (stat(s->tokens_path, &st)) {
		s->tokens->n = 0;	/* file gone: nobody is let in */
		s->tokens_ino = 0;
		return 0;
	}
	if (st.st_ino == s->tokens_ino && st.st_mtim.tv_sec == s->tokens_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == s->tokens_mtime.tv_nsec)
		return 0;
	ret = sv_tokens_load(s->tokens_path, s->tokens, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "mvm serve: tokens: %s (nobody is let in until it is fixed)\n", err);
		s->tokens->n = 0;
	}
	s->tokens_ino = st.st_ino;
	s->tokens_mtime = st.st_mtim;
	return ret;
}

/* The request's tenant into @q->c.tenant, or a 401/429 in @q->early. */
static void authenticate(struct sv_server *s, struct MHD_Connection *con, struct sv_req *q)
{
	const char *tok = sv_bearer(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Authorization"));
	const struct sv_tenant *t;
	struct sv_bucket *b;

	pthread_mutex_lock(&s->lock);
	tokens_fresh(s);
	t = sv_token_find(s->tokens, tok);
	if (t)
		q->c.tenant = *t;
	pthread_mutex_unlock(&s->lock);
	if (!t) {
		q->early = 401;
		snprintf(q->early_err, sizeof(q->early_err), "missing or wrong bearer token");
		return;
	}
	q->authed = true;
	pthread_mutex_lock(&s->lock);
	b = sv_bucket_of(&s->rates, t->name, s->o.burst, mono_now_ms());
	if (!b || !sv_rate_take(b, s->o.rate, s->o.burst, mono_now_ms())) {
		q->early = 429;
		snprintf(q->early_err, sizeof(q->early_err), "request rate above %g per second (burst %g)",
			 s->o.rate, s->o.burst);
	}
	pthread_mutex_unlock(&s->lock);
}

static void client_ip(struct MHD_Connection *con, char *ip, size_t cap)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(ip, cap, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, (socklen_t)cap);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, (socklen_t)cap);
}

/* Content-Length above what this route takes: refuse before reading the body. */
static uint64_t body_cap(const struct sv_server *s, const struct sv_route *r)
{
	if (r->op == SV_MCP)
		return MCP_MAX_MESSAGE;	/* file_write carries up to 3 MiB of content */
	return !r->has_body ? 0 : r->json_body ? SV_JSON_MAX : s->o.max_file;
}

static void mcp_headers(struct MHD_Connection *con, struct svm_hdrs *h)
{
	h->accept = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Accept");
	h->content_type = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Type");
	h->session = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Mcp-Session-Id");
	h->protocol = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "MCP-Protocol-Version");
	h->origin = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Origin");
	h->host = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Host");
}

static struct sv_req *first_call(struct sv_server *s, struct MHD_Connection *con, const char *url,
				 const char *method)
{
	struct sv_req *q = calloc(1, sizeof(*q));
	const char *cl;
	int st;

	if (!q)
		return NULL;
	q->c.s = s;
	client_ip(con, q->ip, sizeof(q->ip));
	/* The health check is the one path without a token (a load balancer's probe). */
	if (strcmp(url, "/v1/health"))
		authenticate(s, con, q);
	if (q->early)
		return q;
	st = sv_route(method, url, &q->c.r, q->early_err, sizeof(q->early_err));
	if (st) {
		q->early = st;
		return q;
	}
	if (q->c.r.name[0] && sv_host_name(q->c.tenant.name, q->c.r.name, q->c.host, sizeof(q->c.host))) {
		q->early = 400;
		snprintf(q->early_err, sizeof(q->early_err), "sandbox name too long");
		return q;
	}
	cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Length");
	if (cl && strtoull(cl, NULL, 10) > body_cap(s, &q->c.r)) {
		q->early = 413;
		snprintf(q->early_err, sizeof(q->early_err), "request body larger than %llu bytes",
			 (unsigned long long)body_cap(s, &q->c.r));
	}
	q->c.query_path = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "path");
	mcp_headers(con, &q->c.mcp);
	/* A file in memory (up to --max-file), a template's bundle or an MCP
	 * request counts as a stream, so a tenant holds at most --max-streams
	 * of them at once. */
	if (!q->early && (q->c.r.op == SV_FILE_PUT || q->c.r.op == SV_FILE_GET || q->c.r.op == SV_MCP ||
			  q->c.r.op == SV_TEMPLATE_GET || q->c.r.op == SV_TREE_GET || q->c.r.op == SV_TREE_PUT ||
			  q->c.r.op == SV_WORKSPACE_PUT || q->c.r.op == SV_DIFF || q->c.r.op == SV_PROMOTE)) {
		q->slot = sv_stream_take(s, q->c.tenant.name);
		if (!q->slot) {
			q->early = 429;
			snprintf(q->early_err, sizeof(q->early_err), "at most %u transfers at once", s->o.max_streams);
		}
	}
	return q;
}

/* Keep body bytes up to the route's cap; past it, answer 413 without reading on. */
static void take_body(struct sv_server *s, struct sv_req *q, const char *data, size_t n)
{
	uint64_t cap = body_cap(s, &q->c.r);

	if (q->early)
		return;
	if (q->len + n > cap) {
		q->early = 413;
		snprintf(q->early_err, sizeof(q->early_err), "request body larger than %llu bytes",
			 (unsigned long long)cap);
		return;
	}
	if (q->len + n + 1 > q->cap) {
		size_t nc = q->cap ? q->cap : 4096;
		char *nb;

		while (nc < q->len + n + 1)
			nc *= 2;
		if (!(nb = realloc(q->body, nc))) {
			q->early = 500;
			snprintf(q->early_err, sizeof(q->early_err), "out of memory");
			return;
		}
		q->body = nb;
		q->cap = nc;
	}
	memcpy(q->body + q->len, data, n);
	q->len += n;
	q->body[q->len] = '\0';
}

static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sv_out *o = cls;
	ssize_t n = o->read(o->cls, buf, max);

	(void)pos;
	return n > 0 ? n : n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
	struct sv_out *o = cls;

	if (o->done)
		o->done(o->cls);
	free(o);
}

static enum MHD_Result respond(struct MHD_Connection *con, struct sv_out *o)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	if (o->read) {
		struct sv_out *keep = malloc(sizeof(*keep));

		if (!keep) {
			o->done(o->cls);
			return MHD_NO;
		}
		*keep = *o;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 << 10, stream_cb, keep, stream_free);
		if (!resp) {
			stream_free(keep);
			return MHD_NO;
		}
	} else {
		resp = MHD_create_response_from_buffer(o->len, o->body, MHD_RESPMEM_MUST_FREE);
		if (!resp)
			return MHD_NO;
		o->body = NULL;
	}
	MHD_add_response_header(resp, "Content-Type", o->type ? o->type : "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (o->status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	if (o->session[0])
		MHD_add_response_header(resp, "Mcp-Session-Id", o->session);
	if (o->status == 405 && o->allow && o->allow[0])
		MHD_add_response_header(resp, "Allow", o->allow);
	r = MHD_queue_response(con, (unsigned)o->status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result finish(struct sv_server *s, struct MHD_Connection *con, const char *method,
			      struct sv_req *q)
{
	struct sv_out o = { 0 };
	enum MHD_Result r;

	if (q->answered)
		return MHD_YES;
	q->answered = true;
	if (q->early) {
		sv_reply_error(&o, q->early, "%s", q->early_err);
	} else {
		q->c.body = q->body ? q->body : "";
		q->c.len = q->len;
		sv_dispatch(&q->c, &o);
	}
	sv_log_request(s, q->ip, q->authed ? q->c.tenant.name : NULL, method, q->c.r.verb,
		       q->c.r.name[0] ? q->c.r.name : NULL, o.status, o.outcome);
	o.allow = q->c.r.allow;
	r = respond(con, &o);
	free(o.body);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct sv_server *s = cls;
	struct sv_req *q = *con_cls;

	(void)version;
	if (!q) {
		q = first_call(s, con, url, method);
		if (!q)
			return MHD_NO;
		*con_cls = q;
		/* Refused before the body: answer now; the library closes the connection
		 * instead of reading a body nobody wants. */
		return q->early ? finish(s, con, method, q) : MHD_YES;
	}
	if (*upload_size) {
		take_body(s, q, upload, *upload_size);
		*upload_size = 0;
		return q->early ? finish(s, con, method, q) : MHD_YES;
	}
	return finish(s, con, method, q);
}

static void on_done(void *cls, struct MHD_Connection *con, void **con_cls,
		    enum MHD_RequestTerminationCode why)
{
	struct sv_req *q = *con_cls;

	(void)con;
	(void)why;
	if (q && q->slot)
		sv_stream_give(cls, q->c.tenant.name);
	if (q) {
		free(q->body);
		free(q);
		*con_cls = NULL;
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("mvm serve: ", stderr);
	vfprintf(stderr, fmt, ap);
}

static int server_init(struct sv_server *s, const struct sv_opts *o)
{
	char err[256];
	int ret;

	s->o = *o;
	pthread_mutex_init(&s->lock, NULL);
	op_policy_init(&s->pol);
	if (o->allow_max && op_policy_load_allow_max(&s->pol, o->allow_max, err, sizeof(err))) {
		fprintf(stderr, "mvm serve: --allow-max: %s\n", err);
		return -1;
	}
	if (!(s->tokens = calloc(1, sizeof(*s->tokens))) || !(s->mcp = calloc(1, sizeof(*s->mcp))))
		return -1;
	svm_init(s->mcp, SVM_PER_TENANT, SVM_IDLE_MS);
	if (o->tokens)
		snprintf(s->tokens_path, sizeof(s->tokens_path), "%s", o->tokens);
	else if (sv_tokens_default_path(s->tokens_path, sizeof(s->tokens_path))) {
		fprintf(stderr, "mvm serve: no tokens file (give --tokens FILE)\n");
		return -1;
	}
	if ((ret = sv_tokens_load(s->tokens_path, s->tokens, err, sizeof(err)))) {
		fprintf(stderr, "mvm serve: tokens: %s\n", err);
		return -1;
	}
	if (o->log)
		snprintf(s->log_path, sizeof(s->log_path), "%s", o->log);
	tokens_fresh(s);
	return 0;
}

/* SIGINT/SIGTERM may land on any thread: the handler wakes main through a pipe. */
static int stop_pipe[2] = { -1, -1 };
static void on_stop(int sig)
{
	char c = (char)sig;

	(void)!write(stop_pipe[1], &c, 1);
}

static int wait_for_stop(void)
{
	char c;

	while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

/* The daemon, configured from @o (TLS keys in @cert/@key when given). */
static struct MHD_Daemon *start_daemon(struct sv_server *s, const struct sockaddr_storage *sa,
				       const char *cert, const char *key)
{
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	if (sa->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (cert)
		flags |= MHD_USE_TLS;
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
		MHD_OPTION_CONNECTION_LIMIT, s->o.max_conns,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->o.max_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, s->o.idle_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEADER_MEM,
		MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
		cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, cert,
		MHD_OPTION_HTTPS_MEM_KEY, key,
		MHD_OPTION_END);
}

int sv_serve(const struct sv_opts *o)
{
	struct sv_server *s = calloc(1, sizeof(*s));
	struct sockaddr_storage sa;
	char *cert = NULL, *key = NULL;
	struct MHD_Daemon *d = NULL;
	int loop, ret = -1;
	unsigned salen;

	if (!s)
		return -1;
	loop = sv_listen_parse(o->listen, &sa, &salen);
	if (loop < 0) {
		fprintf(stderr, "mvm serve: --listen %s: expected ADDR:PORT (an IP address; [V6]:PORT)\n", o->listen);
		goto out;
	}
	if (!!o->tls_cert != !!o->tls_key) {
		fprintf(stderr, "mvm serve: give both --tls-cert and --tls-key\n");
		goto out;
	}
	if (!loop && !o->tls_cert && !o->allow_plain) {
		fprintf(stderr, "mvm serve: %s is not loopback: tokens would cross the network in clear; "
			"give --tls-cert/--tls-key (or --allow-plain-http behind your own TLS)\n", o->listen);
		goto out;
	}
	if (o->tls_cert && (!(cert = file_read_text(o->tls_cert, PEM_MAX)) ||
			    !(key = file_read_text(o->tls_key, PEM_MAX)))) {
		fprintf(stderr, "mvm serve: cannot read %s\n", cert ? o->tls_key : o->tls_cert);
		goto out;
	}
	if (server_init(s, o))
		goto out;
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(stop_pipe, O_CLOEXEC))
		goto out;
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	d = start_daemon(s, &sa, cert, key);
	if (!d) {
		fprintf(stderr, "mvm serve: cannot listen on %s (in use, or a bad certificate)\n", o->listen);
		goto out;
	}
	fprintf(stderr, "mvm serve: listening on %s%s (tokens: %s)\n", o->listen,
		cert ? " with TLS" : "", s->tokens_path);
	ret = wait_for_stop();
out:
	if (d)
		MHD_stop_daemon(d);
	if (key)
		explicit_bzero(key, strlen(key));
	free(cert);
	free(key);
	op_policy_free(&s->pol);
	free(s->tokens);
	free(s->mcp);
	free(s);
	return ret;
}
