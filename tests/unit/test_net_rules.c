/* Rule parser, matcher and JSON policy loader. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/netpolicy/net_rules.h"

static struct net_rule parse_ok(const char *text)
{
	struct net_rule r;
	char err[200] = "";
	int rc = net_rule_parse(text, NET_ALLOW, &r, err, sizeof(err));

	cr_assert_eq(rc, 0, "rule '%s' rejected: %s", text, err);
	return r;
}

static void parse_bad(const char *text, const char *needle)
{
	struct net_rule r;
	char err[200] = "";
	int rc = net_rule_parse(text, NET_ALLOW, &r, err, sizeof(err));

	cr_assert_eq(rc, -EINVAL, "rule '%s' accepted", text);
	cr_assert(strstr(err, needle), "rule '%s': error '%s' lacks '%s'", text, err, needle);
}

static struct net_addr A(const char *s) {
	struct net_addr a;

	cr_assert_eq(net_addr_parse(s, &a), 0, "bad test address %s", s);
	return a;
}

Test(net_rules, parses_names_and_wildcards)
{
	struct net_rule r = parse_ok("Example.COM.");

	cr_assert_eq(r.kind, NET_RULE_NAME);
	cr_assert_str_eq(r.name, "example.com");
	cr_assert_eq(r.port_lo, 0);
	cr_assert_eq(r.port_hi, 65535);
	cr_assert_eq(r.protos, NET_P_ANY);
	r = parse_ok("*.example.org:443/tcp");
	cr_assert_eq(r.kind, NET_RULE_SUFFIX);
	cr_assert_str_eq(r.name, "example.org");
	cr_assert_eq(r.port_lo, 443);
	cr_assert_eq(r.port_hi, 443);
	cr_assert_eq(r.protos, NET_P_TCP);
	r = parse_ok("api.example.com:8000-8100/UDP");
	cr_assert_eq(r.port_lo, 8000);
	cr_assert_eq(r.port_hi, 8100);
	cr_assert_eq(r.protos, NET_P_UDP);
}

Test(net_rules, parses_addresses_and_prefixes)
{
	struct net_rule r = parse_ok("203.0.113.7");

	cr_assert_eq(r.kind, NET_RULE_CIDR);
	cr_assert_eq(r.prefix, 32);
	r = parse_ok("203.0.113.0/24:80/tcp");
	cr_assert_eq(r.prefix, 24);
	cr_assert_eq(r.port_lo, 80);
	r = parse_ok("[2001:db8::1]:443");
	cr_assert_eq(r.addr.family, AF_INET6);
	cr_assert_eq(r.prefix, 128);
	r = parse_ok("[2001:db8::]/32");
	cr_assert_eq(r.prefix, 32);
	r = parse_ok("[2001:db8::]/32:1-1024/udp");
	cr_assert_eq(r.port_hi, 1024);
	cr_assert_eq(r.protos, NET_P_UDP);
	r = parse_ok("host-loopback:8080/tcp");
	cr_assert_eq(r.kind, NET_RULE_HOST_LOOPBACK);
	cr_assert_eq(r.port_lo, 8080);
	cr_assert_str_eq(r.text, "host-loopback:8080/tcp");
}

Test(net_rules, rejects_bad_rules_with_clear_errors)
{
	parse_bad("", "empty rule");
	parse_bad("*.com", "two labels after '*.'");
	parse_bad("*", "leading");
	parse_bad("a.*.example.com", "only allowed as a leading");
	parse_bad("localhost", "at least two labels");
	parse_bad("example.com:0", "port 0");
	parse_bad("example.com:70000", "bad port");
	parse_bad("example.com:443-80", "reversed");
	parse_bad("example.com:http", "bad port");
	parse_bad("example.com/sctp", "unknown suffix");
	parse_bad("example.com/24", "only applies to IP");
	parse_bad("2001:db8::1", "brackets");
	parse_bad("[203.0.113.7]", "not an IPv6");
	parse_bad("[2001:db8::1", "missing ']'");
	parse_bad("[2001:db8::1]x", "unexpected text");
	parse_bad("203.0.113.7/33", "prefix length");
	parse_bad("203.0.113.1/24", "host bits");
	parse_bad("[2001:db8::1]/32", "host bits");
	parse_bad("exa mple.com", "invalid character");
	parse_bad("ex..com", "empty label");
	parse_bad("1.2.3", "neither a valid IP");
	parse_bad("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", "63");
}

Test(net_rules, suffix_matches_on_label_boundary)
{
	struct net_rule r = parse_ok("*.example.com");

	cr_assert(net_rule_match_name(&r, "a.example.com"));
	cr_assert(net_rule_match_name(&r, "a.b.example.com"));
	cr_assert_not(net_rule_match_name(&r, "example.com"));
	cr_assert_not(net_rule_match_name(&r, "badexample.com"));
	cr_assert_not(net_rule_match_name(&r, "example.com.evil.test"));
	r = parse_ok("example.com");
	cr_assert(net_rule_match_name(&r, "example.com"));
	cr_assert_not(net_rule_match_name(&r, "a.example.com"));
}

Test(net_rules, ports_and_protocols)
{
	struct net_rule r = parse_ok("example.com:8000-8100/tcp");

	cr_assert(net_rule_match_port(&r, 8000, NET_P_TCP));
	cr_assert(net_rule_match_port(&r, 8100, NET_P_TCP));
	cr_assert_not(net_rule_match_port(&r, 7999, NET_P_TCP));
	cr_assert_not(net_rule_match_port(&r, 8101, NET_P_TCP));
	cr_assert_not(net_rule_match_port(&r, 8050, NET_P_UDP));
	cr_assert_not(net_rule_match_port(&r, 0, NET_P_ICMP));
	r = parse_ok("example.com");
	cr_assert(net_rule_match_port(&r, 53, NET_P_UDP));
	cr_assert(net_rule_match_port(&r, 0, NET_P_ICMP));
}

Test(net_rules, cidr_v4_and_v6)
{
	struct net_rule r = parse_ok("198.51.100.0/25");
	struct net_addr in = A("198.51.100.127"), out = A("198.51.100.128");

	cr_assert(net_rule_match_addr(&r, &in, 1, NET_P_TCP));
	cr_assert_not(net_rule_match_addr(&r, &out, 1, NET_P_TCP));
	r = parse_ok("[2001:db8::]/32:443/tcp");
	in = A("2001:db8:ffff::1");
	out = A("2001:db9::1");
	cr_assert(net_rule_match_addr(&r, &in, 443, NET_P_TCP));
	cr_assert_not(net_rule_match_addr(&r, &in, 80, NET_P_TCP));
	cr_assert_not(net_rule_match_addr(&r, &out, 443, NET_P_TCP));
	in = A("198.51.100.1");
	cr_assert_not(net_rule_match_addr(&r, &in, 443, NET_P_TCP), "family mismatch");
	r = parse_ok("0.0.0.0/0");
	cr_assert(net_rule_match_addr(&r, &in, 9, NET_P_UDP));
}

Test(net_rules, add_remove_and_lookup)
{
	struct net_rules rs;
	char err[200];
	struct net_addr a = A("203.0.113.9");

	net_rules_init(&rs, NET_MODE_ALLOWLIST);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "*.example.com:443/tcp", err, sizeof(err)), 0);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "*.example.com:443/tcp", err, sizeof(err)), 0);
	cr_assert_eq(rs.n, 1, "duplicate rule added twice");
	cr_assert_eq(net_rules_add(&rs, NET_DENY, "secret.example.com", err, sizeof(err)), 0);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "203.0.113.0/24", err, sizeof(err)), 0);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "bogus..name", err, sizeof(err)), -EINVAL);
	cr_assert_not_null(net_rules_find_name(&rs, NET_ALLOW, "www.example.com"));
	cr_assert_not_null(net_rules_find_name(&rs, NET_DENY, "secret.example.com"));
	cr_assert_null(net_rules_find_name_port(&rs, NET_ALLOW, "www.example.com", 80, NET_P_TCP));
	cr_assert_not_null(net_rules_find_addr(&rs, NET_ALLOW, &a, 22, NET_P_TCP, false));
	cr_assert_null(net_rules_find_addr(&rs, NET_ALLOW, &a, 22, NET_P_TCP, true));
	uint64_t gen = rs.gen;
	cr_assert_eq(net_rules_remove(&rs, "203.0.113.0/24"), 0);
	cr_assert_gt(rs.gen, gen);
	cr_assert_eq(net_rules_remove(&rs, "203.0.113.0/24"), -ENOENT);
	cr_assert_null(net_rules_find_addr(&rs, NET_ALLOW, &a, 22, NET_P_TCP, false));
	net_rules_free(&rs);
}

Test(net_rules, modes)
{
	enum net_mode m;

	cr_assert_eq(net_mode_parse("open", &m), 0);
	cr_assert_eq(m, NET_MODE_OPEN);
	cr_assert_eq(net_mode_parse("allowlist", &m), 0);
	cr_assert_eq(net_mode_parse("closed", &m), -EINVAL);
	cr_assert_str_eq(net_mode_name(NET_MODE_NONE), "none");
}

Test(net_rules, json_policy_loads)
{
	const char *js =
	    "{\"version\":1,\"mode\":\"allowlist\","
	    "\"allow\":[\"example.com:443/tcp\",\"[2001:db8::]/32\"],"
	    "\"deny\":[\"203.0.113.7\"],"
	    "\"network\":{\"ipv4\":\"10.0.3.0/24\",\"gateway4\":\"10.0.3.2\","
	    "\"dns4\":\"10.0.3.3\",\"ipv6\":\"fd00::/64\",\"dhcp\":false},"
	    "\"dns\":{\"ttl_min\":5,\"ttl_max\":60},\"events\":{\"rate\":1,\"burst\":2}}";
	struct net_rules rs;
	struct net_config c;
	char err[200] = "";
	struct net_addr gw = A("10.0.3.2"), net6 = A("fd00::");

	net_rules_init(&rs, NET_MODE_NONE);
	net_config_default(&c);
	cr_assert_eq(net_policy_parse_json(js, strlen(js), &rs, &c, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(rs.mode, NET_MODE_ALLOWLIST);
	cr_assert_eq(rs.n, 3);
	cr_assert_eq(rs.v[2].action, NET_DENY);
	cr_assert(net_addr_equal(&c.gw4, &gw));
	cr_assert(net_addr_equal(&c.net6, &net6));
	cr_assert_eq(c.prefix4, 24);
	cr_assert_eq(c.ttl_min, 5);
	cr_assert_eq(c.ttl_max, 60);
	cr_assert_eq(c.ev_burst, 2);
	cr_assert_not(c.allow_dhcp);
	net_rules_free(&rs);
}

static void json_bad(const char *js, const char *needle)
{
	struct net_rules rs;
	struct net_config c;
	char err[200] = "";

	net_rules_init(&rs, NET_MODE_OPEN);
	net_config_default(&c);
	cr_assert_neq(net_policy_parse_json(js, strlen(js), &rs, &c, err, sizeof(err)), 0,
		      "accepted %s", js);
	cr_assert(strstr(err, needle), "error '%s' lacks '%s'", err, needle);
	cr_assert_eq(rs.mode, NET_MODE_OPEN, "failed load changed the policy");
	net_rules_free(&rs);
}

Test(net_rules, json_policy_errors)
{
	json_bad("{", "not valid JSON");
	json_bad("{\"version\":2,\"mode\":\"open\"}", "version");
	json_bad("{\"version\":1,\"mode\":\"wide\"}", "mode");
	json_bad("{\"version\":1,\"mode\":\"open\",\"alow\":[]}", "unknown key \"alow\"");
	json_bad("{\"version\":1,\"mode\":\"open\",\"allow\":[\"*.com\"]}", "allow[0]");
	json_bad("{\"version\":1,\"mode\":\"open\",\"allow\":[1]}", "want a string");
	json_bad("{\"version\":1,\"mode\":\"open\",\"network\":{\"gateway4\":\"fec0::2\"}}",
		 "network.gateway4");
	json_bad("{\"version\":1,\"mode\":\"open\",\"dns\":{\"ttl_min\":9,\"ttl_max\":1}}",
		 "ttl_min");
	json_bad("{\"version\":1,\"mode\":\"open\",\"events\":{\"rate\":-1}}", "events.rate");
}

Test(net_rules, policy_file_load)
{
	char path[] = "/tmp/mvm-net-policy-XXXXXX", err[200] = "";
	const char *js = "{\"version\":1,\"mode\":\"open\",\"deny\":[\"203.0.113.0/24\"]}";
	struct net_rules rs;
	struct net_config c;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, js, strlen(js)), (ssize_t)strlen(js));
	close(fd);
	net_rules_init(&rs, NET_MODE_NONE);
	net_config_default(&c);
	cr_assert_eq(net_policy_load_file(path, &rs, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rs.mode, NET_MODE_OPEN);
	cr_assert_eq(rs.n, 1);
	unlink(path);
	cr_assert_eq(net_policy_load_file(path, &rs, &c, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, path), "%s", err);
	cr_assert_eq(net_policy_load_file("/tmp", &rs, &c, err, sizeof(err)), -EINVAL);
	net_rules_free(&rs);
}

Test(net_rules, to_json_is_the_policy_shape)
{
	struct net_rules rs;
	char err[200];
	char *j;

	net_rules_init(&rs, NET_MODE_ALLOWLIST);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "*.example.com:443/tcp", err, sizeof(err)), 0);
	cr_assert_eq(net_rules_add(&rs, NET_DENY, "203.0.113.0/24", err, sizeof(err)), 0);
	cr_assert_eq(net_rules_add(&rs, NET_ALLOW, "api.test", err, sizeof(err)), 0);
	j = net_rules_to_json(&rs);
	cr_assert_str_eq(j, "{\"mode\":\"allowlist\",\"allow\":[\"*.example.com:443/tcp\",\"api.test\"],"
			    "\"deny\":[\"203.0.113.0/24\"]}");
	free(j);
	net_rules_free(&rs);
	net_rules_init(&rs, NET_MODE_NONE);
	j = net_rules_to_json(&rs);
	cr_assert_str_eq(j, "{\"mode\":\"none\",\"allow\":[],\"deny\":[]}");
	free(j);
	net_rules_free(&rs);
}
