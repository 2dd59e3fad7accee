/* CRC-32C: RFC 3720 (iSCSI) known answers on both paths, and the SSE4.2 path equal to the table everywhere. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

/* RFC 3720 appendix B.4; the RFC lists the CRC's bytes as sent (little-endian). */
static void known_answers(crc_fn f)
{
	static const uint8_t pdu[48] = {
		0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
		0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t b[32];

	memset(b, 0, sizeof(b));
	cr_expect_eq(f(0, b, sizeof(b)), 0x8a9136aau);
	memset(b, 0xff, sizeof(b));
	cr_expect_eq(f(0, b, sizeof(b)), 0x62a8ab43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	cr_expect_eq(f(0, b, sizeof(b)), 0x46dd794eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	cr_expect_eq(f(0, b, sizeof(b)), 0x113fdb5cu);
	cr_expect_eq(f(0, pdu, sizeof(pdu)), 0xd9963a56u);
	cr_expect_eq(f(0, "123456789", 9), 0xe3069283u);	/* the catalogue's check value */
	cr_expect_eq(f(0, "", 0), 0u);
	/* Continuing from a CRC equals one pass. */
	cr_expect_eq(f(f(0, "1234", 4), "56789", 5), 0xe3069283u);
}

Test(common_crc32c, table_known_answers)
{
	known_answers(crc32c_sw);
}

Test(common_crc32c, dispatch_known_answers)
{
	known_answers(crc32c);
}

Test(common_crc32c, hw_known_answers)
{
	if (!crc32c_hw_available())
		cr_skip_test("no SSE4.2 on this CPU");
	known_answers(crc32c_hw);
}

/* Random bytes at every start alignment 0..15 and lengths across the 8-byte steps and the tails. */
Test(common_crc32c, hw_equals_table_on_random_buffers)
{
	enum { MAX = 4096 + 64 };
	uint8_t *buf = malloc(MAX + 16);
	unsigned seed = 14;

	if (!crc32c_hw_available())
		cr_skip_test("no SSE4.2 on this CPU");
	cr_assert_not_null(buf);
	for (size_t i = 0; i < MAX + 16; i++)
		buf[i] = (uint8_t)rand_r(&seed);
	for (size_t align = 0; align < 16; align++) {
		for (size_t n = 0; n <= MAX; n += n < 80 ? 1 : 1 + (size_t)(rand_r(&seed) % 97)) {
			uint32_t start = (uint32_t)rand_r(&seed);

			cr_assert_eq(crc32c_hw(start, buf + align, n), crc32c_sw(start, buf + align, n),
				     "align %zu length %zu", align, n);
		}
	}
	free(buf);
}
