# pvas_* API tests (x86_64: the user backend needs the loader and the syscall trap).
ifeq ($(ARCH),x86_64)
$(O)/tests/pvas/test_pvas_api: $(O)/tests/pvas/test_pvas_api.o $(O)/libulp.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ULP)
ALL_TARGETS += $(O)/tests/pvas/test_pvas_api
$(O)/tests/pvas/test_proc: $(O)/tests/pvas/test_proc.o $(O)/libulp.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ULP)
$(O)/tests/pvas/test_proc.o: CPPFLAGS += -Iloader -Ilibulp/kernel
ALL_TARGETS += $(O)/tests/pvas/test_proc
$(O)/tests/pvas/test_fastcall: $(O)/tests/pvas/test_fastcall.o $(O)/libulp.a
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS_ULP)
$(O)/tests/pvas/test_fastcall.o: CPPFLAGS += -Ilibulp/arch
ALL_TARGETS += $(O)/tests/pvas/test_fastcall

.PHONY: check-pvas
check-pvas: $(O)/tests/pvas/test_pvas_api $(O)/tests/pvas/test_proc $(O)/tests/pvas/test_fastcall \
	$(INTEG_PROGS)
	$(Q)ULP_TEST_PROGS=$(O)/tests/integ $(RUN_TEST) pvas-api $(O)/tests/pvas/test_pvas_api
	$(Q)ULP_TEST_PROGS=$(O)/tests/integ $(RUN_TEST) pvas-proc $(O)/tests/pvas/test_proc
	$(Q)$(RUN_TEST) pvas-fastcall $(O)/tests/pvas/test_fastcall
CHECK_TARGETS += check-pvas
endif
