/*
 * After a rollback or a restore the guest runs on with a stale wall clock
 * and, in forks, the same RNG state as its siblings. The VMM bumps a
 * generation on its guest port (devices/legacy.h); before serving the next
 * client the agent sees the change, steps CLOCK_REALTIME to the host's time
 * and mixes fresh host entropy into the kernel RNG, then forces a reseed.
 */
#include <linux/random.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "guest/agent/agent.h"

#define PORT_BASE 0x4f0		/* as devices/legacy.h */
#define PORT_GEN  (PORT_BASE + 8)
#define PORT_SEC  (PORT_BASE + 12)
#define PORT_NSEC (PORT_BASE + 16)
#define PORT_RAND (PORT_BASE + 20)
#define PORT_SIZE 24
#define SEED_WORDS 16		/* 512 bits */

#ifndef RNDRESEEDCRNG
#define RNDRESEEDCRNG _IO('R', 0x07)
#endif

static bool have_port;
static uint32_t seen;

void agent_snap_sync_init(void)
{
	have_port = ioperm(PORT_BASE, PORT_SIZE, 1) == 0;
	if (have_port)
		seen = inl(PORT_GEN);
}

static void step_clock(void)
{
	struct timespec t;
	uint32_t s;

	do {
		s = inl(PORT_SEC);
		t.tv_nsec = inl(PORT_NSEC);
	} while (inl(PORT_SEC) != s);
	t.tv_sec = s;
	if (clock_settime(CLOCK_REALTIME, &t))
		perror("mvm-agent: clock_settime");
}

static void reseed(void)
{
	struct {
		struct rand_pool_info info;
		uint32_t words[SEED_WORDS];
	} seed;
	int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("mvm-agent: /dev/urandom");
		return;
	}
	memset(&seed, 0, sizeof(seed));
	for (int i = 0; i < SEED_WORDS; i++)
		seed.words[i] = inl(PORT_RAND);
	seed.info.entropy_count = SEED_WORDS * 32;
	seed.info.buf_size = sizeof(seed.words);
	if (ioctl(fd, RNDADDENTROPY, &seed) || ioctl(fd, RNDRESEEDCRNG))
		perror("mvm-agent: reseeding the RNG");
	memset(&seed, 0, sizeof(seed));
	close(fd);
}

void agent_snap_sync(void)
{
	uint32_t gen;

	if (!have_port)
		return;
	gen = inl(PORT_GEN);
	if (gen == seen)
		return;
	step_clock();
	reseed();
	fprintf(stderr, "mvm-agent: snapshot generation %u: clock stepped to the host's, RNG reseeded\n",
		gen);
	seen = gen;
}
