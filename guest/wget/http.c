/* mvm-wget's HTTP/1.1 client (wget.h): one connection per request, redirects, timeouts. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/wget/wget.h"

#define MAX_REDIRECTS 20
#define LINE_MAX_LEN  8192

struct url {
	char host[256], port[8], path[4096];
};

struct conn {
	int fd, timeout_ms;
	bool reported;			/* the error was already printed */
	size_t pos, len;
	char buf[16384];
};

struct reply {
	int status;
	long long length;		/* -1: until the connection closes */
	bool chunked;
	char status_line[256], location[4096];
};

/* http://HOST[:PORT][/PATH] ([v6] hosts too). 0 or -1. */
static int parse_url(const char *s, struct url *u)
{
	const char *h = s + 7, *end = h + strcspn(h, "/?#"), *colon;
	size_t hl;

	if (strncmp(s, "http://", 7))
		return -1;
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (!rb)
			return -1;
		hl = (size_t)(rb - h - 1);
		memcpy(u->host, h + 1, hl < sizeof(u->host) ? hl : 0);
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hl = (size_t)((colon ? colon : end) - h);
		memcpy(u->host, h, hl < sizeof(u->host) ? hl : 0);
	}
	if (!hl || hl >= sizeof(u->host))
		return -1;
	u->host[hl] = 0;
	snprintf(u->port, sizeof(u->port), "%.*s", colon ? (int)(end - colon - 1) : 2, colon ? colon + 1 : "80");
	if (!u->port[0] || strspn(u->port, "0123456789") != strlen(u->port))
		return -1;
	snprintf(u->path, sizeof(u->path), "%s%.*s", *end == '/' ? "" : "/", (int)strcspn(end, "#"), end);
	return 0;
}

static int wait_for(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r;

	do
		r = poll(&p, 1, timeout_ms ? timeout_ms : -1);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0 ? 0 : -1;
}

static int connect_to(const struct url *u, const struct wget_opts *o)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	char ip[64] = "";
	int fd = -1, e = 0, r;
	socklen_t el = sizeof(e);

	r = getaddrinfo(u->host, u->port, &hints, &ai);
	if (r) {
		wget_err("bad address '%s'", u->host);
		return -1;
	}
	for (a = ai; a && fd < 0; a = a->ai_next) {
		getnameinfo(a->ai_addr, a->ai_addrlen, ip, sizeof(ip), NULL, 0, NI_NUMERICHOST);
		if (!o->quiet)
			fprintf(stderr, "Connecting to %s (%s:%s)\n", u->host, ip, u->port);
		fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if ((connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) ||
		    wait_for(fd, POLLOUT, o->timeout_s * 1000) ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) || (e && (errno = e))) {
			e = errno;
			close(fd);
			fd = -1;
			errno = e;
		}
	}
	freeaddrinfo(ai);
	if (fd < 0)
		wget_err("can't connect to remote host (%s): %s", ip, strerror(errno));
	return fd;
}

/* All of @p to @fd; a non-blocking @fd (the socket) waits up to @timeout_ms for room. */
static int write_all(int fd, const char *p, size_t n, int timeout_ms)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && (errno == EINTR || (errno == EAGAIN && !wait_for(fd, POLLOUT, timeout_ms))))
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* More bytes into c->buf; 0, or -1 (errno; 0 at end of stream). */
static int fill(struct conn *c)
{
	ssize_t r;

	if (c->pos == c->len)
		c->pos = c->len = 0;
	for (;;) {
		r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (r > 0) {
			c->len += (size_t)r;
			return 0;
		}
		if (r == 0) {
			errno = 0;
			return -1;
		}
		if (errno != EAGAIN || wait_for(c->fd, POLLIN, c->timeout_ms))
			return -1;
	}
}

/* One CRLF- or LF-terminated line, without it. 0 or -1. */
static int read_line(struct conn *c, char *out, size_t cap)
{
	size_t n = 0;

	for (;;) {
		char *nl = memchr(c->buf + c->pos, '\n', c->len - c->pos);
		size_t take = nl ? (size_t)(nl - (c->buf + c->pos)) : c->len - c->pos;

		if (n + take >= cap)
			return errno = EMSGSIZE, -1;
		memcpy(out + n, c->buf + c->pos, take);
		n += take;
		c->pos += take + (nl ? 1 : 0);
		if (nl)
			break;
		if (c->len == sizeof(c->buf) && c->pos == c->len)
			c->pos = c->len = 0;
		if (fill(c))
			return -1;
	}
	if (n && out[n - 1] == '\r')
		n--;
	out[n] = 0;
	return 0;
}

static int send_request(struct conn *c, const struct url *u, const struct wget_opts *o)
{
	char req[LINE_MAX_LEN * 2];
	size_t n;
	bool v6 = strchr(u->host, ':') != NULL, header_agent = false;

	n = (size_t)snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: %s%s%s%s%s\r\n",
			     o->post_data ? "POST" : "GET", u->path, v6 ? "[" : "", u->host, v6 ? "]" : "",
			     strcmp(u->port, "80") ? ":" : "", strcmp(u->port, "80") ? u->port : "");
	for (int i = 0; i < o->nheaders && n < sizeof(req); i++) {
		header_agent |= !strncasecmp(o->headers[i], "User-Agent:", 11);
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s\r\n", o->headers[i]);
	}
	if (!header_agent && n < sizeof(req))
		n += (size_t)snprintf(req + n, sizeof(req) - n, "User-Agent: %s\r\n", o->agent ? o->agent : "Wget");
	if (o->post_data && n < sizeof(req))
		n += (size_t)snprintf(req + n, sizeof(req) - n,
				      "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n",
				      strlen(o->post_data));
	if (n < sizeof(req))
		n += (size_t)snprintf(req + n, sizeof(req) - n, "Connection: close\r\n\r\n");
	if (n >= sizeof(req)) {
		wget_err("request headers too long");
		return -1;
	}
	if (write_all(c->fd, req, n, c->timeout_ms) ||
	    (o->post_data && write_all(c->fd, o->post_data, strlen(o->post_data), c->timeout_ms)))
		return -1;
	return 0;
}

static int read_reply(struct conn *c, const struct wget_opts *o, struct reply *r)
{
	char line[LINE_MAX_LEN];

	do {			/* 1xx interim replies come before the real one */
		if (read_line(c, r->status_line, sizeof(r->status_line)) ||
		    sscanf(r->status_line, "HTTP/%*d.%*d %d", &r->status) != 1)
			return -1;
		r->length = -1;
		r->chunked = false;
		r->location[0] = 0;
		if (o->show_headers)
			fprintf(stderr, "  %s\n", r->status_line);
		while (!read_line(c, line, sizeof(line)) && line[0]) {
			char *v = strchr(line, ':');

			if (o->show_headers)
				fprintf(stderr, "  %s\n", line);
			if (!v)
				continue;
			*v++ = 0;
			v += strspn(v, " \t");
			if (!strcasecmp(line, "Content-Length"))
				r->length = strtoll(v, NULL, 10);
			else if (!strcasecmp(line, "Transfer-Encoding"))
				r->chunked = strcasestr(v, "chunked") != NULL;
			else if (!strcasecmp(line, "Location"))
				snprintf(r->location, sizeof(r->location), "%s", v);
		}
		if (line[0])
			return -1;
	} while (r->status >= 100 && r->status < 200);
	return 0;
}

/* Copy @n bytes (-1: to the end of the stream) of body to @fd. 0, -1 network, -2 local write. */
static int copy_body(struct conn *c, long long n, int fd)
{
	while (n) {
		size_t avail = c->len - c->pos, take;

		if (!avail) {
			if (fill(c))
				return n < 0 && errno == 0 ? 0 : -1;
			continue;
		}
		take = n >= 0 && (long long)avail > n ? (size_t)n : avail;
		if (write_all(fd, c->buf + c->pos, take, 0))
			return -2;
		c->pos += take;
		if (n > 0)
			n -= (long long)take;
	}
	return 0;
}

static int copy_chunked(struct conn *c, int fd)
{
	char line[256];
	long long size;
	int ret;

	for (;;) {
		if (read_line(c, line, sizeof(line)))
			return -1;
		size = strtoll(line, NULL, 16);
		if (size < 0)
			return -1;
		if (size == 0)
			return 0;	/* trailers are not needed with Connection: close */
		ret = copy_body(c, size, fd);
		if (ret || read_line(c, line, sizeof(line)))
			return ret ? ret : -1;
	}
}

/* The file a URL is saved to without -O: its last path component, else index.html. */
static void out_name(const struct wget_opts *o, const struct url *u, char *out, size_t cap)
{
	const char *path = u->path, *q = path + strcspn(path, "?"), *b = q;

	while (b > path && b[-1] != '/')
		b--;
	snprintf(out, cap, "%s%s%.*s", o->dir ? o->dir : "", o->dir ? "/" : "",
		 b < q ? (int)(q - b) : 10, b < q ? b : "index.html");
}

/* The output for a successful reply: stdout, -O FILE (opened once), or the URL's name. */
static int open_out(struct wget_opts *o, const struct url *u, char *name, size_t cap)
{
	if (o->out && !strcmp(o->out, "-"))
		return snprintf(name, cap, "-"), 1;
	if (o->out && o->out_fd >= 0)
		return snprintf(name, cap, "%s", o->out), o->out_fd;
	if (o->out)
		snprintf(name, cap, "%s", o->out);
	else
		out_name(o, u, name, cap);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		wget_err("can't open '%s': %s", name, strerror(errno));
	else if (o->out)
		o->out_fd = fd;
	return fd;
}

/* Follow @url's redirects to a final reply on @c. 0, 1 (error already printed), -1 network error. */
static int request(struct conn *c, const struct wget_opts *o, char *url, size_t cap, struct url *u,
		   struct reply *r)
{
	for (int hops = 0;; hops++) {
		if (parse_url(url, u)) {
			wget_err("bad URL '%s' (only http:// here; other schemes go to busybox wget)", url);
			return 1;
		}
		c->pos = c->len = 0;
		c->fd = connect_to(u, o);
		c->reported = c->fd < 0;
		if (c->fd < 0)
			return -1;
		if (send_request(c, u, o) || read_reply(c, o, r))
			return -1;
		if (r->status < 300 || r->status >= 400 || !r->location[0] || r->status == 304)
			return 0;
		if (hops == MAX_REDIRECTS) {
			wget_err("too many redirections");
			return 1;
		}
		close(c->fd);
		c->fd = -1;
		if (r->location[0] == '/') {
			char base[300];

			snprintf(base, sizeof(base), "http://%s%s%s:%s", strchr(u->host, ':') ? "[" : "", u->host,
				 strchr(u->host, ':') ? "]" : "", u->port);
			snprintf(url, cap, "%s%s", base, r->location);
		} else {
			snprintf(url, cap, "%s", r->location);
		}
		if (strncmp(url, "http://", 7)) {
			wget_err("redirected to '%s': only http:// here (use busybox wget for it)", url);
			return 1;
		}
	}
}

/* One attempt. 0 done, 1 failed for good, -1 network error before any output (may retry). */
static int attempt(struct wget_opts *o, const char *start_url)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct reply r;
	struct url u;
	char url[4096], name[4200];
	int fd = -1, ret;

	if (!c)
		return 1;
	c->fd = -1;
	c->timeout_ms = o->timeout_s * 1000;
	snprintf(url, sizeof(url), "%s", start_url);
	ret = request(c, o, url, sizeof(url), &u, &r);
	if (ret < 0 && !c->reported)
		wget_err("%s", errno == ETIMEDOUT ? "download timed out" : errno ? strerror(errno) :
			 "connection closed early");
	if (!ret && (r.status < 200 || r.status >= 300)) {
		wget_err("server returned error: %s", r.status_line);
		ret = 1;
	}
	if (!ret && o->spider) {
		if (!o->quiet)
			fprintf(stderr, "remote file exists\n");
		goto out;
	}
	if (!ret) {
		fd = open_out(o, &u, name, sizeof(name));
		ret = fd < 0;
	}
	if (!ret) {
		if (!o->quiet)
			fprintf(stderr, "saving to '%s'\n", name);
		ret = r.chunked ? copy_chunked(c, fd) : copy_body(c, r.length, fd);
		if (ret)
			wget_err("%s", ret == -2 ? "write error" : errno == ETIMEDOUT ? "download timed out" :
				 "connection closed early");
		ret = ret ? 1 : 0;	/* output has begun: no retry */
		if (!ret && !o->quiet)
			fprintf(stderr, "'%s' saved\n", name);
	}
	if (fd > 1 && !o->out)
		close(fd);
out:
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	return ret;
}

int wget_http(struct wget_opts *o, const char *url)
{
	int ret = -1;

	for (int i = 0; i < o->tries && ret < 0; i++)
		ret = attempt(o, url);
	return ret ? 1 : 0;
}
