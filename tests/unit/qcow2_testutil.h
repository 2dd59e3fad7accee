/* Helpers shared by the qcow2 unit tests: temp dirs, qemu-img, random data. */
#ifndef MVM_QCOW2_TESTUTIL_H
#define MVM_QCOW2_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>

#include "images/blk_backend.h"

/* A fresh directory under $TMPDIR; qt_rmtree removes it and its files. */
char *qt_mkdtemp(void);
void qt_rmtree(char *dir);
/* "<dir>/<name>", malloc'd. */
char *qt_path(const char *dir, const char *name);
/* Run a shell command; output (stdout+stderr) into *out if non-NULL.
 * Returns the exit status, or -1 if it did not exit normally. */
int qt_run(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

uint64_t qt_rand(uint64_t *state);
void qt_fill(void *buf, size_t n, uint64_t seed);
/* A file of @size bytes of seeded random data. */
void qt_random_file(const char *path, uint64_t size, uint64_t seed);
/* Read a whole file into memory (size in *len). */
uint8_t *qt_slurp(const char *path, size_t *len);

/* Capture log output: start returns the sink, take returns its text. */
FILE *qt_log_start(void);
char *qt_log_take(FILE *sink);

/* Seeded random writes (and discards, flushes, read-backs) applied to both
 * @b and the raw reference file descriptor @ref. */
void qt_random_ops(struct blk_backend *b, int ref, uint64_t seed, int nops,
		   unsigned cluster_bits, int discard);

#endif
