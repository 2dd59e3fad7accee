/* --env-fd / --env-file (env_input.h): NUL-separated K=V records. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/sandbox/env_input.h"

/* Split @buf (@len bytes) into records appended to @env. */
static int split(const char *buf, size_t len, char **env, int *n, int max, char *err, size_t cap)
{
	size_t i = 0;

	while (i < len) {
		size_t rl = strnlen(buf + i, len - i), kl = strcspn(buf + i, "=");

		if (rl == 0) {
			i++;	/* an empty record (a doubled NUL): nothing */
			continue;
		}
		if (kl == 0 || kl >= rl) {
			snprintf(err, cap, "record %d is not K=V with a non-empty name", *n + 1);
			return -EINVAL;
		}
		if (*n >= max) {
			snprintf(err, cap, "more than %d variables", max);
			return -E2BIG;
		}
		if (!(env[*n] = strndup(buf + i, rl)))
			return -ENOMEM;
		(*n)++;
		i += rl + 1;
	}
	return 0;
}

int env_input_fd(int fd, char **env, int *n, int max, char *err, size_t cap)
{
	char *buf = malloc(ENV_INPUT_MAX + 1);
	size_t len = 0;
	ssize_t r = 0;
	int ret;

	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len <= ENV_INPUT_MAX && (r = read(fd, buf + len, ENV_INPUT_MAX + 1 - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		len += (size_t)r;
	}
	ret = r < 0 ? -errno : 0;
	close(fd);
	if (ret)
		snprintf(err, cap, "cannot read it: %s", strerror(-ret));
	else if (len > ENV_INPUT_MAX)
		ret = -EFBIG, snprintf(err, cap, "more than %u bytes", ENV_INPUT_MAX);
	else
		ret = split(buf, len, env, n, max, err, cap);
	/* The buffer held secrets: do not leave them in freed heap. */
	explicit_bzero(buf, len < ENV_INPUT_MAX + 1 ? len : ENV_INPUT_MAX + 1);
	free(buf);
	return ret;
}

int env_input_file(const char *path, char **env, int *n, int max, char *err, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, cap, "cannot open it: %s", strerror(errno));
		return -errno;
	}
	return env_input_fd(fd, env, n, max, err, cap);
}

int env_input_opt(const char *opt, const char *arg, char **env, int *n, int max, char *err, size_t cap)
{
	char why[200] = "";
	char *end;
	long fd;
	int ret;

	if (!strcmp(opt, "--env-fd")) {
		errno = 0;
		fd = strtol(arg, &end, 10);
		if (errno || end == arg || *end || fd < 0 || fd > INT_MAX) {
			snprintf(err, cap, "--env-fd: expected a descriptor number, got '%.64s'", arg);
			return -EINVAL;
		}
		ret = env_input_fd((int)fd, env, n, max, why, sizeof(why));
	} else {
		ret = env_input_file(arg, env, n, max, why, sizeof(why));
	}
	if (ret)
		snprintf(err, cap, "%s %.300s: %s", opt, arg, why);
	return ret;
}
