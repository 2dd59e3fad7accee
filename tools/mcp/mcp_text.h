/*
 * Text that came from a guest, made safe for a JSON string: valid UTF-8,
 * no NUL, bounded in size. And base64 for bytes that are not text.
 */
#ifndef MVM_MCP_TEXT_H
#define MVM_MCP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer that keeps at most @cap bytes and counts the rest. */
struct mcp_buf {
	uint8_t *p;
	size_t len, cap;
	uint64_t total;		/* bytes offered, kept or not */
};

/* Append; bytes beyond @cap are counted in total and dropped. 0 or -ENOMEM. */
int mcp_buf_add(struct mcp_buf *b, const void *p, size_t n);
void mcp_buf_free(struct mcp_buf *b);

/* True if @p[0..n) is valid UTF-8 with no NUL (overlongs, surrogates refused). */
bool mcp_utf8_valid(const uint8_t *p, size_t n);
/*
 * A NUL-terminated copy of @p[0..n) where every invalid sequence and NUL is
 * replaced by U+FFFD; when @total (the size of the whole text) exceeds @n, a
 * note saying how much was left out is appended. malloc'd; NULL on ENOMEM.
 */
char *mcp_utf8_clean(const uint8_t *p, size_t n, uint64_t total);
/* Base64 (RFC 4648, padded) of @p; malloc'd, NULL on ENOMEM. */
char *mcp_base64_encode(const uint8_t *p, size_t n);
/* Decode strict padded base64 (whitespace refused) into malloc'd *out. 0 or -EINVAL/-ENOMEM. */
int mcp_base64_decode(const char *s, uint8_t **out, size_t *n);

#endif
