/* 16550A UART: the guest kernel's console. */
#ifndef MVM_SERIAL_H
#define MVM_SERIAL_H

#include <stddef.h>
#include <stdint.h>

struct vm;
struct serial;
struct rotlog;

/* COM1 at 0x3f8/IRQ 4. Output goes to @log if non-NULL, else to @out_fd
 * (if >= 0), and to a tail buffer. */
int serial_create(struct vm *vm, uint16_t base, uint32_t irq, int out_fd, struct rotlog *log,
		  struct serial **out);
/* The same UART on @bus at @base (arm64: vm->mmio, its device tree's
 * ns16550a, byte registers); @irq as kvm_irq_line takes it. */
struct bus;
int serial_create_at(struct vm *vm, struct bus *bus, uint64_t base, uint32_t irq, int out_fd,
		     struct rotlog *log, struct serial **out);
/* Copy up to @len-1 bytes of the most recent output, NUL-terminated. */
size_t serial_tail(struct serial *s, char *buf, size_t len);

#endif
