/* Tiny logging API: one process-wide sink, so device code never prints itself. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static int cur_level = -1;
static FILE *cur_sink;

static int level_from_env(void)
{
	const char *e = getenv("MVM_LOG");

	if (!e)
		return LOG_WARN;
	if (!strcmp(e, "debug"))
		return LOG_DEBUG;
	if (!strcmp(e, "info"))
		return LOG_INFO;
	if (!strcmp(e, "error"))
		return LOG_ERROR;
	return LOG_WARN;
}

void log_set_level(enum log_level level)
{
	cur_level = level;
}

void log_set_sink(FILE *sink)
{
	cur_sink = sink;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	FILE *out = cur_sink ? cur_sink : stderr;
	va_list ap;

	if (cur_level < 0)
		cur_level = level_from_env();
	if ((int)level > cur_level)
		return;
	fprintf(out, "mvm: %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}
