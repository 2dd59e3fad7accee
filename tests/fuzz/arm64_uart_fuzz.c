/*
 * libFuzzer target: the arm64 console UART (vmm/arch/arm64/uart.c) under a
 * hostile guest's MMIO accesses, interleaved with host input. Each 3-byte
 * record is one step: op (read, write, host byte), offset (anywhere in the
 * page and past it), value. Beyond the sanitizers: only a THR write with
 * LCR.DLAB clear sends a byte, LSR.DR says whether the FIFO holds data,
 * the FIFO never holds more than its 16 bytes, and the interrupt line
 * agrees with IIR (no line, IIR says none; a line, IIR names a cause).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/arch/arm64/uart.h"

static size_t sent;

static void out(void *opaque, uint8_t b)
{
	(void)opaque;
	(void)b;
	sent++;
}

static uint64_t offset_of(uint8_t b)
{
	/* Mostly the registers, sometimes far past them. */
	return b < 0xf0 ? b % 8 : (uint64_t)b << (b & 0x0f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arm64_uart u;

	sent = 0;
	arm64_uart_init(&u, out, NULL);
	for (size_t i = 0; i + 3 <= size; i += 3) {
		uint8_t op = data[i] % 3, val = data[i + 2];
		uint64_t off = offset_of(data[i + 1]);
		size_t before = sent;
		int dlab = arm64_uart_read(&u, 3) & 0x80;	/* LCR: no side effect */

		if (op == 0) {
			(void)arm64_uart_read(&u, off);
		} else if (op == 1) {
			arm64_uart_write(&u, off, val);
			if (sent != before + (off == 0 && !dlab))
				abort();
		} else {
			(void)arm64_uart_rx(&u, &val, 1);
		}
		if (sent > before && op != 1)
			abort();
		if (u.rx_len > ARM64_UART_RX_FIFO || u.rx_head >= ARM64_UART_RX_FIFO)
			abort();
		if (!!(arm64_uart_read(&u, 5) & 0x01) != (u.rx_len > 0))
			abort();
		if (!arm64_uart_irq(&u) && (arm64_uart_read(&u, 2) & 0x0f) != 0x01)
			abort();
		if (arm64_uart_irq(&u) && (arm64_uart_read(&u, 2) & 0x0f) == 0x01)
			abort();
	}
	return 0;
}
