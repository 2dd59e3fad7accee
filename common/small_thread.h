/* Threads on a small stack that never costs a 2 MiB huge page. */
#ifndef MVM_SMALL_THREAD_H
#define MVM_SMALL_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* Enough for every thread of the VMM: KVM_RUN and device handlers, a disk
 * request through qcow2, the initrd's read; none recurses. */
#define SMALL_THREAD_STACK (256u << 10)

struct small_thread {
	pthread_t th;
	void *map;		/* the stack's mapping, guard page included */
	size_t map_len;
};

/*
 * Start @fn(@arg) on a thread whose stack is its own mapping of @stack bytes
 * (rounded up to pages; 0: SMALL_THREAD_STACK), below one guard page, and
 * marked MADV_NOHUGEPAGE. Why: glibc's default stack is 8 MiB, and where the
 * host's transparent huge pages are "always" the kernel may back the page
 * a new thread touches first with a whole 2 MiB huge page: one thread then
 * costs 2 MiB of RSS, or not, by chance. A small stack alone is not proof
 * against that (an anonymous neighbour may merge with it into one larger
 * area); the flag is, and it keeps neighbours from merging. 0 or -errno.
 */
int small_thread_start(struct small_thread *t, size_t stack, void *(*fn)(void *), void *arg);

/* Join a started thread and unmap its stack. */
void small_thread_join(struct small_thread *t);

#endif
