/* Rule parser and matcher for the network policy (docs/network-policy.md). */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net_rules.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

void net_config_default(struct net_config *c)
{
	memset(c, 0, sizeof(*c));
	(void)net_addr_parse("10.0.2.0", &c->net4);
	(void)net_addr_parse("10.0.2.2", &c->gw4);
	(void)net_addr_parse("10.0.2.3", &c->dns4);
	c->prefix4 = 24;
	(void)net_addr_parse("fec0::", &c->net6);
	(void)net_addr_parse("fec0::2", &c->gw6);
	(void)net_addr_parse("fec0::3", &c->dns6);
	c->prefix6 = 64;
	c->ttl_min = 30;
	c->ttl_max = 300;
	c->ev_rate = 10;
	c->ev_burst = 50;
	c->allow_dhcp = true;
	c->max_conns = NET_DEF_MAX_CONNS;
	c->max_flows = NET_DEF_MAX_FLOWS;
}

int net_addr_parse(const char *s, struct net_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->b) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->b) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

const char *net_addr_format(const struct net_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, a->b, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

static size_t addr_len(const struct net_addr *a)
{
	return a->family == AF_INET ? 4 : 16;
}

bool net_addr_equal(const struct net_addr *a, const struct net_addr *b)
{
	return a->family == b->family && !memcmp(a->b, b->b, addr_len(a));
}

bool net_addr_in_prefix(const struct net_addr *a, const struct net_addr *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (a->family != net->family || prefix > addr_len(a) * 8)
		return false;
	if (memcmp(a->b, net->b, full))
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a->b[full] & mask) == (net->b[full] & mask);
}

static bool label_char(int c)
{
	return isalnum(c) || c == '-' || c == '_';
}

int net_name_normalize(const char *in, char *out, size_t outlen, char *err, size_t errlen)
{
	size_t n = strlen(in), label = 0;

	if (n && in[n - 1] == '.')
		n--; /* "example.com." is the same name, fully qualified */
	if (n == 0)
		return fail(err, errlen, "empty name");
	if (n > NET_NAME_MAX || n + 1 > outlen)
		return fail(err, errlen, "name longer than %d characters", NET_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '.') {
			if (!label)
				return fail(err, errlen, "empty label in name");
			label = 0;
		} else if (!label_char(c)) {
			return fail(err, errlen, "invalid character '%c' in name",
				    isprint(c) ? c : '?');
		} else if (++label > 63) {
			return fail(err, errlen, "label longer than 63 characters");
		}
		out[i] = (char)tolower(c);
	}
	out[n] = '\0';
	return 0;
}

/* Split an optional trailing "/tcp" or "/udp" off @s (modified in place). */
static unsigned take_proto(char *s)
{
	char *slash = strrchr(s, '/');

	if (!slash)
		return NET_P_ANY;
	if (!strcasecmp(slash + 1, "tcp")) {
		*slash = '\0';
		return NET_P_TCP;
	}
	if (!strcasecmp(slash + 1, "udp")) {
		*slash = '\0';
		return NET_P_UDP;
	}
	return NET_P_ANY;
}

static int parse_u16(const char *s, uint16_t *v)
{
	char *end;
	unsigned long x;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || x > 65535)
		return -EINVAL;
	*v = (uint16_t)x;
	return 0;
}

static int parse_ports(const char *s, struct net_rule *r, char *err, size_t errlen)
{
	char buf[16];
	char *dash;

	if (strlen(s) >= sizeof(buf))
		return fail(err, errlen, "bad port '%s'", s);
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_u16(buf, &r->port_lo) || (dash && parse_u16(dash + 1, &r->port_hi)))
		return fail(err, errlen, "bad port '%s' (want 1-65535 or LO-HI)", s);
	if (!dash)
		r->port_hi = r->port_lo;
	if (r->port_lo == 0)
		return fail(err, errlen, "port 0 is not a valid destination port");
	if (r->port_lo > r->port_hi)
		return fail(err, errlen, "port range '%s' is reversed", s);
	return 0;
}

/* Split "HOST[/PREFIX][:PORTS]" into host, prefix text and port text. IPv6
 * must be bracketed so the port colon is unambiguous. */
static int split_host(char *s, char **host, char **prefix, char **ports, bool *bracketed, char *err,
		      size_t errlen)
{
	char *colon;

	*prefix = *ports = NULL;
	*bracketed = false;
	if (*s == '[') {
		char *close = strchr(s, ']');
		if (!close)
			return fail(err, errlen, "missing ']' after IPv6 address");
		*close = '\0';
		*host = s + 1;
		*bracketed = true;
		s = close + 1;
		if (*s == '/') {
			*s++ = '\0';
			*prefix = s;
		}
		colon = strchr(s, ':');
	} else {
		*host = s;
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			return fail(err, errlen,
				    "IPv6 addresses must be in brackets, e.g. [2001:db8::1]:443");
	}
	if (*bracketed && *s && *s != ':' && !*prefix)
		return fail(err, errlen, "unexpected text after ']'");
	if (colon) {
		*colon = '\0';
		*ports = colon + 1;
	}
	if (!*bracketed) {
		char *slash = strchr(*host, '/');
		if (slash) {
			*slash = '\0';
			*prefix = slash + 1;
		}
	}
	return 0;
}

static int parse_cidr(struct net_rule *r, const char *host, const char *prefix, bool bracketed,
		      char *err, size_t errlen)
{
	struct net_addr net;
	uint16_t plen;
	unsigned max;

	r->kind = NET_RULE_CIDR;
	if (bracketed != (r->addr.family == AF_INET6))
		return fail(err, errlen,
			    bracketed ? "'%s' in brackets is not an IPv6 address"
				      : "IPv6 address '%s' needs brackets",
			    host);
	max = r->addr.family == AF_INET ? 32 : 128;
	r->prefix = max;
	if (!prefix)
		return 0;
	if (parse_u16(prefix, &plen) || plen > max)
		return fail(err, errlen, "bad prefix length '/%s' (want 0-%u)", prefix, max);
	r->prefix = plen;
	net = r->addr;
	for (unsigned bit = plen; bit < max; bit++)
		net.b[bit / 8] &= (uint8_t) ~(0x80 >> (bit % 8));
	if (!net_addr_equal(&net, &r->addr))
		return fail(err, errlen, "address %s has host bits set beyond /%u", host, plen);
	return 0;
}

static int parse_name(struct net_rule *r, const char *host, const char *prefix, char *err,
		      size_t errlen)
{
	const char *last;
	bool wild = !strncmp(host, "*.", 2);

	if (prefix)
		return fail(err, errlen, "a prefix length only applies to IP addresses");
	if (strchr(host + (wild ? 1 : 0), '*'))
		return fail(err, errlen, "'*' is only allowed as a leading '*.' label");
	if (net_name_normalize(host + (wild ? 2 : 0), r->name, sizeof(r->name), err, errlen))
		return -EINVAL;
	if (!strchr(r->name, '.'))
		return fail(
		    err, errlen,
		    wild ? "wildcard needs at least two labels after '*.' (e.g. *.example.com)"
			 : "name '%s' needs at least two labels (e.g. example.com)",
		    r->name);
	last = strrchr(r->name, '.') + 1;
	if (strspn(last, "0123456789") == strlen(last))
		return fail(err, errlen, "'%s' is neither a valid IP address nor a name", host);
	r->kind = wild ? NET_RULE_SUFFIX : NET_RULE_NAME;
	return 0;
}

int net_rule_parse(const char *text, enum net_action act, struct net_rule *out, char *err,
		   size_t errlen)
{
	char buf[NET_RULE_TEXT_MAX];
	char *host = NULL, *prefix = NULL, *ports = NULL;
	bool bracketed = false;
	int rc;

	memset(out, 0, sizeof(*out));
	while (isspace((unsigned char)*text))
		text++;
	if (!*text)
		return fail(err, errlen, "empty rule");
	if (strlen(text) >= sizeof(buf))
		return fail(err, errlen, "rule longer than %d characters", NET_RULE_TEXT_MAX - 1);
	strcpy(buf, text);
	for (size_t n = strlen(buf); n && isspace((unsigned char)buf[n - 1]); n--)
		buf[n - 1] = '\0';
	strcpy(out->text, buf);
	out->action = act;
	out->port_hi = 65535;
	out->protos = take_proto(buf);
	rc = split_host(buf, &host, &prefix, &ports, &bracketed, err, errlen);
	if (rc)
		return rc;
	if (!*host)
		return fail(err, errlen, "missing host in rule '%s'", text);
	if (prefix && !isdigit((unsigned char)*prefix))
		return fail(err, errlen,
			    "unknown suffix '/%s' (want /tcp, /udp or a prefix length)", prefix);
	if (ports && parse_ports(ports, out, err, errlen))
		return -EINVAL;
	if (!strcasecmp(host, "host-loopback") && !bracketed) {
		if (prefix)
			return fail(err, errlen, "host-loopback takes no prefix length");
		out->kind = NET_RULE_HOST_LOOPBACK;
		return 0;
	}
	if (!net_addr_parse(host, &out->addr))
		return parse_cidr(out, host, prefix, bracketed, err, errlen);
	if (bracketed)
		return fail(err, errlen, "'%s' is not an IPv6 address", host);
	return parse_name(out, host, prefix, err, errlen);
}

void net_rules_init(struct net_rules *r, enum net_mode mode)
{
	memset(r, 0, sizeof(*r));
	r->mode = mode;
}

void net_rules_free(struct net_rules *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

static bool rule_same(const struct net_rule *a, const struct net_rule *b)
{
	return a->action == b->action && !strcmp(a->text, b->text);
}

int net_rules_add(struct net_rules *r, enum net_action act, const char *text, char *err,
		  size_t errlen)
{
	struct net_rule rule;
	int rc = net_rule_parse(text, act, &rule, err, errlen);

	if (rc)
		return rc;
	for (size_t i = 0; i < r->n; i++)
		if (rule_same(&r->v[i], &rule))
			return 0;
	if (r->n >= NET_RULES_MAX) {
		fail(err, errlen, "too many rules (max %d)", NET_RULES_MAX);
		return -ENOSPC;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct net_rule *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = rule;
	if (act == NET_DENY)
		r->gen++; /* a new deny may revoke established connections */
	return 0;
}

int net_rules_remove(struct net_rules *r, const char *text)
{
	size_t j = 0;
	bool found = false;

	for (size_t i = 0; i < r->n; i++) {
		if (!strcmp(r->v[i].text, text)) {
			found = true;
			continue;
		}
		r->v[j++] = r->v[i];
	}
	r->n = j;
	if (!found)
		return -ENOENT;
	r->gen++;
	return 0;
}

void net_rules_set_mode(struct net_rules *r, enum net_mode mode)
{
	r->mode = mode;
	r->gen++;
}

static const char *const mode_names[] = {
    [NET_MODE_NONE] = "none",
    [NET_MODE_ALLOWLIST] = "allowlist",
    [NET_MODE_OPEN] = "open",
};

int net_mode_parse(const char *s, enum net_mode *out)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcmp(s, mode_names[i])) {
			*out = (enum net_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *net_mode_name(enum net_mode m)
{
	return (unsigned)m < 3 ? mode_names[m] : "?";
}

bool net_rule_match_port(const struct net_rule *r, uint16_t port, unsigned proto)
{
	if (!(r->protos & proto))
		return false;
	if (proto == NET_P_ICMP)
		return r->port_lo == 0 && r->port_hi == 65535;
	return port >= r->port_lo && port <= r->port_hi;
}

bool net_rule_match_name(const struct net_rule *r, const char *name)
{
	size_t n, s;

	if (r->kind == NET_RULE_NAME)
		return !strcmp(r->name, name);
	if (r->kind != NET_RULE_SUFFIX)
		return false;
	/* "*.example.com" matches "a.example.com" and "a.b.example.com", not
	 * "example.com" itself nor "badexample.com": a label boundary is required. */
	n = strlen(name);
	s = strlen(r->name);
	return n > s + 1 && name[n - s - 1] == '.' && !strcmp(name + n - s, r->name);
}

bool net_rule_match_addr(const struct net_rule *r, const struct net_addr *a, uint16_t port,
			 unsigned proto)
{
	return r->kind == NET_RULE_CIDR && net_addr_in_prefix(a, &r->addr, r->prefix) &&
	       net_rule_match_port(r, port, proto);
}

const struct net_rule *net_rules_find_name(const struct net_rules *r, enum net_action act,
					   const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].action == act && net_rule_match_name(&r->v[i], name))
			return &r->v[i];
	return NULL;
}

const struct net_rule *net_rules_find_name_port(const struct net_rules *r, enum net_action act,
						const char *name, uint16_t port, unsigned proto)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct net_rule *x = &r->v[i];
		if (x->action == act && net_rule_match_name(x, name) &&
		    net_rule_match_port(x, port, proto))
			return x;
	}
	return NULL;
}

const struct net_rule *net_rules_find_addr(const struct net_rules *r, enum net_action act,
					   const struct net_addr *a, uint16_t port, unsigned proto,
					   bool exact)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct net_rule *x = &r->v[i];
		if (x->action != act || !net_rule_match_addr(x, a, port, proto))
			continue;
		if (exact && x->prefix != addr_len(a) * 8)
			continue;
		return x;
	}
	return NULL;
}

const struct net_rule *net_rules_find_loopback(const struct net_rules *r, enum net_action act,
					       uint16_t port, unsigned proto)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct net_rule *x = &r->v[i];
		if (x->action == act && x->kind == NET_RULE_HOST_LOOPBACK &&
		    net_rule_match_port(x, port, proto))
			return x;
	}
	return NULL;
}

/* ---- JSON policy (docs/network-policy.md) ---- */
#define POLICY_FILE_MAX (1 << 20) /* a policy is text written by a human */

static int json_addr(const cJSON *o, const char *key, struct net_addr *a, int family, char *err,
		     size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	struct net_addr tmp;

	if (!v)
		return 0;
	if (!cJSON_IsString(v) || net_addr_parse(v->valuestring, &tmp) || tmp.family != family)
		return fail(err, errlen, "network.%s: want an IPv%c address", key,
			    family == AF_INET ? '4' : '6');
	*a = tmp;
	return 0;
}

static int json_prefix(const cJSON *o, const char *key, struct net_addr *net, unsigned *prefix,
		       int family, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	struct net_rule r;
	char text[NET_RULE_TEXT_MAX];

	if (!v)
		return 0;
	if (!cJSON_IsString(v))
		return fail(err, errlen, "network.%s: want a string like 10.0.2.0/24", key);
	/* Reuse the rule parser for CIDR syntax; v6 is written without brackets here. */
	if (family == AF_INET6 && v->valuestring[0] != '[') {
		const char *slash = strchr(v->valuestring, '/');
		int len = slash ? (int)(slash - v->valuestring) : (int)strlen(v->valuestring);
		snprintf(text, sizeof(text), "[%.*s]%s", len, v->valuestring, slash ? slash : "");
	} else {
		snprintf(text, sizeof(text), "%s", v->valuestring);
	}
	if (net_rule_parse(text, NET_ALLOW, &r, err, errlen) || r.kind != NET_RULE_CIDR ||
	    r.addr.family != family || r.port_lo != 0 || r.protos != NET_P_ANY)
		return fail(err, errlen, "network.%s: want an IPv%c prefix", key,
			    family == AF_INET ? '4' : '6');
	*net = r.addr;
	*prefix = r.prefix;
	return 0;
}

static int json_u32(const cJSON *o, const char *sect, const char *key, uint32_t *out, uint32_t max,
		    char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > max ||
	    v->valuedouble != (double)(uint32_t)v->valuedouble)
		return fail(err, errlen, "%s.%s: want an integer 0-%u", sect, key, max);
	*out = (uint32_t)v->valuedouble;
	return 0;
}

/* Reject unknown keys: a typo like "alow" must not silently mean "deny all". */
static int json_only(const cJSON *o, const char *sect, const char *const *keys, char *err,
		     size_t errlen)
{
	const cJSON *it;

	if (!cJSON_IsObject(o))
		return fail(err, errlen, "%s: want an object", sect);
	cJSON_ArrayForEach(it, o)
	{
		size_t i;
		for (i = 0; keys[i] && strcmp(keys[i], it->string); i++)
			;
		if (!keys[i])
			return fail(err, errlen, "%s: unknown key \"%s\"", sect, it->string);
	}
	return 0;
}

static int json_network(const cJSON *o, struct net_config *c, char *err, size_t errlen)
{
	static const char *const keys[] = {"ipv4",     "gateway4", "dns4", "ipv6",
					   "gateway6", "dns6",	   "dhcp", NULL};
	const cJSON *dhcp;

	if (!o)
		return 0;
	if (json_only(o, "network", keys, err, errlen) ||
	    json_prefix(o, "ipv4", &c->net4, &c->prefix4, AF_INET, err, errlen) ||
	    json_addr(o, "gateway4", &c->gw4, AF_INET, err, errlen) ||
	    json_addr(o, "dns4", &c->dns4, AF_INET, err, errlen) ||
	    json_prefix(o, "ipv6", &c->net6, &c->prefix6, AF_INET6, err, errlen) ||
	    json_addr(o, "gateway6", &c->gw6, AF_INET6, err, errlen) ||
	    json_addr(o, "dns6", &c->dns6, AF_INET6, err, errlen))
		return -EINVAL;
	dhcp = cJSON_GetObjectItemCaseSensitive(o, "dhcp");
	if (dhcp && !cJSON_IsBool(dhcp))
		return fail(err, errlen, "network.dhcp: want true or false");
	if (dhcp)
		c->allow_dhcp = cJSON_IsTrue(dhcp);
	return 0;
}

static int json_tuning(const cJSON *root, struct net_config *c, char *err, size_t errlen)
{
	static const char *const dkeys[] = {"ttl_min", "ttl_max", NULL};
	static const char *const ekeys[] = {"rate", "burst", NULL};
	static const char *const lkeys[] = {"connections", "flows", NULL};
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "dns");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "events");
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(root, "limits");

	if (d && (json_only(d, "dns", dkeys, err, errlen) ||
		  json_u32(d, "dns", "ttl_min", &c->ttl_min, 86400, err, errlen) ||
		  json_u32(d, "dns", "ttl_max", &c->ttl_max, 86400, err, errlen)))
		return -EINVAL;
	if (c->ttl_min > c->ttl_max)
		return fail(err, errlen, "dns.ttl_min is larger than dns.ttl_max");
	if (e && (json_only(e, "events", ekeys, err, errlen) ||
		  json_u32(e, "events", "rate", &c->ev_rate, 100000, err, errlen) ||
		  json_u32(e, "events", "burst", &c->ev_burst, 100000, err, errlen)))
		return -EINVAL;
	if (l && (json_only(l, "limits", lkeys, err, errlen) ||
		  json_u32(l, "limits", "connections", &c->max_conns, NET_LIMIT_MAX, err, errlen) ||
		  json_u32(l, "limits", "flows", &c->max_flows, NET_LIMIT_MAX, err, errlen)))
		return -EINVAL;
	return 0;
}

static int json_rules(const cJSON *root, const char *key, enum net_action act, struct net_rules *r,
		      char *err, size_t errlen)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key), *it;
	char why[200];
	int rc, i = 0;

	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr))
		return fail(err, errlen, "%s: want an array of rule strings", key);
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it))
			return fail(err, errlen, "%s[%d]: want a string", key, i);
		rc = net_rules_add(r, act, it->valuestring, why, sizeof(why));
		if (rc) {
			fail(err, errlen, "%s[%d] \"%.60s\": %s", key, i, it->valuestring, why);
			return rc;
		}
		i++;
	}
	return 0;
}

static int json_policy(const cJSON *root, struct net_rules *r, struct net_config *c, char *err,
		       size_t errlen)
{
	static const char *const keys[] = {"version", "mode", "allow",	"deny",
					   "network", "dns",  "events", "limits", NULL};
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "mode");
	int rc;

	if (json_only(root, "policy", keys, err, errlen))
		return -EINVAL;
	if (!cJSON_IsNumber(ver) || ver->valuedouble != 1)
		return fail(err, errlen, "version: want 1");
	if (!cJSON_IsString(mode) || net_mode_parse(mode->valuestring, &r->mode))
		return fail(err, errlen, "mode: want \"none\", \"allowlist\" or \"open\"");
	rc = json_rules(root, "allow", NET_ALLOW, r, err, errlen);
	if (!rc)
		rc = json_rules(root, "deny", NET_DENY, r, err, errlen);
	if (!rc)
		rc =
		    json_network(cJSON_GetObjectItemCaseSensitive(root, "network"), c, err, errlen);
	if (!rc)
		rc = json_tuning(root, c, err, errlen);
	return rc;
}

int net_policy_parse_json(const char *json, size_t len, struct net_rules *r, struct net_config *c,
			  char *err, size_t errlen)
{
	struct net_rules nr;
	struct net_config nc = *c;
	cJSON *root = cJSON_ParseWithLength(json, len);
	int rc;

	if (!root)
		return fail(err, errlen, "not valid JSON");
	net_rules_init(&nr, NET_MODE_NONE);
	rc = json_policy(root, &nr, &nc, err, errlen);
	cJSON_Delete(root);
	if (rc) {
		net_rules_free(&nr);
		return rc;
	}
	nr.gen = r->gen + 1; /* everything may have changed */
	net_rules_free(r);
	*r = nr;
	*c = nc;
	return 0;
}

int net_policy_load_file(const char *path, struct net_rules *r, struct net_config *c, char *err,
			 size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t got;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > POLICY_FILE_MAX) {
		close(fd);
		return fail(err, errlen, "%s: not a regular file under 1 MiB", path);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	got = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (got != st.st_size) {
		free(buf);
		return fail(err, errlen, "%s: short read", path);
	}
	rc = net_policy_parse_json(buf, (size_t)got, r, c, err, errlen);
	free(buf);
	return rc;
}

char *net_rules_to_json(const struct net_rules *rs)
{
	cJSON *j = cJSON_CreateObject();
	char *out = NULL;

	if (j && cJSON_AddStringToObject(j, "mode", net_mode_name(rs->mode))) {
		for (int act = NET_ALLOW; act <= NET_DENY; act++) {
			cJSON *a = cJSON_AddArrayToObject(j, act == NET_ALLOW ? "allow" : "deny");

			for (size_t i = 0; a && i < rs->n; i++)
				if ((int)rs->v[i].action == act)
					cJSON_AddItemToArray(a, cJSON_CreateString(rs->v[i].text));
		}
		out = cJSON_PrintUnformatted(j);
	}
	cJSON_Delete(j);
	return out;
}
