/*
 * Verbs whose work is a program shipped beside mvm, so that mvm, which is
 * also every sandbox's VMM, links and maps none of their libraries:
 * `mvm serve` is mvm-serve (libmicrohttpd, GnuTLS), `mvm image import` is
 * mvm-oci (libarchive). tests/build/check-needed.py keeps them out of mvm.
 */
#ifndef MVM_CMD_BESIDE_H
#define MVM_CMD_BESIDE_H

#define SERVE_EXE "mvm-serve"
#define OCI_EXE "mvm-oci"

/*
 * Become program @exe beside this one (common/self_exe.h: never through
 * PATH) with @argv's arguments (NULL-terminated; argv[0] is replaced by
 * @exe). Returns only when it could not,
 * after a message naming @verb and the path tried: MVM_EXIT_ERROR.
 */
int cli_beside(const char *exe, const char *verb, char **argv);

/* `mvm serve ...`: cli_beside(SERVE_EXE, ...). */
int cmd_serve_beside(int argc, char **argv);

#endif
