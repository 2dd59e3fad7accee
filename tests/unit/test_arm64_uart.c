/*
 * The arm64 console UART's 16550A register model (vmm/arch/arm64/uart.c):
 * what Linux's 8250 driver does with it — transmit, the THRE interrupt it
 * waits for, the divisor latch, receive — and a hostile guest's accesses
 * anywhere in its page.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "vmm/arch/arm64/layout.h"
#include "vmm/arch/arm64/uart.h"

static char sent[64];
static size_t nsent;

static void out(void *opaque, uint8_t b)
{
	cr_assert_eq(opaque, (void *)sent);
	if (nsent < sizeof(sent))
		sent[nsent++] = (char)b;
}

static void fresh(struct arm64_uart *u)
{
	nsent = 0;
	memset(sent, 0, sizeof(sent));
	arm64_uart_init(u, out, sent);
}

Test(arm64_uart, thr_writes_reach_the_host_and_lsr_says_empty)
{
	struct arm64_uart u;

	fresh(&u);
	for (const char *p = "ok\n"; *p; p++) {
		cr_assert_eq(arm64_uart_read(&u, 5) & 0x60, 0x60, "THRE and TEMT before each byte");
		arm64_uart_write(&u, 0, (uint8_t)*p);
	}
	cr_assert_eq(nsent, 3);
	cr_assert_str_eq(sent, "ok\n");
	cr_assert_eq(arm64_uart_irq(&u), false, "no interrupt while IER is 0");
}

Test(arm64_uart, divisor_latch_hides_thr_and_ier)
{
	struct arm64_uart u;

	fresh(&u);
	arm64_uart_write(&u, 3, 0x83);	/* DLAB, 8N1 */
	arm64_uart_write(&u, 0, 0x01);	/* DLL: no output */
	arm64_uart_write(&u, 1, 0x02);	/* DLM: not IER */
	cr_assert_eq(nsent, 0, "a divisor write was sent as a byte");
	cr_assert_eq(arm64_uart_read(&u, 0), 0x01);
	cr_assert_eq(arm64_uart_read(&u, 1), 0x02);
	arm64_uart_write(&u, 3, 0x03);
	cr_assert_eq(arm64_uart_read(&u, 1), 0, "IER untouched by the DLM write");
	cr_assert_eq(arm64_uart_irq(&u), false);
	arm64_uart_write(&u, 0, 'x');
	cr_assert_eq(nsent, 1);
}

Test(arm64_uart, enabling_thre_interrupts_at_once_and_iir_acknowledges)
{
	struct arm64_uart u;

	fresh(&u);
	arm64_uart_write(&u, 1, 0x02);	/* ETBEI with THR empty: the 8250's start_tx */
	cr_assert(arm64_uart_irq(&u), "THRE must interrupt when enabled with THR empty");
	cr_assert_eq(arm64_uart_read(&u, 2) & 0x0f, 0x02, "IIR names THRE");
	cr_assert_not(arm64_uart_irq(&u), "the IIR read acknowledges it");
	cr_assert_eq(arm64_uart_read(&u, 2) & 0x0f, 0x01, "then no interrupt pending");
	arm64_uart_write(&u, 0, 'a');
	cr_assert(arm64_uart_irq(&u), "THR empty again after the byte left");
	arm64_uart_write(&u, 1, 0);
	cr_assert_not(arm64_uart_irq(&u), "masked by IER");
}

Test(arm64_uart, received_bytes_are_read_in_order_and_interrupt)
{
	static const uint8_t in[20] = "0123456789abcdefghij";
	struct arm64_uart u;

	fresh(&u);
	cr_assert_eq(arm64_uart_rx(&u, in, sizeof(in)), ARM64_UART_RX_FIFO, "FIFO-sized");
	cr_assert_eq(arm64_uart_read(&u, 5) & 0x01, 0x01, "LSR.DR");
	cr_assert_not(arm64_uart_irq(&u));
	arm64_uart_write(&u, 1, 0x01);	/* ERBFI */
	cr_assert(arm64_uart_irq(&u));
	cr_assert_eq(arm64_uart_read(&u, 2) & 0x0f, 0x04, "IIR: received data");
	for (int i = 0; i < ARM64_UART_RX_FIFO; i++)
		cr_assert_eq(arm64_uart_read(&u, 0), in[i], "byte %d", i);
	cr_assert_eq(arm64_uart_read(&u, 5) & 0x01, 0, "empty");
	cr_assert_not(arm64_uart_irq(&u));
	cr_assert_eq(arm64_uart_read(&u, 0), 0, "reading an empty FIFO");
	cr_assert_eq(arm64_uart_rx(&u, in, 3), 3);
	arm64_uart_write(&u, 2, 0x03);	/* FCR: enable, clear RX */
	cr_assert_eq(arm64_uart_read(&u, 5) & 0x01, 0, "FCR cleared the FIFO");
	cr_assert_eq(arm64_uart_read(&u, 2) & 0xc0, 0xc0, "IIR shows the FIFOs enabled");
}

Test(arm64_uart, every_offset_of_the_page_is_safe)
{
	struct arm64_uart u;

	fresh(&u);
	arm64_uart_write(&u, 7, 0x5a);
	cr_assert_eq(arm64_uart_read(&u, 7), 0x5a, "scratch register");
	for (uint64_t off = 8; off < ARM64_UART_SIZE; off++) {
		arm64_uart_write(&u, off, 0xff);
		cr_assert_eq(arm64_uart_read(&u, off), 0, "offset 0x%llx", (unsigned long long)off);
	}
	arm64_uart_write(&u, ~0ULL, 'z');
	cr_assert_eq(arm64_uart_read(&u, ~0ULL), 0);
	arm64_uart_write(&u, 5, 0);	/* LSR is read-only */
	cr_assert_eq(arm64_uart_read(&u, 5) & 0x60, 0x60);
	cr_assert_eq(nsent, 0, "nothing but THR sends");
	cr_assert_eq(arm64_uart_read(&u, 7), 0x5a);
}
