/* Tiny logging API: one sink (stderr or a file), levels, printf-style. */
#ifndef MVM_LOG_H
#define MVM_LOG_H

#include <stdio.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above @level are dropped. Default: LOG_WARN, or MVM_LOG=debug|info. */
void log_set_level(enum log_level level);
/* Redirect the sink (NULL restores stderr). The caller keeps ownership. */
void log_set_sink(FILE *sink);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
