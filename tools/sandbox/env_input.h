/*
 * Environment variables given without a command line (`--env-fd N`,
 * `--env-file FILE`): argv is readable by every local user in
 * /proc/PID/cmdline, so secrets come through a pipe, a memfd or a 0600 file.
 * The format is /proc/PID/environ's: "K=V" records, each ended by a NUL
 * byte (the last one's NUL may be missing); a value may hold any byte but
 * NUL, newlines included.
 */
#ifndef MVM_ENV_INPUT_H
#define MVM_ENV_INPUT_H

#include <stddef.h>

#define ENV_INPUT_MAX (1u << 20)	/* bytes read at most; more is an error */

/*
 * Read records from @fd to its end (it is closed) or from @path, and append
 * them as malloc'd strings to @env (*n entries already, at most @max). Each
 * must be K=V with a non-empty K without '='. 0, or -errno with @err saying
 * what is wrong (never the value).
 */
int env_input_fd(int fd, char **env, int *n, int max, char *err, size_t cap);
int env_input_file(const char *path, char **env, int *n, int max, char *err, size_t cap);

/*
 * The option @opt ("--env-fd" with a descriptor number, or "--env-file"
 * with a path) and its @arg, as above; @err names the option. 0 or -errno.
 */
int env_input_opt(const char *opt, const char *arg, char **env, int *n, int max, char *err, size_t cap);

#endif
