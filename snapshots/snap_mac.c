/* Keyed tags of snapshot files (snapshots/snap_mac.h). */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <nettle/base16.h>

#include "common/le_bytes.h"
#include "snapshots/snap_mac.h"

static const char label[] = "mvm snapshot umac v1";

int snap_mac_salt(uint8_t salt[SNAP_SALT_LEN])
{
	return getrandom(salt, SNAP_SALT_LEN, 0) == SNAP_SALT_LEN ? 0 : -EIO;
}

/* The first SNAP_KEY_LEN bytes of the hex HMAC @hex into @k. */
static void key_of(const char hex[HOST_MAC_HEX], uint8_t k[SNAP_KEY_LEN])
{
	struct base16_decode_ctx c;
	size_t n = SNAP_KEY_LEN;

	base16_decode_init(&c);
	base16_decode_update(&c, &n, k, 2 * SNAP_KEY_LEN, hex);
}

int snap_mac_key(const uint8_t salt[SNAP_SALT_LEN], uint8_t k[SNAP_KEY_LEN], char *err,
		 size_t errlen)
{
	const void *parts[] = { label, salt };
	size_t lens[] = { sizeof(label) - 1, SNAP_SALT_LEN };
	char hex[HOST_MAC_HEX];
	int ret = host_mac(parts, lens, 2, hex, err, errlen);

	if (!ret)
		key_of(hex, k);
	explicit_bzero(hex, sizeof(hex));
	return ret;
}

void snap_mac_key_with(const uint8_t host[HOST_KEY_LEN], const uint8_t salt[SNAP_SALT_LEN],
		       uint8_t k[SNAP_KEY_LEN])
{
	const void *parts[] = { label, salt };
	size_t lens[] = { sizeof(label) - 1, SNAP_SALT_LEN };
	char hex[HOST_MAC_HEX];

	host_mac_with(host, parts, lens, 2, hex);
	key_of(hex, k);
	explicit_bzero(hex, sizeof(hex));
}

void snap_mac_start(struct snap_mac *m, const uint8_t k[SNAP_KEY_LEN], uint32_t index,
		    uint64_t size)
{
	uint8_t nonce[8], s[8];

	umac128_set_key(&m->u, k);
	le_put64(nonce, index);
	umac128_set_nonce(&m->u, sizeof(nonce), nonce);
	le_put64(s, size);
	umac128_update(&m->u, sizeof(s), s);
}

void snap_mac_block(struct snap_mac *m, uint64_t off, const uint8_t *p, size_t n)
{
	uint8_t o[8];

	le_put64(o, off);
	umac128_update(&m->u, sizeof(o), o);
	umac128_update(&m->u, n, p);
}

void snap_mac_end(struct snap_mac *m, uint8_t tag[SNAP_TAG_LEN])
{
	umac128_digest(&m->u, SNAP_TAG_LEN, tag);
	explicit_bzero(m, sizeof(*m));
}

bool snap_tag_equal(const uint8_t a[SNAP_TAG_LEN], const uint8_t b[SNAP_TAG_LEN])
{
	uint8_t diff = 0;

	for (int i = 0; i < SNAP_TAG_LEN; i++)
		diff |= a[i] ^ b[i];
	return !diff;
}
