/* SPDX-License-Identifier: MIT */
/* The spawn benchmark's guest (bench/ulp_spawn.c): a static-pie program that only exits 0, so the
 * measurement is the cost of creating, starting and ending a process or a ULP. */
int main(void)
{
	return 0;
}
