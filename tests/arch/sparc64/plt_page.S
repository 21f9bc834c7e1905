/* SPDX-License-Identifier: MIT */
/*
 * Linked into every sparc64 test binary to keep qemu-user fast. On sparc64 the PLT is code in the
 * writable data segment, right before .data and .bss. qemu-user write-protects every guest page it
 * has translated code from and, on a write to it, throws the translations away and takes the page
 * fault again at the next PLT call: with the runtime's globals in .bss on the PLT's page, every
 * thread creation paid that (measured: 75 us instead of 10 us per create + join). Aligning .data
 * to the 8 KiB sparc64 page moves .data and .bss off the PLT's page; it costs at most one page.
 */
	.section .data
	.balign	8192
	.type	ulp_test_plt_page_gap, #object
ulp_test_plt_page_gap:
	.byte	0
	.size	ulp_test_plt_page_gap, 1

	.section .note.GNU-stack,"",@progbits
