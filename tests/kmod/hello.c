// SPDX-License-Identifier: MIT
/*
 * Payload loaded by PVAS_IOC_LOAD in the VM tests (built as static-pie,
 * dynamic PIE and, to be refused, ET_EXEC). It checks from the inside that
 * it was laid out like a process in partition [T_PART_LO, T_PART_HI):
 * code, data, bss, TLS, heap and stack work; auxv is complete. Prints its
 * arguments and "hello-ok", exits 42.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

static int data_var = 1234;
static int bss_var;
static char bss_big[1 << 20];
static __thread int tls_var = 77;

static unsigned long env_hex(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoul(v, NULL, 16) : 0;
}

int main(int argc, char **argv)
{
	unsigned long lo = env_hex("T_PART_LO"), hi = env_hex("T_PART_HI");
	unsigned long base = getauxval(AT_BASE), i;
	int stack_var = 0, ok = 1;
	char *heap = malloc(1 << 16);

#define IN(p) ((unsigned long)(p) >= lo && (unsigned long)(p) < hi)
#define EXPECT(c) do { if (!(c)) { printf("hello: failed: %s\n", #c); ok = 0; } } while (0)
	EXPECT(lo && hi > lo);
	EXPECT(IN(&main) && IN(&data_var) && IN(bss_big) && IN(&stack_var));
	/* The layout of include/uapi/pvas_ioctl.h: stack, then program, in the first eighth. */
	EXPECT((unsigned long)&main < lo + (hi - lo) / 8);
	EXPECT((unsigned long)&stack_var < (unsigned long)&main);
	EXPECT(data_var == 1234 && bss_var == 0 && tls_var == 77);
	for (i = 0; i < sizeof(bss_big); i++)
		if (bss_big[i])
			break;
	EXPECT(i == sizeof(bss_big));
	EXPECT(heap != NULL);
	if (heap)
		memset(heap, 1, 1 << 16);
	EXPECT(getauxval(AT_PAGESZ) == 4096);
	EXPECT(IN(getauxval(AT_PHDR)) && getauxval(AT_PHENT) == sizeof(Elf64_Phdr));
	EXPECT(IN(getauxval(AT_ENTRY)) && IN(getauxval(AT_RANDOM)));
	EXPECT(getauxval(AT_SYSINFO_EHDR) != 0);
	EXPECT(getauxval(AT_EXECFN) && IN(getauxval(AT_EXECFN)));
	EXPECT(getauxval(AT_PLATFORM) && !strcmp((char *)getauxval(AT_PLATFORM), "x86_64"));
	EXPECT(getauxval(AT_UID) == 0 && getauxval(AT_SECURE) == 0);
	/* ld.so in [3/16, 1/4) of the partition */
	EXPECT(!base || (base >= lo + (hi - lo) / 16 * 3 && base < lo + (hi - lo) / 4));
	tls_var++;

	printf("argc=%d", argc);
	for (i = 0; i < (unsigned long)argc; i++)
		printf(" [%s]", argv[i]);
	printf("\nenv=%s\nexecfn=%s\ninterp=%d\n%s\n", getenv("T_GREETING"),
	       (char *)getauxval(AT_EXECFN), base != 0, ok ? "hello-ok" : "hello-bad");
	return ok ? 42 : 1;
}
