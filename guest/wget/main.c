/* mvm-wget: options, and what is handed to busybox (wget.h). */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/wget/wget.h"

static const char usage[] =
	"usage: wget [-qS] [--spider] [-O FILE] [-P DIR] [-T SECS] [-t TRIES] [-U AGENT]\n"
	"            [--header 'NAME: VALUE']... [--post-data STR] URL...\n"
	"http:// URLs are fetched here; other URLs and busybox-only options\n"
	"(-c, -o, -Y, --post-file, --no-check-certificate) go to busybox wget.\n";

void wget_err(const char *fmt, ...)
{
	va_list ap;

	fputs("wget: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Busybox's wget with -T/-t removed (its -T is what crashes; -t it ignores anyway). */
static int to_busybox(int argc, char **argv)
{
	char **nv = calloc((size_t)argc + 2, sizeof(*nv));
	int n = 0;

	if (!nv)
		return 1;
	nv[n++] = "busybox";
	nv[n++] = "wgbb";	/* the guest's busybox wget applet (tools/stage-userland.sh) */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (i < argc)
				nv[n++] = argv[i++];
			break;
		}
		if (!strcmp(a, "-T") || !strcmp(a, "-t") || !strcmp(a, "--timeout") || !strcmp(a, "--tries")) {
			i++;
			continue;
		}
		if (!strncmp(a, "-T", 2) || !strncmp(a, "-t", 2) || !strncmp(a, "--timeout=", 10) ||
		    !strncmp(a, "--tries=", 8))
			continue;
		nv[n++] = argv[i];
	}
	nv[n] = NULL;
	execv("/bin/busybox", nv);
	wget_err("cannot run /bin/busybox: %m");
	return 1;
}

static int parse_num(const char *s, int max, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > max) {
		wget_err("bad number '%s'", s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

enum { O_HEADER = 256, O_POST, O_SPIDER, O_BUSYBOX };

/* 0 parsed, 1 hand to busybox, 2 usage error, 3 --help. */
static int parse(struct wget_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output-document", required_argument, NULL, 'O' },
		{ "directory-prefix", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "server-response", no_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "tries", required_argument, NULL, 't' },
		{ "user-agent", required_argument, NULL, 'U' },
		{ "header", required_argument, NULL, O_HEADER },
		{ "post-data", required_argument, NULL, O_POST },
		{ "spider", no_argument, NULL, O_SPIDER },
		{ "continue", no_argument, NULL, 'c' },
		{ "output-file", required_argument, NULL, 'o' },
		{ "proxy", required_argument, NULL, 'Y' },
		{ "post-file", required_argument, NULL, O_BUSYBOX },
		{ "no-check-certificate", no_argument, NULL, O_BUSYBOX },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, busybox = 0;

	opterr = 1;
	while ((c = getopt_long(argc, argv, "O:P:qST:t:U:co:Y:h", opts, NULL)) != -1) {
		switch (c) {
		case 'O': o->out = optarg; break;
		case 'P': o->dir = optarg; break;
		case 'q': o->quiet = true; break;
		case 'S': o->show_headers = true; break;
		case 'T': if (parse_num(optarg, 86400, &o->timeout_s)) return 2; break;
		case 't': if (parse_num(optarg, 1000, &o->tries)) return 2; break;
		case 'U': o->agent = optarg; break;
		case O_POST: o->post_data = optarg; break;
		case O_SPIDER: o->spider = true; break;
		case O_HEADER:
			if (o->nheaders == WGET_MAX_HEADERS || strpbrk(optarg, "\r\n")) {
				wget_err("too many headers, or a header with a line break");
				return 2;
			}
			o->headers[o->nheaders++] = optarg;
			break;
		case 'c': case 'o': case 'Y': case O_BUSYBOX: busybox = 1; break;
		case 'h': return 3;
		default: return 2;
		}
	}
	if (optind == argc) {
		wget_err("missing URL");
		return 2;
	}
	/* GNU wget: 0 tries means retry for ever; bounded here. */
	if (o->tries == 0)
		o->tries = 20;
	return busybox;
}

int main(int argc, char **argv)
{
	struct wget_opts o = { .tries = 1, .out_fd = -1 };
	const char *proxy = getenv("http_proxy");
	int ret = 0, p = parse(&o, argc, argv);

	/* A closed socket or -O - pipe is a write error (exit 1), as in busybox. */
	signal(SIGPIPE, SIG_IGN);
	if (p == 3) {
		fputs(usage, stdout);
		return 0;
	}
	if (p == 2) {
		fputs(usage, stderr);
		return 1;
	}
	for (int i = optind; i < argc && !p; i++)
		p = strncmp(argv[i], "http://", 7) || strchr(argv[i], '@');
	if (p || (proxy && *proxy))
		return to_busybox(argc, argv);
	for (int i = optind; i < argc; i++)
		ret |= wget_http(&o, argv[i]);
	if (o.out_fd > 1)
		close(o.out_fd);
	return ret;
}
