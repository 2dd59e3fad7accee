/*
 * CRC-32C (Castagnoli, the iSCSI CRC of RFC 3720): the checksums of snapshot
 * state files and of the files a snapshot directory lists. One implementation:
 * the SSE4.2 crc32 instruction where the CPU has it, a byte table otherwise.
 * Pure.
 */
#ifndef MVM_CRC32C_H
#define MVM_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32C of @n bytes at @p, continuing from @crc (start with 0). */
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

/* The two paths crc32c() picks from, for the tests that hold them equal. */
/* True when this CPU has SSE4.2 (so crc32c_hw may be called). */
bool crc32c_hw_available(void);
/* The crc32 instruction; only when crc32c_hw_available(). Same contract as crc32c(). */
uint32_t crc32c_hw(uint32_t crc, const void *p, size_t n);
/* The byte table. Same contract as crc32c(). */
uint32_t crc32c_sw(uint32_t crc, const void *p, size_t n);

#endif
