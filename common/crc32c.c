/* CRC-32C (common/crc32c.h): SSE4.2 where present, a byte table otherwise. */
#include <string.h>

#include "common/crc32c.h"

#define CRC32C_POLY 0x82f63b78u		/* reflected Castagnoli polynomial */

uint32_t crc32c_sw(uint32_t crc, const void *p, size_t n)
{
	static uint32_t table[256];
	static bool ready;
	const uint8_t *b = p;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
			table[i] = c;
		}
		__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	while (n--)
		crc = table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

bool crc32c_hw_available(void)
{
	__builtin_cpu_init();	/* harmless if libgcc's constructor already ran */
	return __builtin_cpu_supports("sse4.2");
}

/* Bytes up to an 8-byte boundary, then 8 at a time (one crc32 per 8 bytes), then the tail. */
__attribute__((target("sse4.2")))
uint32_t crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t c = ~crc;

	for (; n && ((uintptr_t)b & 7); n--)
		c = _mm_crc32_u8((uint32_t)c, *b++);
	for (; n >= 8; n -= 8, b += 8) {
		uint64_t v;

		memcpy(&v, b, sizeof(v));
		c = _mm_crc32_u64(c, v);
	}
	for (; n; n--)
		c = _mm_crc32_u8((uint32_t)c, *b++);
	return ~(uint32_t)c;
}
#else
bool crc32c_hw_available(void)
{
	return false;
}

uint32_t crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	return crc32c_sw(crc, p, n);
}
#endif

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
	static int hw = -1;	/* -1 not asked yet; a benign race: every thread computes the same */
	int h = __atomic_load_n(&hw, __ATOMIC_RELAXED);

	if (h < 0) {
		h = crc32c_hw_available();
		__atomic_store_n(&hw, h, __ATOMIC_RELAXED);
	}
	return h ? crc32c_hw(crc, p, n) : crc32c_sw(crc, p, n);
}
