/* `mvm browser NAME [--json] [--headless]`: Chromium in the sandbox, its CDP endpoint on host loopback. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli_util.h"
#include "tools/cli/cmd_sandbox.h"
#include "tools/cli/verb_args.h"
#include "tools/sandbox/browser.h"
#include "tools/sandbox/sandbox.h"

static const char browser_usage[] =
	"usage: mvm browser [--json] [--headless] NAME\n"
	"Start the display stack and Chromium in the sandbox NAME (a `browser`\n"
	"image) unless they run, wait until the DevTools protocol answers, and\n"
	"print its endpoint on the host: http://127.0.0.1:PORT. It is reached\n"
	"over vsock (works with --net none) and listens on 127.0.0.1 only.\n"
	"\n"
	"  --json       print {\"cdp\": ..., \"ws\": ..., \"vnc\": ...} (vnc is null\n"
	"               when headless); ws is the browser's WebSocket URL\n"
	"  --headless   no display, no noVNC (only if Chromium is not yet running)\n"
	"  -h, --help   this text\n";

static int browser_opt(void *ctx, int c, char *arg)
{
	struct browser_opts *o = ctx;

	if (c == 'j')
		o->json = true;
	else
		o->headless = true;
	return 0;
}

int browser_parse(int argc, char **argv, struct verb_args *a, struct browser_opts *o)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					       { "headless", no_argument, NULL, 'H' }, { 0 } };
	static const struct verb_spec spec = { .verb = "browser", .longopts = opts, .min_pos = 1,
					       .max_pos = 1, .synopsis = "one sandbox NAME",
					       .opt = browser_opt };

	memset(o, 0, sizeof(*o));
	return verb_parse(&spec, o, argc, argv, a);
}

static void print_json(const struct browser_endpoint *ep)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "cdp", ep->cdp);
	cJSON_AddStringToObject(o, "ws", ep->ws);
	if (ep->vnc[0])
		cJSON_AddStringToObject(o, "vnc", ep->vnc);
	else
		cJSON_AddNullToObject(o, "vnc");
	s = cJSON_PrintUnformatted(o);
	if (s)
		puts(s);
	free(s);
	cJSON_Delete(o);
}

int cmd_browser(int argc, char **argv)
{
	struct browser_endpoint ep;
	struct browser_opts o;
	struct verb_args a;
	char err[1024] = "";
	int r = browser_parse(argc, argv, &a, &o);

	if (r)
		return verb_parse_exit(r, browser_usage);
	if (!verb_sandbox_running("browser", a.pos[0]))
		return MVM_EXIT_ERROR;
	if (browser_up(a.pos[0], o.headless, &ep, err, sizeof(err))) {
		cli_err("browser", "%s", err);
		return MVM_EXIT_ERROR;
	}
	if (o.json)
		print_json(&ep);
	else
		puts(ep.cdp);
	return 0;
}
