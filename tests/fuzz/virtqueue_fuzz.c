/*
 * libFuzzer target: a hostile driver owns all of guest memory. The input is
 * a 64 KiB guest RAM image whose first bytes choose the queue size and ring
 * addresses; every chain popped must stay inside guest RAM.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtqueue.h"

#define RAM 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ram[RAM];
	struct guest_mem m;
	struct virtqueue vq = { 0 };
	struct vq_chain *c = malloc(sizeof(*c));
	uint16_t hdr[4] = { 0 };

	if (!c)
		return 0;
	memset(ram, 0, RAM);
	memcpy(hdr, data, size < sizeof(hdr) ? size : sizeof(hdr));
	memcpy(ram, data, size < RAM ? size : RAM);
	gm_wrap(&m, ram, 0x1000, RAM);
	vq.size = (uint16_t)(1u << (hdr[0] % 9));
	vq.event_idx = hdr[0] & 0x80;	/* the ring-end event fields in play */
	vq.desc_gpa = 0x1000 + (hdr[1] & 0xfff0);
	vq.avail_gpa = 0x1000 + (hdr[2] & 0xfffe);
	vq.used_gpa = 0x1000 + (hdr[3] & 0xfffc);
	if (vq_activate(&vq, &m) == 0) {
		for (int i = 0; i < 512 && vq_pop(&vq, c) == 1; i++) {
			uint8_t scratch[64];

			for (int b = 0; b < c->nr; b++)
				if (c->buf[b].host < ram || c->buf[b].host + c->buf[b].len > ram + RAM)
					abort();	/* a buffer escaped guest RAM */
			vq_chain_read(c, 0, scratch, sizeof(scratch));
			vq_chain_write(c, 0, scratch, sizeof(scratch));
			vq_push(&vq, c->head, 1);
			vq_needs_interrupt(&vq);
		}
	}
	free(c);
	return 0;
}
