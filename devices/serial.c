/* 16550A UART (National Semiconductor PC16550D data sheet), transmit side and registers. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/serial.h"
#include "common/rotlog.h"
#include "common/snap_buf.h"
#include "vmm/vm.h"

#define TAIL_SIZE 8192

#define IER_RDI  0x01
#define IER_THRI 0x02
#define IIR_NONE 0x01
#define IIR_THRI 0x02
#define IIR_RDI  0x04
#define IIR_FIFO 0xc0
#define LCR_DLAB 0x80
#define MCR_LOOP 0x10
#define LSR_DR   0x01
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

struct serial {
	struct vm *vm;
	pthread_mutex_t lock;
	uint32_t irq;
	int out_fd;
	struct rotlog *log;	/* non-NULL: instead of out_fd */
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	int thri_pending;
	int irq_level;
	char tail[TAIL_SIZE];
	size_t tail_pos;	/* total bytes ever written */
};

static void update_irq(struct serial *s)
{
	int level = (s->ier & IER_THRI) && s->thri_pending;

	if (level != s->irq_level) {
		s->irq_level = level;
		kvm_irq_line(&s->vm->kvm, s->irq, level);
	}
}

static void tx(struct serial *s, uint8_t c)
{
	s->tail[s->tail_pos++ % TAIL_SIZE] = (char)c;
	/* Best effort: a closed console must not stop the guest. */
	rotlog_or_fd_write(s->log, s->out_fd, &c, 1);
	s->thri_pending = 1;	/* transmission is instant */
}

static uint8_t read_msr(const struct serial *s)
{
	uint8_t m = s->mcr;

	/* Loopback wires DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD (autoconfig tests it). */
	if (m & MCR_LOOP)
		return (uint8_t)(((m & 1) << 5) | ((m & 2) << 3) | ((m & 4) << 4) | ((m & 8) << 4));
	return 0xb0;	/* DCD, DSR, CTS */
}

static uint8_t reg_read(struct serial *s, uint64_t off)
{
	switch (off) {
	case 0:
		return (s->lcr & LCR_DLAB) ? s->dll : 0;
	case 1:
		return (s->lcr & LCR_DLAB) ? s->dlm : s->ier;
	case 2: {
		uint8_t fifo = (s->fcr & 1) ? IIR_FIFO : 0;

		if ((s->ier & IER_THRI) && s->thri_pending) {
			s->thri_pending = 0;	/* reading IIR acknowledges THRE */
			return fifo | IIR_THRI;
		}
		return fifo | IIR_NONE;
	}
	case 3:
		return s->lcr;
	case 4:
		return s->mcr;
	case 5:
		return LSR_THRE | LSR_TEMT;
	case 6:
		return read_msr(s);
	default:
		return s->scr;
	}
}

static void reg_write(struct serial *s, uint64_t off, uint8_t v)
{
	switch (off) {
	case 0:
		if (s->lcr & LCR_DLAB)
			s->dll = v;
		else
			tx(s, v);
		break;
	case 1:
		if (s->lcr & LCR_DLAB) {
			s->dlm = v;
			break;
		}
		/* Enabling THRE interrupts with an empty THR raises one at once. */
		if (!(s->ier & IER_THRI) && (v & IER_THRI))
			s->thri_pending = 1;
		s->ier = v & 0x0f;
		break;
	case 2:
		s->fcr = v;
		break;
	case 3:
		s->lcr = v;
		break;
	case 4:
		s->mcr = v & 0x1f;
		break;
	case 7:
		s->scr = v;
		break;
	}
}

static void serial_read(void *opaque, uint64_t off, uint8_t *data, uint32_t len)
{
	struct serial *s = opaque;

	pthread_mutex_lock(&s->lock);
	memset(data, 0, len);
	data[0] = reg_read(s, off);
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static void serial_write(void *opaque, uint64_t off, const uint8_t *data, uint32_t len)
{
	struct serial *s = opaque;

	pthread_mutex_lock(&s->lock);
	reg_write(s, off, data[0]);
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static const struct bus_dev_ops serial_bus_ops = {
	.read = serial_read,
	.write = serial_write,
};

static void serial_destroy(void *dev)
{
	struct serial *s = dev;

	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Snapshot section v1: the registers the guest programmed. */
static int serial_save(void *dev, struct snap_w *w)
{
	struct serial *s = dev;
	const uint8_t regs[] = { s->ier, s->lcr, s->mcr, s->scr, s->fcr, s->dll, s->dlm,
				 (uint8_t)s->thri_pending, (uint8_t)s->irq_level };

	pthread_mutex_lock(&s->lock);
	snap_w_bytes(w, regs, sizeof(regs));
	pthread_mutex_unlock(&s->lock);
	return w->err;
}

static int serial_load(void *dev, struct snap_r *r, uint32_t version, bool apply)
{
	struct serial *s = dev;
	uint8_t v[9];

	snap_r_bytes(r, v, sizeof(v));
	/* IER has 4 bits, MCR 5; the two flags are booleans. */
	if (version != 1 || snap_r_done(r) || v[0] > 0x0f || v[2] > 0x1f || v[7] > 1 || v[8] > 1)
		return -EBADMSG;
	if (!apply)
		return 0;
	pthread_mutex_lock(&s->lock);
	s->ier = v[0], s->lcr = v[1], s->mcr = v[2], s->scr = v[3], s->fcr = v[4];
	s->dll = v[5], s->dlm = v[6], s->thri_pending = v[7];
	/* The line itself is in the restored irqchip state. */
	s->irq_level = v[8];
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static const struct vm_device_ops serial_dev_ops = {
	.name = "serial",
	.destroy = serial_destroy,
	.snap_version = 1,
	.save = serial_save,
	.load = serial_load,
};

size_t serial_tail(struct serial *s, char *buf, size_t len)
{
	size_t n, start;

	pthread_mutex_lock(&s->lock);
	n = s->tail_pos < TAIL_SIZE ? s->tail_pos : TAIL_SIZE;
	if (n > len - 1)
		n = len - 1;
	start = s->tail_pos - n;
	for (size_t i = 0; i < n; i++)
		buf[i] = s->tail[(start + i) % TAIL_SIZE];
	buf[n] = 0;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int serial_create(struct vm *vm, uint16_t base, uint32_t irq, int out_fd, struct rotlog *log,
		  struct serial **out)
{
	return serial_create_at(vm, &vm->pio, base, irq, out_fd, log, out);
}

int serial_create_at(struct vm *vm, struct bus *bus, uint64_t base, uint32_t irq, int out_fd,
		     struct rotlog *log, struct serial **out)
{
	struct serial *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->vm = vm;
	s->irq = irq;
	s->out_fd = out_fd;
	s->log = log;
	s->mcr = 0x08;		/* OUT2: the PC routes the UART IRQ through it */
	pthread_mutex_init(&s->lock, NULL);
	ret = bus_add(bus, base, 8, &serial_bus_ops, s);
	if (!ret)
		ret = vm_add_device(vm, &serial_dev_ops, s);
	if (ret) {
		serial_destroy(s);
		return ret;
	}
	*out = s;
	return 0;
}
