/* Token buckets per tenant (tools/serve/serve_rate.h). */
#include <stdio.h>
#include <string.h>

#include "tools/serve/serve_rate.h"

struct sv_bucket *sv_bucket_of(struct sv_rates *r, const char *tenant, double burst, uint64_t now_ms)
{
	struct sv_bucket *b;

	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->b[i].tenant, tenant))
			return &r->b[i];
	if (r->n >= SV_RATE_SLOTS)
		return NULL;
	b = &r->b[r->n++];
	memset(b, 0, sizeof(*b));
	snprintf(b->tenant, sizeof(b->tenant), "%s", tenant);
	b->tokens = burst;
	b->last_ms = now_ms;
	return b;
}

bool sv_rate_take(struct sv_bucket *b, double rate, double burst, uint64_t now_ms)
{
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * rate / 1000.0;
		if (b->tokens > burst)
			b->tokens = burst;
	}
	b->last_ms = now_ms;
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}
