/* Threads on a small, huge-page-free stack (common/small_thread.h). */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/small_thread.h"

/* The sanitizers' runtimes keep their own state on a thread's stack (TSan
 * wants ~900 KiB of it): there, glibc's usual size. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MIN_STACK (8u << 20)
#else
#define MIN_STACK 0u
#endif

int small_thread_start(struct small_thread *t, size_t stack, void *(*fn)(void *), void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t want = stack ? stack : SMALL_THREAD_STACK;
	size_t len = ((want > MIN_STACK ? want : MIN_STACK) + page - 1) / page * page;
	pthread_attr_t attr;
	char *map;
	int ret;

	t->map = NULL;
	map = mmap(NULL, len + page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (map == MAP_FAILED)
		return -errno;
	/* Before anything touches it: a huge page, once faulted, stays. */
	if (madvise(map, len + page, MADV_NOHUGEPAGE) || mprotect(map, page, PROT_NONE)) {
		ret = -errno;
		goto fail;
	}
	ret = -pthread_attr_init(&attr);
	if (ret)
		goto fail;
	ret = -pthread_attr_setstack(&attr, map + page, len);
	if (!ret)
		ret = -pthread_create(&t->th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (ret)
		goto fail;
	t->map = map;
	t->map_len = len + page;
	return 0;
fail:
	munmap(map, len + page);
	return ret;
}

void small_thread_join(struct small_thread *t)
{
	if (!t->map)
		return;
	pthread_join(t->th, NULL);
	munmap(t->map, t->map_len);
	t->map = NULL;
}
