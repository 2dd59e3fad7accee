/*
 * libFuzzer target: a snapshot state file (snapshots/state_file.c) as a
 * tampered snapshot directory would hold it, checked the way a restore
 * checks it (vm_snap_check) against a small fake VM, and read the way the
 * CLI reads a snapshot or template directory (snap_dir_parse: the file
 * list with its salt and tags, the base image record). The checksum trailer
 * is recomputed for every input as well, so mutations reach the section
 * decoders instead of stopping at the CRC.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/snap_buf.h"
#include "snapshots/snapshot_dir.h"
#include "snapshots/state_file.h"
#include "snapshots/vm_snap.h"
#include "vmm/vm.h"

#define RAM (64u << 10)

static struct vm *fake_vm(void)
{
	static struct vm *vm;
	static uint8_t *ram;

	if (!vm) {
		vm = calloc(1, sizeof(*vm));
		ram = calloc(1, RAM);
		if (!vm || !ram)
			abort();
		gm_wrap(&vm->mem, ram, 0, RAM);
		vm->ncpus = 1;
	}
	return vm;
}

static void check(const uint8_t *buf, size_t len)
{
	struct snap_state *s = malloc(sizeof(*s));
	struct snap_dir_info *in = malloc(sizeof(*in));
	struct vm_snap_loaded *l = NULL;
	char err[256];

	if (!s) {
		free(in);
		return;
	}
	snap_state_parse(buf, len, s, err, sizeof(err));
	free(s);
	/* The directory's view: the FILE list (v1-v3) and the base record. */
	if (in)
		snap_dir_parse(buf, len, true, in, err, sizeof(err));
	free(in);
	if (!vm_snap_check(fake_vm(), buf, len, &l, err, sizeof(err)))
		vm_snap_loaded_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;
	uint32_t crc;

	check(data, size);
	if (size < 4 || size > SNAP_STATE_MAX || !(fixed = malloc(size)))
		return 0;
	memcpy(fixed, data, size);
	crc = crc32c(0, fixed, size - 4);
	memcpy(fixed + size - 4, &crc, 4);
	check(fixed, size);
	free(fixed);
	return 0;
}
