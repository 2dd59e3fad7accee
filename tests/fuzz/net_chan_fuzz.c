/*
 * libFuzzer target: a message on the socket between a VMM and its network
 * helper (devices/net_chan.h). A compromised helper writes whatever it
 * likes; every record nc_parse hands on must lie inside the message, and
 * whatever comes back re-encodes to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/net_chan.h"

static struct nc_buf again;

static void on_record(void *opaque, uint32_t type, const uint8_t *p, size_t len)
{
	volatile uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)	/* an overrun is ASan's to see */
		sum += p[i];
	if (nc_put(&again, type, NULL, 0, p, len))
		abort();	/* a record of one message always fits one */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!again.b && !(again.b = malloc(NC_MSG_MAX)))
		return 0;
	if (size > NC_MSG_MAX)
		return 0;
	again.len = 0;
	if (nc_parse(data, size, on_record, NULL) == 0 &&
	    (again.len != size || memcmp(again.b, data, size)))
		abort();
	return 0;
}
