/* Shared helpers of the mvm command-line verbs. */
#ifndef MVM_CLI_H
#define MVM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit status for mvm's own failures (the command's status passes through). */
#define MVM_EXIT_ERROR 125
#define MVM_EXIT_USAGE 2

/* "512M", "2G", "1048576K", "64" (MiB when no suffix). 0 or -EINVAL. */
int cli_parse_size(const char *s, uint64_t *bytes);
/* Decimal integer in [min, max]. 0 or -EINVAL. */
int cli_parse_int(const char *s, long min, long max, long *out);
/* Where `make guest` put vmlinux and the initramfs; NULL when not found. */
const char *cli_guest_dir(void);
/* printf to stderr prefixed with "mvm: " and the verb. */
void cli_err(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
