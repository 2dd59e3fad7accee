/*
 * The running binary's directory and the programs shipped beside it (mvm,
 * mvm-net, mvm-serve, mvm-oci: `make install` puts them in one directory).
 * A sibling is always found there, through /proc/self/exe, never through
 * PATH: a caller's PATH must not choose which program serves the network or
 * unpacks an image.
 */
#ifndef MVM_SELF_EXE_H
#define MVM_SELF_EXE_H

#include <stddef.h>

/* The directory of the running binary (/proc/self/exe) into @out (@cap
 * bytes): mvm finds mvm-net, build/guest and images/ beside it. 0 or -errno. */
int self_exe_dir(char *out, size_t cap);

/* The path of program @name beside the running binary into @out (@cap
 * bytes); whether it exists is not checked. 0 or -errno. */
int self_exe_sibling(const char *name, char *out, size_t cap);

/*
 * Replace this process with program @name beside the running binary, given
 * @argv (argv[0] should be @name). Returns only when it could not: -errno
 * (-ENOENT: no such program there), with the path it tried in @path (@cap
 * bytes; empty if even that was unknown). The process keeps its pid,
 * descriptors and signal dispositions, so a caller that waits for or
 * signals it (a shell's $!) reaches the program.
 */
int self_exe_sibling_exec(const char *name, char *const argv[], char *path, size_t cap);

#endif
