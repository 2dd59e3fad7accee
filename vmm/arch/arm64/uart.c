/* A 16550A on MMIO for the arm64 console (register model only). */
#include <string.h>

#include "vmm/arch/arm64/uart.h"

/* Registers (offsets) and bits of the 16550A data sheet. */
#define REG_RBR_THR 0
#define REG_IER     1
#define REG_IIR_FCR 2
#define REG_LCR     3
#define REG_MCR     4
#define REG_LSR     5
#define REG_MSR     6
#define REG_SCR     7
#define IER_ERBFI   0x01	/* received data available */
#define IER_ETBEI   0x02	/* transmitter holding register empty */
#define IER_MASK    0x0f
#define IIR_NONE    0x01
#define IIR_THRE    0x02
#define IIR_RDA     0x04
#define IIR_FIFO    0xc0
#define FCR_ENABLE  0x01
#define FCR_CLR_RX  0x02
#define LCR_DLAB    0x80
#define MCR_MASK    0x1f
#define LSR_DR      0x01
#define LSR_THRE    0x20
#define LSR_TEMT    0x40
#define MSR_CTS_DSR_DCD 0xb0	/* a modem that is always there */

void arm64_uart_init(struct arm64_uart *u, arm64_uart_out_fn out, void *opaque)
{
	memset(u, 0, sizeof(*u));
	u->out = out;
	u->opaque = opaque;
	u->lcr = 0x03;	/* 8N1, as after a reset */
}

static uint8_t rx_pop(struct arm64_uart *u)
{
	uint8_t b;

	if (!u->rx_len)
		return 0;
	b = u->rx[u->rx_head];
	u->rx_head = (u->rx_head + 1) % ARM64_UART_RX_FIFO;
	u->rx_len--;
	return b;
}

static uint8_t iir(struct arm64_uart *u)
{
	uint8_t fifo = u->fcr & FCR_ENABLE ? IIR_FIFO : 0;

	if (u->ier & IER_ERBFI && u->rx_len)
		return fifo | IIR_RDA;
	if (u->ier & IER_ETBEI && u->thre_pending) {
		u->thre_pending = false;	/* reading IIR acknowledges THRE */
		return fifo | IIR_THRE;
	}
	return fifo | IIR_NONE;
}

uint8_t arm64_uart_read(struct arm64_uart *u, uint64_t off)
{
	bool dlab = u->lcr & LCR_DLAB;

	switch (off) {
	case REG_RBR_THR: return dlab ? u->dll : rx_pop(u);
	case REG_IER:     return dlab ? u->dlm : u->ier;
	case REG_IIR_FCR: return iir(u);
	case REG_LCR:     return u->lcr;
	case REG_MCR:     return u->mcr;
	case REG_LSR:     return (u->rx_len ? LSR_DR : 0) | LSR_THRE | LSR_TEMT;
	case REG_MSR:     return MSR_CTS_DSR_DCD;
	case REG_SCR:     return u->scr;
	default:          return 0;
	}
}

void arm64_uart_write(struct arm64_uart *u, uint64_t off, uint8_t val)
{
	bool dlab = u->lcr & LCR_DLAB;

	switch (off) {
	case REG_RBR_THR:
		if (dlab) {
			u->dll = val;
			break;
		}
		if (u->out)
			u->out(u->opaque, val);
		/* Sent at once: THR is empty again, which interrupts anew. */
		u->thre_pending = true;
		break;
	case REG_IER:
		if (dlab) {
			u->dlm = val;
			break;
		}
		/* Enabling ETBEI with THR empty raises THRE at once (the 8250
		 * driver's start_tx relies on it). */
		if (val & IER_ETBEI && !(u->ier & IER_ETBEI))
			u->thre_pending = true;
		u->ier = val & IER_MASK;
		break;
	case REG_IIR_FCR:
		u->fcr = val & FCR_ENABLE;
		if (val & FCR_CLR_RX)
			u->rx_len = u->rx_head = 0;
		break;
	case REG_LCR: u->lcr = val; break;
	case REG_MCR: u->mcr = val & MCR_MASK; break;
	case REG_SCR: u->scr = val; break;
	default: break;	/* LSR, MSR and the rest of the page: read-only or nothing */
	}
}

bool arm64_uart_irq(const struct arm64_uart *u)
{
	return (u->ier & IER_ERBFI && u->rx_len) || (u->ier & IER_ETBEI && u->thre_pending);
}

size_t arm64_uart_rx(struct arm64_uart *u, const uint8_t *buf, size_t len)
{
	size_t n = 0;

	while (n < len && u->rx_len < ARM64_UART_RX_FIFO) {
		u->rx[(u->rx_head + u->rx_len) % ARM64_UART_RX_FIFO] = buf[n++];
		u->rx_len++;
	}
	return n;
}
