/* The VMM's malloc settings: small RSS, and nothing glibc would do lazily
 * that a seccomp filter forbids. */
#ifndef MVM_CONFINE_HEAP_H
#define MVM_CONFINE_HEAP_H

/*
 * Call once, single-threaded, before any seccomp filter:
 * - fixed mmap and trim thresholds (128 KiB): glibc raises both with every
 *   free of a large mmap'd block, after which large buffers come from the
 *   heap, are written whole by calloc and stay resident once freed;
 * - malloc_trim(0): a VMM forked from the CLI (mvm run) drops the CLI's
 *   freed heap before its devices allocate;
 * - the first shrink of a thread's malloc arena, done here in a throwaway
 *   thread: glibc then opens /proc/sys/vm/overcommit_memory once (and
 *   caches the answer, or the failure); done later by a filtered disk or
 *   vCPU thread, that openat would stop the VMM.
 */
void confine_heap_setup(void);

#endif
