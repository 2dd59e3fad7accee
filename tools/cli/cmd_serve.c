/* `mvm serve`: sandboxes over HTTP for many tenants (tools/serve/), and its tokens. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/serve/serve.h"

static const char serve_usage[] =
	"usage: mvm serve [--listen ADDR:PORT] [--tls-cert PEM --tls-key PEM] [--allow-plain-http]\n"
	"                 [--tokens FILE] [--log FILE] [--allow-max FILE] [--max-conns N] [--max-per-ip N]\n"
	"                 [--idle-timeout S] [--rate R] [--burst N] [--max-streams N] [--max-file SIZE]\n"
	"       mvm serve token add TENANT [--sandboxes N] [--cpus N] [--memory SIZE] [--disk SIZE]\n"
	"                                  [--templates N] [--checkpoints N]\n"
	"       mvm serve token ls | token rm TENANT      [--tokens FILE]\n"
	"Serve the HTTP API (docs/api.md, \"HTTP API\") on ADDR:PORT (default 127.0.0.1:7070).\n"
	"Plain HTTP only on loopback unless --allow-plain-http; elsewhere give a certificate.\n"
	"Each tenant has one bearer token (token add prints it once; the file keeps its\n"
	"SHA-256) and sees only its own sandboxes. Its --disk counts its sandboxes' disks\n"
	"and the bytes its checkpoints and templates hold; --templates and --checkpoints\n"
	"cap how many of each it holds (checkpoints over all its sandboxes).\n";

enum { O_LISTEN = 1000, O_CERT, O_KEY, O_PLAIN, O_TOKENS, O_LOG, O_CONNS, O_PERIP, O_IDLE, O_RATE,
       O_BURST, O_STREAMS, O_MAXFILE, O_ALLOW_MAX, O_SANDBOXES, O_CPUS, O_MEMORY, O_DISK,
       O_TEMPLATES, O_CHECKPOINTS };

static const struct option serve_opts[] = {
	{ "listen", required_argument, NULL, O_LISTEN }, { "tls-cert", required_argument, NULL, O_CERT },
	{ "tls-key", required_argument, NULL, O_KEY }, { "allow-plain-http", no_argument, NULL, O_PLAIN },
	{ "tokens", required_argument, NULL, O_TOKENS }, { "log", required_argument, NULL, O_LOG },
	{ "max-conns", required_argument, NULL, O_CONNS }, { "max-per-ip", required_argument, NULL, O_PERIP },
	{ "idle-timeout", required_argument, NULL, O_IDLE }, { "rate", required_argument, NULL, O_RATE },
	{ "burst", required_argument, NULL, O_BURST }, { "max-streams", required_argument, NULL, O_STREAMS },
	{ "max-file", required_argument, NULL, O_MAXFILE }, { "allow-max", required_argument, NULL, O_ALLOW_MAX },
	{ "sandboxes", required_argument, NULL, O_SANDBOXES }, { "cpus", required_argument, NULL, O_CPUS },
	{ "memory", required_argument, NULL, O_MEMORY }, { "disk", required_argument, NULL, O_DISK },
	{ "templates", required_argument, NULL, O_TEMPLATES }, { "checkpoints", required_argument, NULL, O_CHECKPOINTS },
	{ "help", no_argument, NULL, 'h' }, { 0 },
};

static int num(const char *opt, const char *arg, long min, long max, long *out)
{
	if (!cli_parse_int(arg, min, max, out))
		return 0;
	cli_err("serve", "--%s: a whole number from %ld to %ld", opt, min, max);
	return -1;
}

/* --rate: requests per second per tenant, a fraction allowed (0.01: one a
 * minute and 40 s), so a burst can be made to run out whatever the pace. */
static int rate(const char *arg, double *out)
{
	char *end;
	double r;

	errno = 0;
	r = strtod(arg, &end);
	if (!errno && end != arg && !*end && r >= 0.001 && r <= 100000) {
		*out = r;
		return 0;
	}
	cli_err("serve", "--rate: requests per second from 0.001 to 100000 (\"20\", \"0.5\")");
	return -1;
}

/* One option into @a. 0 or -1 after a message. */
static int serve_opt(struct serve_args *a, int ch, char *arg)
{
	long n;
	int r = 0;

	switch (ch) {
	case O_LISTEN: a->o.listen = arg; break;
	case O_CERT: a->o.tls_cert = arg; break;
	case O_KEY: a->o.tls_key = arg; break;
	case O_PLAIN: a->o.allow_plain = true; break;
	case O_TOKENS: a->o.tokens = arg; break;
	case O_LOG: a->o.log = arg; break;
	case O_ALLOW_MAX: a->o.allow_max = arg; break;
	case O_CONNS: r = num("max-conns", arg, 4, 10000, &n); a->o.max_conns = (unsigned)n; break;
	case O_PERIP: r = num("max-per-ip", arg, 1, 10000, &n); a->o.max_per_ip = (unsigned)n; break;
	case O_IDLE: r = num("idle-timeout", arg, 1, 3600, &n); a->o.idle_timeout_s = (unsigned)n; break;
	case O_RATE: r = rate(arg, &a->o.rate); break;
	case O_BURST: r = num("burst", arg, 1, 100000, &n); a->o.burst = (double)n; break;
	case O_STREAMS: r = num("max-streams", arg, 1, 1000, &n); a->o.max_streams = (unsigned)n; break;
	case O_SANDBOXES: r = num("sandboxes", arg, 0, 100000, &n); a->q.sandboxes = (int)n; break;
	case O_CPUS: r = num("cpus", arg, 0, 100000, &n); a->q.cpus = (int)n; break;
	case O_TEMPLATES: r = num("templates", arg, 0, 100000, &n); a->q.templates = (int)n; break;
	case O_CHECKPOINTS: r = num("checkpoints", arg, 0, 100000, &n); a->q.checkpoints = (int)n; break;
	case O_MAXFILE: r = cli_parse_size(arg, &a->o.max_file); break;
	case O_MEMORY: r = cli_parse_size(arg, &a->q.memory); break;
	case O_DISK: r = cli_parse_size(arg, &a->q.disk); break;
	default: return -1;
	}
	if (r && (ch == O_MAXFILE || ch == O_MEMORY || ch == O_DISK))
		cli_err("serve", "bad size '%s' (\"512M\", \"2G\")", arg);
	return r ? -1 : 0;
}

int serve_parse(int argc, char **argv, struct serve_args *a)
{
	int ch;

	memset(a, 0, sizeof(*a));
	a->o = SV_OPTS_DEFAULT;
	a->q = SV_QUOTA_DEFAULT;
	a->q.templates = -1;	/* not given: as many as --sandboxes (the tokens file's rule) */
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "-h", serve_opts, NULL)) != -1) {
		if (ch == 'h')
			return 1;
		if (ch == 1 && a->npos < 3) {
			a->pos[a->npos++] = optarg;
			continue;
		}
		if (ch == 1 || ch == '?' || serve_opt(a, ch, optarg)) {
			if (ch == 1 || ch == '?')
				cli_err("serve", "unexpected '%s' (see mvm serve --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (a->q.templates < 0)
		a->q.templates = a->q.sandboxes;
	if (a->npos == 0)
		return 0;
	if (strcmp(a->pos[0], "token") || a->npos < 2 ||
	    !((!strcmp(a->pos[1], "ls") && a->npos == 2) ||
	      ((!strcmp(a->pos[1], "add") || !strcmp(a->pos[1], "rm")) && a->npos == 3))) {
		cli_err("serve", "expected: token add TENANT | token ls | token rm TENANT");
		return -1;
	}
	return 0;
}

static int token_cmd(const struct serve_args *a)
{
	char path[PATH_MAX], err[512], token[SV_TOKEN_LEN + 1];
	struct sv_tokens *t;
	int ret;

	if (a->o.tokens)
		snprintf(path, sizeof(path), "%s", a->o.tokens);
	else if (sv_tokens_default_path(path, sizeof(path))) {
		cli_err("serve", "no tokens file: give --tokens FILE");
		return MVM_EXIT_ERROR;
	}
	if (!strcmp(a->pos[1], "add")) {
		ret = sv_token_add(path, a->pos[2], &a->q, token, err, sizeof(err));
		if (!ret)
			printf("%s\n", token);	/* the only time it is shown */
	} else if (!strcmp(a->pos[1], "rm")) {
		ret = sv_token_rm(path, a->pos[2], err, sizeof(err));
	} else {
		if (!(t = calloc(1, sizeof(*t))))
			return MVM_EXIT_ERROR;
		ret = sv_tokens_load(path, t, err, sizeof(err));
		for (int i = 0; !ret && i < t->n; i++)
			printf("%s\tsandboxes=%d cpus=%d memory=%lluM disk=%lluM templates=%d checkpoints=%d\n",
			       t->t[i].name, t->t[i].quota.sandboxes, t->t[i].quota.cpus,
			       (unsigned long long)(t->t[i].quota.memory >> 20),
			       (unsigned long long)(t->t[i].quota.disk >> 20), t->t[i].quota.templates,
			       t->t[i].quota.checkpoints);
		free(t);
	}
	if (ret)
		cli_err("serve", "%s", err);
	return ret ? MVM_EXIT_ERROR : 0;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a;
	int r = serve_parse(argc, argv, &a);

	if (r == 1) {
		fputs(serve_usage, stdout);
		return 0;
	}
	if (r) {
		fputs(serve_usage, stderr);
		return MVM_EXIT_USAGE;
	}
	if (a.npos)
		return token_cmd(&a);
	if (!a.o.log) {
		static char log[PATH_MAX];

		if (!sv_log_default_path(log, sizeof(log)))
			a.o.log = log;
	}
	return sv_serve(&a.o) ? MVM_EXIT_ERROR : 0;
}
