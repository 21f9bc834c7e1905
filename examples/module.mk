# examples/: guests built as static-pie and as dynamic PIE, linked with the guest library only.
ifeq ($(ARCH),x86_64)
GUEST_CFLAGS = -O2 -g -Wall -Wextra -Werror -Iinclude -fPIE
$(O)/examples/%: examples/%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_CFLAGS) -static-pie -o $@ $^
$(O)/examples/%_dyn: examples/%.c $(O)/libpvas-guest.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_CFLAGS) -pie -o $@ $^
ALL_TARGETS += $(O)/examples/ulp_hello $(O)/examples/ulp_hello_dyn
endif

.PHONY: run-demo
run-demo: $(O)/bin/ulpexec $(O)/examples/ulp_hello
	$(Q)sh mk/demo.sh $(O)
