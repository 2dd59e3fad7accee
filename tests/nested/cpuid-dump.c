/*
 * cpuid-dump: print the CPUID leaves that decide a guest's XSAVE set-up
 * (1, 7, 0xD sub-leaves 0..19, 0x80000001) and XCR0, one line each, so two
 * guests' views diff line by line (tests/nested/vmm-compare.sh cpuid).
 */
#include <stdint.h>
#include <stdio.h>

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(sub));
}

static void show(uint32_t leaf, uint32_t sub)
{
	uint32_t r[4];

	cpuid(leaf, sub, r);
	printf("CPUID %08x.%02x: eax=%08x ebx=%08x ecx=%08x edx=%08x\n", leaf, sub, r[0], r[1],
	       r[2], r[3]);
}

int main(void)
{
	uint32_t r[4], lo, hi;

	cpuid(0, 0, r);
	show(1, 0);
	if (r[0] >= 7)
		show(7, 0);
	for (uint32_t i = 0; r[0] >= 0xd && i < 20; i++)
		show(0xd, i);
	show(0x80000001, 0);
	cpuid(1, 0, r);
	if (!(r[2] & (1U << 27))) {	/* OSXSAVE: XGETBV would #UD */
		printf("XCR0: OSXSAVE off\n");
		return 0;
	}
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	printf("XCR0: %08x%08x\n", hi, lo);
	return 0;
}
