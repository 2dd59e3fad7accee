/* virtio-net glue: --publish parsing and the network options of mvm run. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "devices/net_slirp.h"
#include "tools/cli/cmd_run.h"

Test(net_glue, publish_forms)
{
	struct net_publish p;
	char err[256], ip[INET_ADDRSTRLEN];

	cr_assert_eq(net_publish_parse("8080:80", &p, err, sizeof(err)), 0);
	cr_assert_eq(p.host_port, 8080);
	cr_assert_eq(p.guest_port, 80);
	cr_assert_str_eq(inet_ntop(AF_INET, &p.host_addr, ip, sizeof(ip)), "127.0.0.1");
	cr_assert_eq(net_publish_parse("0.0.0.0:18000:8000", &p, err, sizeof(err)), 0);
	cr_assert_str_eq(inet_ntop(AF_INET, &p.host_addr, ip, sizeof(ip)), "0.0.0.0");
	cr_assert_eq(p.host_port, 18000);
	cr_assert_eq(p.guest_port, 8000);
}

Test(net_glue, publish_errors)
{
	struct net_publish p;
	char err[256];
	const char *bad[] = { "", "80", "a:80", "80:0", "80:65536", "1.2.3:80:80",
			      "1.2.3.4:80:80:80", "80:80x", ":80", "-1:80" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		cr_assert_neq(net_publish_parse(bad[i], &p, err, sizeof(err)), 0, "%s", bad[i]);
		cr_assert(strstr(err, "--publish"), "%s: %s", bad[i], err);
	}
}

static int parse(struct run_opts *o, const char **args, int n)
{
	char *argv[32];

	for (int i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	argv[n] = NULL;
	return run_parse_args(o, n, argv);
}

Test(net_glue, run_options)
{
	static struct run_opts o;
	const char *a[] = { "run", "--allow", "example.com:443/tcp", "--allow", "203.0.113.0/24",
			    "--dns-server", "198.51.100.2", "--publish", "8080:80",
			    "--events", "/tmp/ev", "--", "true" };

	cr_assert_eq(parse(&o, a, 13), 0);
	cr_assert(o.cfg.net.enabled, "network on by default (deny by default)");
	cr_assert_eq(o.cfg.net.nr_allow, 2);
	cr_assert_str_eq(o.cfg.net.allow[1], "203.0.113.0/24");
	cr_assert_str_eq(o.cfg.net.dns_server, "198.51.100.2");
	cr_assert_eq(o.cfg.net.nr_publish, 1);
	cr_assert_str_eq(o.cfg.net.events_path, "/tmp/ev");
}

Test(net_glue, net_none_and_bad_mode)
{
	static struct run_opts o;
	const char *none[] = { "run", "--net", "none", "--", "true" };
	const char *bad[] = { "run", "--net", "everything", "--", "true" };

	cr_assert_eq(parse(&o, none, 5), 0);
	cr_assert_not(o.cfg.net.enabled, "--net none: no device");
	cr_assert_eq(parse(&o, bad, 5), -1);
}

Test(net_glue, dns_server_forms)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;

	cr_assert_eq(net_dns_server_parse("198.51.100.2", &ss, &sl), 0);
	cr_assert_eq(a4->sin_family, AF_INET);
	cr_assert_eq(ntohs(a4->sin_port), 53);
	cr_assert_eq(net_dns_server_parse("198.51.100.2:5353", &ss, &sl), 0);
	cr_assert_eq(ntohs(a4->sin_port), 5353);
	cr_assert_eq(net_dns_server_parse("[2001:db8::1]:54", &ss, &sl), 0);
	cr_assert_eq(a6->sin6_family, AF_INET6);
	cr_assert_eq(ntohs(a6->sin6_port), 54);
	cr_assert_eq(net_dns_server_parse("2001:db8::1", &ss, &sl), 0);
	cr_assert_eq(ntohs(a6->sin6_port), 53);
	cr_assert_neq(net_dns_server_parse("dns.example.com", &ss, &sl), 0);
	cr_assert_neq(net_dns_server_parse("198.51.100.2:0", &ss, &sl), 0);
	cr_assert_neq(net_dns_server_parse("198.51.100.2:70000", &ss, &sl), 0);
	cr_assert_neq(net_dns_server_parse("[2001:db8::1", &ss, &sl), 0);
}
