/* Denial events of the network policy: token-bucket rate limit and JSON lines. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "devices/netpolicy/net_events.h"

/* Event timestamps are wall-clock: they are read next to other logs. */
static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- events, rate-limited by a token bucket ---- */

static void refill(struct net_policy *p, uint64_t now)
{
	uint64_t cap = (uint64_t)p->cfg.ev_burst * 1000;

	if (now > p->bucket_ms)
		p->tokens_milli += (now - p->bucket_ms) * p->cfg.ev_rate;
	if (p->tokens_milli > cap)
		p->tokens_milli = cap;
	p->bucket_ms = now;
}

static void emit_summary(struct net_policy *p)
{
	struct net_event ev;

	if (!p->suppressed || !p->on_event)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.time_ms = wall_ms();
	ev.type = "net-deny-suppressed";
	ev.proto = "";
	ev.suppressed = p->suppressed;
	snprintf(ev.reason, sizeof(ev.reason), "rate limit");
	p->suppressed = 0;
	p->on_event(p->event_opaque, &ev);
}

void net_policy_flush_events(struct net_policy *p)
{
	emit_summary(p);
}

static void emit(struct net_policy *p, struct net_event *ev)
{
	refill(p, now_ms(p));
	if (p->tokens_milli < 1000) {
		p->suppressed++;
		return;
	}
	p->tokens_milli -= 1000;
	emit_summary(p);
	ev->time_ms = wall_ms();
	ev->type = "net-deny";
	if (p->on_event)
		p->on_event(p->event_opaque, ev);
}

static const char *proto_name(const struct net_pkt *k)
{
	switch (k->proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return k->family ? "ip" : "eth";
	}
}

void net_deny_event(struct net_policy *p, const struct net_pkt *k, const char *proto,
		    const char *name, const char *reason)
{
	struct net_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.proto = proto ? proto : proto_name(k);
	if (k && k->family) {
		ev.dst = k->dst;
		ev.port = k->dport;
	}
	snprintf(ev.name, sizeof(ev.name), "%s", name ? name : "");
	snprintf(ev.reason, sizeof(ev.reason), "%s", reason);
	emit(p, &ev);
}

/* Bounded appender: once full it stays full, and the caller sees -ENOSPC. */
struct jbuf {
	char *p;
	size_t left;
	bool full;
};

static void jput(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jput(struct jbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p, b->left, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->left) {
		b->full = true;
		return;
	}
	b->p += n;
	b->left -= (size_t)n;
}

static void jstr(struct jbuf *b, const char *s)
{
	jput(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			jput(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			jput(b, "\\u%04x", c);
		else
			jput(b, "%c", c);
	}
	jput(b, "\"");
}

static void jstr_or_null(struct jbuf *b, const char *s)
{
	if (s && *s)
		jstr(b, s);
	else
		jput(b, "null");
}

int net_event_to_json(const struct net_event *ev, char *buf, size_t cap)
{
	struct jbuf b = {.p = buf, .left = cap};
	char tbuf[32], abuf[64];
	time_t secs = (time_t)(ev->time_ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S", &tm);
	jput(&b, "{\"time\":\"%s.%03uZ\",\"type\":", tbuf, (unsigned)(ev->time_ms % 1000));
	jstr(&b, ev->type);
	if (ev->suppressed) {
		jput(&b, ",\"suppressed\":%llu}", (unsigned long long)ev->suppressed);
	} else {
		jput(&b, ",\"proto\":");
		jstr(&b, ev->proto);
		jput(&b, ",\"dst\":");
		jstr_or_null(&b,
			     ev->dst.family ? net_addr_format(&ev->dst, abuf, sizeof(abuf)) : NULL);
		jput(&b, ",\"port\":%u,\"name\":", ev->port);
		jstr_or_null(&b, ev->name);
		jput(&b, ",\"reason\":");
		jstr(&b, ev->reason);
		jput(&b, "}");
	}
	return b.full ? -ENOSPC : (int)(b.p - buf);
}

void net_event_log_json(void *opaque, const struct net_event *ev)
{
	char line[NET_EVENT_JSON_MAX];
	int n = net_event_to_json(ev, line, sizeof(line));

	if (n > 0 && opaque) {
		fprintf(opaque, "%s\n", line);
		fflush(opaque);
	}
}
