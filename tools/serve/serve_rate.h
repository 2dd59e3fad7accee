/* Per-tenant request rate and stream counts of `mvm serve`: token buckets (pure, unit-tested). */
#ifndef MVM_SERVE_RATE_H
#define MVM_SERVE_RATE_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/serve/serve_route.h"

#define SV_RATE_SLOTS 1024

struct sv_bucket {
	char tenant[SV_TENANT_MAX + 1];
	double tokens;
	uint64_t last_ms;
	unsigned streams;
};

struct sv_rates {
	int n;
	struct sv_bucket b[SV_RATE_SLOTS];
};

/* @tenant's bucket (made full at @now_ms when new), or NULL when the table is full. */
struct sv_bucket *sv_bucket_of(struct sv_rates *r, const char *tenant, double burst, uint64_t now_ms);

/*
 * Take one request from @b at @now_ms: refilled at @rate per second up to
 * @burst. true if allowed. A clock that went back refills nothing.
 */
bool sv_rate_take(struct sv_bucket *b, double rate, double burst, uint64_t now_ms);

#endif
