# ULP_SWITCH=ucontext: the scheduler on glibc's swapcontext instead of the assembly switch, for
# the benchmarks that compare the two (bench/fig6*). The three switch primitives of arch.h come
# from switch_ucontext.c here; the architecture's own switch.S and arch.c still provide TLS,
# raw system calls, program entry and clone, their switch functions renamed out of the way
# (ulp_x86_asm_*) so that nothing calls them. x86_64 only. Build it in its own folder:
#   make O=build-uc ULP_SWITCH=ucontext build-uc/tests/unit/test_threads
ULP_SWITCH ?= asm
ifeq ($(ULP_SWITCH),ucontext)
ifneq ($(ARCH),x86_64)
$(error ULP_SWITCH=ucontext: x86_64 only (it reuses libulp/arch/x86_64))
endif
UC_RENAME := -Dulp_arch_switch=ulp_x86_asm_switch -Dulp_arch_switch_call=ulp_x86_asm_switch_call \
	-Dulp_arch_ctx_init=ulp_x86_asm_ctx_init -Dulp_arch_switch_start=ulp_x86_asm_switch_start \
	-Dulp_arch_jump=ulp_x86_asm_jump
# ulp_arch_switch_start and ulp_arch_jump: composed from the three above (libulp/arch/).
UC_OBJS := $(O)/libulp/arch/ucontext/switch_ucontext.o $(O)/libulp/arch/switch_compose.o
$(O)/libulp/arch/$(ARCH)/switch.o $(O)/libulp/arch/$(ARCH)/arch.o: CPPFLAGS += $(UC_RENAME)
$(O)/libulp-core.a $(O)/libulp.a: $(UC_OBJS)
# No lazy binding of swapcontext: its first call may come with a ULP's TLS loaded, and the
# dynamic linker's resolver writes through fs.
$(UC_OBJS): ALL_CFLAGS += -fno-plt
else ifneq ($(ULP_SWITCH),asm)
$(error ULP_SWITCH=$(ULP_SWITCH): asm (default) or ucontext)
endif
