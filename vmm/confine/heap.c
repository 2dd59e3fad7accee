/* The VMM's malloc settings (confine/heap.h). */
#include <malloc.h>
#include <stdlib.h>

#include "common/small_thread.h"
#include "vmm/confine/heap.h"

#define THRESHOLD (128u << 10)
/* Blocks below the mmap threshold (so from the arena's heap) whose sum,
 * freed, leaves a top chunk over the trim threshold plus glibc's top pad. */
#define BLOCK (120u << 10)
#define NR_BLOCKS 6

static void *shrink_an_arena(void *arg)
{
	volatile char *b[NR_BLOCKS];

	(void)arg;
	for (int i = 0; i < NR_BLOCKS; i++)
		if ((b[i] = malloc(BLOCK)))
			b[i][0] = 1;	/* a real use: the pair is not optimised away */
	for (int i = NR_BLOCKS - 1; i >= 0; i--)
		free((void *)b[i]);
	return NULL;
}

void confine_heap_setup(void)
{
	struct small_thread t;

	mallopt(M_MMAP_THRESHOLD, THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, THRESHOLD);
	malloc_trim(0);
	if (!small_thread_start(&t, 0, shrink_an_arena, NULL))
		small_thread_join(&t);
}
