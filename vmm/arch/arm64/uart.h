/*
 * The arm64 guest's console UART: a 16550A register model on MMIO (the
 * device tree's "ns16550a" at ARM64_UART_BASE, 8-bit registers one byte
 * apart). Pure: the guest's accesses come in as (offset, value), bytes the
 * guest transmits go to a callback, and the interrupt line's level is a
 * function of the registers the caller forwards to the vGIC. Every offset
 * of the 4 KiB region is accepted: the eight registers, and reads of 0 /
 * ignored writes past them.
 *
 * What Linux's 8250 driver needs of it: THR empty at once after a write
 * (the byte is gone), the THRE interrupt raised when the guest enables it
 * with THR empty and cleared by an IIR read that reports it or a THR write,
 * the divisor latch behind LCR.DLAB, a scratch register, and a small
 * receive FIFO for bytes the host feeds in.
 */
#ifndef MVM_ARM64_UART_H
#define MVM_ARM64_UART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARM64_UART_RX_FIFO 16	/* a 16550A's receive FIFO */

typedef void (*arm64_uart_out_fn)(void *opaque, uint8_t byte);

struct arm64_uart {
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thre_pending;	/* THR-empty interrupt raised, not yet acknowledged */
	uint8_t rx[ARM64_UART_RX_FIFO];
	unsigned rx_head, rx_len;
	arm64_uart_out_fn out;
	void *opaque;
};

void arm64_uart_init(struct arm64_uart *u, arm64_uart_out_fn out, void *opaque);
/* A guest read of the byte at @off (0 .. ARM64_UART_SIZE-1) of the region. */
uint8_t arm64_uart_read(struct arm64_uart *u, uint64_t off);
/* A guest write of @val to the byte at @off. */
void arm64_uart_write(struct arm64_uart *u, uint64_t off, uint8_t val);
/* The interrupt line: data received with IER.ERBFI, or THRE pending with IER.ETBEI. */
bool arm64_uart_irq(const struct arm64_uart *u);
/* Queue up to @len host bytes for the guest to read; returns how many fit. */
size_t arm64_uart_rx(struct arm64_uart *u, const uint8_t *buf, size_t len);

#endif
